"""The journal's figures: what journaling costs a stream, how memory follows a session's
length, and ``goose/replay`` read back from the journal by a goose-ls started afresh.

Each is compared in the same run with a baseline that differs in one thing only:
goose-ls without its journal, goose-ls idle or earlier in the same session, the same
rows read by plain ``sqlite3`` and ``json.loads`` in this process.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from arrivals import Arrivals
from cases import Figure, agent_command, below, fresh, ratio_at_least, until
from editor import SERVER
from goose_ls_side import GooseLsSide

from goose_ls.sessions.journal.library import SessionLibrary
from goose_ls.tasks import within

JOURNAL = "journal.sqlite3"
ROUNDS = 5
"""Runs of each side in one ``journal`` case, alternated so both meet the same machine."""


NO_JOURNAL = (str(Path(__file__).with_name("no_journal.py")),)
"""goose-ls with its journal's event writing taken out (bench/no_journal.py): the same
data dir, transcripts and session records, no event encoded, indexed or written."""


def _journaled(data_dir: Path, session_id: str) -> int:
    """How many of a session's events the journal holds."""
    with sqlite3.connect(data_dir / JOURNAL) as db:
        found = db.execute(  # a row of a run of text chunks holds one event per part
            "SELECT total(coalesce(length(parts) - length(replace(parts, ',', '')) + 1, 1))"
            " FROM events WHERE session_id = ?",
            (session_id,),
        )
        return int(found.fetchone()[0])


async def _stream(command: list[str], tmp: Path, chunks: int, journal: bool) -> tuple[float, float]:
    """One turn of ``chunks`` through a new goose-ls, with its journal or without it:
    chunks per second, and goose-ls's CPU seconds per chunk."""
    workdir = fresh(tmp)
    data_dir = workdir.with_name(f"{workdir.name}-data")
    server = SERVER if journal else NO_JOURNAL
    side = GooseLsSide(command, workdir, Arrivals(chunks), data_dir=data_dir, server=server)
    await side.start()
    session = await side.new_session()
    cpu = side.cpu_s()
    await side.prompt(session)
    await within(60, side.arrivals.done.wait())
    cpu = side.cpu_s() - cpu
    await side.stop()
    held = _journaled(data_dir, session)
    if (journal and held < chunks) or (not journal and held):
        raise RuntimeError("the journal holds the wrong events: not a fair comparison")
    return chunks / side.arrivals.span_s(), cpu / chunks


async def journal_overhead(tmp: Path) -> list[Figure]:
    """The 10,000 x 20 B stream with the journal and without it (same agent, same run)."""
    chunks = 10_000
    command = agent_command(tmp, {"turns": [[{"stamped": chunks, "size": 20}]]})
    runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for _ in range(ROUNDS):
        for journal in (True, False):
            runs[journal].append(await _stream(command, tmp, chunks, journal))
    rate = {j: statistics.median(r for r, _ in runs[j]) for j in runs}
    cpu_us = {j: statistics.median(c for _, c in runs[j]) * 1e6 for j in runs}
    name = "journal 10000x20B"
    return [
        Figure(
            name,
            "chunks/s, vs no journal",
            "/s",
            rate[True],
            rate[False],
            ">= 0.9x",
            ratio_at_least(0.9),
        ),
        Figure(name, "CPU per chunk, vs none", "µs", cpu_us[True], cpu_us[False]),
    ]


async def _rss_mb(side: GooseLsSide) -> float:
    """What ``goose/status`` says of goose-ls's resident memory (once it has answered,
    it has handled everything sent before)."""
    await asyncio.sleep(0.5)  # the turn's last batch and transcript save
    status = await side.editor.request("goose/status", None)
    return float(status["memory"]["rssMb"])


