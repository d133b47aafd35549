"""The plugin-free face, as Neovim 0.11, Emacs (eglot), VS Code and Helix each see it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from goose_ls.lsp.transcript.text import SENTINEL
from goose_ls.lsp.wire.versions import SKIP_WAIT
from goose_ls.scripted.script import edit_call
from support.buffers import EDITORS, HELIX, EditorBuffers
from support.harness import Editor, SharedEditor, kill, shared_agent, shared_with, start_editor

pytestmark = shared_agent(__name__)

# Characters of 1 to 4 bytes and 1 or 2 UTF-16 units, so every encoding is exercised.
REPLY = "Ça marche 👍🏽 — 你好，世界! The code adds 𝔁 to y.\nSecond line ✓ done."  # noqa: RUF001


@pytest.fixture(
    params=[pytest.param(name, marks=shared_with(editor=EDITORS[name][0])) for name in EDITORS]
)
def editor_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def _start(
    editor: Editor, name: str, script: dict[str, Any], settings: dict[str, Any] | None = None
) -> EditorBuffers:
    capabilities, encoding = EDITORS[name]
    await editor.start(script, settings, editor=capabilities)
    return EditorBuffers(editor.client, encoding)


async def _explained(editor: Editor, buffers: EditorBuffers) -> str:
    """Open app.py and run **Goose: Explain selection** on its first lines: its URI."""
    uri = _source(editor, buffers)
    await _run(editor, (await _actions(editor, uri, _range(0, 1)))["Goose: Explain selection"])
    return uri


async def _question_popup(
    editor: Editor, choice: dict[str, Any], answer: str
) -> tuple[list[str], str]:
    """The agent asks one single-choice question; the popup is answered ``answer``: its
    buttons, and what the turn then says."""
    schema = {"type": "object", "properties": {"language": choice}, "required": ["language"]}
    buffers = await _start(
        editor,
        "neovim",
        {"turns": [[{"elicit": {"message": "Which language?", "schema": schema}}]]},
    )
    asked = _answer_popups(editor, answer)
    await _explained(editor, buffers)
    (end,) = await editor.goose.wait_for(lambda: editor.goose.turn_ends, what="the turn's end")
    assert "Which language?" in asked[0].message
    return [a.title for a in asked[0].actions or []], editor.goose.text(end["messageId"])


def _answer_popups(editor: Editor, title: str) -> list[types.ShowMessageRequestParams]:
    """Answer every ``window/showMessageRequest`` with ``title``; the requests, as they come."""
    asked: list[types.ShowMessageRequestParams] = []

    def popup(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
        asked.append(params)
        return types.MessageActionItem(title=title)

    editor.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(popup)
    return asked


def _source(editor: Editor, buffers: EditorBuffers) -> str:
    path = editor.workspace / "app.py"
    path.write_text("def add(x, y):\n    return x + y\n\nprint(add(1, 2))\n")
    uri = path.as_uri()
    buffers.open(uri, language="python")
    return uri


def _range(first: int, last: int) -> types.Range:
    return types.Range(start=types.Position(first, 0), end=types.Position(last, 0))


async def _actions(
    editor: Editor, uri: str, rng: types.Range, diagnostics: list[types.Diagnostic] | None = None
) -> dict[str, types.CodeAction]:
    result = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=rng,
            context=types.CodeActionContext(diagnostics=diagnostics or []),
        )
    )
    return {a.title: a for a in result or [] if isinstance(a, types.CodeAction)}


async def _run(editor: Editor, action: types.CodeAction) -> None:
    assert action.command is not None
    result = await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=action.command.command, arguments=action.command.arguments
        )
    )
    assert result is None


async def _open_transcript(editor: Editor, buffers: EditorBuffers) -> str:
    """Do what the editor does on window/showDocument: open the file."""
    shown = await editor.goose.wait_for(lambda: editor.client.shown_documents, what="showDocument")
    assert shown[0].take_focus is False
    uri = shown[0].uri
    buffers.open(uri)
    return uri


def _progress_ends(editor: Editor) -> list[str | None]:
    """The message of each work-done progress that has ended."""
    ends: list[str | None] = []
    for reports in editor.client.progress_reports.values():
        last: object = reports[-1] if reports else None
        if isinstance(last, types.WorkDoneProgressEnd):
            ends.append(last.message)
    return ends


@shared_with(editor=HELIX)
async def test_each_explain_shows_the_chat_with_the_cursor_above_the_new_turn(
    shared: SharedEditor,
) -> None:
    """Helix: the first Explain opens the chat beside the code, the second brings the
    open one where the user is; each puts the cursor on the line above where its turn is
    drawn, so the reply grows below it."""
    buffers = await _start(shared, "helix", {"turns": [[{"text": "First."}], [{"text": "Next."}]]})
    uri = _source(shared, buffers)
    shown = shared.client.shown_documents

    async def explain(reply: str, shows: int) -> None:
        await _run(shared, (await _actions(shared, uri, _range(0, 1)))["Goose: Explain selection"])
        await shared.goose.wait_for(lambda: len(shown) == shows, what="showDocument")
        if shows == 1:
            buffers.open(shown[0].uri)
        await shared.goose.wait_for(lambda: reply in buffers.texts[shown[0].uri])

    await explain("First.", 1)
    await explain("Next.", 2)
    lines = buffers.texts[shown[0].uri].split("\n")
    questions = [
        i
        for i, line in enumerate(lines)
        if line == "Explain what this code does and anything surprising in it."
    ]
    assert [s.take_focus for s in shown] == [False, True]
    for show, question, previous in zip(shown, questions, [0, lines.index("First.")], strict=True):
        assert show.selection is not None and show.selection.start == show.selection.end
        line = show.selection.start.line
        assert previous <= line < question, (line, question, lines)
        assert not any(lines[line + 1 : question - 2]), "only the new turn's heading between"


@pytest.mark.asyncio(loop_scope="function")  # the whole list: a shared server offers
# "Revert file" for a file it saw change in an earlier test (open_files.changed)
async def test_code_actions_on_a_selection(editor: Editor, editor_name: str) -> None:
    buffers = await _start(editor, editor_name, {})
    uri = _source(editor, buffers)
    titles = list(await _actions(editor, uri, _range(0, 2)))
    assert titles == [
        "Goose: Ask about selection",
        "Goose: Explain selection",
        "Goose: Add selection to context",
        "Goose: Add file to context",
        "Goose: New chat from selection",
        "Goose: Open chat",
        "Goose: Sessions",
    ]
    problem = types.Diagnostic(range=_range(1, 1), message="x is not defined", source="lint")
    with_fix = await _actions(editor, uri, _range(0, 2), [problem])
    fix = with_fix["Goose: Fix these diagnostics"]
    assert fix.kind == types.CodeActionKind.QuickFix and list(fix.diagnostics or []) == [problem]
    assert all(a.command is not None for a in with_fix.values()), "commands are carried directly"


async def test_explain_streams_the_reply_into_the_transcript(
    shared: SharedEditor, editor_name: str
) -> None:
    buffers = await _start(
        shared, editor_name, {"turns": [[{"text": REPLY, "chunks": 40, "delay": 0.01}]]}
    )
    uri = _source(shared, buffers)
    await _run(shared, (await _actions(shared, uri, _range(0, 2)))["Goose: Explain selection"])
    transcript = await _open_transcript(shared, buffers)
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    await shared.goose.wait_for(lambda: REPLY in buffers.texts[transcript], what="the whole reply")
    text = buffers.texts[transcript]
    assert "## You" in text and "## goose" in text
    assert "> 📎 `" in text and "app.py:1-2`" in text
    assert text.count(REPLY) == 1
    assert SENTINEL in text.split(REPLY)[1], "the reply goes above the prompt section"
    (prompt,) = shared.received("session/prompt")
    blocks = prompt["params"]["prompt"]
    assert blocks[0]["text"].startswith("Explain")
    assert blocks[1]["resource"]["text"] == "def add(x, y):\n    return x + y\n"
    ended = await shared.goose.wait_for(lambda: _progress_ends(shared), what="the progress's end")
    assert ended == ["end_turn"], "the progress's end says how the turn ended"
    assert not [m for m in shared.client.messages if "turn finished" in m.message], (
        "routine news is no message (Neovim would ask for Enter)"
    )


@pytest.mark.asyncio(loop_scope="function")  # its own editor and agent
async def test_an_editor_without_progress_hears_that_the_turn_finished(editor: Editor) -> None:
    """Where there is no progress to end, a message is the only news of the turn's end."""
    capabilities = client_capabilities("neovim@v0.11.0")
    assert capabilities.window is not None
    capabilities.window.work_done_progress = False
    agent = {"name": "scripted", "title": "Claude Agent", "version": "1.0"}
    await editor.start({"agentInfo": agent, "turns": [[{"text": REPLY}]]}, editor=capabilities)
    buffers = EditorBuffers(editor.client, "utf-8")
    uri = _source(editor, buffers)
    await _run(editor, (await _actions(editor, uri, _range(0, 2)))["Goose: Explain selection"])
    assert await editor.shown("turn finished") == "Claude Agent: turn finished (end_turn)"


