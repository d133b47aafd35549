"""The agent writes files itself, as claude-agent-acp and codex-acp do: open buffers follow
the disk, unsaved changes meet it as a conflict, and each turn is reviewed and reverted
from its checkpoints, whoever changed the files.

The scripted agent's ``shell`` step runs in its own process, never through goose-ls.
"""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from goose_ls.scripted.script import replace_in_file
from goose_ls.workspace.snapshots import ShadowRepo, key
from support.buffers import EditorBuffers
from support.harness import Editor, start_editor, stop_editor

NUMBERED = "".join(f"x{n} = {n}\n" for n in range(30))


def _python(code: str, *args: Path | str) -> dict[str, Any]:
    """A shell step running ``code`` with python3 in the agent's own process."""
    line = " ".join(["python3", "-c", shlex.quote(code), *(shlex.quote(str(a)) for a in args)])
    return {"shell": line}


UNTIL_THERE = "import os, sys, time\nwhile not os.path.exists(sys.argv[1]):\n    time.sleep(0.02)"
"""A step's code that waits until the test makes the file it names (the user did what the
agent waits on)."""


async def _chat(editor: Editor) -> tuple[str, str]:
    """Open the chat as a plugin-free editor does; its URI and session."""
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openChat", arguments=[])
    )
    (chat,) = await editor.goose.wait_for(lambda: editor.client.shown_documents)
    (session,) = (await editor.goose.request("goose/status", {}))["sessions"]
    return chat.uri, session["sessionId"]


async def _command(editor: Editor, name: str, *arguments: Any) -> None:
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=list(arguments))
    )


def _notes(editor: Editor) -> list[str]:
    return [
        u["update"]["text"] for u in editor.goose.updates if u["update"]["sessionUpdate"] == "note"
    ]


async def test_an_open_file_the_agent_edits_itself_follows_the_disk_in_one_undo_step(
    editor: Editor,
) -> None:
    app = editor.workspace / "app.py"
    app.write_text(NUMBERED)
    await editor.start(
        {"turns": [[replace_in_file(app, "x10 = 10\n", "x10 = 'ten'\n"), {"text": "done"}]]}
    )
    buffers = EditorBuffers(editor.client, "utf-8")
    buffers.open(app.as_uri(), NUMBERED, "python")
    _, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "change x10"))

    agent = NUMBERED.replace("x10 = 10\n", "x10 = 'ten'\n")
    assert app.read_text() == agent
    await editor.goose.wait_for(lambda: buffers.texts[app.as_uri()] == agent, what="the buffer")
    edits = [edit for uri, edit in buffers.edits if uri == app.as_uri()]
    assert len(edits) == 1, "one edit: one undo step"
    (edit,) = edits
    assert (edit.range.start.line, edit.range.end.line, edit.new_text) == (10, 11, "x10 = 'ten'\n")
    await editor.goose.wait_for(lambda: app.as_uri() in editor.goose.disk_synced)
    assert any("app.py changed on disk" in note for note in _notes(editor))
    buffers.save(app.as_uri())
    assert app.read_text() == agent, "a save keeps the agent's text"


async def test_unsaved_changes_meet_the_agents_edit_as_a_conflict_and_nothing_is_lost(
    editor: Editor,
) -> None:
    app = editor.workspace / "app.py"
    app.write_text(NUMBERED)
    await editor.start({"turns": [[replace_in_file(app, "x10 = 10\n", "x10 = 'agent'\n")]]})
    buffers = EditorBuffers(editor.client, "utf-8")
    buffers.open(app.as_uri(), NUMBERED, "python")
    mine = NUMBERED.replace("x2 = 2\n", "x2 = 'mine'\n")
    buffers.replace_all(app.as_uri(), mine)  # typed, not saved
    _, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "change x10"))

    agent = NUMBERED.replace("x10 = 10\n", "x10 = 'agent'\n")
    note = await editor.goose.wait_for(
        lambda: [n for n in _notes(editor) if "unsaved changes" in n], what="the conflict note"
    )
    assert buffers.texts[app.as_uri()] == mine and app.read_text() == agent, "both kept"
    actions = await editor.code_actions(app.as_uri(), 0)
    assert {"Goose: Take the agent's version", "Goose: Keep my version"} <= set(actions)

    await editor.run(actions["Goose: Compare with the agent's version"])
    shown = await editor.goose.wait_for(
        lambda: [d for d in editor.client.shown_documents if d.uri.endswith(".diff.md")]
    )
    diff = Path(shown[0].uri.removeprefix("file://")).read_text()
    assert "-x10 = 10\n+x10 = 'agent'" in diff and "-x2 = 'mine'\n+x2 = 2" in diff

    await editor.run(actions["Goose: Take the agent's version"])
    await editor.goose.wait_for(lambda: buffers.texts[app.as_uri()] == agent, what="the agent's")
    copies = list((editor.tmp / "data" / "conflicts").rglob("yours-app.py"))
    assert [c.read_text() for c in copies] == [mine], "the user's text kept beside the agent's"
    assert str(copies[0].with_name("app.py")) in note[0]
    assert "Goose: Take the agent's version" not in await editor.code_actions(app.as_uri(), 0)


