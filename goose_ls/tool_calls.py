"""What each tool call of a session has said so far: one tracker, read by every layer.

ACP sends a tool call once (``tool_call``) and then only the fields that changed
(``tool_call_update``); a permission request may repeat little of it. The session owns
one :class:`ToolCalls`; the policy reads it to know what a call would do, and the
transcript renders from it. A call's merged state is a ``ToolCallUpdate`` holding every
field said so far.
"""

from __future__ import annotations

import attrs

from goose_ls.events import ToolCall, ToolCallUpdate

ToolCallState = ToolCallUpdate

FIELDS = ("title", "kind", "status", "content", "locations", "raw_input", "raw_output", "name")


class ToolCalls:
    def __init__(self) -> None:
        self._calls: dict[str, ToolCallState] = {}

    def apply(self, event: ToolCall | ToolCallUpdate) -> ToolCallState:
        """Merge what ``event`` says (absent fields keep their value); the merged state."""
        state = merge(self._calls.get(event.tool_call_id), event)
        self._calls[event.tool_call_id] = state
        return state

    def get(self, tool_call_id: str) -> ToolCallState | None:
        return self._calls.get(tool_call_id)


def merge(earlier: ToolCallState | None, event: ToolCall | ToolCallUpdate) -> ToolCallState:
    """What a call has said once ``event`` is merged into ``earlier`` (absent fields keep
    their value)."""
    said = {name: value for name in FIELDS if (value := getattr(event, name)) is not None}
    if earlier is not None:
        return attrs.evolve(earlier, **said)
    return ToolCallUpdate(event.tool_call_id, **said)
