"""The goose/* requests thin editor plugins use (contract: ``docs/protocol.md``).

Each handler validates its params (InvalidParams names the field), does its work in the
session floor, and answers at once; a turn's output follows as notifications.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import attrs
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from goose_ls import __version__
from goose_ls import settings as settings_model
from goose_ls.agent.discovery import AgentUnavailable
from goose_ls.agent.interface import AgentError
from goose_ls.lsp import protocol
from goose_ls.lsp.publisher import status_to_wire
from goose_ls.lsp.server import GooseLanguageServer
from goose_ls.sessions.context import ContextItem
from goose_ls.sessions.manager import PromptRejected, UnknownSession
from goose_ls.sessions.session import Session
from goose_ls.wire import to_wire

AGENT_FAILED = -32001
"""Error code for requests the agent could not serve (``data`` has ``reason`` and ``fix``)."""


class AgentFailed(JsonRpcException):
    CODE = AGENT_FAILED


def _agent_failure(exc: Exception) -> AgentFailed:
    if isinstance(exc, AgentUnavailable):
        return AgentFailed(f"{exc.message}. {exc.fix}", data={"reason": exc.reason, "fix": exc.fix})
    return AgentFailed(str(exc))


def _unknown(method: str, session_id: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(f"{method}: sessionId: unknown session {session_id!r}")


def _session(ls: GooseLanguageServer, method: str, session_id: str) -> Session:
    try:
        return ls.sessions.get(session_id)
    except UnknownSession:
        raise _unknown(method, session_id) from None


def _with_text(ls: GooseLanguageServer, i: int, item: ContextItem) -> ContextItem:
    """A selection sent without its text takes it from the editor's buffer (or the disk)."""
    if item.type != "selection" or item.text is not None:
        return item
    assert item.uri is not None and item.start_line is not None and item.end_line is not None
    try:
        lines = ls.workspace.get_text_document(item.uri).lines
    except OSError as exc:
        raise JsonRpcInvalidParams(
            f"{protocol.PROMPT}: context[{i}].uri: cannot read {item.uri} ({exc.strerror})"
        ) from None
    return attrs.evolve(item, text="".join(lines[item.start_line - 1 : item.end_line]))


def session_summary(ls: GooseLanguageServer, session: Session) -> dict[str, Any]:
    record = ls.sessions.library.record(session.session_id)
    transcript = ls.transcripts.get(session.session_id)
    summary: dict[str, Any] = {
        "sessionId": session.session_id,
        "cwd": session.cwd,
        "title": record.title if record else None,
        "tabId": session.tab_id,
        "lastIndex": session.last_index,
        "busy": session.active is not None,
        "waiting": [t.message_id for t in session.waiting],
        "transcript": transcript.uri if transcript else None,
        **to_wire(session.options),
    }
    return {k: v for k, v in summary.items() if v is not None}


async def _agent_call(work: Any) -> Any:
    try:
        return await work
    except (AgentError, AgentUnavailable) as exc:
        raise _agent_failure(exc) from None


def memory_in_use() -> dict[str, Any]:
    """Resident size (where /proc tells it) and Python's live memory blocks, for leak hunts."""
    memory: dict[str, Any] = {"allocatedBlocks": sys.getallocatedblocks()}
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                memory["rssMb"] = round(int(line.split()[1]) / 1024, 1)
    return memory


