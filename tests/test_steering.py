"""Send now: a message written while a turn runs joins that turn, where the agent can take
it (the Claude and Codex adapters' ``_session/steering``, goose's
``_goose/unstable/session/steer``); elsewhere it waits its turn, as before.
"""

from __future__ import annotations

import pytest
from lsprotocol import types

from goose_ls.scripted.script import prompt_texts
from support.harness import Editor

LONG_TURN = [{"text": "Working on it."}, {"waitForSteer": True}, {"text": "Done, with that."}]


def _steers(editor: Editor, method: str) -> list[dict]:
    return editor.received(method)


@pytest.mark.parametrize(
    ("shape", "method"),
    [("acp", "_session/steering"), ("goose", "_goose/unstable/session/steer")],
)
async def test_a_waiting_message_sent_now_joins_the_running_turn(
    editor: Editor, shape: str, method: str
) -> None:
    await editor.start({"steering": shape, "turns": [LONG_TURN]})
    session_id = await editor.new_session()
    first = await editor.prompt(session_id, "refactor the parser")
    await editor.goose.wait_for(
        lambda: "Working on it." in editor.goose.text(first), what="the turn under way"
    )
    second = await editor.prompt(session_id, "also keep the old name as an alias")
    result = await editor.goose.request(
        "goose/steer", {"sessionId": session_id, "messageId": second}
    )
    assert result == {"steered": True}
    end = await editor.goose.turn_end(first)
    assert end.get("stopReason") == "end_turn"
    joined = await editor.goose.turn_end(second)
    assert joined.get("stopReason") == "end_turn", "the message joined the turn: it ends with it"
    assert joined["index"] == end["index"] + 1
    (steer,) = _steers(editor, method)
    assert steer["params"]["prompt"][0]["text"] == "also keep the old name as an alias"
    if shape == "goose":
        assert steer["params"]["expectedRunId"] == "run_1"
    else:
        assert steer["params"]["_meta"] == {"steering": {"idleBehavior": "promptRequired"}}
    assert prompt_texts(editor.record) == ["refactor the parser"], "no second turn"
    text = editor.goose.text(first)
    assert text.index("[steered: also keep the old name") < text.index("Done, with that.")
    user = [
        u["update"]["content"]["text"]
        for u in editor.goose.updates
        if u["update"]["sessionUpdate"] == "user_message_chunk" and u["messageId"] == second
    ]
    assert user == ["also keep the old name as an alias"], "the transcript shows what was sent"
    assert not [u for u in editor.goose.of_kind("session_info_update", session_id)], (
        "goose's run markers are not news"
    )
    status = await editor.goose.request("goose/status", {})
    assert status  # goose-ls still answers


async def test_prompt_with_steer_joins_the_running_turn_at_once(editor: Editor) -> None:
    await editor.start({"steering": "acp", "turns": [LONG_TURN]})
    session_id = await editor.new_session()
    first = await editor.prompt(session_id, "start")
    await editor.goose.wait_for(lambda: editor.goose.text(first), what="the turn under way")
    second = await editor.prompt(session_id, "and this", steer=True)
    await editor.goose.turn_end(second)
    assert "[steered: and this]" in editor.goose.text(first)
    assert prompt_texts(editor.record) == ["start"]


async def test_an_agent_that_cannot_steer_keeps_the_message_waiting(editor: Editor) -> None:
    """goose without run ids (before its steering), or any agent that advertises nothing."""
    await editor.start({"turns": [[{"text": "slow"}, {"sleep": 1.0}], [{"text": "second"}]]})
    session_id = await editor.new_session()
    first = await editor.prompt(session_id, "one")
    await editor.goose.wait_for(lambda: editor.goose.text(first), what="the turn under way")
    second = await editor.prompt(session_id, "two")
    with pytest.raises(Exception, match="cannot take a message into a running turn"):
        await editor.goose.request("goose/steer", {"sessionId": session_id})
    third = await editor.prompt(session_id, "three", steer=True)
    notes = await editor.goose.wait_for(
        lambda: editor.goose.of_kind("note", session_id), what="why it waits"
    )
    assert "waits for the running turn to end" in notes[0]["text"]
    await editor.goose.turn_end(third)
    assert prompt_texts(editor.record) == ["one", "two", "three"], "each ran as its own turn"
    assert not editor.received("_session/steering")
    await editor.goose.turn_end(second)


async def test_a_turn_that_ended_first_sends_the_message_as_its_own(editor: Editor) -> None:
    """The agent answers ``promptRequired``: the message runs as the next turn, once."""
    script = {"turns": [LONG_TURN], "byPrompt": {"two": [{"text": "done too"}]}}
    await editor.start({"steering": "acp", "steerTooLate": True, **script})
    session_id = await editor.new_session()
    with pytest.raises(Exception, match="no message waits"):
        await editor.goose.request("goose/steer", {"sessionId": session_id})
    first = await editor.prompt(session_id, "one")
    await editor.goose.wait_for(lambda: editor.goose.text(first), what="the turn under way")
    second = await editor.prompt(session_id, "two")
    result = await editor.goose.request("goose/steer", {"sessionId": session_id})
    assert result == {"steered": False}
    await editor.goose.turn_end(second)
    assert prompt_texts(editor.record) == ["one", "two"], "sent once, as a turn of its own"
    assert "[steered" not in editor.goose.text(first) + editor.goose.text(second)


async def test_send_now_is_offered_in_the_transcript_of_a_busy_chat(editor: Editor) -> None:
    """Without a plugin: a code action in the transcript, shown only when it can work."""
    await editor.start({"steering": "goose", "turns": [LONG_TURN]})
    session_id = await editor.new_session()
    first = await editor.prompt(session_id, "start")
    await editor.goose.wait_for(lambda: editor.goose.text(first), what="the turn under way")
    transcript = editor.tmp / "data" / "transcripts" / f"{session_id}.md"

    async def titles() -> list[str]:
        actions = await editor.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=transcript.as_uri()),
                range=types.Range(types.Position(0, 0), types.Position(0, 0)),
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
        return [a.title for a in actions or []]

    assert "Goose: Send now, into the running turn" not in await titles(), "nothing waits"
    second = await editor.prompt(session_id, "one more thing")
    assert "Goose: Send now, into the running turn" in await titles()
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.sendNow", arguments=[transcript.as_uri()])
    )
    await editor.shown("sent into the running turn")
    await editor.goose.turn_end(second)
    assert "[steered: one more thing]" in editor.goose.text(first)


async def test_a_message_the_agent_sent_back_can_be_sent_now_again(editor: Editor) -> None:
    """A "Send now" that came too late leaves the message waiting, and sendable again."""
    script = {"turns": [LONG_TURN], "byPrompt": {"three": [{"text": "three done"}]}}
    await editor.start({"steering": "acp", "steerTooLate": True, **script})
    session_id = await editor.new_session()
    first = await editor.prompt(session_id, "one")
    await editor.goose.wait_for(lambda: editor.goose.text(first), what="the turn under way")
    second = await editor.prompt(session_id, "two")
    third = await editor.prompt(session_id, "three")
    steer = {"sessionId": session_id, "messageId": third}
    assert await editor.goose.request("goose/steer", steer) == {"steered": False}
    await editor.goose.wait_for(lambda: editor.goose.text(second), what="the second turn")
    assert await editor.goose.request("goose/steer", steer) == {"steered": False}
    await editor.goose.turn_end(third)
    assert prompt_texts(editor.record) == ["one", "two", "three"]
