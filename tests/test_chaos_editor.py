"""The daily loop against an editor that does everything LSP allows (skipped and batched
versions, changes out of order, completion previews, saves with and without text,
``showDocument`` answered ``null``, requests cancelled on the way), chosen by a seed.

Whatever the mix: what the user typed is what the agent gets, the reply shows once, a
card's code action answers that card, and a chat taken up again after goose-ls was killed
shows its history once and sends exactly the next message. The plugin protocol is held
to the same: a plugin that misses notifications gets each event once, in order, through
``goose/replay``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from goose_ls.lsp.transcript.text import SENTINEL
from support.buffers import EDITORS
from support.chaos import Chaos, ChaosBuffers, cancelled
from support.harness import Editor, kill, start_editor

SEEDS = range(int(os.environ.get("GOOSE_LS_CHAOS_SEEDS", "8")))
"""Each seed is one mix; more with ``GOOSE_LS_CHAOS_SEEDS=100 pytest tests/test_chaos_editor.py``."""
REPLY = "Ça marche 👍🏽 — 你好，世界! The code adds 𝔁 to y.\n" * 6  # noqa: RUF001
DRAFTS = [
    "Why is the built-in sum 🦆 faster than the loop?",
    "And for 𝔁 = 你好? Say it\nin two lines.",  # noqa: RUF001
    "Go on ✓ — with the `@` file too",
]
SCRIPT: dict[str, Any] = {
    "turns": [
        [
            {"toolCall": {"toolCallId": "t0", "title": "read · app.py", "kind": "read"}},
            {"permission": {"toolCallId": "t0", "title": "read"}},
            {"text": REPLY, "chunks": 60, "delay": 0.005},
        ],
        [
            {"toolCall": {"toolCallId": "t1", "title": "edit · app.py", "kind": "edit"}},
            {"permission": {"toolCallId": "t1", "title": "edit"}},
            {"text": " second done"},
        ],
    ]
}
AFTER_RESTART: dict[str, Any] = {"turns": [[{"text": "third done"}]]}


def _editor_of(seed: int) -> tuple[Any, str]:
    return EDITORS[sorted(EDITORS)[seed % len(EDITORS)]]


async def _start(editor: Editor, seed: int, script: dict[str, Any] = SCRIPT) -> ChaosBuffers:
    capabilities, encoding = _editor_of(seed)
    await editor.start(script, {"transcript": {"editInterval": 0.02}}, editor=capabilities)
    return ChaosBuffers(editor.client, encoding, Chaos.of(seed))


async def _transcript(editor: Editor, buffers: ChaosBuffers, until: Any = None) -> str:
    """Open the chat goose-ls showed (an editor that answered ``null`` still opens it);
    opening late, once ``until()`` holds, when the chaos has it."""
    await editor.goose.wait_for(lambda: buffers.shown, what="showDocument")
    uri = buffers.shown[-1].uri
    if until is not None and buffers.chaos.opens_late:
        await editor.goose.wait_for(until, what="goose-ls drawing more")
    buffers.open_shown(uri)
    return uri


def _prompts(editor: Editor) -> list[str]:
    """The text of each message the agent was sent."""
    return [
        "".join(block.get("text", "") for block in p["params"]["prompt"])
        for p in editor.received("session/prompt")
    ]


async def _send(
    editor: Editor, buffers: ChaosBuffers, transcript: str, draft: str, typed_before: str = ""
) -> None:
    """Type ``draft`` fast in the prompt section and send it: the agent gets exactly what
    the section holds (``typed_before`` it, then ``draft``)."""
    sent = len(editor.received("session/prompt"))
    buffers.type_fast(transcript, draft)
    if buffers.random.random() < 0.5:
        buffers.save(transcript)
    line = buffers.texts[transcript].count("\n")
    await buffers.run((await buffers.code_actions(transcript, line))["Goose: Send"])
    await editor.goose.wait_for(
        lambda: len(editor.received("session/prompt")) > sent, what="the message at the agent"
    )
    assert _prompts(editor)[sent] == typed_before + draft, f"{buffers.chaos}"


async def _card(editor: Editor, buffers: ChaosBuffers, transcript: str, nth: int = 1) -> None:
    """Answer the chat's ``nth`` permission card through the code action on its line."""
    await editor.goose.wait_for(
        lambda: buffers.texts[transcript].count("Permission needed") >= nth, what="the card"
    )
    lines = buffers.texts[transcript].split("\n")
    card = [i for i, line in enumerate(lines) if "Permission needed" in line][nth - 1]
    actions = await buffers.code_actions(transcript, card)
    (allow,) = [title for title in actions if title.startswith("Goose: Allow once: ")]
    await buffers.run(actions[allow])