async def memory(tmp: Path) -> list[Figure]:
    """Resident memory after 10 sessions with 50,000 events each, against goose-ls idle."""
    sessions, chunks = 10, 50_000
    command = agent_command(tmp, {"turns": [[{"stamped": chunks, "size": 60}]]})
    side = GooseLsSide(command, fresh(tmp), Arrivals(sessions * chunks))
    await side.start()
    first = await side.new_session()
    idle = await _rss_mb(side)
    ids = [first, *[await side.new_session() for _ in range(sessions - 1)]]
    for session in ids:
        await side.prompt(session)
    full = await _rss_mb(side)
    await side.stop()
    name = "memory 10x50,000 events"
    return [Figure(name, "RSS, vs idle", "MB", full, idle, "<= 100 MB", below(100.001))]


async def _rss_over(tmp: Path, turns: list[int]) -> tuple[float, float]:
    """goose-ls's resident memory after a session's first turn and after its last, each
    turn streaming that many events."""
    steps = [[{"stamped": events, "size": 60}] for events in turns]
    side = GooseLsSide(agent_command(tmp, {"turns": steps}), fresh(tmp), Arrivals(sum(turns)))
    await side.start()
    session = await side.new_session()
    await side.prompt(session)
    first = await _rss_mb(side)
    for _ in turns[1:]:
        await side.prompt(session)
    last = await _rss_mb(side)
    await side.stop()
    return last, first


async def memory_flat(tmp: Path) -> list[Figure]:
    """One session at 10,000 events, then at 100,000: reached in turns of 10,000 events
    (a long chat), and in one more turn of 90,000 (a long reply)."""

    def flat(ours: float, base: float | None) -> bool:
        return base is not None and abs(ours / base - 1) <= 0.1

    name = "memory 1 session"
    many = await _rss_over(tmp, [10_000] * 10)
    one = await _rss_over(tmp, [10_000, 90_000])
    return [
        Figure(name, "100k vs 10k, 10k a turn", "MB", *many, "within ±10%", flat),
        Figure(name, "100k vs 10k, a 90k reply", "MB", *one, "within ±10%", flat),
    ]


class _Received:
    """Counts ``goose/update`` and ``goose/turnEnd`` notifications, and when the last came."""

    def __init__(self) -> None:
        self.count = 0
        self.last = 0.0

    def add(self, _: dict[str, Any]) -> None:
        self.count += 1
        self.last = time.perf_counter()


def _read_rows(data_dir: Path, session_id: str) -> tuple[float, int]:
    """The floor: seconds to read a session's events with sqlite3 and parse each payload
    (a row holding a run of text chunks parsed once, then cut into one dict a chunk)."""
    started = time.perf_counter()
    parsed: list[dict[str, Any]] = []
    with sqlite3.connect(data_dir / JOURNAL) as db:
        rows = db.execute(
            "SELECT payload, parts FROM events WHERE session_id = ? AND idx > 0 ORDER BY idx",
            (session_id,),
        )
        for payload, parts in rows:
            update = json.loads(payload)
            if parts is None:
                parsed.append(update)
                continue
            text, start = update["content"]["text"], 0
            for length in map(int, parts.split(",")):
                chunk = {"type": "text", "text": text[start : start + length]}
                parsed.append({"sessionUpdate": update["sessionUpdate"], "content": chunk})
                start += length
    return time.perf_counter() - started, len(parsed)


