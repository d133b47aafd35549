"""The Emacs package with eglot in a real Emacs, in batch mode (Debian's emacs-nox, elpa-eglot)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import SERVER_COMMAND, server_env
from goose_ls.testing import scripted_agent_command, write_script

ROOT = Path(__file__).resolve().parent.parent
EMACS = shutil.which("emacs")

pytestmark = pytest.mark.skipif(EMACS is None, reason="emacs not installed (.ci/run installs it)")

REPLY = "It adds x and y, and returns the sum."


def _run(tmp_path: Path, script: dict[str, Any]) -> dict[str, Any]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    source = workspace / "app.py"
    source.write_text("def add(x, y):\n    return x + y\n")
    agent = scripted_agent_command(write_script(tmp_path / "script.json", script))
    out = tmp_path / "result.json"
    env = {
        **server_env(tmp_path),
        "GOOSE_CMD": json.dumps(SERVER_COMMAND),
        "GOOSE_INIT": json.dumps({"agent": {"command": agent}, "dataDir": str(tmp_path / "data")}),
        "GOOSE_FILE": str(source),
        "GOOSE_OUT": str(out),
        "HOME": str(tmp_path),
    }
    assert EMACS is not None
    load_path = ["-L", str(ROOT / "editors" / "emacs")]
    debian_eglot = sorted(Path("/usr/share/emacs/site-lisp/elpa").glob("eglot-*"))
    for folder in debian_eglot:
        load_path += ["-L", str(folder)]
    completed = subprocess.run(
        [EMACS, "--batch", "-Q", *load_path, "-l", str(ROOT / "tests" / "emacs" / "flow.el")],
        cwd=workspace,
        env=env,
        timeout=120,
        check=False,
        capture_output=True,
        text=True,
    )
    assert out.exists(), completed.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in result, (result["error"], completed.stderr[-3000:])
    return result


def test_ask_about_the_region_streams_into_the_chat_buffer(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        {
            "turns": [
                [
                    {"toolCall": {"toolCallId": "t1", "title": "shell · make"}},
                    {"permission": {"toolCallId": "t1", "title": "shell"}},
                    {"text": REPLY, "chunks": 20},
                ]
            ]
        },
    )
    assert result["stop"] == "end_turn"
    assert result["asked"] == "shell"
    text = result["text"]
    assert "## You\n\nWhat does this do?" in text
    assert text.rstrip().endswith("[permission: allow_once]" + REPLY)
