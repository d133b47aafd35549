"""The client side of ACP: what the agent may call on goose-ls.

The agent floor does not know about sessions, transcripts or editors. It turns each
``session/update`` into a typed event and hands it, with every agent-to-client request,
to :class:`AgentCallbacks`, the small interface the floors above implement.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    RequestPermissionResponse,
)
from acp.schema import PermissionOption as AcpPermissionOption
from acp.schema import ToolCallUpdate as AcpToolCallUpdate
from pydantic import BaseModel

from goose_ls import events
from goose_ls.wire import WireError, from_wire

log = logging.getLogger(__name__)

_EVENT_TYPES: dict[str, type[events.SessionEvent]] = {
    cls.KIND: cls
    for cls in (
        events.UserMessageChunk,
        events.AgentMessageChunk,
        events.AgentThoughtChunk,
        events.ToolCall,
        events.ToolCallUpdate,
        events.Plan,
        events.AvailableCommands,
        events.CurrentMode,
        events.ConfigOptions,
        events.SessionInfo,
        events.Usage,
    )
}


class AgentCallbacks(Protocol):
    """What the upper floors provide to the agent floor."""

    def session_event(self, session_id: str, event: events.SessionEvent) -> None:
        """An update arrived; called in arrival order, before the next one is read."""

    async def request_permission(
        self,
        session_id: str,
        tool_call: events.ToolCallUpdate,
        options: list[events.PermissionOption],
    ) -> str | None:
        """Return the chosen ``optionId``, or None when the turn was cancelled."""


def _json(model: BaseModel) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


def to_event(update: BaseModel) -> events.SessionEvent | None:
    """Convert an SDK update model into our event, or None for kinds we do not know."""
    data = _json(update)
    kind = data.pop("sessionUpdate", None)
    data.pop("_meta", None)
    if kind == "current_mode_update" and "currentModeId" not in data and "modeId" in data:
        data["currentModeId"] = data.pop("modeId")
    cls = _EVENT_TYPES.get(str(kind))
    if cls is None:
        log.info("ignored a session/update of unknown kind %r", kind)
        return None
    try:
        return from_wire(data, cls)
    except WireError as exc:
        log.warning("ignored a malformed %s update: %s", kind, exc)
        return None


class AcpClient:
    """Implements the SDK's ``Client`` interface by delegating to :class:`AgentCallbacks`."""

    def __init__(self, callbacks: AgentCallbacks) -> None:
        self._callbacks = callbacks

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        # No await before the hand-off: updates must reach the session in arrival order.
        event = to_event(update)
        if event is not None:
            self._callbacks.session_event(session_id, event)

    async def request_permission(
        self,
        session_id: str,
        tool_call: AcpToolCallUpdate,
        options: list[AcpPermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        call = from_wire(_json(tool_call), events.ToolCallUpdate)
        choices = [from_wire(_json(option), events.PermissionOption) for option in options]
        chosen = await self._callbacks.request_permission(session_id, call, choices)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen)
        )

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.debug("ignored agent notification _%s", method)
