"""The benchmark cases. Each runs goose-ls and the direct SDK client (the baseline) on
the same scripted agent, one after the other in this run, and returns its figures.

Over 300 lines: the cases side by side, so that each is measured as the others are."""

from __future__ import annotations

import asyncio
import itertools
import re
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
from arrivals import Arrivals, percentile
from direct import DirectClient
from editor import SERVER, BenchEditor
from goose_ls_side import GooseLsSide

from goose_ls.scripted import scripted_agent_command, write_script
from goose_ls.tasks import within

STAMP = re.compile(rb"\d{20}")


@attrs.define
class Figure:
    case: str
    name: str
    unit: str
    goose_ls: float
    baseline: float | None = None
    target: str = ""
    check: Callable[[float, float | None], bool] | None = attrs.field(default=None, repr=False)
    """Whether the target is met, given goose-ls's figure and the baseline's."""
    ratio: bool = attrs.field(default=False, kw_only=True)
    """Compare times as a ratio (the target is one), not as a difference."""

    @property
    def met(self) -> bool | None:
        return None if self.check is None else self.check(self.goose_ls, self.baseline)

    @property
    def compared(self) -> str:
        if self.baseline is None:
            return ""
        if self.unit in ("ms", "s") and not self.ratio:
            return f"{self.goose_ls - self.baseline:+.2f} {self.unit}"
        return f"{self.goose_ls / self.baseline:.2f}x" if self.baseline else ""


def below(limit: float) -> Callable[[float, float | None], bool]:
    return lambda ours, _: ours < limit


def overhead_below(limit: float) -> Callable[[float, float | None], bool]:
    return lambda ours, base: base is not None and ours - base < limit


def ratio_at_most(share: float) -> Callable[[float, float | None], bool]:
    return lambda ours, base: base is not None and ours <= share * base


def ratio_at_least(share: float) -> Callable[[float, float | None], bool]:
    return lambda ours, base: base is not None and ours >= share * base


_dirs = itertools.count(1)


def fresh(tmp: Path) -> Path:
    path = tmp / f"run{next(_dirs)}"
    path.mkdir()
    return path


def agent_command(tmp: Path, script: dict[str, Any]) -> list[str]:
    return scripted_agent_command(write_script(fresh(tmp) / "script.json", script))


async def _turn_on_both(
    tmp: Path, steps: list[dict[str, Any]], expected: int
) -> tuple[Arrivals, Arrivals]:
    """One session, one turn of ``steps``, on each side."""
    command = agent_command(tmp, {"turns": [steps]})
    found = []
    for side_class in (DirectClient, GooseLsSide):
        arrivals = Arrivals(expected)
        side = side_class(command, fresh(tmp), arrivals)
        await side.start()
        session = await side.new_session()
        await side.prompt(session)
        await within(60, arrivals.done.wait())
        await side.stop()
        found.append(arrivals)
    return found[0], found[1]


async def relay_latency(tmp: Path) -> list[Figure]:
    """Chunks spaced out (500 a second), so the figure is the relay, not a queue."""
    direct, goose = await _turn_on_both(tmp, [{"stamped": 2000, "rate": 500}], 2000)
    name = "relay latency"
    figures = []
    for share, target in ((0.50, 1.0), (0.99, 5.0)):
        ours, base = (
            percentile(goose.latencies_ms(), share),
            percentile(direct.latencies_ms(), share),
        )
        figures.append(
            Figure(
                name,
                f"p{int(share * 100)}",
                "ms",
                ours,
                base,
                f"overhead < {target:g} ms",
                overhead_below(target),
            )
        )
    return figures


MINIMAL_RELAY = (str(Path(__file__).with_name("minimal_relay.py")),)
"""The least a Python relay from ACP to LSP does (bench/minimal_relay.py): the floor."""


async def _through_relay(tmp: Path, steps: list[dict[str, Any]], expected: int) -> Arrivals:
    """One session, one turn of ``steps``, through the minimal relay."""
    arrivals = Arrivals(expected)
    side = GooseLsSide(
        agent_command(tmp, {"turns": [steps]}), fresh(tmp), arrivals, server=MINIMAL_RELAY
    )
    await side.start()
    await side.prompt(await side.new_session())
    await within(60, arrivals.done.wait())
    await side.stop()
    return arrivals


