"""Questions an MCP server asks through Claude Code: claude-agent-acp forwards an MCP
elicitation as ACP ``elicitation/create``, a page to open (URL mode) or a form, and the
server gets the editor's answer. The server is :mod:`support.mcp_asker`, given
to Claude through ``agent.mcpServers``; the model (a fake) asks it to run its tool.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from support import mcp_asker
from support.claude import CLAUDE, MISSING, claude_home, start_claude
from support.fake_anthropic import FakeAnthropic, Reply, ToolUse, tool_results
from support.harness import Editor
from support.real_agent import answered

pytestmark = pytest.mark.skipif(not CLAUDE.exists(), reason=MISSING)

ASKER = {
    "name": mcp_asker.NAME,
    "command": sys.executable,
    "args": [mcp_asker.__file__],
}
TOOL = f"mcp__{mcp_asker.NAME}__{mcp_asker.TOOL}"
PAGE = "https://example.com/sign-in?state=7"


FORM = {
    "type": "object",
    "properties": {"workers": {"type": "integer"}, "public": {"type": "boolean"}},
    "required": ["workers"],
}


async def _asked(editor: Editor, api: FakeAnthropic) -> tuple[str, str, dict[str, Any]]:
    """Claude started with the asker (its tool allowed in Claude's settings, as a user
    would), and a turn whose tool call waits on the question: session, turn, question."""
    claude_home(editor).mkdir()
    allowed = {"permissions": {"allow": [f"mcp__{mcp_asker.NAME}"]}}
    (claude_home(editor) / "settings.json").write_text(json.dumps(allowed), encoding="utf-8")
    await start_claude(editor, api, {"agent": {"mcpServers": [ASKER]}})
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id, "Read the docs")
    (question,) = await editor.goose.wait_for(
        lambda: editor.goose.of_kind("elicitation_request"), what="the server's question"
    )
    return session_id, message_id, question


def _asking(arguments: dict[str, Any]) -> FakeAnthropic:
    """The model runs the asker's tool, then says what the tool answered."""
    asking = Reply(tool=ToolUse(TOOL, arguments))
    return FakeAnthropic([asking, Reply(("The server heard: ",), echoes=True)])


async def _answer(editor: Editor, session_id: str, question: dict[str, Any], **answer: Any) -> None:
    params = {"sessionId": session_id, "requestId": question["requestId"], **answer}
    await editor.goose.request("goose/elicitation", params)


async def test_a_page_an_mcp_server_asks_to_open_is_accepted_then_done(editor: Editor) -> None:
    with _asking({"message": "Sign in to the docs", "url": PAGE}) as api:
        session_id, message_id, question = await _asked(editor, api)
        assert (question["mode"], question["url"]) == ("url", PAGE)
        assert question["message"] == "Sign in to the docs"
        await _answer(editor, session_id, question, action="accept")
        end = await editor.goose.turn_end(message_id)

        assert end["stopReason"] == "end_turn"
        (answer,) = answered(editor, "elicitation/create")
        assert answer["result"] == {"action": "accept"}, "a page has no content"
        (result,) = tool_results(api.turns()[1])
        assert json.loads(result)["action"] == "accept", "what the server heard"
        assert editor.goose.text(message_id) == f"The server heard: {result}"
        notes = [note["text"] for note in editor.goose.of_kind("note", session_id)]
        assert "Done: Sign in to the docs" in notes, "the server said the page's work is done"


async def test_a_page_declined_is_declined_at_the_mcp_server(editor: Editor) -> None:
    with _asking({"message": "Sign in to the docs", "url": PAGE}) as api:
        session_id, message_id, question = await _asked(editor, api)
        await _answer(editor, session_id, question, action="decline")
        await editor.goose.turn_end(message_id)

        (result,) = tool_results(api.turns()[1])
        assert json.loads(result) == {"action": "decline"}
        notes = [note["text"] for note in editor.goose.of_kind("note", session_id)]
        assert not [n for n in notes if n.startswith("Done:")], "no page was opened"


async def test_an_mcp_server_s_form_gets_its_typed_answer(editor: Editor) -> None:
    with _asking({"message": "How many workers?", "schema": FORM}) as api:
        session_id, message_id, question = await _asked(editor, api)
        assert question["mode"] == "form" and question["requestedSchema"] == FORM
        content = {"workers": 3, "public": False}
        await _answer(editor, session_id, question, action="accept", content=content)
        await editor.goose.turn_end(message_id)

        (result,) = tool_results(api.turns()[1])
        assert json.loads(result) == {"action": "accept", "content": content}
