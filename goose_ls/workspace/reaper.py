"""No process the agent starts outlives what started it, even one that left its group.

A process group is not enough: a command that calls ``setsid`` or double-forks leaves
it. On Linux goose-ls makes itself a child subreaper (``PR_SET_CHILD_SUBREAPER``), so
such a process is re-parented to goose-ls instead of init, and stays findable as one of
goose-ls's descendants; killing a tree then walks ``/proc`` by parent pid. Elsewhere
only the process group is signalled. The one tree goose-ls leaves running is one it
:func:`spare`-s: a shared goose serve, which other goose-ls windows use.
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
from collections.abc import Callable
from pathlib import Path

from goose_ls.process_identity import process_named

log = logging.getLogger(__name__)

PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
PROC = Path("/proc")
MARKER = "GOOSE_LS_TERMINAL"
"""Set in each terminal's environment, so its escaped descendants can be told apart."""

_spared: dict[int, str] = {}
"""Processes that goose-ls's exit leaves running, with everything below them (each named
as no later process with its pid is)."""


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


def dying_with_parent() -> Callable[[], None] | None:
    """What a child runs before its program (``preexec_fn``) to get SIGTERM when the
    process that started it dies (Linux; None elsewhere)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)


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


def descendants(pid: int, spared: frozenset[int] = frozenset()) -> list[int]:
    """The pids below ``pid``, parents before their children (none of ``spared`` nor
    below them)."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    todo = [p for p in children.get(pid, []) if p not in spared]
    while todo:
        current = todo.pop(0)
        found.append(current)
        todo.extend(p for p in children.get(current, []) if p not in spared)
    return found


def spare(pid: int) -> None:
    """Leave ``pid`` and what it starts running when goose-ls exits."""
    _spared[pid] = process_named(pid)


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


def kill_all_descendants() -> None:
    """goose-ls is exiting: SIGKILL every process below it (but the spared ones)."""
    for _ in range(10):
        spared = frozenset(p for p, name in _spared.items() if process_named(p) == name)
        victims = [p for p in descendants(os.getpid(), spared) if _exists(p)]
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
