"""A chat's life at a second, real agent: codex-acp taking chats back by session/resume or
session/load, closing them, keeping them when goose-ls deletes its copy, signing out.

codex-acp advertises ``loadSession``, ``sessionCapabilities`` ``list``, ``resume`` and
``close`` (not ``delete``), and ``auth.logout``; it keeps its chats under CODEX_HOME,
here the test's own (see :mod:`support.codex`), with a fake model API.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from goose_ls.lsp.transcript.text import SENTINEL
from support.buffers import EditorBuffers
from support.codex import CODEX, MISSING, codex_home, start_codex
from support.fake_model import FakeModel, Reply, conversation
from support.harness import Editor, start_editor, stop_editor
from support.real_agent import advertised, answers

pytestmark = pytest.mark.skipif(not CODEX.exists(), reason=MISSING)

QUESTION, ANSWER = "What is the answer?", "The answer is 42."
FOLLOW_UP, SECOND_ANSWER = "And doubled?", "Doubled, 84."


async def _first_chat(tmp_path: Path, model: FakeModel) -> str:
    """One turn with codex in a goose-ls that then shuts down; the chat's id."""
    first = await start_editor(tmp_path)
    try:
        await start_codex(first, model)
        session_id = await first.new_session()
        end = await first.goose.turn_end(await first.prompt(session_id, QUESTION))
        assert end["stopReason"] == "end_turn" and first.goose.text(end["messageId"]) == ANSWER
    finally:
        await stop_editor(first)
    return session_id


async def _again(tmp_path: Path, model: FakeModel, **settings: Any) -> Editor:
    """goose-ls started again on the same data dir (unless ``settings`` say otherwise) and
    the same CODEX_HOME; what it sends codex is recorded apart from the first run's."""
    again = await start_editor(tmp_path)
    again.record = tmp_path / "again-received.jsonl"
    await start_codex(again, model, settings)
    return again


def _said(updates: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The messages among ``updates``, chunks of one message joined, as (kind, text)."""
    said: list[tuple[str, str]] = []
    for update in updates:
        kind = update["update"]["sessionUpdate"]
        if kind not in ("user_message_chunk", "agent_message_chunk"):
            continue
        text = update["update"]["content"].get("text", "")
        if said and said[-1][0] == kind:
            said[-1] = (kind, said[-1][1] + text)
        else:
            said.append((kind, text))
    return said


HISTORY = [("user_message_chunk", QUESTION), ("agent_message_chunk", ANSWER)]


async def _transcript(editor: Editor, session_id: str) -> str:
    """The chat's transcript as goose-ls shows it, once it holds the first answer."""
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openSession", arguments=[session_id])
    )
    (shown,) = await editor.goose.wait_for(lambda: editor.client.shown_documents)
    path = Path(shown.uri.removeprefix("file://"))
    text: str = await editor.goose.wait_for(
        lambda: t if ANSWER in (t := path.read_text(encoding="utf-8")) else None,
        what="the chat in its transcript",
    )
    return text


async def _follow_up(editor: Editor, model: FakeModel, session_id: str) -> None:
    """A second turn works, and the model is told the whole chat."""
    mid = await editor.prompt(session_id, FOLLOW_UP)
    assert (await editor.goose.turn_end(mid))["stopReason"] == "end_turn"
    assert editor.goose.text(mid) == SECOND_ANSWER
    told = conversation(model.turns()[-1])
    assert told[-3:] == [("user", QUESTION), ("assistant", ANSWER), ("user", FOLLOW_UP)], told


async def test_codex_resumes_a_chat_after_goose_ls_restarts(tmp_path: Path) -> None:
    with FakeModel([Reply((ANSWER,)), Reply((SECOND_ANSWER,))]) as model:
        session_id = await _first_chat(tmp_path, model)
        again = await _again(tmp_path, model)
        try:
            await again.goose.request("goose/loadSession", {"sessionId": session_id})
            assert {"resume", "close"} <= advertised(again)["sessionCapabilities"].keys()
            (resume,) = again.received("session/resume")
            assert resume["params"]["sessionId"] == session_id
            assert "result" in answers(again, "session/resume")[0], "codex took it back"
            assert again.received("session/load") == []
            assert _said(again.goose.updates) == [], "nothing replayed: the journal has the chat"
            await again.goose.request("goose/replay", {"sessionId": session_id})
            await again.goose.wait_for(lambda: _said(again.goose.updates) == HISTORY)
            assert (await _transcript(again, session_id)).count(ANSWER) == 1
            await _follow_up(again, model, session_id)
        finally:
            await stop_editor(again)


