"""The change an edit's permission would allow, as a diff against what the user sees now.

Agents describe an edit differently: a ``diff`` content item (goose; its ``oldText`` may
be missing for a new or whole file), or only ``rawInput``: claude-code-acp's Write gives
``file_path`` and ``content``, its Edit ``old_string`` and ``new_string``; goose's editor
tool ``path`` with ``file_text``, or ``old_str`` and ``new_str``. So that every client
can show a minimal diff before the user decides, the permission's tool call gets a
``diff`` item whose ``oldText`` is the file as the user sees it now.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from goose_ls.events import Json, ToolCallUpdate

CurrentText = Callable[[str], Awaitable["str | None"]]
"""The text of the file at an agent-given path as the user sees it (the editor's buffer,
else the disk); None when it is absent or may not be read."""

NEW_TEXT = ("content", "file_text")
REPLACED = (("old_string", "new_string"), ("old_str", "new_str"))


async def with_diff(call: ToolCallUpdate, current_text: CurrentText) -> list[Json] | None:
    """``call``'s content with a complete diff of the change; None when it has one already
    or says no change goose-ls can work out."""
    content = list(call.content or [])
    for n, item in enumerate(content):
        if item.get("type") != "diff":
            continue
        if not isinstance(item.get("path"), str):
            return None
        given, old = item.get("oldText"), await current_text(item["path"])
        if given is None:
            content[n] = {**item, "oldText": old or ""}
            return content
        whole = _whole_file(given, item.get("newText"), old, call.raw_input)
        if whole is None:
            return None
        content[n] = {**item, "oldText": old, "newText": whole}
        return content
    raw = call.raw_input if isinstance(call.raw_input, dict) else {}
    path = raw.get("file_path", raw.get("path"))
    if not isinstance(path, str):
        return None
    old = await current_text(path)
    new = _new_text(raw, old)
    if new is None:
        return None
    return [*content, {"type": "diff", "path": path, "oldText": old or "", "newText": new}]


def _whole_file(given: Any, new: Any, old: str | None, raw: Any) -> str | None:
    """The file's whole new text when an agent's diff holds only the replaced part
    (Claude Code's Edit sends ``old_string`` and ``new_string`` as the diff): a diff of
    the whole file shows where the change lands. None when the diff is whole already, or
    the part is not in the file (then it is shown as the agent gave it)."""
    if not isinstance(given, str) or not isinstance(new, str) or old is None:
        return None
    if given == old or not given or given not in old:
        return None
    every = isinstance(raw, dict) and bool(raw.get("replace_all"))
    return old.replace(given, new, -1 if every else 1)


def _new_text(raw: dict[str, Any], old: str | None) -> str | None:
    for key in NEW_TEXT:
        if isinstance(raw.get(key), str):
            return str(raw[key])
    for before, after in REPLACED:
        search, replacement = raw.get(before), raw.get(after)
        if isinstance(search, str) and isinstance(replacement, str) and search:
            if old is None or search not in old:
                return None  # the edit would fail: nothing to show
            return old.replace(search, replacement, -1 if raw.get("replace_all") else 1)
    return None
