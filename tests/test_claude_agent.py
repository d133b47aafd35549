"""goose-ls with Claude Code's ACP adapter (claude-agent-acp), offline, against a fake
Anthropic Messages API: the real agent that asks the user questions.

Claude Code's AskUserQuestion tool reaches the client as an ACP ``elicitation/create``
form (one ``question_<n>`` choice and a free-text ``question_<n>_custom`` per question);
the answer goes back into the tool's result, which the next request to the model
carries. The adapter is the pinned npm package that scripts/fetch-agents.sh puts in
~/.cache/goose-ls/agents, run by the ``claude`` preset (see
:mod:`support.claude`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from support.claude import API_KEY, CLAUDE, MISSING, start_claude
from support.fake_anthropic import (
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    FakeAnthropic,
    Reply,
    ask,
    tool_result_blocks,
    tool_results,
)
from support.harness import Editor
from support.real_agent import advertised, answered

pytestmark = pytest.mark.skipif(not CLAUDE.exists(), reason=MISSING)

QUESTION = "Which colour should the button be?"
ASKING = Reply(("Let me ask.",), tool=ask(QUESTION, "Colour", "Red", "Green"))
ECHO = Reply(("You said: ",), echoes=True)
"""The model's answer once the tool has run: the tool's result, said back."""


async def _asked(editor: Editor) -> tuple[str, str, dict[str, Any]]:
    """A new chat whose turn waits on Claude's question: session, turn, and the question."""
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id, "Make me a button")
    (question,) = await editor.goose.wait_for(
        lambda: editor.goose.of_kind("elicitation_request"), what="Claude's question"
    )
    return session_id, message_id, question


async def _answer(editor: Editor, session_id: str, question: dict[str, Any], **answer: Any) -> None:
    await editor.goose.request(
        "goose/elicitation",
        {"sessionId": session_id, "requestId": question["requestId"], **answer},
    )


def _answered(editor: Editor) -> list[dict[str, Any]]:
    """goose-ls's answers to the agent's ``elicitation/create``, as the agent read them."""
    return [
        m["result"] if "result" in m else m["error"] for m in answered(editor, "elicitation/create")
    ]


async def test_claude_s_question_is_answered_and_claude_gets_exactly_that(editor: Editor) -> None:
    with FakeAnthropic([ASKING, ECHO]) as api:
        await start_claude(editor, api)
        session_id, message_id, question = await _asked(editor)
        assert advertised(editor)["sessionCapabilities"].keys() >= {"resume", "close"}
        (initialize,) = editor.received("initialize")
        assert initialize["params"]["clientCapabilities"]["elicitation"] == {"form": {}, "url": {}}
        assert question["mode"] == "form" and question["message"] == QUESTION
        fields = question["requestedSchema"]["properties"]
        assert [o["const"] for o in fields["question_0"]["oneOf"]] == ["Red", "Green"]
        assert fields["question_0"]["title"] == "Colour"
        assert fields["question_0_custom"]["type"] == "string"
        card = await editor.transcript_text("**question_0** (string) Colour: Red, Green")
        assert f"asks:** {QUESTION}" in card
        (asking,) = editor.goose.of_kind("tool_call")
        assert question["toolCallId"] == asking["toolCallId"], "the question names its tool call"
        assert f"asks:** {QUESTION}\n> For the tool call `" in card, "linked to its tool call"

        content = {"question_0": "Green", "question_0_custom": "a dark green"}
        await _answer(editor, session_id, question, action="accept", content=content)
        end = await editor.goose.turn_end(message_id)

        assert end["stopReason"] == "end_turn"
        assert _answered(editor) == [{"action": "accept", "content": content}]
        first, second = api.turns()
        assert first.headers["x-api-key"] == API_KEY
        assert "Make me a button" in str(first.body["messages"])
        (result,) = tool_results(second)
        said = f'"{QUESTION}"="Green" notes: a dark green'
        assert said in result, "Claude Code was told the answer, and only that"
        assert said in editor.goose.text(message_id), "the model's reply, after the answer"
        (resolved,) = editor.goose.of_kind("elicitation_resolved")
        assert resolved["action"] == "accept" and resolved["content"] == content
        (summary,) = (await editor.goose.request("goose/status", {}))["sessions"]
        assert summary["usage"]["used"] == INPUT_TOKENS + OUTPUT_TOKENS, "Claude's usage_update"
        await editor.transcript_text("_Question answered: accept._")


