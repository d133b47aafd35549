"""Sessions that last: several at once, queues, persistence, replay, recovery, options."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from support.harness import Editor, disconnect, kill, start_editor, stop_editor
from support.journal import journaled


async def test_three_sessions_stream_at_once_without_crossing(editor: Editor) -> None:
    await editor.start(
        {
            "byPrompt": {
                f"s{i}": [{"text": f"<{i}>" * 150, "chunks": 150, "delay": 0.002}] for i in range(3)
            }
        }
    )
    sessions = [await editor.new_session() for _ in range(3)]
    messages = [await editor.prompt(sid, f"s{i}") for i, sid in enumerate(sessions)]
    ends = await asyncio.gather(*(editor.goose.turn_end(m) for m in messages))
    assert all(e["stopReason"] == "end_turn" for e in ends)
    for i, (sid, mid) in enumerate(zip(sessions, messages, strict=True)):
        assert editor.goose.text(mid) == f"<{i}>" * 150
        mine = [u for u in editor.goose.updates if u["sessionId"] == sid]
        assert all(u["messageId"] in (None, mid) for u in mine)
        indices = [u["index"] for u in mine]
        assert indices == sorted(indices) and len(set(indices)) == len(indices)


async def test_a_queued_prompt_waits_and_can_be_cancelled(editor: Editor) -> None:
    await editor.start(
        {
            "byPrompt": {
                "slow": [{"text": "s" * 50, "chunks": 50, "delay": 0.02}],
                "second": [{"text": "never"}],
                "third": [{"text": "third done"}],
            }
        }
    )
    sid = await editor.new_session()
    slow = await editor.prompt(sid, "slow")
    second = await editor.prompt(sid, "second")
    third = await editor.prompt(sid, "third")
    status = await editor.goose.request("goose/status", {})
    (summary,) = status["sessions"]
    assert summary["waiting"] == [second, third], "the queue is visible"
    result = await editor.goose.request("goose/cancel", {"sessionId": sid, "messageId": second})
    assert result == {"cancelled": True}
    assert (await editor.goose.turn_end(second))["stopReason"] == "cancelled"
    await editor.goose.turn_end(slow)
    assert (await editor.goose.turn_end(third))["stopReason"] == "end_turn"
    said = [m["params"]["prompt"][0]["text"] for m in editor.received("session/prompt")]
    assert said == ["slow", "third"], "the cancelled prompt never reached the agent"


async def test_replay_after_an_index_sends_exactly_the_missing_events(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "abcdef", "chunks": 6}]]})
    sid = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(sid))
    seen = [u["index"] for u in editor.goose.updates] + [e["index"] for e in editor.goose.turn_ends]
    last = max(seen)
    editor.goose.updates.clear()
    editor.goose.turn_ends.clear()
    result = await editor.goose.request("goose/replay", {"sessionId": sid, "afterIndex": last - 4})
    assert result == {"sessionId": sid, "lastIndex": last, "count": 4}
    await editor.goose.wait_for(lambda: editor.goose.turn_ends, what="the replayed turn end")
    again = [u["index"] for u in editor.goose.updates] + [
        e["index"] for e in editor.goose.turn_ends
    ]
    assert sorted(again) == list(range(last - 3, last + 1))


async def test_titles_come_from_the_first_message_then_the_agent(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "ok"}], [{"sessionInfo": {"title": "Agent title"}}]]})
    sid = await editor.new_session()
    long = "Please explain why the frobnicator keeps failing on every second Tuesday of May"
    await editor.goose.turn_end(await editor.prompt(sid, long))
    (entry,) = (await editor.goose.request("goose/listSessions", {}))["sessions"]
    assert entry["title"] == "Please explain why the frobnicator keeps failing..."
    await editor.goose.turn_end(await editor.prompt(sid, "again"))
    (entry,) = (await editor.goose.request("goose/listSessions", {}))["sessions"]
    assert entry["title"] == "Agent title"


async def test_the_session_list_merges_what_the_agent_knows(editor: Editor) -> None:
    elsewhere = {"sessionId": "20260101_7", "cwd": "/elsewhere", "title": "From goose Desktop"}
    await editor.start({"agentSessions": [elsewhere]})
    sid = await editor.new_session()
    listed = (await editor.goose.request("goose/listSessions", {}))["sessions"]
    by_id = {e["sessionId"]: e for e in listed}
    assert by_id[sid]["source"] == "both" and by_id[sid]["loaded"] is True
    assert by_id["20260101_7"]["source"] == "agent"
    assert by_id["20260101_7"]["title"] == "From goose Desktop"
    assert by_id["20260101_7"]["loaded"] is False


async def test_a_loaded_session_replays_its_history_marked_as_replay(editor: Editor) -> None:
    history = [
        {"userText": "what is 2+2?"},
        {"thought": "simple"},
        {"toolCall": {"toolCallId": "c1", "title": "calc · 2+2"}},
        {"toolUpdate": {"toolCallId": "c1", "status": "completed"}},
        {"text": "4"},
    ]
    await editor.start({"load": history, "sessionsFile": ""})
    result = await editor.goose.request(
        "goose/loadSession", {"sessionId": "20250101_1", "tabId": "tab-9"}
    )
    assert result["sessionId"] == "20250101_1" and result["tabId"] == "tab-9"
    replayed = [
        u for u in editor.goose.updates if u["sessionId"] == "20250101_1" and u.get("replay")
    ]
    kinds = [u["update"]["sessionUpdate"] for u in replayed]
    assert kinds == [
        "user_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
    ]
    assert all(u["tabId"] == "tab-9" for u in replayed)
    transcript = Path(result["transcript"].removeprefix("file://"))
    # The transcript is written in a few steps; wait for the last of the history.
    text = await editor.goose.wait_for(
        lambda: t if "\n4" in (t := transcript.read_text(encoding="utf-8")) else None,
        what="the whole history in the transcript",
    )
    assert "what is 2+2?" in text and "💭 simple" in text and "calc · 2+2" in text


async def test_modes_switch_through_the_mode_config_option_when_there_is_one(
    editor: Editor,
) -> None:
    mode_option = {
        "id": "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": "auto",
        "options": [{"value": "auto", "name": "Auto"}, {"value": "approve", "name": "Approve"}],
    }
    await editor.start({"configOptions": [mode_option]})
    sid = await editor.new_session()
    result = await editor.goose.request("goose/setMode", {"sessionId": sid, "modeId": "approve"})
    assert result["configOptions"][0]["currentValue"] == "approve"
    assert editor.received("session/set_config_option")
    assert not editor.received("session/set_mode")


async def test_modes_without_config_options_use_set_mode(editor: Editor) -> None:
    await editor.start({})
    sid = await editor.new_session()
    result = await editor.goose.request("goose/setMode", {"sessionId": sid, "modeId": "approve"})
    assert result["modes"]["currentModeId"] == "approve"
    (call,) = editor.received("session/set_mode")
    assert call["params"] == {"sessionId": sid, "modeId": "approve"}


async def test_a_crash_in_two_busy_sessions_recovers_both(editor: Editor) -> None:
    await editor.start(
        {
            "byPrompt": {
                "long": [{"text": "l" * 100, "chunks": 100, "delay": 0.02}],
                "die": [{"sleep": 0.3}, {"crash": 1}],
                "after": [{"text": "alive"}],
            }
        },
        settings={"agent": {"restartDelay": 0.05}},  # the restart, not its backoff
    )
    first, second = await editor.new_session(), await editor.new_session()
    doomed = [await editor.prompt(first, "long"), await editor.prompt(second, "die")]
    ends = await asyncio.gather(*(editor.goose.turn_end(m) for m in doomed))
    assert all("exited with code 1" in (e.get("error") or "") for e in ends)
    await editor.goose.wait_for(
        lambda: len(editor.received("session/load")) == 2, what="both sessions reloaded"
    )
    notes = [n["text"] for n in editor.goose.of_kind("note")]
    assert sum("Restarting it" in n for n in notes) == 2
    for sid in (first, second):
        end = await editor.goose.turn_end(await editor.prompt(sid, "after"))
        assert end["stopReason"] == "end_turn"


async def test_a_silent_turn_is_flagged_as_stalled(editor: Editor) -> None:
    # The agent says nothing until the test has seen the note (or given up waiting for it).
    heard = editor.tmp / "heard"
    wait = f"while [ ! -e '{heard}' ]; do sleep 0.02; done"
    await editor.start(
        {"turns": [[{"shell": wait, "quiet": True}, {"text": "late"}]]},
        settings={"agent": {"stallTimeout": 1}},
    )
    sid = await editor.new_session()
    mid = await editor.prompt(sid)
    try:
        await editor.goose.wait_for(
            lambda: [n for n in editor.goose.of_kind("note") if "may be stalled" in n["text"]],
            what="the stall note",
        )
    finally:
        heard.touch()
    await editor.goose.turn_end(mid)
    notes = [n["text"] for n in editor.goose.of_kind("note")]
    assert any("may be stalled" in n and "goose.restart" in n for n in notes)


async def test_a_corrupt_store_is_kept_aside_and_reported(tmp_path: Path) -> None:
    store = tmp_path / "data" / "journal.sqlite3"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"not a database, whatever it once was " * 100)
    editor = await start_editor(tmp_path)
    try:
        await editor.start({})
        message = await editor.shown("could not be used")
        assert "kept as journal.sqlite3." in message
        (backup,) = store.parent.glob("journal.sqlite3.*.bak")
        assert backup.read_bytes().startswith(b"not a database")
        sid = await editor.new_session()
        (entry,) = (await editor.goose.request("goose/listSessions", {}))["sessions"]
        assert entry["sessionId"] == sid and entry["source"] == "both"
    finally:
        await editor.client.shutdown_session()


async def test_two_windows_on_one_data_dir_keep_each_other_s_sessions(tmp_path: Path) -> None:
    shared = {"dataDir": str(tmp_path / "shared-data")}
    windows = []
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        windows.append(await start_editor(tmp_path / name))
    first, second, third = windows
    try:
        await first.start({"idPrefix": "a-"}, settings=shared)
        await second.start({"idPrefix": "b-"}, settings=shared)

        async def chat(window: Editor) -> str:
            sid = await window.new_session()
            await window.goose.turn_end(await window.prompt(sid, f"hello from {sid}"))
            return sid

        created = await asyncio.gather(*(chat(w) for w in (first, second) for _ in range(4)))
        await third.start({}, settings=shared)
        listed = (await third.goose.request("goose/listSessions", {}))["sessions"]
        assert {e["sessionId"] for e in listed} == set(created)
        assert {e["title"] for e in listed} == {f"hello from {sid}" for sid in created}
    finally:
        for window in windows:
            await window.client.shutdown_session()


async def test_kill_the_server_and_the_chat_resumes_with_its_history(tmp_path: Path) -> None:
    script = {
        "byPrompt": {"first": [{"text": "first answer"}], "second": [{"text": "second answer"}]}
    }
    editor = await start_editor(tmp_path)
    await editor.start(script)
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openChat", arguments=[])
    )
    shown = await editor.goose.wait_for(lambda: editor.client.shown_documents)
    transcript = Path(shown[0].uri.removeprefix("file://"))
    # The transcript is not open in this editor: the file is the copy, the draft goes there.
    transcript.write_text(transcript.read_text(encoding="utf-8") + "first", encoding="utf-8")
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.send", arguments=[])
    )
    await editor.goose.wait_for(lambda: editor.goose.turn_ends)
    await editor.goose.wait_for(lambda: "first answer" in transcript.read_text(encoding="utf-8"))
    session_id = editor.goose.turn_ends[0]["sessionId"]
    server = editor.client._server
    assert server is not None
    server.kill()  # no shutdown, no exit: as if the editor was killed
    await server.wait()
    await disconnect(editor)

    again = await start_editor(tmp_path)
    try:
        await again.start(script)
        await again.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="goose.openChat", arguments=[])
        )
        shown = await again.goose.wait_for(lambda: again.client.shown_documents)
        assert Path(shown[0].uri.removeprefix("file://")) == transcript, "the same chat resumes"
        (load,) = await again.goose.wait_for(lambda: again.received("session/load"))
        assert load["params"]["sessionId"] == session_id
        text = transcript.read_text(encoding="utf-8")
        assert text.count("first answer") == 1, "history is not drawn twice"
        transcript.write_text(text + "second", encoding="utf-8")
        await again.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="goose.send", arguments=[])
        )
        await again.goose.wait_for(
            lambda: "second answer" in transcript.read_text(encoding="utf-8")
        )
        # The reply's first text reaches the file at once, maybe before the turn's end.
        # (The history comes first, from the journal: the turn end of the first run too.)
        before = max(e["index"] for e in editor.goose.arrived)
        (end,) = await again.goose.wait_for(
            lambda: [e for e in again.goose.turn_ends if e["index"] > before]
        )
        assert end["sessionId"] == session_id
        said = [u["index"] for u in again.goose.updates if u["messageId"] == end["messageId"]]
        assert min(said) > before, "indices go on from where the last run stopped"
    finally:
        await again.client.shutdown_session()


def _journal(tmp_path: Path, session_id: str) -> list[tuple[int, str, dict[str, Any]]]:
    """(index, kind, payload) of a session's events in the journal, read as a reader would."""
    rows = journaled(tmp_path / "data" / "journal.sqlite3", session_id)
    return [(row.idx, row.kind, json.loads(row.payload)) for row in rows]


