"""Review and revert a turn of the real agents, which write files with their own tools:
claude-agent-acp (Edit, Write, Bash) and codex-acp (apply_patch, exec_command), offline
against their fake model APIs. Nothing of it goes through goose-ls's ``fs/*``: the turn's
checkpoints find it on disk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from lsprotocol import types

from support.claude import CLAUDE, start_claude
from support.claude import MISSING as CLAUDE_MISSING
from support.codex import CODEX, start_codex
from support.codex import MISSING as CODEX_MISSING
from support.fake_anthropic import FakeAnthropic, ToolUse
from support.fake_anthropic import Reply as ClaudeReply
from support.fake_model import FakeModel, apply_patch, exec_command
from support.fake_model import Reply as CodexReply
from support.harness import Editor
from support.real_agent import approving

FORMAT = "sed -i 's/ *$//' a.py b.py c.py"
"""The formatter: trailing blanks off every file."""


def _files(ws: Path) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (ws / name).write_text(f"{name[0]} = 1   \n")


async def _turn(editor: Editor, start: Callable[[], Awaitable[None]]) -> str:
    """Start the agent and run one turn, saying yes to every card; the transcript's URI."""
    await start()
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openChat", arguments=[])
    )
    (chat,) = await editor.goose.wait_for(lambda: editor.client.shown_documents)
    (session,) = (await editor.goose.request("goose/status", {}))["sessions"]
    yes = asyncio.ensure_future(approving(editor))
    try:
        message_id = await editor.prompt(session["sessionId"], "edit, create and format")
        end = await editor.goose.turn_end(message_id, timeout=120)
        assert end["stopReason"] == "end_turn", end
    finally:
        yes.cancel()
    await yes
    return chat.uri


async def _review_and_revert(editor: Editor, chat: str) -> None:
    ws = editor.workspace
    assert [(ws / n).read_text() for n in ("a.py", "b.py", "c.py", "new.py")] == [
        "a = 2\n",
        "b = 2\n",
        "c = 1\n",
        "new = 1\n",
    ], "the agent did it all, with its own tools"

    async def run(name: str) -> None:
        await editor.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=[chat])
        )

    await run("goose.reviewTurn")
    review = await editor.goose.wait_for(
        lambda: [d for d in editor.client.shown_documents if ".review-" in d.uri]
    )
    text = Path(review[0].uri.removeprefix("file://")).read_text()
    for expected in ("-a = 1   \n+a = 2\n", "-b = 1   \n+b = 2\n", "-c = 1   \n+c = 1\n"):
        assert expected in text, text
    assert "## `new.py` (created)" in text

    (ws / "b.py").write_text("b = 'mine since'\n")
    await run("goose.revertTurn")
    message = await editor.shown("reverted 3 of 4 file(s)")
    assert "b.py changed since that turn; not reverted" in message
    assert [(ws / n).read_text() for n in ("a.py", "b.py", "c.py")] == [
        "a = 1   \n",
        "b = 'mine since'\n",
        "c = 1   \n",
    ]
    assert not (ws / "new.py").exists()
    said = [
        u["update"] for u in editor.goose.updates if u["update"]["sessionUpdate"] == "disk_changes"
    ]
    told = {Path(f["path"]).name for change in said for f in change["files"]}
    # A snapshot taken while the agent's next tool writes may also see its temporary file.
    assert told >= {"a.py", "b.py", "c.py", "new.py"}, said


@pytest.mark.skipif(not CLAUDE.exists(), reason=CLAUDE_MISSING)
async def test_a_claude_turn_is_reviewed_and_reverted_whole(editor: Editor) -> None:
    ws = editor.workspace
    _files(ws)
    tools = [
        ToolUse("Read", {"file_path": f"{ws}/a.py"}),
        ToolUse("Read", {"file_path": f"{ws}/b.py"}),
        ToolUse("Edit", {"file_path": f"{ws}/a.py", "old_string": "a = 1", "new_string": "a = 2"}),
        ToolUse("Edit", {"file_path": f"{ws}/b.py", "old_string": "b = 1", "new_string": "b = 2"}),
        ToolUse("Write", {"file_path": f"{ws}/new.py", "content": "new = 1\n"}),
        ToolUse("Bash", {"command": f"cd {ws} && {FORMAT}"}),
    ]
    numbered = [ToolUse(t.name, t.input, id=f"toolu_{n:02}") for n, t in enumerate(tools)]
    replies = [*(ClaudeReply(("On it.",), tool=t) for t in numbered), ClaudeReply(("Done.",))]
    with FakeAnthropic(replies) as api:
        chat = await _turn(editor, lambda: start_claude(editor, api))
        await _review_and_revert(editor, chat)


@pytest.mark.skipif(not CODEX.exists(), reason=CODEX_MISSING)
async def test_a_codex_turn_is_reviewed_and_reverted_whole(editor: Editor) -> None:
    _files(editor.workspace)
    patch = (
        "*** Begin Patch\n"
        "*** Update File: a.py\n@@\n-a = 1   \n+a = 2   \n"
        "*** Update File: b.py\n@@\n-b = 1   \n+b = 2   \n"
        "*** Add File: new.py\n+new = 1\n"
        "*** End Patch\n"
    )
    # Out of codex's own read-only sandbox: a command that writes asks first.
    fmt = exec_command(
        FORMAT, "call_01", sandbox_permissions="require_escalated", justification="Format"
    )
    calls = [apply_patch(patch, "call_00"), fmt]
    replies = [*(CodexReply(("On it.",), call=c) for c in calls), CodexReply(("Done.",))]
    with FakeModel(replies) as model:
        chat = await _turn(editor, lambda: start_codex(editor, model))
        await _review_and_revert(editor, chat)
