"""How full a chat's context is, as the agent's ``usage_update`` tells it: the transcript,
``goose/status`` and a warning show it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from support.harness import Editor, shared_agent, start_editor

pytestmark = shared_agent(__name__)

COST = {"amount": 0.42, "currency": "USD"}


def _turn(text: str, used: int, cost: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    usage: dict[str, Any] = {"used": used, "size": 200000}
    if cost is not None:
        usage["cost"] = cost
    return [{"text": text}, {"usage": usage}]


async def _transcript(editor: Editor, session_id: str) -> Path:
    status = await editor.goose.request("goose/status", {})
    (summary,) = [s for s in status["sessions"] if s["sessionId"] == session_id]
    return Path(summary["transcript"].removeprefix("file://"))


@pytest.mark.asyncio(loop_scope="function")  # goose-ls started again on its data dir
async def test_the_transcript_shows_the_context_under_its_heading_and_at_each_turn_end(
    tmp_path: Path,
) -> None:
    script = {"turns": [_turn("first answer", 12345, COST), _turn("second answer", 23456)]}
    editor = await start_editor(tmp_path)
    await editor.start(script)
    session_id = await editor.new_session()
    for _ in range(2):
        await editor.goose.turn_end(await editor.prompt(session_id))
    path = await _transcript(editor, session_id)
    await editor.goose.wait_for(
        lambda: "second answer" in path.read_text(encoding="utf-8"),
        what="the second turn in the file",
    )
    drawn = path.read_text(encoding="utf-8")
    head = f"# goose chat · {session_id}\n\n> Agent sandbox: [^\n]+\n\n"
    assert re.match(f"{head}_context 0 / 200,000_\n\n## You\n", drawn), drawn[:400]
    assert "first answer\n\n_context 12,345 / 200,000 · $0.42_\n\n## You\n" in drawn
    assert "second answer\n\n_context 23,456 / 200,000_\n\n" in drawn
    await editor.client.shutdown_session()

    path.unlink()
    again = await start_editor(tmp_path)
    try:
        await again.start(script)
        await again.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="goose.openChat", arguments=[])
        )
        await again.goose.wait_for(lambda: again.client.shown_documents, what="showDocument")
        assert path.read_text(encoding="utf-8") == drawn, "drawn again from the journal, alike"
    finally:
        await again.client.shutdown_session()


async def test_goose_status_tells_each_session_s_last_usage(shared: Editor) -> None:
    await shared.start({"turns": [_turn("ok", 5123, COST)]})
    session_id = await shared.new_session()
    other = await shared.new_session()
    await shared.goose.turn_end(await shared.prompt(session_id))

    status = await shared.goose.request("goose/status", {})
    usage = {s["sessionId"]: s.get("usage") for s in status["sessions"]}
    assert usage == {
        session_id: {"used": 5123, "size": 200000, "cost": COST},
        other: {"used": 0, "size": 200000},
    }


async def test_a_chat_past_80_percent_of_its_context_is_warned_about_once(shared: Editor) -> None:
    turns = [_turn("a", 100000), _turn("b", 164000), _turn("c", 190000)]
    await shared.start({"turns": turns})
    session_id = await shared.new_session()
    for _ in turns:
        await shared.goose.turn_end(await shared.prompt(session_id))

    warnings = [m for m in shared.client.messages if "of its context" in m.message]
    assert [(m.type, m.message) for m in warnings] == [
        (
            types.MessageType.Warning,
            "goose: this chat has used 82 % of its context (164,000 / 200,000 tokens); "
            "start a new chat (Goose: New chat from selection, or your plugin's new chat) "
            "to go on with room to spare.",
        )
    ]


async def test_the_tokens_a_turn_used_end_it(shared: Editor) -> None:
    """ACP's unstable ``usage`` in the prompt's answer (goose sends it): in goose/turnEnd
    and on the transcript's turn-end line."""
    used = {"totalTokens": 1801, "inputTokens": 1234, "outputTokens": 567}
    await shared.start({"turns": [[{"text": "done"}, {"turnUsage": used}]]})
    session_id = await shared.new_session()
    end = await shared.goose.turn_end(await shared.prompt(session_id))
    assert end["usage"] == used
    path = await _transcript(shared, session_id)
    await shared.goose.wait_for(
        lambda: "_this turn: 1,234 tokens in · 567 out_" in path.read_text(encoding="utf-8"),
        what="the turn's tokens in the transcript",
    )
