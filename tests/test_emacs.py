"""The Emacs package with eglot in a real Emacs, in batch mode (Debian's emacs-nox, elpa-eglot)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from goose_ls.testing.harness import SERVER_COMMAND, server_env
from goose_ls.testing.script import (
    GOOSE_LABELS,
    LABELS_FOR_AGENT_NAMES,
    PERMISSION_WITH_AGENT_NAMES,
    scripted_agent_command,
    write_script,
)

ROOT = Path(__file__).resolve().parent.parent
EDITORS = Path(os.environ.get("GOOSE_LS_EDITORS", Path.home() / ".cache" / "goose-ls" / "editors"))


def _emacs_28() -> list[str] | None:
    """Debian bookworm's Emacs, with eglot 1.9 from elpa-eglot."""
    emacs = shutil.which("emacs")
    if emacs is None:
        return None
    load_path = []
    for folder in sorted(Path("/usr/share/emacs/site-lisp/elpa").glob("eglot-*")):
        load_path += ["-L", str(folder)]
    return [emacs, *load_path]


def _emacs_30() -> list[str] | None:
    """Emacs 30 with the eglot it ships, as scripts/fetch-debian-editors.sh leaves it."""
    emacs = EDITORS / "bin" / "emacs-30"
    # Compiling natively in the background would only slow the flow down.
    return (
        [str(emacs), "--eval", "(setq native-comp-jit-compilation nil)"] if emacs.exists() else None
    )


EMACSES = [
    pytest.param(
        28,
        _emacs_28(),
        id="emacs-28",
        marks=pytest.mark.skipif(
            _emacs_28() is None, reason="emacs not installed (.ci/run installs it)"
        ),
    ),
    pytest.param(
        30,
        _emacs_30(),
        id="emacs-30",
        marks=pytest.mark.skipif(
            _emacs_30() is None,
            reason=f"Emacs 30 not fetched into {EDITORS} (scripts/fetch-debian-editors.sh emacs)",
        ),
    ),
]

REPLY = "It adds x and y, and returns the sum."


