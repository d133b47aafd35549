"""Fork a chat at a turn: at an agent that forks (goose's shape, unadvertised, cut by
time; Claude's, advertised, cut at its message id), its history copied from the journal;
where the agent cannot fork (codex), a new chat whose first message is a summary to edit."""

from __future__ import annotations

import hashlib
import re
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from goose_ls.lsp.transcript.text import SENTINEL
from goose_ls.sessions import path_of
from support.buffers import EDITORS, EditorBuffers
from support.harness import Editor, SharedEditor, shared_agent, shared_with
from support.images import DRAWING, SHOT, b64, image_update

pytestmark = shared_agent(__name__)

TURNS = [
    [{"text": "First answer.", "messageId": "msg_01"}],
    [{"text": "Second answer.", "messageId": "msg_02"}],
    [{"text": "Reply in the fork.", "messageId": "msg_03"}],
]
CLAUDE_LIKE = {
    "agentInfo": {
        "name": "@agentclientprotocol/claude-agent-acp",
        "title": "Claude Agent",
        "version": "0.101.0",
    },
    "capabilities": {"loadSession": True, "sessionCapabilities": {"fork": {}}},
}
CODEX_LIKE = {
    "agentInfo": {"name": "codex-acp", "title": "Codex", "version": "0.16.0"},
    "capabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}},
    "noFork": True,
}


async def _two_turns(editor: Editor) -> tuple[str, str, str, int, int]:
    """A chat with two ended turns: its id, the turns' ids, and when (Unix seconds) the
    second one was sent, within two bounds."""
    session_id = await editor.new_session()
    first = await editor.prompt(session_id, "first question")
    await editor.goose.turn_end(first)
    before = int(time.time())
    second = await editor.prompt(session_id, "second question")
    after = int(time.time())
    await editor.goose.turn_end(second)
    return session_id, first, second, before, after


async def _fork(editor: Editor, session_id: str, message_id: str) -> dict[str, Any]:
    return await editor.goose.request(
        "goose/forkSession", {"sessionId": session_id, "messageId": message_id}
    )


def _transcript(summary: dict[str, Any]) -> str:
    return Path(summary["transcript"].removeprefix("file://")).read_text(encoding="utf-8")


async def test_goose_forks_unadvertised_cut_before_the_next_turn(shared: Editor) -> None:
    await shared.start({"turns": TURNS})
    session_id, first, _, before, after = await _two_turns(shared)

    forked = await _fork(shared, session_id, first)

    (fork,) = shared.received("session/fork")
    assert fork["params"]["sessionId"] == session_id
    assert before <= fork["params"]["_meta"]["conversationBefore"] <= after, "cut by time"
    assert forked["forkedFrom"] == session_id and "seed" not in forked
    assert forked["sessionId"] != session_id and forked["title"] == "first question (fork)"
    text = await shared.goose.wait_for(
        lambda: t if "First answer." in (t := _transcript(forked)) else None, what="history"
    )
    body = text.split(SENTINEL)[0]
    assert "first question" in body and "First answer." in body
    assert "second question" not in body and "Second answer." not in body
    assert "Forked from “first question”" in body

    reply = await shared.prompt(forked["sessionId"], "go on")
    assert (await shared.goose.turn_end(reply))["stopReason"] == "end_turn"
    (*_, prompt) = shared.received("session/prompt")
    assert prompt["params"]["sessionId"] == forked["sessionId"], "the fork is a chat of its own"


async def test_a_fork_at_the_last_turn_takes_the_whole_chat(shared: Editor) -> None:
    await shared.start({"turns": TURNS})
    session_id, _, second, _, _ = await _two_turns(shared)
    await _fork(shared, session_id, second)
    (fork,) = shared.received("session/fork")
    assert "conversationBefore" not in (fork["params"].get("_meta") or {})


@shared_with(agent=CLAUDE_LIKE)
async def test_claude_is_cut_at_its_last_message_of_the_turn(shared: SharedEditor) -> None:
    await shared.start({**CLAUDE_LIKE, "turns": TURNS})
    session_id, first, _, _, _ = await _two_turns(shared)
    forked = await _fork(shared, session_id, first)
    (fork,) = shared.received("session/fork")
    assert fork["params"]["_meta"]["jetbrains"]["air"]["fork"] == {
        "version": 1,
        "messageId": "msg_01",
    }
    assert "seed" not in forked


@pytest.mark.asyncio(loop_scope="function")  # codex's initialize answer
async def test_an_agent_without_fork_gets_a_new_chat_seeded_with_a_summary(
    editor: Editor,
) -> None:
    await editor.start({**CODEX_LIKE, "turns": TURNS})
    session_id, first, _, _, _ = await _two_turns(editor)

    forked = await _fork(editor, session_id, first)

    assert editor.received("session/fork") == [], "not asked of an agent without it"
    assert "Codex cannot fork chats" in forked["notForked"]
    seed = forked["seed"]
    assert "Me: first question" in seed and "Codex: First answer." in seed
    assert "Second answer." not in seed
    assert "Not a fork: Codex cannot fork chats" in _transcript(forked).split(SENTINEL)[0]


@pytest.mark.asyncio(loop_scope="function")  # its own editor
async def test_without_fork_the_code_action_says_so_and_the_summary_waits_to_be_sent(
    editor: Editor,
) -> None:
    capabilities, encoding = EDITORS["helix"]
    await editor.start({**CODEX_LIKE, "turns": TURNS}, editor=capabilities)
    buffers = EditorBuffers(editor.client, encoding)
    await _two_turns(editor)
    uri = await _transcript_open(editor, buffers)
    heading = buffers.texts[uri].split("\n").index("## You")
    shown = await editor.new_chat_from_here(uri, heading)
    text = Path(shown.removeprefix("file://")).read_text(encoding="utf-8")
    section = text.split(SENTINEL)[1]
    assert "Me: first question" in section and "Codex: First answer." in section
    assert "not a fork" in await editor.shown("not a fork")


