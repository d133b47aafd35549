"""Invalid goose/* params get InvalidParams errors that name the field."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from support.harness import Editor, shared_server


async def _error(editor: Editor, method: str, params: object) -> str:
    with pytest.raises(JsonRpcInvalidParams) as info:
        await editor.goose.request(method, params)
    return str(info.value)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def session_id(shared_editor: Editor) -> str:
    return await shared_editor.new_session()


Params = Callable[[str, str], object]
"""The params of a request, given a session id and a fresh message id."""

INVALID: list[tuple[str, str, Params, str]] = [
    ("no-session", "goose/prompt", lambda s, m: {"messageId": m}, "sessionId"),
    (
        "message-id-not-a-uuid",
        "goose/prompt",
        lambda s, m: {"sessionId": s, "messageId": "one", "prompt": "x"},
        "messageId: must be a UUID",
    ),
    (
        "session-id-not-a-string",
        "goose/prompt",
        lambda s, m: {"sessionId": 7, "messageId": m},
        "sessionId: expected str",
    ),
    (
        "file-context-without-uri",
        "goose/prompt",
        lambda s, m: {"sessionId": s, "messageId": m, "context": [{"type": "file"}]},
        "context[0]",
    ),
    (
        "unknown-context-type",
        "goose/prompt",
        lambda s, m: {"sessionId": s, "messageId": m, "context": [{"type": "video"}]},
        "context[0].type",
    ),
    (
        "unknown-session",
        "goose/prompt",
        lambda s, m: {"sessionId": "nope", "messageId": m, "prompt": "x"},
        "unknown session",
    ),
    (
        "empty-prompt",
        "goose/prompt",
        lambda s, m: {"sessionId": s, "messageId": m},
        "empty",
    ),
    ("params-not-an-object", "goose/cancel", lambda s, m: [1, 2], "expected an object"),
    ("unknown-request", "goose/permission", lambda s, m: {"requestId": "none"}, "requestId"),
]


@shared_server
@pytest.mark.parametrize(
    ("method", "params", "problem"), [case[1:] for case in INVALID], ids=[c[0] for c in INVALID]
)
async def test_invalid_params_name_the_field(
    shared_editor: Editor, session_id: str, method: str, params: Params, problem: str
) -> None:
    """(``shared_editor`` checks at the end that the server still works after all that.)"""
    assert problem in await _error(shared_editor, method, params(session_id, str(uuid.uuid4())))


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
