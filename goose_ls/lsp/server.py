"""The pygls server goose-ls runs: its protocol, its background work, its last words.

It knows nothing of goose-ls's features; :mod:`goose_ls.lsp.app` registers them, and
they receive what they need instead of reaching into this class.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
import threading
from collections.abc import Callable
from typing import BinaryIO

from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer

from goose_ls import __version__
from goose_ls.lsp.wire.jsonrpc import GooseProtocol
from goose_ls.tasks import Tasks

log = logging.getLogger(__name__)


class GooseLanguageServer(LanguageServer):
    protocol: GooseProtocol

    def __init__(self) -> None:
        super().__init__("goose-ls", __version__, protocol_cls=GooseProtocol)
        self.tasks = Tasks()
        """Every background task of this server (see :mod:`goose_ls.tasks`)."""
        self.exit_code = 0
        self._on_exit: list[Callable[[], None]] = []

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve the editor over stdio. pygls reads each message with three reads in a
        thread of its pool (a header, the blank line, the body), each a hand-over to the
        thread and back; a pipe or a socket is read on the event loop instead. A terminal
        or a file stays with pygls: made non-blocking, a terminal would stay so for the
        shell after goose-ls."""
        source = stdin or sys.stdin.buffer
        if not _pipe_or_socket(source):
            super().start_io(stdin, stdout)
            return
        self._stop_event = threading.Event()  # what pygls' shutdown sets to end the loop
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(self.serve_pipe(source))
        except BrokenPipeError:
            log.error("the connection to the editor is lost; stopping")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    async def serve_pipe(self, source: BinaryIO) -> None:
        assert self._stop_event is not None
        reader = asyncio.StreamReader(limit=MAX_HEADER_LINE)
        protocol = asyncio.StreamReaderProtocol(reader)
        await asyncio.get_running_loop().connect_read_pipe(lambda: protocol, source)
        await run_async(
            stop_event=self._stop_event,
            reader=_PipeReader(reader),
            protocol=self.protocol,
            logger=log,
            error_handler=self.report_server_error,
        )

    def on_exit(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` when goose-ls stops for any reason, even without its event loop."""
        self._on_exit.append(hook)

    def stop_now(self) -> None:
        """The last words: stop the agent, keep what is known. Synchronous, runs once."""
        hooks, self._on_exit = self._on_exit, []
        for hook in hooks:
            with contextlib.suppress(Exception):
                hook()

    async def drain(self) -> None:
        """Cancel the background work and wait for it (at ``shutdown``: ``exit`` cannot
        wait, as pygls reads the editor's next message as soon as its handler awaits).

        Left to the end of ``asyncio.run``, a task would be cancelled after its owner is
        gone, and whatever it does then (write to the editor, log a failure) would
        happen in a closing loop. What still runs after the drain has no owner; it is
        logged by name (there should be none).
        """
        cancelled = await self.tasks.cancel_all()
        left = sorted(_describe(t) for t in asyncio.all_tasks() if not _ours_to_leave(t))
        log.info(
            "at shutdown: %d background tasks cancelled (%s); %d tasks still running (%s)",
            len(cancelled),
            ", ".join(cancelled),
            len(left),
            ", ".join(left),
        )


MAX_HEADER_LINE = 1 << 16
"""The longest header line read (a message's body may be any length)."""


def _pipe_or_socket(source: BinaryIO) -> bool:
    try:
        mode = os.fstat(source.fileno()).st_mode
    except (OSError, ValueError):  # no descriptor (a test's stream), or closed
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _PipeReader:
    """The editor's messages read on the event loop, as pygls' loop asks for them (at
    the end of the input: what came of it, or nothing)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._handled = False

    async def readline(self) -> bytes:
        if self._handled:
            # What the last message started (a handler's task: settings applied, a turn
            # queued) runs before the next is read, as it did while each read waited for
            # a thread: a request right behind a notification sees its effect.
            self._handled = False
            await asyncio.sleep(0)
        try:
            return await self._reader.readline()
        except ValueError:  # a header line past the limit: not LSP
            log.error("the editor sent a header line over %d bytes; stopping", MAX_HEADER_LINE)
            return b""

    async def readexactly(self, n: int) -> bytes:
        self._handled = True  # pygls handles the body before it asks for a line again
        try:
            return await self._reader.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            return exc.partial


def _ours_to_leave(task: asyncio.Task[object]) -> bool:
    """The task draining, and pygls' loop reading the editor's messages."""
    code = getattr(task.get_coro(), "cr_code", None)
    readers = (run_async.__code__, GooseLanguageServer.serve_pipe.__code__)
    return task is asyncio.current_task() or code in readers


def _describe(task: asyncio.Task[object]) -> str:
    coro = task.get_coro()
    return f"{task.get_name()} {getattr(coro, '__qualname__', coro)}"
