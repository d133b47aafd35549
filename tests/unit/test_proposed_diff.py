"""The diff a permission card shows is the whole file's change, however the agent gave it."""

from __future__ import annotations

import asyncio

from goose_ls.events import ToolCallUpdate
from goose_ls.sessions.asking.proposed import with_diff

FILE = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


async def _current(path: str) -> str | None:
    return FILE if path == "/w/app.py" else None


def _diff(call: ToolCallUpdate) -> dict[str, object]:
    content = asyncio.run(with_diff(call, _current))
    assert content is not None
    (item,) = [i for i in content if i.get("type") == "diff"]
    return item


def test_claude_s_edit_given_as_the_replaced_part_becomes_the_whole_file_s_change() -> None:
    """claude-agent-acp sends Edit's old_string/new_string as the diff's old and new."""
    part = {"type": "diff", "path": "/w/app.py", "oldText": "a + b", "newText": "a * b"}
    item = _diff(ToolCallUpdate("e1", content=[part], raw_input={"file_path": "/w/app.py"}))
    assert item["oldText"] == FILE
    assert item["newText"] == FILE.replace("a + b", "a * b")


def test_a_whole_file_diff_and_a_part_not_in_the_file_are_left_as_given() -> None:
    whole = {"type": "diff", "path": "/w/app.py", "oldText": FILE, "newText": FILE + "#\n"}
    assert asyncio.run(with_diff(ToolCallUpdate("e1", content=[whole]), _current)) is None
    absent = {"type": "diff", "path": "/w/app.py", "oldText": "x * y", "newText": "x / y"}
    assert asyncio.run(with_diff(ToolCallUpdate("e1", content=[absent]), _current)) is None
