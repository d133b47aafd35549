"""Past chats found by phrase (workspace/symbol, goose/searchSessions), and exported."""

from __future__ import annotations

import datetime
import shutil
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from support.harness import SERVER_COMMAND, Editor, raw_request, start_editor, stop_editor

PHRASE = "the frobnicator keeps failing on alternate Tuesdays"
REPLY = f"Short answer: {PHRASE}, as the logs show.\nMore below."
QUESTION = "Why does it fail?"
FAKETIME = shutil.which("faketime")


async def _symbols(editor: Editor, query: str) -> list[types.SymbolInformation]:
    found = await editor.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    assert all(isinstance(s, types.SymbolInformation) for s in found or [])
    return [s for s in found or [] if isinstance(s, types.SymbolInformation)]


async def _chat(editor: Editor, question: str = QUESTION) -> tuple[str, str, Path]:
    """A session with one turn; its id, the turn's message id and its transcript."""
    summary = await editor.goose.request("goose/newSession", {})
    message_id = await editor.prompt(summary["sessionId"], question)
    await editor.goose.turn_end(message_id)
    transcript = Path(summary["transcript"].removeprefix("file://"))
    await editor.goose.wait_for(
        lambda: PHRASE in transcript.read_text(encoding="utf-8"), what="the reply on disk"
    )
    return summary["sessionId"], message_id, transcript


def _line_of(transcript: Path, text: str) -> int:
    lines = transcript.read_text(encoding="utf-8").split("\n")
    return next(number for number, line in enumerate(lines) if text in line)


async def test_a_phrase_streamed_a_character_at_a_time_is_found_at_its_turn(
    editor: Editor,
) -> None:
    await editor.start(
        {
            "agentInfo": {"name": "scripted", "title": "Claude Agent", "version": "1.0"},
            "turns": [[{"text": REPLY, "chunks": len(REPLY)}]],
        }
    )
    assert editor.capabilities is not None and editor.capabilities.workspace_symbol_provider
    session_id, message_id, transcript = await _chat(editor)

    (symbol,) = await _symbols(editor, "Frobnicator keeps failing on altern")
    assert symbol.name.startswith(f"{QUESTION} · ") and PHRASE in symbol.name
    assert (symbol.container_name or "").startswith("Claude Agent · "), "the agent's own name"
    assert symbol.location.uri == transcript.as_uri()
    assert symbol.location.range.start.line == _line_of(transcript, PHRASE)

    (hit,) = (await editor.goose.request("goose/searchSessions", {"query": PHRASE}))["results"]
    first = min(
        u["index"]
        for u in editor.goose.updates
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    assert hit.pop("snippet").startswith("Short answer: " + PHRASE)
    assert datetime.datetime.fromisoformat(hit.pop("at")).date() == datetime.date.today()
    assert hit == {
        "sessionId": session_id,
        "title": QUESTION,
        "index": first,
        "messageId": message_id,
        "kind": "agent",
        "transcript": transcript.as_uri(),
        "line": _line_of(transcript, PHRASE),
    }
    (asked,) = (await editor.goose.request("goose/searchSessions", {"query": "does it"}))["results"]
    assert (asked["kind"], asked["line"]) == ("user", _line_of(transcript, QUESTION))


async def test_an_empty_query_lists_the_latest_chats_and_bad_params_are_named(
    editor: Editor,
) -> None:
    await editor.start({"turns": [[{"text": REPLY}]]})
    older, _, _ = await _chat(editor, "first chat")
    newer, _, transcript = await _chat(editor, "second chat")
    symbols = await _symbols(editor, "")
    assert [(s.name, s.kind) for s in symbols] == [
        ("second chat", types.SymbolKind.File),
        ("first chat", types.SymbolKind.File),
    ]
    assert symbols[0].location.uri == transcript.as_uri()
    result = await editor.goose.request("goose/searchSessions", {"query": "", "limit": 1})
    assert [(r["sessionId"], r["kind"], r["line"]) for r in result["results"]] == [
        (newer, "chat", 0)
    ]
    assert (await editor.goose.request("goose/searchSessions", {"query": "nowhere said"})) == {
        "results": []
    }
    for params, problem in [
        ({"query": "x", "limit": 0}, "goose/searchSessions: limit: must be from 1 to 500"),
        ({}, "goose/searchSessions: query"),
    ]:
        with pytest.raises(JsonRpcException) as raised:
            await editor.goose.request("goose/searchSessions", params)
        assert raised.value.code == -32602 and problem in str(raised.value.message)
    assert older != newer


@pytest.mark.skipif(
    FAKETIME is None,
    reason="faketime is not installed (Debian package faketime): the week-old chat "
    "needs goose-ls run with its clock set back",
)
async def test_a_phrase_from_a_week_old_chat_is_found(tmp_path: Path) -> None:
    assert FAKETIME is not None
    script: dict[str, Any] = {"turns": [[{"text": REPLY, "chunks": 30}]]}
    # libfaketime moves the wall clock only: asyncio's monotonic clock stays true.
    past = await start_editor(
        tmp_path, [FAKETIME, "--exclude-monotonic", "-f", "-8d", *SERVER_COMMAND]
    )
    try:
        await past.start(script)
        session_id, _, transcript = await _chat(past)
    finally:
        await stop_editor(past)

    now = await start_editor(tmp_path)
    try:
        await now.start(script)
        (symbol,) = await _symbols(now, PHRASE)
        assert symbol.location.uri == transcript.as_uri()
        assert symbol.location.range.start.line == _line_of(transcript, PHRASE)
        (hit,) = (await now.goose.request("goose/searchSessions", {"query": PHRASE}))["results"]
        assert hit["sessionId"] == session_id
        age = datetime.datetime.now(datetime.timezone.utc) - datetime.datetime.fromisoformat(
            hit["at"]
        )
        assert datetime.timedelta(days=7) < age < datetime.timedelta(days=9), hit["at"]
        assert symbol.container_name is not None and hit["at"][:10] in symbol.container_name
    finally:
        await stop_editor(now)


async def _export(editor: Editor, *arguments: Any) -> None:
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.exportChat", arguments=list(arguments))
    )


