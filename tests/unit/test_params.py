"""goose/* params: ``protocol.parse`` structures them or raises InvalidParams naming the
method and the field (``docs/protocol.md``)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from goose_ls.lsp.plugin_api import protocol
from goose_ls.lsp.plugin_api.protocol import (
    CancelParams,
    NewSessionParams,
    PermissionParams,
    PromptParams,
    RenameParams,
    ReplayParams,
    SetConfigOptionParams,
    parse,
)
from goose_ls.sessions.context import ContextItem

MESSAGE = str(uuid.uuid4())


def _refused(method: str, params: Any, cls: type) -> str:
    with pytest.raises(JsonRpcInvalidParams) as info:
        parse(method, params, cls)
    assert info.value.code == -32602
    message = str(info.value)
    assert message.startswith(f"{method}: "), "the error names the method"
    return message.removeprefix(f"{method}: ")


def test_camel_case_fields_become_the_params_class() -> None:
    params = parse(
        protocol.PROMPT,
        {
            "sessionId": "s",
            "messageId": MESSAGE,
            "prompt": "why?",
            "context": [
                {"type": "file", "uri": "file:///w/a.py"},
                {"type": "selection", "uri": "file:///w/a.py", "startLine": 2, "endLine": 3},
            ],
        },
        PromptParams,
    )
    assert params == PromptParams(
        session_id="s",
        message_id=MESSAGE,
        prompt="why?",
        context=[
            ContextItem(type="file", uri="file:///w/a.py"),
            ContextItem(type="selection", uri="file:///w/a.py", start_line=2, end_line=3),
        ],
    )


def test_optional_fields_take_their_defaults() -> None:
    assert parse(protocol.NEW_SESSION, None, NewSessionParams) == NewSessionParams()
    assert parse(protocol.REPLAY, {"sessionId": "s"}, ReplayParams).after_index == 0
    assert parse(protocol.CANCEL, {"sessionId": "s"}, CancelParams).message_id is None
    assert parse(protocol.PERMISSION, {"requestId": "r"}, PermissionParams).option_id is None
    prompt = parse(protocol.PROMPT, {"sessionId": "s", "messageId": MESSAGE}, PromptParams)
    assert prompt.prompt == "" and prompt.context == []


def test_fields_a_later_version_may_add_are_ignored() -> None:
    params = parse(protocol.NEW_SESSION, {"cwd": "/w", "colour": "blue"}, NewSessionParams)
    assert params == NewSessionParams(cwd="/w")


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        (None, "sessionId: is required; messageId: is required"),
        ({"messageId": MESSAGE}, "sessionId: is required"),
        ({"sessionId": 7, "messageId": MESSAGE}, "sessionId: expected str, got int"),
        ({"sessionId": "s", "messageId": "one"}, "messageId: must be a UUID"),
        ([1, 2], "expected an object, got list"),
        ("hello", "expected an object, got str"),
        (
            {"sessionId": "s", "messageId": MESSAGE, "context": [{"type": "file"}]},
            "context[0]: a file item needs 'uri'",
        ),
        (
            {"sessionId": "s", "messageId": MESSAGE, "context": [{"type": "video"}]},
            "context[0].type: expected one of 'text', 'file', 'selection', 'image', got 'video'",
        ),
        (
            {"sessionId": "s", "messageId": MESSAGE, "context": [{"type": "text"}]},
            "context[0]: a text item needs 'text'",
        ),
        (
            {
                "sessionId": "s",
                "messageId": MESSAGE,
                "context": [
                    {"type": "text", "text": "fine"},
                    {"type": "selection", "uri": "file:///a", "startLine": 0, "endLine": 3},
                ],
            },
            "context[1]: a selection's startLine is 1-based (1 or more)",
        ),
        (
            {
                "sessionId": "s",
                "messageId": MESSAGE,
                "context": [
                    {"type": "selection", "uri": "file:///a", "startLine": 5, "endLine": 3}
                ],
            },
            "context[0]: a selection's startLine is after its endLine",
        ),
        (
            {
                "sessionId": "s",
                "messageId": MESSAGE,
                "context": [{"type": "selection", "uri": "file:///a", "startLine": 1}],
            },
            "context[0]: a selection item needs 'startLine' and 'endLine'",
        ),
    ],
)
def test_a_bad_prompt_is_refused_naming_the_field(params: Any, problem: str) -> None:
    assert _refused(protocol.PROMPT, params, PromptParams) == problem


@pytest.mark.parametrize(
    ("context", "problem"),
    [
        ("file", "context: expected an array, got str"),
        ({"type": "text"}, "context: expected an array, got dict"),
        (["a.py"], "context[0]: expected an object, got str"),
    ],
)
def test_a_context_of_the_wrong_shape_is_refused_saying_so(context: Any, problem: str) -> None:
    params = {"sessionId": "s", "messageId": MESSAGE, "context": context}
    assert _refused(protocol.PROMPT, params, PromptParams) == problem


def test_primitives_are_not_coerced() -> None:
    replay = {"sessionId": "s", "afterIndex": True}
    assert _refused(protocol.REPLAY, replay, ReplayParams) == (
        "afterIndex: expected int, got a boolean"
    )
    replay = {"sessionId": "s", "afterIndex": "3"}
    assert _refused(protocol.REPLAY, replay, ReplayParams) == "afterIndex: expected int, got str"
    rename = {"sessionId": "s", "title": None}
    assert _refused(protocol.RENAME_SESSION, rename, RenameParams) == (
        "title: expected str, got NoneType"
    )


def test_an_option_value_is_a_string_or_a_boolean() -> None:
    for value in ("fast", True):
        params = {"sessionId": "s", "configId": "model", "value": value}
        assert parse(protocol.SET_CONFIG_OPTION, params, SetConfigOptionParams).value == value
    number = {"sessionId": "s", "configId": "model", "value": 3}
    assert _refused(protocol.SET_CONFIG_OPTION, number, SetConfigOptionParams) == (
        "value: expected str or bool, got int"
    )


def test_a_permission_answer_needs_the_request_id() -> None:
    assert _refused(protocol.PERMISSION, {"optionId": "allow_once"}, PermissionParams) == (
        "requestId: is required"
    )
