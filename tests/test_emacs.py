"""The Emacs package with eglot in a real Emacs, in batch mode (Debian's emacs-nox, elpa-eglot)."""

from __future__ import annotations

import json
import os
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


def _run(major: int, emacs: list[str], tmp_path: Path, script: dict[str, Any]) -> dict[str, Any]:
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
