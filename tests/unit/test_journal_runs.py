"""Text chunks are journaled a run to a row, and read back one event each, as sent.

The tests run in an event loop, as goose-ls journals: without one, each event is written
at once (goose-ls stopping), and no run forms."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from goose_ls import events
from goose_ls.sessions.journal.library import RUN_LIMIT, SessionLibrary
from goose_ls.sessions.journal.records import chunk_payload, json_string, run_row, to_json
from goose_ls.sessions.session import IndexedEvent

TEXTS = ["Hé", "", "llo, ", "wörld 🌍", "\n", '"quoted" \\ back', "end"]


def _library(tmp_path: Path) -> SessionLibrary:
    library = SessionLibrary(tmp_path, lambda path, error: None)
    library.created("s1", "/w", "goose")
    return library


def _observe(library: SessionLibrary, index: int, event: events.SessionEvent, **kw: object) -> None:
    message_id = str(kw.get("message_id", "m1"))
    replay = bool(kw.get("replay", False))
    library.observe("s1", IndexedEvent("s1", index, message_id, event, replay))


def _rows(tmp_path: Path) -> int:
    with sqlite3.connect(tmp_path / "journal.sqlite3") as db:
        return int(db.execute("SELECT count(*) FROM events").fetchone()[0])


async def test_a_run_is_one_row_and_reads_back_chunk_by_chunk_from_any_index(
    tmp_path: Path,
) -> None:
    library = _library(tmp_path)
    for index, text in enumerate(TEXTS, 1):
        _observe(library, index, events.AgentMessageChunk({"type": "text", "text": text}))
    library.write_events()
    assert _rows(tmp_path) == 1
    sent = [chunk_payload("agent_message_chunk", text) for text in TEXTS]
    assert sent[3] == to_json(
        events.event_to_wire(events.AgentMessageChunk({"type": "text", "text": TEXTS[3]}))
    ), "a chunk reads back as the very JSON goose/update carried"
    for after in range(len(TEXTS) + 1):
        rows = library.history("s1", after)
        assert [row.idx for row in rows] == list(range(after + 1, len(TEXTS) + 1)), after
        assert [row.payload for row in rows] == sent[after:], after
        assert all(row.message_id == "m1" and row.parts is None for row in rows)


async def test_anything_between_chunks_ends_the_run(tmp_path: Path) -> None:
    library = _library(tmp_path)
    steps: list[tuple[events.SessionEvent, dict[str, object]]] = [
        (events.AgentMessageChunk({"type": "text", "text": "a"}), {}),
        (events.AgentMessageChunk({"type": "text", "text": "b"}), {}),
        (events.AgentThoughtChunk({"type": "text", "text": "hmm"}), {}),  # another kind
        (events.AgentMessageChunk({"type": "text", "text": "c"}), {"message_id": "m2"}),
        (
            events.AgentMessageChunk({"type": "text", "text": "d"}),
            {"message_id": "m2", "replay": True},
        ),
        (events.ToolCall("t1", "Read a file"), {}),
        (events.AgentMessageChunk({"type": "text", "text": "e"}), {}),
        (events.AgentMessageChunk({"type": "text", "text": "f"}), {}),
    ]
    for index, (event, kw) in enumerate(steps, 1):
        _observe(library, index, event, **kw)
    _observe(library, 10, events.AgentMessageChunk({"type": "text", "text": "g"}))  # a gap
    library.write_events()
    _observe(library, 11, events.AgentMessageChunk({"type": "text", "text": "h"}))  # next batch
    library.write_events()
    assert _rows(tmp_path) == 8  # ab, hmm, c, d, tool, ef, g, h
    rows = library.history("s1")
    assert [row.idx for row in rows] == [1, 2, 3, 4, 5, 6, 7, 8, 10, 11]
    assert [row.replay for row in rows] == [0, 0, 0, 0, 1, 0, 0, 0, 0, 0]
    assert [row.message_id for row in rows][2:5] == ["m1", "m2", "m2"]


async def test_a_long_run_is_cut_and_every_chunk_is_found(tmp_path: Path) -> None:
    library = _library(tmp_path)
    count = RUN_LIMIT * 2 + 5
    for index in range(1, count + 1):
        _observe(library, index, events.AgentMessageChunk({"type": "text", "text": f"w{index} "}))
    library.write_events()
    assert _rows(tmp_path) == 3
    assert [row.idx for row in library.history("s1", RUN_LIMIT - 1)] == list(
        range(RUN_LIMIT, count + 1)
    )
    (hit,) = library.search(f"w{RUN_LIMIT + 1}", 5)
    assert hit.session_id == "s1"


def test_a_run_made_from_its_chunks_json_strings_is_the_run_of_their_text() -> None:
    """Each chunk's text is made a JSON string once, for the editor; the run's row is
    made from those strings, and must hold exactly what encoding the joined text gives."""
    texts = [*TEXTS, "\x1b[2J", "\u2028", "\ud83d", "tab\there"]
    strings = [json_string(text) for text in texts]
    made = run_row("s1", 1, "m1", "agent_message_chunk", texts, "t", False, strings)
    assert made == run_row("s1", 1, "m1", "agent_message_chunk", texts, "t", False)
    one = run_row("s1", 1, "m1", "agent_message_chunk", ["é"], "t", False, [json_string("é")])
    assert one.payload == chunk_payload("agent_message_chunk", "é")