async def test_every_event_is_journaled_as_it_was_sent(editor: Editor) -> None:
    await editor.start({"turns": [[{"thought": "hmm"}, {"text": "the answer", "chunks": 5}]]})
    session_id = await editor.new_session()
    end = await editor.goose.turn_end(await editor.prompt(session_id, "question"))
    await editor.goose.request("goose/status", {})  # a loop turn later: the batch is written
    journal = _journal(editor.tmp, session_id)
    sent = [*editor.goose.updates, end]
    assert [index for index, _, _ in journal] == [m["index"] for m in sent]
    assert [p for _, _, p in journal[: len(sent) - 1]] == [m["update"] for m in sent[:-1]]
    assert journal[-1][1] == "turn_end" and journal[-1][2]["stopReason"] == "end_turn"
    text = "".join(p["content"]["text"] for _, k, p in journal if k == "agent_message_chunk")
    assert text == "the answer"


async def test_a_kill_mid_turn_keeps_what_was_streamed_in_the_journal(tmp_path: Path) -> None:
    editor = await start_editor(tmp_path)
    await editor.start({"turns": [[{"text": "y" * 300, "chunks": 300, "delay": 0.01}]]})
    session_id = await editor.new_session()
    await editor.prompt(session_id, "stream")
    await editor.goose.wait_for(lambda: len(editor.goose.updates) > 80)
    server = editor.client._server
    assert server is not None
    server.kill()
    await server.wait()
    shown = {m["index"]: m["update"] for m in editor.goose.updates}
    await disconnect(editor)
    # What the killed window only logged goes into the journal when the next one starts.
    again = await start_editor(tmp_path)
    await again.start({"turns": []})
    await stop_editor(again)
    journal = _journal(tmp_path, session_id)
    indices = [index for index, _, _ in journal]
    assert indices == list(range(1, len(indices) + 1)), "no hole"
    assert len(indices) >= max(shown), "nothing the editor was sent is lost"
    assert all(shown[index] == payload for index, _, payload in journal if index in shown)


