"""``agent.mode`` with the scripted agent (goose's modes, no mode config option): a new
chat is switched with ``session/set_mode``; a mode goose does not offer is said once."""

from __future__ import annotations

from support.harness import Editor


def _notes(editor: Editor, session_id: str) -> list[str]:
    """The chat's notes on its mode (not the one every chat opens with on its sandbox)."""
    notes = [u["text"] for u in editor.goose.of_kind("note", session_id)]
    return [text for text in notes if not text.startswith("Agent sandbox:")]


async def test_a_new_chat_starts_in_agent_mode_through_set_mode(editor: Editor) -> None:
    await editor.start({}, settings={"agent": {"mode": "approve"}})
    session = await editor.goose.request("goose/newSession", {})
    assert session["modes"]["currentModeId"] == "approve"
    (sent,) = editor.received("session/set_mode")
    assert sent["params"] == {"sessionId": session["sessionId"], "modeId": "approve"}


async def test_a_mode_the_agent_does_not_offer_is_said_once(editor: Editor) -> None:
    await editor.start({}, settings={"agent": {"mode": "plan"}})
    first = await editor.goose.request("goose/newSession", {})
    second = await editor.goose.request("goose/newSession", {})

    assert first["modes"]["currentModeId"] == second["modes"]["currentModeId"] == "auto"
    assert _notes(editor, first["sessionId"]) == [
        "goose offers no mode plan (agent.mode), so new chats start in its own mode auto. "
        "Its modes: auto, approve, smart_approve, chat."
    ]
    assert _notes(editor, second["sessionId"]) == []
    assert editor.received("session/set_mode") == []
