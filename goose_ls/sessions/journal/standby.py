"""When the journal cannot be used as it is: what is wrong with it, and how this run's
chats get back into it.

Only a journal SQLite finds corrupt is set aside (:func:`fault`): one that is busy (another
process in a long transaction), cannot be written (a read-only folder or disk), or was
written by a newer goose-ls is sound, and moving it would hide every chat it holds. The
store then works on a stand-in, a copy in memory or the deleted file it still has open,
and now and then tries the journal again; once it opens, :func:`copy_sessions` writes
the chats of this run into it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Collection
from pathlib import Path
from typing import Literal

from goose_ls.sessions.journal.schema import NewerSchema

Fault = Literal["corrupt", "busy", "newer", "unusable"]

_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB (extended codes keep the low byte)
_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED
_CORRUPT_WORDS = ("file is not a database", "database disk image is malformed")
_BUSY_WORDS = ("database is locked", "database table is locked")
SESSION_TABLES = ("sessions", "events", "event_blobs", "last_active")
"""The tables whose rows belong to one session (``session_id``), copied whole."""


def fault(error: BaseException) -> Fault:
    """What an error opening the journal says about it (Python 3.10's sqlite3 has no
    error codes: its messages then)."""
    if isinstance(error, NewerSchema):
        return "newer"
    if not isinstance(error, sqlite3.Error):
        return "unusable"
    code = getattr(error, "sqlite_errorcode", None)
    text = str(error).lower()
    if (code is not None and code & 0xFF in _CORRUPT_CODES) or any(
        word in text for word in _CORRUPT_WORDS
    ):
        return "corrupt"
    if (code is not None and code & 0xFF in _BUSY_CODES) or any(
        word in text for word in _BUSY_WORDS
    ):
        return "busy"
    return "unusable"


def identity(path: Path) -> tuple[int, int] | None:
    """Which file is at ``path`` (None: none), to notice it deleted or replaced."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def copy_sessions(
    source: sqlite3.Connection,
    target: sqlite3.Connection,
    session_ids: Collection[str],
    process: str,
) -> None:
    """Write what ``source`` holds of ``session_ids`` into ``target`` (in the caller's
    transaction on ``target``), replacing what it had of them, and which of them
    ``process`` holds. Other sessions in ``target`` are left as they are."""
    ids = list(session_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for table in SESSION_TABLES:
            _copy(source, target, table, f"session_id IN ({marks})", chunk)
        _copy(
            source,
            target,
            "blobs",
            f"sha256 IN (SELECT sha256 FROM event_blobs WHERE session_id IN ({marks}))",
            chunk,
            replace=False,
        )
        _copy(source, target, "texts", f"session_id IN ({marks})", chunk, skip=("id", "indexed"))
        _copy(
            source, target, "holders", f"session_id IN ({marks}) AND process = ?", [*chunk, process]
        )


def _copy(
    source: sqlite3.Connection,
    target: sqlite3.Connection,
    table: str,
    where: str,
    args: list[str],
    replace: bool = True,
    skip: tuple[str, ...] = (),
) -> None:
    """The rows of ``table`` matching ``where``, in the columns both databases have
    (``texts`` gets new ids there, and is indexed for search anew)."""
    columns = [
        name
        for name in _columns(source, table)
        if name in _columns(target, table) and name not in skip
    ]
    names = ", ".join(columns)
    rows = source.execute(f"SELECT {names} FROM {table} WHERE {where}", args)
    verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
    marks = ", ".join("?" * len(columns))
    while batch := rows.fetchmany(1000):
        target.executemany(f"{verb} INTO {table} ({names}) VALUES ({marks})", batch)


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in db.execute(f"PRAGMA table_info({table})")]
