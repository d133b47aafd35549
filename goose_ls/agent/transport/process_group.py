"""The agent as an operating-system process: its own process group, signalled whole.

The agent runs as the leader of a new process group, so its children (MCP servers,
shells) can be stopped with it: SIGTERM to the group, a grace period, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from goose_ls.tasks import within

log = logging.getLogger(__name__)

KILL_WAIT = 2.0
"""Seconds to wait for the group to go after SIGKILL."""

EXIT_POLL = 0.25
"""Seconds between looks at the exit status where no pidfd tells of the exit."""


def new_process_group() -> dict[str, Any]:
    """``create_subprocess_exec`` arguments that start the child in a group of its own."""
    if sys.platform == "win32":
        import subprocess

        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def signal_group(pid: int, sig: signal.Signals) -> None:
    """Signal the whole process group whose leader is ``pid``."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if sys.platform == "win32":
            os.kill(pid, signal.SIGTERM)
        else:
            os.killpg(pid, sig)


async def terminate_group(process: asyncio.subprocess.Process, grace: float) -> None:
    """Close its stdin, SIGTERM the group, wait up to ``grace`` seconds, SIGKILL the group."""
    if process.stdin is not None:
        process.stdin.close()
    signal_group(process.pid, signal.SIGTERM)
    try:
        await within(grace, process.wait())
    except asyncio.TimeoutError:
        log.warning("agent pid %s ignored SIGTERM; killing it", process.pid)
    signal_group(process.pid, signal.SIGKILL)
    with contextlib.suppress(asyncio.TimeoutError):
        await within(KILL_WAIT, process.wait())


def kill_group_now(pid: int, grace: float) -> None:
    """The same without an event loop (goose-ls is exiting): SIGTERM, poll, SIGKILL."""
    if not alive(pid):
        signal_group(pid, signal.SIGKILL)
        return
    signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and alive(pid):
        time.sleep(0.05)
    signal_group(pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    """Whether our child ``pid`` still runs (reaping it if it has ended)."""
    try:
        finished, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        finished = pid
    except OSError:
        return False
    return finished != pid


async def exited(process: asyncio.subprocess.Process) -> int:
    """The exit code, as soon as the process itself ends.

    asyncio's ``wait()`` also waits for the pipes to close, which never happens while a
    child of the agent (an MCP server, a shell) still holds them. A pidfd becomes
    readable when the process ends, whoever reaps it; elsewhere the status is polled.
    """
    fd = None
    if process.returncode is None:
        with contextlib.suppress(AttributeError, OSError):
            fd = os.pidfd_open(process.pid)
    if fd is not None:
        try:
            await _readable(fd)
        finally:
            os.close(fd)
    # asyncio's child watcher reaps the process and sets returncode a moment later.
    delay = 0.01 if fd is not None else EXIT_POLL
    while True:
        if process.returncode is not None:
            return process.returncode
        await asyncio.sleep(delay)


async def _readable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


async def end_of(
    process: asyncio.subprocess.Process,
    output_ended: asyncio.Future[str],
    stopping: Callable[[], bool],
    grace: float,
) -> tuple[str, bool]:
    """Wait for the agent's end, whichever comes first: its exit, or its output's end.

    An agent whose output ended (``output_ended`` says how) but which is still running
    ``grace`` seconds later is killed, unless it is being stopped anyway. Returns what
    happened, and whether it had to be killed for that.
    """
    exit_code = asyncio.ensure_future(exited(process))
    either: set[asyncio.Future[Any]] = {exit_code, output_ended}
    try:
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not exit_code.done():
            # A dying process closes its pipes a moment before it exits.
            await asyncio.wait({exit_code}, timeout=grace)
        if exit_code.done() or stopping():
            return describe_exit(await exit_code), False
        broken = output_ended.result()
        log.error("agent pid %s %s but kept running; killing it", process.pid, broken)
        signal_group(process.pid, signal.SIGKILL)
        await exit_code
        return f"{broken} while still running, so goose-ls stopped it", True
    finally:
        exit_code.cancel()


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"exited with code {code}"
