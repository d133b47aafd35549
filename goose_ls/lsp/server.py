"""The pygls server goose-ls runs: its protocol, its background work, its last words.

It knows nothing of goose-ls's features; :mod:`goose_ls.lsp.app` registers them, and
they receive what they need instead of reaching into this class.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from pygls.io_ import run_async
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


def _ours_to_leave(task: asyncio.Task[object]) -> bool:
    """The task draining, and pygls' loop reading the editor's messages."""
    code = getattr(task.get_coro(), "cr_code", None)
    return task is asyncio.current_task() or code is run_async.__code__


def _describe(task: asyncio.Task[object]) -> str:
    coro = task.get_coro()
    return f"{task.get_name()} {getattr(coro, '__qualname__', coro)}"
