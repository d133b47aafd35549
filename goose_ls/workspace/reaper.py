"""No process the agent starts outlives what started it, even one that left its group.

A process group is not enough: a command that calls ``setsid`` or double-forks leaves
it. On Linux goose-ls makes itself a child subreaper (``PR_SET_CHILD_SUBREAPER``), so
such a process is re-parented to goose-ls instead of init, and stays findable as one of
goose-ls's descendants; killing a tree then walks ``/proc`` by parent pid. Elsewhere
only the process group is signalled.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import signal
import sys
import time
from pathlib import Path

log = logging.getLogger(__name__)

PR_SET_CHILD_SUBREAPER = 36
PROC = Path("/proc")
MARKER = "GOOSE_LS_TERMINAL"
"""Set in each terminal's environment, so its escaped descendants can be told apart."""


def become_subreaper() -> bool:
    """Adopt every orphaned descendant (Linux); returns whether it worked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    except (OSError, AttributeError) as exc:
        log.warning("cannot become a child subreaper (%s): escaped processes may survive", exc)
        return False
    return True


def _parents() -> dict[int, int]:
    """Every process's parent pid, read from ``/proc``."""
    parents: dict[int, int] = {}
    for entry in PROC.iterdir() if PROC.is_dir() else ():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            # The command name may hold spaces and parentheses: split after the last ')'.
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def descendants(pid: int) -> list[int]:
    """The pids below ``pid``, parents before their children."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        current = todo.pop(0)
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def marked(pid: int, marker: str) -> bool:
    """Whether ``pid`` carries ``GOOSE_LS_TERMINAL=marker`` in its environment."""
    try:
        environ = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    return f"{MARKER}={marker}".encode() in environ.split(b"\0")


def _signal(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def _reap(pids: list[int]) -> None:
    """Collect adopted orphans that have ended (they are our children now)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.waitpid(pid, os.WNOHANG)


def kill_tree(pid: int, marker: str | None = None) -> None:
    """SIGKILL ``pid``, its group and everything below it; with ``marker``, also the
    processes goose-ls adopted that carry that terminal's mark."""
    for _ in range(10):  # processes may fork while we look: freeze, kill, look again
        tree = [p for p in [pid, *descendants(pid)] if p != os.getpid()]
        adopted = [p for p in descendants(os.getpid()) if marker and marked(p, marker)]
        victims = [p for p in dict.fromkeys([*tree, *adopted]) if _exists(p)]
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        if not victims:
            return
        _signal(victims, signal.SIGSTOP)
        _signal(victims, signal.SIGKILL)
        _reap([p for p in adopted if p != pid])
        time.sleep(0.01)


def kill_all_descendants(spare: frozenset[int] = frozenset()) -> None:
    """goose-ls is exiting: SIGKILL every process below it (but ``spare``)."""
    for _ in range(10):
        victims = [p for p in descendants(os.getpid()) if p not in spare and _exists(p)]
        if not victims:
            return
        _signal(victims, signal.SIGSTOP)
        _signal(victims, signal.SIGKILL)
        time.sleep(0.01)
        _reap(victims)


def _exists(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
