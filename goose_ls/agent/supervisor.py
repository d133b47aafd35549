"""Owns the agent process: start, handshake, state, crash detection, restart, shutdown.

States are ``stopped``, ``starting``, ``running`` and ``error``; every change is reported
through ``on_status`` so the editor can show it. A crash fails every waiting request at
once (never a hang) and the next request starts a fresh agent. Stopping closes the
agent's stdin, sends SIGTERM to its whole process group, waits, then SIGKILLs the group.

The agent is dead when its process exits (seen through a pidfd, even while a child of it
holds the pipes) or when its output can no longer be read: an agent that closes its
stdout but lives on is killed and reported as crashed. After :meth:`give_up` no agent is
started until :meth:`restart`.

Over 300 lines on purpose: it is one state machine, and every transition of it is in
this file (the process, its status and the connection are modules of their own).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from goose_ls.agent.discovery import Launch, resolve
from goose_ls.agent.interface import AgentCallbacks, ClientTools
from goose_ls.agent.process import (
    end_of,
    kill_group_now,
    new_process_group,
    signal_group,
    terminate_group,
)
from goose_ls.agent.remote_paths import mapped
from goose_ls.agent.sdk import import_sdk
from goose_ls.agent.status import AgentState, AgentStatus, SignIn
from goose_ls.agent.transport import READ_AHEAD, READER_GRACE, AgentTransport
from goose_ls.agent.unstable_updates import offer_unstable
from goose_ls.errors import AgentError, AgentUnavailable
from goose_ls.settings import AgentSettings, redact
from goose_ls.tasks import Tasks

if TYPE_CHECKING:
    from goose_ls.agent.connection import AgentConnection

log = logging.getLogger(__name__)
agent_log = logging.getLogger("goose_ls.agent.stderr")

STDERR_TAIL = 20
_CRASH_FIX = "Run `goose-ls doctor` to check the agent; the next request restarts it."


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
        self._process: asyncio.subprocess.Process | None = None
        self.command: list[str] = []
        """The agent's command line, as last started (a terminal sign-in runs it again)."""
        self._starting: asyncio.Task[AgentConnection] | None = None
        self._stopping = False
        self._gave_up: AgentStatus | None = None
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL)

    @property
    def status(self) -> AgentStatus:
        return self._status

    @property
    def current(self) -> AgentConnection | None:
        """The running agent's connection, without starting one."""
        return self._connection if self._connection and self._connection.alive else None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process and self._process.returncode is None else None

    async def connection(self) -> AgentConnection:
        """The running agent, started (or restarted after a crash) if need be."""
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
        try:
            launch = await resolve(self.settings, self._environ)
        except AgentUnavailable as exc:
            self._set_status(
                AgentStatus(AgentState.ERROR, message=exc.message, fix=exc.fix, reason=exc.reason)
            )
            raise
        try:
            return await self._spawn(launch)
        except AgentError as exc:
            await self._terminate()
            self._set_status(
                AgentStatus(
                    AgentState.ERROR,
                    message=f"the agent failed to start: {exc}{self._stderr_hint()}",
                    fix=_CRASH_FIX,
                    reason="failed",
                    binary=launch.binary,
                    version=launch.version,
                )
            )
            raise

    async def _spawn(self, launch: Launch) -> AgentConnection:
        self.command = launch.argv
        self._generation += 1
        generation = self._generation
        self.stderr_tail.clear()
        try:
            process = await asyncio.create_subprocess_exec(
                *launch.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={**self._environ, **self.settings.env},
                cwd=self._cwd,
                limit=READ_AHEAD,
                **new_process_group(),
            )
        except OSError as exc:
            raise AgentError(f"could not run {launch.binary}: {exc.strerror or exc}") from exc
        self._process = process
        log.info("started agent pid %s: %s", process.pid, redact(" ".join(launch.argv)))
        assert process.stdin and process.stdout and process.stderr
        gone: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        await asyncio.to_thread(import_sdk)  # so initialize never waits for it
        from goose_ls.agent.connection import connect, handshake

        paths = self.settings.path_map  # read once: the connection and its client agree
        callbacks, tools = mapped(self._callbacks, self._tools, paths)
        transport = AgentTransport(
            process.stdout, process.stdin, callbacks.session_event, offer_unstable
        )
        conn = connect(transport, callbacks, tools)
        self._tasks.run(self._drain_stderr(process.stderr), f"agent {process.pid} stderr")
        self._tasks.run(
            self._wait_for_exit(process, transport, generation, gone, conn),
            f"agent {process.pid} exit",
        )
        connection = await handshake(
            conn, self.settings, generation, gone, transport.withdraw, tools.directories, paths
        )
        profile = connection.profile
        self._connection = connection
        for warning in connection.mcp_warnings:
            self._callbacks.warning(warning)
        self._set_status(
            AgentStatus(
                AgentState.RUNNING,
                message=f"{profile.name} {profile.version or launch.version or ''}".strip(),
                binary=launch.binary,
                version=launch.version or profile.version,
                pid=process.pid,
                agent=profile.describe(),
            )
        )
        return connection

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        while True:
            try:
                line = await stream.readline()
            except (ValueError, asyncio.LimitOverrunError):
                continue  # an absurdly long stderr line: skip it, keep draining
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip()
            if text:
                self.stderr_tail.append(text[:500])
                agent_log.info("%s", text[:2000])

    async def _wait_for_exit(
        self,
        process: asyncio.subprocess.Process,
        transport: AgentTransport,
        generation: int,
        gone: asyncio.Future[str],
        conn: Any,
    ) -> None:
        reason, killed = await end_of(
            process, transport.ended, lambda: self._stopping, READER_GRACE
        )
        if not gone.done():
            gone.set_result(f"the agent {reason}{self._stderr_hint()}")
        await conn.close()
        if generation != self._generation:
            return
        if self._stopping:
            self._set_status(AgentStatus(AgentState.STOPPED, message=f"the agent {reason}"))
            return
        log.error("agent pid %s %s", process.pid, reason)
        self._set_status(
            AgentStatus(
                AgentState.ERROR,
                message=f"the agent {reason}{'' if killed else ' unexpectedly'}"
                f"{self._stderr_hint()}",
                fix=_CRASH_FIX,
                reason="crashed",
            )
        )
        # A dead leader may leave its children behind; they belong to its process group.
        signal_group(process.pid, signal.SIGKILL)

    def _stderr_hint(self) -> str:
        return f" (last output: {self.stderr_tail[-1]})" if self.stderr_tail else ""

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
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
        await self._terminate()
        self._connection = None
        if self._status.state in (AgentState.STARTING, AgentState.RUNNING):
            self._set_status(AgentStatus(AgentState.STOPPED, message="stopped"))

    async def restart(self) -> AgentConnection:
        self._gave_up = None
        await self.stop()
        return await self.connection()

    async def _terminate(self) -> None:
        process = self._process
        if process is None or process.returncode is not None:
            return
        self._stopping = True
        await terminate_group(process, self.settings.shutdown_timeout)

    def kill_now(self) -> None:
        """Synchronous last-resort stop, for when the event loop is already gone."""
        if self._process is not None:
            kill_group_now(self._process.pid, self.settings.shutdown_timeout)
