"""Requests at the edges of the wire: odd but valid JSON, after shutdown, bad arguments."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from support.editor import plain
from support.harness import Editor, raw_request, shared_server


async def _raw(editor: Editor, method: str, params: Any, timeout: float = 10.0) -> Any:
    """Send ``params`` exactly as given (the typed client would rebuild them)."""
    return await asyncio.wait_for(raw_request(editor.client, method, params), timeout)


MESSAGE_LIKE = {"jsonrpc": "2.0", "id": 7, "method": "exit", "nested": {"jsonrpc": 1}}
"""JSON an editor may well pass on (a linter's diagnostic ``data``, a pasted log line)."""


async def test_a_request_holding_an_object_with_a_jsonrpc_key_is_answered(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "ok"}]]})
    session_id = await editor.new_session()
    source = editor.workspace / "app.py"
    source.write_text("x = 1\n", encoding="utf-8")
    lsp_range = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}
    diagnostic = {"line": 1, "message": "x is unused", "data": MESSAGE_LIKE}
    answer = await _raw(
        editor,
        "workspace/executeCommand",
        {
            "command": "goose.fixDiagnostics",
            "arguments": [source.as_uri(), lsp_range, [diagnostic]],
        },
    )
    assert answer is None
    message_id = str(uuid.uuid4())
    queued = await _raw(
        editor,
        "goose/prompt",
        {
            "sessionId": session_id,
            "messageId": message_id,
            "prompt": "hello",
            "context": [{"type": "text", "text": "a log line", "meta": MESSAGE_LIKE}],
        },
    )
    assert plain(queued)["messageId"] == message_id
    end = await editor.goose.turn_end(message_id)
    assert end["stopReason"] == "end_turn"
    # Not a diagnostic at all: an error answer, but an answer.
    with pytest.raises(JsonRpcInvalidParams):
        await _raw(
            editor,
            "textDocument/codeAction",
            {
                "textDocument": {"uri": source.as_uri()},
                "range": lsp_range,
                "context": {"diagnostics": [{"jsonrpc": 1}]},
            },
        )


@pytest.mark.parametrize("method", [None, 42, ["goose/restart"]])
async def test_a_request_whose_method_is_not_a_string_is_an_invalid_request(
    editor: Editor, method: Any
) -> None:
    await editor.start({"turns": [[{"text": "ok"}]]})
    with pytest.raises(JsonRpcException) as raised:
        await asyncio.wait_for(raw_request(editor.client, method, {}), 10)
    assert raised.value.code == types.ErrorCodes.InvalidRequest
    assert "the method must be a string" in str(raised.value)
    await editor.new_session()  # goose-ls goes on


async def test_a_request_after_shutdown_is_refused_not_ignored(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "ok"}]]})
    await editor.client.shutdown_async(None)
    with pytest.raises(JsonRpcException) as refused:
        await _raw(editor, "goose/status", {})
    assert refused.value.code == types.ErrorCodes.InvalidRequest
    assert "shutting down" in str(refused.value)
    editor.client.exit(None)


@pytest.mark.parametrize(
    ("command", "arguments", "says"),
    [
        ("goose.renameSession", ["20260719_1", 5], "argument 2 (title): expected str, got int"),
        ("goose.renameSession", ["20260719_1"], "argument 2 (title): is required"),
        ("goose.setMode", [], "argument 1 (sessionId): is required; argument 2 (modeId): is"),
        ("goose.openSession", [""], "argument 1 (sessionId): must not be empty"),
        ("goose.ask", ["app.py", {"start": {"line": "a"}}], "argument 2 (range)"),
        ("goose.addFile", [1], "argument 1 (file): expected str, got int"),
        ("goose.reviewTurn", ["a\x00b.md"], "argument 1 (transcript): contains a NUL byte"),
        ("goose.explain", ["a\x00b.py", 1, 2], "argument 1 (file): contains a NUL byte"),
        ("goose.openChat", ["extra"], "takes at most 0 argument(s), got 1"),
    ],
)
@shared_server
async def test_a_command_with_a_wrong_argument_is_refused_naming_it(
    shared_editor: Editor, command: str, arguments: list[Any], says: str
) -> None:
    with pytest.raises(JsonRpcInvalidParams) as refused:
        await shared_editor.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=arguments)
        )
    assert str(refused.value).startswith(f"{command}: ") and says in str(refused.value)


async def test_an_editor_answering_show_document_with_null_is_told_the_chat_s_path(
    editor: Editor,
) -> None:
    """eglot 1.9 answers ``window/showDocument`` with null and opens nothing."""

    def show_document(_: types.ShowDocumentParams) -> None:
        return None

    editor.client.protocol.fm.features[types.WINDOW_SHOW_DOCUMENT] = show_document
    await editor.start({"turns": [[{"text": "ok"}]]}, editor="emacs")
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openChat", arguments=[])
    )
    message = await editor.shown("goose chat:")
    assert message.endswith(".md"), message


@shared_server
async def test_a_quick_command_s_message_comes_before_its_answer(shared_editor: Editor) -> None:
    """eglot 1.9 (Emacs 28) leaves what follows the answer to its own request unread until
    the server writes again: a command's message sent after its answer was not seen."""
    lib = shared_editor.workspace / "lib.py"
    lib.write_text("x = 1\n", encoding="utf-8")
    protocol = shared_editor.client.protocol
    arrived: list[str] = []
    read = protocol.handle_message

    def handle_message(message: Any) -> None:
        shown = getattr(message, "params", None)
        if isinstance(shown, types.ShowMessageParams) and "no conflict" in shown.message:
            arrived.append(shown.message)
        elif getattr(message, "id", None) is not None and hasattr(message, "result"):
            arrived.append("the answer")
        read(message)

    protocol.handle_message = handle_message  # type: ignore[method-assign]
    try:
        await shared_editor.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="goose.keepMyVersion", arguments=[lib.as_uri()])
        )
    finally:
        protocol.handle_message = read  # type: ignore[method-assign]
    assert arrived == [
        "goose: goose.keepMyVersion: lib.py has no conflict with the agent's version",
        "the answer",
    ]
