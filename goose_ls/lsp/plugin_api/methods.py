"""The goose/* requests thin editor plugins use (contract: ``docs/protocol.md``).

One table routes each method to its params class and its handler. Every request is
validated the same way (InvalidParams names the field), does its work in the session
layer and answers at once; a turn's output follows as notifications. Failures map to
errors the same way for all: an unknown session or a refused request is InvalidParams,
an agent that failed is -32001 with ``reason`` and ``fix``.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from goose_ls import __version__
from goose_ls import settings as settings_model
from goose_ls.errors import AgentError, Refused, UnknownSession
from goose_ls.lsp import mentions, symbols
from goose_ls.lsp.plugin_api import protocol
from goose_ls.lsp.plugin_api.protocol import status_to_wire
from goose_ls.lsp.prompt_context import selected_lines, with_mentions
from goose_ls.lsp.services import Services, ServicesSlot
from goose_ls.sessions import ContextItem, Session
from goose_ls.wire import to_wire

AGENT_FAILED = -32001
"""Error code for requests the agent could not serve (``data`` has ``reason`` and ``fix``)."""

Json = dict[str, Any]


class AgentFailed(JsonRpcException):
    CODE = AGENT_FAILED


def session_summary(services: Services, session: Session) -> Json:
    record = services.sessions.record(session.session_id)
    transcript = services.transcripts.get(session.session_id)
    summary: Json = {
        "sessionId": session.session_id,
        "cwd": session.cwd,
        "title": record.title if record else None,
        "tabId": session.tab_id,
        "lastIndex": session.last_index,
        "busy": session.active is not None,
        "waiting": [t.message_id for t in session.waiting],
        "transcript": transcript.uri if transcript else None,
        "usage": to_wire(session.usage) if session.usage else None,
        **to_wire(session.options),
    }
    return {k: v for k, v in summary.items() if v is not None}


def memory_in_use() -> Json:
    """Resident size (where /proc tells it) and Python's live memory blocks, for leak hunts."""
    memory: Json = {"allocatedBlocks": sys.getallocatedblocks()}
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                memory["rssMb"] = round(int(line.split()[1]) / 1024, 1)
    return memory


def _with_text(services: Services, i: int, item: ContextItem) -> ContextItem:
    """A selection sent without its text takes it from the editor's buffer (or the disk)."""
    if item.type != "selection" or item.text is not None:
        return item
    assert item.uri is not None and item.start_line is not None and item.end_line is not None
    where = f"context[{i}].uri: "
    text = selected_lines(services.editor, item.uri, item.start_line, item.end_line, where)
    return attrs.evolve(item, text=text)


# --- the handlers: (services, params) -> result --------------------------------------
def status(s: Services, _: None) -> Json:
    return {
        "protocolVersion": protocol.PROTOCOL_VERSION,
        "serverVersion": __version__,
        "agent": status_to_wire(s.sessions.agent_status),
        "sessions": [session_summary(s, session) for session in s.sessions.open_sessions()],
        "settings": settings_model.describe(s.settings),
        "memory": memory_in_use(),
    }


async def new_session(s: Services, p: protocol.NewSessionParams) -> Json:
    await s.settled()
    return session_summary(s, await s.sessions.new_session(p.cwd, p.tab_id))


async def load_session(s: Services, p: protocol.LoadSessionParams) -> Json:
    await s.settled()
    return session_summary(s, await s.sessions.load_session(p.session_id, p.tab_id))


async def fork_session(s: Services, p: protocol.ForkParams) -> Json:
    await s.settled()
    forked = await s.sessions.fork(p.session_id, p.message_id, p.tab_id)
    summary = session_summary(s, forked.session)
    summary["forkedFrom"] = p.session_id
    if forked.seed is not None:  # not a fork: a new chat, whose first message to edit
        summary.update(seed=forked.seed, notForked=forked.why)
    return summary


async def list_sessions(s: Services, _: None) -> Json:
    await s.settled()
    return {"sessions": await s.sessions.list_sessions()}


async def close_session(s: Services, p: protocol.SessionParams) -> Json:
    await s.sessions.close_session(p.session_id)
    return {}


