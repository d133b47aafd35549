"""The journal's database: how it is opened, and its schema.

SQLite in WAL mode (one process reads while another writes), with a busy timeout (a
writer waits its turn instead of failing) and ``synchronous = NORMAL`` (a commit is
durable once the WAL is checkpointed; a power cut loses at most the last commits, never
the database). The WAL is checkpointed when a turn ends, in a thread (:func:`checkpoint`):
SQLite's own checkpoint, every 4 MB, ran inside a commit on the event loop and stalled a
fast reply for tens of milliseconds; :data:`AUTOCHECKPOINT_PAGES` is only a safety net.

The schema's version is ``PRAGMA user_version``. A new journal gets :data:`TABLES` and
:data:`VERSION` at once; one of an earlier version is brought up to date by the steps of
:data:`UPGRADES`; any other version (a newer goose-ls's) is refused before anything is
written to it (:func:`ready`). Changing the schema: change :data:`TABLES`, add the step
from the current version to :data:`UPGRADES`, raise :data:`VERSION`.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

from goose_ls.atomic_files import PRIVATE_FILE, create_private, private_folder, tighten

BUSY_TIMEOUT_MS = 5000
"""How long a write waits for another process's transaction before it fails."""
AUTOCHECKPOINT_PAGES = 25_000
"""Pages (about 100 MB) the WAL may reach before a commit checkpoints it: a single reply
that long, with no turn's end to do it."""

VERSION = 8
"""The schema this goose-ls writes. (8, not 1: the number the unreleased builds had
reached when their steps were folded into :data:`TABLES`, so their journals still open.)"""
TABLES = """
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        cwd TEXT NOT NULL,
        title TEXT NOT NULL,
        title_from_agent INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        agent TEXT NOT NULL DEFAULT '',
        transcript_path TEXT NOT NULL DEFAULT '',
        last_index INTEGER NOT NULL DEFAULT 0,
        reserved_index INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE last_active (
        workspace TEXT PRIMARY KEY,
        session_id TEXT NOT NULL
    );
    CREATE TABLE holders (
        session_id TEXT PRIMARY KEY,
        process TEXT NOT NULL
    );
    CREATE TABLE events (
        session_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        message_id TEXT,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        at TEXT NOT NULL,
        replay INTEGER NOT NULL DEFAULT 0,
        parts TEXT,
        PRIMARY KEY (session_id, idx)
    ) WITHOUT ROWID;
    -- id is never reused (AUTOINCREMENT), so a full-text entry left by a deleted row
    -- never speaks for another one.
    CREATE TABLE texts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        first_idx INTEGER NOT NULL,
        page INTEGER NOT NULL,
        message_id TEXT,
        kind TEXT NOT NULL,
        at TEXT NOT NULL,
        text TEXT NOT NULL,
        indexed INTEGER NOT NULL DEFAULT 0,
        UNIQUE (session_id, first_idx, page)
    );
    CREATE INDEX texts_to_index ON texts (id) WHERE indexed = 0;
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
"""
"""Every table of a journal at :data:`VERSION` (the full-text index aside: made when
this SQLite has FTS5, see :func:`.search.prepare`)."""
UPGRADES: dict[int, Callable[[sqlite3.Connection], None]] = {}
"""The step that brings a journal of version N to N + 1, keyed by N, run in the
transaction that opens it. None yet: no released goose-ls wrote another version."""


def connect_in_memory() -> sqlite3.Connection:
    """A journal that lasts this run only (the data dir cannot hold one)."""
    return sqlite3.connect(":memory:", isolation_level=None)


class NewerSchema(sqlite3.DatabaseError):
    """The journal has a schema version this goose-ls does not know (a newer goose-ls
    wrote it): sound, but not for this one to use, nor to change."""


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
        _refuse_unknown(db)  # before the settings below: they would write to it
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


def connect_writer(path: Path) -> sqlite3.Connection:
    """A second connection to the journal :func:`connect` opened, for the writer thread:
    the file must be there (never made anew here), the same settings."""
    db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=rw", uri=True, isolation_level=None)
    try:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
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


def ready(db: sqlite3.Connection) -> None:
    """Make a new journal's tables, or bring an earlier version's up to date, in the
    caller's transaction; :class:`NewerSchema` for a version this goose-ls does not know."""
    version = _refuse_unknown(db)
    if version == VERSION:
        return
    if version == 0:
        for statement in filter(str.strip, TABLES.split(";")):
            db.execute(statement)
    else:
        for step in range(version, VERSION):
            UPGRADES[step](db)
    db.execute(f"PRAGMA user_version = {VERSION}")


def _refuse_unknown(db: sqlite3.Connection) -> int:
    """The journal's schema version (0: a new journal), if this goose-ls can use it."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    upgradable = version <= VERSION and all(n in UPGRADES for n in range(version, VERSION))
    if version != 0 and not upgradable:
        which = "newer than" if version > VERSION else "unknown to"
        raise NewerSchema(f"schema version {version}, {which} this goose-ls (it reads {VERSION})")
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