async def test_a_draft_typed_while_the_reply_streams_survives(
    shared: SharedEditor, editor_name: str
) -> None:
    buffers = await _start(
        shared,
        editor_name,
        {
            "turns": [
                [{"text": REPLY * 3, "chunks": 120, "delay": 0.01}],
                [{"text": "second answer"}],
            ]
        },
    )
    uri = _source(shared, buffers)
    await _run(shared, (await _actions(shared, uri, _range(0, 2)))["Goose: Explain selection"])
    transcript = await _open_transcript(shared, buffers)
    draft = "And what about 🦆 negative numbers?"
    for piece in (draft[:10], draft[10:25], draft[25:]):
        await asyncio.sleep(0.05)
        buffers.type_at_end(transcript, piece)
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    await shared.goose.wait_for(lambda: REPLY * 3 in buffers.texts[transcript], what="the reply")
    assert buffers.texts[transcript].endswith(draft), "the draft is untouched"

    send = (await _actions(shared, transcript, _range(0, 0)))["Goose: Send"]
    await _run(shared, send)
    await shared.goose.wait_for(lambda: len(shared.goose.turn_ends) == 2, what="the second turn")
    await shared.goose.wait_for(lambda: "second answer" in buffers.texts[transcript])
    prompts = shared.received("session/prompt")
    assert prompts[1]["params"]["prompt"] == [{"type": "text", "text": draft}]
    after = buffers.texts[transcript].split(SENTINEL)[1]
    assert draft not in after, "a sent draft is cleared from the prompt section"
    assert draft in buffers.texts[transcript].split(SENTINEL)[0], "and shown as the user's message"


@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_typing_while_a_long_reply_streams_sends_exactly_what_was_typed(
    editor: Editor,
) -> None:
    """Helix reports each change with its range: goose-ls follows the prompt section from
    those changes alone, while its own edits stream a reply of many lines above it."""
    reply = "".join(f"line {i}: {REPLY}\n" for i in range(60))
    capabilities, encoding = EDITORS["helix"]
    await editor.start(
        {"turns": [[{"text": reply, "chunks": 300, "delay": 0.005}], [{"text": "ok"}]]},
        {"transcript": {"editInterval": 0.02}},
        editor=capabilities,
    )
    buffers = EditorBuffers(editor.client, encoding, incremental=True)
    uri = _source(editor, buffers)
    await _run(editor, (await _actions(editor, uri, _range(0, 2)))["Goose: Explain selection"])
    transcript = await _open_transcript(editor, buffers)
    draft = "Now 🦆 this:\n- 你好，世界\n- 𝔁 + y"  # noqa: RUF001
    for i in range(0, len(draft), 4):
        await asyncio.sleep(0.02)
        buffers.type_at_end(transcript, draft[i : i + 4])
    await editor.goose.wait_for(lambda: editor.goose.turn_ends, what="the turn's end")
    await editor.goose.wait_for(lambda: reply in buffers.texts[transcript], what="the reply")
    assert buffers.texts[transcript].endswith(draft), "the draft is untouched"
    await _run(editor, (await _actions(editor, transcript, _range(0, 0)))["Goose: Send"])
    await editor.goose.wait_for(lambda: len(editor.goose.turn_ends) == 2, what="the second turn")
    prompts = editor.received("session/prompt")
    assert prompts[1]["params"]["prompt"] == [{"type": "text", "text": draft}]