@pytest.mark.parametrize("seed", SEEDS)
async def test_the_plugin_free_loop_holds_whatever_the_editor_does(
    tmp_path: Path, seed: int
) -> None:
    editor = await start_editor(tmp_path)
    buffers = await _start(editor, seed)
    code = editor.workspace / "app.py"
    code.write_text("def add(x, y):\n    return x + y\n")
    buffers.open(code.as_uri(), language="python")
    await buffers.run((await buffers.code_actions(code.as_uri(), 0, 2))["Goose: Explain selection"])
    # The editor may open the chat late: the file read before goose-ls drew the card.
    card_drawn = lambda: editor.goose.of_kind("permission_request")  # noqa: E731
    transcript = await _transcript(editor, buffers, until=card_drawn)
    await _card(editor, buffers, transcript)
    buffers.type_fast(transcript, "typed while it streams ")
    buffers.flush()
    await editor.goose.wait_for(lambda: editor.goose.turn_ends, what="the first turn's end")
    await editor.goose.wait_for(lambda: REPLY in buffers.texts[transcript], what="the reply")
    # The draft typed during the stream is kept; the rest is typed after it.
    await _send(editor, buffers, transcript, DRAFTS[0], "typed while it streams ")
    await _card(editor, buffers, transcript, 2)
    await editor.goose.wait_for(lambda: len(editor.goose.turn_ends) == 2, what="the 2nd turn")
    resolved = editor.goose.of_kind("permission_resolved")
    assert [r["optionId"] for r in resolved] == ["allow_once", "allow_once"]
    await editor.goose.wait_for(lambda: "second done" in buffers.texts[transcript])
    text = buffers.texts[transcript]
    assert text.count(REPLY) == 1 and text.count(SENTINEL) == 1
    assert not editor.log.unexpected_tracebacks()

    # kill -9, as an editor quit without saving leaves it; then the chat is taken up again.
    await kill(editor)
    again = await start_editor(tmp_path)
    try:
        buffers = await _start(again, seed, AFTER_RESTART)
        await again.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="goose.openChat", arguments=[])
        )
        transcript = await _transcript(again, buffers)
        text = buffers.texts[transcript]
        assert text.count(REPLY) == 1 and text.count("second done") == 1, "history once"
        await _send(again, buffers, transcript, DRAFTS[2])
        await again.goose.wait_for(lambda: again.goose.turn_ends, what="the turn after resuming")
        await again.goose.wait_for(lambda: "third done" in buffers.texts[transcript])
        assert not again.log.unexpected_tracebacks()
    finally:
        await again.client.shutdown_session()


class _Arrivals(list[dict[str, Any]]):
    """A recorder's list that hands each notification to ``take`` as it arrives."""

    def __init__(self, take: Any) -> None:
        super().__init__()
        self._take = take

    def append(self, item: dict[str, Any]) -> None:
        super().append(item)
        self._take(item)


@pytest.mark.parametrize("seed", SEEDS)
async def test_a_plugin_that_misses_notifications_gets_every_event_once_in_order(
    editor: Editor, seed: int
) -> None:
    """A plugin loses notifications (seeded). On a gap, and when it finds itself behind,
    it asks ``goose/replay`` for what it missed, as docs/protocol.md says; some of its
    requests are cancelled on the way."""
    chaos = Chaos.of(seed)
    lose = ChaosBuffers(editor.client, "utf-16", chaos).random
    handled: dict[str, int] = {}
    text: list[str] = []
    asking: list[asyncio.Future[Any]] = []

    def replay(session: str) -> None:
        if not any(not r.done() for r in asking):
            params = {"sessionId": session, "afterIndex": handled.get(session, 0)}
            asking.append(asyncio.ensure_future(editor.goose.request("goose/replay", params)))

    def take(event: dict[str, Any]) -> None:
        session, index = event["sessionId"], event["index"]
        if index <= handled.get(session, 0) or lose.random() < 0.15:
            return  # seen already, or lost on the way
        if index > handled.get(session, 0) + 1:
            replay(session)
            return
        handled[session] = index
        update = event.get("update", {})
        if update.get("sessionUpdate") == "agent_message_chunk":
            text.append(update["content"]["text"])

    await editor.start({"turns": [[{"text": REPLY, "chunks": 80, "delay": 0.002}]] * 2})
    editor.goose.updates = _Arrivals(take)
    editor.goose.turn_ends = _Arrivals(take)
    session_id = await editor.new_session()
    for n in range(2):
        if chaos.cancels:
            await cancelled(editor.client, "goose/listSessions", {})
        message_id = await editor.prompt(session_id, f"turn {n}")
        await editor.goose.turn_end(message_id)
    last = max(e["index"] for e in [*editor.goose.updates, *editor.goose.turn_ends])

    def caught_up() -> bool:
        if handled.get(session_id, 0) >= last:
            return True
        replay(session_id)  # behind, with nothing more to come: ask
        return False

    await editor.goose.wait_for(caught_up, what="every event handled")
    await asyncio.gather(*asking)
    assert "".join(text) == REPLY * 2, f"{chaos}: each chunk once, in order"
