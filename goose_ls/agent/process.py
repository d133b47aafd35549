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
from typing import Any

log = logging.getLogger(__name__)

KILL_WAIT = 2.0
"""Seconds to wait for the group to go after SIGKILL."""


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
        await asyncio.wait_for(process.wait(), grace)
    except asyncio.TimeoutError:
        log.warning("agent pid %s ignored SIGTERM; killing it", process.pid)
    signal_group(process.pid, signal.SIGKILL)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(process.wait(), KILL_WAIT)


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


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"exited with code {code}"
