"""Pruning the journal: whole chats, the one used longest ago first.

A chat not used for ``journal.maxAgeDays`` is pruned, and so are the oldest ones while
the journal holds more than ``journal.maxBytes``: its rows, the large texts only it held,
its transcript (with its ``.partN.md`` parts) and its saved outputs. A chat open in a
live goose-ls (``holders``; this process's own open ones too) is never pruned: each
chat is checked and deleted in a transaction of its own, so a window that opens it
meanwhile either sees it gone or keeps it.

The work runs on its own connection, in a worker thread, so the event loop never waits
for it; other writers wait for one chat's transaction at most. The space freed is given
back to the disk with ``PRAGMA incremental_vacuum``, 8 MB per transaction (about 50 ms
each); a journal made before auto_vacuum was set is vacuumed once, when that is worth it.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import shutil
import sqlite3
import threading
from collections.abc import Awaitable, Callable, Collection
from pathlib import Path

import attrs

from goose_ls.errors import GooseLsError
from goose_ls.process_identity import process_alive
from goose_ls.sessions.journal import schema
from goose_ls.sessions.journal.store import SessionStore, delete_rows

log = logging.getLogger(__name__)

PRUNE_EVERY = datetime.timedelta(days=1)
"""How often goose-ls prunes by itself, at start-up, per data dir."""
VACUUM_STEP = 2048
"""Free pages given back to the disk per transaction (8 MB of 4 KiB pages)."""
VACUUM_WORTH = 0.25
"""A journal without auto_vacuum is rewritten once when this share of it is free..."""
VACUUM_LIMIT = 256 << 20
"""...and it is no bigger than this (VACUUM takes about 6 ms a MB, and other goose-ls
writers wait for it); otherwise its free pages are reused by later writes."""
AUTO_VACUUM_INCREMENTAL = 2


@attrs.frozen
class Limits:
    max_age_days: float
    """0 or less: no age limit."""
    max_bytes: int
    """0 or less: no size limit."""

    def cutoff(self, now: datetime.datetime) -> str | None:
        """Chats last used before this time (as records write it) are too old."""
        if self.max_age_days <= 0:
            return None
        return (now - datetime.timedelta(days=self.max_age_days)).isoformat(timespec="seconds")


@attrs.frozen
class Pruned:
    session_ids: list[str]
    freed: int
    """Bytes given back to the disk: the journal's files and the chats' files."""

    def __str__(self) -> str:
        count = len(self.session_ids)
        return f"removed {count} chat{'' if count == 1 else 's'}, {self.freed / 1e6:.1f} MB"


class Retention:
    """Prunes in a worker thread, one prune at a time: when asked, and at start-up at
    most once a day per data dir."""

    def __init__(
        self,
        store: SessionStore,
        limits: Callable[[], Limits],
        open_sessions: Callable[[], Collection[str]],
    ) -> None:
        self._store = store
        self._limits = limits
        self._open = open_sessions
        self._lock = asyncio.Lock()
        self._stop = threading.Event()
        self.forgotten: list[Callable[[list[str]], Awaitable[None]]] = []
        """Told the chats each prune removed (their checkpoints go with them)."""

    async def prune(self, scheduled: bool = False) -> Pruned | None:
        """Prune now; None when there is no journal (sessions in memory only) or, for the
        ``scheduled`` one, when it is not due."""
        path = self._store.path if self._store.usable else None
        if path is None:
            return None
        async with self._lock:
            now = datetime.datetime.now(datetime.timezone.utc)
            try:
                if scheduled and not await asyncio.to_thread(due, path, now):
                    return None
                pruned = await asyncio.to_thread(
                    prune, path, self._limits(), set(self._open()), self._stop, now
                )
            except sqlite3.Error as exc:
                raise GooseLsError(f"could not prune the journal {path} ({exc})") from exc
        self._store.forget(pruned.session_ids)
        for forget in self.forgotten:
            await forget(pruned.session_ids)
        return pruned

    def stop(self) -> None:
        """goose-ls is stopping: a prune under way ends after the chat it is deleting."""
        self._stop.set()


def prune(
    path: Path,
    limits: Limits,
    keep: Collection[str],
    stop: threading.Event,
    now: datetime.datetime,
) -> Pruned:
    """Prune the journal at ``path`` now; ``keep`` are this process's open chats."""
    before = _disk_size(path)
    db = schema.connect(path)
    try:
        mark(db, now)
        removed, files = [], 0
        cutoff = limits.cutoff(now)
        for session_id, updated_at in _oldest_first(db):
            too_old = cutoff is not None and updated_at < cutoff
            if stop.is_set() or not (too_old or _too_big(db, limits.max_bytes)):
                break
            if session_id in keep:
                continue
            transcript = _delete_unless_held(db, session_id, updated_at)
            if transcript is not None:
                removed.append(session_id)
                files += remove_files(path.parent, transcript)
        if removed:
            _reclaim(db, stop)
    finally:
        db.close()
    log.info("pruned %d chats from %s", len(removed), path)
    return Pruned(removed, max(0, before - _disk_size(path)) + files)


