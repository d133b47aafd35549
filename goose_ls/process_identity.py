"""Naming a process so that no other is ever taken for it, and telling if it still runs.

A pid alone is not enough: a window killed long ago may have its pid given to a newer
process. The name adds the host and when the pid started (from ``/proc``).
"""

from __future__ import annotations

import os
import socket


def this_process() -> str:
    """This process, as no other will ever be: host, pid and when the pid started."""
    return process_named(os.getpid())


def process_named(pid: int) -> str:
    """``pid`` as no other process will ever be (see :func:`this_process`)."""
    return f"{socket.gethostname()}:{pid}:{_started(pid)}"


def process_alive(process: str) -> bool:
    """Whether the process named by :func:`this_process` still runs. One on another host
    is taken to, as nothing here can tell."""
    host, _, rest = process.partition(":")
    pid_text, _, started = rest.partition(":")
    if host != socket.gethostname():
        return True
    try:
        pid = int(pid_text)
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        pass  # it runs, as another user
    # Not the same pid given to a newer process, and not a zombie: one killed (Helix
    # 25.07 kills its servers right after ``exit``) stays one until something reaps it.
    return _started(pid) == started and _stat(pid)[0] != "Z"


def _started(pid: int) -> str:
    """When ``pid`` started (clock ticks since boot, from /proc), or "" where unknown."""
    return "".join(_stat(pid)[19:20])


def _stat(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (state first), or [""]."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return [""]
