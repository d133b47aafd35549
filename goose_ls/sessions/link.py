"""The session floor's hold on the agent: a connection that knows a session, signed in.

A session belongs to the agent process (its *generation*) that created or loaded it; a
restarted agent knows nothing of it until it is loaded again with ``session/load``.
When the agent answers that it wants a sign-in, a method that can succeed on its own
(an environment variable that is set) is tried before the request is repeated.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from goose_ls import events
from goose_ls.agent.auth import AUTH_REQUIRED, instructions, methods_of, ready
from goose_ls.agent.supervisor import AgentSupervisor
from goose_ls.errors import AgentError
from goose_ls.sessions.registry import Registry
from goose_ls.sessions.session import Session
from goose_ls.settings import AgentSettings

if TYPE_CHECKING:
    from goose_ls.agent.connection import AgentConnection

log = logging.getLogger(__name__)
T = TypeVar("T")


class AgentLink:
    def __init__(
        self,
        supervisor: AgentSupervisor,
        registry: Registry,
        settings: Callable[[], AgentSettings],
    ) -> None:
        self.supervisor = supervisor
        self._registry = registry
        self._settings = settings

    async def connection(self) -> AgentConnection:
        """The running agent, started if need be."""
        return await self.supervisor.connection()

    async def signed_in(self, conn: AgentConnection, action: Callable[[], Awaitable[T]]) -> T:
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
        return instructions(methods_of(conn.profile.describe()), self.supervisor.command)

    async def authenticate(self, conn: AgentConnection | None = None) -> bool:
        """Sign in with a method that can succeed on its own (``goose.authenticate``)."""
        conn = conn or await self.supervisor.connection()
        environ = {**os.environ, **self._settings().env}
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
        self._registry.note_all("warning", f"The agent needs you to sign in: {help_text}.")
        return False

    async def attach(self, session: Session) -> AgentConnection:
        """The agent connection for ``session``, reloading it into a restarted agent."""
        async with session.attach_lock:
            conn = await self.supervisor.connection()
            if session.generation == conn.generation:
                return conn
            if not conn.profile.load_session:
                raise AgentError(
                    "the agent restarted and cannot reload this chat (it has no session/load)",
                    fix="Start a new chat.",
                )
            session.replaying = True
            try:
                await conn.load_session(session.session_id, session.cwd)
            finally:
                session.replaying = False
                self._registry.drop_early(session.session_id)
            session.generation = conn.generation
            self._registry.record(
                session, events.Note("info", "The agent was restarted; this chat was reloaded.")
            )
            return conn

    async def reload_open_sessions(self) -> None:
        for session in self._registry:
            try:
                await self.attach(session)
            except AgentError as exc:
                self._registry.note(session, "error", f"Could not reload this chat: {exc}")
