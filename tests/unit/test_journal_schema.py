"""The journal's schema version: a journal of this version opens as it is, one of a
version this goose-ls does not know is refused and left untouched."""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from pathlib import Path

import pytest

from goose_ls import events
from goose_ls.sessions.journal import schema
from goose_ls.sessions.journal.library import SessionLibrary
from goose_ls.sessions.journal.store import SessionStore
from goose_ls.sessions.session import IndexedEvent


def _everything(path: Path) -> dict[str, object]:
    """The journal's version, its schema and every row of every table."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        found: dict[str, object] = {"user_version": db.execute("PRAGMA user_version").fetchall()}
        master = db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
        found["sqlite_master"] = master
        for kind, name, _ in master:
            if kind == "table":
                found[name] = sorted(db.execute(f"SELECT * FROM '{name}'").fetchall(), key=repr)
    return found


def test_a_journal_made_by_this_version_opens_unchanged(tmp_path: Path, backend: str) -> None:
    library = SessionLibrary(tmp_path, lambda path, exc: pytest.fail(f"{path}: {exc}"))
    library.created("s1", "/w", "goose")
    for index, word in enumerate(["the frobnicator ", "keeps failing"], start=1):
        chunk = events.AgentMessageChunk({"type": "text", "text": word})
        library.observe("s1", IndexedEvent("s1", index, "m1", chunk))
    library.write_events()
    library.store.set_last_active("/w", "s1")
    assert [hit.index for hit in library.store.search("frobnicator keeps", 10)] == [1]
    library.store.close()
    journal = tmp_path / "journal.sqlite3"
    before = _everything(journal)
    assert before["user_version"] == [(schema.VERSION,)]

    store = SessionStore(journal, lambda path, exc: pytest.fail(f"{path}: {exc}"))
    store.load()
    assert store.usable, store.problem
    store.close()
    assert _everything(journal) == before


def test_every_upgrade_step_leads_to_this_version() -> None:
    """The next schema change adds its step at the current version, and raises it."""
    first = min(schema.UPGRADES, default=schema.VERSION)
    assert sorted(schema.UPGRADES) == list(range(first, schema.VERSION))


@pytest.mark.parametrize("version", [schema.VERSION + 1, 999, schema.VERSION - 1])
def test_a_journal_of_a_version_this_goose_ls_does_not_know_is_refused_untouched(
    tmp_path: Path, version: int
) -> None:
    journal = tmp_path / "journal.sqlite3"
    with contextlib.closing(sqlite3.connect(journal)) as db, db:
        db.execute("CREATE TABLE from_another_version (x)")
        db.execute("INSERT INTO from_another_version VALUES ('kept')")
        db.execute(f"PRAGMA user_version = {version}")
    written = hashlib.sha256(journal.read_bytes()).hexdigest()

    store = SessionStore(journal, lambda path, exc: pytest.fail(f"{path}: {exc}"))
    store.load()
    assert not store.usable
    assert store.problem is not None
    assert f"schema version {version}" in store.problem, store.problem
    assert "update goose-ls" in store.problem and "dataDir" in store.problem, store.problem
    store.close()
    assert hashlib.sha256(journal.read_bytes()).hexdigest() == written, "not one byte changed"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["journal.sqlite3"]