async def test_a_session_open_in_one_window_is_not_driven_from_another(tmp_path: Path) -> None:
    shared = {"dataDir": str(tmp_path / "shared-data")}
    script = {"sessionsFile": str(tmp_path / "agent-sessions")}  # one goose database
    windows = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        windows.append(await start_editor(tmp_path / name))
    here, there = windows
    try:
        await here.start(script, settings=shared)
        await there.start(script, settings=shared)
        session_id = await here.new_session()
        (entry,) = (await there.goose.request("goose/listSessions", {}))["sessions"]
        assert entry["sessionId"] == session_id and entry["openElsewhere"] is True
        with pytest.raises(JsonRpcException, match="open in another goose-ls window"):
            await there.goose.request("goose/loadSession", {"sessionId": session_id})
        await here.goose.request("goose/closeSession", {"sessionId": session_id})
        (entry,) = (await there.goose.request("goose/listSessions", {}))["sessions"]
        assert "openElsewhere" not in entry
        loaded = await there.goose.request("goose/loadSession", {"sessionId": session_id})
        assert loaded["sessionId"] == session_id
    finally:
        for window in windows:
            await window.client.shutdown_session()


async def test_a_chat_of_a_window_killed_opens_in_another_at_once(tmp_path: Path) -> None:
    """The editor kills its goose-ls right after ``exit`` (Helix 25.07) or the user kills
    it: the chats it held are free for the next window, without waiting for anything."""
    shared = {"dataDir": str(tmp_path / "shared-data")}
    script = {"sessionsFile": str(tmp_path / "agent-sessions")}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    here = await start_editor(tmp_path / "a")
    await here.start(script, settings=shared)
    session_id = await here.new_session()
    await kill(here)
    there = await start_editor(tmp_path / "b")
    try:
        await there.start(script, settings=shared)
        (entry,) = (await there.goose.request("goose/listSessions", {}))["sessions"]
        assert "openElsewhere" not in entry
        loaded = await there.goose.request("goose/loadSession", {"sessionId": session_id})
        assert loaded["sessionId"] == session_id
    finally:
        await there.client.shutdown_session()


