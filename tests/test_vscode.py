"""The VS Code extension builds (npm ci, tsc) and its unit tests pass under node."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parent.parent / "editors" / "vscode"
NPM = shutil.which("npm")


@pytest.mark.skipif(NPM is None, reason="npm not installed")
def test_the_extension_builds_and_its_node_tests_pass() -> None:
    assert NPM is not None
    for step in (["ci", "--no-audit", "--no-fund", "--loglevel=error"], ["test"]):
        done = subprocess.run(
            [NPM, *step], cwd=EXTENSION, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, f"npm {step[0]}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    written = sum(
        len(re.findall(r"^test\(", test.read_text(encoding="utf-8"), re.MULTILINE))
        for test in (EXTENSION / "test").glob("*.test.ts")
    )
    assert "# fail 0" in done.stdout and f"# pass {written}\n" in done.stdout, done.stdout[-2000:]
