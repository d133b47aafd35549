"""Bounded prompts: however many options, choices, characters or requests the agent
sends, the user is put before a bounded prompt, the agent hears which cap it passed, and
a permission request past a cap is never allowed (goose_ls/prompt_limits.py)."""

from __future__ import annotations

import json
from typing import Any

from lsprotocol import types

from goose_ls.prompt_limits import MAX_PENDING, MAX_SHOWN_CHARS
from support.buffers import EDITORS, EditorBuffers
from support.harness import Editor

REFUSED = "goose-ls refused a prompt from the agent"


def _call(number: int) -> dict[str, Any]:
    return {
        "toolCallId": f"t{number}",
        "title": f"run step {number}",
        "kind": "execute",
        "rawInput": {"command": f"make step{number}"},
    }


def _notes(editor: Editor, session_id: str) -> list[str]:
    return [n["text"] for n in editor.goose.of_kind("note", session_id) if REFUSED in n["text"]]


def _audit(editor: Editor) -> list[dict[str, Any]]:
    path = editor.tmp / "data" / "audit.log"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


async def _explain(editor: Editor, buffers: EditorBuffers) -> None:
    """Start a turn as an editor without a plugin does: the Explain code action."""
    code = editor.workspace / "app.py"
    code.write_text("x = 1\n")
    buffers.open(code.as_uri(), language="python")
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=code.as_uri()),
            range=types.Range(start=types.Position(0, 0), end=types.Position(1, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    (explain,) = [
        a
        for a in actions or []
        if isinstance(a, types.CodeAction) and a.title == "Goose: Explain selection"
    ]
    assert explain.command is not None
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=explain.command.command, arguments=explain.command.arguments
        )
    )


async def test_a_permission_request_of_100001_options_is_refused_never_allowed(
    editor: Editor,
) -> None:
    options = [
        {"optionId": f"o{n}", "name": f"Allow variant {n}", "kind": "allow_once"}
        for n in range(100_001)
    ]
    call = _call(1)
    steps = [{"toolCall": call}, {"permission": {"toolCall": call, "options": options}}]
    await editor.start({"turns": [[*steps, {"text": " after"}]]})
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id, "go")
    await editor.goose.turn_end(message_id, timeout=120)
    text = editor.goose.text(message_id)
    assert "[permission: error -32602]" in text, text
    assert not editor.goose.of_kind("permission_request", session_id)
    (note,) = _notes(editor, session_id)
    assert "100001 options" in note and "cap on options, 20" in note
    (answer,) = [
        m for m in editor.agent_messages() if "error" in m and "options" in m["error"]["message"]
    ]
    assert "20" in answer["error"]["message"]
    assert [(r["outcome"], r["by"]) for r in _audit(editor)] == [
        ("cancelled", "over a cap: options")
    ]


async def test_a_5_mb_question_and_a_5_mb_failure_never_reach_the_screen_whole(
    editor: Editor,
) -> None:
    """A question's message past its cap is refused (the agent hears why); a failure the
    agent words at 5 MB is shown cut, in Helix's status line and in a popup's message."""
    huge = "Please answer this. " * (5 * 1024 * 1024 // 20)
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    }
    steps = [
        {"elicit": {"message": huge, "schema": schema}},
        {"error": {"code": -32603, "message": huge}},
    ]
    capabilities, encoding = EDITORS["helix"]
    await editor.start({"turns": [steps]}, editor=capabilities)
    buffers = EditorBuffers(editor.client, encoding)
    await _explain(editor, buffers)
    await editor.goose.wait_for(lambda: editor.goose.turn_ends, what="the turn's end", timeout=120)
    (end,) = editor.goose.turn_ends
    said = editor.goose.text(end["messageId"])
    assert "[elicitation: error -32602]" in said, said[:300]
    assert not editor.goose.of_kind("elicitation_request")
    failure = await editor.shown("the turn failed")
    assert failure.endswith("…")
    messages = [m.message for m in editor.client.messages]
    assert max(map(len, messages)) <= MAX_SHOWN_CHARS, [len(m) for m in messages]
    (note,) = _notes(editor, end["sessionId"])
    assert "message of 5,242,880 characters" in note


async def test_31_permission_requests_at_once_put_at_most_the_cap_before_the_user(
    editor: Editor,
) -> None:
    calls = [_call(n) for n in range(31)]
    together = [{"permission": {"toolCall": call}} for call in calls]
    await editor.start({"turns": [[*({"toolCall": c} for c in calls), {"together": together}]]})
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id, "go")

    def asked_and_refused() -> list[dict[str, Any]] | None:
        found = editor.goose.of_kind("permission_request", session_id)
        refused = editor.goose.text(message_id).count("error -32602")
        return found if found and refused == 31 - MAX_PENDING else None

    asked = await editor.goose.wait_for(asked_and_refused, what="the requests asked and refused")
    assert len(asked) == MAX_PENDING
    for request in asked:
        await editor.goose.request(
            "goose/permission", {"requestId": request["requestId"], "optionId": "reject_once"}
        )
    await editor.goose.turn_end(message_id)
    text = editor.goose.text(message_id)
    assert text.count("[permission: reject_once]") == MAX_PENDING, text
    assert text.count("[permission: error -32602]") == 31 - MAX_PENDING, text
    assert "allow" not in text
    (note,) = _notes(editor, session_id)
    assert f"{MAX_PENDING} prompts already wait" in note
    refused = [r for r in _audit(editor) if r["by"] == "over a cap: pending"]
    assert len(refused) == 31 - MAX_PENDING


async def test_a_question_of_10000_choices_is_refused_and_no_popup_opens(editor: Editor) -> None:
    choice = {"type": "string", "enum": [f"choice {n}" for n in range(10_000)]}
    schema = {"type": "object", "properties": {"pick": choice}, "required": ["pick"]}
    popups: list[types.ShowMessageRequestParams] = []

    def popup(params: types.ShowMessageRequestParams) -> None:
        popups.append(params)

    capabilities, encoding = EDITORS["neovim"]
    await editor.start(
        {"turns": [[{"elicit": {"message": "Which one?", "schema": schema}}]]},
        editor=capabilities,
    )
    editor.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(popup)
    buffers = EditorBuffers(editor.client, encoding)
    await _explain(editor, buffers)
    found = await editor.goose.wait_for(
        lambda: editor.goose.turn_ends or popups or editor.goose.of_kind("elicitation_request"),
        what="the question refused, or asked",
    )
    assert not popups and not editor.goose.of_kind("elicitation_request"), found
    (end,) = editor.goose.turn_ends
    assert "[elicitation: error -32602]" in editor.goose.text(end["messageId"])
    (note,) = _notes(editor, end["sessionId"])
    assert "offers 10,000 choices" in note and "cap on choices, 50" in note