async def test_after_a_kill_mid_turn_no_index_is_used_twice(tmp_path: Path) -> None:
    script = {"turns": [[{"text": "x" * 400, "chunks": 400, "delay": 0.01}]],
              "load": [{"text": "replayed"}]}  # fmt: skip
    editor = await start_editor(tmp_path)
    await editor.start(script)
    session_id = await editor.new_session()
    await editor.prompt(session_id, "stream")
    await editor.goose.wait_for(lambda: len(editor.goose.updates) > 50)
    server = editor.client._server
    assert server is not None
    server.kill()  # mid-turn: the turn's end, which saves the last index, never comes
    await server.wait()
    seen = max(update["index"] for update in editor.goose.updates)
    sent = {update["index"]: update["update"] for update in editor.goose.updates}
    await disconnect(editor)

    again = await start_editor(tmp_path)
    try:
        await again.start(script)
        await again.goose.request("goose/loadSession", {"sessionId": session_id})
        await again.goose.wait_for(lambda: [u for u in again.goose.updates if u.get("replay")])
        indices = [update["index"] for update in again.goose.updates]
        assert indices == sorted(set(indices)), "each once, in order"
        for update in again.goose.updates:
            if update.get("replay"):  # what the agent replayed that the journal lacked
                assert update["index"] > seen, f"{update['index']} was handed out before"
            else:  # the journal's history, sent before it: each event as it was sent
                assert sent[update["index"]] == update["update"]
    finally:
        await again.client.shutdown_session()


