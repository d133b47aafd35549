"""The one owner of goose-ls's background work.

asyncio keeps only a weak reference to a task: one nobody holds can be collected while it
runs, and an exception in one nobody awaits is lost. Every background task goes through
:meth:`Tasks.run`, which holds it until it ends, logs a failure with its name, and can
cancel everything still running when goose-ls stops.

A :class:`~goose_ls.errors.GooseLsError` is a problem already reported to the user by
whoever raised or awaited it: it is logged as one line. Anything else is a bug, logged
with its traceback.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

from goose_ls.errors import GooseLsError

log = logging.getLogger(__name__)
T = TypeVar("T")


class Tasks:
    def __init__(self) -> None:
        self._running: set[asyncio.Task[Any]] = set()

    def run(self, work: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        """Start ``work`` in the background; it is kept, and its failure logged, by name."""
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._running.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._running.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if isinstance(error, GooseLsError):
            log.info("%s: %s", task.get_name(), error)
        elif error is not None:
            log.error("%s failed", task.get_name(), exc_info=error)

    def __len__(self) -> int:
        return len(self._running)

    async def cancel_all(self) -> None:
        """Cancel whatever still runs and wait for it to finish."""
        running = [t for t in self._running if t is not asyncio.current_task()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
