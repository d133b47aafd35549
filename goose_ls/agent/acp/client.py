"""The client side of ACP: what the agent may call on goose-ls.

The agent layer does not know about sessions, transcripts or editors. It turns each
``session/update`` into a typed event and hands it, with every agent-to-client request,
to :class:`AgentCallbacks`, the small interface the layers above implement.

One method per ACP request the agent may make (the SDK's ``Client`` interface, whole),
each a short translation to the callbacks.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from acp import RequestError
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    CancelElicitationResponse,
    CreateTerminalResponse,
    DeclineElicitationResponse,
    DeniedOutcome,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from acp.schema import PermissionOption as AcpPermissionOption
from acp.schema import ToolCallUpdate as AcpToolCallUpdate
from pydantic import BaseModel

from goose_ls import events
from goose_ls.agent.acp.cancelling import Serving
from goose_ls.agent.acp.goose_notices import SESSION_UPDATE, status_note
from goose_ls.agent.acp.unstable_updates import CARRIED_NAME, CARRIED_PATH
from goose_ls.agent.interface import AgentCallbacks, ClientRefusal, ClientTools, model_json
from goose_ls.paths import own_folders
from goose_ls.wire import WireError, from_wire
from goose_ls.workspace.agent_sandbox import Bounds
from goose_ls.workspace.sandbox import Survey

log = logging.getLogger(__name__)

PAGES_KEPT = 64
"""URL questions remembered for their ``elicitation/complete``."""

_EVENT_TYPES: dict[str, type[events.SessionEvent]] = {
    cls.KIND: cls
    for cls in (
        events.UserMessageChunk,
        events.AgentMessageChunk,
        events.AgentThoughtChunk,
        events.ToolCall,
        events.ToolCallUpdate,
        events.Plan,
        events.PlanUpdate,
        events.PlanRemoved,
        events.AvailableCommands,
        events.CurrentMode,
        events.ConfigOptions,
        events.SessionInfo,
        events.Usage,
    )
}


@contextlib.contextmanager
def _refusals() -> Iterator[None]:
    try:
        yield
    except ClientRefusal as exc:
        raise RequestError(exc.code, str(exc)) from None


def to_event(update: BaseModel) -> events.SessionEvent | None:
    """Convert an SDK update model into our event, or None for kinds we do not know."""
    chunk = _CHUNK_TYPES.get(getattr(update, "session_update", None))
    content = getattr(update, "content", None)
    if chunk is not None and isinstance(content, BaseModel):  # once per token: the short way
        return chunk(content=model_json(content), message_id=getattr(update, "message_id", None))
    data = model_json(update)
    kind = data.pop("sessionUpdate", None)
    meta = data.pop("_meta", None)
    if kind == "session_info_update" and isinstance(run := _goose_run(meta), str):
        data["runId"] = run
    elif kind in ("tool_call", "tool_call_update") and isinstance(name := _tool_name(meta), str):
        data["name"] = name
    if kind == "plan_update" and isinstance(plan := data.get("plan"), dict):
        _lift_path(plan)
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


def _lift_path(plan: dict[str, Any]) -> None:
    """A markdown plan's ``path``, carried past the SDK in its ``_meta``, back in place."""
    meta = plan.get("_meta")
    if not isinstance(meta, dict) or not isinstance(path := meta.pop(CARRIED_PATH, None), str):
        return
    plan["path"] = path
    if not meta:
        del plan["_meta"]


def _goose_run(meta: Any) -> object:
    """``_meta.goose.activeRunId``: goose names the turn it begins (see :mod:`goose_ls.agent.steering`)."""
    goose = meta.get("goose") if isinstance(meta, dict) else None
    return goose.get("activeRunId") if isinstance(goose, dict) else None


def _tool_name(meta: Any) -> object:
    """A tool call's own name: ACP's unstable ``name`` (carried in ``_meta`` past the SDK,
    see :mod:`.unstable_updates`), or goose's ``_meta.goose.toolCall.toolName``."""
    if not isinstance(meta, dict):
        return None
    if CARRIED_NAME in meta:
        return meta[CARRIED_NAME]
    goose = meta.get("goose")
    call = goose.get("toolCall") if isinstance(goose, dict) else None
    return call.get("toolName") if isinstance(call, dict) else None


_CHUNK_TYPES: dict[
    Any, type[events.UserMessageChunk | events.AgentMessageChunk | events.AgentThoughtChunk]
] = {cls.KIND: cls for cls in events.CHUNKS}