async def test_the_sessions_index_opens_renames_and_deletes(editor: Editor) -> None:
    from support.buffers import EditorBuffers

    await editor.start({"turns": [[{"text": "hello"}]]})
    buffers = EditorBuffers(editor.client, "utf-8")
    first = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(first, "first chat"))
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.sessions", arguments=[])
    )
    shown = await editor.goose.wait_for(lambda: editor.client.shown_documents)
    index = shown[0].uri
    buffers.open(index)
    lines = buffers.texts[index].split("\n")
    row = next(i for i, line in enumerate(lines) if f"`{first}`" in line)
    assert lines[row].startswith("- **first chat** ·")
    buffers.replace_all(index, buffers.texts[index].replace("**first chat**", "**Renamed**"))
    actions = await _code_actions(editor, index, row)
    assert set(actions) == {
        "Goose: Open “Renamed”",
        f"Goose: Rename {first} to “Renamed”",
        "Goose: Delete “Renamed”",
    }
    await _execute(editor, actions[f"Goose: Rename {first} to “Renamed”"])
    await editor.goose.wait_for(lambda: "**Renamed** ·" in buffers.texts[index])
    (entry,) = (await editor.goose.request("goose/listSessions", {}))["sessions"]
    assert entry["title"] == "Renamed"
    transcript = editor.tmp / "data" / "transcripts" / f"{first}.md"
    assert transcript.exists()
    await _execute(editor, actions["Goose: Delete “Renamed”"])
    # Forgotten here; the agent still lists its own copy (as goose keeps it in its database).
    await editor.goose.wait_for(
        lambda: f"`{first}` · {editor.workspace} · agent\n" in buffers.texts[index]
    )
    (entry,) = (await editor.goose.request("goose/listSessions", {}))["sessions"]
    assert entry["source"] == "agent" and entry["loaded"] is False
    assert editor.received("session/close")
    assert not transcript.exists(), "its transcript goes with it"


