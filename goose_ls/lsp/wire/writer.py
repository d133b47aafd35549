"""Fewer, larger writes to the editor's pipe.

pygls writes and flushes every message on its own: a streamed reply of 10,000 chunks
costs 10,000 system calls. Messages sent during one turn of the event loop are
gathered here and written together at its end, in the order they were sent, so
nothing waits longer than the work already queued in that turn.

They go to the pipe by its file descriptor, every byte of them: pygls writes to
``sys.stdout.buffer``, which is the raw file when Python runs unbuffered
(``PYTHONUNBUFFERED=1``, set in many shells and containers), and a raw write cut short by a
signal while the editor's pipe was full dropped the rest of the batch: the editor read
half a message and then garbage.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger(__name__)


class Writer(Protocol):
    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class PipeWriter:
    """A file descriptor written in full: a short write goes on where it stopped, and a
    pipe an editor left non-blocking is waited on rather than dropped."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes) -> None:
        left = memoryview(data)
        while left:
            try:
                written = os.write(self._fd, left)
            except BlockingIOError:
                select.select([], [self._fd], [])
                continue
            left = left[written:]

    def close(self) -> None:
        """The descriptor is the process's stdout: it closes when goose-ls exits."""


Through = Callable[[Callable[[], None], int], bool]
"""Given a write (and its size) about to be made: the journal writes the events it
carries first, and takes the write to make it itself once they are (True), or has
written them already (False: the write is made now)."""


class GatheringWriter:
    def __init__(self, inner: Writer, through: Through | None = None) -> None:
        """``through`` sees each write first: whatever the editor is sent is journaled
        first, and a kill after the write loses nothing the user saw."""
        self._inner = inner
        self._through = through
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if self._pending:  # a flush is on its way: the loop is asked once a batch
            self._pending.append(data)
            return
        self._pending.append(data)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the event loop (start-up, exit): write in order, now
            self.flush()
            return
        loop.call_soon(self.flush)

    def flush(self) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        if self._through is not None:
            try:
                if self._through(lambda: self._send(data), len(data)):
                    return
            except Exception:  # the editor still hears of it, journaled or not
                log.exception("could not journal before writing to the editor")
        self._send(data)

    def _send(self, data: bytes) -> None:
        try:
            self._inner.write(data)
        except OSError as exc:  # the editor left; reading stdin ends the server
            log.warning("could not write to the editor: %s", exc)

    def close(self) -> None:
        self.flush()
        self._inner.close()
