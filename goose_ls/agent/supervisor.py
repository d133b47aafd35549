"""Owns the agent: start, handshake, state, the end noticed, restart, shutdown.

States are ``stopped``, ``starting``, ``running`` and ``error``; every change is reported
through ``on_status`` so the editor can show it. An agent that ends (a crashed process, a
dropped connection) fails every waiting request at once (never a hang) and the next
request starts a fresh one. Where the agent runs is an
:class:`~goose_ls.agent.endpoint.Endpoint`: a process of its own (``agent.command``) or
a server (``agent.url``); this state machine is the same for both. After
:meth:`give_up` no agent is started until :meth:`restart`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from goose_ls.agent.acp.sdk import import_sdk
from goose_ls.agent.endpoint import Channel, Endpoint, endpoint_for
from goose_ls.agent.interface import AgentCallbacks, ClientTools
from goose_ls.agent.remote_paths import ForeignPaths, mapped
from goose_ls.agent.status import AgentState, AgentStatus, SignIn
from goose_ls.errors import AgentError, AgentUnavailable
from goose_ls.settings import AgentSettings
from goose_ls.tasks import Tasks

if TYPE_CHECKING:
    from goose_ls.agent.acp.connection import AgentConnection
    from goose_ls.agent.acp.message_transport import AgentTransport

log = logging.getLogger(__name__)


class AgentSupervisor:
    """Starts the agent on demand and keeps exactly one of it alive."""

    def __init__(
        self,
        settings: AgentSettings,
        callbacks: AgentCallbacks,
        tools: ClientTools,
        cwd: str,
        on_status: Callable[[AgentStatus], None],
        tasks: Tasks,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings
        self._tasks = tasks
        self._callbacks = callbacks
        self._tools = tools
        self._cwd = cwd
        self._on_status = on_status
        self._environ = dict(os.environ if environ is None else environ)
        self._status = AgentStatus(AgentState.STOPPED)
        self._generation = 0
        self._connection: AgentConnection | None = None
        self._endpoint: Endpoint | None = None
        self._channel: Channel | None = None
        self._starting: asyncio.Task[AgentConnection] | None = None
        self._stopping = False
        self._gave_up: AgentStatus | None = None
        self._foreign: ForeignPaths = {}
        """The tool calls' paths on the agent's side only (``agent.pathMap``), noted over
        every connection of this goose-ls."""

    @property
    def status(self) -> AgentStatus:
        return self._status

    @property
    def current(self) -> AgentConnection | None:
        """The running agent's connection, without starting one."""
        return self._connection if self._connection and self._connection.alive else None

    @property
    def command(self) -> list[str]:
        """The agent's command line, as last started (a terminal sign-in runs it again)."""
        return self._endpoint.command if self._endpoint is not None else []

    @property
    def pid(self) -> int | None:
        return self._channel.pid if self._channel is not None else None

    async def connection(self) -> AgentConnection:
        """The running agent, started (or restarted after its end) if need be."""
        if self._connection is not None and self._connection.alive:
            return self._connection
        if self._gave_up is not None:
            status = self._gave_up
            raise AgentUnavailable("gave_up", status.message or "", status.fix or "")
        if self._starting is None or self._starting.done():
            self._stopping = False
            self._starting = self._tasks.run(self._start(), "starting the agent")
        return await asyncio.shield(self._starting)

    def start_in_background(self) -> None:
        """Begin starting the agent without waiting (the ``eager`` start)."""
        self._tasks.run(self._start_quietly(), "starting the agent eagerly")

    async def _start_quietly(self) -> None:
        with contextlib.suppress(AgentError):
            await self.connection()

    async def _start(self) -> AgentConnection:
        self._set_status(AgentStatus(AgentState.STARTING, message="starting the agent"))
        endpoint = self._endpoint = self._endpoint_now()
        self._generation += 1
        generation = self._generation
        self._channel = None
        try:
            channel = self._channel = await endpoint.open()
            return await self._connect(endpoint, channel, generation)
        except AgentUnavailable as exc:
            await self._terminate()
            self._set_status(
                AgentStatus(
                    AgentState.ERROR,
                    message=exc.message,
                    fix=exc.fix,
                    reason=exc.reason,
                    **endpoint.facts(),
                )
            )
            raise
        except AgentError as exc:
            hint = self._channel.hint() if self._channel is not None else ""
            hint = "" if hint in str(exc) else hint  # said once, by the agent's end
            await self._terminate()
            self._set_status(
                AgentStatus(
                    AgentState.ERROR,
                    message=f"the agent failed to start: {exc}{hint}",
                    fix=endpoint.fix,
                    reason="failed",
                    **endpoint.facts(),
                )
            )
            raise

    def _endpoint_now(self) -> Endpoint:
        """Where the agent runs, as the settings say now."""
        return endpoint_for(
            self.settings,
            self._environ,
            self._cwd,
            self._tasks,
            self._callbacks.warning,
            self._tools.sandbox_bounds,
        )

    async def _connect(
        self, endpoint: Endpoint, channel: Channel, generation: int
    ) -> AgentConnection:
        """The ACP connection over a channel just opened: watched for its end, then
        the handshake."""
        gone: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        # The ACP conversation (the SDK and its pydantic models, ~0.4 s) is imported
        # here, when an agent first starts, in a thread: never before ``initialize`` is
        # answered, and beside the agent's own start.
        await asyncio.to_thread(import_sdk)
        from goose_ls.agent.acp.connection import connect, handshake
        from goose_ls.agent.acp.message_transport import AgentTransport
        from goose_ls.agent.acp.unstable_updates import amend

        paths = self.settings.path_map  # read once: the connection and its client agree
        callbacks, tools = mapped(self._callbacks, self._tools, paths, self._foreign)
        transport = AgentTransport(channel.frames, callbacks.session_event, amend)
        conn, client = connect(transport, callbacks, tools)
        self._tasks.run(
            self._wait_for_end(endpoint, channel, transport, generation, gone, conn),
            f"agent {generation} end",
        )
        connection = await handshake(
            conn,
            self.settings,
            generation,
            gone,
            transport.withdraw,
            tools.directories,
            paths,
            client,
        )
        profile = connection.profile
        self._connection = connection
        for warning in connection.mcp_warnings:
            self._callbacks.warning(warning)
        facts = channel.facts()
        shown = profile.version or facts.get("version") or ""
        facts["version"] = facts.get("version") or profile.version
        self._set_status(
            AgentStatus(
                AgentState.RUNNING,
                message=f"{profile.title} {shown}".strip(),
                agent=profile.describe(),
                name=profile.title,
                **facts,
            )
        )
        return connection

    async def _wait_for_end(
        self,
        endpoint: Endpoint,
        channel: Channel,
        transport: AgentTransport,
        generation: int,
        gone: asyncio.Future[str],
        conn: Any,
    ) -> None:
        reason, said = await channel.ended(transport.ended, lambda: self._stopping)
        if not gone.done():
            gone.set_result(f"the agent {reason}{channel.hint()}")
        await conn.close()
        if generation != self._generation:
            return
        if self._stopping:
            self._set_status(AgentStatus(AgentState.STOPPED, message=f"the agent {reason}"))
            return
        self._set_status(
            AgentStatus(
                AgentState.ERROR,
                message=f"the agent {reason}{'' if said else ' unexpectedly'}{channel.hint()}",
                fix=endpoint.fix,
                reason=endpoint.lost,
                **endpoint.facts(),
            )
        )

    def _set_status(self, status: AgentStatus) -> None:
        self._status = status
        log.info("agent %s: %s", status.state.value, status.message or "")
        try:
            self._on_status(status)
        except Exception:
            log.exception("agent status listener failed")

    def needs_sign_in(self, message: str, sign_in: tuple[SignIn, ...] = ()) -> None:
        """The agent is running but wants the user to sign in first (``sign_in``: the
        terminal sign-ins a plugin can run)."""
        self._set_status(
            attrs.evolve(
                self._status,
                state=AgentState.ERROR,
                message=f"the agent needs you to sign in: {message}",
                fix="Sign in as described, then run goose.authenticate.",
                reason="auth_required",
                sign_in=sign_in or None,
            )
        )

    def signed_in(self) -> None:
        if self._status.reason == "auth_required" and self.current is not None:
            self._set_status(
                attrs.evolve(
                    self._status,
                    state=AgentState.RUNNING,
                    message="signed in",
                    fix=None,
                    reason=None,
                    sign_in=None,
                )
            )

    def give_up(self, message: str) -> None:
        """Report that restarting failed for good: no agent starts until :meth:`restart`."""
        self._gave_up = AgentStatus(
            AgentState.ERROR,
            message=message,
            fix="Run `goose-ls doctor`, fix what it reports, then run goose.restart.",
            reason="gave_up",
        )
        self._set_status(self._gave_up)

    async def stop(self) -> None:
        """Stop the agent gracefully; returns when its process group is gone."""
        self._stopping = True
        starting = self._starting
        if starting is not None and not starting.done():
            starting.cancel()
            # Over before anything starts again: a restart would otherwise await it.
            await asyncio.wait([starting])
        await self._terminate()
        self._connection = None
        if self._status.state in (AgentState.STARTING, AgentState.RUNNING):
            self._set_status(AgentStatus(AgentState.STOPPED, message="stopped"))

    async def restart(self, server: bool = False) -> AgentConnection:
        """Stop the agent and start it again; with ``server``, the shared goose serve too
        (``agent.share``: every window then reconnects to a new one)."""
        self._gave_up = None
        await self.stop()
        if server:  # the server the settings name now, whether or not one was reached
            await self._endpoint_now().stop_server(self.settings.shutdown_timeout)
        return await self.connection()

    async def _terminate(self) -> None:
        channel = self._channel
        if channel is None:
            return
        self._stopping = True
        await channel.close(self.settings.shutdown_timeout)

    def kill_now(self) -> None:
        """Synchronous last-resort stop, for when the event loop is already gone."""
        if self._channel is not None:
            self._channel.close_now(self.settings.shutdown_timeout)