async def test_slash_commands_complete_in_the_prompt_section(editor: Editor) -> None:
    from support.buffers import EditorBuffers

    await editor.start({"turns": [[{"text": "hi"}]]})
    buffers = EditorBuffers(editor.client, "utf-8")
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openChat", arguments=[])
    )
    shown = await editor.goose.wait_for(lambda: editor.client.shown_documents)
    uri = shown[0].uri
    buffers.open(uri)
    buffers.type_at_end(uri, "/")
    line = buffers.texts[uri].count("\n")
    result = await editor.client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=1),
        )
    )
    assert result is not None
    items = result.items if isinstance(result, types.CompletionList) else result
    assert [i.label for i in items] == ["/compact"]
    nothing = await editor.client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=0, character=1),
        )
    )
    assert nothing is None, "only in the prompt section"


async def test_restart_on_demand_reloads_open_sessions(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "ok"}]]})
    sid = await editor.new_session()
    before = (await editor.goose.request("goose/status", {}))["agent"]["pid"]
    result = await editor.goose.request("goose/restart", {})
    assert result["agent"]["state"] == "running" and result["agent"]["pid"] != before
    assert [m["params"]["sessionId"] for m in editor.received("session/load")] == [sid]
    end = await editor.goose.turn_end(await editor.prompt(sid, "still here?"))
    assert end["stopReason"] == "end_turn"


async def _code_actions(editor: Editor, uri: str, line: int) -> dict[str, types.CodeAction]:
    result = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(line, 0), types.Position(line, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return {a.title: a for a in result or [] if isinstance(a, types.CodeAction)}


async def _execute(editor: Editor, action: types.CodeAction) -> None:
    assert action.command is not None
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=action.command.command, arguments=action.command.arguments
        )
    )


async def test_chats_are_listed_from_the_journal_when_the_agent_cannot_be_reached(
    tmp_path: Path,
) -> None:
    """The agent down (here: its program gone) is no reason to hide the chats goose-ls
    journaled: goose/listSessions lists them, without the agent's own."""
    first = await start_editor(tmp_path)
    try:
        await first.start({"turns": [[{"text": "ok"}]]})
        session_id = await first.new_session()
        await first.goose.turn_end(await first.prompt(session_id, "remember me"))
    finally:
        await stop_editor(first)
    again = await start_editor(tmp_path)
    try:
        await again.start(settings={"agent": {"command": [str(tmp_path / "no-such-agent")]}})
        listed = (await again.goose.request("goose/listSessions", {}))["sessions"]
        assert [s["sessionId"] for s in listed] == [session_id]
    finally:
        await stop_editor(again)