async def delete_session(s: Services, p: protocol.SessionParams) -> Json:
    failure = await s.sessions.delete_session(p.session_id)
    return {"agentError": failure} if failure else {}


def rename_session(s: Services, p: protocol.RenameParams) -> Json:
    s.sessions.rename(p.session_id, p.title)
    return {}


async def set_mode(s: Services, p: protocol.SetModeParams) -> Json:
    session = s.sessions.get(p.session_id)
    await s.sessions.set_mode(p.session_id, p.mode_id)
    return session_summary(s, session)


async def set_config_option(s: Services, p: protocol.SetConfigOptionParams) -> Json:
    session = s.sessions.get(p.session_id)
    await s.sessions.set_config_option(p.session_id, p.config_id, p.value)
    return session_summary(s, session)


async def restart(s: Services, p: protocol.RestartParams) -> Json:
    await s.sessions.restart(p.server)
    return {"agent": status_to_wire(s.sessions.agent_status)}


async def authenticate(s: Services, p: protocol.AuthenticateParams) -> Json:
    if p.method_id is None:
        signed_in = await s.sessions.authenticate()
    else:
        signed_in = await s.sessions.signed_in_in_terminal(p.method_id)
    return {"signedIn": signed_in, "agent": status_to_wire(s.sessions.agent_status)}


async def sign_in_command(s: Services, p: protocol.SignInCommandParams) -> Json:
    """Only asked for: the status, which is shown and shared, names the sign-in alone."""
    command: Json = to_wire(await s.sessions.terminal_command(p.method_id))
    return command


async def logout(s: Services, _: None) -> Json:
    await s.sessions.logout()
    return {"agent": status_to_wire(s.sessions.agent_status)}


async def prompt(s: Services, p: protocol.PromptParams) -> Json:
    session = s.sessions.get(p.session_id)
    given = [_with_text(s, i, item) for i, item in enumerate(p.context)]
    context = with_mentions(p.prompt, given, Path(s.root))
    async with s.sessions.accepting(p.session_id):  # in order, whatever has images to read
        images = await s.sessions.read_images(p.session_id, context)
        queued = session.active is not None or bool(session.waiting)
        s.sessions.prompt(p.session_id, p.message_id, p.prompt, context, images)
    if p.steer and session.active is not None:
        s.sessions.steer_soon(p.session_id, p.message_id)
    return {"sessionId": p.session_id, "messageId": p.message_id, "queued": queued}


async def steer(s: Services, p: protocol.SteerParams) -> Json:
    return {"steered": await s.sessions.steer_now(p.session_id, p.message_id)}


async def cancel(s: Services, p: protocol.CancelParams) -> Json:
    return {"cancelled": await s.sessions.cancel(p.session_id, p.message_id)}


def permission(s: Services, p: protocol.PermissionParams) -> Json:
    try:
        s.sessions.permissions.answer(p.request_id, p.option_id)
    except KeyError:
        raise JsonRpcInvalidParams(
            f"{protocol.PERMISSION}: requestId: no pending request {p.request_id!r}"
        ) from None
    except ValueError as exc:
        raise JsonRpcInvalidParams(f"{protocol.PERMISSION}: optionId: {exc}") from None
    return {}


def elicitation(s: Services, p: protocol.ElicitationParams) -> Json:
    elicitations = s.sessions.questions
    if not elicitations.waiting(p.request_id, p.session_id):
        raise JsonRpcInvalidParams(
            f"{protocol.ELICITATION}: requestId: no pending question {p.request_id!r} "
            f"in session {p.session_id!r}"
        )
    try:
        elicitations.answer(p.request_id, p.action, p.content)
    except ValueError as exc:
        raise JsonRpcInvalidParams(f"{protocol.ELICITATION}: {exc}") from None
    return {}


def replay(s: Services, p: protocol.ReplayParams) -> Json:
    """Send a session's events after ``afterIndex`` again, from the journal: any session
    goose-ls has kept, open here or not."""
    session = s.sessions.find(p.session_id)
    record = s.sessions.record(p.session_id)
    if session is None and record is None:
        raise UnknownSession(p.session_id)
    resent = s.sessions.history(p.session_id, p.after_index)
    for row in resent:
        s.publisher.forward_journaled(row)
    if session is not None:
        last = session.last_index
    else:
        assert record is not None
        last = max(record.last_index, resent[-1].idx if resent else 0)
    return {"sessionId": p.session_id, "lastIndex": last, "count": len(resent)}


