"""Which journal faults set a journal aside (only corruption), and what a stand-in's
chats become once the journal is back."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from goose_ls import events
from goose_ls.sessions.journal import schema, standby
from goose_ls.sessions.journal.library import SessionLibrary
from goose_ls.sessions.session import IndexedEvent


def _error(sql: str, db: sqlite3.Connection) -> sqlite3.Error:
    try:
        db.execute(sql)
    except sqlite3.Error as exc:
        return exc
    raise AssertionError(f"{sql} did not fail")


def test_only_a_database_sqlite_finds_corrupt_is_corrupt(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"not a database, whatever it once was " * 100)
    with contextlib.closing(sqlite3.connect(garbage)) as db:
        assert standby.fault(_error("SELECT * FROM sqlite_master", db)) == "corrupt"
    journal = tmp_path / "journal"
    with contextlib.closing(sqlite3.connect(journal, isolation_level=None)) as holder:
        holder.execute("PRAGMA journal_mode = WAL")
        holder.execute("BEGIN IMMEDIATE")
        with contextlib.closing(sqlite3.connect(journal, timeout=0.05)) as other:
            assert standby.fault(_error("BEGIN IMMEDIATE", other)) == "busy"
    # Python 3.10's sqlite3 has no error codes: the messages say as much.
    assert standby.fault(sqlite3.OperationalError("database is locked")) == "busy"
    assert standby.fault(sqlite3.DatabaseError("file is not a database")) == "corrupt"
    assert standby.fault(sqlite3.OperationalError("attempt to write a readonly database")) == (
        "unusable"
    )
    assert standby.fault(schema.NewerSchema("schema version 99")) == "newer"
    assert standby.fault(PermissionError(13, "Permission denied")) == "unusable"


def test_a_journal_deleted_under_the_library_is_made_again_with_its_chats(tmp_path: Path) -> None:
    told: list[str] = []
    library = SessionLibrary(tmp_path / "data", lambda path, error: None, notice=told.append)
    library.created("s1", "/w", "goose")
    for index in (1, 2):
        chunk = events.AgentMessageChunk({"type": "text", "text": f"word{index}"})
        library.observe("s1", IndexedEvent("s1", index, "m1", chunk))
        library.write_events()
        if index == 1:
            for suffix in ("", "-wal", "-shm"):
                (tmp_path / "data" / f"journal.sqlite3{suffix}").unlink(missing_ok=True)
    library.store.close()
    assert len(told) == 1 and "made again" in told[0], told
    with contextlib.closing(sqlite3.connect(tmp_path / "data" / "journal.sqlite3")) as db:
        rows = db.execute("SELECT idx FROM events WHERE session_id = 's1' ORDER BY idx")
        assert [idx for (idx,) in rows] == [1, 2]