async def test_edits_stay_few_whatever_the_token_rate(shared: SharedEditor) -> None:
    text = "abcdefghij" * 500
    buffers = await _start(shared, "neovim", {"turns": [[{"text": text, "chunks": 5000}]]})
    uri = _source(shared, buffers)
    await _run(shared, (await _actions(shared, uri, _range(0, 1)))["Goose: Open chat"])
    transcript = await _open_transcript(shared, buffers)
    buffers.edits.clear()
    await _run(
        shared, (await _actions(shared, transcript, _range(0, 0)))["Goose: Send"]
    )  # nothing typed
    assert "Write your message" in await shared.shown("Write your message")
    await _run(shared, (await _actions(shared, uri, _range(0, 1)))["Goose: Explain selection"])
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    await shared.goose.wait_for(lambda: text in buffers.texts[transcript], what="the reply")
    updates = len(shared.goose.of_kind("agent_message_chunk"))  # chunks read in a row: one
    edits = len(buffers.edits)
    print(f"5000 chunks reached the editor in {updates} updates and {edits} edits")
    assert shared.goose.text(shared.goose.turn_ends[0]["messageId"]) == text
    assert edits < 60


@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_a_reply_starts_showing_at_once_whatever_the_edit_interval(editor: Editor) -> None:
    """The first text of a reply is not held back by ``transcript.editInterval``."""
    buffers = await _start(
        editor,
        "helix",
        {"turns": [[{"text": "The reply begins"}, {"waitForCancel": True}]]},
        {"transcript": {"editInterval": 3600}},
    )
    uri = _source(editor, buffers)
    await _run(editor, (await _actions(editor, uri, _range(0, 1)))["Goose: Open chat"])
    transcript = await _open_transcript(editor, buffers)
    await _run(editor, (await _actions(editor, uri, _range(0, 1)))["Goose: Explain selection"])
    await editor.goose.wait_for(
        lambda: "The reply begins" in buffers.texts[transcript], what="the reply's first text"
    )
    assert not editor.goose.turn_ends, "the turn is still running"


async def test_a_permission_through_a_popup(shared: SharedEditor) -> None:
    buffers = await _start(
        shared,
        "neovim",
        {
            "turns": [
                [
                    {"toolCall": {"toolCallId": "t1", "title": "shell · make"}},
                    {
                        "permission": {
                            "toolCallId": "t1",
                            "title": "shell",
                            "rawInput": {"command": "make"},
                        }
                    },
                    {"text": " ok"},
                ]
            ]
        },
    )
    asked = _answer_popups(shared, "Allow once")
    await _explained(shared, buffers)
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    assert [a.title for a in asked[0].actions or []] == [
        "Reject",  # first, selected in Helix: Enter alone allows nothing
        "Reject always",
        "Allow always",
        "Allow once",
        "Allow for this session",
    ]
    assert "shell" in asked[0].message
    resolved = shared.goose.of_kind("permission_resolved")
    assert resolved[0]["optionId"] == "allow_once"


@shared_with(editor=HELIX)
async def test_a_permission_through_the_card_in_helix(shared: SharedEditor) -> None:
    buffers = await _start(
        shared,
        "helix",
        {
            "turns": [
                [
                    {
                        "toolCall": {
                            "toolCallId": "t1",
                            "title": "edit · app.py",
                            "rawInput": {"command": "sed -i s/x/y/ app.py"},
                        }
                    },
                    {"permission": {"toolCallId": "t1", "title": "edit"}},
                    {"text": " done"},
                ]
            ]
        },
    )
    await _explained(shared, buffers)
    transcript = await _open_transcript(shared, buffers)
    await shared.goose.wait_for(
        lambda: "Permission needed" in buffers.texts[transcript], what="the card"
    )
    assert "waiting for your approval" in await shared.shown("waiting for your approval")
    lines = buffers.texts[transcript].split("\n")
    card = next(i for i, line in enumerate(lines) if "Permission needed" in line)
    actions = await _actions(shared, transcript, _range(card, card))
    action = "sed -i s/x/y/ app.py"
    assert {
        f"Goose: Allow once: {action}",
        f"Goose: Allow always: {action}",
        f"Goose: Reject: {action}",
        f"Goose: Reject always: {action}",
    } <= set(actions), "each choice names what it answers"
    assert next(iter(actions)) == f"Goose: Reject: {action}", "Enter allows nothing"
    assert "Goose: Send" in actions
    await _run(shared, actions[f"Goose: Allow once: {action}"])
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    assert shared.goose.of_kind("permission_resolved")[0]["optionId"] == "allow_once"
    await shared.goose.wait_for(
        lambda: "[permission: allow_once] done" in buffers.texts[transcript]
    )


@shared_with(editor=HELIX)
async def test_ask_from_a_helix_key_binding_then_send(shared: SharedEditor) -> None:
    buffers = await _start(shared, "helix", {"turns": [[{"text": "It adds."}]]})
    _source(shared, buffers)
    # :lsp-workspace-command goose.ask "%{buffer_name}" %{selection_line_start} %{selection_line_end}
    await shared.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.ask", arguments=["app.py", 1, 2])
    )
    transcript = await _open_transcript(shared, buffers)
    text = buffers.texts[transcript]
    assert text.split(SENTINEL)[1].startswith("\n> 📎 `")
    assert "app.py:1-2`" in text.split(SENTINEL)[1], "the selection waits in the prompt section"
    buffers.type_at_end(transcript, "What does it return?")
    await shared.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.send", arguments=[])
    )
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    await shared.goose.wait_for(lambda: "It adds." in buffers.texts[transcript])
    (prompt,) = shared.received("session/prompt")
    blocks = prompt["params"]["prompt"]
    assert blocks[0] == {"type": "text", "text": "What does it return?"}
    assert blocks[1]["resource"]["text"] == "def add(x, y):\n    return x + y\n"
    section = buffers.texts[transcript].split(SENTINEL)[1]
    assert "📎" not in section and "What does it return?" not in section


