"""Waiting with a time limit never loses a cancellation (asyncio.wait_for can, < 3.12)."""

from __future__ import annotations

import asyncio

import pytest

from goose_ls.tasks import within


async def _loop_on(event: asyncio.Event) -> None:
    """A background loop like the transcript streamer's: wait for news, handle it."""
    while True:
        await within(10, event.wait())
        event.clear()


async def test_a_cancellation_arriving_as_the_wait_ends_stops_the_loop() -> None:
    event = asyncio.Event()
    loop = asyncio.create_task(_loop_on(event))
    await asyncio.sleep(0)  # the loop is waiting
    event.set()  # its wait ends in the next step...
    loop.cancel()  # ...in which the cancellation arrives too
    done, _ = await asyncio.wait({loop}, timeout=2)
    assert loop in done and loop.cancelled()


async def test_the_result_or_a_timeout_that_cancels_the_work() -> None:
    assert await within(1, asyncio.sleep(0, "done")) == "done"
    work = asyncio.ensure_future(asyncio.sleep(10))
    with pytest.raises(asyncio.TimeoutError):
        await within(0.01, work)
    assert work.cancelled()


async def test_a_cancelled_wait_cancels_its_work() -> None:
    work = asyncio.ensure_future(asyncio.sleep(10))
    waiting = asyncio.create_task(within(10, work))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert work.cancelled()
