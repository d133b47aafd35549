"""What goose-ls costs at the rate a model really writes: CPU and wakeups per chunk.

A model streams 50 to 100 chunks a second, so throughput says little about what a user
pays; the CPU goose-ls burns while the reply streams does. Each case streams paced chunks
through goose-ls and through the minimal relay (``bench/minimal_relay.py``, the floor of
one Python hop), one after the other, and reads each server's CPU time and voluntary
context switches (each one a sleep and a wakeup) from ``/proc`` around the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import attrs
from arrivals import Arrivals
from cases import MINIMAL_RELAY, Figure, agent_command, fresh, ratio_at_most
from goose_ls_side import GooseLsSide

from goose_ls.tasks import within

SECONDS = 4.0
"""How long each paced turn streams."""

CHUNK = 40
"""Bytes of text in a chunk: a few tokens, as models send them."""


@attrs.frozen
class Cost:
    cpu_s: float
    wall_s: float
    wakeups: int
    chunks: int

    @property
    def cpu_percent(self) -> float:
        return 100 * self.cpu_s / self.wall_s

    @property
    def cpu_us_per_chunk(self) -> float:
        return 1e6 * self.cpu_s / self.chunks

    @property
    def wakeups_per_chunk(self) -> float:
        return self.wakeups / self.chunks


def _threads(pid: int, name: str) -> list[str]:
    """The file ``name`` of every thread of ``pid`` (those that end meanwhile left out)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found.append((task / name).read_text())
    return found


def wakeups(pid: int) -> int:
    """Voluntary context switches of every thread of ``pid`` so far."""
    return sum(
        int(line.split()[1])
        for status in _threads(pid, "status")
        for line in status.splitlines()
        if line.startswith("voluntary_ctxt_switches:")
    )


def cpu_ns(pid: int) -> int:
    """CPU time every thread of ``pid`` has run so far, in nanoseconds (``schedstat``: exact,
    where ``/proc/<pid>/stat`` samples 10 ms ticks, too coarse for a few % of a core)."""
    return sum(int(stat.split()[0]) for stat in _threads(pid, "schedstat"))


async def _paced_turns(
    tmp: Path, sessions: int, rate: float, server: tuple[str, ...] | None
) -> Cost:
    """``sessions`` sessions each streaming ``rate`` chunks a second for ``SECONDS``."""
    chunks = int(rate * SECONDS)
    command = agent_command(tmp, {"turns": [[{"stamped": chunks, "rate": rate, "size": CHUNK}]]})
    arrivals = Arrivals(sessions * chunks)
    extra = {} if server is None else {"server": server}
    side = GooseLsSide(command, fresh(tmp), arrivals, lazy=False, **extra)  # type: ignore[arg-type]
    await side.start()
    ids = [await side.new_session() for _ in range(sessions)]
    await asyncio.sleep(0.5)  # what starting a session sets in motion settles
    pid = side.editor.pid
    cpu, woken, started = cpu_ns(pid), wakeups(pid), asyncio.get_running_loop().time()
    await asyncio.gather(*(_staggered(side, i, n / (rate * sessions)) for n, i in enumerate(ids)))
    await within(60, arrivals.done.wait())
    cost = Cost(
        cpu_s=(cpu_ns(pid) - cpu) / 1e9,
        wall_s=asyncio.get_running_loop().time() - started,
        wakeups=wakeups(pid) - woken,
        chunks=sessions * chunks,
    )
    await side.stop()
    return cost


async def _staggered(side: GooseLsSide, session_id: str, delay: float) -> None:
    """Prompt after ``delay``: sessions' chunks then come at even phases of the pace, as
    independent replies do, not all in the same instant (which one read would carry)."""
    await asyncio.sleep(delay)
    await side.prompt(session_id)


async def paced(tmp: Path) -> list[Figure]:
    """One session at 50 and at 100 chunks a second."""
    figures = []
    for rate in (50, 100):
        ours = await _paced_turns(tmp, 1, rate, None)
        floor = await _paced_turns(tmp, 1, rate, MINIMAL_RELAY)
        name = f"paced {rate} chunks/s"
        target = ("<= 1.2x", ratio_at_most(1.2)) if rate == 100 else ("", None)
        figures += [
            Figure(name, "CPU %, vs minimal relay", "%", ours.cpu_percent, floor.cpu_percent),
            Figure(
                name,
                "CPU per chunk",
                "us",
                ours.cpu_us_per_chunk,
                floor.cpu_us_per_chunk,
                *target,
                ratio=True,
            ),
            Figure(name, "wakeups per chunk", "", ours.wakeups_per_chunk, floor.wakeups_per_chunk),
        ]
    return figures


async def many_sessions(tmp: Path) -> list[Figure]:
    """50 sessions streaming 50 chunks a second each (2,500 chunks a second in all)."""
    ours = await _paced_turns(tmp, 50, 50, None)
    floor = await _paced_turns(tmp, 50, 50, MINIMAL_RELAY)
    name = "50 sessions x 50 chunks/s"
    return [
        Figure(
            name,
            "CPU % of one core",
            "%",
            ours.cpu_percent,
            floor.cpu_percent,
            "<= 15 %",
            lambda value, _: value <= 15,
        ),
        Figure(
            name,
            "CPU per chunk",
            "us",
            ours.cpu_us_per_chunk,
            floor.cpu_us_per_chunk,
            "<= 1.1x",
            ratio_at_most(1.1),
            ratio=True,
        ),
        Figure(name, "wakeups per chunk", "", ours.wakeups_per_chunk, floor.wakeups_per_chunk),
    ]
