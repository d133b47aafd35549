"""The agent's ``$/cancel_request`` for a request goose-ls serves, whenever it comes."""

from __future__ import annotations

import asyncio

import pytest
from acp import RequestError

from goose_ls.agent.acp.cancelling import EARLY_KEPT, SERVING, Serving
from goose_ls.tasks import within


async def _serve(serving: Serving, request_id: int, work: asyncio.Future[str]) -> str:
    SERVING.set(request_id)  # as the transport does before the SDK starts the task
    return await serving.run(work)


async def test_withdrawn_work_stops_and_is_answered_cancelled() -> None:
    serving = Serving()
    never: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(_serve(serving, 7, never))
    await asyncio.sleep(0)
    serving.withdraw({"requestId": 7})
    with pytest.raises(RequestError) as answered:
        await within(5, task)
    assert answered.value.code == -32800 and never.cancelled()


async def test_a_request_withdrawn_before_its_work_starts_ends_when_it_starts() -> None:
    serving = Serving()
    task = asyncio.create_task(_serve(serving, 8, asyncio.Future()))
    serving.withdraw({"requestId": 8})  # read right after the request: its task not run yet
    with pytest.raises(RequestError) as answered:
        await within(5, task)  # without the early withdrawal it would wait for ever
    assert answered.value.code == -32800


async def test_unknown_ids_are_forgotten_in_time_and_others_run() -> None:
    serving = Serving()
    for request_id in range(EARLY_KEPT + 1):
        serving.withdraw({"requestId": request_id})
    done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    done.set_result("served")
    assert await _serve(serving, 0, done) == "served", "the oldest withdrawn id is forgotten"
    serving.withdraw({"requestId": "not an id we serve"})
    serving.withdraw({"nonsense": True})
