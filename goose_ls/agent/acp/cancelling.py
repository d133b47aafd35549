"""``$/cancel_request`` both ways: a request one side gave up is withdrawn at the other.

goose-ls gives up a request to the agent when the editor cancels the goose/* request
waiting on it (LSP's ``$/cancelRequest``) or when it times out; the agent is then told,
so it can stop the work (``session/load`` of a long chat, a slow ``session/list``).
The agent may withdraw a request goose-ls is serving (a permission card waiting for the
user, a file being read); goose-ls stops that work and answers ``-32800``, as the
protocol asks: every request is answered, withdrawn or not.

The SDK numbers requests and runs each incoming one in a task of its own without saying
which id it serves, so the ids are caught where messages pass goose-ls's transport:
:data:`SENDING` carries a :class:`Ticket` into the task that sends a request, and
:data:`SERVING` the id of the request whose handler task the SDK is about to start.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import attrs
from acp import RequestError

log = logging.getLogger(__name__)

T = TypeVar("T")

CANCEL_REQUEST = "$/cancel_request"
REQUEST_CANCELLED = -32800

RequestId = int | str

EARLY_KEPT = 64
"""Withdrawn ids kept for requests whose work has not started (a few at most; unknown ids
would otherwise grow it)."""

Withdraw = Callable[[RequestId], None]
"""Tells the agent goose-ls gave up one of its requests (``$/cancel_request``)."""


@attrs.define
class Ticket:
    """Filled with the id of the first request sent from the task that carries it."""

    request_id: RequestId | None = None


SENDING: contextvars.ContextVar[Ticket | None] = contextvars.ContextVar("SENDING", default=None)
SERVING: contextvars.ContextVar[RequestId | None] = contextvars.ContextVar("SERVING", default=None)


def note_sent(message: dict[str, Any]) -> None:
    """A message is going to the agent: a request's id goes on the sender's ticket."""
    ticket = SENDING.get()
    if ticket is not None and ticket.request_id is None and "method" in message:
        request_id = message.get("id")
        if isinstance(request_id, (int, str)):
            ticket.request_id = request_id


class Serving:
    """The agent's requests goose-ls is working on, by id, so the agent can withdraw one."""

    def __init__(self) -> None:
        self._work: dict[RequestId, asyncio.Future[Any]] = {}
        self._withdrawn: set[RequestId] = set()
        self._early: collections.deque[RequestId] = collections.deque(maxlen=EARLY_KEPT)
        """Ids withdrawn before their work began (its task had not run yet)."""

    async def run(self, work: Awaitable[T]) -> T:
        """Do ``work`` for the request being served; withdrawn, it ends with -32800."""
        request_id = SERVING.get()
        if request_id is None or request_id in self._work:
            return await work
        if request_id in self._early:  # withdrawn while its task waited to start
            self._early.remove(request_id)
            if asyncio.iscoroutine(work):
                work.close()
            raise RequestError(REQUEST_CANCELLED, "Request cancelled")
        future = asyncio.ensure_future(work)
        self._work[request_id] = future
        try:
            return await future
        except asyncio.CancelledError:
            if request_id not in self._withdrawn:
                raise
            raise RequestError(REQUEST_CANCELLED, "Request cancelled") from None
        finally:
            del self._work[request_id]
            self._withdrawn.discard(request_id)

    def withdraw(self, params: Any) -> None:
        """The agent's ``$/cancel_request``: stop the work for that id (unknown: ignored)."""
        request_id = params.get("requestId") if isinstance(params, dict) else None
        future = self._work.get(request_id) if isinstance(request_id, (int, str)) else None
        if future is None or future.done():
            # Its task may not have started yet (the withdrawal read right after the
            # request): remembered, it ends at once when it starts.
            log.debug("the agent withdrew request %r, which is not being served", request_id)
            if future is None and isinstance(request_id, (int, str)):
                self._early.append(request_id)
            return
        log.info("the agent withdrew its request %r", request_id)
        self._withdrawn.add(request_id)  # type: ignore[arg-type]
        future.cancel()
