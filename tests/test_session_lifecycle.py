"""End to end: chats taken back by session/resume where the agent has it (else loaded),
deleted at the agent too where it can, and signing out with ACP ``logout``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from goose_ls.scripted.agent import GOOSE_CAPABILITIES
from support.harness import Editor

SESSIONS = GOOSE_CAPABILITIES["sessionCapabilities"]
RESUMES = {**GOOSE_CAPABILITIES, "sessionCapabilities": {**SESSIONS, "resume": {}}}
DELETES = {**GOOSE_CAPABILITIES, "sessionCapabilities": {**SESSIONS, "delete": {}}}
LOGS_OUT = {**GOOSE_CAPABILITIES, "auth": {"logout": {}}}
GITHUB = {"name": "github", "command": "/usr/bin/gh-mcp", "args": ["--stdio"], "env": []}


def _script(editor: Editor, capabilities: dict[str, Any]) -> dict[str, Any]:
    """An agent that keeps its chats (a load replays them) and answers "first"."""
    return {
        "capabilities": capabilities,
        "conversations": str(editor.tmp / "conversations"),
        "byPrompt": {"first": [{"text": "first answer"}]},
    }


async def _chat_closed_after_one_turn(editor: Editor) -> str:
    session_id = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(session_id, "first"))
    await editor.goose.request("goose/closeSession", {"sessionId": session_id})
    return session_id


@pytest.mark.parametrize(
    ("capabilities", "method", "other"),
    [(RESUMES, "session/resume", "session/load"), (GOOSE_CAPABILITIES, "session/load", None)],
    ids=["resume", "load"],
)
async def test_a_journaled_chat_opens_again_whole(
    editor: Editor, capabilities: dict[str, Any], method: str, other: str | None
) -> None:
    await editor.start(_script(editor, capabilities), {"agent": {"mcpServers": [GITHUB]}})
    session_id = await _chat_closed_after_one_turn(editor)
    await editor.goose.request("goose/loadSession", {"sessionId": session_id})
    (reopen,) = editor.received(method)
    (new,) = editor.received("session/new")
    assert reopen["params"] == {
        "sessionId": session_id,
        **{k: v for k, v in new["params"].items() if k != "_meta"},
    }, "the same set-up as session/new"
    assert reopen["params"]["mcpServers"] == [GITHUB]
    if other is not None:
        assert editor.received(other) == []
    assert [u for u in editor.goose.updates if u.get("replay")] == [], "the journal had it all"
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openSession", arguments=[session_id])
    )
    (shown,) = await editor.goose.wait_for(lambda: editor.client.shown_documents)
    transcript = Path(shown.uri.removeprefix("file://"))
    text = await editor.goose.wait_for(
        lambda: t if "first answer" in (t := transcript.read_text(encoding="utf-8")) else None,
        what="the chat in its transcript",
    )
    assert text.count("first answer") == 1, "the whole chat, once"
    before = len(editor.goose.updates)
    replayed = await editor.goose.request("goose/replay", {"sessionId": session_id})
    resent = editor.goose.updates[before:]
    assert replayed["count"] > 0 and resent, "the journal has the chat"
    said = "".join(
        str(u["update"].get("content", {}).get("text", ""))
        for u in resent
        if u["update"]["sessionUpdate"] in ("user_message_chunk", "agent_message_chunk")
    )
    assert "first" in said and "first answer" in said
    end = await editor.goose.turn_end(await editor.prompt(session_id, "again"))
    assert end["stopReason"] == "end_turn"


async def test_a_restarted_agent_takes_open_chats_back_by_resume(editor: Editor) -> None:
    await editor.start(_script(editor, RESUMES))
    session_id = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(session_id, "first"))
    await editor.goose.request("goose/restart", {})
    assert [m["params"]["sessionId"] for m in editor.received("session/resume")] == [session_id]
    assert editor.received("session/load") == []
    notes = [note["text"] for note in editor.goose.of_kind("note", session_id)]
    assert "The agent was restarted; this chat was reloaded." in notes
    end = await editor.goose.turn_end(await editor.prompt(session_id, "still here?"))
    assert end["stopReason"] == "end_turn"


@pytest.mark.parametrize(
    ("capabilities", "forwarded"), [(DELETES, 1), (GOOSE_CAPABILITIES, 0)], ids=["delete", "not"]
)
async def test_delete_reaches_an_agent_that_deletes(
    editor: Editor, capabilities: dict[str, Any], forwarded: int
) -> None:
    await editor.start({"capabilities": capabilities})
    session_id = await editor.new_session()
    assert await editor.goose.request("goose/deleteSession", {"sessionId": session_id}) == {}
    sent = editor.received("session/delete")
    assert [m["params"] for m in sent] == [{"sessionId": session_id}] * forwarded


async def test_a_delete_the_agent_refuses_is_said_and_done_here(editor: Editor) -> None:
    refusal = {"code": -32603, "message": "Internal error", "data": "database is locked"}
    await editor.start({"capabilities": DELETES, "deleteError": refusal})
    session_id = await editor.new_session()
    result = await editor.goose.request("goose/deleteSession", {"sessionId": session_id})
    assert "database is locked" in result["agentError"]
    warning = await editor.shown("was deleted here, not at the agent")
    assert session_id in warning and "database is locked" in warning
    with pytest.raises(JsonRpcException, match="unknown session"):
        await editor.goose.request("goose/replay", {"sessionId": session_id})


async def test_logout_leaves_the_agent_waiting_for_a_sign_in(editor: Editor) -> None:
    await editor.start({"capabilities": LOGS_OUT})
    await editor.new_session()
    result = await editor.goose.request("goose/logout", {})
    assert len(editor.received("logout")) == 1
    assert result["agent"]["state"] == "error" and result["agent"]["reason"] == "auth_required"
    assert "Configure Provider" in result["agent"]["message"], "how to sign in again"
    signed_in = await editor.goose.request("goose/authenticate", {})
    assert signed_in["signedIn"] is True and signed_in["agent"]["state"] == "running"
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.logout", arguments=[])
    )
    await editor.shown("signed out of the agent")
    assert len(editor.received("logout")) == 2


async def test_logout_without_the_capability_says_the_agent_cannot(editor: Editor) -> None:
    await editor.start({})
    with pytest.raises(JsonRpcException, match="does not support signing out") as raised:
        await editor.goose.request("goose/logout", {})
    assert raised.value.code == -32001
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.logout", arguments=[])
    )
    shown = await editor.shown("goose.logout")
    assert "does not support signing out" in shown
    assert editor.received("logout") == []


async def _open_chat(editor: Editor) -> str:
    """goose.openChat, as a plugin-free editor runs it; the chat it showed."""
    shown = len(editor.client.shown_documents)
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openChat", arguments=[])
    )
    await editor.goose.wait_for(lambda: len(editor.client.shown_documents) > shown)
    return editor.client.shown_documents[-1].uri


async def test_a_chat_the_plugin_deletes_is_not_the_plugin_free_chat_any_more(
    editor: Editor,
) -> None:
    """goose/deleteSession (a plugin) and goose.deleteSession (a code action) are one use
    case: the plugin-free chat followed only the second, and opened the deleted chat
    again."""
    await editor.start({"turns": [[{"text": "ok"}]]})
    first = await _open_chat(editor)
    ((session,),) = [(await editor.goose.request("goose/status", {}))["sessions"]]
    await editor.goose.request("goose/deleteSession", {"sessionId": session["sessionId"]})
    second = await _open_chat(editor)
    assert second != first
    (now,) = (await editor.goose.request("goose/status", {}))["sessions"]
    assert now["sessionId"] != session["sessionId"]


async def test_a_chat_the_plugin_closes_is_resumed_when_the_chat_is_opened_again(
    editor: Editor,
) -> None:
    """After goose/closeSession the plugin-free chat pointed at a closed session (a send
    there found no session); it resumes the workspace's last chat instead."""
    await editor.start({"turns": [[{"text": "ok"}]]})
    await _open_chat(editor)
    ((session,),) = [(await editor.goose.request("goose/status", {}))["sessions"]]
    await editor.goose.turn_end(await editor.prompt(session["sessionId"], "hello"))
    await editor.goose.request("goose/closeSession", {"sessionId": session["sessionId"]})
    assert (await editor.goose.request("goose/status", {}))["sessions"] == []
    await _open_chat(editor)
    (now,) = (await editor.goose.request("goose/status", {}))["sessions"]
    assert now["sessionId"] == session["sessionId"], "the last chat, open again"
