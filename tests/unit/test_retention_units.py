"""Pruning the journal, on a real database without goose-ls around it."""

from __future__ import annotations

import contextlib
import datetime
import socket
import sqlite3
import threading
from pathlib import Path

from goose_ls.process_identity import this_process
from goose_ls.sessions.journal import retention
from goose_ls.sessions.journal.records import EventRow, SessionRecord
from goose_ls.sessions.journal.retention import Limits
from goose_ls.sessions.journal.store import SessionStore

NOW = datetime.datetime(2026, 7, 19, 12, 0, tzinfo=datetime.timezone.utc)
DEAD = f"{socket.gethostname()}:99999999:1"  # a pid no process has


def _sql(path: Path, statement: str, *args: object) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        return db.execute(statement, args).fetchall()


def _journal(tmp_path: Path, chats: dict[str, int], payload: int = 1000) -> Path:
    """Chats last used ``days`` before NOW, oldest first in the dict order, each with a
    transcript, a part, saved outputs and one event of ``payload`` bytes."""
    store = SessionStore(tmp_path / "journal.sqlite3", lambda path, error: None)
    store.load()
    for n, (session_id, days) in enumerate(chats.items()):
        transcript = (tmp_path / "transcripts" / f"{session_id}.md").resolve()
        store.put(SessionRecord(session_id, "/w", transcript_path=str(transcript)))
        store.append([EventRow(session_id, 1, None, "note", "x" * payload, "t")], [None])
        for file in (transcript, transcript.with_name(f"{session_id}.part1.md")):
            file.parent.mkdir(exist_ok=True)
            file.write_text("chat")
        (tmp_path / "outputs" / session_id).mkdir(parents=True)
        (tmp_path / "outputs" / session_id / "call.txt").write_text("output")
        used = (NOW - datetime.timedelta(days=days, seconds=n)).isoformat(timespec="seconds")
        _sql(
            store.path, "UPDATE sessions SET updated_at = ? WHERE session_id = ?", used, session_id
        )
    store.close()
    return store.path


def _prune(path: Path, limits: Limits, keep: set[str] | None = None) -> list[str]:
    return retention.prune(path, limits, keep or set(), threading.Event(), NOW).session_ids


def _left(path: Path) -> list[str]:
    return [str(row[0]) for row in _sql(path, "SELECT session_id FROM sessions ORDER BY 1")]


def test_chats_older_than_the_limit_go_with_their_files(tmp_path: Path) -> None:
    path = _journal(tmp_path, {"old": 200, "new": 10})
    assert _prune(path, Limits(90, 0)) == ["old"]
    assert _left(path) == ["new"]
    assert sorted(p.name for p in (tmp_path / "transcripts").iterdir()) == [
        "new.md",
        "new.part1.md",
    ]
    assert [p.name for p in (tmp_path / "outputs").iterdir()] == ["new"]
    assert _sql(path, "SELECT DISTINCT session_id FROM events") == [("new",)]


def test_a_chat_open_in_a_live_process_is_kept_and_a_dead_holder_is_not(tmp_path: Path) -> None:
    path = _journal(tmp_path, {"live": 300, "dead": 200, "open here": 100})
    _sql(path, "INSERT INTO holders VALUES ('live', ?), ('dead', ?)", this_process(), DEAD)
    assert _prune(path, Limits(90, 0), keep={"open here"}) == ["dead"]
    assert _left(path) == ["live", "open here"]
    assert _sql(path, "SELECT session_id FROM holders") == [("live",)]


def test_no_age_limit_keeps_everything(tmp_path: Path) -> None:
    path = _journal(tmp_path, {"ancient": 5000})
    assert _prune(path, Limits(0, 0)) == []


def test_the_size_limit_prunes_the_oldest_first_and_gives_the_space_back(
    tmp_path: Path,
) -> None:
    path = _journal(tmp_path, {"a": 3, "b": 2, "c": 1}, payload=1_000_000)
    size = path.stat().st_size
    pruned = retention.prune(path, Limits(0, 1_500_000), set(), threading.Event(), NOW)
    assert pruned.session_ids == ["a", "b"] and _left(path) == ["c"]
    assert path.stat().st_size < size - 1_900_000, "the freed pages went back to the disk"
    assert pruned.freed > 1_900_000
    assert str(pruned).startswith("removed 2 chats, ")


def test_an_old_journal_without_auto_vacuum_is_vacuumed_once(tmp_path: Path) -> None:
    path = _journal(tmp_path, {"a": 200, "b": 1}, payload=1_000_000)
    _sql(path, "PRAGMA auto_vacuum = NONE")
    _sql(path, "VACUUM")
    size = path.stat().st_size
    _prune(path, Limits(90, 0))
    assert _sql(path, "PRAGMA auto_vacuum") == [(2,)]
    assert path.stat().st_size < size - 900_000


def test_files_outside_the_data_dir_are_never_removed(tmp_path: Path) -> None:
    path = _journal(tmp_path / "data", {"old": 200})
    elsewhere = tmp_path / "mine.md"
    elsewhere.write_text("keep me")
    _sql(path, "UPDATE sessions SET transcript_path = ?", str(elsewhere))
    assert _prune(path, Limits(90, 0)) == ["old"]
    assert elsewhere.read_text() == "keep me"


def test_the_start_up_prune_is_due_once_a_day(tmp_path: Path) -> None:
    path = _journal(tmp_path, {})
    assert retention.due(path, NOW)
    assert not retention.due(path, NOW + datetime.timedelta(hours=23))
    assert retention.due(path, NOW + datetime.timedelta(hours=25))
    assert retention.due(path, NOW - datetime.timedelta(days=30)), "a clock set back"
