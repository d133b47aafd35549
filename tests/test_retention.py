"""The journal keeps within its limits: old and oversized chats pruned, never an open one,
and a large tool output stored once however often the agent repeats it.

Chats are made "200 days ago" by a goose-ls run under libfaketime (the ``faketime``
package), so their records carry that date; another goose-ls at the real time prunes.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from goose_ls.sessions.journal.records import to_json
from goose_ls.sessions.journal.store import SessionStore
from support.harness import SERVER_COMMAND, Editor, start_editor, stop_editor

FAKETIME = shutil.which("faketime")
needs_faketime = pytest.mark.skipif(
    FAKETIME is None, reason="libfaketime is not installed (Debian package faketime)"
)
LONG_AGO = [
    "env",
    "FAKETIME_DONT_FAKE_MONOTONIC=1",  # timeouts keep counting real seconds
    str(FAKETIME),
    "-f",
    "-200d",
    *SERVER_COMMAND,
]
"""goose-ls with its clock 200 days back (and its agent's: it inherits LD_PRELOAD)."""

OUTPUT = "".join(f"line {n}: naïve “quoted” \\ output\t🦆\n" for n in range(150_000))
TURNS = {"turns": [[{"text": "ok"}]]}


@contextlib.asynccontextmanager
async def goose_ls(
    tmp_path: Path,
    script: dict[str, Any] = TURNS,
    settings: dict[str, Any] | None = None,
    command: list[str] = SERVER_COMMAND,
) -> AsyncIterator[Editor]:
    """A goose-ls on ``tmp_path``'s data dir (every one of a test shares it)."""
    editor = await start_editor(tmp_path, command)
    try:
        await editor.start(script, settings)
        yield editor
    finally:
        await stop_editor(editor)


async def _chat(editor: Editor, close: bool = True) -> str:
    session_id = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(session_id))
    if close:
        await editor.goose.request("goose/closeSession", {"sessionId": session_id})
    return session_id


async def _prune(editor: Editor, expected: str) -> None:
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.pruneJournal", arguments=[])
    )
    await editor.shown(f"goose: {expected}, ")


def _journal(tmp_path: Path) -> Path:
    return tmp_path / "data" / "journal.sqlite3"


def _kept(tmp_path: Path) -> set[str]:
    with contextlib.closing(sqlite3.connect(_journal(tmp_path))) as db:
        rows = db.execute("SELECT session_id FROM sessions UNION SELECT session_id FROM events")
        return {row[0] for row in rows}


def _transcripts(tmp_path: Path) -> set[str]:
    return {path.name for path in (tmp_path / "data" / "transcripts").glob("*.md")}


@needs_faketime
async def test_a_chat_older_than_the_limit_is_pruned_by_the_command(tmp_path: Path) -> None:
    async with goose_ls(tmp_path, command=LONG_AGO) as then:
        old = await _chat(then)
    assert _kept(tmp_path) == {old} and _transcripts(tmp_path) == {f"{old}.md"}
    async with goose_ls(tmp_path, settings={"journal": {"maxAgeDays": 365}}) as now:
        new = await _chat(now)
        await _prune(now, "removed 0 chats")
        now.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"goose": {"journal": {"maxAgeDays": 90}}})
        )
        await _prune(now, "removed 1 chat")
        assert _kept(tmp_path) == {new}
        assert _transcripts(tmp_path) == {f"{new}.md"}


@needs_faketime
async def test_the_first_goose_ls_of_the_day_prunes_by_itself(tmp_path: Path) -> None:
    async with goose_ls(tmp_path, command=LONG_AGO) as then:
        old = await _chat(then)
    async with goose_ls(tmp_path) as now:
        await now.shown("goose: journal limits reached: removed 1 chat, ")
        assert old not in _kept(tmp_path)


@needs_faketime
async def test_a_chat_open_in_another_live_goose_ls_is_never_pruned(tmp_path: Path) -> None:
    async with goose_ls(tmp_path, command=LONG_AGO) as then:
        held = await _chat(then, close=False)
        async with goose_ls(tmp_path) as now:
            await _prune(now, "removed 0 chats")
            assert held in _kept(tmp_path)
            await then.goose.request("goose/closeSession", {"sessionId": held})
            await _prune(now, "removed 1 chat")
            assert held not in _kept(tmp_path)
    assert held not in _kept(tmp_path), "the window that had it open does not write it back"


async def test_the_size_limit_prunes_the_chats_used_longest_ago(tmp_path: Path) -> None:
    # Each chat is about 2 MB: its events, and its text beside them for search.
    async with goose_ls(tmp_path, {"turns": [[{"bigText": 1_000_000}]]}) as editor:
        chats = [await _chat(editor) for _ in range(3)]
        editor.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"journal": {"maxBytes": 2_500_000}})
        )
        await _prune(editor, "removed 2 chats")
        assert _kept(tmp_path) == {chats[2]}


async def test_a_large_output_repeated_is_journalled_once_and_read_back_exactly(
    tmp_path: Path,
) -> None:
    content = [{"type": "content", "content": {"type": "text", "text": OUTPUT}}]
    steps = [
        {"toolCall": {"toolCallId": "c1", "title": "cat big.log", "kind": "execute"}},
        {"toolUpdate": {"toolCallId": "c1", "content": content}, "repeat": 5},
        {"toolUpdate": {"toolCallId": "c1", "status": "completed", "content": content}},
    ]
    async with goose_ls(tmp_path, {"turns": [steps]}) as editor:
        session_id = await _chat(editor, close=False)
        sent = [u["update"] for u in editor.goose.updates if "toolCallId" in u["update"]]
        editor.goose.updates.clear()
        await editor.goose.request("goose/replay", {"sessionId": session_id})
        replayed = [u["update"] for u in editor.goose.updates]
        transcript = tmp_path / "data" / "transcripts" / f"{session_id}.md"
        shown = await editor.goose.wait_for(
            lambda: t if "completed" in (t := transcript.read_text(encoding="utf-8")) else None
        )
    size = len(OUTPUT.encode("utf-8"))
    assert _journal(tmp_path).stat().st_size < 1.5 * size, "one copy, not one per update"

    store = SessionStore(_journal(tmp_path), lambda path, error: None)
    store.load()
    journalled = [row.payload for row in store.events(session_id) if "tool_call" in row.kind]
    store.close()
    assert journalled == [to_json(update) for update in sent]
    assert len(sent) == 7
    outputs = [
        u["content"][0]["content"]["text"] for u in replayed if "content" in u and "toolCallId" in u
    ]
    assert outputs == [OUTPUT] * 6

    assert "line 0: naïve" in shown and "line 11: naïve" in shown and "line 12:" not in shown
    (link,) = re.findall(r"\[whole output: [\d.]+ MB\]\(([^)]+)\)", shown)
    assert (transcript.parent / link).read_text(encoding="utf-8") == OUTPUT