async def test_codex_loads_a_chat_goose_ls_never_journaled(tmp_path: Path) -> None:
    """Another goose-ls (another data dir) finds codex's chat in its list and loads it:
    codex replays it, and that is the chat's history there."""
    with FakeModel([Reply((ANSWER,)), Reply((SECOND_ANSWER,))]) as model:
        session_id = await _first_chat(tmp_path, model)
        again = await _again(tmp_path, model, dataDir=str(tmp_path / "other-data"))
        try:
            listed = await again.goose.request("goose/listSessions", {})
            assert advertised(again)["loadSession"] is True
            (entry,) = [s for s in listed["sessions"] if s["sessionId"] == session_id]
            assert entry["source"] == "agent" and QUESTION in entry["title"]
            await again.goose.request("goose/loadSession", {"sessionId": session_id})
            (load,) = again.received("session/load")
            assert load["params"]["sessionId"] == session_id
            assert again.received("session/resume") == []
            replayed = [u for u in again.goose.updates if u.get("replay")]
            assert _said(replayed) == HISTORY, "codex's replay, before the answer"
            assert (await _transcript(again, session_id)).count(ANSWER) == 1
            await _follow_up(again, model, session_id)
        finally:
            await stop_editor(again)


async def test_codex_takes_an_open_chat_back_after_it_restarts(editor: Editor) -> None:
    with FakeModel([Reply((ANSWER,)), Reply((SECOND_ANSWER,))]) as model:
        await start_codex(editor, model)
        session_id = await editor.new_session()
        await editor.goose.turn_end(await editor.prompt(session_id, QUESTION))
        await editor.goose.request("goose/restart", {})
        assert len(editor.received("initialize")) == 2, "a new codex"
        (resume,) = editor.received("session/resume")
        assert resume["params"]["sessionId"] == session_id
        assert "result" in answers(editor, "session/resume")[0], "the new codex took it back"
        assert editor.received("session/load") == []
        notes = [note["text"] for note in editor.goose.of_kind("note", session_id)]
        assert "The agent was restarted; this chat was reloaded." in notes
        await _follow_up(editor, model, session_id)


async def test_a_chat_closed_then_deleted_here_stays_at_codex(editor: Editor) -> None:
    """codex closes a chat when goose-ls does; it cannot delete one (no
    ``sessionCapabilities.delete``), so it keeps its copy, which goose-ls lists after
    forgetting its own and can load again."""
    with FakeModel([Reply((ANSWER,))]) as model:
        await start_codex(editor, model)
        session_id = await editor.new_session()
        await editor.goose.turn_end(await editor.prompt(session_id, QUESTION))
        assert "delete" not in advertised(editor)["sessionCapabilities"]
        await editor.goose.request("goose/closeSession", {"sessionId": session_id})
        (close,) = editor.received("session/close")
        assert close["params"] == {"sessionId": session_id}
        assert answers(editor, "session/close") == [
            {"jsonrpc": "2.0", "id": close["id"], "result": {}}
        ], "codex closed it"

        result = await editor.goose.request("goose/deleteSession", {"sessionId": session_id})
        assert result == {}, "no agentError: goose-ls asked nothing of codex"
        assert editor.received("session/delete") == []
        listed = await editor.goose.request("goose/listSessions", {})
        (entry,) = [s for s in listed["sessions"] if s["sessionId"] == session_id]
        assert entry["source"] == "agent", "codex still has it"
        await editor.goose.request("goose/loadSession", {"sessionId": session_id})
        assert len(editor.received("session/load")) == 1, "gone here: loaded with its replay"
        assert _said([u for u in editor.goose.updates if u.get("replay")]) == HISTORY


