"""Config options of every kind ACP has: select and boolean, grouped by category."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from goose_ls.scripted.options import GOOSE_CONFIG_OPTIONS
from support.buffers import read_code_actions_correctly
from support.harness import Editor

THINKING = {
    "id": "thinking",
    "name": "Thinking",
    "category": "thought_level",
    "type": "boolean",
    "currentValue": False,
}


async def _open_chat(editor: Editor, script: dict[str, Any]) -> tuple[str, str]:
    """Start, and open a chat as an editor without a plugin does: its id and transcript."""
    await editor.start(script)
    read_code_actions_correctly(editor.client)
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openChat", arguments=[])
    )
    shown = await editor.goose.wait_for(lambda: editor.client.shown_documents, what="the chat")
    (session,) = (await editor.goose.request("goose/status", {}))["sessions"]
    return session["sessionId"], shown[0].uri


async def _option_actions(editor: Editor, transcript: str) -> dict[str, types.CodeAction]:
    """The transcript's code actions that set a config option or mode, by title."""
    result = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=transcript),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return {
        a.title: a
        for a in result or []
        if isinstance(a, types.CodeAction)
        and a.command is not None
        and a.command.command in ("goose.setConfigOption", "goose.setMode")
    }


async def _choose(editor: Editor, action: types.CodeAction) -> dict[str, Any]:
    """Run the action as an editor does and return what the agent was asked."""
    assert action.command is not None
    asked = len(editor.received("session/set_config_option"))
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=action.command.command, arguments=action.command.arguments
        )
    )
    calls = await editor.goose.wait_for(
        lambda: editor.received("session/set_config_option")[asked:],
        what="session/set_config_option",
    )
    params: dict[str, Any] = calls[0]["params"]
    return params


async def test_the_boolean_capability_is_advertised(editor: Editor) -> None:
    await editor.start({})
    await editor.new_session()
    (initialize,) = editor.received("initialize")
    session = initialize["params"]["clientCapabilities"]["session"]
    assert session["configOptions"] == {"boolean": {}}


async def test_choices_are_grouped_by_category_in_code_action_titles(editor: Editor) -> None:
    _, transcript = await _open_chat(editor, {"configOptions": GOOSE_CONFIG_OPTIONS})
    titles = list(await _option_actions(editor, transcript))
    assert titles == [
        "Goose: Provider → goose",
        "Goose: Provider → openai",
        "Goose: Auto-compact: off",
        "Goose: Mode → approve",
        "Goose: Mode → smart_approve",
        "Goose: Mode → chat",
        "Goose: Model → claude-opus-4",
        "Goose: Model → gpt-5",
        "Goose: Thinking → low",
        "Goose: Thinking → medium",
        "Goose: Thinking → high",
    ], (
        "options of one category together (uncategorised ones first, as the provider is); "
        "the mode option in place of session/set_mode"
    )


async def test_a_boolean_option_is_toggled_with_true_and_false(editor: Editor) -> None:
    sid, transcript = await _open_chat(editor, {"configOptions": [THINKING]})
    actions = await _option_actions(editor, transcript)
    params = await _choose(editor, actions["Goose: Thinking: on"])
    assert params == {"sessionId": sid, "configId": "thinking", "type": "boolean", "value": True}
    await editor.goose.wait_for(
        lambda: [
            u
            for u in editor.goose.of_kind("config_option_update", sid)
            if u["configOptions"][0]["currentValue"] is True
        ],
        what="the option on",
    )
    actions = await _option_actions(editor, transcript)
    params = await _choose(editor, actions["Goose: Thinking: off"])
    assert params["value"] is False and params["type"] == "boolean"


async def test_models_switch_through_the_model_category(editor: Editor) -> None:
    sid, transcript = await _open_chat(editor, {"configOptions": GOOSE_CONFIG_OPTIONS})
    actions = await _option_actions(editor, transcript)
    params = await _choose(editor, actions["Goose: Model → gpt-5"])
    assert params == {"sessionId": sid, "configId": "model", "value": "gpt-5"}
    assert not editor.received("session/set_model")


async def test_without_config_options_modes_are_offered_alike(editor: Editor) -> None:
    _, transcript = await _open_chat(editor, {})
    actions = await _option_actions(editor, transcript)
    assert list(actions) == [
        "Goose: Mode → approve",
        "Goose: Mode → smart_approve",
        "Goose: Mode → chat",
    ]
    assert {a.command.command for a in actions.values() if a.command} == {"goose.setMode"}