FORMAT = (
    "import pathlib,sys\n"
    "for p in pathlib.Path(sys.argv[1]).glob('*.py'):\n"
    "    p.write_text(''.join(l.rstrip() + '\\n' for l in p.read_text().splitlines()))"
)


async def test_a_turn_that_edits_files_and_runs_a_formatter_is_reviewed_and_reverted_whole(
    editor: Editor,
) -> None:
    ws = editor.workspace
    files = {name: f"{name[0]} = 1   \n" for name in ("a.py", "b.py", "c.py")}
    for name, text in files.items():
        (ws / name).write_text(text)
    (ws / "gone.txt").write_text("removed by the agent\n")
    (ws / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (ws / ".gitattributes").write_text("* text eol=lf\n")
    steps = [
        replace_in_file(ws / "a.py", "a = 1", "a = 2"),
        replace_in_file(ws / "b.py", "b = 1", "b = 2"),
        _python("import sys; open(sys.argv[1], 'w').write('new = 1  \\n')", ws / "new.py"),
        _python("import os, sys; os.remove(sys.argv[1])", ws / "gone.txt"),
        _python(
            "import sys; open(sys.argv[1], 'wb').write(b'one\\r\\nTWO\\r\\n')", ws / "crlf.txt"
        ),
        _python(FORMAT, ws),  # the formatter touches c.py too
        {"text": "done"},
    ]
    await editor.start({"turns": [steps]})
    chat, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "edit and format"), timeout=60)
    assert (ws / "c.py").read_text() == "c = 1\n"

    await _command(editor, "goose.reviewTurn", chat)
    review = await editor.goose.wait_for(
        lambda: [d for d in editor.client.shown_documents if ".review-" in d.uri]
    )
    text = Path(review[0].uri.removeprefix("file://")).read_bytes().decode()
    for expected in (
        "-a = 1   \n+a = 2\n",
        "-b = 1   \n+b = 2\n",
        "-c = 1   \n+c = 1\n",
        "## `new.py` (created)",
        "## `gone.txt` (removed)",
        "-two\r\n+TWO\r\n",
    ):
        assert expected in text, expected

    (ws / "b.py").write_text("b = 'the user changed it since'\n")
    await _command(editor, "goose.revertTurn", chat)
    message = await editor.shown("reverted 5 of 6 file(s)")
    assert "b.py changed since that turn; not reverted" in message
    assert [(ws / n).read_text() for n in ("a.py", "c.py")] == ["a = 1   \n", "c = 1   \n"]
    assert (ws / "gone.txt").read_text() == "removed by the agent\n"
    assert (ws / "crlf.txt").read_bytes() == b"one\r\ntwo\r\n", "the bytes, not git's idea"
    assert not (ws / "new.py").exists()
    assert (ws / "b.py").read_text() == "b = 'the user changed it since'\n"


async def test_an_open_buffer_follows_a_revert_in_one_undo_step(editor: Editor) -> None:
    app = editor.workspace / "app.py"
    app.write_text(NUMBERED)
    await editor.start({"turns": [[replace_in_file(app, "x20 = 20\n", "x20 = 'agent'\n")]]})
    buffers = EditorBuffers(editor.client, "utf-16")
    buffers.open(app.as_uri(), NUMBERED, "python")
    chat, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "change it"))
    await editor.goose.wait_for(lambda: buffers.texts[app.as_uri()] != NUMBERED)
    before = len(buffers.edits)

    await _command(editor, "goose.revertTurn", chat)
    await editor.shown("reverted 1 of 1 file(s)")
    assert app.read_text() == NUMBERED
    await editor.goose.wait_for(lambda: buffers.texts[app.as_uri()] == NUMBERED)
    assert len(buffers.edits) == before + 1


