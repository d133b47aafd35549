"""The journal's database connection, its one owner, and what goes wrong with it.

One SQLite database in the data dir (the journal), shared by every goose-ls process
that uses that data dir: each change is a transaction on its own row, so two editor
windows never erase each other's sessions. WAL mode lets one process read while
another writes; ``busy_timeout`` makes a writer wait its turn instead of failing. The
schema is versioned (see :mod:`.schema`). A database SQLite finds corrupt is moved aside with a timestamp and reported, never overwritten. Any other
trouble (busy, read-only, written by a newer goose-ls, deleted while running) leaves the
journal where it is: the store works on a stand-in (:mod:`.standby`), shows the chats it
could read, tries the journal again now and then and, once it opens, writes this run's
chats into it. The user is told once of each.

The one owner of the database connection: every table's reads and writes (records,
events, which window holds a session) go through the same error handling here. Large
batches of events are written by its writer thread (:mod:`.writer`), with a connection
of that thread's own to the same file, and so are the batches logged before the editor
was sent them (:mod:`.spool`); everything else here waits for that thread, and commits
what is logged first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from goose_ls.atomic_files import WriteFailed
from goose_ls.process_identity import process_alive, this_process
from goose_ls.sessions.journal import blobs, schema, search, spool, standby
from goose_ls.sessions.journal.blobs import BlobRef
from goose_ls.sessions.journal.records import EventRow, SessionRecord, expanded, now
from goose_ls.sessions.journal.spool import Logged, Spool
from goose_ls.sessions.journal.texts import Piece, TextIndex
from goose_ls.sessions.journal.writer import Job, JournalThread

log = logging.getLogger(__name__)

RETRY_SECONDS = 2.0
"""How often, at most, writes on a stand-in try the journal again."""
LOOK_SECONDS = 0.1
"""How often, at most, a batch of events checks that the journal is still the file opened
(other writes check every time): what is written meanwhile into a journal deleted goes
into the file still open, which is copied into the new one."""
LOG_RETRY_SECONDS = 10.0
"""How often, at most, the journal's log is tried again after it could not be written."""
RETRY_BUSY_MS = 200
"""How long a new try of a busy journal waits for it (the first waited the usual time)."""
Notice = Callable[[str], None]
"""Tells the user something once (the journal was lost, or is back)."""


