"""Large tool outputs are kept once in the journal, and read back as they were sent."""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path

from goose_ls.sessions.journal import blobs
from goose_ls.sessions.journal.blobs import BLOB_THRESHOLD, BlobRef
from goose_ls.sessions.journal.records import EventRow, to_json
from goose_ls.sessions.journal.store import SessionStore

ODD = 'a "quoted" \\ back\\slash, naïve “typographic”, 🦆, tab\t, nul \x00, newline\n'
BIG = (ODD * (BLOB_THRESHOLD // len(ODD) + 2))[: BLOB_THRESHOLD + 1]


def _update(text: str, old: str = "old", status: str = "in_progress") -> dict[str, object]:
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": status,
        "content": [
            {"type": "content", "content": {"type": "text", "text": text}},
            {"type": "diff", "path": "/w/a.txt", "oldText": old, "newText": text},
            {"type": "terminal", "terminalId": "t1"},
        ],
        "rawInput": {"text": text[:10], "n": 1.5, "big": 10**30},
    }


def test_large_texts_are_set_aside_and_put_back_exactly() -> None:
    update = _update(BIG, old=BIG + "!")
    before = copy.deepcopy(update)
    stripped, texts = blobs.set_aside(update)
    assert update == before, "the event the session holds is not touched"
    assert len(texts) == 2 and len(to_json(stripped)) < 1000
    assert blobs.restore(to_json(stripped), texts) == to_json(update)


def test_small_texts_and_other_events_stay_in_the_payload() -> None:
    small = _update("x" * BLOB_THRESHOLD)
    assert blobs.set_aside(small) == (small, {})
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": BIG}}
    assert blobs.set_aside(chunk) == (chunk, {})


def _store(tmp_path: Path) -> SessionStore:
    store = SessionStore(tmp_path / "journal.sqlite3", lambda path, error: None)
    store.load()
    return store


def _append(store: SessionStore, idx: int, update: dict[str, object]) -> str:
    stripped, texts = blobs.set_aside(update)
    refs = [BlobRef("s1", idx, digest, data) for digest, data in texts.items()]
    store.append(
        [EventRow("s1", idx, "m1", "tool_call_update", to_json(stripped), "t")], [None], refs
    )
    return to_json(update)


def test_an_output_repeated_ten_times_is_stored_once(tmp_path: Path) -> None:
    store = _store(tmp_path)
    sent = [_append(store, idx, _update(BIG, status=f"s{idx}")) for idx in range(1, 11)]
    sent.append(_append(store, 11, _update("small")))
    assert [row.payload for row in store.events("s1")] == sent
    assert [row.payload for row in store.events("s1", after=9)] == sent[9:]
    db = sqlite3.connect(store.path)
    assert db.execute("SELECT COUNT(*) FROM blobs").fetchone() == (1,)
    total = db.execute("SELECT SUM(length(payload)) FROM events").fetchone()[0]
    assert total < 11 * 1000, "the events hold references, not the output"


def test_unused_texts_are_dropped(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _append(store, 1, _update(BIG))
    db = sqlite3.connect(store.path, isolation_level=None)
    db.execute("DELETE FROM event_blobs")
    blobs.drop_unused(db)
    assert db.execute("SELECT COUNT(*) FROM blobs").fetchone() == (0,)