async def test_checkpoints_survive_a_restart_and_go_with_their_chat(tmp_path: Path) -> None:
    first = await start_editor(tmp_path)
    app = first.workspace / "app.py"
    app.write_text("a = 1\n")
    script = {"turns": [[replace_in_file(app, "a = 1", "a = 2")]]}
    try:
        await first.start(script)
        _, session_id = await _chat(first)
        await first.goose.turn_end(await first.prompt(session_id, "change it"))
    finally:
        await stop_editor(first)
    assert app.read_text() == "a = 2\n"

    again = await start_editor(tmp_path)
    try:
        await again.start(script)
        chat, _ = await _chat(again)  # the workspace's last chat, resumed
        EditorBuffers(again.client, "utf-8").open(chat)
        offered = await again.code_actions(chat, 0)
        assert {"Goose: Review turn changes", "Goose: Revert turn"} <= set(offered)
        await _command(again, "goose.reviewTurn")
        review = await again.goose.wait_for(
            lambda: [d for d in again.client.shown_documents if ".review-" in d.uri]
        )
        text = Path(review[0].uri.removeprefix("file://")).read_text()
        assert "-a = 1\n+a = 2\n" in text
        await _command(again, "goose.revertTurn")
        await again.shown("reverted 1 of 1 file(s)")
        assert app.read_text() == "a = 1\n"

        refs = list((tmp_path / "data" / "checkpoints").glob("*.git/refs/goose-ls/*"))
        assert refs, "the turn's checkpoint is kept under its chat"
        await _command(again, "goose.deleteSession", session_id)
        await again.goose.wait_for(lambda: not any(r.exists() for r in refs), what="refs gone")
    finally:
        await stop_editor(again)


async def test_the_repositorys_git_configuration_never_runs(editor: Editor) -> None:
    ws = editor.workspace
    marker = editor.tmp / "ran"
    git = ws / ".git"
    (git / "hooks").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "config").write_text(
        "[core]\n"
        f"\tfsmonitor = touch {marker}-fsmonitor\n"
        f"\thooksPath = {git / 'hooks'}\n"
        '[filter "evil"]\n'
        f"\tclean = touch {marker}-filter\n"
        f"\tsmudge = touch {marker}-filter\n"
    )
    hook = git / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {marker}-hook\n")
    hook.chmod(0o755)
    (ws / ".gitattributes").write_text("* filter=evil\n")
    (ws / "app.py").write_text("a = 1\n")
    await editor.start({"turns": [[replace_in_file(ws / "app.py", "a = 1", "a = 2")]]})
    chat, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "change it"))
    await _command(editor, "goose.reviewTurn", chat)
    await editor.goose.wait_for(
        lambda: [d for d in editor.client.shown_documents if ".review-" in d.uri]
    )
    assert not list(editor.tmp.glob("ran-*"))