class SessionStore:
    def __init__(
        self,
        path: Path,
        write_failed: WriteFailed,
        notice: Notice | None = None,
    ) -> None:
        self.path = path
        self._write_failed = write_failed
        self._notice = notice or (lambda message: None)
        self.problem: str | None = None
        """Why the database could not be used (and what was done about it), if it could not."""
        self._db: sqlite3.Connection | None = None
        self._mine: dict[str, SessionRecord] = {}
        """Records this process has written: it changes them in memory (the last index)
        and saves them. Others are read from the database each time, never written back
        from a stale copy."""
        self._last_active: dict[str, str] = {}
        self._told = False
        self.in_memory = False
        """The journal is not in use: a stand-in (a copy in memory, or the journal's file
        deleted under this process) keeps the chats until it is again."""
        self._stay_in_memory = False
        """The journal is a newer goose-ls's: never tried again."""
        self._identity: tuple[int, int] | None = None
        """The journal's file as opened, to notice it deleted or replaced."""
        self._next_try = 0.0
        self._looked = 0.0
        """When a batch of events last checked the journal's file."""
        self._touched: set[str] = set()
        """Sessions written to the stand-in, to write into the journal once it is back."""
        self._removed: set[str] = set()
        """Sessions deleted from the stand-in, to delete from the journal then."""
        self._texts = TextIndex()
        """Touched by the writer thread while it has jobs: on the loop only after
        waiting for it."""
        self._writer = JournalThread(path)
        """Writes batches of events off the event loop (see :meth:`append_later`); every
        other use of the journal waits for it first."""
        self._spool = Spool(path.parent)
        """Batches logged before the editor was sent them, until they are committed (see
        :meth:`log`); every other use of the journal commits them first."""
        self._log_failed = False
        """The log could not be written (a full disk): batches are committed before the
        editor write again, as without a log."""
        self._log_retry = 0.0
        self._committing = False
        """A commit of the logged batches is waiting in the writer thread."""
        self._sends = [0, 0]
        """Writes to the editor handed to the writer thread, and made by it: the loop
        makes one itself only when none waits there (their order is kept)."""

    @property
    def usable(self) -> bool:
        """Whether the journal on disk is open (else sessions are kept in memory only)."""
        return self._db is not None and not self.in_memory

    def load(self) -> None:
        """Open the journal; when it cannot be, say why and put a stand-in in its place."""
        try:
            self._db = self._open()
        except (sqlite3.Error, OSError) as exc:
            kind = standby.fault(exc)
            if kind == "corrupt" and self._set_aside(exc):
                try:
                    self._db = self._open()
                except (sqlite3.Error, OSError) as again:
                    self._stand_in(again, standby.fault(again))
            else:
                self._stand_in(exc, kind)
        if self._db is not None and not self.in_memory:
            self._identity = standby.identity(self.path)

    def _open(self, busy_ms: int = schema.BUSY_TIMEOUT_MS) -> sqlite3.Connection:
        db = schema.connect(self.path, busy_ms)
        try:
            _ready(db)
            schema.patient(db)
        except BaseException:
            db.close()
            raise
        return db

    def _set_aside(self, error: Exception) -> bool:
        """Move a corrupt journal aside; False when it cannot be moved (it stays)."""
        stamp = now().replace(":", "")
        kept = self.path.with_name(f"{self.path.name}.{stamp}.bak")
        try:
            os.replace(self.path, kept)
        except OSError as exc:
            log.error("cannot move the corrupt session store %s aside: %s", self.path, exc)
            return False
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.replace(f"{self.path}{suffix}", f"{kept}{suffix}")
        self.problem = (
            f"the session store {self.path} could not be used ({error}); "
            f"it was kept as {kept.name} and a new one started"
        )
        log.error("%s", self.problem)
        return True

    def _stand_in(self, error: BaseException, kind: standby.Fault) -> None:
        """Work on a copy of the journal in memory (empty if it cannot be read); say why,
        and what becomes of this run's chats."""
        reason = getattr(error, "strerror", None) or str(error)
        if name := getattr(error, "sqlite_errorname", None):  # SQLITE_IOERR_WRITE...
            reason = f"{reason}, {name}"
        copy = None if kind in ("newer", "corrupt") else schema.read_only_copy(self.path)
        if copy is not None:
            try:
                _ready(copy)
            except sqlite3.Error:
                copy.close()
                copy = None
        shown = (
            "its chats are shown from a copy" if copy is not None else "its chats cannot be shown"
        )
        if copy is None:
            copy = schema.connect_in_memory()
            _ready(copy)
        self._db, self.in_memory = copy, True
        if kind in ("newer", "corrupt"):  # corrupt: and it could not be moved aside
            self._stay_in_memory = True
            self.problem = (
                f"cannot use the session store {self.path} ({reason}); it is left as it "
                "is, and this window's chats are kept in memory only, for this run"
            )
            if kind == "newer":
                self.problem += (
                    ". Another version of goose-ls wrote it: open it with that one (update "
                    "goose-ls), or set dataDir to another folder to start a new journal there"
                )
        elif kind == "busy":
            self.problem = (
                f"the session store {self.path} is busy: another process holds it ({reason}); "
                f"{shown}, and this window's chats are saved into it once it is free"
            )
        else:
            self.problem = (
                f"cannot open the session store {self.path} to write ({reason}): {shown}, "
                "and this window's chats are kept in memory only until it can be written"
            )
        log.error("%s", self.problem)

    def look(self, retry_now: bool = False, batch: bool = False) -> None:
        """Before each write: check that the journal is still the file opened (a stat;
        ``batch``: a batch of events, every :data:`LOOK_SECONDS` at most); on a
        stand-in, try the journal again, every :data:`RETRY_SECONDS` at most
        (``retry_now``: now, at a turn's end, the next write may be long off)."""
        if self._db is None:
            return
        if not self.in_memory:
            if batch:
                moment = time.monotonic()
                if moment - self._looked < LOOK_SECONDS:
                    return
                self._looked = moment
            if standby.identity(self.path) != self._identity:
                self._writer.wait()
                self._lost()
            return
        self._writer.wait()
        moment = time.monotonic()
        if self._stay_in_memory or (moment < self._next_try and not retry_now):
            return
        self._next_try = moment + RETRY_SECONDS
        if self._back():
            self._notice(
                f"the session store {self.path} can be written again: "
                "this window's chats are saved in it"
            )

    def _lost(self) -> None:
        """The journal was deleted or replaced under this process: the file it still has
        open stands in, and the journal is made again with this window's chats."""
        self.in_memory = True
        self._touched |= set(self._mine)
        count = len(self._touched)
        gone = f"the session store {self.path} was deleted or replaced while goose-ls ran"
        log.error("%s", gone)
        if self._back():
            self._notice(f"{gone}; it was made again, with this window's {count} chats")
        else:
            self._notice(
                f"{gone}, and cannot be made again; this window's chats are kept in memory "
                "until it can"
            )

    def _back(self) -> bool:
        """Open the journal (made anew if it is gone), write the stand-in's chats of this
        run into it, and use it again; False when it cannot be yet."""
        assert self._db is not None
        try:
            disk = self._open(RETRY_BUSY_MS)
        except (sqlite3.Error, OSError) as exc:
            self._stay_in_memory = standby.fault(exc) == "newer"
            log.debug("the session store %s cannot be used yet: %s", self.path, exc)
            return False
        try:
            with schema.transaction(self._db):
                self._texts.add(self._db, [], [], every=True)  # the text still waiting
            with schema.transaction(disk):
                for session_id in self._removed:
                    delete_rows(disk, session_id)
                kept = self._touched - self._removed
                standby.copy_sessions(self._db, disk, kept, this_process())
        except sqlite3.Error as exc:
            disk.close()
            log.warning("cannot write this run's chats into %s yet: %s", self.path, exc)
            return False
        self._db.close()
        self._db, self.in_memory = disk, False
        self._identity = standby.identity(self.path)
        self._writer.reconnect()
        self._texts.reset()  # its open rows are the stand-in's
        self._touched.clear()
        self._removed.clear()
        log.info("the session store %s is in use again", self.path)
        return True

    # --- records ------------------------------------------------------------------
    def get(self, session_id: str) -> SessionRecord | None:
        if session_id in self._mine:
            return self._mine[session_id]
        rows = self._query("SELECT * FROM sessions WHERE session_id = ?", (session_id,))
        return _record(rows[0]) if rows else None

    def all(self) -> list[SessionRecord]:
        """Every session in the data dir, those of other goose-ls processes too."""
        rows = self._query("SELECT * FROM sessions", ())
        found = {row["session_id"]: _record(row) for row in rows or ()}
        return list({**found, **self._mine}.values())  # ours: the newest we know

    def put(self, record: SessionRecord) -> None:
        record.updated_at = now()
        self._mine[record.session_id] = record
        self._write(lambda db: _upsert(db, record), record.session_id)

    def save(self, release: bool = False) -> None:
        """Write what is only in memory (the last indices of this process's sessions);
        with ``release``, also give back the indices reserved but not used. A record
        deleted meanwhile (pruned, or deleted in another window) stays deleted."""
        records = list(self._mine.values())
        if release:
            for record in records:
                record.reserved_index = record.last_index
        indices = [(r.last_index, r.reserved_index, r.session_id) for r in records]
        self._write(
            lambda db: db.executemany(
                "UPDATE sessions SET last_index = ?, reserved_index = ? WHERE session_id = ?",
                indices,
            )
        )

    def remove(self, session_id: str) -> SessionRecord | None:
        """Forget a session: its record, its events, the large texts only they held."""
        record = self.get(session_id)
        self.forget([session_id])
        self._write(lambda db: delete_rows(db, session_id))
        if self.in_memory:
            self._removed.add(session_id)
        return record

    def forget(self, session_ids: list[str]) -> None:
        """Drop what this process remembers of sessions gone from the database."""
        for session_id in session_ids:
            self._mine.pop(session_id, None)
        gone = set(session_ids)
        self._last_active = {k: v for k, v in self._last_active.items() if v not in gone}

    def last_active(self, workspace: str) -> str | None:
        rows = self._query("SELECT session_id FROM last_active WHERE workspace = ?", (workspace,))
        if rows:
            return str(rows[0]["session_id"])
        return self._last_active.get(workspace) if rows is None else None

    def set_last_active(self, workspace: str, session_id: str) -> None:
        self._last_active[workspace] = session_id
        self._write(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO last_active VALUES (?, ?)", (workspace, session_id)
            ),
            session_id,
        )

    # --- events ----------------------------------------------------------------------
    def append(
        self, rows: list[EventRow], pieces: list[Piece | None], refs: list[BlobRef] | None = None
    ) -> bool:
        """Write a batch of events in one transaction, with the text each adds (``pieces``,
        one per row) to its message's searchable text, and the large texts they hold;
        whether it was written (a full disk: not, nothing of it)."""
        written = self._write(
            lambda db: self._insert(db, rows, pieces, refs or []),
            *{row.session_id for row in rows},
            batch=True,
        )
        if not written:
            self._texts.reset()
        return written

    def _insert(
        self,
        db: sqlite3.Connection,
        rows: list[EventRow],
        pieces: list[Piece | None],
        refs: list[BlobRef],
    ) -> None:
        db.executemany("INSERT OR REPLACE INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        self._texts.add(db, rows, pieces)
        blobs.insert(db, refs)

    def _insert_logged(self, db: sqlite3.Connection, batches: list[Logged]) -> None:
        rows = [row for batch in batches for row in batch.rows]
        pieces = [piece for batch in batches for piece in batch.pieces]
        self._insert(db, rows, pieces, [ref for batch in batches for ref in batch.refs])

    def append_later(
        self,
        rows: list[EventRow],
        pieces: list[Piece | None],
        refs: list[BlobRef],
        then: Callable[[], None] | None,
        failed: Callable[[], None],
    ) -> bool:
        """:meth:`append` in the writer thread (after the batches logged before it), then
        ``then`` there; ``failed`` is called on the loop when the batch could not be
        written. False when the journal is a stand-in (a connection of this thread's
        only): write with :meth:`append`."""
        self.look(batch=True)
        if not self.usable:
            return False
        self._writer.submit(self._job(rows, pieces, refs, then, failed))
        return True

    def _job(
        self,
        rows: list[EventRow],
        pieces: list[Piece | None],
        refs: list[BlobRef],
        then: Callable[[], None] | None,
        failed: Callable[[], None] | None,
    ) -> Job:
        """A job of the writer thread: the batches logged by the time it runs, then
        ``rows``, in one transaction; the logs emptied of them once it is committed."""
        loop = asyncio.get_running_loop()
        logged: list[Logged] = []
        written = [False]
        committing = not rows

        def write(db: sqlite3.Connection) -> None:
            if self._spool.unwritten:
                logged[:] = self._spool.taken()
                self._insert_logged(db, logged)
            if rows:
                self._insert(db, rows, pieces, refs)
            written[0] = True

        def not_written(error: sqlite3.Error) -> None:
            written[0] = False
            self._texts.reset()
            loop.call_soon_threadsafe(self._failed, error)
            if failed is not None:
                loop.call_soon_threadsafe(failed)

        send = None if then is None else self._sent(then)

        def after() -> None:
            if written[0]:
                self._spool.committed(logged)
            if committing:
                self._committing = False
            if send is not None:
                send()

        return Job(write, after, not_written)

    def log(self, rows: list[EventRow], pieces: list[Piece | None], refs: list[BlobRef]) -> bool:
        """Log a batch of events (one write to a file, see :mod:`.spool`) before the editor
        is sent them: the writer thread commits it later (:meth:`commit_logged`). False
        when it cannot be (a stand-in, a full disk): commit it before the write then."""
        if self._log_failed and time.monotonic() < self._log_retry:
            return False
        self.look(batch=True)
        if not self.usable:
            return False
        try:
            self._spool.append(rows, pieces, refs)
        except OSError as exc:
            if not self._log_failed:
                log.error(
                    "cannot append to the journal's log in %s (%s): events are committed "
                    "to the journal before the editor is sent them instead, until it can",
                    self.path.parent,
                    exc,
                )
            self._log_failed = True
            self._log_retry = time.monotonic() + LOG_RETRY_SECONDS
            return False
        self._log_failed = False
        return True

    @property
    def logged_bytes(self) -> int:
        """How much the logged batches not committed yet weigh."""
        return self._spool.unwritten_bytes

    def commit_logged(self) -> bool:
        """Commit the logged batches in the writer thread; False when a commit of them
        waits there already (they may have come after it took its batches)."""
        if not self._spool.unwritten:
            return True
        if self._committing:
            return False
        self.look(batch=True)
        if not self.usable:
            self._settle()
            return True
        self._committing = True
        self._writer.submit(self._job([], [], [], None, None))
        return True

    def after_writes(self, then: Callable[[], None]) -> bool:
        """Run ``then`` in the writer thread once its jobs are done, when one of them is
        to write to the editor (what the editor is sent keeps its order); False when
        none is."""
        if self._sends[0] == self._sends[1]:
            return False
        self._writer.submit(Job(None, self._sent(then), lambda _: None))
        return True

    def _sent(self, send: Callable[[], None]) -> Callable[[], None]:
        """``send``, counted once the writer thread made it (see :meth:`after_writes`)."""
        self._sends[0] += 1

        def counted() -> None:
            try:
                send()
            finally:
                self._sends[1] += 1

        return counted

    @property
    def writing(self) -> bool:
        """Whether the writer thread has jobs."""
        return self._writer.busy

    def settle(self) -> None:
        """Wait for the writer thread's jobs, and commit what is logged."""
        self._settle()

    def _settle(self) -> None:
        """Every use of the journal but the writer thread's comes after this: the thread's
        jobs done, and the logged batches committed (here: the caller waits anyway)."""
        self._writer.wait()
        if not self._spool.unwritten or self._db is None:
            return
        logged = self._spool.taken()
        try:
            with schema.transaction(self._db):
                self._insert_logged(self._db, logged)
        except sqlite3.Error as exc:  # they stay in the log
            self._texts.reset()
            self._failed(exc)
            return
        if self.in_memory:
            self._touched.update(row.session_id for batch in logged for row in batch.rows)
        self._spool.committed(logged)

    def fold_logs(self, process: str | None = None) -> None:
        """Write into the journal what the logs of goose-ls processes no longer running
        hold and it lacks, then remove them (``process``: that one's only). A row the
        journal has is never written again: a process commits its batches in order, so
        the journal holds the first rows of each session's log, and those above its last
        index are the ones it lacks."""
        if not self.usable:
            return
        for owner, paths in spool.logs_of_others(self.path.parent).items():
            if (process is not None and owner != process) or process_alive(owner):
                continue
            batches = spool.batches_in(paths)

            def fold(db: sqlite3.Connection, batches: list[Logged] = batches) -> None:
                _fold(db, batches)

            if batches and not self._write(fold):
                continue  # tried again at the next start
            for path in paths:
                with contextlib.suppress(OSError):
                    os.unlink(path)
            log.info("folded the journal log of %s (%d batches)", owner, len(batches))

    def events(self, session_id: str, after: int = 0) -> list[EventRow]:
        """A session's events with an index above ``after``, oldest first, each payload
        as ``goose/update`` carried it."""
        rows = self._query(
            "SELECT * FROM events WHERE session_id = ? AND idx > ? ORDER BY idx",
            (session_id, after),
        )
        # The run of text chunks that ``after`` may fall in (``after`` is one of its own).
        run = self._query(
            "SELECT * FROM events WHERE session_id = ? AND idx <= ? AND parts IS NOT NULL"
            " AND idx = (SELECT max(idx) FROM events WHERE session_id = ? AND idx <= ?)",
            (session_id, after, session_id, after),
        )
        found = list(expanded([EventRow(*row) for row in [*(run or ()), *(rows or ())]], after))
        try:
            return blobs.restored(self._db, found, after) if self._db else found
        except sqlite3.Error as exc:  # never a payload still holding references
            log.warning("cannot read the session store %s: %s", self.path, exc)
            return []

    def checkpoint(self) -> None:
        """Checkpoint the journal's WAL (blocking: call it from a thread)."""
        if not self.usable:
            return
        try:
            schema.checkpoint(self.path)
        except sqlite3.Error as exc:  # the next turn's end tries again
            log.warning("cannot checkpoint the session store %s: %s", self.path, exc)

    def write_texts(self) -> None:
        """Add the journaled text still waiting to its messages' rows (see :mod:`.texts`)."""
        self._settle()
        if self._texts.waiting():
            self._write(lambda db: self._texts.add(db, [], [], every=True))

    def search(self, query: str, limit: int) -> list[search.Hit]:
        """Messages that hold ``query``, newest first (see :mod:`.search`)."""
        if self._db is None:
            return []
        self.write_texts()
        self._write(search.catch_up)
        try:
            return search.find(self._db, query, limit)
        except sqlite3.Error as exc:
            log.warning("cannot search the session store %s: %s", self.path, exc)
            return []

    # --- which process has a session open ---------------------------------------
    def hold(self, session_id: str) -> str | None:
        """Take ``session_id`` for this process; or the process that has it open, alive.
        Taken from a process that died, the session's events that process only logged
        are written into the journal first."""
        self._settle()
        if self._db is None:
            return None
        me = this_process()
        dead = None
        try:
            with schema.transaction(self._db):
                row = self._db.execute(
                    "SELECT process FROM holders WHERE session_id = ?", (session_id,)
                ).fetchone()
                if row and row[0] != me:
                    if process_alive(row[0]):
                        return str(row[0])
                    dead = str(row[0])
                self._db.execute("INSERT OR REPLACE INTO holders VALUES (?, ?)", (session_id, me))
        except sqlite3.Error as exc:
            log.warning("cannot mark session %s as open here: %s", session_id, exc)
        if dead is not None:
            self.fold_logs(dead)
        return None

    def release(self, session_ids: list[str]) -> None:
        me = this_process()
        self._write(
            lambda db: db.executemany(
                "DELETE FROM holders WHERE session_id = ? AND process = ?",
                [(session_id, me) for session_id in session_ids],
            )
        )

    def held_elsewhere(self) -> dict[str, str]:
        """Sessions another live goose-ls process has open, and that process."""
        me = this_process()
        rows = self._query("SELECT session_id, process FROM holders", ())
        return {
            row["session_id"]: row["process"]
            for row in rows or ()
            if row["process"] != me and process_alive(row["process"])
        }

    def close(self) -> None:
        self._settle()
        self._writer.stop()
        self._spool.close()
        self.write_texts()
        self.look(retry_now=True)  # this run's chats, into a journal lost or back meanwhile
        if self._db is not None:
            self._db.close()
            self._db = None

    # --- the database ---------------------------------------------------------------
    def _query(self, sql: str, args: tuple[object, ...]) -> list[sqlite3.Row] | None:
        """The rows, or None when there is no database to ask."""
        self._settle()
        if self._db is None:
            return None
        try:
            self._db.row_factory = sqlite3.Row
            return list(self._db.execute(sql, args))
        except sqlite3.Error as exc:
            log.warning("cannot read the session store %s: %s", self.path, exc)
            return None

    def _write(
        self, change: Callable[[sqlite3.Connection], object], *sessions: str, batch: bool = False
    ) -> bool:
        """Make ``change`` in one transaction (``sessions``: whose rows it writes;
        ``batch``: a batch of events)."""
        self._settle()
        self.look(batch=batch)
        if self._db is None:
            return False
        try:
            with schema.transaction(self._db):
                change(self._db)
            if self.in_memory:
                self._touched.update(sessions)
            return True
        except sqlite3.Error as exc:
            self._failed(exc)
            return False

    def _failed(self, exc: sqlite3.Error) -> None:
        """A write failed: logged, and the user told once."""
        name = getattr(exc, "sqlite_errorname", None)  # SQLITE_FULL, SQLITE_IOERR_WRITE...
        why = f"{exc} ({name})" if name else str(exc)
        log.error("cannot save the session store %s: %s", self.path, why)
        if not self._told:
            self._told = True
            self._write_failed(self.path, OSError(why))


def _ready(db: sqlite3.Connection) -> None:
    """The journal's tables made or brought up to date, and its full-text index."""
    with schema.transaction(db):
        schema.ready(db)
        search.prepare(db)


def _fold(db: sqlite3.Connection, batches: list[Logged]) -> None:
    """A dead process's logged batches: the rows the journal lacks, of sessions it still
    has (one deleted since stays deleted), with their text and large texts."""
    floors: dict[str, int | None] = {}
    rows: list[EventRow] = []
    pieces: list[Piece | None] = []
    kept: set[tuple[str, int]] = set()
    for batch in batches:
        for row, piece in zip(batch.rows, batch.pieces, strict=True):
            if row.session_id not in floors:
                known = db.execute(
                    "SELECT 1 FROM sessions WHERE session_id = ?", (row.session_id,)
                ).fetchone()
                (top,) = db.execute(
                    "SELECT max(idx) FROM events WHERE session_id = ?", (row.session_id,)
                ).fetchone()
                floors[row.session_id] = (top or 0) if known else None
            floor = floors[row.session_id]
            if floor is None or row.idx <= floor:
                continue
            rows.append(row)
            pieces.append(piece)
            kept.add((row.session_id, row.idx))
    refs = [ref for batch in batches for ref in batch.refs if (ref.session_id, ref.idx) in kept]
    db.executemany("INSERT OR REPLACE INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    TextIndex().add(db, rows, pieces, every=True)
    blobs.insert(db, refs)


def delete_rows(db: sqlite3.Connection, session_id: str) -> None:
    """A session's record and events, in the caller's transaction (whether another
    goose-ls has it open, in ``holders``, is that process's to say)."""
    for table in ("events", "event_blobs", "last_active", "sessions"):
        db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
    search.forget(db, session_id)
    blobs.drop_unused(db)


def _upsert(db: sqlite3.Connection, record: SessionRecord) -> None:
    values = attrs.asdict(record)
    names = ", ".join(values)
    marks = ", ".join(f":{name}" for name in values)
    db.execute(f"INSERT OR REPLACE INTO sessions ({names}) VALUES ({marks})", values)


def _record(row: sqlite3.Row) -> SessionRecord:
    values = dict(row)
    values["title_from_agent"] = bool(values["title_from_agent"])
    return SessionRecord(**values)