@shared_with(editor=HELIX)
async def test_an_at_mention_completes_a_file_and_sends_it_as_context(shared: SharedEditor) -> None:
    buffers = await _start(shared, "helix", {"turns": [[{"text": "Seen."}]]})
    _source(shared, buffers)  # open: offered first
    (shared.workspace / "notes").mkdir()
    (shared.workspace / "notes" / "apples.md").write_text("# apples\n")
    await shared.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openChat", arguments=[])
    )
    transcript = await _open_transcript(shared, buffers)
    buffers.type_at_end(transcript, "Compare @ap")
    last = buffers.texts[transcript].split("\n")
    at = types.Position(len(last) - 1, len(last[-1]))
    found = await shared.client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(transcript), at)
    )
    assert isinstance(found, types.CompletionList)
    assert [item.label for item in found.items] == ["@app.py", "@notes/apples.md"]
    edit = found.items[1].text_edit
    assert isinstance(edit, types.TextEdit) and edit.range.start.character == at.character - 2
    end = len(buffers.texts[transcript])  # the item chosen: its edit, then more typing
    buffers.replace(transcript, end - 2, end, f"{edit.new_text} with @app.py.")
    await shared.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.send", arguments=[])
    )
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    (prompt,) = shared.received("session/prompt")
    blocks = prompt["params"]["prompt"]
    assert blocks[0] == {"type": "text", "text": "Compare @notes/apples.md with @app.py."}
    sent = [block["uri"] for block in blocks[1:] if block["type"] == "resource_link"]
    assert sent == [
        (shared.workspace / "notes" / "apples.md").resolve().as_uri(),
        (shared.workspace / "app.py").resolve().as_uri(),
    ]


@pytest.mark.asyncio(loop_scope="function")  # a client that never spoke goose/*
async def test_an_editor_without_a_plugin_gets_no_goose_update_until_it_asks(
    editor: Editor,
) -> None:
    script = {"turns": [[{"text": "One, two.", "chunks": 4}], [{"text": "Three."}]]}
    buffers = await _start(editor, "helix", script, {"gooseUpdates": False})
    uri = await _explained(editor, buffers)
    await editor.goose.wait_for(lambda: editor.goose.turn_ends, what="the turn's end")
    transcript = await _open_transcript(editor, buffers)
    await editor.goose.wait_for(lambda: "One, two." in buffers.texts[transcript])
    assert editor.goose.updates == [], "nothing sent that Helix would only drop"
    await editor.goose.request("goose/status", {})  # a client that speaks goose/*
    await _run(editor, (await _actions(editor, uri, _range(0, 1)))["Goose: Explain selection"])
    await editor.goose.wait_for(lambda: editor.goose.turn_ends[1:], what="the second turn's end")
    assert "Three." in editor.goose.text(editor.goose.turn_ends[1]["messageId"])


@pytest.mark.asyncio(loop_scope="function")  # its own editor and agent
async def test_each_turn_has_progress_and_cancelling_it_cancels_the_turn(editor: Editor) -> None:
    buffers = await _start(
        editor,
        "vscode",
        {
            "agentInfo": {"name": "scripted", "title": "Claude Agent", "version": "1.0"},
            "turns": [
                [
                    {"toolCall": {"toolCallId": "t1", "title": "read · app.py"}},
                    {"toolUpdate": {"toolCallId": "t1", "status": "completed"}},
                    {"text": "done"},
                    {
                        "usage": {
                            "used": 12345,
                            "size": 200000,
                            "cost": {"amount": 0.42, "currency": "EUR"},
                        }
                    },
                ],
                [{"text": "x" * 400, "chunks": 400, "delay": 0.02}],
            ],
        },
    )
    uri = await _explained(editor, buffers)
    await editor.goose.wait_for(lambda: editor.goose.turn_ends, what="the first turn")
    (reports,) = await editor.goose.wait_for(
        lambda: (
            [
                r
                for r in editor.client.progress_reports.values()
                if r and isinstance(r[-1], types.WorkDoneProgressEnd)
            ]
            or None
        ),
        what="the progress to end",
    )
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
    assert reports[0].title.startswith("Claude Agent: "), "the agent's own name"
    messages = [r.message for r in reports[1:-1]]
    assert "read · app.py" in messages and "writing" in messages
    assert reports[-1].message == "end_turn · context 12,345 / 200,000 · 0.42 EUR"

    await _run(editor, (await _actions(editor, uri, _range(0, 1)))["Goose: Explain selection"])
    token = await editor.goose.wait_for(
        lambda: [
            t
            for t, r in editor.client.progress_reports.items()
            if r and not isinstance(r[-1], types.WorkDoneProgressEnd)
        ],
        what="the second turn's progress",
    )
    await editor.goose.wait_for(  # the second reply is streaming
        lambda: (
            "x" * 5
            in "".join(u["content"]["text"] for u in editor.goose.of_kind("agent_message_chunk"))
        )
    )
    editor.client.window_work_done_progress_cancel(
        types.WorkDoneProgressCancelParams(token=token[0])
    )
    end = await editor.goose.wait_for(
        lambda: editor.goose.turn_ends[1:], what="the second turn's end"
    )
    assert end[0]["stopReason"] == "cancelled"