class AcpClient:
    """Implements the SDK's ``Client`` interface by delegating to :class:`AgentCallbacks`."""

    def __init__(self, callbacks: AgentCallbacks, tools: ClientTools, serving: Serving) -> None:
        """``serving`` runs each request's work, so the agent can withdraw it."""
        self._callbacks = callbacks
        self._tools = tools
        self._serve = serving.run
        self._pages: dict[str, tuple[str, str]] = {}
        """The session and message of each URL question asked, by its ``elicitationId``,
        until the agent says it is complete (the last :data:`PAGES_KEPT`)."""
        self.read_a_file = False
        """The agent has read a file through goose-ls (``fs/read_text_file``)."""

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
        call = from_wire(model_json(tool_call), events.ToolCallUpdate)
        choices = [from_wire(model_json(option), events.PermissionOption) for option in options]
        with _refusals():  # past a cap: an error, never an allow
            chosen = await self._serve(
                self._callbacks.request_permission(session_id, call, choices)
            )
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen)
        )

    async def create_elicitation(
        self, message: str, mode: BaseModel, **_: Any
    ) -> AcceptElicitationResponse | DeclineElicitationResponse | CancelElicitationResponse:
        """``elicitation/create``. One scoped to a request, not a session (asked while a
        session is set up), has no chat to show it in: it is answered ``cancel``."""
        session_id = getattr(mode, "session_id", None)
        if session_id is None:
            log.info("cancelled an elicitation outside a session: %s", message)
            return CancelElicitationResponse(action="cancel")
        schema = getattr(mode, "requested_schema", None)
        url = getattr(mode, "url", None)  # a pydantic URL, passed on as text
        tool_call_id = getattr(mode, "tool_call_id", None)
        if url is not None and isinstance(asked := getattr(mode, "elicitation_id", None), str):
            self._pages[asked] = (session_id, message)
            while len(self._pages) > PAGES_KEPT:
                del self._pages[next(iter(self._pages))]
        with _refusals():  # past a cap: an error
            action, content = await self._serve(
                self._callbacks.elicit(
                    session_id,
                    message,
                    model_json(schema) if schema is not None else None,
                    None if url is None else str(url),
                    tool_call_id if isinstance(tool_call_id, str) else None,
                )
            )
        if action == "accept":
            return AcceptElicitationResponse(action="accept", content=content)
        if action == "decline":
            return DeclineElicitationResponse(action="decline")
        return CancelElicitationResponse(action="cancel")

    async def complete_elicitation(self, elicitation_id: str, **_: Any) -> None:
        """The agent's word that what a page asked was done out of band (the question
        itself was answered once its page was shown): the user hears it in the chat."""
        asked = self._pages.pop(elicitation_id, None)
        if asked is None:
            log.info("ignored elicitation/complete for unknown %r", elicitation_id)
            return
        session_id, message = asked
        self._callbacks.session_event(session_id, events.Note("info", f"Done: {message}"))

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **_: Any,
    ) -> ReadTextFileResponse:
        self.read_a_file = True
        with _refusals():
            text = await self._serve(self._tools.read_text_file(session_id, path, line, limit))
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_: Any
    ) -> WriteTextFileResponse:
        with _refusals():
            await self._serve(self._tools.write_text_file(session_id, path, content))
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **_: Any,
    ) -> CreateTerminalResponse:
        variables = {item.name: item.value for item in env or []}
        with _refusals():
            terminal_id = await self._serve(
                self._tools.create_terminal(
                    session_id, command, list(args or []), variables, cwd, output_byte_limit
                )
            )
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> TerminalOutputResponse:
        with _refusals():
            output, truncated, status = await self._serve(
                self._tools.terminal_output(session_id, terminal_id)
            )
        exit_status = TerminalExitStatus(exit_code=status[0], signal=status[1]) if status else None
        return TerminalOutputResponse(output=output, truncated=truncated, exit_status=exit_status)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> WaitForTerminalExitResponse:
        with _refusals():
            code, signal = await self._serve(
                self._tools.wait_for_terminal_exit(session_id, terminal_id)
            )
        return WaitForTerminalExitResponse(exit_code=code, signal=signal)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> KillTerminalResponse:
        with _refusals():
            await self._serve(self._tools.kill_terminal(session_id, terminal_id))
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> ReleaseTerminalResponse:
        with _refusals():
            await self._serve(self._tools.release_terminal(session_id, terminal_id))
        return ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == SESSION_UPDATE and (note := status_note(params)) is not None:
            self._callbacks.session_event(*note)
            return
        log.debug("ignored agent notification _%s", method)


class RefuseAll:
    """Callbacks for a connection that opens no session (``goose-ls doctor``)."""

    def directories(self) -> list[str]:
        return []

    async def sandbox_bounds(self) -> Bounds:
        return Bounds([], Survey([], []), own_folders(""))

    def refusal(self, session_id: str, action: str, path: str, why: str) -> ClientRefusal:
        return ClientRefusal(ClientRefusal.DENIED, why)

    def session_event(self, session_id: str, event: events.SessionEvent) -> None:
        return None

    async def request_permission(self, *_: Any, **__: Any) -> str | None:
        return None

    async def elicit(self, *_: Any) -> tuple[events.ElicitationAction, None]:
        return "cancel", None

    def warning(self, message: str) -> None:
        return None  # doctor reports the agent, not its sessions' MCP servers

    async def read_text_file(self, *_: Any) -> str:
        raise ClientRefusal(ClientRefusal.DENIED, "no session here")

    async def write_text_file(self, *_: Any) -> None:
        raise ClientRefusal(ClientRefusal.DENIED, "no session here")

    async def create_terminal(self, *_: Any) -> str:
        raise ClientRefusal(ClientRefusal.DENIED, "no session here")

    async def terminal_output(
        self, *_: Any
    ) -> tuple[str, bool, tuple[int | None, str | None] | None]:
        raise ClientRefusal(ClientRefusal.NOT_FOUND, "no such terminal")

    async def wait_for_terminal_exit(self, *_: Any) -> tuple[int | None, str | None]:
        raise ClientRefusal(ClientRefusal.NOT_FOUND, "no such terminal")

    async def kill_terminal(self, *_: Any) -> None:
        raise ClientRefusal(ClientRefusal.NOT_FOUND, "no such terminal")

    async def release_terminal(self, *_: Any) -> None:
        raise ClientRefusal(ClientRefusal.NOT_FOUND, "no such terminal")
