"""What chat search costs: on the journal's write path, and per search.

```sh
.venv/bin/python bench/journal_search.py
```

Writes: 10,000 chunks of 20 bytes journaled through the library, one transaction per
``batch`` chunks (1 is the worst case: a slow stream; at full speed a 5 ms batch holds
hundreds), with the searchable texts kept and without them. Searches: a journal of
many chats, searched with FTS5 (the first search indexes everything) and with LIKE.
Figures are CPU time (this process's, system time included: the WAL's writes), which
other work on a shared machine disturbs less than the clock; the best of a few runs.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from unittest import mock

import tests_on_path  # noqa: F401  (puts tests/ on sys.path for `support`)

from goose_ls import events
from goose_ls.sessions.journal import search
from goose_ls.sessions.journal.library import SessionLibrary
from goose_ls.sessions.journal.records import EventRow
from goose_ls.sessions.journal.texts import Piece, TextIndex
from support.journal import journal_event

CHUNKS = 10_000
CHUNK = "0123456789abcdefghi "
RUNS = 3


class NoTexts(TextIndex):
    """The journal as it was before search: events only."""

    def add(
        self,
        db: sqlite3.Connection,
        rows: Sequence[EventRow],
        pieces: Sequence[Piece | None],
        every: bool = False,
    ) -> None:
        pass


def journal(folder: Path, batch: int, texts: bool, sessions: int = 1) -> SessionLibrary:
    """Inside an event loop, or the library writes each event at once; it never yields,
    so the batches are the ones written here."""
    return asyncio.run(_journal(folder, batch, texts, sessions))


async def _journal(folder: Path, batch: int, texts: bool, sessions: int) -> SessionLibrary:
    library = SessionLibrary(folder, lambda path, exc: print(f"cannot write {path}: {exc}"))
    if not texts:
        library.store._texts = NoTexts()
    for number in range(sessions):
        session_id = f"s{number}"
        library.created(session_id, "/w", "goose")
        for index in range(1, CHUNKS + 1):
            text = f"chat {number} says hello {index} " if index % 1000 == 0 else CHUNK
            event = events.AgentMessageChunk({"type": "text", "text": text})
            journal_event(library, session_id, event, index, "m1")
            if index % batch == 0:
                library.write_events()
    library.write_events()
    return library


def fresh_journal(batch: int, texts: bool) -> SessionLibrary:
    return journal(Path(tempfile.mkdtemp()), batch, texts)


def best(run: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times)


def writes() -> None:
    print(f"{CHUNKS:,} chunks of {len(CHUNK)} bytes journaled, best of {RUNS}:")
    for batch in (1, 10, 100):
        costs = {}
        for texts in (False, True):
            costs[texts] = best(functools.partial(fresh_journal, batch, texts))
        added = costs[True] - costs[False]
        print(
            f"  {batch:>3} chunk(s) a transaction: {costs[False] * 1000:6.1f} ms without texts,"
            f" {costs[True] * 1000:6.1f} ms with: +{added * 1000:.1f} ms,"
            f" {added / CHUNKS * 1e6:.1f} µs a chunk ({added / costs[False]:+.0%})"
        )


def searches(sessions: int = 50) -> None:
    library = journal(Path(tempfile.mkdtemp()), 100, True, sessions)
    print(f"a journal of {sessions} chats x {CHUNKS:,} chunks ({sessions * CHUNKS:,} events):")
    first = best(lambda: library.search("says hello 5000", 50), runs=1)
    print(f"  FTS5, the first search (indexes every text): {first * 1000:.1f} ms")
    fts = best(lambda: library.search("says hello 5000", 50))
    print(f"  FTS5, next searches: {fts * 1000:.2f} ms")
    with mock.patch.object(search, "fts_available", lambda: False):
        like = best(lambda: library.search("says hello 5000", 50))
    print(f"  LIKE: {like * 1000:.1f} ms")


if __name__ == "__main__":
    writes()
    searches()