@shared_with(editor=EDITORS["emacs"][0])
async def test_a_tool_block_tells_its_latest_status_even_with_text_after_it(
    shared: SharedEditor,
) -> None:
    listing = {"type": "content", "content": {"type": "text", "text": "a.py\nb.py"}}
    buffers = await _start(
        shared,
        "emacs",
        {
            "turns": [
                [
                    {
                        "toolCall": {
                            "toolCallId": "t1",
                            "title": "shell · ls",
                            "rawInput": {"command": "ls"},
                        }
                    },
                    {"text": "Listing them."},
                    {"toolUpdate": {"toolCallId": "t1", "status": "in_progress"}},
                    {"text": " Still listing."},
                    {
                        "toolUpdate": {
                            "toolCallId": "t1",
                            "status": "completed",
                            "content": [listing],
                        }
                    },
                    {"text": " Two files."},
                ]
            ]
        },
    )
    await _explained(shared, buffers)
    transcript = await _open_transcript(shared, buffers)
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    await shared.goose.wait_for(lambda: "Two files." in buffers.texts[transcript])
    text = buffers.texts[transcript]
    assert "**🔧 shell · ls** — ✓ completed" in text and "⏳" not in text, "the header, redrawn"
    assert text.index("```\na.py\nb.py\n```") < text.index("Listing them. Still listing. Two")
    assert ": completed_" not in text, "no status line: the block itself says it"


@pytest.mark.asyncio(loop_scope="function")  # its own editor
async def test_without_edits_the_file_on_disk_is_written(editor: Editor) -> None:
    no_edits = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(apply_edit=False, configuration=True),
        window=types.WindowClientCapabilities(
            show_document=types.ShowDocumentClientCapabilities(support=True)
        ),
    )
    await editor.start({"turns": [[{"text": REPLY, "chunks": 10}]]}, editor=no_edits)
    buffers = EditorBuffers(editor.client, "utf-16", apply_edits=False)
    await _explained(editor, buffers)
    shown = await editor.goose.wait_for(lambda: editor.client.shown_documents, what="showDocument")
    path = Path(shown[0].uri.removeprefix("file://"))
    await editor.goose.wait_for(lambda: editor.goose.turn_ends, what="the turn's end")
    on_disk = await editor.goose.wait_for(
        lambda: text if REPLY in (text := path.read_text(encoding="utf-8")) else None,
        what="the reply on disk",
    )
    assert on_disk.index(REPLY) < on_disk.index(SENTINEL)


@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_a_long_transcript_moves_to_a_part_and_links_to_it(editor: Editor) -> None:
    await editor.start(
        {"turns": [[{"text": "y" * 3000, "chunks": 3}], [{"text": "fresh start"}]]},
        settings={"transcript": {"maxBytes": 2000}},
    )
    buffers = EditorBuffers(editor.client, "utf-8")
    await _explained(editor, buffers)
    transcript = await _open_transcript(editor, buffers)
    await editor.goose.wait_for(lambda: editor.goose.turn_ends, what="the first turn")
    await editor.goose.wait_for(lambda: "Earlier in this chat" in buffers.texts[transcript])
    text = buffers.texts[transcript]
    assert "y" * 3000 not in text
    part = (
        editor.tmp
        / "data"
        / "transcripts"
        / "_".join(transcript.rsplit("/", 1)[1].split("_")[:2]).replace(".md", ".part1.md")
    )
    assert "y" * 3000 in part.read_text(encoding="utf-8")
    assert f"[{part.name}]({part.name})" in text


@pytest.mark.parametrize("name", ["helix", "vscode"])
@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_a_transcript_the_editor_shows_is_saved_while_the_reply_streams(
    editor: Editor, name: str
) -> None:
    """The editor never saves the transcript buffer: goose-ls does, with the draft the
    editor holds, while the turn runs and again at its end."""
    buffers = await _start(
        editor,
        name,
        {"turns": [[{"text": REPLY}, {"waitForCancel": True}]]},
        {"transcript": {"saveInterval": 0.2}},
    )
    uri = _source(editor, buffers)
    await _run(editor, (await _actions(editor, uri, _range(0, 2)))["Goose: Open chat"])
    transcript = await _open_transcript(editor, buffers)
    path = Path(transcript.removeprefix("file://"))
    await _run(editor, (await _actions(editor, uri, _range(0, 2)))["Goose: Explain selection"])
    buffers.type_at_end(transcript, "my next question")
    await editor.goose.wait_for(
        lambda: REPLY in path.read_text(encoding="utf-8"), what="the reply on disk mid-turn"
    )
    await editor.goose.wait_for(
        lambda: path.read_text(encoding="utf-8").endswith("my next question"),
        what="the draft on disk",
    )
    (end,) = await _cancel_and_end(editor)
    assert end["stopReason"] == "cancelled"
    await editor.goose.wait_for(
        lambda: path.read_text(encoding="utf-8") == buffers.texts[transcript],
        what="the file holding what the editor shows",
    )
    assert buffers.texts[transcript].count(REPLY) == 1


async def _cancel_and_end(editor: Editor) -> list[dict[str, Any]]:
    (update, *_) = editor.goose.updates
    await editor.goose.request("goose/cancel", {"sessionId": update["sessionId"]})
    return await editor.goose.wait_for(lambda: editor.goose.turn_ends, what="the turn's end")


@pytest.mark.asyncio(loop_scope="function")  # kills goose-ls and starts it again
async def test_a_transcript_quit_without_saving_comes_back_whole(tmp_path: Path) -> None:
    """Helix: stream into the open transcript, ``:qa!`` (goose-ls killed with the
    editor), start again: the chat is all there, once."""
    script = {"turns": [[{"text": REPLY, "chunks": 40, "delay": 0.01}]]}
    editor = await start_editor(tmp_path)
    buffers = await _start(editor, "helix", script)
    uri = _source(editor, buffers)
    await _run(editor, (await _actions(editor, uri, _range(0, 2)))["Goose: Explain selection"])
    transcript = await _open_transcript(editor, buffers)
    await editor.goose.wait_for(lambda: editor.goose.turn_ends, what="the turn's end")
    await editor.goose.wait_for(lambda: REPLY in buffers.texts[transcript], what="the reply")
    await kill(editor)
    path = Path(transcript.removeprefix("file://"))
    path.write_text(path.read_text(encoding="utf-8").replace(REPLY, "stale"), encoding="utf-8")

    again = await start_editor(tmp_path)
    try:
        await again.start(script, editor=HELIX)
        await again.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="goose.openChat", arguments=[])
        )
        await again.goose.wait_for(lambda: again.client.shown_documents, what="showDocument")
        text = path.read_text(encoding="utf-8")
        assert text.count(REPLY) == 1 and "stale" not in text, "drawn again from the journal"
        assert text.count("Explain what this code does") == 1
    finally:
        await again.client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")  # kills goose-ls and starts it again