def due(path: Path, now: datetime.datetime) -> bool:
    """Whether the start-up prune is due (none in the last day); if so, it is marked as
    done, so that the other goose-ls starting on this data dir today do not run it."""
    db = schema.connect(path)
    try:
        with schema.transaction(db):
            row = db.execute("SELECT last_run FROM maintenance WHERE task = 'prune'").fetchone()
            last = datetime.datetime.fromisoformat(row[0]) if row else None
            if last is not None and now - PRUNE_EVERY < last <= now:
                return False
            mark(db, now)
            return True
    finally:
        db.close()


def mark(db: sqlite3.Connection, now: datetime.datetime) -> None:
    stamp = now.isoformat(timespec="seconds")
    db.execute("INSERT OR REPLACE INTO maintenance VALUES ('prune', ?)", (stamp,))


def _oldest_first(db: sqlite3.Connection) -> list[tuple[str, str]]:
    """Every chat, the one used longest ago first (a record's row is written anew each
    time it changes, so its rowid breaks ties within a second)."""
    rows = db.execute("SELECT session_id, updated_at FROM sessions ORDER BY updated_at, rowid")
    return [(str(session_id), str(updated_at)) for session_id, updated_at in rows]


def _too_big(db: sqlite3.Connection, max_bytes: int) -> bool:
    """Whether the journal's pages in use hold more than ``max_bytes``."""
    if max_bytes <= 0:
        return False
    pages = _pragma(db, "page_count") - _pragma(db, "freelist_count")
    return pages * _pragma(db, "page_size") > max_bytes


def _delete_unless_held(db: sqlite3.Connection, session_id: str, updated_at: str) -> str | None:
    """Delete a chat nobody has open and nobody used since it was listed; its
    transcript's path ("" when it has none), or None when it was kept."""
    with schema.transaction(db):
        row = db.execute(
            "SELECT updated_at, transcript_path FROM sessions WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        holder = db.execute(
            "SELECT process FROM holders WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is None or row[0] != updated_at or (holder and process_alive(holder[0])):
            return None
        delete_rows(db, session_id)
        db.execute("DELETE FROM holders WHERE session_id = ?", (session_id,))
        return str(row[1])


def remove_files(folder: Path, transcript: str) -> int:
    """Remove a chat's transcript, its parts and its saved outputs; the bytes freed.
    Only files in the data dir's own folders are touched, whatever the record says."""
    path = Path(transcript)
    if not transcript or path.parent != (folder / "transcripts").resolve():
        return 0
    files = [path, *path.parent.glob(f"{path.stem}.part*.md")]
    # A stem of dots (`...md`, named so by an earlier goose-ls for a chat the agent called
    # `..`) is no chat's outputs folder: outputs/.. is the data dir.
    outputs = folder.resolve() / "outputs" / path.stem if path.stem.strip(".") else None
    if outputs is not None and outputs.is_dir():
        files += [f for f in outputs.rglob("*") if f.is_file()]
    freed = 0
    for file in files:
        try:
            size = file.stat().st_size
            file.unlink()
            freed += size
        except OSError:
            continue  # already gone, or not ours to remove
    if outputs is not None:
        shutil.rmtree(outputs, ignore_errors=True)
    return freed


def _reclaim(db: sqlite3.Connection, stop: threading.Event) -> None:
    """Give the freed pages back to the disk, then shrink the WAL."""
    if _pragma(db, "auto_vacuum") == AUTO_VACUUM_INCREMENTAL:
        while _pragma(db, "freelist_count") and not stop.is_set():
            try:
                db.executescript(
                    f"BEGIN IMMEDIATE; PRAGMA incremental_vacuum({VACUUM_STEP}); COMMIT;"
                )
            except sqlite3.Error:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
    elif _worth_a_vacuum(db):
        db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # taken by the VACUUM
        db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def _worth_a_vacuum(db: sqlite3.Connection) -> bool:
    pages, free = _pragma(db, "page_count"), _pragma(db, "freelist_count")
    size = pages * _pragma(db, "page_size")
    return free >= pages * VACUUM_WORTH and size <= VACUUM_LIMIT


def _pragma(db: sqlite3.Connection, name: str) -> int:
    return int(db.execute(f"PRAGMA {name}").fetchone()[0])


def _disk_size(path: Path) -> int:
    return sum(
        file.stat().st_size for file in (path, path.with_name(f"{path.name}-wal")) if file.exists()
    )
