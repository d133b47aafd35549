"""A hostile agent against goose-ls's file access: odd files, big files, hard links,
no workspace, refused edits and malformed paths (issue 13, points 9-16)."""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from support.buffers import EditorBuffers
from support.harness import Editor, SharedEditor, shared_agent, start_editor, stop_editor

pytestmark = shared_agent(__name__)

TURN_TIMEOUT = 20.0
"""A frozen goose-ls must fail the test, not hang it."""


async def _turn(editor: Editor, steps: list[dict[str, Any]], **settings: Any) -> str:
    await editor.start({"turns": [[*steps, {"text": "[alive]"}]]}, settings=settings or None)
    return await _run(editor)


async def _run(editor: Editor) -> str:
    sid = await editor.new_session()
    mid = await editor.prompt(sid, "go")
    await editor.goose.turn_end(mid, timeout=TURN_TIMEOUT)
    return editor.goose.text(mid)


def _errors(text: str) -> list[str]:
    return re.findall(r"\[(?:read|write|terminal) error (-?\d+: [^\]]*)\]", text)


async def test_a_fifo_in_the_workspace_is_refused_without_freezing(shared: Editor) -> None:
    fifo = shared.workspace / "pipe.txt"
    os.mkfifo(fifo)
    text = await _turn(
        shared,
        [
            {"readFile": {"path": str(fifo)}},
            {"readFile": {"path": str(fifo), "line": 1, "limit": 1}},
            {"writeFile": {"path": str(fifo), "content": "x"}},
        ],
    )
    errors = _errors(text)
    assert len(errors) == 3 and all("not a regular file" in e for e in errors), text
    assert text.endswith("[alive]")
    assert fifo.is_fifo(), "the FIFO is left alone"


@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_a_fifo_named_policy_json_does_not_freeze_the_permission_check(
    editor: Editor,
) -> None:
    (editor.workspace / ".goose-ls").mkdir()
    os.mkfifo(editor.workspace / ".goose-ls" / "policy.json")
    read = {"toolCallId": "c1", "title": "read", "kind": "read"}
    where = [{"path": str(editor.workspace / "a.py")}]  # a call that names nothing is asked
    text = await _turn(
        editor,
        [{"permission": {"toolCall": {**read, "locations": where}}}],
        policy={"rules": [{"action": "allow", "kind": "read"}]},
    )
    assert "[permission: allow" in text and text.endswith("[alive]"), text


async def test_sockets_and_devices_are_not_read(shared: Editor) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(shared.workspace / "agent.sock"))
    steps = [{"readFile": {"path": str(shared.workspace / "agent.sock")}}]
    if os.geteuid() == 0:
        os.mknod(shared.workspace / "null", 0o666 | 0o020000, os.makedev(1, 3))
        steps.append({"readFile": {"path": str(shared.workspace / "null")}})
    try:
        text = await _turn(shared, steps)
    finally:
        sock.close()
    errors = _errors(text)
    assert len(errors) == len(steps) and all("not a regular file" in e for e in errors), text


@pytest.mark.asyncio(loop_scope="function")  # reads goose-ls's log
async def test_a_whole_read_over_the_cap_is_refused_but_lines_are_streamed(
    editor: Editor,
) -> None:
    big = editor.workspace / "big.log"
    big.write_text("".join(f"line {n}\n" for n in range(1000)))
    text = await _turn(
        editor,
        [
            {"readFile": {"path": str(big)}},
            {"readFile": {"path": str(big), "line": 500, "limit": 2}},
        ],
        workspace={"maxReadBytes": 1000},
    )
    (error,) = _errors(text)
    assert error.startswith("-32602:") and "line" in error and "limit" in error, text
    assert '[read "line 499\\nline 500\\n"]' in text


async def test_writes_through_a_hard_link_are_refused_unless_allowed(shared: Editor) -> None:
    outside = shared.tmp / "outside.txt"
    outside.write_text("private")
    os.link(outside, shared.workspace / "linked.txt")
    step = {"writeFile": {"path": str(shared.workspace / "linked.txt"), "content": "x"}}
    text = await _turn(shared, [step])
    (error,) = _errors(text)
    assert "hard link" in error and "allowHardLinks" in error, text
    assert outside.read_text() == "private"


@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_a_hard_link_may_be_written_when_the_user_allows_it(editor: Editor) -> None:
    outside = editor.tmp / "outside.txt"
    outside.write_text("private")
    os.link(outside, editor.workspace / "linked.txt")
    step = {"writeFile": {"path": str(editor.workspace / "linked.txt"), "content": "x"}}
    text = await _turn(editor, [step], workspace={"allowHardLinks": True})
    assert "[written]" in text
    assert outside.read_text() == "private", "the link is replaced, the other file kept"


async def test_a_hard_link_to_a_secret_is_a_secret(shared: Editor) -> None:
    steps = []
    for n, secret in enumerate([".env", "deploy/prod/config/.env", "keys/id_ed25519"]):
        (shared.workspace / secret).parent.mkdir(parents=True, exist_ok=True)
        (shared.workspace / secret).write_text(f"TOKEN=hunter{n}")
        os.link(shared.workspace / secret, shared.workspace / f"notes{n}.txt")
        steps.append({"readFile": {"path": str(shared.workspace / f"notes{n}.txt")}})
    text = await _turn(shared, steps)
    assert "hunter" not in text
    errors = _errors(text)
    assert len(errors) == 3 and all(e.startswith("-32003:") and "secret" in e for e in errors)