async def test_a_draft_written_after_the_turn_survives_a_quit_without_saving(
    tmp_path: Path,
) -> None:
    """Helix: a draft typed once the reply is over, then ``:qa!``: goose-ls saved it with
    the file, and the chat comes back with it under ``## You ✎``."""
    script = {"turns": [[{"text": "It adds."}]]}
    editor = await start_editor(tmp_path)
    buffers = await _start(editor, "helix", script)
    uri = _source(editor, buffers)
    await _run(editor, (await _actions(editor, uri, _range(0, 2)))["Goose: Explain selection"])
    transcript = await _open_transcript(editor, buffers)
    await editor.goose.wait_for(lambda: editor.goose.turn_ends, what="the turn's end")
    await editor.goose.wait_for(lambda: "It adds." in buffers.texts[transcript])
    draft = "And for negative 🦆 numbers?"
    buffers.type_at_end(transcript, draft)
    path = Path(transcript.removeprefix("file://"))
    await editor.goose.wait_for(
        lambda: draft in path.read_text(encoding="utf-8"), what="the draft saved"
    )
    await kill(editor)

    again = await start_editor(tmp_path)
    try:
        await again.start(script, editor=HELIX)
        await again.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="goose.openChat", arguments=[])
        )
        await again.goose.wait_for(lambda: again.client.shown_documents, what="showDocument")
        assert path.read_text(encoding="utf-8").split(SENTINEL)[1].strip().endswith(draft)
    finally:
        await again.client.shutdown_session()


TYPED = ["Why is ", "the built-", "in sum ", "faster ", "than the ", "loop? 🦆 ✓"]


@shared_with(editor=HELIX)
async def test_changes_the_editor_sends_out_of_order_are_applied_in_order(
    shared: SharedEditor,
) -> None:
    """Helix sends didChange out of order when typing fast (versions 35, 38, 36, 39, 37,
    40): what reaches the agent is still exactly what was typed."""
    buffers = await _start(shared, "helix", {"turns": [[{"text": "ok"}]]})
    uri = _source(shared, buffers)
    await _run(shared, (await _actions(shared, uri, _range(0, 2)))["Goose: Open chat"])
    transcript = await _open_transcript(shared, buffers)
    buffers.type_in_pieces(transcript, TYPED, order=[0, 3, 1, 4, 2, 5])
    await _run(shared, (await _actions(shared, transcript, _range(0, 0)))["Goose: Send"])
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    (prompt,) = shared.received("session/prompt")
    assert prompt["params"]["prompt"] == [{"type": "text", "text": "".join(TYPED)}]


async def test_changes_that_skip_versions_are_sent_at_once(shared: SharedEditor) -> None:
    """LSP versions grow but need not be consecutive (Neovim numbers its batches by its
    change counter): no number is waited for."""
    buffers = await _start(shared, "neovim", {"turns": [[{"text": "ok"}]]})
    uri = _source(shared, buffers)
    await _run(shared, (await _actions(shared, uri, _range(0, 2)))["Goose: Open chat"])
    transcript = await _open_transcript(shared, buffers)
    buffers.type_in_pieces(transcript, TYPED, order=list(range(len(TYPED))), skip=3)
    await _run(shared, (await _actions(shared, transcript, _range(0, 0)))["Goose: Send"])
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    (prompt,) = shared.received("session/prompt")
    assert prompt["params"]["prompt"] == [{"type": "text", "text": "".join(TYPED)}]


@shared_with(editor=HELIX)
async def test_a_change_that_comes_too_late_sends_nothing_until_the_file_is_saved(
    shared: SharedEditor,
) -> None:
    """A change that comes after the ones that follow it were taken as skipping it cannot
    be put in its place: Send refuses, rather than send a text the user never wrote."""
    buffers = await _start(shared, "helix", {"turns": [[{"text": "ok"}]]})
    uri = _source(shared, buffers)
    await _run(shared, (await _actions(shared, uri, _range(0, 2)))["Goose: Open chat"])
    transcript = await _open_transcript(shared, buffers)
    (late,) = buffers.type_in_pieces(transcript, TYPED, order=[0, 1, 3, 4, 5])
    await asyncio.sleep(SKIP_WAIT * 3)
    buffers.send(late)
    await _run(shared, (await _actions(shared, transcript, _range(0, 0)))["Goose: Send"])
    message = await shared.shown("came out of order")
    assert "Save the file" in message
    assert not shared.received("session/prompt"), "nothing was sent"
    buffers.save(transcript)
    await _run(shared, (await _actions(shared, transcript, _range(0, 0)))["Goose: Send"])
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    (prompt,) = shared.received("session/prompt")
    assert prompt["params"]["prompt"] == [{"type": "text", "text": "".join(TYPED)}]


@shared_with(editor=HELIX)
async def test_a_permission_for_an_edit_shows_its_minimal_diff_once_before_the_choices(
    shared: SharedEditor,
) -> None:
    """claude-code-acp's Write sends only the new text: goose-ls diffs it against the file
    as the user sees it, for the card and for every plugin (never a secret's text)."""
    old = "def add(x, y):\n    return x + y\n\nprint(add(1, 2))\n"
    new = old.replace("x + y", "x - y")
    (shared.workspace / ".env").write_text("TOKEN=hunter2\n")
    write = {"toolCallId": "w1", "title": "Write app.py", "kind": "edit"}
    leak = {"toolCallId": "w2", "title": "Write .env", "kind": "edit"}
    app, env = str(shared.workspace / "app.py"), str(shared.workspace / ".env")
    steps = [
        {"toolCall": {**write, "rawInput": {"file_path": app, "content": new}}},
        {"permission": write},
        {"toolCall": {**leak, "rawInput": {"file_path": env, "content": "X=1\n"}}},
        {"permission": leak},
    ]
    buffers = await _start(shared, "helix", {"turns": [steps]})
    await _explained(shared, buffers)
    transcript = await _open_transcript(shared, buffers)
    asked = await shared.goose.wait_for(lambda: shared.goose.of_kind("permission_request"))
    (diff,) = [c for c in asked[0]["toolCall"]["content"] if c["type"] == "diff"]
    assert (diff["oldText"], diff["newText"]) == (old, new)
    await shared.goose.wait_for(lambda: "Answer with a code action" in buffers.texts[transcript])
    text = buffers.texts[transcript]
    assert text.count("```diff") == 1, "once"
    assert "-    return x + y\n+    return x - y\n" in text and "+print" not in text, "minimal"
    assert text.index("```diff") < text.index("Answer with a code action"), "before the choices"
    await shared.goose.request(
        "goose/permission", {"requestId": asked[0]["requestId"], "optionId": "reject_once"}
    )
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    assert len(shared.goose.of_kind("permission_request")) == 1, "a secret is refused unasked"
    assert "hunter2" not in buffers.texts[transcript], "and its text never read for a diff"