async def test_each_tool_call_shows_what_really_changed_on_disk_under_it(editor: Editor) -> None:
    ws = editor.workspace
    (ws / "a.py").write_text("a = 1   \n")
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
    (ws / "notes.txt").write_text("nothing yet\n")
    call = {"toolCallId": "t1", "title": "Edit a.py", "kind": "edit", "status": "in_progress"}
    fmt = {"toolCallId": "t2", "title": "Run the formatter", "kind": "execute"}
    steps = [
        # The agent says it edits a.py; it also writes a key into notes.txt, unsaid.
        {"toolCall": call},
        replace_in_file(ws / "a.py", "a = 1", "a = 2"),
        _python("import sys; open(sys.argv[1], 'w').write(sys.argv[2])", ws / "notes.txt", key),
        {"toolUpdate": {"toolCallId": "t1", "status": "completed"}},
        # The model's answer, before the next tool: goose-ls has looked at the disk by then.
        _python(UNTIL_THERE, editor.tmp / "t1"),
        {"toolCall": fmt},
        _python(FORMAT, ws),
        {"toolUpdate": {"toolCallId": "t2", "status": "completed"}},
        _python(UNTIL_THERE, editor.tmp / "t2"),
        _python("import sys; open(sys.argv[1], 'w').write('late = 1\\n')", ws / "late.py"),
        {"text": "done"},
    ]
    await editor.start({"turns": [steps]})
    chat, session_id = await _chat(editor)
    mid = await editor.prompt(session_id, "edit and format")

    def told() -> list[dict[str, Any]]:
        return [
            u["update"]
            for u in editor.goose.updates
            if u["update"]["sessionUpdate"] == "disk_changes"
        ]

    async def told_of(tool_call_id: str) -> None:
        """Until what changed under the tool call is told; then the agent goes on."""
        try:
            await editor.goose.wait_for(
                lambda: [t for t in told() if t["toolCallId"] == tool_call_id],
                what=f"{tool_call_id}'s changes",
            )
        finally:
            (editor.tmp / tool_call_id).touch()

    await told_of("t1")
    await told_of("t2")
    await editor.goose.turn_end(mid, timeout=60)

    by_call = {t["toolCallId"]: {Path(f["path"]).name: f for f in t["files"]} for t in told()}
    assert set(by_call) == {"t1", "t2", None}
    assert set(by_call["t1"]) == {"a.py", "notes.txt"}
    assert by_call["t1"]["notes.txt"]["diff"] == "", "a secret's content is never shown"
    assert "-a = 1   \n+a = 2   \n" in by_call["t1"]["a.py"]["diff"]
    assert set(by_call["t2"]) == {"a.py"}, "the formatter's change is under the formatter"
    assert (by_call["t2"]["a.py"]["added"], by_call["t2"]["a.py"]["removed"]) == (1, 1)
    assert by_call[None]["late.py"]["state"] == "created"

    text = Path(chat.removeprefix("file://")).read_text()
    assert "> **💾 Changed on disk** by `Run the formatter`: `a.py` changed +1 -1\n" in text
    assert "> **💾 Changed on disk** during the turn: `late.py` created +1 -0\n" in text
    assert "b3BlbnNzaC1rZXktdjEAAAAA" not in text


async def test_an_open_file_swapped_for_a_fifo_or_a_link_is_not_followed(editor: Editor) -> None:
    ws = editor.workspace
    for name in ("pipe.py", "link.py"):
        (ws / name).write_text("x = 1\n")
    secret = editor.tmp / "outside.txt"
    secret.write_text("outside the workspace\n")
    swap = (
        "import os, sys; ws, out = sys.argv[1], sys.argv[2]; os.remove(ws + '/pipe.py'); "
        "os.mkfifo(ws + '/pipe.py'); os.remove(ws + '/link.py'); os.symlink(out, ws + '/link.py'); "
        "os.symlink('/', ws + '/root')"
    )
    await editor.start(
        {"turns": [[_python(swap, ws, secret), {"text": "swapped"}], [{"text": "still here"}]]}
    )
    buffers = EditorBuffers(editor.client, "utf-8")
    for name in ("pipe.py", "link.py"):
        buffers.open((ws / name).as_uri(), "x = 1\n", "python")
    chat, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "swap them"), timeout=60)
    second = await editor.prompt(session_id, "are you there")
    await editor.goose.turn_end(second, timeout=60)
    assert editor.goose.text(second) == "still here"
    assert buffers.texts[(ws / "pipe.py").as_uri()] == "x = 1\n", "a FIFO is no text to follow"
    assert buffers.texts[(ws / "link.py").as_uri()] == "x = 1\n", "nor is a link"
    await _command(editor, "goose.reviewTurn", chat)
    review = await editor.goose.wait_for(
        lambda: [d for d in editor.client.shown_documents if ".review-" in d.uri]
    )
    text = Path(review[0].uri.removeprefix("file://")).read_text()
    assert "outside the workspace" not in text, "a link is shown as a link, never followed"


async def test_checkpoints_of_chats_pruned_elsewhere_are_swept_when_a_day_old(
    editor: Editor,
) -> None:
    (editor.workspace / "app.py").write_text("a = 1\n")
    repo = ShadowRepo(editor.workspace.resolve(), editor.tmp / "data" / "checkpoints")
    tree = repo.snapshot()
    now = time.time_ns()
    old, recent = key("pruned-elsewhere"), key("pruned-just-now")
    repo.keep(f"{old}/{now - 2 * 86_400 * 10**9:020d}-{key('m1')}/before", tree)
    repo.keep(f"{recent}/{now:020d}-{key('m2')}/before", tree)
    await editor.start({"turns": [[{"text": "ok"}]]})
    await editor.goose.wait_for(lambda: not repo.kept(f"{old}/"), what="the old chat's swept")
    assert repo.kept(f"{recent}/"), "a recent turn is kept whatever the journal says"


