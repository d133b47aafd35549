"""The mode a new Claude chat starts in: the one that asks before edits and commands.

Left to itself, claude-agent-acp starts a session in Claude Code's ``auto`` mode (no
``permissions.defaultMode`` in Claude's settings), where it writes and runs without
asking. goose-ls puts each new chat in ``default`` ("Manual"), unless ``agent.mode``
says otherwise. The adapter runs offline against a fake Messages API (see
:mod:`support.claude`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from lsprotocol import types

from support.claude import CLAUDE, MISSING, claude_home, start_claude
from support.fake_anthropic import FakeAnthropic, Reply, ToolUse
from support.harness import Editor
from support.real_agent import answers

pytestmark = pytest.mark.skipif(not CLAUDE.exists(), reason=MISSING)


def _mode(summary: dict[str, Any]) -> str:
    """The mode a session summary shows (Claude's ``mode`` config option)."""
    (option,) = [o for o in summary["configOptions"] if o["id"] == "mode"]
    value: str = option["currentValue"]
    return value


def _agent_says(editor: Editor) -> list[str]:
    """The mode each ``session/set_config_option`` answer of Claude's reports."""
    return [
        _mode(answer["result"])
        for answer in answers(editor, "session/set_config_option")
        if "result" in answer
    ]


async def test_a_new_claude_chat_asks_before_it_writes(editor: Editor) -> None:
    made = editor.workspace / "made.txt"
    write = Reply(("Writing.",), tool=ToolUse("Write", {"file_path": str(made), "content": "x\n"}))
    with FakeAnthropic([write, Reply(("Not written.",))]) as api:
        await start_claude(editor, api)
        session = await editor.goose.request("goose/newSession", {})
        sid = session["sessionId"]

        assert _mode(session) == "default" and session["modes"]["currentModeId"] == "default"
        (sent,) = editor.received("session/set_config_option")
        assert sent["params"] == {"sessionId": sid, "configId": "mode", "value": "default"}
        assert _agent_says(editor) == ["default"], "Claude itself says it is in default"

        message_id = await editor.prompt(sid, "Write made.txt")
        (asked,) = await editor.goose.wait_for(
            lambda: editor.goose.of_kind("permission_request"), what="Claude asking to write"
        )
        assert asked["toolCall"]["title"] == "Write made.txt"
        assert not made.exists(), "nothing is written before the user answers"
        reject = next(o for o in asked["options"] if o["kind"] == "reject_once")
        await editor.goose.request(
            "goose/permission", {"requestId": asked["requestId"], "optionId": reject["optionId"]}
        )
        assert (await editor.goose.turn_end(message_id))["stopReason"] == "end_turn"
        assert not made.exists()


async def test_agent_mode_or_claude_s_own_setting_picks_the_mode_new_chats_start_in(
    editor: Editor,
) -> None:
    """``agent.mode`` is read for each new chat: a mode of Claude's, or ``agent`` for
    Claude's own (``auto`` here); left empty, a ``permissions.defaultMode`` in Claude's
    own settings is the user's choice, kept."""
    with FakeAnthropic([]) as api:
        await start_claude(editor, api, {"agent": {"mode": "acceptEdits"}})
        first = await editor.goose.request("goose/newSession", {})
        assert _mode(first) == "acceptEdits"
        assert _agent_says(editor) == ["acceptEdits"]

        await _set_mode_setting(editor, "agent")
        assert _mode(await editor.goose.request("goose/newSession", {})) == "auto"
        assert not [m for m in editor.client.messages if "agent settings" in m.message]

        settings = {"permissions": {"defaultMode": "plan"}}
        (claude_home(editor) / "settings.json").write_text(json.dumps(settings))
        await _set_mode_setting(editor, "")
        assert _mode(await editor.goose.request("goose/newSession", {})) == "plan"
        assert len(editor.received("session/set_config_option")) == 1, "only the first"


async def _set_mode_setting(editor: Editor, mode: str) -> None:
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"goose": {"agent": {"mode": mode}}})
    )
    status = await editor.goose.request("goose/status", {})
    assert status["settings"]["agent"]["mode"] == mode