async def test_a_diff_of_text_without_a_final_newline_keeps_its_lines_apart(
    shared: SharedEditor,
) -> None:
    """An edit of a file that does not end in a newline: the card's diff shows the old and
    the new last line each on its own line, marked as git marks them, under a header that
    names the file as the workspace has it (not its absolute path)."""
    old = "def add(a, b):\n    return a + b"
    new = "def add(a, b):\n    return a + b  # edited"
    (shared.workspace / "pkg").mkdir()
    edit = edit_call(shared.workspace / "pkg" / "calc.py", old, new)
    steps = [
        {"text": "Editing calc.py.", "chunks": 4, "delay": 0.1},  # the transcript opens first
        {"permission": {"toolCall": edit}},
    ]
    buffers = await _start(shared, "neovim", {"turns": [steps]})
    await _explained(shared, buffers)
    transcript = await _open_transcript(shared, buffers)
    asked = await shared.goose.wait_for(lambda: shared.goose.of_kind("permission_request"))
    await shared.goose.wait_for(lambda: "```diff" in buffers.texts[transcript], what="the diff")
    text = buffers.texts[transcript]
    diff = text[text.index("```diff\n") + 8 : text.index("```", text.index("```diff") + 7)]
    assert diff == (
        "--- a/pkg/calc.py\n"
        "+++ b/pkg/calc.py\n"
        "@@ -1,2 +1,2 @@\n"
        " def add(a, b):\n"
        "-    return a + b\n"
        "\\ No newline at end of file\n"
        "+    return a + b  # edited\n"
        "\\ No newline at end of file\n"
    ), diff
    await shared.goose.request(
        "goose/permission", {"requestId": asked[0]["requestId"], "optionId": "reject_once"}
    )
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")


async def test_a_question_of_one_choice_through_a_popup(shared: SharedEditor) -> None:
    choice = {
        "type": "string",
        "oneOf": [{"const": "py", "title": "Python"}, {"const": "rs", "title": "Rust"}],
    }
    titles, said = await _question_popup(shared, choice, "Rust")
    assert titles == ["Python", "Rust", "Decline"]
    assert '[elicitation: accept {"language": "rs"}]' in said


async def test_question_buttons_that_would_read_alike_say_which_is_which(
    shared: SharedEditor,
) -> None:
    """Two choices titled alike, one titled "Decline": each button says which value it
    sends, and "Decline" declines."""
    choice = {
        "type": "string",
        "oneOf": [
            {"const": "py", "title": "Python"},
            {"const": "rs", "title": "Python"},
            {"const": "yes", "title": "Decline"},
        ],
    }
    titles, said = await _question_popup(shared, choice, "Decline")
    assert titles == ["Python", "Python (rs)", "Decline (yes)", "Decline"]
    assert "[elicitation: decline]" in said


async def test_a_page_opens_only_once_the_user_said_yes_to_its_origin(shared: SharedEditor) -> None:
    url = "https://example.com/sign-in?state=1"
    step = {"elicit": {"message": "Sign in", "mode": "url", "url": url, "elicitationId": "s1"}}
    done = [{"elicitComplete": "nobody asked"}, {"elicitComplete": "s1"}]
    buffers = await _start(shared, "neovim", {"turns": [[step, *done]]})
    asked = _answer_popups(shared, "Open https://example.com")
    await _explained(shared, buffers)
    (end,) = await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    (popup,) = asked
    assert [a.title for a in popup.actions or []] == ["Decline", "Open https://example.com"]
    assert "open a page on https://example.com: Sign in" in popup.message and url in popup.message
    opened = [shown.uri for shown in shared.client.shown_documents if shown.external]
    assert opened == [url]
    assert "[elicitation: accept]" in shared.goose.text(end["messageId"])
    notes = [note["text"] for note in shared.goose.of_kind("note")]
    assert notes == ["Done: Sign in"], "the agent's word that the page's work is done"
    audit = (shared.tmp / "data" / "audit.log").read_text()
    assert '"tool": "page"' in audit and url in audit and '"outcome": "accept"' in audit


async def test_a_page_the_user_declines_is_not_opened(shared: SharedEditor) -> None:
    step = {"elicit": {"message": "Sign in", "mode": "url", "url": "https://example.com/x"}}
    buffers = await _start(shared, "neovim", {"turns": [[step]]})
    _answer_popups(shared, "Decline")
    await _explained(shared, buffers)
    (end,) = await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    assert not [shown for shown in shared.client.shown_documents if shown.external]
    assert "[elicitation: decline]" in shared.goose.text(end["messageId"])


REFUSED_PAGES = [
    ("http://admin:hunter2@example.com/", "user name or password"),
    ("https://token@example.com/", "user name or password"),
    ("http://example.com/sign-in", "only https"),
    ("javascript:alert(1)", "only https"),
    ("file:///etc/passwd", "only https"),
]