async def test_signing_out_of_codex_and_in_again(editor: Editor) -> None:
    """codex signs in with an API key from its environment (OPENAI_API_KEY; NO_BROWSER
    leaves out its browser sign-in, which goose-ls would otherwise try first), keeping it
    in CODEX_HOME/auth.json, and signing out removes it."""
    with FakeModel([Reply((ANSWER,))]) as model:
        await start_codex(editor, model, NO_BROWSER="1", OPENAI_API_KEY="sk-fake")
        auth = codex_home(editor) / "auth.json"
        signed_in = await editor.goose.request("goose/authenticate", {})
        assert "logout" in advertised(editor)["auth"]
        assert signed_in["signedIn"] is True and auth.exists()
        (method,) = [m["params"]["methodId"] for m in editor.received("authenticate")]
        assert method == "openai-api-key"

        result = await editor.goose.request("goose/logout", {})
        assert len(editor.received("logout")) == 1 and "result" in answers(editor, "logout")[0]
        assert not auth.exists(), "codex forgot its key"
        assert result["agent"]["state"] == "error" and result["agent"]["reason"] == "auth_required"
        assert "OPENAI_API_KEY" in result["agent"]["message"], "how to sign in again"

        again = await editor.goose.request("goose/authenticate", {})
        assert again["signedIn"] is True and again["agent"]["state"] == "running"
        assert auth.exists()
        session_id = await editor.new_session()
        end = await editor.goose.turn_end(await editor.prompt(session_id, QUESTION))
        assert end["stopReason"] == "end_turn"


async def test_codex_cannot_fork_so_a_new_chat_starts_from_a_summary_of_the_turns(
    editor: Editor,
) -> None:
    """codex-acp does not fork (no ``sessionCapabilities.fork``): **Fork chat here** on the
    first of two turns says so and opens a new chat whose message to send is a summary of
    that turn; sent, it is what codex's model is told in the new chat, and nothing of the
    second turn is."""
    replies = [Reply((ANSWER,)), Reply((SECOND_ANSWER,)), Reply(("Going on.",))]
    with FakeModel(replies) as model:
        await start_codex(editor, model)
        buffers = EditorBuffers(editor.client, "utf-8")  # the harness's Neovim
        session_id = await editor.new_session()
        for question in (QUESTION, FOLLOW_UP):
            await editor.goose.turn_end(await editor.prompt(session_id, question))
        assert "fork" not in advertised(editor)["sessionCapabilities"]

        (summary,) = (await editor.goose.request("goose/status", {}))["sessions"]
        uri = summary["transcript"]
        buffers.open(uri)
        first_turn = buffers.texts[uri].split("\n").index("## You")
        shown = await editor.new_chat_from_here(uri, first_turn)
        assert "not a fork (Codex cannot fork chats)" in await editor.shown("not a fork")
        assert editor.received("session/fork") == []
        assert len(editor.received("session/new")) == 2, "the new chat is codex's too"
        (forked,) = [
            s
            for s in (await editor.goose.request("goose/status", {}))["sessions"]
            if s["sessionId"] != session_id
        ]
        assert forked["transcript"] == shown

        buffers.open(shown)
        chat, seed = buffers.texts[shown].split(f"{SENTINEL}\n", 1)
        assert "Not a fork: Codex cannot fork chats" in chat
        assert f"Me: {QUESTION}" in seed and f"Codex: {ANSWER}" in seed
        assert FOLLOW_UP not in seed and SECOND_ANSWER not in seed
        await editor.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="goose.send", arguments=[shown])
        )
        (*_, sent) = await editor.goose.wait_for(
            lambda: editor.received("session/prompt")[2:] or None, what="the summary sent"
        )
        assert sent["params"]["sessionId"] == forked["sessionId"] != session_id
        await editor.goose.wait_for(lambda: len(model.turns()) == 3, what="the model asked")
        told = conversation(model.turns()[-1])
        assert [role for role, _ in told].count("assistant") == 0, "a chat of its own"
        (*_, (role, text)) = told
        assert role == "user" and text.strip() == seed.strip()
        assert QUESTION in text and ANSWER in text
        assert FOLLOW_UP not in str(model.turns()[-1].body["input"])
        assert SECOND_ANSWER not in str(model.turns()[-1].body["input"])
