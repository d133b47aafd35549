"""What each tool call of a session has said so far: one tracker, read by every floor.

ACP sends a tool call once (``tool_call``) and then only the fields that changed
(``tool_call_update``); a permission request may repeat little of it. The session owns
one :class:`ToolCalls`; the policy reads it to know what a call would do, and the
transcript renders from it.
"""

from __future__ import annotations

from typing import Any

import attrs

from goose_ls.events import Json, ToolCall, ToolCallUpdate

FIELDS = ("title", "kind", "status", "content", "locations", "raw_input", "raw_output")


@attrs.define
class ToolCallState:
    tool_call_id: str
    title: str | None = None
    kind: str | None = None
    status: str | None = None
    content: list[Json] | None = None
    locations: list[Json] | None = None
    raw_input: Any = None
    raw_output: Any = None


class ToolCalls:
    def __init__(self) -> None:
        self._calls: dict[str, ToolCallState] = {}

    def apply(self, event: ToolCall | ToolCallUpdate) -> ToolCallState:
        """Merge what ``event`` says (absent fields keep their value); the merged state."""
        state = self._calls.get(event.tool_call_id)
        if state is None:
            state = self._calls[event.tool_call_id] = ToolCallState(event.tool_call_id)
        for name in FIELDS:
            value = getattr(event, name)
            if value is not None:
                setattr(state, name, value)
        return state

    def get(self, tool_call_id: str) -> ToolCallState | None:
        return self._calls.get(tool_call_id)