async def replay_after_restart(tmp: Path) -> list[Figure]:
    """``goose/replay`` of 100,000 events by a goose-ls that did not stream them: a second
    process on the same data dir, its agent never started."""
    events = 100_000
    command = agent_command(tmp, {"turns": [[{"stamped": events, "size": 20}]]})
    workdir = fresh(tmp)
    writer = GooseLsSide(command, workdir, Arrivals(events))
    await writer.start()
    session = await writer.new_session()
    await writer.prompt(session)
    await writer.stop()

    reader = GooseLsSide(command, workdir, Arrivals(events))
    received = _Received()
    reader.editor.handlers["goose/update"] = received.add
    reader.editor.handlers["goose/turnEnd"] = received.add
    await reader.start()
    cpu, client_cpu, started = reader.cpu_s(), time.process_time(), time.perf_counter()
    answer = await reader.editor.request("goose/replay", {"sessionId": session, "afterIndex": 0})
    await until(lambda: received.count >= answer["count"])
    ours = received.last - started
    cpu, client_cpu = reader.cpu_s() - cpu, time.process_time() - client_cpu
    await reader.stop()
    base, rows = _read_rows(reader.data_dir, session)
    if answer["count"] != rows or rows < events:
        raise RuntimeError(f"replayed {answer['count']} events, the journal holds {rows}")
    name = "replay 100k after restart"
    return [
        Figure(
            name,
            "to last, vs sqlite3 read",
            "s",
            ours,
            base,
            "< 2 s",
            below(2),
        ),
        # Where the time went: goose-ls reading and sending, this process reading.
        Figure(name, "goose-ls CPU for it", "s", cpu),
        Figure(name, "bench client CPU for it", "s", client_cpu),
    ]


KILL_POINTS = (50, 300, 700, 1200, 1700)
"""Chunks the editor has received when goose-ls is killed, one kill each."""
KILL_CHUNKS, KILL_RATE = 2000, 500
"""The reply a kill cuts: 2,000 chunks of 20 B at 500 a second (one every 2 ms: a
batch of the old journal held 50 of them)."""


def _journaled_text(data_dir: Path, session_id: str) -> str:
    """The session's reply as the journal holds it (a row of a run: its chunks joined)."""
    with sqlite3.connect(data_dir / JOURNAL) as db:
        rows = db.execute(
            "SELECT payload FROM events WHERE session_id = ? AND kind = ? ORDER BY idx",
            (session_id, "agent_message_chunk"),
        ).fetchall()
    return "".join(json.loads(payload)["content"]["text"] for (payload,) in rows)


async def _killed_at(command: list[str], tmp: Path, point: int) -> int:
    """Kill goose-ls (SIGKILL) once the editor has ``point`` chunks of a reply: how many
    characters the editor was sent that the journal lacks."""
    workdir = fresh(tmp)
    side = GooseLsSide(command, workdir, Arrivals(point))
    received: list[str] = []

    def on_update(params: dict[str, Any]) -> None:
        if params["update"]["sessionUpdate"] == "agent_message_chunk":
            received.append(params["update"]["content"]["text"])
            side.arrivals.add(params["sessionId"], received[-1])

    side.editor.handlers["goose/update"] = on_update
    await side.start()
    session = await side.new_session()
    await side.editor.request(
        "goose/prompt", {"sessionId": session, "messageId": str(uuid.uuid4()), "prompt": "go"}
    )
    await within(60, side.arrivals.done.wait())
    os.kill(side.editor.pid, signal.SIGKILL)
    await side.editor.killed()
    sent = "".join(received)  # and what was still in the pipe, read to its end
    # As the next goose-ls to start does: what the killed one only logged, into the journal.
    SessionLibrary(side.data_dir, lambda path, error: None).store.close()
    kept = _journaled_text(side.data_dir, session)
    same = next((i for i, (a, b) in enumerate(zip(sent, kept, strict=False)) if a != b), len(kept))
    return max(0, len(sent) - same)


async def kill_mid_reply(tmp: Path) -> list[Figure]:
    """goose-ls killed mid-reply at several points: characters the editor was sent and
    the journal lacks, summed over the kills."""
    command = agent_command(
        tmp, {"turns": [[{"stamped": KILL_CHUNKS, "rate": KILL_RATE, "size": 20}]]}
    )
    missing = [await _killed_at(command, tmp, point) for point in KILL_POINTS]
    return [
        Figure(
            f"kill -9 x{len(KILL_POINTS)} mid-reply",
            "chars sent, not journaled",
            "",
            float(sum(missing)),
            None,
            "0",
            lambda value, _: value == 0,
        )
    ]
