"""One request to the agent awaited: at most its time, and no longer than the agent lives.

A request given up (its caller cancelled, or its time up) is withdrawn at the agent, and
an error the agent answers becomes an :class:`AgentError` with a message for the user.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar, cast

from acp import RequestError

from goose_ls.agent.acp.cancelling import SENDING, Ticket, Withdraw
from goose_ls.agent.transport.frames import READER_GRACE
from goose_ls.errors import AgentError, AgentGone
from goose_ls.tasks import within

T = TypeVar("T")


async def call_agent(
    method: str,
    request: Awaitable[T],
    timeout: float | None,
    gone: asyncio.Future[str],
    withdraw: Withdraw | None = None,
) -> T:
    """Await ``request``; fail at once if the agent dies (``gone``) and after ``timeout``.
    A request given up (this task cancelled, or timed out) is ``withdraw``-n at the agent."""
    if gone.done():
        if asyncio.iscoroutine(request):
            request.close()
        raise AgentGone(gone.result())
    ticket = Ticket()
    sending = SENDING.set(ticket)  # the task below inherits it, and sends the request
    try:
        task: asyncio.Future[Any] = asyncio.ensure_future(request)
    finally:
        SENDING.reset(sending)
    watcher: asyncio.Future[Any] = asyncio.ensure_future(asyncio.shield(gone))

    def give_up() -> None:
        if not task.done() and ticket.request_id is not None and withdraw is not None:
            withdraw(ticket.request_id)
        task.cancel()

    try:
        done, _ = await asyncio.wait(
            {task, watcher}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
    except asyncio.CancelledError:
        give_up()
        raise
    finally:
        watcher.cancel()
    if task in done:
        try:
            return cast(T, task.result())
        except RequestError as exc:
            raise AgentError(_describe_request_error(method, exc), exc.code) from exc
        except ConnectionError:
            raise AgentGone(await _reason_gone(gone)) from None
    if gone.done():
        task.cancel()
        raise AgentGone(gone.result())
    give_up()
    raise AgentError(f"the agent did not answer {method} within {timeout:g} s")


async def _reason_gone(gone: asyncio.Future[str]) -> str:
    # The pipe closes a moment before the exit status is known, and an agent that closed
    # its output but lives on is killed after READER_GRACE: wait for that.
    try:
        return await within(READER_GRACE + 2.0, asyncio.shield(gone))
    except asyncio.TimeoutError:
        return "the connection to the agent was lost"


def _describe_request_error(method: str, exc: RequestError) -> str:
    data = exc.data
    detail = (
        data
        if isinstance(data, str)
        else (data or {}).get("details")
        if isinstance(data, dict)
        else None
    )
    text = f"{method} failed: {exc}"
    if detail and str(detail) not in text:
        text += f" ({detail})"
    return text
