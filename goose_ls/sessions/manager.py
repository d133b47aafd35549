"""Sessions and turns on top of the agent: the hub between the editor and the agent.

The manager implements the agent floor's callbacks: each update is routed to its
session (kept aside when it arrives before the ``session/new`` answer that names the
session), and permission requests wait for the editor's answer. Turns run in the
background, one at a time per session (the agent takes one prompt per session); a
cancelled turn is reported as cancelled whatever the agent answers, and its pending
permission requests are answered ``cancelled``.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

import attrs

from goose_ls import events
from goose_ls.agent.auth import AUTH_REQUIRED, instructions, methods_of, ready
from goose_ls.agent.discovery import AgentUnavailable
from goose_ls.agent.interface import AgentError
from goose_ls.agent.supervisor import AgentState, AgentStatus, AgentSupervisor
from goose_ls.paths import data_dir
from goose_ls.sessions.context import ContextItem, to_blocks
from goose_ls.sessions.library import SessionLibrary
from goose_ls.sessions.recovery import Recovery
from goose_ls.sessions.session import IndexedEvent, Session, Turn
from goose_ls.sessions.tools import AgentTools, target_of
from goose_ls.settings import Settings
from goose_ls.workspace.files import EditorFiles
from goose_ls.workspace.policy import Decision, ToolTarget

if TYPE_CHECKING:
    from goose_ls.agent.connection import AgentConnection

log = logging.getLogger(__name__)
T = TypeVar("T")

EARLY_EVENTS_LIMIT = 10_000
"""Updates kept for a session id the agent has not named yet (its ``session/new`` is pending)."""


class SessionListener(Protocol):
    """What the LSP floor provides: where events and agent states go."""

    def session_event(self, event: IndexedEvent) -> None: ...

    def agent_status(self, status: AgentStatus) -> None: ...

    def cannot_write(self, path: Path, error: OSError) -> None:
        """One of goose-ls's files could not be written; the user should know."""


class UnknownSession(KeyError):
    pass


class PromptRejected(ValueError):
    """The prompt cannot be accepted (the message says why)."""


ALLOW_FOR_SESSION = events.PermissionOption(
    option_id="goose-ls:allow_session", name="Allow for this session", kind="allow_always"
)
"""goose-ls's own choice: allow once now, and the same call again without asking."""


def _option(options: list[events.PermissionOption], kind: str) -> str | None:
    return next((o.option_id for o in options if o.kind == kind), None)


@attrs.define
class _PendingPermission:
    session_id: str
    options: list[events.PermissionOption]
    answer: asyncio.Future[str | None]
    target: ToolTarget


