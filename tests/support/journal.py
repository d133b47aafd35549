"""The journal as tests and benchmarks see it: events journaled as the registry journals
them, and a session's events read back from the database file as any reader would."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from goose_ls import events
from goose_ls.sessions.journal.library import SessionLibrary
from goose_ls.sessions.journal.records import EventRow, expanded
from goose_ls.sessions.session import IndexedEvent


def journal_event(
    library: SessionLibrary,
    session_id: str,
    event: events.SessionEvent,
    index: int,
    message_id: str | None,
) -> None:
    """Journal ``event`` as the registry does once it has numbered it."""
    library.observe(session_id, IndexedEvent(session_id, index, message_id, event))


def journaled(database: Path, session_id: str) -> list[EventRow]:
    """A session's events in the journal file, one row an event (a run of text chunks cut
    back into its chunks), oldest first."""
    with contextlib.closing(sqlite3.connect(database)) as db:
        rows = db.execute(
            "SELECT * FROM events WHERE session_id = ? ORDER BY idx", (session_id,)
        ).fetchall()
    return list(expanded(EventRow(*row) for row in rows))


def journal_logs(data_dir: Path) -> list[Path]:
    """The logs goose-ls processes keep beside the journal (each batch of events appended
    before the editor is sent it, until it is committed)."""
    return sorted(data_dir.glob("journal.*.log"))