async def test_export_writes_the_conversation_only_and_only_inside_the_workspace(
    editor: Editor, tmp_path: Path
) -> None:
    await editor.start(
        {
            "turns": [
                [
                    {"thought": "Reading the logs"},
                    {"permission": {"toolCallId": "t1", "title": "shell · grep fail"}},
                    {"text": REPLY, "chunks": 40},
                ]
            ]
        }
    )
    summary = await editor.goose.request("goose/newSession", {})
    session_id = summary["sessionId"]
    message_id = await editor.prompt(session_id, QUESTION)
    (request,) = await editor.goose.wait_for(lambda: editor.goose.of_kind("permission_request"))
    await editor.goose.request(
        "goose/permission", {"requestId": request["requestId"], "optionId": "allow_once"}
    )
    await editor.goose.turn_end(message_id)

    transcript = summary["transcript"]
    where = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    actions = await raw_request(  # as JSON: the typed client reads these as bare Commands
        editor.client,
        "textDocument/codeAction",
        {"textDocument": {"uri": transcript}, "range": where, "context": {"diagnostics": []}},
    )
    (action,) = [a for a in actions if a["title"] == "Goose: Export chat"]
    assert action["command"]["arguments"] == [session_id]
    await _export(editor, *action["command"]["arguments"])
    (shown,) = await editor.goose.wait_for(lambda: editor.client.shown_documents)
    exported = editor.workspace / f"goose-chat-why-does-it-fail-{datetime.date.today()}.md"
    assert shown.uri == exported.as_uri()
    text = exported.read_text(encoding="utf-8")
    assert text.startswith(f"# {QUESTION}\n")
    assert f"## You\n\n{QUESTION}\n" in text and "## goose\n\n> 💭 Reading the logs" in text
    assert "Permission needed:** shell · grep fail" in text and REPLY in text
    assert "<!--" not in text and "code action" not in text and "goose-ls:" not in text

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (editor.workspace / "out").symlink_to(outside)
    (editor.workspace / "link.md").symlink_to(outside / "linked.md")
    for given in ["../escaped.md", str(outside / "absolute.md"), "out/chat.md", "link.md"]:
        await _export(editor, session_id, given)
        message = await editor.shown(f"{given} is outside the workspace")
        assert message.startswith("goose: goose.exportChat: ")
    assert list(outside.iterdir()) == [] and not (tmp_path / "escaped.md").exists()

    await _export(editor, None, "notes/chat.md")  # the current chat: the one exported
    await editor.goose.wait_for(lambda: len(editor.client.shown_documents) == 2)
    assert (editor.workspace / "notes" / "chat.md").read_text(encoding="utf-8") == text
