"""The journal's writer thread: batches of events committed off the event loop.

A streamed reply's events are written with a connection of the thread's own (SQLite lets
go of the GIL while it writes), so that the loop goes on reading the agent meanwhile. A
job may carry what the editor is to be sent with the events: the thread sends it once
they are committed, so the editor is never sent anything the journal lacks, and what the
editor is sent keeps its order (a job without events only keeps that order). The loop
waits for the thread (:meth:`JournalThread.wait`) before it reads or writes the journal
itself: no reader sees a journal older than what was streamed.
"""

from __future__ import annotations

import collections
import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import attrs

from goose_ls.sessions.journal import schema

log = logging.getLogger(__name__)

MAX_WAITING = 8
"""Jobs the thread may be behind by; the loop waits beyond it (an editor that does not
read its pipe holds the thread, and then the loop, as it held the loop before)."""

Change = Callable[[sqlite3.Connection], None]


@attrs.frozen
class Job:
    change: Change | None
    """Written in one transaction; None: nothing to write, only ``then`` to keep in order."""
    then: Callable[[], None] | None
    """Run after the transaction, whether it was committed or not (the editor hears of
    the events either way, as it did when a full disk failed a write on the loop)."""
    failed: Callable[[sqlite3.Error], None]
    """Told of a transaction that could not be made (in the thread)."""


class JournalThread:
    """One thread, one connection, jobs in order."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._jobs: collections.deque[Job] = collections.deque()
        self._changed = threading.Condition()
        self._waiting = 0
        """Jobs submitted and not finished."""
        self._db: sqlite3.Connection | None = None
        self._reconnect = False
        self._thread: threading.Thread | None = None
        self._stopping = False

    @property
    def busy(self) -> bool:
        return self._waiting > 0

    def submit(self, job: Job) -> None:
        with self._changed:
            while self._waiting >= MAX_WAITING:
                self._changed.wait()
            self._jobs.append(job)
            self._waiting += 1
            self._changed.notify_all()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="journal", daemon=True)
            self._thread.start()

    def wait(self) -> None:
        """Until every job submitted is done."""
        if not self._waiting:
            return
        with self._changed:
            while self._waiting:
                self._changed.wait()

    def reconnect(self) -> None:
        """The journal's file changed (made again, back from a stand-in): the next job
        opens it anew."""
        self.wait()
        self._reconnect = True

    def stop(self) -> None:
        self.wait()
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._jobs and not self._stopping:
                    self._changed.wait()
                if not self._jobs:  # stopping, nothing left
                    self._close()
                    return
                job = self._jobs[0]
            try:
                self._do(job)
            finally:
                with self._changed:
                    self._jobs.popleft()
                    self._waiting -= 1
                    self._changed.notify_all()

    def _do(self, job: Job) -> None:
        if job.change is not None:
            try:
                db = self._connection()
                with schema.transaction(db):
                    job.change(db)
            except sqlite3.Error as exc:
                job.failed(exc)
            except Exception:  # a bug: the events are given up, the editor still told
                log.exception("cannot journal a batch of events")
        if job.then is not None:
            try:
                job.then()
            except Exception:
                log.exception("cannot send what a journaled batch carried")

    def _connection(self) -> sqlite3.Connection:
        if self._reconnect:
            self._close()
            self._reconnect = False
        if self._db is None:
            self._db = schema.connect_writer(self._path)
        return self._db

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