async def throughput(tmp: Path, chunks: int, size: int) -> list[Figure]:
    steps = [{"stamped": chunks, "size": size}]
    direct, goose = await _turn_on_both(tmp, steps, chunks)
    relay = await _through_relay(tmp, steps, chunks)
    name = f"throughput {chunks}x{size}B"
    ours, base = chunks / goose.span_s(), chunks / direct.span_s()
    floor = chunks / relay.span_s()
    share = 0.9  # the target against the relay: within a tenth of one Python hop
    return [
        Figure(name, "chunks/s", "/s", ours, base, ">= 0.5x", ratio_at_least(0.5)),
        Figure(
            name,
            "chunks/s, vs minimal relay",
            "/s",
            ours,
            floor,
            f">= {share}x",
            ratio_at_least(share),
        ),
        Figure(
            name,
            "latency p50 under load",
            "ms",
            percentile(goose.latencies_ms(), 0.5),
            percentile(direct.latencies_ms(), 0.5),
        ),
    ]


async def transcript_streaming(tmp: Path) -> list[Figure]:
    """5,000 chunks at 5,000 a second into a transcript open in the editor."""
    chunks = 5000
    command = agent_command(tmp, {"turns": [[{"stamped": chunks, "rate": 5000}]]})
    direct = Arrivals(chunks)
    base = DirectClient(command, fresh(tmp), direct)
    await base.start()
    await base.prompt(await base.new_session())
    await base.stop()

    arrivals = Arrivals(chunks)
    side = GooseLsSide(command, fresh(tmp), arrivals, apply_edits=True)
    await side.start()
    session = await side.new_session()
    await until(lambda: side.transcript(session).exists())
    side.open_transcript(session)
    await side.prompt(session)
    await asyncio.sleep(0.5)  # the last edit after the turn's end
    first_sent = arrivals.first_sent_ns()
    edits = [(at, text) for at, text in side.editor.edits if at >= first_sent]
    await side.stop()
    visible = [at for at, text in edits if STAMP.search(text.encode())]
    span_s = (edits[-1][0] - first_sent) / 1e9 if edits else float("nan")
    name = "transcript 5000 chunks/s"
    first_ms = (visible[0] - first_sent) / 1e6 if visible else float("nan")
    return [
        Figure(name, "edits per turn", "", len(edits)),
        Figure(
            name,
            "edits per second",
            "/s",
            len(edits) / span_s,
            None,
            "<= 20",
            below(20.001),
        ),
        Figure(
            name,
            "first text visible",
            "ms",
            first_ms,
            (direct.pairs[0][1] - direct.pairs[0][0]) / 1e6,
            "< 100 ms",
            below(100),
        ),
    ]


async def startup(tmp: Path) -> list[Figure]:
    """Process start to ``initialize``, and to the first token of a first turn."""
    command = agent_command(tmp, {"turns": [[{"stamped": 1}]]})
    results: dict[str, tuple[float, float]] = {}
    for name, make in (
        ("direct", lambda a: DirectClient(command, fresh(tmp), a)),
        ("goose-ls", lambda a: GooseLsSide(command, fresh(tmp), a, lazy=False)),
    ):
        arrivals = Arrivals(1)
        side = make(arrivals)
        started = time.monotonic_ns()
        initialize_s = await side.start()
        await side.prompt(await side.new_session())
        await within(60, arrivals.done.wait())
        results[name] = (initialize_s, (arrivals.pairs[0][1] - started) / 1e9)
        await side.stop()
    ours, base = results["goose-ls"], results["direct"]
    runs: dict[tuple[str, ...], list[float]] = {BARE_PYGLS: [], SERVER: []}
    served: list[float] = []
    for _ in range(STARTUP_ROUNDS):  # alternated, so both meet the same machine
        for server, times in runs.items():
            answered, ready = await _initialize_s(server, fresh(tmp), ready=server == SERVER)
            times.append(answered)
            if ready is not None:
                served.append(ready)
    floor, again = (statistics.median(runs[server]) * 1000 for server in (BARE_PYGLS, SERVER))
    return [
        Figure("startup", "to initialize answer", "s", ours[0], base[0], "< 0.6 s", below(0.6)),
        Figure(
            "startup",
            "initialize vs bare pygls",
            "ms",
            again,
            floor,
            "<= 1.05x",
            ratio_at_most(1.05),
            ratio=True,
        ),
        Figure("startup", "to a goose/* answer", "ms", statistics.median(served) * 1000),
        Figure("startup", "to first token", "s", ours[1], base[1]),
    ]


