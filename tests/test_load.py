"""Load: 20 sessions streaming 2,000 chunks each at once through one goose-ls."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from support.harness import Editor, start_editor, stop_editor

SESSIONS = 20
CHUNKS = 2000
PIECE = 6
"""Each chunk is its own number, zero-padded and ended by ';': 6 characters."""


async def _memory(editor: Editor) -> dict[str, float]:
    status = await editor.goose.request("goose/status", {})
    return dict(status["memory"])


async def _warm_up(editor: Editor) -> None:
    """One small chat opened and closed, so that what gets loaded once is loaded."""
    session_id = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(session_id, "warm up"))
    await editor.goose.request("goose/closeSession", {"sessionId": session_id})


@pytest_asyncio.fixture
async def unbuffered(tmp_path: Path) -> AsyncIterator[Editor]:
    """goose-ls run by a Python told to write unbuffered, as many shells and containers set
    it: stdout is then the raw pipe, where a write cut short by a signal (the turns'
    snapshots start many git processes) once lost the rest of a message."""
    session = await start_editor(tmp_path, PYTHONUNBUFFERED="1")
    yield session
    await stop_editor(session)


async def test_twenty_sessions_at_once_each_event_once_in_order(unbuffered: Editor) -> None:
    editor = unbuffered
    text = "".join(f"{n:05d};" for n in range(CHUNKS))
    await editor.start(
        {
            "turns": [[{"text": text, "chunks": CHUNKS}]],
            "byPrompt": {"warm up": [{"text": "ready", "chunks": 50}]},
        },
    )
    await _warm_up(editor)
    baseline = await _memory(editor)

    sessions = [await editor.new_session() for _ in range(SESSIONS)]
    messages = await asyncio.gather(*(editor.prompt(s, "stream") for s in sessions))
    for message_id in messages:
        end = await editor.goose.turn_end(message_id, timeout=300)
        assert end["stopReason"] == "end_turn"
    peak = await _memory(editor)

    for session_id, message_id in zip(sessions, messages, strict=True):
        updates = [
            u
            for u in editor.goose.updates
            if u["sessionId"] == session_id and u.get("messageId") == message_id
        ]
        pieces = [
            u["update"]["content"]["text"]
            for u in updates
            if u["update"]["sessionUpdate"] == "agent_message_chunk"
        ]
        # Chunks read in a row come joined, each whole: every one once, in order.
        assert "".join(pieces) == text, "each chunk once, in order"
        assert all(len(piece) % 6 == 0 for piece in pieces), "no chunk cut"
        indices = [u["index"] for u in updates]
        assert indices == sorted(set(indices)), "indices rise, none repeated"

    for session_id in sessions:
        await editor.goose.request("goose/closeSession", {"sessionId": session_id})
    await _warm_up(editor)  # the same work as before the baseline, after the close
    after = await _memory(editor)
    for key in ("allocatedBlocks", "rssMb"):
        print(f"{key}: baseline {baseline[key]}, streaming {peak[key]}, closed {after[key]}")
    grown = peak["allocatedBlocks"] - baseline["allocatedBlocks"]
    kept = after["allocatedBlocks"] - baseline["allocatedBlocks"]
    # Each event held in memory would cost several blocks (the event, its content, its
    # number); the journal holds them instead.
    assert grown < SESSIONS * CHUNKS / 4, "streamed events are not kept in memory"
    assert kept < 100 * SESSIONS, "a closed session leaves at most its record behind"
