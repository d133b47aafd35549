"""Text chunks take the short path past the SDK; anything else, or anything odd, does not."""

from __future__ import annotations

from typing import Any

import pytest

from goose_ls import events
from goose_ls.agent.acp.message_transport import text_chunk


def _update(update: Any, **extra: Any) -> dict[str, Any]:
    params = {"sessionId": "s1", "update": update}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params, **extra}


def test_a_text_chunk_of_each_kind_is_taken() -> None:
    for kind in events.CHUNKS:
        content = {"type": "text", "text": "héllo 🦆"}
        found = text_chunk(_update({"sessionUpdate": kind.KIND, "content": content}))
        assert found == ("s1", kind(content))


TEXT = {"type": "text", "text": "x"}


@pytest.mark.parametrize(
    "message",
    [
        _update({"sessionUpdate": ["agent_message_chunk"], "content": TEXT}),
        _update({"sessionUpdate": "agent_message_chunk", "content": TEXT, "messageId": "m"}),
        _update({"sessionUpdate": "agent_message_chunk", "content": {**TEXT, "annotations": {}}}),
        _update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 1}}),
        _update({"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": ""}}),
        _update({"sessionUpdate": "tool_call", "content": TEXT}),
        _update({"sessionUpdate": "agent_message_chunk", "content": TEXT}, id=7),
        _update("not an object"),
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": 5, "update": {}}},
        {"jsonrpc": "2.0", "method": "session/request_permission", "params": {}},
    ],
)
def test_anything_else_goes_through_the_sdk(message: dict[str, Any]) -> None:
    assert text_chunk(message) is None
