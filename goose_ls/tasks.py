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
from collections.abc import Awaitable, Coroutine
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

    async def cancel_all(self) -> list[str]:
        """Cancel whatever still runs and wait for it to finish; the names of what was
        cancelled."""
        running = [t for t in self._running if t is not asyncio.current_task()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        return sorted(t.get_name() for t in running)


async def within(seconds: float | None, work: Awaitable[T]) -> T:
    """``work``'s result, or :class:`asyncio.TimeoutError` after ``seconds`` (``work`` is
    then cancelled and waited for); ``None`` waits as long as it takes.

    Not ``asyncio.wait_for``: before Python 3.12 it returns the result of work that ends
    just as the caller is cancelled, and the cancellation is lost; a loop around it then
    never stops, and neither does goose-ls when its editor leaves.
    """
    task = asyncio.ensure_future(work)
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        await asyncio.wait({task})  # our own cancellation still comes through here
        raise asyncio.TimeoutError
    return task.result()


def uncancelled(request: Awaitable[T]) -> Awaitable[T]:
    """A request sent to the editor, to await without cancelling it when the wait is
    given up (:func:`within`): pygls reports an answer that comes after its request was
    cancelled as an error of the server, which the editor then shows (to a person who
    was slow to answer the editor's own question, say)."""
    pending = asyncio.ensure_future(request)
    pending.add_done_callback(_answered)
    return asyncio.shield(pending)


def _answered(answer: asyncio.Future[Any]) -> None:
    """A late error answer is nobody's: read, so asyncio does not log it as lost."""
    if not answer.cancelled():
        answer.exception()