async def test_a_declined_question_tells_claude_the_user_did_not_answer(editor: Editor) -> None:
    with FakeAnthropic([ASKING, ECHO]) as api:
        await start_claude(editor, api)
        session_id, message_id, question = await _asked(editor)
        await _answer(editor, session_id, question, action="decline")
        end = await editor.goose.turn_end(message_id)

        assert end["stopReason"] == "end_turn", "a declined question does not end the turn"
        assert _answered(editor) == [{"action": "decline"}]
        (result,) = tool_results(api.turns()[1])
        assert "did not answer" in result and "Green" not in result and "Red" not in result
        (resolved,) = editor.goose.of_kind("elicitation_resolved")
        assert resolved["action"] == "decline" and "content" not in resolved


async def test_cancelling_the_turn_cancels_claude_s_question(editor: Editor) -> None:
    """The model is never told an answer: only that the tool failed. (Claude Code may tell
    it so at once, racing its own interrupt, or with the next prompt: the same reply is
    scripted for either request.)"""
    stopped = Reply(("Stopped.",))
    with FakeAnthropic([ASKING, stopped, stopped]) as api:
        await start_claude(editor, api)
        session_id, message_id, _ = await _asked(editor)
        await editor.goose.request("goose/cancel", {"sessionId": session_id})
        end = await editor.goose.turn_end(message_id)

        assert end["stopReason"] == "cancelled"
        await editor.goose.wait_for(
            lambda: _answered(editor), what="the agent to receive the answer"
        )
        assert _answered(editor) == [{"action": "cancel"}]
        (resolved,) = editor.goose.of_kind("elicitation_resolved")
        assert resolved["action"] == "cancel" and "content" not in resolved

        again = await editor.prompt(session_id, "Never mind")
        assert (await editor.goose.turn_end(again))["stopReason"] == "end_turn"
        assert editor.goose.text(again) == "Stopped."
        told = [block for turn in api.turns()[1:] for block in tool_result_blocks(turn)]
        assert told and all(block["is_error"] is True for block in told), told
        assert "Never mind" in str(api.turns()[-1].body["messages"][-1])


def _option(summary: dict[str, Any], config_id: str) -> dict[str, Any]:
    options: list[dict[str, Any]] = summary["configOptions"]
    (option,) = [o for o in options if o["id"] == config_id]
    return option


async def test_claude_s_options_are_offered_and_what_they_are_set_to_reaches_the_model(
    editor: Editor,
) -> None:
    """Claude's config options (its permission mode, model and effort as selects, fast
    mode as a boolean) as goose-ls offers them; a changed one is what the next request
    to the model asks for."""
    with FakeAnthropic([Reply(("Quick.",)), Reply(("A plan.",))]) as api:
        await start_claude(editor, api)
        session = await editor.goose.request("goose/newSession", {})
        sid = session["sessionId"]
        assert _option(session, "mode")["currentValue"] == "default", "goose-ls's start"
        assert _option(session, "mode")["category"] == "mode"
        assert {"haiku", "sonnet"} <= {o["value"] for o in _option(session, "model")["options"]}
        assert _option(session, "fast")["type"] == "boolean"

        async def change(config_id: str, value: str) -> None:
            params = {"sessionId": sid, "configId": config_id, "value": value}
            changed = await editor.goose.request("goose/setConfigOption", params)
            assert _option(changed, config_id)["currentValue"] == value

        await change("model", "haiku")
        await change("effort", "low")
        await editor.goose.turn_end(await editor.prompt(sid, "Be quick"))
        await change("mode", "plan")
        end = await editor.goose.turn_end(await editor.prompt(sid, "Plan it"))

        assert end["stopReason"] == "end_turn" and editor.goose.text(end["messageId"]) == "A plan."
        quick, planned = api.turns()
        assert "haiku" in quick.body["model"] and quick.body["output_config"]["effort"] == "low"
        assert "Plan mode is active" not in json.dumps(quick.body["messages"])
        assert "Plan mode is active" in json.dumps(planned.body["messages"])


async def test_claude_set_to_acp_v2_only_is_named_with_its_fix(editor: Editor) -> None:
    """claude-agent-acp speaks ACP 2 too; told to speak it only, it refuses goose-ls's
    version 1 (-32022), and the user hears what to change, not a broken chat."""
    with FakeAnthropic([ECHO]) as api:
        await start_claude(editor, api, CLAUDE_AGENT_ACP_PROTOCOL="v2")
        with pytest.raises(Exception, match="refused ACP version 1"):
            await editor.new_session()
        status = await editor.goose.agent_state("error")
        assert status["reason"] == "unusable" and "CLAUDE_AGENT_ACP_PROTOCOL" in status["fix"]
        assert api.turns() == [], "nothing reached the model"
