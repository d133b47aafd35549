"""The searchable texts kept beside the journal's events, and searching them."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from unittest import mock

import pytest

from goose_ls import events
from goose_ls.sessions.journal import search, texts
from goose_ls.sessions.journal.library import SessionLibrary
from goose_ls.sessions.journal.records import EventRow
from support.journal import journal_event

PHRASE = "the frobnicator keeps failing on Tuesdays"


def _library(tmp_path: Path) -> SessionLibrary:
    library = SessionLibrary(tmp_path, lambda path, exc: pytest.fail(f"{path}: {exc}"))
    library.created("s1", "/w", "goose")
    return library


def _stream(library: SessionLibrary, text: str, size: int) -> None:
    """``text`` as agent chunks of ``size`` characters (each written at once: no loop)."""
    for index, start in enumerate(range(0, len(text), size), start=1):
        chunk = events.AgentMessageChunk({"type": "text", "text": text[start : start + size]})
        journal_event(library, "s1", chunk, index, "m1")


def test_a_phrase_cut_into_one_character_chunks_is_found(tmp_path: Path, backend: str) -> None:
    library = _library(tmp_path)
    _stream(library, f"Well, {PHRASE}, it seems.", 1)
    (hit,) = library.search(PHRASE, 10)
    assert (hit.session_id, hit.index, hit.message_id, hit.kind) == ("s1", 1, "m1", "agent")
    assert PHRASE in hit.snippet and PHRASE in hit.excerpt


def test_a_long_reply_goes_on_in_pages_and_a_phrase_across_two_is_found(
    tmp_path: Path, backend: str
) -> None:
    library = _library(tmp_path)
    filler = "x" * (texts.PAGE_CHARS - len(PHRASE) // 2)
    _stream(library, f"{filler} {PHRASE} {filler}", 50)
    library.store.write_texts()  # the reply goes on: its text waits until a search, else
    with contextlib.closing(sqlite3.connect(tmp_path / "journal.sqlite3")) as db:
        pages = db.execute("SELECT page, length(text) FROM texts ORDER BY page").fetchall()
    assert len(pages) >= 2 and all(n <= texts.PAGE_CHARS + texts.OVERLAP for _, n in pages)
    (hit,) = library.search(PHRASE, 10)  # one hit for the message, however many pages match
    assert hit.index == 1 and PHRASE in hit.snippet


def test_each_speaker_and_tool_call_is_its_own_message(tmp_path: Path, backend: str) -> None:
    library = _library(tmp_path)
    journal_event(
        library, "s1", events.UserMessageChunk({"type": "text", "text": "ask zebra"}), 1, "m1"
    )
    journal_event(
        library, "s1", events.AgentThoughtChunk({"type": "text", "text": "zebra?"}), 2, "m1"
    )
    journal_event(library, "s1", events.Usage(1, 2), 3, "m1")  # shows nothing: the thought goes on
    journal_event(
        library, "s1", events.AgentThoughtChunk({"type": "text", "text": " hmm"}), 4, "m1"
    )
    journal_event(library, "s1", events.ToolCall("c1", "read · zebra.py"), 5, "m1")
    journal_event(
        library, "s1", events.AgentMessageChunk({"type": "text", "text": "zebra "}), 6, "m1"
    )
    journal_event(library, "s1", events.ToolCallUpdate("c1", status="completed"), 7, "m1")
    journal_event(
        library, "s1", events.AgentMessageChunk({"type": "text", "text": "zebra"}), 8, "m1"
    )
    found = [(h.kind, h.index, h.snippet) for h in library.search("zebra", 10)]
    assert sorted(found) == [
        ("agent", 6, "zebra"),
        ("agent", 8, "zebra"),
        ("thought", 2, "zebra? hmm"),
        ("tool", 5, "read · zebra.py"),
        ("user", 1, "ask zebra"),
    ]


def test_the_next_turn_starts_a_new_message(tmp_path: Path, backend: str) -> None:
    library = _library(tmp_path)
    for index, message_id in enumerate(["m1", "m2"], start=1):
        chunk = events.AgentMessageChunk({"type": "text", "text": "same words "})
        journal_event(library, "s1", chunk, index, message_id)
    assert [h.message_id for h in library.search("same words", 10)] == ["m2", "m1"]


def test_a_batch_is_one_write_per_message_and_batches_go_on_the_same_row(tmp_path: Path) -> None:
    library = _library(tmp_path)
    text = {"type": "text", "text": "ab"}
    rows = [EventRow("s1", i, "m1", "agent_message_chunk", json.dumps(text), "t") for i in (1, 2)]
    piece = texts.Piece("agent", "ab")
    library.store.append(rows, [piece, piece])
    library.store.write_texts()
    library.store.append([rows[1]._replace(idx=3)], [piece])
    library.store.write_texts()
    with contextlib.closing(sqlite3.connect(tmp_path / "journal.sqlite3")) as db:
        assert db.execute("SELECT first_idx, page, text FROM texts").fetchall() == [
            (1, 0, "ababab")
        ]


def test_the_full_text_index_is_made_for_a_journal_started_without_it(tmp_path: Path) -> None:
    if not search.fts_available():
        pytest.skip("this Python's SQLite has no FTS5")
    with mock.patch.object(search, "fts_available", lambda: False):
        library = _library(tmp_path)
        _stream(library, PHRASE, 3)
        library.store.close()
    library = SessionLibrary(tmp_path, lambda path, exc: pytest.fail(f"{path}: {exc}"))
    assert [h.index for h in library.search("FROBNICATOR keeps", 10)] == [1]


def test_forgotten_chats_are_not_found_and_odd_queries_are_harmless(
    tmp_path: Path, backend: str
) -> None:
    library = _library(tmp_path)
    _stream(library, '100% sure_thing "quoted" (x) *', 4)
    for query in ["100%", "sure_thing", '"quoted"', "(x) *", "NEAR(a b)", "-", '"']:
        found = library.search(query, 10)
        assert len(found) <= 1, query
    assert library.search("100% sure", 10)
    assert not library.search("100%x", 10)
    library.forget("s1")
    assert library.search("sure", 10) == []


def test_no_query_lists_the_latest_chats(tmp_path: Path) -> None:
    library = _library(tmp_path)
    library.created("s2", "/w", "goose")
    library.rename("s1", "Renamed last")
    assert [(h.session_id, h.kind, h.title) for h in library.search("  ", 1)] == [
        ("s1", "chat", "Renamed last")
    ]


def test_the_limit_caps_the_hits(tmp_path: Path, backend: str) -> None:
    library = _library(tmp_path)
    for index in range(1, 8):
        chunk = events.AgentMessageChunk({"type": "text", "text": "again"})
        journal_event(library, "s1", chunk, index, f"m{index}")
    assert len(library.search("again", 5)) == 5


@pytest.mark.parametrize(
    ("text", "query", "span"),
    [
        ("It keeps,\n  failing.", "keeps failing", (3, 19)),
        ("concatenate the cat", "cat", (16, 19)),  # from a word's start first
        ("concatenate", "cat", (3, 6)),
        ("Café au lait", "cafe", (0, 0)),  # FTS5 matched it; the snippet starts at 0
    ],
)
def test_where_the_match_is(text: str, query: str, span: tuple[int, int]) -> None:
    assert search.match_span(text, query) == span


def test_snippets_and_excerpts() -> None:
    text = "first line\n" + "a" * 100 + " needle here " + "b" * 100 + "\nlast"
    start, end = search.match_span(text, "needle")
    snippet = search.snippet(text, start, end)
    assert snippet.startswith("…") and snippet.endswith("…") and "needle" in snippet
    assert "\n" not in search.snippet("one\ntwo", 0, 3)
    excerpt = search.excerpt(text, start, end)
    assert "needle" in excerpt and len(excerpt) <= search.EXCERPT and "\n" not in excerpt
    assert search.fts_query('say "hi') == '"say ""hi" *'
    assert search.fts_query("done.") == '"done."'
    assert search.like("50%_\\") == "%50\\%\\_\\\\%"


def test_a_streaming_message_is_added_to_its_row_once_it_ends_or_a_second_on(
    tmp_path: Path, backend: str
) -> None:
    """Its events are journaled at once; its searchable text waits (a row rewritten at
    every batch cost more than the events), and a search still finds all of it."""
    library = _library(tmp_path)

    def rows() -> list[str]:
        with contextlib.closing(sqlite3.connect(tmp_path / "journal.sqlite3")) as db:
            return [text for (text,) in db.execute("SELECT text FROM texts ORDER BY page")]

    _stream(library, "the zebra ", 5)
    assert rows() == [] and len(library.history("s1")) == 2
    with mock.patch("time.monotonic", lambda: 1e9):  # a second on
        journal_event(
            library, "s1", events.AgentMessageChunk({"type": "text", "text": "ran"}), 3, "m1"
        )
    assert rows() == ["the zebra ran"]
    journal_event(
        library, "s1", events.AgentMessageChunk({"type": "text", "text": " far"}), 4, "m1"
    )
    assert [h.snippet for h in library.search("far", 10)] == ["the zebra ran far"]
    journal_event(library, "s1", events.ToolCall("c1", "look"), 5, "m1")  # the reply ends
    assert rows() == ["the zebra ran far"]
