"""The agent reads, writes and runs through goose-ls, and only inside the workspace."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from support.buffers import EditorBuffers
from support.harness import Editor, SharedEditor, gone, shared_agent, shared_with

pytestmark = shared_agent(__name__)


async def _turn(editor: Editor, steps: list[dict[str, Any]], **settings: Any) -> str:
    await editor.start({"turns": [steps]}, settings=settings or None)
    sid = await editor.new_session()
    mid = await editor.prompt(sid, "go")
    await editor.goose.turn_end(mid)
    return editor.goose.text(mid)


RUN = {"rules": [{"action": "allow", "kind": "execute"}]}
"""Terminals run only when allowed: these tests allow every command."""
UNSANDBOXED = {"sandbox": "off"}
"""For tests that look at the command's pids and files outside the workspace."""


def _said(text: str, kind: str) -> list[Any]:
    return [json.loads(m) for m in re.findall(rf"\[{kind} (.*?)\](?=\[|$)", text)]


@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_the_agent_is_offered_fs_and_terminal_unless_turned_off(editor: Editor) -> None:
    await editor.start({}, settings={"agent": {"clientTerminal": False}})
    await editor.new_session()
    (init,) = editor.received("initialize")
    caps = init["params"]["clientCapabilities"]
    assert caps["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert caps.get("terminal", False) is False, "omitted means not offered"


async def test_a_read_returns_the_unsaved_buffer_not_the_disk(shared: SharedEditor) -> None:
    source = shared.workspace / "a.py"
    source.write_text("on disk\n")
    await shared.start(
        {
            "turns": [
                [
                    {"readFile": {"path": str(source)}},
                    {"readFile": {"path": str(shared.workspace / "b.txt"), "line": 2, "limit": 2}},
                ]
            ]
        }
    )
    (shared.workspace / "b.txt").write_text("1\n2\n3\n4\n")
    buffers = EditorBuffers(shared.client, "utf-8")
    buffers.open(source.as_uri(), "unsaved text\n", "python")
    sid = await shared.new_session()
    mid = await shared.prompt(sid, "go")
    await shared.goose.turn_end(mid)
    assert _said(shared.goose.text(mid), "read") == ["unsaved text\n", "2\n3\n"]


async def test_a_write_to_an_open_file_is_an_edit_and_to_a_closed_file_goes_to_disk(
    shared: SharedEditor,
) -> None:
    open_file = shared.workspace / "open.py"
    open_file.write_text("old\n")
    closed = shared.workspace / "sub" / "new.txt"
    closed.parent.mkdir()
    content = "line one\r\nline two ✓\n"
    await shared.start(
        {
            "turns": [
                [
                    {"writeFile": {"path": str(open_file), "content": content}},
                    {"writeFile": {"path": str(closed), "content": content}},
                ]
            ]
        }
    )
    buffers = EditorBuffers(shared.client, "utf-8")
    buffers.open(open_file.as_uri(), "old\n", "python")
    sid = await shared.new_session()
    mid = await shared.prompt(sid, "go")
    await shared.goose.turn_end(mid)
    assert shared.goose.text(mid) == "[written][written]"
    assert buffers.texts[open_file.as_uri()] == content, "byte for byte, CRLF kept"
    assert open_file.read_text() == "old\n", "the open file's disk copy is the editor's to save"
    assert closed.read_bytes() == content.encode()


async def test_missing_files_directories_and_binaries_are_clear_errors(
    shared: SharedEditor,
) -> None:
    (shared.workspace / "blob.bin").write_bytes(b"\x00\x01\x02")
    ws = shared.workspace
    text = await _turn(
        shared,
        [
            {"readFile": {"path": str(ws / "missing.py")}},
            {"readFile": {"path": str(ws)}},
            {"readFile": {"path": str(ws / "blob.bin")}},
        ],
    )
    assert "[read error -32002:" in text and "does not exist" in text
    assert "is a directory" in text and "is a binary file" in text


# Which paths confinement refuses (``..``, absolute, a sibling sharing the prefix, every
# kind of secret) is tests/unit/test_confinement.py; here, that a refused path is refused
# to reads and writes alike, out of the workspace and inside it.
@pytest.mark.parametrize("target", ["link/secret.txt", ".env"])
async def test_paths_outside_the_workspace_and_secrets_are_refused(
    shared: SharedEditor, target: str
) -> None:
    outside = shared.tmp / "outside.txt"
    outside.write_text("private")
    (shared.tmp / "workspace-old").mkdir(exist_ok=True)
    (shared.tmp / "workspace-old" / "x.txt").write_text("sibling")
    (shared.workspace / "link").symlink_to(shared.tmp)
    (shared.workspace / ".env").write_text("TOKEN=1")
    path = target if target.startswith("/") else os.path.join(str(shared.workspace), target)
    text = await _turn(
        shared, [{"readFile": {"path": path}}, {"writeFile": {"path": path, "content": "x"}}]
    )
    assert text.count("permission denied") == 2, text
    assert outside.read_text() == "private"
    notes = [n["text"] for n in shared.goose.of_kind("note")]
    assert any("Refused to let the agent read" in n for n in notes)


@shared_with({"policy": RUN})
async def test_a_terminal_runs_a_shell_line_and_reports_its_exit(shared: SharedEditor) -> None:
    text = await _turn(
        shared, [{"terminal": {"command": "printf 'hello %s' \"$PWD\"; exit 3"}}], policy=RUN
    )
    (result,) = _said(text, "terminal")
    assert result["exitCode"] == 3 and result["signal"] is None
    assert result["output"] == f"hello {shared.workspace}"


@shared_with({"policy": RUN, "terminal": UNSANDBOXED})
async def test_a_long_command_is_killed_with_its_process_group(shared: SharedEditor) -> None:
    marker = shared.tmp / "child.pid"
    text = await _turn(
        shared,
        [{"terminal": {"command": f"sleep 300 & echo $! > {marker}; wait", "killAfter": 0.5}}],
        policy=RUN,
        terminal=UNSANDBOXED,
    )
    (result,) = _said(text, "terminal")
    assert result["signal"] == "SIGKILL"
    assert await gone(int(marker.read_text())), "the whole process group is killed"


@shared_with({"policy": RUN})
async def test_output_over_the_limit_is_cut_from_the_start_at_a_character(
    shared: SharedEditor,
) -> None:
    text = await _turn(
        shared,
        [{"terminal": {"command": "printf 'ééééé'; printf 'end'", "outputByteLimit": 6}}],
        policy=RUN,
    )
    (result,) = _said(text, "terminal")
    assert result["truncated"] is True
    assert result["output"] == "éend"


async def test_a_terminal_outside_the_workspace_is_refused(shared: SharedEditor) -> None:
    text = await _turn(shared, [{"terminal": {"command": "true", "cwd": "/"}}])
    assert "[terminal error -32003: permission denied" in text


@shared_with({"policy": RUN, "terminal": UNSANDBOXED})
async def test_no_terminal_outlives_its_session(shared: SharedEditor) -> None:
    marker = shared.tmp / "bg.pid"
    await shared.start(
        {
            "turns": [
                [
                    {
                        "terminal": {
                            "command": f"sleep 300 & echo $! > {marker}; sleep 300",
                            "killAfter": 30,
                            "release": False,
                        }
                    }
                ]
            ]
        },
        settings={"policy": RUN, "terminal": UNSANDBOXED},
    )
    sid = await shared.new_session()
    await shared.prompt(sid, "go")
    await shared.goose.wait_for(
        lambda: marker.exists() and marker.read_text().strip(), what="the command"
    )
    child = int(marker.read_text())
    await shared.goose.request("goose/closeSession", {"sessionId": sid})
    assert await gone(child), "closing the session releases its terminals"


def _shell_call(call_id: str, command: str) -> list[dict[str, Any]]:
    """goose's shape: a tool_call with rawInput, then a permission request titled shell."""
    return [
        {
            "toolCall": {
                "toolCallId": call_id,
                "title": f"shell · {command}",
                "rawInput": {"command": command},
            }
        },
        {"permission": {"toolCallId": call_id, "title": "shell", "rawInput": {"command": command}}},
    ]


def _audit(editor: Editor) -> list[dict[str, Any]]:
    path = editor.tmp / "data" / "audit.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_the_policy_allows_denies_and_asks(editor: Editor) -> None:
    project = editor.workspace / ".goose-ls"
    project.mkdir()
    (project / "policy.json").write_text(
        json.dumps({"rules": [{"action": "deny", "kind": "execute", "command": "rm -rf"}]})
    )
    steps = [
        *_shell_call("a", "cargo test"),
        *_shell_call("b", "rm -rf /"),
        *_shell_call("c", "make"),
    ]
    await editor.start(
        {"turns": [steps]},
        settings={
            "policy": {"rules": [{"action": "allow", "kind": "execute", "command": "cargo "}]}
        },
    )
    sid = await editor.new_session()
    mid = await editor.prompt(sid, "go")
    (asked,) = await editor.goose.wait_for(lambda: editor.goose.of_kind("permission_request"))
    assert asked["toolCall"]["rawInput"] == {"command": "make"}, "only the undecided call is asked"
    await editor.goose.request(
        "goose/permission", {"requestId": asked["requestId"], "optionId": "reject_once"}
    )
    await editor.goose.turn_end(mid)
    assert (
        editor.goose.text(mid)
        == "[permission: allow_once][permission: reject_once][permission: reject_once]"
    )
    log = _audit(editor)
    assert [(e["target"], e["outcome"], e["by"].split(" ")[0]) for e in log] == [
        ("cargo test", "allow_once", "policy"),
        ("rm -rf /", "reject_once", "policy"),
        ("make", "reject_once", "user"),
    ]
    assert all(e["session"] == sid and e["tool"] == "shell" and e["time"] for e in log)


async def test_allow_for_this_session_is_not_asked_again(shared: SharedEditor) -> None:
    await shared.start({"turns": [[*_shell_call("a", "ls"), *_shell_call("b", "ls")]]})
    sid = await shared.new_session()
    mid = await shared.prompt(sid, "go")
    (asked,) = await shared.goose.wait_for(lambda: shared.goose.of_kind("permission_request"))
    await shared.goose.request(
        "goose/permission", {"requestId": asked["requestId"], "optionId": "goose-ls:allow_session"}
    )
    await shared.goose.turn_end(mid)
    assert shared.goose.text(mid) == "[permission: allow_once][permission: allow_once]"
    assert len(shared.goose.of_kind("permission_request")) == 1
    assert [e["by"] for e in _audit(shared)] == ["user", "allowed for this session"]


async def test_a_denied_path_is_in_the_audit_log(shared: SharedEditor) -> None:
    await _turn(shared, [{"readFile": {"path": "/etc/hostname"}}])
    (entry,) = _audit(shared)
    assert entry["target"] == "/etc/hostname" and entry["outcome"] == "denied"
    assert entry["by"] == "confinement"


async def test_review_shows_the_turn_and_revert_restores_it(shared: SharedEditor) -> None:
    opened = shared.workspace / "open.py"
    opened.write_text("a = 1\n")
    closed = shared.workspace / "closed.py"
    closed.write_text("b = 1\n")
    touched = shared.workspace / "touched.py"
    touched.write_text("c = 1\n")
    await shared.start(
        {
            "turns": [
                [
                    {"writeFile": {"path": str(opened), "content": "a = 2\n"}},
                    {"writeFile": {"path": str(closed), "content": "b = 2\n"}},
                    {"writeFile": {"path": str(touched), "content": "c = 2\n"}},
                ]
            ]
        }
    )
    buffers = EditorBuffers(shared.client, "utf-16")
    buffers.open(opened.as_uri(), "a = 1\n", "python")
    await shared.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openChat", arguments=[])
    )
    (chat,) = await shared.goose.wait_for(lambda: shared.client.shown_documents)
    (session,) = (await shared.goose.request("goose/status", {}))["sessions"]
    mid = await shared.prompt(session["sessionId"], "change them")
    await shared.goose.turn_end(mid)
    touched.write_text("c = 3  # the user's own change\n")

    await shared.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.reviewTurn", arguments=[chat.uri])
    )
    review = await shared.goose.wait_for(lambda: shared.client.shown_documents[1:])
    text = Path(review[0].uri.removeprefix("file://")).read_text()
    assert "-a = 1\n+a = 2" in text and "-b = 1\n+b = 2" in text
    assert "--- a/open.py\n+++ b/open.py\n" in text, "named from the workspace"
    assert (chat.take_focus, review[0].take_focus) == (False, True), "a chat beside, no split more"

    await shared.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.revertTurn", arguments=[chat.uri])
    )
    message = await shared.shown("reverted 2 of 3 file(s)")
    assert "touched.py changed since that turn" in message
    await shared.goose.wait_for(lambda: buffers.texts[opened.as_uri()] == "a = 1\n")
    assert closed.read_text() == "b = 1\n"
    assert touched.read_text() == "c = 3  # the user's own change\n"


