"""The journal's log: each batch of events appended to a file before the editor is sent it.

A SQLite commit after a pause of 10 ms costs 0.3 ms of CPU (its caches gone cold); one
``os.write`` to an append-only file costs about 15 µs, and what it wrote stays in the page
cache through a kill -9. So the events a write to the editor carries are appended here
first, one record per batch, and the writer thread commits what the log holds to the
journal every half second (``COMMIT_SECONDS`` in :mod:`.library`), then empties the log. A process that dies leaves its log
behind: the next goose-ls to start on the data dir folds it into the journal (the rows the
journal lacks) and removes it.

Each process has logs of its own (two files, named by the process as no other will ever
be: see :mod:`goose_ls.process_identity`), so windows sharing a data dir never share a
log, and a window never folds the log of one still running. While the thread commits
what one file holds, new records go to the other one, so that it can be emptied once the
commit is made. A record is one line: the CRC-32 of its JSON, a space, the JSON; a record
cut short by a kill (or spoiled) ends the reading of its file.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
import zlib
from pathlib import Path
from typing import NamedTuple

from goose_ls.atomic_files import PRIVATE_FILE
from goose_ls.process_identity import this_process
from goose_ls.sessions.journal.blobs import BlobRef
from goose_ls.sessions.journal.records import EventRow
from goose_ls.sessions.journal.texts import Piece

log = logging.getLogger(__name__)

NAME = re.compile(r"journal\.(\d+)-(\d*)@(.+)\.([01])\.log")
"""A log's name: ``journal.<pid>-<when the pid started>@<host>.<0 or 1>.log``."""

_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode


class Logged(NamedTuple):
    """One batch of events as it was logged: what its commit writes."""

    seq: int
    """Its place among the batches this process logged (1 first)."""
    rows: list[EventRow]
    pieces: list[Piece | None]
    refs: list[BlobRef]


def _name(process: str, number: int) -> str:
    host, _, rest = process.partition(":")
    pid, _, started = rest.partition(":")
    host = re.sub(r"[^\w.-]", "_", host)
    return f"journal.{pid}-{started}@{host}.{number}.log"


def _line(batch: Logged) -> bytes:
    body = _encode(
        [
            batch.seq,
            batch.rows,
            batch.pieces,
            [
                (r.session_id, r.idx, r.sha256, r.data.decode("utf-8", "surrogatepass"))
                for r in batch.refs
            ],
        ]
    ).encode("utf-8", "surrogatepass")
    return b"%08x %s\n" % (zlib.crc32(body), body)


def _batch(line: bytes) -> Logged | None:
    """The batch a line holds; None when it is cut short or spoiled."""
    crc, _, body = line.partition(b" ")
    try:
        if int(crc, 16) != zlib.crc32(body):
            return None
        seq, rows, pieces, refs = json.loads(body.decode("utf-8", "surrogatepass"))
        return Logged(
            int(seq),
            [EventRow(*row) for row in rows],
            [None if piece is None else Piece(*piece) for piece in pieces],
            [
                BlobRef(sid, int(idx), str(sha), str(data).encode("utf-8", "surrogatepass"))
                for sid, idx, sha, data in refs
            ],
        )
    except (ValueError, TypeError) as exc:
        log.warning("a journal log record is unreadable: %s", exc)
        return None