def _run(
    major: int,
    emacs: list[str],
    tmp_path: Path,
    script: dict[str, Any],
    flow: str = "ask",
    **env_extra: str,
) -> dict[str, Any]:
    """Run tests/emacs/flow.el's FLOW in a fresh Emacs; what the scripted agent received
    is in ``tmp_path / "agent.jsonl"``."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    source = workspace / "app.py"
    source.write_text("def add(x, y):\n    return x + y\n")
    script = {"record": str(tmp_path / "agent.jsonl"), **script}
    agent = scripted_agent_command(write_script(tmp_path / "script.json", script))
    out = tmp_path / "result.json"
    env = {
        **server_env(tmp_path),
        "GOOSE_CMD": json.dumps(SERVER_COMMAND),
        "GOOSE_INIT": json.dumps({"agent": {"command": agent}, "dataDir": str(tmp_path / "data")}),
        "GOOSE_FILE": str(source),
        "GOOSE_OUT": str(out),
        "HOME": str(tmp_path),
        "GOOSE_FLOW": flow,
        **env_extra,
    }
    completed = subprocess.run(
        [
            *emacs,
            "--batch",
            "-Q",
            "-L",
            str(ROOT / "editors" / "emacs"),
            "-l",
            str(ROOT / "tests" / "emacs" / "flow.el"),
        ],
        cwd=workspace,
        env=env,
        timeout=120,
        check=False,
        capture_output=True,
        text=True,
    )
    assert out.exists(), completed.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in result, (
        result["error"],
        result.get("chat"),
        result.get("events"),
        completed.stderr[-3000:],
    )
    assert result["emacs"] == major, "the Emacs that ran is the one asked for"
    return result


def _tool_output(*lines: str) -> list[dict[str, Any]]:
    return [{"type": "content", "content": {"type": "text", "text": "\n".join(lines)}}]


@pytest.mark.parametrize(("major", "emacs"), EMACSES)
def test_ask_about_the_region_streams_into_the_chat_buffer(
    major: int, emacs: list[str], tmp_path: Path
) -> None:
    result = _run(
        major,
        emacs,
        tmp_path,
        {
            "turns": [
                [
                    {"thought": "Look at the code.", "chunks": 3},
                    {"toolCall": {"toolCallId": "t1", "title": "shell · make"}},
                    {"toolUpdate": {"toolCallId": "t1", "status": "in_progress"}},
                    {"toolCall": {"toolCallId": "t2", "title": "read · app.py"}},
                    {"permission": {"toolCallId": "t1", "title": "shell"}},
                    {
                        "toolUpdate": {
                            "toolCallId": "t1",
                            "status": "completed",
                            "content": _tool_output("3 passed", "0 failed"),
                        }
                    },
                    {
                        "toolUpdate": {
                            "toolCallId": "t2",
                            "status": "failed",
                            "content": _tool_output("no such file"),
                        }
                    },
                    {"text": REPLY, "chunks": 20},
                ]
            ]
        },
    )
    assert result["stop"] == "end_turn"
    assert result["asked"] == "shell"
    assert result["choices"] == GOOSE_LABELS == result["sent"]
    text = result["text"]
    assert "## You\n\nWhat does this do?\n📎 " in text
    assert text.count("## You") == 1, "the attached region goes under the same heading"
    assert "> 💭 Look at the code." in text
    assert text.rstrip().endswith("[permission: allow_once]" + REPLY)


@pytest.mark.parametrize(("major", "emacs"), EMACSES)
def test_permission_choices_are_the_labels_goose_ls_sent(
    major: int, emacs: list[str], tmp_path: Path
) -> None:
    result = _run(
        major,
        emacs,
        tmp_path,
        {"turns": [[{"permission": PERMISSION_WITH_AGENT_NAMES}, {"text": "done"}]]},
    )
    assert result["asked"] == "Edit app.py"
    assert result["choices"] == LABELS_FOR_AGENT_NAMES == result["sent"]
    assert all(label in result["prompt"] for label in LABELS_FOR_AGENT_NAMES), (
        "every choice is in the question itself, not only after TAB"
    )
    assert result["listed-at-once"] is True
    assert "🔐 Edit app.py: allowed once (Allow)\n" in result["text"], "the decision is written"
    assert result["text"].rstrip().endswith("[permission: allow]done"), "the label's option"


@pytest.mark.parametrize(("major", "emacs"), EMACSES)
def test_a_tool_call_is_one_status_line_rewritten_in_place(
    major: int, emacs: list[str], tmp_path: Path
) -> None:
    result = _run(
        major,
        emacs,
        tmp_path,
        {
            "turns": [
                [
                    {"toolCall": {"toolCallId": "t1", "title": "shell · make"}},
                    {"toolUpdate": {"toolCallId": "t1", "status": "in_progress"}},
                    {"toolCall": {"toolCallId": "t2", "title": "read · app.py"}},
                    {"text": "Running.", "chunks": 2},
                    {
                        "toolUpdate": {
                            "toolCallId": "t1",
                            "status": "completed",
                            "content": _tool_output("3 passed", "0 failed"),
                        }
                    },
                    {
                        "toolUpdate": {
                            "toolCallId": "t2",
                            "status": "failed",
                            "content": _tool_output("no such file"),
                        }
                    },
                    {"toolUpdate": {"toolCallId": "t1", "title": "shell · make test"}},
                    {"text": " Done.", "chunks": 2},
                ]
            ]
        },
    )
    text = result["text"]
    assert text.count("🔧") == 2, text
    assert (
        "🔧 shell · make test — completed\n    3 passed\n    0 failed\n\n"
        "🔧 read · app.py — failed\n    no such file\n\n## goose\n\nRunning. Done.\n"
    ) in text, text
    assert "pending" not in text and "in_progress" not in text
    assert result["folds"] == [
        ["🔧 shell · make test — completed", True, False],
        ["🔧 read · app.py — failed", True, False],
    ], "output starts folded; TAB on the status line shows it"


MESSAGE = "Why is the built-in sum faster than the loop?\nAnswer in two lines — with an example."
SECOND = "And the generator version?"
OLD = "".join(f"line {n}\n" for n in range(1, 21))
HUNK = (
    "@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n"
    " line 11\n line 12\n line 13\n"
)


@pytest.mark.parametrize(("major", "emacs"), EMACSES)
def test_keys_compose_queue_permission_diff_and_follow(
    major: int, emacs: list[str], tmp_path: Path
) -> None:
    """One Emacs, no M-x eglot: the keys, a command that starts goose-ls, a multi-line
    message from the compose buffer, a second one queued while the first turn waits for a
    permission shown with its minimal diff, a draft left unsent, and two windows on the
    chat, one following the stream and one scrolled up."""
    path = str(tmp_path / "workspace" / "app.py")
    edit = {
        "toolCallId": "e1",
        "title": "Edit app.py",
        "kind": "edit",
        "content": [
            {
                "type": "diff",
                "path": path,
                "oldText": OLD,
                "newText": OLD.replace("line 10\n", "line ten\n"),
            }
        ],
    }
    result = _run(
        major,
        emacs,
        tmp_path,
        {
            "turns": [
                [
                    {"text": "Reading.", "chunks": 2},
                    {"permission": {"toolCall": edit}},
                    {"text": "Done:\n```python\nprint(1)\n# not a heading\n```\n", "chunks": 4},
                ],
                [{"text": "Second answer.", "chunks": 3}],
            ]
        },
        flow="compose",
        GOOSE_MESSAGE=MESSAGE,
        GOOSE_SECOND=SECOND,
    )
    documented = re.findall(
        r"^\| `(C-c g .)` \| `(goose-ls-[\w-]+)` \|",
        (ROOT / "docs" / "editors" / "emacs.md").read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    keys = {command: key for command, key in result["keys"].items()}
    assert keys == {command: key for key, command in documented}, "the docs list the keys"
    assert keys["goose-ls-ask"] == "C-c g a" and keys["goose-ls-compose"] == "C-c g c"
    # Before M-x eglot: the sessions command started goose-ls for the project.
    assert result["server-before"] is False
    assert result["sessions-before"].startswith("goose-ls: no chats yet"), result
    assert result["server-after"] == "goose-ls"
    # The message arrived as typed: multi-line, 60+ characters, not cut or mixed.
    prompts = [
        json.loads(line)
        for line in (tmp_path / "agent.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    said = [
        m["params"]["prompt"][0]["text"] for m in prompts if m.get("method") == "session/prompt"
    ]
    assert said == [MESSAGE, SECOND]
    # The permission: its minimal diff drawn before the question, the choice written.
    asked = result["chat-when-asked"]
    assert HUNK in asked and "line 3\n" not in asked, asked
    assert asked.index("🔐 Edit app.py asks permission") < asked.index(HUNK)
    assert result["choices"] == GOOSE_LABELS
    text = result["text"]
    assert "🔐 Edit app.py: allowed once\n" in text
    assert text.count(HUNK) == 1
    # The second message waited, shown as queued, then ran.
    assert result["second-result"]["queued"] is True
    assert "⏳ queued 1: " + SECOND in result["queue-shown"]
    assert result["state-when-queued"].strip() == "waiting for you · 1 queued"
    assert "⏳ queued" not in text
    assert result["state-after"].strip() == "idle"
    assert text.rstrip().endswith("Second answer.")
    # The draft stays in the compose buffer; every heading is on a line of its own.
    assert result["draft"] == "my draft, not sent"
    assert "my draft" not in text
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if "## You" in line:
            assert line == "## You" and lines[number - 1] == "", text
    assert text.count("## You") == 2
    assert result["read-only"] is True
    assert result["typing-goes-to"] == "goose-ls-chat-type"
    # Follow: the window at the end stayed at the end, the one scrolled up stayed.
    assert result["following"] is True
    assert result["scrolled"] is True
    # Markdown read well without markdown-mode.
    faces = result["faces"]
    assert faces["heading"] == "goose-ls-heading"
    assert faces["code"] == faces["comment-in-code"] == "goose-ls-code"
    assert faces["added"] == "diff-added" and faces["removed"] == "diff-removed", faces
    assert any("Why is the built-in sum" in choice for choice in result["sessions-after"])