async def agent_start(tmp: Path) -> list[Figure]:
    """From ``initialize`` to the agent running, in its sandbox against without one, in
    alternated runs; in an empty workspace and in one of 10,000 files (the sandbox
    surveys the workspace for secrets at each start)."""
    command = agent_command(tmp, {"turns": [[{"text": "ok"}]]})
    big = fresh(tmp)
    for n in range(10_000):
        folder = big / f"pkg{n // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{n}.py").write_text(f"VALUE = {n}\n")
    figures = []
    for label, workspace in (("empty workspace", None), ("10,000 files", big)):
        runs: dict[str, list[float]] = {"workspace": [], "off": []}
        for _ in range(5):
            for mode, times in runs.items():
                workdir = workspace or fresh(tmp)
                side = GooseLsSide(
                    command,
                    workdir,
                    Arrivals(0),
                    lazy=False,
                    data_dir=fresh(tmp) / "data",
                    options={"agent": {"command": command, "sandbox": mode}},
                )
                await side.start()
                started = time.perf_counter()
                await side.agent_running()
                times.append(time.perf_counter() - started)
                await side.stop()
        sandboxed, bare = (statistics.median(runs[m]) for m in ("workspace", "off"))
        figures.append(
            Figure("agent-start", f"sandboxed vs not, {label}", "s", sandboxed, bare, ratio=True)
        )
    return figures


BARE_PYGLS = (str(Path(__file__).with_name("bare_pygls.py")),)
"""A pygls server that only answers ``initialize``: the floor of a Python language server."""
STARTUP_ROUNDS = 5
"""Alternated rounds of goose-ls and bare pygls answering ``initialize``; the medians count."""


async def _initialize_s(
    server: tuple[str, ...], workdir: Path, ready: bool = False
) -> tuple[float, float | None]:
    """Seconds from starting ``server`` to its ``initialize`` answer (no agent: start
    lazy); with ``ready``, also to its answer to a ``goose/status`` sent right behind."""
    editor = BenchEditor(workdir)
    started = time.perf_counter()
    await editor.start(server=server)
    await editor.initialize({"agent": {"start": "lazy"}, "dataDir": str(workdir / "data")})
    took = time.perf_counter() - started
    served = None
    if ready:
        await editor.request("goose/status", {})
        served = time.perf_counter() - started
    await editor.stop()
    return took, served


async def history(tmp: Path) -> list[Figure]:
    """``session/load`` replaying 10,000 messages, until the transcript holds them all."""
    messages = 10_000
    command = agent_command(tmp, {"load": [{"stamped": messages, "size": 120}]})
    session = "20260101_1"
    arrivals = Arrivals(messages)
    base = DirectClient(command, fresh(tmp), arrivals)
    await base.start()
    started = time.perf_counter()
    await base.load(session)
    await arrivals.done.wait()
    base_s = time.perf_counter() - started
    await base.stop()

    side = GooseLsSide(command, fresh(tmp), Arrivals(messages), lazy=False)
    await side.start()
    await side.agent_running()
    started = time.perf_counter()
    await side.load(session)
    await side.arrivals.done.wait()
    transcript = side.transcript(session)
    last = f"{max(sent for sent, _ in side.arrivals.pairs):020d}".encode()
    await until(lambda: transcript.exists() and last in transcript.read_bytes())
    ours_s = time.perf_counter() - started
    await side.stop()
    return [
        Figure(
            "history 10,000 messages",
            "until all shown",
            "s",
            ours_s,
            base_s,
            "< 2 s",
            below(2),
        )
    ]


async def scale(tmp: Path) -> list[Figure]:
    """20 sessions streaming at once through one connection."""
    sessions, chunks = 20, 1000
    command = agent_command(tmp, {"turns": [[{"stamped": chunks}]]})
    figures: dict[str, tuple[float, float]] = {}
    for name, side_class in (("direct", DirectClient), ("goose-ls", GooseLsSide)):
        arrivals = Arrivals(sessions * chunks)
        side = side_class(command, fresh(tmp), arrivals)
        await side.start()
        ids = [await side.new_session() for _ in range(sessions)]
        await asyncio.gather(*(side.prompt(i) for i in ids))
        await within(120, arrivals.done.wait())
        await side.stop()
        rates = [chunks / arrivals.span_s(i) for i in ids]
        jain = sum(rates) ** 2 / (len(rates) * sum(r * r for r in rates))
        figures[name] = (sessions * chunks / arrivals.span_s(), jain)
    ours, base = figures["goose-ls"], figures["direct"]
    return [
        Figure("scale 20 sessions", "chunks/s, all", "/s", ours[0], base[0]),
        Figure("scale 20 sessions", "fairness (Jain, 1 = even)", "", ours[1], base[1]),
    ]


async def until(condition: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the benchmark waited too long")
        await asyncio.sleep(0.005)


RELAY_CASES: dict[str, Callable[[Path], Awaitable[list[Figure]]]] = {
    "latency": relay_latency,
    "small": lambda tmp: throughput(tmp, 10_000, 20),
    "large": lambda tmp: throughput(tmp, 100, 100_000),
    "transcript": transcript_streaming,
    "startup": startup,
    "agent-start": agent_start,
    "history": history,
    "scale": scale,
}