def read(path: Path) -> list[Logged]:
    """The batches a log holds, up to the first one cut short or spoiled."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        log.warning("cannot read the journal log %s: %s", path, exc)
        return []
    found: list[Logged] = []
    lines = data.split(b"\n")
    for line in lines[:-1]:  # the last: after the final newline (empty), or cut short
        batch = _batch(line)
        if batch is None:
            log.warning("the journal log %s is cut short after %d records", path, len(found))
            break
        found.append(batch)
    else:
        if lines[-1]:
            log.warning("the journal log %s ends in a record cut short", path)
    return found


def logs_of_others(folder: Path) -> dict[str, list[Path]]:
    """The logs in ``folder`` of processes other than this one, by process."""
    me = this_process()
    found: dict[str, list[Path]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            match = NAME.fullmatch(entry.name)
            if match is None or not entry.is_file(follow_symlinks=False):
                continue
            pid, started, host = match.group(1, 2, 3)
            process = f"{host}:{pid}:{started}"
            if process != me:
                found.setdefault(process, []).append(Path(entry.path))
    return found


class Spool:
    """This process's log: appended to on the event loop, emptied by whoever commits."""

    def __init__(self, folder: Path) -> None:
        me = this_process()
        self._paths = [folder / _name(me, number) for number in (0, 1)]
        self._files: list[int | None] = [None, None]
        self._sizes = [0, 0]
        self._tops = [0, 0]
        """The last batch each file holds (0: none)."""
        self._current = 0
        """The file records are appended to."""
        self._seq = 0
        self._lock = threading.Lock()
        self.unwritten: list[Logged] = []
        """Batches logged and not committed yet, oldest first."""
        self._lengths: list[int] = []
        """The length of each unwritten batch's record."""
        self.unwritten_bytes = 0

    def append(self, rows: list[EventRow], pieces: list[Piece | None], refs: list[BlobRef]) -> None:
        """Log a batch with one write. Raises OSError when it cannot be (a full disk):
        nothing of it is left in the file then."""
        batch = Logged(self._seq + 1, rows, pieces, refs)
        line = _line(batch)
        with self._lock:
            number = self._current
            fd = self._files[number]
            try:
                if fd is None:
                    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | _NO_FOLLOW
                    fd = self._files[number] = os.open(self._paths[number], flags, PRIVATE_FILE)
                written = os.write(fd, line)
                if written != len(line):
                    raise OSError(f"{written} of {len(line)} bytes written")
            except OSError:
                if fd is not None:
                    with contextlib.suppress(OSError):  # no record cut short left behind
                        os.ftruncate(fd, self._sizes[number])
                raise
            self._seq = batch.seq
            self._sizes[number] += len(line)
            self._tops[number] = batch.seq
            self.unwritten.append(batch)
            self._lengths.append(len(line))
            self.unwritten_bytes += len(line)

    def taken(self) -> list[Logged]:
        """The batches to commit now (they stay unwritten until :meth:`committed`); new
        records go to the other file from now on, if it is empty."""
        with self._lock:
            other = 1 - self._current
            if not self._tops[other]:
                self._current = other
            return list(self.unwritten)

    def committed(self, batches: list[Logged]) -> None:
        """``batches`` (from :meth:`taken`) are in the journal: each file that holds no
        other batch is emptied."""
        if not batches:
            return
        with self._lock:
            del self.unwritten[: len(batches)]
            self.unwritten_bytes -= sum(self._lengths[: len(batches)])
            del self._lengths[: len(batches)]
            last = batches[-1].seq
            for number, fd in enumerate(self._files):
                if fd is not None and 0 < self._tops[number] <= last:
                    try:
                        os.ftruncate(fd, 0)
                    except OSError as exc:  # folded again later: no row twice
                        log.warning("cannot empty the journal log: %s", exc)
                        continue
                    self._tops[number] = self._sizes[number] = 0

    def close(self) -> None:
        """Close the files, and remove them when every batch is in the journal (else the
        next goose-ls folds them)."""
        with self._lock:
            for number, fd in enumerate(self._files):
                if fd is None:
                    continue
                os.close(fd)
                self._files[number] = None
                if not self._tops[number]:
                    with contextlib.suppress(OSError):
                        os.unlink(self._paths[number])


def batches_in(paths: list[Path]) -> list[Logged]:
    """The batches a dead process's logs hold, in the order it logged them."""
    found: list[Logged] = []
    for path in paths:
        found += read(path)
    return sorted(found, key=lambda batch: batch.seq)
