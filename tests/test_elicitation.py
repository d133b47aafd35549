"""The agent's questions to the user (ACP elicitation), through goose/* as a plugin sees
them: advertised, asked, answered (a bad answer refused and the question kept open),
declined, and cancelled with the turn, never answered with a made-up value."""

from __future__ import annotations

from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from support.harness import Editor, shared_agent

pytestmark = shared_agent(__name__)

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Project name"},
        "workers": {"type": "integer"},
        "colour": {"type": "string", "enum": ["red", "green"]},
        "public": {"type": "boolean"},
    },
    "required": ["name", "workers"],
}


def asking(*after: dict[str, Any], schema: dict[str, Any] = SCHEMA) -> dict[str, Any]:
    """A script whose every turn asks the form, then plays ``after``."""
    return {"turns": [[{"elicit": {"message": "Set up the project", "schema": schema}}, *after]]}


async def _question(editor: Editor) -> tuple[str, str, dict[str, Any]]:
    """Start a turn and wait for its question: session, turn, and the question."""
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id, "set it up")
    (question,) = await editor.goose.wait_for(
        lambda: editor.goose.of_kind("elicitation_request"), what="the question"
    )
    return session_id, message_id, question


async def _answer(editor: Editor, session_id: str, question: dict[str, Any], **answer: Any) -> None:
    await editor.goose.request(
        "goose/elicitation",
        {"sessionId": session_id, "requestId": question["requestId"], **answer},
    )


@pytest.mark.asyncio(loop_scope="function")  # what the agent is sent at its start
async def test_goose_ls_advertises_forms_and_pages(editor: Editor) -> None:
    await editor.start({})
    await editor.new_session()
    (initialize,) = editor.received("initialize")
    elicitation = initialize["params"]["clientCapabilities"]["elicitation"]
    assert elicitation == {"form": {}, "url": {}}


async def test_an_accepted_form_reaches_the_agent_exactly(shared: Editor) -> None:
    await shared.start(asking())
    session_id, message_id, question = await _question(shared)
    assert question["message"] == "Set up the project"
    assert question["mode"] == "form"
    assert question["requestedSchema"]["required"] == ["name", "workers"]
    content = {"name": "ö-app", "workers": 3, "colour": "green", "public": False}
    await _answer(shared, session_id, question, action="accept", content=content)
    await shared.goose.turn_end(message_id)
    said = '{"name": "\\u00f6-app", "workers": 3, "colour": "green", "public": false}'
    assert f"[elicitation: accept {said}]" in shared.goose.text(message_id)
    (resolved,) = shared.goose.of_kind("elicitation_resolved")
    assert resolved == {
        "sessionUpdate": "elicitation_resolved",
        "requestId": question["requestId"],
        "action": "accept",
        "content": content,
    }


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ({"name": "app"}, "content.workers: is required"),
        ({"name": "app", "workers": "3"}, "content.workers: must be an integer"),
        ({"name": "app", "workers": True}, "content.workers: must be an integer"),
        ({"name": "app", "workers": 1, "colour": "blue"}, "content.colour: 'blue' is not one"),
        ({"name": "app", "workers": 1, "public": "yes"}, "content.public: must be a boolean"),
        ({"name": "app", "workers": 1, "size": 2}, "content.size: is not in the form"),
    ],
)
async def test_a_bad_answer_is_refused_naming_the_field_and_a_good_one_then_works(
    shared: Editor, content: dict[str, Any], field: str
) -> None:
    await shared.start(asking())
    session_id, message_id, question = await _question(shared)
    with pytest.raises(JsonRpcException, match=field) as refused:
        await _answer(shared, session_id, question, action="accept", content=content)
    assert refused.value.code == -32602
    assert not shared.goose.of_kind("elicitation_resolved"), "the question is still open"
    await _answer(
        shared, session_id, question, action="accept", content={"name": "app", "workers": 1}
    )
    await shared.goose.turn_end(message_id)
    assert '[elicitation: accept {"name": "app", "workers": 1}]' in shared.goose.text(message_id)


async def test_a_declined_question_sends_no_content(shared: Editor) -> None:
    await shared.start(asking())
    session_id, message_id, question = await _question(shared)
    with pytest.raises(JsonRpcException, match="content: only an accepted question"):
        await _answer(shared, session_id, question, action="decline", content={"name": "x"})
    await _answer(shared, session_id, question, action="decline")
    await shared.goose.turn_end(message_id)
    assert "[elicitation: decline]" in shared.goose.text(message_id)
    (resolved,) = shared.goose.of_kind("elicitation_resolved")
    assert resolved["action"] == "decline" and "content" not in resolved
    with pytest.raises(JsonRpcException, match="requestId: no pending question"):
        await _answer(shared, session_id, question, action="decline")


async def test_a_cancelled_turn_answers_its_question_cancel(shared: Editor) -> None:
    await shared.start(asking({"waitForCancel": True, "evenIfCancelled": True}))
    session_id, message_id, _ = await _question(shared)
    await shared.goose.request("goose/cancel", {"sessionId": session_id})
    end = await shared.goose.turn_end(message_id)
    assert end["stopReason"] == "cancelled"
    (resolved,) = shared.goose.of_kind("elicitation_resolved")
    assert resolved["action"] == "cancel" and "content" not in resolved
    answers = await shared.goose.wait_for(
        lambda: [m["result"] for m in shared.agent_messages() if "action" in m.get("result", {})],
        what="the agent to receive the answer",
    )
    assert answers == [{"action": "cancel"}]


async def test_a_question_the_agent_withdraws_is_closed(shared: Editor) -> None:
    script = {
        "turns": [
            [
                {"elicit": {"message": "Name?", "schema": SCHEMA, "withdrawAfter": 0.2}},
                {"text": " went on"},
            ]
        ]
    }
    await shared.start(script)
    _, message_id, _ = await _question(shared)
    await shared.goose.turn_end(message_id)
    assert "[elicitation: error -32800]" in shared.goose.text(message_id)
    (resolved,) = shared.goose.of_kind("elicitation_resolved")
    assert resolved["action"] == "cancel"


async def test_a_form_the_schema_refuses_is_answered_with_an_error_not_left_waiting(
    shared: Editor,
) -> None:
    """A list of choices without ``"type": "string"`` is not a form ACP allows: the agent
    hears an invalid-params error at once, and its turn goes on."""
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"enum": ["a", "b"]}}},
    }
    steps = [{"elicit": {"message": "Pick tags", "schema": schema}}, {"text": "after"}]
    await shared.start({"turns": [steps]})
    session_id = await shared.new_session()
    message_id = await shared.prompt(session_id, "go")
    await shared.goose.turn_end(message_id)
    text = shared.goose.text(message_id)
    assert "[elicitation: error -32602]" in text and text.endswith("after")
    assert not shared.goose.of_kind("elicitation_request", session_id)