@pytest.mark.asyncio(loop_scope="function")  # its own editor
async def test_without_a_workspace_folder_files_and_terminals_are_refused(
    editor: Editor,
) -> None:
    here = Path.cwd() / "pyproject.toml"  # inside the server's cwd, the old fallback root
    script = editor.script(
        {
            "turns": [
                [
                    {"readFile": {"path": str(here)}},
                    {"terminal": {"command": "true", "cwd": str(Path.cwd())}},
                ]
            ]
        }
    )
    await editor.client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options={
                "dataDir": str(editor.tmp / "data"),
                "agent": {"command": script},
            },
        )
    )
    text = await _run(editor)
    errors = _errors(text)
    assert len(errors) == 2 and all("no workspace folder" in e for e in errors), text


@pytest.mark.parametrize("root", ["/", "home"])
@pytest.mark.asyncio(loop_scope="function")  # its own editor
async def test_the_disk_or_home_is_never_a_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: str
) -> None:
    home = tmp_path / "workspace"
    monkeypatch.setenv("HOME", str(home))
    editor = await start_editor(tmp_path)
    try:
        (home / "notes.txt").write_text("mine")
        folder = Path("/") if root == "/" else home
        script = editor.script({"turns": [[{"readFile": {"path": str(home / "notes.txt")}}]]})
        await editor.client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=folder.as_uri(),
                initialization_options={
                    "dataDir": str(tmp_path / "data"),
                    "agent": {"command": script},
                },
            )
        )
        text = await _run(editor)
    finally:
        await stop_editor(editor)
    (error,) = _errors(text)
    assert "no workspace folder" in error and "mine" not in text, text


@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_relative_extra_roots_are_the_workspace_s_not_the_server_s(
    editor: Editor,
) -> None:
    shared = editor.tmp / "shared"
    shared.mkdir()
    (shared / "lib.txt").write_text("shared")
    here = Path.cwd() / "pyproject.toml"
    text = await _turn(
        editor,
        [{"readFile": {"path": str(shared / "lib.txt")}}, {"readFile": {"path": str(here)}}],
        workspace={"extraRoots": ["../shared", ".", "/", "~"]},
    )
    assert '[read "shared"]' in text, text
    (error,) = _errors(text)
    assert "outside the workspace" in error


async def test_a_refused_edit_to_an_open_buffer_is_not_written_under_it(
    shared: SharedEditor,
) -> None:
    source = shared.workspace / "open.py"
    source.write_text("on disk\n")
    await shared.start({"turns": [[{"writeFile": {"path": str(source), "content": "agent\n"}}]]})
    buffers = EditorBuffers(shared.client, "utf-8", apply_edits=False)
    shared.client.feature(types.WORKSPACE_APPLY_EDIT)(
        lambda _: types.ApplyWorkspaceEditResult(applied=False, failure_reason="busy")
    )
    buffers.open(source.as_uri(), "unsaved\n", "python")
    text = await _run(shared)
    (error,) = _errors(text)
    assert "did not apply" in error and "busy" in error, text
    assert source.read_text() == "on disk\n", "never written under the editor's buffer"


MALFORMED = [("a\0b.txt", "NUL"), ("a" * 300, "too long"), ("d/" * 2100, "too long")]


async def test_malformed_paths_are_invalid_params(shared: Editor) -> None:
    steps = []
    for name, _ in MALFORMED:
        path = os.path.join(str(shared.workspace), name)
        steps += [
            {"readFile": {"path": path}},
            {"writeFile": {"path": path, "content": "x"}},
            {"terminal": {"command": "true", "cwd": path}},
        ]
    errors = _errors(await _turn(shared, steps))
    assert len(errors) == 3 * len(MALFORMED), errors
    for n, (_, why) in enumerate(MALFORMED):  # read, write, terminal of each path
        said = errors[3 * n : 3 * n + 3]
        assert all(e.startswith("-32602:") and why in e for e in said), json.dumps(said)


async def test_a_credential_is_refused_by_its_content_whatever_its_name(shared: Editor) -> None:
    """A key is a secret by what it holds: a service-account key named like any JSON file,
    a PEM key in a `.txt`."""
    key = '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMII"}'
    (shared.workspace / "gcp-service-account.json").write_text(key)
    (shared.workspace / "notes.txt").write_text("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n")
    steps = [
        {"readFile": {"path": str(shared.workspace / name)}}
        for name in ("gcp-service-account.json", "notes.txt")
    ]
    text = await _turn(shared, steps)
    assert "MII" not in text, text
    errors = _errors(text)
    assert len(errors) == 2 and all(e.startswith("-32003:") and "secret" in e for e in errors)


async def test_a_hard_link_to_a_file_outside_the_roots_is_not_read(shared: Editor) -> None:
    outside = shared.tmp / "outside.txt"
    outside.write_text("private notes")
    os.link(outside, shared.workspace / "linked.txt")
    text = await _turn(shared, [{"readFile": {"path": str(shared.workspace / "linked.txt")}}])
    assert "private notes" not in text, text
    (error,) = _errors(text)
    assert "hard link" in error or "names" in error, text


async def test_a_key_pasted_into_an_unsaved_buffer_is_not_read_from_it(
    shared: SharedEditor,
) -> None:
    """The editor's buffer is what the agent reads of an open file: a credential there is
    refused as one on the disk is."""
    notes = shared.workspace / "notes.md"
    notes.write_text("nothing yet\n")
    await shared.start({"turns": [[{"readFile": {"path": str(notes)}}, {"text": "[alive]"}]]})
    buffers = EditorBuffers(shared.client, "utf-8")
    buffers.open(notes.as_uri(), "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n", "markdown")
    text = await _run(shared)
    assert "b3Blbn" not in text, text
    (error,) = _errors(text)
    assert error.startswith("-32003:") and "secret" in error, text
