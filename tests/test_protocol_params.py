"""Invalid goose/* params get InvalidParams errors that name the field."""

from __future__ import annotations

import uuid

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from goose_ls.testing.harness import Editor


async def _error(editor: Editor, method: str, params: object) -> str:
    with pytest.raises(JsonRpcInvalidParams) as info:
        await editor.goose.request(method, params)
    return str(info.value)


async def test_invalid_params_name_the_field(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "ok"}]]})
    session_id = await editor.new_session()
    message_id = str(uuid.uuid4())

    assert "sessionId" in await _error(editor, "goose/prompt", {"messageId": message_id})
    assert "messageId: must be a UUID" in await _error(
        editor, "goose/prompt", {"sessionId": session_id, "messageId": "one", "prompt": "x"}
    )
    assert "sessionId: expected str" in await _error(
        editor, "goose/prompt", {"sessionId": 7, "messageId": message_id}
    )
    assert "context[0]" in await _error(
        editor,
        "goose/prompt",
        {"sessionId": session_id, "messageId": message_id, "context": [{"type": "file"}]},
    )
    assert "context[0].type" in await _error(
        editor,
        "goose/prompt",
        {"sessionId": session_id, "messageId": message_id, "context": [{"type": "video"}]},
    )
    assert "unknown session" in await _error(
        editor, "goose/prompt", {"sessionId": "nope", "messageId": message_id, "prompt": "x"}
    )
    assert "empty" in await _error(
        editor, "goose/prompt", {"sessionId": session_id, "messageId": message_id}
    )
    assert "expected an object" in await _error(editor, "goose/cancel", [1, 2])
    assert "requestId" in await _error(editor, "goose/permission", {"requestId": "none"})

    # After all that, the server still works.
    message_id = await editor.prompt(session_id, "still there?")
    end = await editor.goose.turn_end(message_id)
    assert end["stopReason"] == "end_turn"


async def test_a_message_id_cannot_be_used_twice(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "ok"}]]})
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id, "once")
    await editor.goose.turn_end(message_id)
    assert "already used" in await _error(
        editor, "goose/prompt", {"sessionId": session_id, "messageId": message_id, "prompt": "x"}
    )


async def test_context_goes_to_the_agent_as_the_agent_can_take_it(editor: Editor) -> None:
    source = editor.workspace / "app.py"
    source.write_text("def main():\n    return 42\n")
    selection = {
        "type": "selection",
        "uri": source.as_uri(),
        "text": "def main():\n    return 42\n",
        "startLine": 1,
        "endLine": 2,
    }
    context = [
        {"type": "file", "uri": source.as_uri()},
        selection,
        {"type": "text", "text": "note"},
    ]
    await editor.start({"capabilities": {"promptCapabilities": {"embeddedContext": False}}})
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id, "why 42?", context=context)
    await editor.goose.turn_end(message_id)
    (prompt,) = editor.received("session/prompt")
    blocks = prompt["params"]["prompt"]
    assert blocks[0] == {"type": "text", "text": "why 42?"}
    assert blocks[1]["type"] == "resource_link" and blocks[1]["uri"] == source.as_uri()
    assert blocks[2] == {
        "type": "text",
        "text": f"{source}:1-2\n```py\ndef main():\n    return 42\n```",
    }
    assert blocks[3] == {"type": "text", "text": "note"}


async def test_a_selection_without_text_is_read_from_the_editor_buffer(editor: Editor) -> None:
    source = editor.workspace / "app.py"
    source.write_text("on disk\n")
    await editor.start({"capabilities": {"promptCapabilities": {"embeddedContext": True}}})
    editor.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=source.as_uri(), language_id="python", version=1, text="a = 1\nb = 2\nc = 3\n"
            )
        )
    )
    session_id = await editor.new_session()
    selection = {"type": "selection", "uri": source.as_uri(), "startLine": 2, "endLine": 3}
    message_id = await editor.prompt(session_id, "look", context=[selection])
    await editor.goose.turn_end(message_id)
    (prompt,) = editor.received("session/prompt")
    resource = prompt["params"]["prompt"][1]["resource"]
    assert resource["text"] == "b = 2\nc = 3\n", "the unsaved buffer, not the disk"
    assert resource["uri"] == source.as_uri() + "#L2-L3"
    missing = {
        "type": "selection",
        "uri": (editor.workspace / "gone.py").as_uri(),
        "startLine": 1,
        "endLine": 1,
    }
    assert "context[0].uri: cannot read" in await _error(
        editor,
        "goose/prompt",
        {"sessionId": session_id, "messageId": str(uuid.uuid4()), "context": [missing]},
    )