async def test_keeping_my_version_is_not_asked_again_while_the_agent_works_on(
    editor: Editor,
) -> None:
    ws = editor.workspace
    app = ws / "app.py"
    app.write_text(NUMBERED)
    kept = editor.tmp / "kept"
    steps = [
        replace_in_file(app, "x10 = 10\n", "x10 = 'agent'\n"),
        _python(UNTIL_THERE, kept),  # the user keeps theirs meanwhile
        _python("import sys; open(sys.argv[1], 'w').write('more\\n')", ws / "other.txt"),
        {"sleep": 1},
        {"text": "done"},
    ]
    await editor.start({"turns": [steps]})
    buffers = EditorBuffers(editor.client, "utf-8")
    buffers.open(app.as_uri(), NUMBERED, "python")
    mine = NUMBERED.replace("x2 = 2\n", "x2 = 'mine'\n")
    buffers.replace_all(app.as_uri(), mine)
    _, session_id = await _chat(editor)
    mid = await editor.prompt(session_id, "change x10")

    def conflicts() -> list[str]:
        return [n for n in _notes(editor) if "unsaved changes" in n]

    await editor.goose.wait_for(conflicts, what="the conflict note")
    actions = await editor.code_actions(app.as_uri(), 0)
    await editor.run(actions["Goose: Keep my version"])
    kept.touch()
    await editor.goose.turn_end(mid, timeout=60)
    assert len(conflicts()) == 1
    assert buffers.texts[app.as_uri()] == mine
    buffers.save(app.as_uri())
    assert app.read_text() == mine


async def test_a_root_over_the_file_limit_gets_no_checkpoint_and_the_user_is_told_once(
    editor: Editor,
) -> None:
    ws = editor.workspace
    for n in range(5):
        (ws / f"f{n}.py").write_text(f"f = {n}\n")
    steps = [replace_in_file(ws / "f1.py", "f = 1", "f = 'one'")]
    await editor.start({"turns": [steps]}, settings={"checkpoints": {"maxFiles": 3}})
    chat, session_id = await _chat(editor)
    for text in ("first", "second"):
        await editor.goose.turn_end(await editor.prompt(session_id, text))
    told = await editor.shown("holds more than 3 files (checkpoints.maxFiles)")
    assert len([m for m in editor.client.messages if m.message == told]) == 1
    await _command(editor, "goose.reviewTurn", chat)
    await editor.shown("no turn of this chat changed a file")


# --- editors that reload a file themselves, refuse or answer late ------------------------


async def test_vs_code_reloads_a_clean_buffer_itself_and_goose_ls_sends_it_no_edit(
    editor: Editor,
) -> None:
    """VS Code reloads a clean buffer whose file changed on disk (undo kept): an edit of
    goose-ls's would race that reload, so goose-ls waits for it, and follows the buffer
    from the reloaded text on; the user's next change is theirs, not a conflict."""
    app, other = editor.workspace / "app.py", editor.workspace / "other.py"
    app.write_text(NUMBERED)
    other.write_text("y = 1\n")
    steps = [
        replace_in_file(app, "x10 = 10\n", "x10 = 'ten'\n"),
        replace_in_file(other, "y = 1", "y = 2"),
        {"waitForCancel": True},
    ]
    await editor.start({"turns": [steps]}, editor="visual_studio_code", name="code-server")
    buffers = EditorBuffers(editor.client, "utf-16")
    buffers.open(app.as_uri(), NUMBERED, "python")  # compared first, at each change on disk
    buffers.open(other.as_uri(), "y = 1\n", "python")
    buffers.replace_all(other.as_uri(), "y = 'mine'\n")  # a conflict: a sign app.py was seen

    def conflicts(name: str) -> list[str]:
        return [n for n in _notes(editor) if n.startswith(f"{name} changed") and "kept" in n]

    _, session_id = await _chat(editor)
    await editor.prompt(session_id, "change x10")
    await editor.goose.wait_for(lambda: conflicts("other.py"), what="the agent's writes seen")
    agent = NUMBERED.replace("x10 = 10\n", "x10 = 'ten'\n")
    buffers.replace_all(app.as_uri(), agent)  # VS Code's own reload
    await editor.goose.wait_for(
        lambda: [n for n in _notes(editor) if "app.py changed on disk; the editor reloaded" in n],
        what="the note that the editor reloaded it",
    )
    buffers.replace_all(app.as_uri(), agent + "x30 = 30\n")  # the user types on
    other.write_text("y = 3\n")  # a change on disk: app.py is compared again, first
    await editor.goose.wait_for(lambda: len(conflicts("other.py")) == 2)
    assert not [uri for uri, _ in buffers.edits if uri == app.as_uri()], "no edit to race it"
    assert not conflicts("app.py"), "the user's change is theirs"
    await editor.goose.request("goose/cancel", {"sessionId": session_id})


