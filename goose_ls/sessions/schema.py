"""The journal's database: how it is opened, its schema and its migrations.

SQLite in WAL mode (one process reads while another writes), with a busy timeout (a
writer waits its turn instead of failing) and ``synchronous = NORMAL`` (a commit is
durable once the WAL is checkpointed; a power cut loses at most the last commits, never
the database). The WAL is checkpointed when a turn ends, in a thread (:func:`checkpoint`):
SQLite's own checkpoint, every 4 MB, ran inside a commit on the event loop and stalled a
fast reply for tens of milliseconds; :data:`AUTOCHECKPOINT_PAGES` is only a safety net. The schema version is ``PRAGMA user_version``: version N is reached by
running the first N steps of :data:`MIGRATIONS`, each once, in order. A step is an SQL
script, or a function given the connection when a step must compute (fill a new table
from the events already there).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

from goose_ls.files import PRIVATE_FILE, create_private, private_folder, tighten
from goose_ls.sessions import texts

BUSY_TIMEOUT_MS = 5000
AUTOCHECKPOINT_PAGES = 25_000
"""Pages (about 100 MB) the WAL may reach before a commit checkpoints it: a single reply
that long, with no turn's end to do it."""
"""How long a write waits for another process's transaction before it fails."""
MIGRATIONS: list[str | Callable[[sqlite3.Connection], None]] = [
    """
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        cwd TEXT NOT NULL,
        title TEXT NOT NULL,
        title_from_agent INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        agent TEXT NOT NULL DEFAULT '',
        transcript_path TEXT NOT NULL DEFAULT '',
        last_index INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE last_active (
        workspace TEXT PRIMARY KEY,
        session_id TEXT NOT NULL
    );
    """,
    """
    ALTER TABLE sessions ADD COLUMN reserved_index INTEGER NOT NULL DEFAULT 0;
    """,
    """
    CREATE TABLE holders (
        session_id TEXT PRIMARY KEY,
        process TEXT NOT NULL
    );
    """,
    """
    CREATE TABLE events (
        session_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        message_id TEXT,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (session_id, idx)
    ) WITHOUT ROWID;
    """,
    """
    ALTER TABLE events ADD COLUMN replay INTEGER NOT NULL DEFAULT 0;
    """,
    texts.migrate,
    """
    CREATE TABLE blobs (
        sha256 TEXT PRIMARY KEY,
        data BLOB NOT NULL
    );
    CREATE TABLE event_blobs (
        session_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        PRIMARY KEY (session_id, idx, sha256)
    ) WITHOUT ROWID;
    CREATE INDEX event_blobs_by_blob ON event_blobs (sha256);
    CREATE TABLE maintenance (
        task TEXT PRIMARY KEY,
        last_run TEXT NOT NULL
    );
    """,
    """
    ALTER TABLE events ADD COLUMN parts TEXT;
    """,
]
"""Schema version N is reached by running the first N steps, each once, in order."""


def connect_in_memory() -> sqlite3.Connection:
    """A journal that lasts this run only (the data dir cannot hold one)."""
    return sqlite3.connect(":memory:", isolation_level=None)


class NewerSchema(sqlite3.DatabaseError):
    """The journal was written by a newer goose-ls: sound, but not for this one to use."""


def connect(path: Path, busy_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """The database at ``path``, made if need be (0600 in a 0700 folder, its WAL files
    too, whatever the umask: it holds every chat), its settings applied; ``busy_ms``
    is how long it waits for another process's transaction (:func:`patient` sets it back)."""
    private_folder(path.parent)
    create_private(path)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(f"{path}{suffix}"):
            tighten(f"{path}{suffix}", PRIVATE_FILE)
    db = sqlite3.connect(path, timeout=busy_ms / 1000, isolation_level=None)
    try:
        db.execute(f"PRAGMA busy_timeout = {busy_ms}")
        # Only a new database takes it (before its first table): pruning can then give
        # the space back to the disk a few pages at a time (see retention.py).
        db.execute("PRAGMA auto_vacuum = INCREMENTAL")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT_PAGES}")
    except BaseException:
        db.close()
        raise
    return db


def patient(db: sqlite3.Connection) -> None:
    """Wait the usual time for other processes' transactions from now on."""
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def read_only_copy(path: Path) -> sqlite3.Connection | None:
    """The journal at ``path`` copied into memory, read without writing anything beside
    it (a read-only folder cannot take the ``-shm`` SQLite would make: ``immutable``
    then reads the file alone); None when it cannot be read."""
    if not path.is_file():
        return None
    for options in ("mode=ro", "mode=ro&immutable=1"):
        uri = f"{path.absolute().as_uri()}?{options}"
        memory = connect_in_memory()
        try:
            with contextlib.closing(
                sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
            ) as disk:
                disk.backup(memory)
            return memory
        except sqlite3.Error:
            memory.close()
    return None


def checkpoint(path: Path) -> None:
    """Copy the WAL into the database, without waiting for readers or writers (run in a
    thread: its own connection, and SQLite lets go of the GIL while it writes)."""
    with contextlib.closing(sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000)) as db:
        db.execute("PRAGMA wal_checkpoint(PASSIVE)")


def migrate(db: sqlite3.Connection) -> int:
    """Bring the schema up to date, in the caller's transaction; the version it had."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > len(MIGRATIONS):
        raise NewerSchema(
            f"schema version {version}, newer than this goose-ls knows ({len(MIGRATIONS)})"
        )
    for number, step in enumerate(MIGRATIONS[version:], version + 1):
        if callable(step):
            step(db)
        else:
            for statement in filter(str.strip, step.split(";")):
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {number}")
    return version


@contextlib.contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken at once (BEGIN IMMEDIATE) so that two processes
    queue on ``busy_timeout`` instead of failing on a lock upgrade."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        # SQLite has rolled back by itself after some errors (a full disk): rolling back
        # again would fail and hide the error that matters.
        if db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        raise
