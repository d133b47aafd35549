"""Before an agent that reads the disk answers, the chat names the open files it sees as
last saved: the files the prompt mentions, then the other unsaved ones, briefly.

goose reads through goose-ls (``fs/read_text_file``: the buffer itself), so it gets no
such note, unless ``agent.clientFs`` is off; Claude Code reads the disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from support.buffers import EditorBuffers
from support.claude import CLAUDE, MISSING, start_claude
from support.fake_anthropic import FakeAnthropic, Reply
from support.harness import Editor

UNSAVED = "has unsaved changes"


def _open_three(editor: Editor) -> tuple[EditorBuffers, str, str]:
    """app.py and other.py changed and not saved, saved.py open as it is on disk."""
    buffers = EditorBuffers(editor.client, "utf-8")
    uris = []
    for name in ("app.py", "other.py", "saved.py"):
        path = editor.workspace / name
        path.write_text("a = 1\n", encoding="utf-8")
        buffers.open(path.as_uri(), language="python")
        uris.append(path.as_uri())
    app, other, _ = uris
    buffers.replace_all(app, "a = 2\n")
    buffers.replace_all(other, "a = 12\n")
    return buffers, app, other


def _turn(editor: Editor, message_id: str) -> list[dict[str, Any]]:
    return [u["update"] for u in editor.goose.updates if u["messageId"] == message_id]


def _notes(editor: Editor, message_id: str) -> list[str]:
    return [u["text"] for u in _turn(editor, message_id) if u["sessionUpdate"] == "note"]


@pytest.mark.skipif(not CLAUDE.exists(), reason=MISSING)
async def test_claude_s_turn_names_the_unsaved_files_before_it_answers(editor: Editor) -> None:
    with FakeAnthropic([Reply(("It says a = 1.",)), Reply(("Now a = 2.",))]) as api:
        await start_claude(editor, api)
        buffers, app, other = _open_three(editor)
        sid = await editor.new_session()
        first = await editor.prompt(sid, "What does @app.py say?")
        assert (await editor.goose.turn_end(first))["stopReason"] == "end_turn"

        (note,) = _notes(editor, first)
        assert note == (
            "app.py has unsaved changes: the agent reads the file on disk, not your buffer; "
            "save it for it to see them. Also unsaved: other.py."
        )
        kinds = [u["sessionUpdate"] for u in _turn(editor, first)]
        assert kinds.index("note") < kinds.index("agent_message_chunk"), "before the answer"
        assert "unsaved" not in str(api.turns()[0].body["messages"]), "said to the user only"
        (summary,) = (await editor.goose.request("goose/status", {}))["sessions"]
        transcript = Path(summary["transcript"].removeprefix("file://"))
        text = await editor.goose.wait_for(
            lambda: t if "It says" in (t := transcript.read_text(encoding="utf-8")) else None,
            what="the reply in the transcript",
        )
        assert text.index(f"> **Note:** app.py {UNSAVED}") < text.index("It says a = 1.")

        buffers.save(app)
        buffers.save(other)
        second = await editor.prompt(sid, "And now?")
        await editor.goose.turn_end(second)
        assert _notes(editor, second) == []


async def test_goose_reads_the_buffers_so_only_without_client_fs_is_it_told(
    editor: Editor,
) -> None:
    await editor.start({"turns": [[{"text": "ok"}]]})
    _open_three(editor)
    sid = await editor.new_session()
    first = await editor.prompt(sid, "What does @app.py say?")
    await editor.goose.turn_end(first)
    assert _notes(editor, first) == []

    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"goose": {"agent": {"clientFs": False}}})
    )
    await editor.goose.request("goose/restart", {})
    second = await editor.prompt(sid, "What does @app.py say?")
    await editor.goose.turn_end(second)
    (note,) = _notes(editor, second)
    assert note.startswith(f"app.py {UNSAVED}: the agent reads the file on disk")
    (init, *_, again) = editor.received("initialize")
    assert init["params"]["clientCapabilities"]["fs"]["readTextFile"] is True
    assert "readTextFile" not in again["params"]["clientCapabilities"].get("fs", {})


async def test_another_agent_is_told_until_it_reads_through_goose_ls(editor: Editor) -> None:
    """goose-ls cannot know an agent it does not know reads through it until it does."""
    app = editor.workspace / "app.py"
    await editor.start(
        {
            "agentInfo": {"name": "another-agent", "version": "1.0.0"},
            "turns": [[{"readFile": {"path": str(app)}}], [{"text": "ok"}]],
        }
    )
    _open_three(editor)
    sid = await editor.new_session()
    first = await editor.prompt(sid, "What does @app.py say?")
    await editor.goose.turn_end(first)
    (note,) = _notes(editor, first)
    assert note.startswith(f"app.py {UNSAVED}")
    assert editor.goose.text(first) == '[read "a = 2\\n"]', "it read the buffer after all"

    second = await editor.prompt(sid, "What does @app.py say?")
    await editor.goose.turn_end(second)
    assert _notes(editor, second) == []