async def test_vs_code_gets_the_edit_when_it_did_not_reload_by_the_watchs_end(
    editor: Editor,
) -> None:
    """A file VS Code does not watch (excluded, say) is not reloaded: when the watch
    ends, goose-ls brings the buffer along itself."""
    app = editor.workspace / "app.py"
    app.write_text(NUMBERED)
    await editor.start(
        {"turns": [[replace_in_file(app, "x10 = 10\n", "x10 = 'ten'\n"), {"text": "done"}]]},
        settings={"workspace": {"watchAfterTurn": 0.2}},  # the watch's end comes sooner
        editor="visual_studio_code",
        name="Visual Studio Code",
    )
    buffers = EditorBuffers(editor.client, "utf-16")
    buffers.open(app.as_uri(), NUMBERED, "python")
    _, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "change x10"))
    agent = NUMBERED.replace("x10 = 10\n", "x10 = 'ten'\n")
    await editor.goose.wait_for(lambda: buffers.texts[app.as_uri()] == agent, what="the edit")
    assert len([uri for uri, _ in buffers.edits if uri == app.as_uri()]) == 1
    await editor.goose.wait_for(lambda: app.as_uri() in editor.goose.disk_synced)


async def test_an_edit_refused_because_the_editor_reloaded_first_is_no_conflict(
    editor: Editor,
) -> None:
    """The editor reloads the file just as goose-ls's edit comes (VS Code's watcher won
    the race; Emacs asked "Reread from disk?" and was told yes): the edit is refused for
    its version, the buffer holds the disk's text, and nothing is left to settle."""
    app = editor.workspace / "app.py"
    app.write_text(NUMBERED)
    await editor.start(
        {"turns": [[replace_in_file(app, "x10 = 10\n", "x10 = 'ten'\n"), {"text": "done"}]]},
        editor="emacs",
    )
    buffers = EditorBuffers(editor.client, "utf-32", apply_edits=False)

    def reload_first(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        for change in params.edit.document_changes or []:
            assert isinstance(change, types.TextDocumentEdit)
            uri = change.text_document.uri
            buffers.replace_all(uri, app.read_text())
            assert change.text_document.version != buffers.versions[uri]
        assert params.edit.document_changes, "versioned"
        return types.ApplyWorkspaceEditResult(applied=False)

    editor.client.feature(types.WORKSPACE_APPLY_EDIT)(reload_first)

    buffers.open(app.as_uri(), NUMBERED, "python")
    _, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "change x10"))
    agent = NUMBERED.replace("x10 = 10\n", "x10 = 'ten'\n")
    await editor.goose.wait_for(lambda: any("app.py changed on disk" in n for n in _notes(editor)))
    assert buffers.texts[app.as_uri()] == agent
    assert not [n for n in _notes(editor) if "Both are kept" in n], "no conflict"
    assert "Goose: Take the agent's version" not in await editor.code_actions(app.as_uri(), 0)