def find_files(s: Services, p: protocol.FindFilesParams) -> Json:
    return {"files": mentions.candidates(Path(s.root), s.editor.open_paths(), p.query)}


def search_sessions(s: Services, p: protocol.SearchSessionsParams) -> Json:
    return {"results": [symbols.to_wire(found) for found in symbols.find(s, p.query, p.limit)]}


@attrs.frozen
class Route:
    method: str
    params: type | None
    """The params class; None for a request that takes none."""
    handler: Callable[[Services, Any], Any]


ROUTES = [
    Route(protocol.STATUS, None, status),
    Route(protocol.NEW_SESSION, protocol.NewSessionParams, new_session),
    Route(protocol.LOAD_SESSION, protocol.LoadSessionParams, load_session),
    Route(protocol.FORK_SESSION, protocol.ForkParams, fork_session),
    Route(protocol.LIST_SESSIONS, None, list_sessions),
    Route(protocol.CLOSE_SESSION, protocol.SessionParams, close_session),
    Route(protocol.DELETE_SESSION, protocol.SessionParams, delete_session),
    Route(protocol.RENAME_SESSION, protocol.RenameParams, rename_session),
    Route(protocol.SET_MODE, protocol.SetModeParams, set_mode),
    Route(protocol.SET_CONFIG_OPTION, protocol.SetConfigOptionParams, set_config_option),
    Route(protocol.RESTART, protocol.RestartParams, restart),
    Route(protocol.AUTHENTICATE, protocol.AuthenticateParams, authenticate),
    Route(protocol.SIGN_IN_COMMAND, protocol.SignInCommandParams, sign_in_command),
    Route(protocol.LOGOUT, None, logout),
    Route(protocol.PROMPT, protocol.PromptParams, prompt),
    Route(protocol.CANCEL, protocol.CancelParams, cancel),
    Route(protocol.STEER, protocol.SteerParams, steer),
    Route(protocol.PERMISSION, protocol.PermissionParams, permission),
    Route(protocol.ELICITATION, protocol.ElicitationParams, elicitation),
    Route(protocol.REPLAY, protocol.ReplayParams, replay),
    Route(protocol.SEARCH_SESSIONS, protocol.SearchSessionsParams, search_sessions),
    Route(protocol.FIND_FILES, protocol.FindFilesParams, find_files),
]


def as_rpc_error(method: str, exc: Exception) -> JsonRpcException:
    """A goose-ls problem as the JSON-RPC error the contract names for it."""
    if isinstance(exc, UnknownSession):
        return JsonRpcInvalidParams(f"{method}: sessionId: {exc}")
    if isinstance(exc, AgentError):
        data = {"reason": exc.reason, "fix": exc.fix} if exc.reason else None
        return AgentFailed(str(exc), data=data)
    return JsonRpcInvalidParams(f"{method}: {exc}")


def _handler(route: Route, services: ServicesSlot) -> Callable[..., Any]:
    def start(raw: Any) -> tuple[Services, Any]:
        params = protocol.parse(route.method, raw, route.params) if route.params else None
        s = services()
        s.publisher.listen()  # a client that speaks goose/* wants its updates
        return s, params

    if inspect.iscoroutinefunction(route.handler):

        async def handle_async(_: LanguageServer, raw: Any) -> Any:
            try:
                return await route.handler(*start(raw))
            except (UnknownSession, Refused, AgentError) as exc:
                raise as_rpc_error(route.method, exc) from None

        return handle_async

    def handle(_: LanguageServer, raw: Any) -> Any:
        try:
            return route.handler(*start(raw))
        except (UnknownSession, Refused, AgentError) as exc:
            raise as_rpc_error(route.method, exc) from None

    return handle


def register(server: LanguageServer, services: ServicesSlot) -> None:
    for route in ROUTES:
        server.feature(route.method)(_handler(route, services))
