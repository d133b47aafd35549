"""The agent as a child process: found, checked, spawned in a process group of its own,
spoken to over its pipes, its stderr drained into the log.

The agent is dead when its process exits (seen through a pidfd, even while a child of it
holds the pipes) or when its output can no longer be read: an agent that closes its
stdout but lives on is killed. Stopping closes its stdin, sends SIGTERM to its whole
process group, waits, then SIGKILLs the group.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from goose_ls.agent.discovery import Launch, resolve
from goose_ls.agent.presets import reach_of
from goose_ls.agent.transport.frames import READER_GRACE
from goose_ls.agent.transport.process_group import (
    end_of,
    kill_group_now,
    new_process_group,
    signal_group,
    terminate_group,
)
from goose_ls.agent.transport.stdio import READ_AHEAD, LineFrames
from goose_ls.errors import AgentError, AgentUnavailable
from goose_ls.settings import AgentSettings, agent_environment, redact
from goose_ls.tasks import Tasks
from goose_ls.workspace import agent_sandbox, sandbox
from goose_ls.workspace.agent_sandbox import Bounds

log = logging.getLogger(__name__)
agent_log = logging.getLogger("goose_ls.agent.stderr")

STDERR_TAIL = 20


class ProcessEndpoint:
    """``agent.command`` (or the preset's): a child process speaking ACP on stdio."""

    lost = "crashed"
    fix = "Run `goose-ls doctor` to check the agent; the next request restarts it."

    def __init__(
        self,
        settings: AgentSettings,
        environ: Mapping[str, str],
        cwd: str,
        tasks: Tasks,
        bounds: Callable[[], Awaitable[Bounds]],
    ) -> None:
        self._settings = settings
        self._environ = environ
        self._cwd = cwd
        self._tasks = tasks
        self._bounds = bounds
        self._launch: Launch | None = None
        self._sandbox: str | None = None
        self.command: list[str] = []

    def facts(self) -> dict[str, Any]:
        launch = self._launch
        if launch is None:
            return {}
        return {"binary": launch.binary, "version": launch.version, "sandbox": self._sandbox}

    async def stop_server(self, grace: float) -> bool:
        return False  # each open starts the agent anew

    async def open(self) -> ProcessChannel:
        steps = _Steps("finding the agent")
        try:
            launch = self._launch = await resolve(self._settings, self._environ)
            self.command = launch.argv
            env = agent_environment(self._environ, self._settings)
            argv, self._sandbox = await sandboxed(
                self._settings, launch, env, self._cwd, self._bounds, steps
            )
            steps.now("starting its process")
        finally:
            steps.done()
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=self._cwd,
                limit=READ_AHEAD,
                **new_process_group(),
            )
        except OSError as exc:
            raise AgentError(f"could not run {launch.binary}: {exc.strerror or exc}") from exc
        log.info("started agent pid %s: %s", process.pid, redact(" ".join(launch.argv)))
        log.info("agent sandbox: %s", self._sandbox)
        channel = ProcessChannel(process, launch, self._sandbox)
        assert process.stderr is not None
        self._tasks.run(channel.drain_stderr(process.stderr), f"agent {process.pid} stderr")
        return channel


async def sandboxed(
    settings: AgentSettings,
    launch: Launch,
    env: Mapping[str, str],
    cwd: str,
    surveyed: Callable[[], Awaitable[Bounds]],
    steps: _Steps | None = None,
) -> tuple[list[str], str]:
    """The agent's command line in its sandbox (``agent.sandbox``), and what that means;
    the workspace is surveyed only for a sandbox."""
    if steps is None:  # a start of its own
        steps = _Steps("choosing the sandbox")
        try:
            return await sandboxed(settings, launch, env, cwd, surveyed, steps)
        finally:
            steps.done()
    steps.now("choosing the sandbox")
    jail = await asyncio.to_thread(sandbox.choose, settings.sandbox)
    if jail.mode == "off":
        return launch.argv, agent_sandbox.describe(jail)
    steps.now("surveying the workspace for the sandbox")
    bounds = await surveyed()
    steps.now("finding what the agent reaches")
    reach = await asyncio.to_thread(reach_of, settings, launch.binary, env)
    steps.now("writing the sandbox's command line")
    try:
        return await asyncio.to_thread(agent_sandbox.confine, jail, launch.argv, cwd, bounds, reach)
    except agent_sandbox.Unsafe as exc:
        raise AgentUnavailable(
            "unusable", str(exc), "Set dataDir to a folder outside the workspace."
        ) from None


SLOW_START = 10.0
"""Seconds after which a step of the agent's start is logged as slow (and again each
time as long again): a start that never ends then names the step it is stuck in."""


class _Steps:
    """The step an agent's start is in, logged when it takes long."""

    def __init__(self, first: str) -> None:
        self._step = first
        self._since = asyncio.get_running_loop().time()
        self._timer = asyncio.get_running_loop().call_later(SLOW_START, self._slow)

    def now(self, step: str) -> None:
        log.debug("agent start: %s", step)
        self._step, self._since = step, asyncio.get_running_loop().time()

    def _slow(self) -> None:
        loop = asyncio.get_running_loop()
        log.warning(
            "the agent's start is slow: %s for %.0f s", self._step, loop.time() - self._since
        )
        self._timer = loop.call_later(SLOW_START, self._slow)

    def done(self) -> None:
        self._timer.cancel()


class ProcessChannel:
    """A running agent process: its pipes, its stderr's last lines, its end."""

    def __init__(
        self, process: asyncio.subprocess.Process, launch: Launch, sandbox: str | None = None
    ) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        self._launch = launch
        self._sandbox = sandbox
        self._frames = LineFrames(process.stdout, process.stdin)
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL)

    @property
    def frames(self) -> LineFrames:
        return self._frames

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process.returncode is None else None

    def facts(self) -> dict[str, Any]:
        launch = self._launch
        return {
            "binary": launch.binary,
            "version": launch.version,
            "pid": self.pid,
            "sandbox": self._sandbox,
        }

    async def drain_stderr(self, stream: asyncio.StreamReader) -> None:
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

    async def ended(
        self, output_ended: asyncio.Future[str], stopping: Callable[[], bool]
    ) -> tuple[str, bool]:
        process = self._process
        reason, killed = await end_of(process, output_ended, stopping, READER_GRACE)
        if not stopping():
            log.error("agent pid %s %s", process.pid, reason)
        # A dead leader may leave its children behind; they belong to its process group.
        signal_group(process.pid, signal.SIGKILL)
        return reason, killed

    def hint(self) -> str:
        return f" (last output: {self.stderr_tail[-1]})" if self.stderr_tail else ""

    async def close(self, grace: float) -> None:
        if self._process.returncode is None:
            await terminate_group(self._process, grace)

    def close_now(self, grace: float) -> None:
        kill_group_now(self._process.pid, grace)