@pytest.mark.parametrize("name", ["Eglot", None], ids=["eglot", "eglot-1.9"])
async def test_eglot_alone_gets_no_edit_and_the_chat_says_to_revert_the_buffer(
    editor: Editor, name: str | None
) -> None:
    """eglot without goose-ls.el asks "File app.py changed on disk.  Reread from disk?"
    before an edit to a buffer whose file changed, and after a yes eglot 1.9 applies the
    edit to the reread text (it numbers it as the edit's version): a line the agent added
    comes twice. So goose-ls sends no edit there; the chat says how to reread it."""
    app = editor.workspace / "app.py"
    app.write_text(NUMBERED)
    added = NUMBERED.replace("x10 = 10\n", "x10 = 10\nx10b = 'added'\n")
    await editor.start(
        {"turns": [[replace_in_file(app, "x10 = 10\n", "x10 = 10\nx10b = 'added'\n")]]},
        settings={"gooseUpdates": False},  # no plugin: eglot alone
        editor="emacs",
        name=name,  # eglot 1.9 gives none
    )
    buffers = EditorBuffers(editor.client, "utf-32")
    buffers.open(app.as_uri(), NUMBERED, "python")
    chat, session_id = await _chat(editor)
    await editor.prompt(session_id, "add a line")
    transcript = Path(chat.removeprefix("file://"))
    await editor.goose.wait_for(
        lambda: "C-x x g" in transcript.read_text(), what="the note", timeout=60
    )
    assert "app.py changed on disk; your buffer of it shows the old text still" in (
        transcript.read_text()
    )
    assert not [uri for uri, _ in buffers.edits if uri == app.as_uri()], "no edit"
    buffers.open(app.as_uri(), added, "python")  # C-x x g: eglot opens it again
    await editor.goose.wait_for(lambda: "the editor reloaded it" in transcript.read_text())
    assert "Both are kept" not in transcript.read_text()


async def test_a_late_answer_to_the_edit_is_no_error_of_the_server(editor: Editor) -> None:
    """The editor asks its user before it applies the edit ("changed on disk; really
    edit?") and the user says no, after a while: the chat says the editor did not take the
    new text, why, and the late answer is not shown as a server error."""
    app = editor.workspace / "app.py"
    app.write_text(NUMBERED)
    await editor.start(
        {"turns": [[replace_in_file(app, "x10 = 10\n", "x10 = 'ten'\n"), {"text": "done"}]]}
    )
    buffers = EditorBuffers(editor.client, "utf-8", apply_edits=False)
    asked, answered, replied = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def slow(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        asked.set()
        await answered.wait()
        replied.set()
        return types.ApplyWorkspaceEditResult(applied=False, failure_reason="the user said no")

    editor.client.feature(types.WORKSPACE_APPLY_EDIT)(slow)

    buffers.open(app.as_uri(), NUMBERED, "python")
    _, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "change x10"))
    await asked.wait()
    assert not [n for n in _notes(editor) if "Both are kept" in n], "no answer yet, no verdict"
    answered.set()
    await replied.wait()
    (note,) = await editor.goose.wait_for(
        lambda: [n for n in _notes(editor) if "Both are kept" in n], timeout=60
    )
    assert "the editor did not take the new text into your buffer (the user said no)" in note
    await editor.goose.request("goose/status", {})  # the late answer goes out meanwhile,
    await editor.goose.request("goose/status", {})  # and this comes after it
    assert not [m.message for m in editor.client.messages if "Error" in m.message]


async def test_an_editor_held_by_its_user_longer_than_a_while_still_follows_the_disk(
    editor: Editor,
) -> None:
    """Neovim sits in `:!make` or at a "Press ENTER" prompt when the agent writes an open
    file, and applies goose-ls's edit only when its user comes back, 12 s later: the
    buffer holds the agent's text and is marked saved, and the chat tells no conflict
    (goose-ls once gave up after 10 s and said "yours in the buffer", which was false)."""
    app = editor.workspace / "app.py"
    app.write_text(NUMBERED)
    await editor.start(
        {"turns": [[replace_in_file(app, "x10 = 10\n", "x10 = 'ten'\n"), {"text": "done"}]]}
    )
    buffers = EditorBuffers(editor.client, "utf-8", apply_edits=False)

    async def held(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        await asyncio.sleep(12)
        return buffers.apply(params)

    editor.client.feature(types.WORKSPACE_APPLY_EDIT)(held)

    buffers.open(app.as_uri(), NUMBERED, "python")
    _, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "change x10"))
    agent = NUMBERED.replace("x10 = 10\n", "x10 = 'ten'\n")
    await editor.goose.wait_for(lambda: app.as_uri() in editor.goose.disk_synced, timeout=60)
    assert buffers.texts[app.as_uri()] == agent
    assert any("your buffer shows the new text" in n for n in _notes(editor))
    assert not [n for n in _notes(editor) if "Both are kept" in n], "no conflict"


