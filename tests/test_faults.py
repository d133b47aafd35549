"""Faults from both sides: an agent that is killed, hangs or writes half a line; an
editor that never answers; a data dir that cannot be written. Each time the server
stays up, the user is told, nothing already shown is lost and no process is left."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from lsprotocol import types

from support.buffers import EditorBuffers, read_code_actions_correctly
from support.harness import SERVER_COMMAND, Editor, gone, start_editor, stop_editor


async def _agent_pid(editor: Editor) -> int:
    await editor.goose.agent_state("running")
    status = await editor.goose.request("goose/status", {})
    return int(status["agent"]["pid"])


async def test_the_agent_killed_mid_turn_keeps_what_was_shown(editor: Editor) -> None:
    await editor.start(
        {
            "turns": [[{"text": "shown before the kill"}, {"hang": True}]],
            "byPrompt": {"again": [{"text": "a new agent answers"}]},
        }
    )
    session_id = await editor.new_session()
    pid = await _agent_pid(editor)
    message_id = await editor.prompt(session_id)
    await editor.goose.wait_for(lambda: editor.goose.text(message_id), what="the first text")
    os.kill(pid, signal.SIGKILL)
    end = await editor.goose.turn_end(message_id)
    assert "SIGKILL" in end["error"] or "signal 9" in end["error"], end
    assert "goose-ls doctor" in await editor.shown("unexpectedly")
    transcript = editor.tmp / "data" / "transcripts" / f"{session_id}.md"
    await editor.goose.wait_for(
        lambda: "shown before the kill" in transcript.read_text(encoding="utf-8"),
        what="the transcript on disk to keep the text",
    )
    again = await editor.prompt(session_id, "again")
    assert (await editor.goose.turn_end(again))["stopReason"] == "end_turn"
    assert editor.goose.text(again) == "a new agent answers"


async def test_half_a_line_then_death_fails_the_turn_cleanly(editor: Editor) -> None:
    await editor.start(
        {
            "turns": [[{"text": "first"}, {"halfLine": '{"jsonrpc": "2.0", "method": "sess'}]],
            "byPrompt": {"again": [{"text": "fine"}]},
        }
    )
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id)
    end = await editor.goose.turn_end(message_id)
    assert "exited with code 1" in end["error"]
    assert editor.goose.text(message_id) == "first"
    again = await editor.prompt(session_id, "again")
    assert (await editor.goose.turn_end(again))["stopReason"] == "end_turn"


async def test_a_hung_agent_lets_go_of_a_cancelled_turn(editor: Editor) -> None:
    await editor.start(
        {
            "turns": [[{"text": "thinking"}, {"hang": True}]],
            "byPrompt": {"after": [{"text": "still here"}]},
        },
        settings={"agent": {"stallTimeout": 0.5, "cancelTimeout": 0.5}},
    )
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id)
    await editor.goose.wait_for(
        lambda: any("may be stalled" in n["text"] for n in editor.goose.of_kind("note")),
        what="the stall note",
    )
    await editor.goose.request("goose/cancel", {"sessionId": session_id})
    end = await editor.goose.turn_end(message_id)
    assert end["stopReason"] == "cancelled"
    notes = [n["text"] for n in editor.goose.of_kind("note")]
    assert any("did not stop" in n for n in notes), notes
    assert editor.goose.text(message_id) == "thinking"
    status = await editor.goose.request("goose/status", {})
    assert status["agent"]["state"] == "running", "the server and the agent stay up"
    # goose refuses a prompt while that turn still runs there: the next one waits.
    after = await editor.prompt(session_id, "after")
    await editor.goose.wait_for(
        lambda: any(
            "still busy with the turn ended" in n["text"] for n in editor.goose.of_kind("note")
        ),
        what="the note that the next prompt waits",
    )
    await editor.goose.request("goose/cancel", {"sessionId": session_id})
    assert (await editor.goose.turn_end(after))["stopReason"] == "cancelled"


async def test_a_50_mb_line_from_the_agent_gets_through(editor: Editor) -> None:
    big = 50 * 1024 * 1024
    await editor.start({"turns": [[{"bigRaw": big}, {"bigText": big}, {"text": "end"}]]})
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id)
    end = await editor.goose.turn_end(message_id, timeout=300)
    assert end["stopReason"] == "end_turn"
    text = editor.goose.text(message_id)
    assert len(text) == big + 3 and text.endswith("end")


# --- an editor that never answers ----------------------------------------------------


async def test_an_editor_that_never_applies_edits_gets_the_file(editor: Editor) -> None:
    never: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def hold(_: Any) -> Any:
        return await never  # an editor stuck in a modal dialog

    editor.client.feature(types.WORKSPACE_APPLY_EDIT)(hold)

    await editor.start(
        {"turns": [[{"text": "one two three ", "chunks": 3}, {"text": "four"}]]},
        settings={"transcript": {"applyEditTimeout": 0.5}},
        editor="neovim@v0.11.0",
    )
    session_id = await editor.new_session()
    transcript = editor.tmp / "data" / "transcripts" / f"{session_id}.md"
    await editor.goose.wait_for(transcript.exists, what="the transcript file")
    EditorBuffers(editor.client, "utf-8", apply_edits=False).open(transcript.as_uri())
    message_id = await editor.prompt(session_id)
    await editor.goose.turn_end(message_id)
    status = await editor.goose.request("goose/status", {})
    assert status["agent"]["state"] == "running", "requests are answered meanwhile"
    await editor.goose.wait_for(
        lambda: "one two three four" in transcript.read_text(encoding="utf-8"),
        what="the reply written to the file instead",
    )
    assert "did not apply" in await editor.shown("did not apply")
    never.cancel()


async def test_a_permission_popup_never_answered_can_be_answered_elsewhere(
    editor: Editor,
) -> None:
    never: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def hold(_: Any) -> Any:
        return await never

    editor.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(hold)

    await editor.start(
        {
            "turns": [
                [
                    {"toolCall": {"toolCallId": "t1", "title": "shell · make"}},
                    {"permission": {"toolCallId": "t1", "title": "shell"}},
                ]
            ]
        }
    )
    read_code_actions_correctly(editor.client)
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id)
    (request,) = await editor.goose.wait_for(
        lambda: editor.goose.of_kind("permission_request"), what="the permission request"
    )
    await editor.goose.request(
        "goose/permission",
        {"requestId": request["requestId"], "optionId": "allow_once"},
    )
    end = await editor.goose.turn_end(message_id)
    assert end["stopReason"] == "end_turn"
    assert "[permission: allow_once]" in editor.goose.text(message_id)
    never.cancel()


# --- a data dir that cannot be written -------------------------------------------------


async def test_a_data_dir_that_cannot_be_written_is_reported_and_chat_goes_on(
    editor: Editor,
) -> None:
    blocker = editor.tmp / "not-a-dir"
    blocker.write_text("a file where the data dir should be\n")
    await editor.start(
        {"turns": [[{"text": "the reply still streams"}]]},
        settings={"dataDir": str(blocker / "data")},
    )
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id)
    assert (await editor.goose.turn_end(message_id))["stopReason"] == "end_turn"
    assert editor.goose.text(message_id) == "the reply still streams"
    message = await editor.shown("cannot write")
    assert "not-a-dir" in message, message
    status = await editor.goose.request("goose/status", {})
    assert status["agent"]["state"] == "running"
    editor.goose.updates.clear()
    result = await editor.goose.request("goose/replay", {"sessionId": session_id})
    assert result["count"] > 0, "the run's history is kept in memory"
    assert editor.goose.text(message_id) == "the reply still streams"


@pytest_asyncio.fixture
async def full_disk_editor(tmp_path: Path) -> AsyncIterator[Editor]:
    """goose-ls whose files may not grow past 32 KiB, as on a full disk."""
    command = " ".join(f"'{part}'" for part in SERVER_COMMAND)
    editor = await start_editor(tmp_path, ["sh", "-c", f"ulimit -f 64 && exec {command}"])
    yield editor
    await stop_editor(editor)


async def test_a_full_disk_is_reported_and_chat_goes_on(full_disk_editor: Editor) -> None:
    editor = full_disk_editor
    reply = "x" * 100_000  # more than the files may hold
    await editor.start({"turns": [[{"text": reply, "chunks": 50}], [{"text": "and more"}]]})
    session_id = await editor.new_session()
    first = await editor.prompt(session_id)
    assert (await editor.goose.turn_end(first))["stopReason"] == "end_turn"
    assert editor.goose.text(first) == reply
    message = await editor.shown("cannot write")
    causes = ("File too large", "No space", "SQLITE_FULL", "SQLITE_IOERR")  # files, journal
    assert any(cause in message for cause in causes), message
    second = await editor.prompt(session_id, "more")
    assert (await editor.goose.turn_end(second))["stopReason"] == "end_turn"


async def test_a_journal_log_that_cannot_grow_loses_no_editor_write(tmp_path: Path) -> None:
    """Each batch is appended to the journal's log before the editor is sent it: when the
    log cannot grow (files may not pass 512 KiB here, and another process holds the
    journal, so that nothing is committed and the log is never emptied), the editor is
    still sent every chunk, the log says so once, and the chat goes on."""
    command = " ".join(f"'{part}'" for part in SERVER_COMMAND)
    editor = await start_editor(tmp_path, ["sh", "-c", f"ulimit -f 1024 && exec {command}"])
    reply = "".join(f"[{i:03d}]" + "z" * 1995 for i in range(400))  # 800 KB
    try:
        await editor.start({"turns": [[{"text": reply, "chunks": 400, "delay": 0.002}], []]})
        session_id = await editor.new_session()
        first = await editor.prompt(session_id)
        await editor.goose.wait_for(lambda: editor.goose.of_kind("agent_message_chunk"))
        log = tmp_path / "logs" / "goose-ls.log"
        said = "cannot append to the journal's log"
        journal = tmp_path / "data" / "journal.sqlite3"
        with contextlib.closing(sqlite3.connect(journal, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")
            await editor.goose.wait_for(lambda: said in log.read_text(), timeout=60)
            other.execute("ROLLBACK")
        assert (await editor.goose.turn_end(first, timeout=120))["stopReason"] == "end_turn"
        assert editor.goose.text(first) == reply, "every chunk, in order"
        assert log.read_text().count(said) == 1, "said once"
        second = await editor.prompt(session_id, "more")
        assert (await editor.goose.turn_end(second))["stopReason"] == "end_turn"
    finally:
        await stop_editor(editor)


async def test_the_server_leaves_no_agent_when_killed_by_sigterm(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "x", "chunks": 1}, {"hang": True}]]})
    pid = await _agent_pid(editor)
    session_id = await editor.new_session()
    await editor.prompt(session_id)
    server = editor.client._server
    assert server is not None
    server.send_signal(signal.SIGTERM)
    await asyncio.wait_for(server.wait(), 30)
    assert await gone(pid), "the agent outlived goose-ls"