@pytest.mark.parametrize(("url", "why"), REFUSED_PAGES)
async def test_a_page_no_one_should_open_is_never_put_to_the_user(
    shared: SharedEditor, url: str, why: str
) -> None:
    step = {"elicit": {"message": "Sign in", "mode": "url", "url": url}}
    buffers = await _start(shared, "neovim", {"turns": [[step]]})
    asked = _answer_popups(shared, "Decline")
    await _explained(shared, buffers)
    (end,) = await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    assert not asked and not [shown for shown in shared.client.shown_documents if shown.external]
    assert "[elicitation: decline]" in shared.goose.text(end["messageId"])
    assert not shared.goose.of_kind("elicitation_request"), "never shown as a question"
    (note,) = [n["text"] for n in shared.goose.of_kind("note")]
    assert "refused" in note and why in note and "hunter2" not in note, note
    audit = (shared.tmp / "data" / "audit.log").read_text()
    assert '"outcome": "refused"' in audit and why in audit and "hunter2" not in audit


@shared_with(editor=HELIX)
async def test_a_page_is_opened_from_its_card_in_an_editor_without_popups(
    shared: SharedEditor,
) -> None:
    url = "https://example.com/sign-in"
    step = {"elicit": {"message": "Sign in", "mode": "url", "url": url}}
    buffers = await _start(shared, "helix", {"turns": [[step, {"text": " done"}]]})
    shared.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(lambda _: None)  # dismissed
    await _explained(shared, buffers)
    transcript = await _open_transcript(shared, buffers)
    await shared.goose.wait_for(lambda: url in buffers.texts[transcript], what="the card")
    assert not [shown for shown in shared.client.shown_documents if shown.external]
    lines = buffers.texts[transcript].split("\n")
    card = next(i for i, line in enumerate(lines) if "asks:" in line)
    actions = await _actions(shared, transcript, _range(card, card))
    title = f"Goose: Open the page on https://example.com: {url}"
    assert title in actions, list(actions)
    await _run(shared, actions[title])
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    assert [shown.uri for shown in shared.client.shown_documents if shown.external] == [url]
    assert shared.goose.of_kind("elicitation_resolved")[0]["action"] == "accept"


@shared_with(editor=HELIX)
async def test_a_form_waits_on_its_card_in_helix_and_can_be_declined(shared: SharedEditor) -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Project name"},
            "port": {"type": "integer"},
        },
        "required": ["name"],
    }
    step = {"elicit": {"message": "Set up the project", "schema": schema}}
    buffers = await _start(shared, "helix", {"turns": [[step, {"text": " done"}]]})
    await _explained(shared, buffers)
    transcript = await _open_transcript(shared, buffers)
    await shared.goose.wait_for(lambda: "goose asks" in buffers.texts[transcript], what="the card")
    lines = buffers.texts[transcript].split("\n")
    card = next(i for i, line in enumerate(lines) if "goose asks" in line)
    assert "**name** (string, required) Project name" in lines[card + 1]
    assert "**port** (integer)" in lines[card + 2]
    actions = await _actions(shared, transcript, _range(card, card))
    assert {"Goose: Decline the question", "Goose: Cancel the question"} <= set(actions)
    await _run(shared, actions["Goose: Decline the question"])
    await shared.goose.wait_for(lambda: shared.goose.turn_ends, what="the turn's end")
    assert shared.goose.of_kind("elicitation_resolved")[0]["action"] == "decline"
    await shared.goose.wait_for(lambda: "[elicitation: decline] done" in buffers.texts[transcript])


async def test_an_answer_naming_no_request_is_refused_once_a_card_was_swapped(
    shared: SharedEditor,
) -> None:
    """The agent withdraws the card the user reads and asks another at once: a key meant
    for the first (`goose.permission allow_once`, no request id) does not allow the
    second; the user is told, reads the new card, and answers again."""
    harmless = {"toolCallId": "p1", "title": "ls", "kind": "execute", "withdrawAfter": 0.3}
    harmful = {
        "toolCallId": "p2",
        "title": "ls",
        "kind": "execute",
        "rawInput": {"command": "rm -rf ~/projects"},
    }
    await shared.start({"turns": [[{"permission": harmless}, {"permission": harmful}]]})
    session = await shared.new_session()
    turn = await shared.prompt(session, "go")
    await shared.goose.wait_for(lambda: shared.goose.of_kind("permission_request")[1:])
    bare = types.ExecuteCommandParams(command="goose.permission", arguments=["allow_once"])
    await shared.client.workspace_execute_command_async(bare)
    refused = await shared.shown("withdrew a permission request")
    assert "rm -rf ~/projects" in refused, refused
    resolved = shared.goose.of_kind("permission_resolved")
    assert [r["outcome"] for r in resolved] == ["cancelled"], "the second is not answered"
    await shared.client.workspace_execute_command_async(bare)  # read, and answered again
    await shared.goose.turn_end(turn)
    assert "[permission: allow_once]" in shared.goose.text(turn)


async def test_an_answer_naming_no_request_is_refused_while_two_chats_ask(
    shared: SharedEditor,
) -> None:
    """`goose.permission allow_once` answers the one waiting request; with requests in two
    chats it answers none (it would allow a card the user may not have read), and says
    so. Once one chat is answered on its card, it answers the other."""
    steps = [{"permission": {"toolCallId": "p1", "title": "Run it", "kind": "execute"}}]
    await shared.start({"turns": [steps]})
    first, second = await shared.new_session(), await shared.new_session()
    one, two = await shared.prompt(first, "one"), await shared.prompt(second, "two")
    await shared.goose.wait_for(lambda: shared.goose.of_kind("permission_request")[1:])
    bare = types.ExecuteCommandParams(command="goose.permission", arguments=["allow_once"])
    await shared.client.workspace_execute_command_async(bare)
    assert "permission requests wait in 2 chats" in await shared.shown("goose.permission")
    assert shared.goose.of_kind("permission_resolved") == [], "nothing answered"
    (card,) = shared.goose.of_kind("permission_request", first)
    await shared.goose.request(
        "goose/permission", {"requestId": card["requestId"], "optionId": "reject_once"}
    )
    await shared.goose.turn_end(one)
    await shared.client.workspace_execute_command_async(bare)
    await shared.goose.turn_end(two)
    assert "[permission: allow_once]" in shared.goose.text(two)
    assert "[permission: reject_once]" in shared.goose.text(one)