def register(server: GooseLanguageServer) -> None:
    @server.feature(protocol.STATUS)
    def status(ls: GooseLanguageServer, _: Any) -> dict[str, Any]:
        sessions = ls.sessions
        return {
            "protocolVersion": protocol.PROTOCOL_VERSION,
            "serverVersion": __version__,
            "agent": status_to_wire(sessions.supervisor.status),
            "sessions": [session_summary(ls, s) for s in sessions.sessions.values()],
            "settings": settings_model.describe(ls.settings),
            "memory": memory_in_use(),
        }

    @server.feature(protocol.NEW_SESSION)
    async def new_session(ls: GooseLanguageServer, raw: Any) -> dict[str, Any]:
        params = protocol.parse(protocol.NEW_SESSION, raw, protocol.NewSessionParams)
        await ls.settings_settled()
        session = await _agent_call(ls.sessions.new_session(params.cwd, params.tab_id))
        return session_summary(ls, session)

    @server.feature(protocol.LOAD_SESSION)
    async def load_session(ls: GooseLanguageServer, raw: Any) -> dict[str, Any]:
        params = protocol.parse(protocol.LOAD_SESSION, raw, protocol.LoadSessionParams)
        await ls.settings_settled()
        session = await _agent_call(ls.sessions.load_session(params.session_id, params.tab_id))
        return session_summary(ls, session)

    @server.feature(protocol.LIST_SESSIONS)
    async def list_sessions(ls: GooseLanguageServer, _: Any) -> dict[str, Any]:
        await ls.settings_settled()
        return {"sessions": await _agent_call(ls.sessions.list_sessions())}

    @server.feature(protocol.CLOSE_SESSION)
    async def close_session(ls: GooseLanguageServer, raw: Any) -> dict[str, Any]:
        params = protocol.parse(protocol.CLOSE_SESSION, raw, protocol.SessionParams)
        _session(ls, protocol.CLOSE_SESSION, params.session_id)
        await ls.sessions.close_session(params.session_id)
        await ls.transcripts.close(params.session_id)
        return {}

    @server.feature(protocol.DELETE_SESSION)
    async def delete_session(ls: GooseLanguageServer, raw: Any) -> dict[str, Any]:
        params = protocol.parse(protocol.DELETE_SESSION, raw, protocol.SessionParams)
        try:
            await ls.sessions.delete_session(params.session_id)
        except UnknownSession:
            raise _unknown(protocol.DELETE_SESSION, params.session_id) from None
        ls.transcripts.delete(params.session_id)
        return {}

    @server.feature(protocol.RENAME_SESSION)
    def rename_session(ls: GooseLanguageServer, raw: Any) -> dict[str, Any]:
        params = protocol.parse(protocol.RENAME_SESSION, raw, protocol.RenameParams)
        try:
            ls.sessions.rename(params.session_id, params.title)
        except UnknownSession:
            raise _unknown(protocol.RENAME_SESSION, params.session_id) from None
        return {}

    @server.feature(protocol.SET_MODE)
    async def set_mode(ls: GooseLanguageServer, raw: Any) -> dict[str, Any]:
        params = protocol.parse(protocol.SET_MODE, raw, protocol.SetModeParams)
        session = _session(ls, protocol.SET_MODE, params.session_id)
        await _agent_call(ls.sessions.set_mode(params.session_id, params.mode_id))
        return session_summary(ls, session)

    @server.feature(protocol.SET_CONFIG_OPTION)
    async def set_config_option(ls: GooseLanguageServer, raw: Any) -> dict[str, Any]:
        params = protocol.parse(protocol.SET_CONFIG_OPTION, raw, protocol.SetConfigOptionParams)
        session = _session(ls, protocol.SET_CONFIG_OPTION, params.session_id)
        await _agent_call(
            ls.sessions.set_config_option(params.session_id, params.config_id, params.value)
        )
        return session_summary(ls, session)

    @server.feature(protocol.RESTART)
    async def restart(ls: GooseLanguageServer, _: Any) -> dict[str, Any]:
        await _agent_call(ls.sessions.restart())
        return {"agent": status_to_wire(ls.sessions.supervisor.status)}

    @server.feature(protocol.AUTHENTICATE)
    async def authenticate(ls: GooseLanguageServer, _: Any) -> dict[str, Any]:
        signed_in = await _agent_call(ls.sessions.authenticate())
        return {"signedIn": signed_in, "agent": status_to_wire(ls.sessions.supervisor.status)}

    @server.feature(protocol.PROMPT)
    def prompt(ls: GooseLanguageServer, raw: Any) -> dict[str, Any]:
        params = protocol.parse(protocol.PROMPT, raw, protocol.PromptParams)
        session = _session(ls, protocol.PROMPT, params.session_id)
        context = [_with_text(ls, i, item) for i, item in enumerate(params.context)]
        queued = session.active is not None or bool(session.waiting)
        try:
            ls.sessions.prompt(params.session_id, params.message_id, params.prompt, context)
        except PromptRejected as exc:
            raise JsonRpcInvalidParams(f"{protocol.PROMPT}: {exc}") from None
        return {"sessionId": params.session_id, "messageId": params.message_id, "queued": queued}

    @server.feature(protocol.CANCEL)
    async def cancel(ls: GooseLanguageServer, raw: Any) -> dict[str, Any]:
        params = protocol.parse(protocol.CANCEL, raw, protocol.CancelParams)
        _session(ls, protocol.CANCEL, params.session_id)
        return {"cancelled": await ls.sessions.cancel(params.session_id, params.message_id)}

    @server.feature(protocol.PERMISSION)
    def permission(ls: GooseLanguageServer, raw: Any) -> dict[str, Any]:
        params = protocol.parse(protocol.PERMISSION, raw, protocol.PermissionParams)
        try:
            ls.sessions.answer_permission(params.request_id, params.option_id)
        except KeyError:
            raise JsonRpcInvalidParams(
                f"{protocol.PERMISSION}: requestId: no pending request {params.request_id!r}"
            ) from None
        except ValueError as exc:
            raise JsonRpcInvalidParams(f"{protocol.PERMISSION}: optionId: {exc}") from None
        return {}

    @server.feature(protocol.REPLAY)
    def replay(ls: GooseLanguageServer, raw: Any) -> dict[str, Any]:
        params = protocol.parse(protocol.REPLAY, raw, protocol.ReplayParams)
        session = _session(ls, protocol.REPLAY, params.session_id)
        resent = session.events_after(params.after_index)
        for event in resent:
            ls.publisher.forward(event)
        return {
            "sessionId": session.session_id,
            "lastIndex": session.last_index,
            "count": len(resent),
        }
