"""A chat exported as markdown: its file name, where it may go, what it holds."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from goose_ls import events
from goose_ls.errors import Refused
from goose_ls.lsp.chat.export import render, slug, target
from goose_ls.sessions.journal.records import EventRow

DAY = datetime.date(2026, 7, 19)


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Why does main() return 42?", "why-does-main-return-42"),
        ("   ", "chat"),
        ("Ünïcode ☃ only", "n-code-only"),
        ("x" * 60, "x" * 40),
    ],
)
def test_a_title_as_a_file_name(title: str, expected: str) -> None:
    assert slug(title) == expected


def test_the_export_goes_inside_the_workspace_only(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "out").symlink_to(tmp_path)
    assert target(root, None, "A chat", DAY) == root / "goose-chat-a-chat-2026-07-19.md"
    assert target(root, "sub/../notes/c.md", "", DAY) == root / "notes" / "c.md"
    assert target(root, str(root / "abs.md"), "", DAY) == root / "abs.md"
    for given, why in [
        ("../x.md", "../x.md is outside the workspace folder"),
        (str(tmp_path / "x.md"), "is outside the workspace folder"),
        ("out/x.md", f"out/x.md is outside the workspace folder {root} (it leads to"),
        (".", ". is outside the workspace folder"),
    ]:
        with pytest.raises(Refused) as refused:
            target(root, given, "", DAY)
        assert why in str(refused.value)


def test_no_workspace_folder_means_no_export() -> None:
    with pytest.raises(Refused, match="no workspace folder"):
        target(Path("/"), "x.md", "", DAY)


def _row(index: int, event: events.SessionEvent) -> EventRow:
    payload = json.dumps(events.event_to_wire(event))
    return EventRow("s1", index, "m1", event.KIND, payload, "t")


def test_the_markdown_holds_the_conversation_and_nothing_to_answer() -> None:
    said: list[events.SessionEvent] = [
        events.UserMessageChunk({"type": "text", "text": "list the files"}),
        events.ToolCall("c1", "shell · ls"),
        events.PermissionRequested(
            "r1",
            events.ToolCallUpdate("c1", raw_input={"command": "ls"}),
            [events.PermissionOption("allow_once", "allow_once", "allow_once")],
        ),
        events.PermissionResolved("r1", "selected", "allow_once", "Allow once"),
        events.ToolCallUpdate("c1", status="completed"),
        events.AgentMessageChunk({"type": "text", "text": "Two "}),
        events.AgentMessageChunk({"type": "text", "text": "files."}),
        events.TurnEnded("end_turn"),
    ]
    rows = [_row(i, event) for i, event in enumerate(said, start=1)]
    rows.insert(2, EventRow("s1", 99, "m1", "future_kind", '{"sessionUpdate": "x"}', "t"))
    rows.insert(3, EventRow("s1", 98, "m1", "tool_call", "not json", "t"))
    text = render(rows, "Files", "s1", DAY, agent="goose")
    assert text.startswith("# Files\n\n_goose chat `s1`, exported 2026-07-19._\n\n## You\n")
    assert "> **🔐 Permission needed:** shell · ls (other)\n" in text
    assert "> _Permission answered: Allow once._\n" in text, "the answer on its card"
    merged = "**🔧 shell · ls** — ✓ completed\n`ls`\n"
    assert merged in text, "the call's fields merged, as the session does"
    assert text.endswith("Two files.\n")
    assert "<!--" not in text and "code action" not in text