async def test_a_conflict_the_buffer_came_out_of_offers_nothing_to_settle(
    editor: Editor,
) -> None:
    """Saving keeps the user's version (as the note says); typing the agent's text in
    leaves nothing to choose either."""
    app, lib = editor.workspace / "app.py", editor.workspace / "lib.py"
    for path in (app, lib):
        path.write_text(NUMBERED)
    steps = [
        replace_in_file(app, "x10 = 10\n", "x10 = 'agent'\n"),
        replace_in_file(lib, "x10 = 10\n", "x10 = 'agent'\n"),
        {"text": "done"},
    ]
    await editor.start({"turns": [steps]})
    buffers = EditorBuffers(editor.client, "utf-8")
    mine = NUMBERED.replace("x2 = 2\n", "x2 = 'mine'\n")
    for path in (app, lib):
        buffers.open(path.as_uri(), NUMBERED, "python")
        buffers.replace_all(path.as_uri(), mine)
    _, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "change x10"))
    await editor.goose.wait_for(lambda: len([n for n in _notes(editor) if "unsaved" in n]) == 2)
    take = "Goose: Take the agent's version"
    assert take in await editor.code_actions(app.as_uri(), 0)
    assert take in await editor.code_actions(lib.as_uri(), 0)

    buffers.save(app.as_uri())
    buffers.replace_all(lib.as_uri(), NUMBERED.replace("x10 = 10\n", "x10 = 'agent'\n"))
    assert take not in await editor.code_actions(app.as_uri(), 0)
    assert take not in await editor.code_actions(lib.as_uri(), 0)


async def test_files_a_checkpoint_holds_already_count_toward_the_file_limit(
    editor: Editor,
) -> None:
    """Over the limit at the turn's end: 3 files in the last snapshot, 2 new ones."""
    ws = editor.workspace
    for n in range(3):
        (ws / f"f{n}.py").write_text(f"f = {n}\n")
    create = "import sys; [open(p, 'w').write('new = 1\\n') for p in sys.argv[1:]]"
    steps = [_python(create, ws / "new1.py", ws / "new2.py")]
    await editor.start({"turns": [steps]}, settings={"checkpoints": {"maxFiles": 4}})
    _, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "add two files"))
    await editor.shown("holds more than 4 files (checkpoints.maxFiles)")


AUTHOR = ["-c", "user.name=me", "-c", "user.email=me@localhost"]


def _nested_repository(folder: Path) -> None:
    folder.mkdir()
    (folder / "lib.py").write_text("v = 1\n")
    for args in (["init", "-q"], ["add", "lib.py"], [*AUTHOR, "commit", "-qm", "one"]):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


async def test_a_turn_that_commits_in_a_nested_repository_is_reviewed(editor: Editor) -> None:
    """A nested repository is left out of the checkpoints (git would look into it with a
    git of its own): the turn's end and the review show the other files' diffs."""
    ws = editor.workspace
    nested = ws / "vendored"
    _nested_repository(nested)
    (ws / "app.py").write_text("a = 1\n")
    git = shlex.join(["git", *AUTHOR, "commit", "-qam", "two"])
    commit = f"cd {shlex.quote(str(nested))} && echo 'v = 2' > lib.py && {git}"
    steps = [replace_in_file(ws / "app.py", "a = 1", "a = 2"), {"shell": commit}]
    # Without the sandbox, which keeps a nested repository's .git from the agent.
    await editor.start({"turns": [steps]}, {"agent": {"sandbox": "off"}})
    chat, session_id = await _chat(editor)
    await editor.goose.turn_end(await editor.prompt(session_id, "change and commit"))
    (told,) = [
        u["update"] for u in editor.goose.updates if u["update"]["sessionUpdate"] == "disk_changes"
    ]
    assert {Path(f["path"]).name: f["diff"] for f in told["files"]} == {
        "app.py": "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n",
    }

    await _command(editor, "goose.reviewTurn", chat)
    review = await editor.goose.wait_for(
        lambda: [d for d in editor.client.shown_documents if ".review-" in d.uri]
    )
    text = Path(review[0].uri.removeprefix("file://")).read_text()
    assert "-a = 1\n+a = 2\n" in text
    assert "vendored" not in text