async def _transcript_open(editor: Editor, buffers: EditorBuffers) -> str:
    """The chat's transcript, opened in ``buffers``: its URI."""
    (summary, *_) = (await editor.goose.request("goose/status", {}))["sessions"]
    uri: str = summary["transcript"]
    buffers.open(uri)
    return uri


@pytest.mark.asyncio(loop_scope="function")  # its own editor
async def test_fork_chat_here_is_a_code_action_on_a_turn_heading(editor: Editor) -> None:
    capabilities, encoding = EDITORS["helix"]
    await editor.start({"turns": TURNS}, editor=capabilities)
    buffers = EditorBuffers(editor.client, encoding)
    session_id, first, _, _, _ = await _two_turns(editor)
    uri = await _transcript_open(editor, buffers)
    lines = buffers.texts[uri].split("\n")
    heading = lines.index("## You")  # the first turn's
    reply = next(n for n, line in enumerate(lines) if line == "First answer.")

    assert "Goose: Fork chat here" not in await editor.code_actions(uri, reply)
    action = (await editor.code_actions(uri, heading))["Goose: Fork chat here"]
    assert action.command is not None and list(action.command.arguments or []) == [
        session_id,
        first,
    ]
    await editor.run(action)
    (fork,) = await editor.goose.wait_for(lambda: editor.received("session/fork"), what="fork")
    assert "conversationBefore" in fork["params"]["_meta"]
    shown = await editor.goose.wait_for(
        lambda: [d.uri for d in editor.client.shown_documents if d.uri != uri] or None,
        what="the fork's transcript shown",
    )
    assert Path(shown[-1].removeprefix("file://")).exists()


async def test_a_turn_that_has_not_ended_or_does_not_exist_is_named(shared: Editor) -> None:
    await shared.start({"turns": TURNS})
    session_id, *_ = await _two_turns(shared)
    with pytest.raises(JsonRpcException, match="no ended turn 'nope' to fork at") as raised:
        await _fork(shared, session_id, "nope")
    assert raised.value.code == -32602
    assert shared.received("session/fork") == []


@shared_with(agent=CLAUDE_LIKE)
async def test_a_fork_the_agent_refuses_becomes_a_new_chat_with_the_summary(
    shared: SharedEditor,
) -> None:
    """Claude refuses a cut point it does not find (a chat opened again may have lost it):
    the user still goes on from there, with the summary and the agent's reason."""
    refusal = {"code": -32602, "message": "Invalid params", "data": "Fork point message not found"}
    await shared.start({**CLAUDE_LIKE, "forkError": refusal, "turns": TURNS})
    session_id, first, _, _, _ = await _two_turns(shared)
    forked = await _fork(shared, session_id, first)
    assert len(shared.received("session/fork")) == 1
    assert "Claude Agent could not fork it there" in forked["notForked"]
    assert "Fork point message not found" in forked["notForked"]
    assert "Claude Agent: First answer." in forked["seed"]


async def test_a_fork_s_images_are_its_own_once_the_chat_it_came_from_is_deleted(
    shared: Editor,
) -> None:
    """A chat holds an image the user sent (an ``@`` mention) and one the agent sent; its
    fork's history links copies in the fork's own outputs folder, so deleting the chat it
    came from (its folder with it) leaves the fork's transcript links and ``goose/replay``
    images whole, with the same bytes, read-write for the user alone."""
    (shared.workspace / "shot.png").write_bytes(SHOT)
    turn = [image_update(b64(DRAWING)), {"text": "A dot, and my drawing."}]
    await shared.start({"turns": [turn]})
    parent = await shared.new_session()
    message_id = await shared.prompt(parent, "What is in @shot.png?")
    await shared.goose.turn_end(message_id)
    forked = await _fork(shared, parent, message_id)
    fork = forked["sessionId"]
    text = await shared.goose.wait_for(
        lambda: t if "A dot" in (t := _transcript(forked)) else None, what="the fork's history"
    )
    outputs = shared.tmp / "data" / "outputs"
    assert (outputs / parent).is_dir()
    assert await shared.goose.request("goose/deleteSession", {"sessionId": parent}) == {}
    assert not (outputs / parent).exists(), "the parent's folder went with it"

    transcript = Path(forked["transcript"].removeprefix("file://"))
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text.split(SENTINEL)[0])
    assert len(links) == 2, text
    for link, data in zip(links, (SHOT, DRAWING), strict=True):
        kept = (transcript.parent / link).resolve()
        assert kept.parent == outputs / fork, link
        assert kept.read_bytes() == data
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600

    shared.goose.updates.clear()
    await shared.goose.request("goose/replay", {"sessionId": fork, "afterIndex": 0})
    replayed = [
        u["update"]["content"]
        for u in shared.goose.updates
        if u["sessionId"] == fork and (u["update"].get("content") or {}).get("type") == "image"
    ]
    assert len(replayed) == 2, replayed
    for image, data in zip(replayed, (SHOT, DRAWING), strict=True):
        path = Path(path_of(image["uri"]))
        assert path.parent == outputs / fork and path.read_bytes() == data, image
        assert image["sha256"] == hashlib.sha256(data).hexdigest()
    assert replayed[0]["source"] == (shared.workspace / "shot.png").as_uri()