async def test_a_file_whose_old_content_was_not_kept_is_never_reverted_away(
    shared: SharedEditor,
) -> None:
    image = shared.workspace / "logo.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n\0\0 a picture")
    await shared.start({"turns": [[{"writeFile": {"path": str(image), "content": "text now\n"}}]]})
    await shared.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openChat", arguments=[])
    )
    (chat,) = await shared.goose.wait_for(lambda: shared.client.shown_documents)
    (session,) = (await shared.goose.request("goose/status", {}))["sessions"]
    await shared.goose.turn_end(await shared.prompt(session["sessionId"], "overwrite it"))
    await shared.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.reviewTurn", arguments=[chat.uri])
    )
    review = await shared.goose.wait_for(lambda: shared.client.shown_documents[1:])
    text = Path(review[0].uri.removeprefix("file://")).read_text()
    assert "(replaced; its earlier content was not text goose-ls could keep)" in text
    assert "/dev/null" not in text, "not shown as created"
    await shared.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.revertTurn", arguments=[chat.uri])
    )
    message = await shared.shown("reverted 0 of 1 file(s)")
    assert "logo.png was not text goose-ls could keep before that turn" in message
    assert image.read_text() == "text now\n", "not deleted as if the turn had created it"


@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_outside_paths_can_be_asked_about_instead_of_refused(editor: Editor) -> None:
    outside = editor.tmp / "notes.txt"
    outside.write_text("shared notes\n")
    await editor.start(
        {"turns": [[{"readFile": {"path": str(outside)}}, {"readFile": {"path": str(outside)}}]]},
        settings={"workspace": {"outside": "ask"}},
    )
    sid = await editor.new_session()
    mid = await editor.prompt(sid, "go")
    (asked,) = await editor.goose.wait_for(lambda: editor.goose.of_kind("permission_request"))
    assert asked["toolCall"]["locations"] == [{"path": str(outside)}]
    await editor.goose.request(
        "goose/permission", {"requestId": asked["requestId"], "optionId": "allow_once"}
    )
    second = await editor.goose.wait_for(lambda: editor.goose.of_kind("permission_request")[1:])
    await editor.goose.request(
        "goose/permission", {"requestId": second[0]["requestId"], "optionId": "reject_once"}
    )
    await editor.goose.turn_end(mid)
    text = editor.goose.text(mid)
    assert text.startswith('[read "shared notes\\n"]') and "permission denied" in text


@shared_with({"policy": RUN})
async def test_a_terminal_s_output_shows_in_the_transcript_tool_block(shared: SharedEditor) -> None:
    await shared.start(
        {
            "turns": [
                [
                    {
                        "toolCall": {
                            "toolCallId": "sh",
                            "title": "shell · echo",
                            "rawInput": {"command": "echo"},
                        }
                    },
                    {"terminal": {"command": "echo from-the-terminal", "toolCallId": "sh"}},
                ]
            ]
        },
        settings={"policy": RUN},
    )
    sid = await shared.new_session()
    mid = await shared.prompt(sid, "go")
    await shared.goose.turn_end(mid)
    status = await shared.goose.request("goose/status", {})
    transcript = Path(status["sessions"][0]["transcript"].removeprefix("file://"))
    await shared.goose.wait_for(lambda: "✓ completed" in transcript.read_text(encoding="utf-8"))
    text = transcript.read_text(encoding="utf-8")
    assert "**🔧 shell · echo** · execute — ✓ completed" in text
    assert "```\nfrom-the-terminal\n```" in text, "released, its output is still shown"
