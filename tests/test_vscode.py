"""The VS Code extension builds (npm ci, tsc) and its tests pass under node; some run the
extension against a real goose-ls and the scripted agent (test/extension.test.ts)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from goose_ls.scripted.options import GOOSE_CONFIG_OPTIONS
from support.harness import SERVER_COMMAND, server_env
from support.turns import (
    FORM_QUESTION,
    PLANS_AND_COMPACTION,
    STEERED_TURN,
    SUBAGENT_NOTE_TURN,
    SUBAGENT_TURN,
)

EXTENSION = Path(__file__).resolve().parent.parent / "editors" / "vscode"
NPM = shutil.which("npm")


@pytest.mark.skipif(NPM is None, reason="npm not installed")
# npm ci, tsc and some fifty tests, each starting goose-ls: two minutes on a busy machine.
@pytest.mark.timeout(600)
def test_the_extension_builds_and_its_node_tests_pass(tmp_path: Path) -> None:
    assert NPM is not None
    env = server_env(
        tmp_path,
        GOOSE_CMD=json.dumps(SERVER_COMMAND),
        GOOSE_AGENT=json.dumps([sys.executable, "-m", "goose_ls.scripted"]),
        GOOSE_OPTIONS=json.dumps(GOOSE_CONFIG_OPTIONS),
        GOOSE_FORM=json.dumps(FORM_QUESTION),
        GOOSE_PLANS=json.dumps(PLANS_AND_COMPACTION),
        GOOSE_STEERED=json.dumps(STEERED_TURN),
        GOOSE_SUBAGENT=json.dumps(SUBAGENT_TURN),
        GOOSE_SUBAGENT_NOTE=json.dumps(SUBAGENT_NOTE_TURN),
        # The tests' scratch folder (the scripted agent's script and record) in the
        # test's folder, which the agent's sandbox shows it.
        TMPDIR=str(tmp_path),
    )
    for step in (["ci", "--no-audit", "--no-fund", "--loglevel=error"], ["test"]):
        done = subprocess.run(
            [NPM, *step],
            cwd=EXTENSION,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, f"npm {step[0]}: {_failures(done.stdout)}{done.stderr[-2000:]}"
    written = sum(
        len(re.findall(r"^test\(", test.read_text(encoding="utf-8"), re.MULTILINE))
        for test in (EXTENSION / "test").glob("*.test.ts")
    )
    assert "# fail 0" in done.stdout and f"# pass {written}\n" in done.stdout, done.stdout[-2000:]


def _failures(output: str) -> str:
    """The failed subtests of node's test output, each with what it said (else its end)."""
    lines = output.splitlines()
    failed = [n for n, line in enumerate(lines) if line.lstrip().startswith("not ok")]
    if not failed:
        return output[-2000:]
    return "\n".join("\n".join(lines[max(n - 1, 0) : n + 40]) for n in failed)[-6000:]
