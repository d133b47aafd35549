"""The journal when the disk is full: nothing is lost while there is memory to wait in."""

from __future__ import annotations

from pathlib import Path

from goose_ls import events
from goose_ls.sessions.journal.library import SessionLibrary
from goose_ls.sessions.session import IndexedEvent


def _chunk(library: SessionLibrary, index: int) -> None:
    event = events.AgentMessageChunk({"type": "text", "text": f"word{index:04d} " * 25})
    library.observe("s1", IndexedEvent("s1", index, "m1", event))


def test_a_batch_the_disk_had_no_room_for_is_written_once_there_is(tmp_path: Path) -> None:
    told: list[str] = []
    library = SessionLibrary(tmp_path, lambda path, error: told.append(str(error)))
    library.created("s1", "/w", "goose")
    db = library.store._db
    assert db is not None
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages}")  # as SQLite meets a full disk
    for index in range(1, 201):
        _chunk(library, index)
    library.write_events()
    assert len(told) == 1 and "full" in told[0], told
    written = [row.idx for row in library.store.events("s1")]
    assert written == list(range(1, len(written) + 1)) and len(written) < 200, "then full"

    db.execute("PRAGMA max_page_count = 1073741823")  # room again
    for index in range(201, 211):
        _chunk(library, index)
    library.write_events()
    rows = library.store.events("s1")
    assert [row.idx for row in rows] == list(range(1, 211)), "caught up, in order"
    for held_back in ("word0150", "word0210"):  # the full disk held one back, not the other
        (hit,) = library.search(held_back, 5)
        assert hit.session_id == "s1", held_back
    assert len(told) == 1, "told once"


def test_without_a_journal_on_disk_one_in_memory_serves_the_run(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    library = SessionLibrary(blocker / "data", lambda path, error: None)
    assert library.problem is not None and "in memory only" in library.problem
    _chunk(library, 1)
    assert [row.idx for row in library.history("s1")] == [1]
