"""``$/cancel_request`` both ways: what one side gives up, the other is told of and stops.

The editor cancels a goose/* request that waits on the agent (LSP's ``$/cancelRequest``),
or goose-ls stops waiting (a timeout): the agent gets ``$/cancel_request`` with the id of
the ACP request. The agent withdraws a permission request: the card is resolved as
cancelled and the agent's request is answered ``-32800``, as the protocol asks.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from support.harness import Editor, start_editor, stop_editor

SLOW_NEW_SESSION = {"sessionSetup": [{"sleep": 30}]}
"""An agent that takes its time to answer ``session/new``."""


async def _withdrawn(editor: Editor, method: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The agent's ``method`` request, and the ``$/cancel_request`` it then received."""
    (asked,) = await editor.goose.wait_for(
        lambda: editor.received(method), what=f"{method} at the agent"
    )
    cancels = await editor.goose.wait_for(
        lambda: editor.received("$/cancel_request"), what="$/cancel_request at the agent"
    )
    return asked, cancels


async def test_an_editor_that_cancels_a_new_chat_withdraws_it_at_the_agent(
    tmp_path: Path,
) -> None:
    editor = await start_editor(tmp_path)
    try:
        await editor.start(SLOW_NEW_SESSION)
        protocol = editor.client.protocol
        answer = asyncio.ensure_future(
            protocol.send_request_async("goose/newSession", {}, msg_id="new-chat")  # type: ignore[no-untyped-call]
        )
        await editor.goose.wait_for(lambda: editor.received("session/new"), what="session/new")
        protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="new-chat"))
        with pytest.raises(JsonRpcException) as cancelled:
            await answer
        assert cancelled.value.code == -32800
        asked, cancels = await _withdrawn(editor, "session/new")
        assert [c["params"] for c in cancels] == [{"requestId": asked["id"]}]
        status = await editor.goose.request("goose/status", {})
        assert status["agent"]["state"] == "running", "the agent goes on"
    finally:
        await stop_editor(editor)


async def test_a_request_that_times_out_is_withdrawn_at_the_agent(tmp_path: Path) -> None:
    editor = await start_editor(tmp_path)
    try:
        await editor.start(SLOW_NEW_SESSION, settings={"agent": {"sessionTimeout": 0.5}})
        with pytest.raises(JsonRpcException, match="did not answer session/new"):
            await editor.new_session()
        asked, cancels = await _withdrawn(editor, "session/new")
        assert [c["params"] for c in cancels] == [{"requestId": asked["id"]}]
    finally:
        await stop_editor(editor)


async def test_a_permission_the_agent_withdraws_is_answered_and_its_card_closed(
    tmp_path: Path,
) -> None:
    editor = await start_editor(tmp_path)
    try:
        script = {
            "turns": [
                [
                    {"toolCall": {"toolCallId": "t1", "title": "shell · rm -rf build"}},
                    {"permission": {"toolCallId": "t1", "title": "shell", "withdrawAfter": 0.3}},
                    {"text": "went on without it"},
                ]
            ]
        }
        await editor.start(script)
        session_id = await editor.new_session()
        message_id = await editor.prompt(session_id, "clean up")
        resolved = await editor.goose.wait_for(
            lambda: editor.goose.of_kind("permission_resolved"), what="the card resolved"
        )
        assert resolved[0]["outcome"] == "cancelled"
        await editor.goose.turn_end(message_id)
        said = editor.goose.text(message_id)
        assert "[permission: error -32800]" in said and "went on without it" in said
        errors = [m["error"] for m in editor.agent_messages() if "error" in m]
        assert [e["code"] for e in errors] == [-32800], "the withdrawn request, answered"
        with pytest.raises(JsonRpcException):  # too late: nothing waits for an answer now
            request_id = editor.goose.of_kind("permission_request")[0]["requestId"]
            await editor.goose.request(
                "goose/permission", {"requestId": request_id, "optionId": "allow_once"}
            )
    finally:
        await stop_editor(editor)
