"""The session layer's hold on the agent: a connection that knows a session, signed in.

A session belongs to the agent process (its *generation*) that created or loaded it; a
restarted agent knows nothing of it until it is taken back with ``session/resume`` (or
``session/load``, where the agent cannot resume), in the mode it was in.
When the agent answers that it wants a sign-in, a method that can succeed on its own
(an environment variable that is set) is tried before the request is repeated; else the
user is told how, and a plugin is given the agent's terminal sign-ins to run.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from goose_ls import events
from goose_ls.agent.auth import (
    AUTH_REQUIRED,
    TerminalCommand,
    instructions,
    methods_of,
    ready,
    terminal_command,
    terminal_sign_ins,
)
from goose_ls.agent.supervisor import AgentSupervisor
from goose_ls.errors import AgentError, Refused
from goose_ls.sessions.modes import Modes
from goose_ls.sessions.registry import Registry
from goose_ls.sessions.session import Session
from goose_ls.sessions.system_prompt import SystemPrompts
from goose_ls.settings import AgentSettings

if TYPE_CHECKING:
    from goose_ls.agent.acp.connection import AgentConnection

log = logging.getLogger(__name__)
T = TypeVar("T")


class AgentLink:
    def __init__(
        self,
        supervisor: AgentSupervisor,
        registry: Registry,
        settings: Callable[[], AgentSettings],
        modes: Modes,
        prompts: SystemPrompts,
    ) -> None:
        self._supervisor = supervisor
        self._registry = registry
        self._settings = settings
        self._modes = modes
        self.prompts = prompts
        """Each chat's system prompt, sent with every request that sets it up."""

    async def connection(self) -> AgentConnection:
        """The running agent, started if need be."""
        return await self._supervisor.connection()

    @property
    def running(self) -> AgentConnection | None:
        """The agent's connection if it runs now (never starts it)."""
        return self._supervisor.current

    def give_up(self, message: str) -> None:
        """Stop restarting the agent: it is in error with ``message`` until the user
        restarts it."""
        self._supervisor.give_up(message)

    @property
    def agent_settings(self) -> AgentSettings:
        """The settings the agent runs with (its restart limits among them)."""
        return self._supervisor.settings

    def sandbox(self) -> str | None:
        """What the running agent's process may reach; None for a server goose-ls did
        not start."""
        return self._supervisor.status.sandbox

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
        return instructions(methods_of(conn.profile.describe()), self._supervisor.command)

    async def authenticate(self, conn: AgentConnection | None = None) -> bool:
        """Sign in with a method that can succeed on its own (``goose.authenticate``)."""
        conn = conn or await self._supervisor.connection()
        environ = {**os.environ, **self._settings().env}
        for method in methods_of(conn.profile.describe()):
            if not ready(method, environ):
                continue
            try:
                await conn.authenticate(str(method["id"]))
            except AgentError as exc:
                log.info("authenticate %s failed: %s", method["id"], exc)
                continue
            self._supervisor.signed_in()
            return True
        help_text = self._needs_sign_in(conn)
        self._registry.note_all("warning", f"The agent needs you to sign in: {help_text}.")
        return False

    def _needs_sign_in(self, conn: AgentConnection) -> str:
        """Say the agent waits for a sign-in, with the terminal ones a plugin can run."""
        methods = methods_of(conn.profile.describe())
        help_text = instructions(methods, self._supervisor.command)
        runnable = terminal_sign_ins(methods) if self._supervisor.command else ()
        self._supervisor.needs_sign_in(help_text, runnable)
        return help_text

    async def terminal_method(self, method_id: str) -> dict[str, Any]:
        """The agent's terminal sign-in ``method_id``; refused when it has none such."""
        conn = await self._supervisor.connection()
        for method in methods_of(conn.profile.describe()):
            if method["id"] == method_id and method.get("type") == "terminal":
                return method
        raise Refused(f"methodId: {method_id!r} is not a terminal sign-in the agent offers")

    async def terminal_command(self, method_id: str) -> TerminalCommand:
        """What the terminal sign-in ``method_id`` runs, asked for when the user signs in:
        its values (``agent.env``, the agent's arguments) stay out of the status."""
        method = await self.terminal_method(method_id)
        if not self._supervisor.command:
            raise Refused(
                f"the agent runs at {self._settings().url}: sign in there, then goose.restart"
            )
        return terminal_command(method, self._supervisor.command, self._settings().env)

    async def logout(self) -> None:
        """Sign out (ACP ``logout``); the agent then waits for a sign-in, as after a
        failed one."""
        conn = await self._supervisor.connection()
        if not conn.profile.logout:
            raise AgentError(
                f"{conn.profile.name} does not support signing out"
                " (it does not advertise agentCapabilities.auth.logout)",
                fix="Sign out as the agent's own documentation says.",
            )
        await conn.logout()
        self._needs_sign_in(conn)

    async def attach(self, session: Session) -> AgentConnection:
        """The agent connection for ``session``, taking it back into a restarted agent:
        resumed where the agent can, else loaded with its replay dropped (the session
        holds those events already)."""
        async with session.attach_lock:
            conn = await self._supervisor.connection()
            if session.generation == conn.generation:
                return conn
            # The old agent's subagents went with it: the new one announces its own.
            self._registry.subagents.forget(session.session_id)
            prepared = await self.prompts.prepare(conn, session.cwd)
            if conn.profile.session_capability("resume"):
                options = await conn.resume_session(
                    session.session_id, session.cwd, prepared.prompt
                )
            elif conn.profile.load_session:
                session.replaying = True
                try:
                    options = await conn.load_session(
                        session.session_id, session.cwd, prepared.prompt
                    )
                finally:
                    session.replaying = False
                    self._registry.drop_early(session.session_id)
            else:
                raise AgentError(
                    "the agent restarted and cannot reload this chat"
                    " (it has neither session/resume nor session/load)",
                    fix="Start a new chat.",
                )
            session.generation = conn.generation
            self._registry.record(
                session, events.Note("info", "The agent was restarted; this chat was reloaded.")
            )
            self.prompts.tell(session, prepared)
            await self._modes.taken_back(session, conn, options)
            return conn

    async def reload_open_sessions(self) -> None:
        for session in self._registry:
            try:
                await self.attach(session)
            except AgentError as exc:
                self._registry.note(session, "error", f"Could not reload this chat: {exc}")
