"""A chat with Claude Code taken back after goose-ls restarts: claude-agent-acp resumes it
(``session/resume``, which it advertises beside ``loadSession``), and the next turn's
request tells the model the whole chat. Claude Code keeps its chats in the test's
``claude-home`` (see :mod:`support.claude`), which both runs share.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.claude import CLAUDE, MISSING, start_claude
from support.fake_anthropic import FakeAnthropic, Reply
from support.harness import start_editor, stop_editor
from support.real_agent import advertised, answers

pytestmark = pytest.mark.skipif(not CLAUDE.exists(), reason=MISSING)

QUESTION, ANSWER = "What is the answer?", "The answer is 42."
FOLLOW_UP, SECOND_ANSWER = "And doubled?", "Doubled, 84."


async def test_claude_resumes_a_chat_after_goose_ls_restarts(tmp_path: Path) -> None:
    with FakeAnthropic([Reply((ANSWER,)), Reply((SECOND_ANSWER,))]) as api:
        first = await start_editor(tmp_path)
        try:
            await start_claude(first, api)
            session_id = await first.new_session()
            end = await first.goose.turn_end(await first.prompt(session_id, QUESTION))
            assert first.goose.text(end["messageId"]) == ANSWER
        finally:
            await stop_editor(first)

        again = await start_editor(tmp_path)
        again.record = tmp_path / "again-received.jsonl"
        try:
            await start_claude(again, api)
            await again.goose.request("goose/loadSession", {"sessionId": session_id})
            assert "resume" in advertised(again)["sessionCapabilities"]
            (resume,) = again.received("session/resume")
            assert resume["params"]["sessionId"] == session_id
            assert "result" in answers(again, "session/resume")[0], "Claude took it back"
            assert again.received("session/load") == []

            mid = await again.prompt(session_id, FOLLOW_UP)
            assert (await again.goose.turn_end(mid))["stopReason"] == "end_turn"
            assert again.goose.text(mid) == SECOND_ANSWER
            told = json.dumps(api.turns()[-1].body["messages"])
            assert told.index(QUESTION) < told.index(ANSWER) < told.index(FOLLOW_UP), told
        finally:
            await stop_editor(again)


async def test_a_claude_chat_forked_at_its_first_turn_goes_on_without_the_second(
    tmp_path: Path,
) -> None:
    """claude-agent-acp forks (advertised), cut at its own message id of the turn; the
    model then hears the first turn only, and the fork's transcript shows just that."""
    third = "Forked, and still 42."
    with FakeAnthropic([Reply((ANSWER,)), Reply((SECOND_ANSWER,)), Reply((third,))]) as api:
        editor = await start_editor(tmp_path)
        try:
            await start_claude(editor, api)
            session_id = await editor.new_session()
            first = await editor.prompt(session_id, QUESTION)
            await editor.goose.turn_end(first)
            await editor.goose.turn_end(await editor.prompt(session_id, FOLLOW_UP))
            assert "fork" in advertised(editor)["sessionCapabilities"]

            forked = await editor.goose.request(
                "goose/forkSession", {"sessionId": session_id, "messageId": first}
            )

            assert "seed" not in forked, forked.get("notForked")
            (fork,) = editor.received("session/fork")
            point = fork["params"]["_meta"]["jetbrains"]["air"]["fork"]
            assert point["messageId"].startswith("msg_"), "Claude's id of its first answer"
            assert "result" in answers(editor, "session/fork")[0]
            end = await editor.goose.turn_end(await editor.prompt(forked["sessionId"], "Go on"))
            assert end["stopReason"] == "end_turn" and editor.goose.text(end["messageId"]) == third
            told = json.dumps(api.turns()[-1].body["messages"])
            assert QUESTION in told and ANSWER in told and "Go on" in told
            assert FOLLOW_UP not in told and SECOND_ANSWER not in told, "cut after turn one"
            transcript = Path(forked["transcript"].removeprefix("file://")).read_text()
            assert ANSWER in transcript and SECOND_ANSWER not in transcript
        finally:
            await stop_editor(editor)