class SessionManager:
    def __init__(
        self, settings: Settings, cwd: str, listener: SessionListener, editor: EditorFiles
    ) -> None:
        self.settings = settings
        self.cwd = cwd
        self._listener = listener
        self.tools = AgentTools(self, editor)
        self.supervisor = AgentSupervisor(settings.agent, self, self.tools, cwd, self._agent_status)
        self.library = SessionLibrary(
            data_dir(settings.data_dir) / "sessions.json", self.cannot_write
        )
        self.recovery = Recovery(self)
        self.sessions: dict[str, Session] = {}
        self._early: dict[str, list[events.SessionEvent]] = {}
        self._permissions: dict[str, _PendingPermission] = {}

    def cannot_write(self, path: Path, error: OSError) -> None:
        self._listener.cannot_write(path, error)

    def update_settings(self, settings: Settings) -> None:
        """New settings; the agent ones apply from the agent's next start."""
        self.settings = settings
        self.supervisor.settings = settings.agent

    # --- agent callbacks ---------------------------------------------------------
    def session_event(self, session_id: str, event: events.SessionEvent) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            early = self._early.setdefault(session_id, [])
            if len(early) < EARLY_EVENTS_LIMIT:
                early.append(event)
            return
        if session.replaying:
            return  # history this session already holds, sent again by session/load
        self._record(session, event, replay=session.loading)

    def note(
        self, session: Session, severity: Literal["info", "warning", "error"], text: str
    ) -> None:
        """Tell the user something about a session, in its event stream."""
        self._record(session, events.Note(severity, text))

    def note_for(
        self, session_id: str, severity: Literal["info", "warning", "error"], text: str
    ) -> None:
        if session := self.sessions.get(session_id):
            self.note(session, severity, text)

    def _record(self, session: Session, event: events.SessionEvent, replay: bool = False) -> None:
        indexed = session.record(event, replay)
        if not replay:
            self.library.observe(session.session_id, event, indexed.index)

    async def request_permission(
        self,
        session_id: str,
        tool_call: events.ToolCallUpdate,
        options: list[events.PermissionOption],
    ) -> str | None:
        session = self.sessions.get(session_id)
        if session is None or session.active is None or session.active.cancelled:
            return None
        target = target_of(tool_call, session.tool_calls.get(tool_call.tool_call_id))
        tool = tool_call.title or target.kind
        policy, problem = self.tools.policy()
        if problem:
            self.note(session, "warning", problem)
        decision = policy.decide(target)
        if decision.action == "ask" and target in session.allowed:
            decision = Decision("allow", "allowed for this session")
        if decision.action != "ask":
            kind = "allow_once" if decision.action == "allow" else "reject_once"
            chosen = _option(options, kind) or _option(options, kind.replace("once", "always"))
            verb = "Allowed" if decision.action == "allow" else "Refused"
            self.note(
                session,
                "info",
                f"{verb} without asking ({decision.reason}): {tool} {target.describe()}",
            )
            self.tools.audit.record(
                session_id, tool, target.describe(), chosen or "cancelled", decision.reason
            )
            return chosen
        request_id = uuid.uuid4().hex[:12]
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        offered = [*options, ALLOW_FOR_SESSION] if _option(options, "allow_once") else options
        self._permissions[request_id] = _PendingPermission(session_id, offered, answer, target)
        self._record(session, events.PermissionRequested(request_id, tool_call, offered))
        try:
            chosen = answered = await answer
        finally:
            del self._permissions[request_id]
        if chosen == ALLOW_FOR_SESSION.option_id:
            session.allowed.add(target)
            chosen = _option(options, "allow_once")
        self.tools.audit.record(session_id, tool, target.describe(), chosen or "cancelled", "user")
        label = next((o.label for o in offered if o.option_id == answered), None)
        self._record(
            session,
            events.PermissionResolved(
                request_id, "selected" if chosen else "cancelled", option_id=chosen, label=label
            ),
        )
        return chosen

    def _agent_status(self, status: AgentStatus) -> None:
        if status.state in (AgentState.ERROR, AgentState.STOPPED):
            # Nobody can act on these any more; fail closed.
            for pending in list(self._permissions.values()):
                if not pending.answer.done():
                    pending.answer.set_result(None)
        self._listener.agent_status(status)
        if status.state is AgentState.ERROR and status.reason == "crashed":
            self.recovery.agent_died(status.message or "the agent stopped")

    # --- sessions ----------------------------------------------------------------
    def get(self, session_id: str) -> Session:
        try:
            return self.sessions[session_id]
        except KeyError:
            raise UnknownSession(session_id) from None

    async def new_session(self, cwd: str | None = None, tab_id: str | None = None) -> Session:
        conn = await self.supervisor.connection()
        cwd = cwd or self.cwd
        session_id, options = await self._signed_in(conn, lambda: conn.new_session(cwd))
        session = Session(
            session_id, cwd, conn.generation, self._listener.session_event, tab_id=tab_id
        )
        session.options = options
        self.sessions[session_id] = session
        self.library.created(session_id, cwd, conn.profile.name)
        for event in self._early.pop(session_id, []):
            self._record(session, event)
        return session

    async def load_session(self, session_id: str, tab_id: str | None = None) -> Session:
        """Open a stored (or agent-listed) session; its history arrives as replay events."""
        if session_id in self.sessions:
            session = self.sessions[session_id]
            session.tab_id = tab_id or session.tab_id
            return session
        conn = await self.supervisor.connection()
        if not conn.profile.load_session:
            raise AgentError(f"{conn.profile.name} cannot load earlier sessions (no session/load)")
        record = self.library.record(session_id)
        cwd = record.cwd if record else self.cwd
        session = Session(
            session_id,
            cwd,
            conn.generation,
            self._listener.session_event,
            first_index=record.last_index if record else 0,
            tab_id=tab_id,
        )
        self.sessions[session_id] = session
        session.loading = True
        try:
            session.options = await self._signed_in(
                conn, lambda: conn.load_session(session_id, cwd)
            )
        except BaseException:
            del self.sessions[session_id]
            raise
        finally:
            session.loading = False
        for event in self._early.pop(session_id, []):
            self._record(session, event, replay=True)
        self.library.created(session_id, cwd, conn.profile.name)
        return session

    async def _signed_in(self, conn: AgentConnection, action: Callable[[], Awaitable[T]]) -> T:
        """Run ``action``; if the agent wants a sign-in first, sign in when possible and retry."""
        try:
            return await action()
        except AgentError as exc:
            if exc.code != AUTH_REQUIRED:
                raise
        if not await self.authenticate(conn):
            raise AgentError(f"the agent needs you to sign in: {self._sign_in_help(conn)}")
        return await action()

    def _sign_in_help(self, conn: AgentConnection) -> str:
        return instructions(methods_of(conn.profile.describe()))

    async def authenticate(self, conn: AgentConnection | None = None) -> bool:
        """Sign in with a method that can succeed on its own (``goose.authenticate``)."""
        conn = conn or await self.supervisor.connection()
        environ = {**os.environ, **self.settings.agent.env}
        for method in methods_of(conn.profile.describe()):
            if not ready(method, environ):
                continue
            try:
                await conn.authenticate(str(method["id"]))
            except AgentError as exc:
                log.info("authenticate %s failed: %s", method["id"], exc)
                continue
            self.supervisor.signed_in()
            return True
        help_text = self._sign_in_help(conn)
        self.supervisor.needs_sign_in(help_text)
        for session in self.sessions.values():
            self.note(session, "warning", f"The agent needs you to sign in: {help_text}.")
        return False

    async def restore_last(self) -> tuple[Session, str | None]:
        """The workspace's last session, loaded; or a new one, with the reason why."""
        last = self.library.last_used(self.cwd)
        if last is not None:
            try:
                return await self.load_session(last), None
            except AgentError as exc:
                reason = f"could not resume the last chat {last} ({exc}); started a new one"
                return await self.new_session(), reason
        return await self.new_session(), None

    async def list_sessions(self) -> list[dict[str, Any]]:
        """Local sessions merged with the agent's own list (when it has session/list)."""
        agent_side: list[dict[str, Any]] = []
        conn = await self.supervisor.connection()
        if conn.profile.session_capability("list"):
            agent_side = await conn.list_sessions(self.cwd)
        return self.library.merged(agent_side, set(self.sessions))

    async def close_session(self, session_id: str) -> None:
        session = self.get(session_id)
        await self._drop_turns(session)
        self.tools.terminals.release_session(session_id)
        del self.sessions[session_id]
        self.library.flush()
        # A long chat is a large graph of events with cycles: free it now, not whenever.
        gc.collect()
        conn = self.supervisor.current
        if conn is not None and conn.profile.session_capability("close"):
            try:
                await conn.close_session(session_id)
            except AgentError as exc:
                log.warning("session/close %s failed: %s", session_id, exc)

    async def delete_session(self, session_id: str) -> None:
        """Close the session if open and forget it here (the agent keeps its own copy)."""
        if session_id in self.sessions:
            await self.close_session(session_id)
        if self.library.forget(session_id) is None:
            raise UnknownSession(session_id)

    def rename(self, session_id: str, title: str) -> None:
        try:
            self.library.rename(session_id, title)
        except KeyError:
            raise UnknownSession(session_id) from None
        if session_id in self.sessions:  # tell the clients, without taking it as the agent's
            record = self.library.record(session_id)
            self.sessions[session_id].record(
                events.SessionInfo(title=record.title if record else title)
            )

    async def set_mode(self, session_id: str, mode_id: str) -> None:
        """Switch mode: through the ``mode`` config option when there is one (preferred)."""
        session = self.get(session_id)
        conn = await self._attach(session)
        option = next(
            (o for o in session.options.config_options or [] if o.get("category") == "mode"), None
        )
        if option is not None:
            await self.set_config_option(session_id, str(option["id"]), mode_id)
        else:
            await conn.set_mode(session_id, mode_id)

    async def set_config_option(self, session_id: str, config_id: str, value: str | bool) -> None:
        session = self.get(session_id)
        conn = await self._attach(session)
        options = await conn.set_config_option(session_id, config_id, value)
        if options != session.options.config_options:  # the agent did not send the update
            self._record(session, events.ConfigOptions(config_options=options))

    async def _attach(self, session: Session) -> AgentConnection:
        """The agent connection for ``session``, reloading it into a restarted agent."""
        async with session.attach_lock:
            return await self._reattach(session)

    async def _reattach(self, session: Session) -> AgentConnection:
        conn = await self.supervisor.connection()
        if session.generation == conn.generation:
            return conn
        if not conn.profile.load_session:
            raise AgentError(
                "the agent restarted and cannot reload this chat (it has no session/load); "
                "start a new chat"
            )
        session.replaying = True
        try:
            await conn.load_session(session.session_id, session.cwd)
        finally:
            session.replaying = False
            self._early.pop(session.session_id, None)
        session.generation = conn.generation
        self._record(
            session, events.Note("info", "The agent was restarted; this chat was reloaded.")
        )
        return conn

    # --- turns -------------------------------------------------------------------
    def prompt(
        self, session_id: str, message_id: str, prompt: str, context: list[ContextItem]
    ) -> Turn:
        """Accept a turn and run it in the background; returns at once."""
        session = self.get(session_id)
        if message_id in session.message_ids:
            raise PromptRejected(f"messageId: {message_id} was already used in this session")
        if not prompt.strip() and not context:
            raise PromptRejected("prompt: empty, and there is no context either")
        session.message_ids.add(message_id)
        self.library.used(self.cwd, session_id)
        turn = Turn(message_id=message_id, prompt=prompt, context=context)
        session.waiting.append(turn)
        turn.task = asyncio.create_task(self._run_turn(session, turn))
        return turn

    async def _run_turn(self, session: Session, turn: Turn) -> None:
        try:
            await session.turn_lock.acquire()
        except asyncio.CancelledError:  # cancelled while it waited its turn
            session.waiting.remove(turn)
            indexed = session.record(
                events.TurnEnded(stop_reason="cancelled"), message_id=turn.message_id
            )
            self.library.observe(session.session_id, indexed.event, indexed.index)
            raise
        try:
            await self._take_turn(session, turn)
        finally:
            session.turn_lock.release()

    async def _take_turn(self, session: Session, turn: Turn) -> None:
        session.waiting.remove(turn)
        session.active = turn
        end = events.TurnEnded(stop_reason="cancelled")
        try:
            if not turn.cancelled:
                end = await self._send(session, turn)
        except asyncio.CancelledError:
            end = events.TurnEnded(stop_reason="cancelled")
            raise
        finally:
            if turn.watchdog is not None:
                turn.watchdog.cancel()  # it holds the session: let a closed one go
            self._cancel_permissions(session)
            self._record(session, end)
            session.active = None

    async def _send(self, session: Session, turn: Turn) -> events.TurnEnded:
        try:
            conn = await self._attach(session)
            blocks = to_blocks(turn.prompt, turn.context, conn.profile.embedded_context)
            for block in blocks:
                self._record(session, events.UserMessageChunk(content=block))
            turn.sent = True
            self.recovery.watch(session, turn)
            stop = await conn.prompt(session.session_id, blocks)
        except AgentUnavailable as exc:
            return events.TurnEnded(error=f"{exc.message}. {exc.fix}")
        except AgentError as exc:
            if turn.cancelled:
                return events.TurnEnded(stop_reason="cancelled")
            return events.TurnEnded(error=str(exc))
        # goose may answer end_turn for a cancelled turn: trust what we sent, not that.
        return events.TurnEnded(stop_reason="cancelled" if turn.cancelled else stop)

    async def cancel(self, session_id: str, message_id: str | None = None) -> bool:
        """Cancel the running turn, or the waiting one with ``message_id``.

        Returns False when there was no such turn.
        """
        session = self.get(session_id)
        if message_id is not None and (
            session.active is None or session.active.message_id != message_id
        ):
            waiting = next((t for t in session.waiting if t.message_id == message_id), None)
            if waiting is None or waiting.task is None:
                return False
            waiting.cancelled = True
            waiting.task.cancel()
            return True
        turn = session.active
        if turn is None or turn.cancelled:
            return False
        turn.cancelled = True
        self._cancel_permissions(session)
        if not turn.sent:
            if turn.task is not None:
                turn.task.cancel()
            return True
        conn = self.supervisor.current
        if conn is not None and conn.alive:
            try:
                await conn.cancel(session_id)
            except AgentError as exc:
                log.warning("session/cancel for %s failed: %s", session_id, exc)
        if grace := self.settings.agent.cancel_timeout:
            asyncio.get_running_loop().call_later(grace, self._let_go, session, turn, grace)
        return True

    def _let_go(self, session: Session, turn: Turn, grace: float) -> None:
        """The agent did not end a cancelled turn in time: end it here, as cancelled."""
        if session.active is not turn or turn.task is None or turn.task.done():
            return
        log.warning("the agent did not confirm the cancel of %s in %g s", turn.message_id, grace)
        self.note(
            session,
            "warning",
            f"The agent did not stop within {grace:g} s of the cancel; the turn is ended "
            "here. If the agent stays stuck, restart it (goose.restart).",
        )
        turn.task.cancel()

    def is_pending(self, request_id: str) -> bool:
        pending = self._permissions.get(request_id)
        return pending is not None and not pending.answer.done()

    def pending_requests(self, session_id: str | None = None) -> list[str]:
        """Ids of the permission requests still waiting, oldest first."""
        return [
            request_id
            for request_id, pending in self._permissions.items()
            if not pending.answer.done() and session_id in (None, pending.session_id)
        ]

    def offered(self, request_id: str) -> list[events.PermissionOption]:
        """The choices of a waiting permission request (the agent's, plus goose-ls's own)."""
        pending = self._permissions.get(request_id)
        return list(pending.options) if pending else []

    def option_for_kind(self, request_id: str, kind: str) -> str | None:
        """The optionId of the offered option of ``kind`` (``allow_once``...), if any."""
        pending = self._permissions.get(request_id)
        for option in pending.options if pending else []:
            if kind in (option.kind, option.option_id):
                return option.option_id
        return None

    def answer_permission(self, request_id: str, option_id: str | None) -> None:
        """Answer a pending permission request; ``None`` means the turn is cancelled."""
        pending = self._permissions.get(request_id)
        if pending is None or pending.answer.done():
            raise KeyError(request_id)
        if option_id is not None and option_id not in {o.option_id for o in pending.options}:
            offered = ", ".join(o.option_id for o in pending.options)
            raise ValueError(f"{option_id!r} was not offered (offered: {offered})")
        pending.answer.set_result(option_id)

    def _cancel_permissions(self, session: Session) -> None:
        for pending in self._permissions.values():
            if pending.session_id == session.session_id and not pending.answer.done():
                pending.answer.set_result(None)

    async def _drop_turns(self, session: Session) -> None:
        if session.active is not None:
            await self.cancel(session.session_id)
        tasks = [t.task for t in (session.active, *session.waiting) if t and t.task]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def restart(self) -> None:
        """Restart the agent now and load the open sessions into it."""
        self.recovery.stop()
        await self.supervisor.restart()
        await self.reload_open_sessions()

    async def reload_open_sessions(self) -> None:
        for session in list(self.sessions.values()):
            try:
                await self._attach(session)
            except AgentError as exc:
                self._record(session, events.Note("error", f"Could not reload this chat: {exc}"))

    async def shutdown(self) -> None:
        """Cancel every turn and stop the agent."""
        self.recovery.stop()
        for session in list(self.sessions.values()):
            await self._drop_turns(session)
        self.tools.terminals.release_all()
        self.library.flush()
        await self.supervisor.stop()
