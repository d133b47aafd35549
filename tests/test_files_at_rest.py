"""goose-ls's files at rest: what it keeps on disk is the user's alone, its log holds no
secret, and a data dir that goes wrong under it loses no chat (issue 28, point 12).

The invariants:

- the data dir and the log dir are 0700, every file goose-ls writes there 0600,
  whatever the umask;
- no value of ``agent.env``, of an MCP server's ``env`` or ``headers``, nor the agent's
  token, reaches the log, at any level;
- only a journal that is really corrupt is set aside; one that is busy is waited for,
  one that cannot be written is read, and one deleted under a running goose-ls is made
  again with the chats it had open; the user is told once.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from support.harness import SERVER_COMMAND, Editor, start_editor, stop_editor

SECRETS = ("plain-env-value-1", "plain-mcp-env-2", "plain-header-3", "pushed-env-4")
"""Values that look like nothing in particular: secret by where they are, not by shape."""


def _with_umask(umask: str, command: list[str] = SERVER_COMMAND) -> list[str]:
    quoted = " ".join(f"'{part}'" for part in command)
    return ["sh", "-c", f"umask {umask} && exec {quoted}"]


def _modes(folder: Path) -> dict[str, str]:
    """Each folder and file under ``folder`` (itself included) and its mode, in octal."""
    found = {".": oct(stat.S_IMODE(folder.stat().st_mode))}
    for path in folder.rglob("*"):
        found[str(path.relative_to(folder))] = oct(stat.S_IMODE(path.lstat().st_mode))
    return found


async def test_the_data_and_log_dirs_are_the_user_s_alone_whatever_the_umask(
    tmp_path: Path,
) -> None:
    editor = await start_editor(tmp_path, _with_umask("022"))
    try:
        await editor.start(
            {
                "turns": [
                    [
                        {
                            "permission": {
                                "toolCallId": "t1",
                                "title": "shell",
                                "rawInput": {"command": "make"},
                            }
                        },
                        {"text": "x" * 200, "chunks": 20},
                    ]
                ]
            },
            settings={"policy": {"rules": [{"action": "deny", "kind": "execute"}]}},
        )
        await editor.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="goose.openChat", arguments=[])
        )
        session_id = (await editor.goose.request("goose/listSessions", {}))["sessions"][0][
            "sessionId"
        ]
        await editor.goose.turn_end(await editor.prompt(session_id))
        data = editor.tmp / "data"
        await editor.goose.wait_for(
            lambda: (data / "audit.log").exists() and (data / "journal.sqlite3-wal").exists(),
            what="the audit log and the journal's WAL",
        )
        modes = _modes(data)
        assert {"audit.log", "journal.sqlite3", "journal.sqlite3-wal", "transcripts"} <= set(modes)
        wrong = {
            name: mode
            for name, mode in modes.items()
            if int(mode, 8) & 0o077  # group and others: nothing (git's objects are 0400)
        }
        assert not wrong, f"the data dir holds what others may read: {wrong}"
        logs = _modes(editor.tmp / "logs")
        assert logs == {".": "0o700", "goose-ls.log": "0o600"}, logs
    finally:
        await stop_editor(editor)


async def test_an_existing_data_dir_others_could_read_is_closed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    for name in ("journal.sqlite3", "audit.log"):
        (data / name).touch()
        (data / name).chmod(0o644)
    (tmp_path / "logs").mkdir(mode=0o755)
    (tmp_path / "logs" / "goose-ls.log").write_text("an old log\n")
    (tmp_path / "logs" / "goose-ls.log").chmod(0o644)
    editor = await start_editor(tmp_path)
    try:
        await editor.start({"turns": [[{"text": "hi"}]]})
        await editor.goose.turn_end(await editor.prompt(await editor.new_session()))
    finally:
        await stop_editor(editor)
    assert oct(stat.S_IMODE(data.stat().st_mode)) == "0o700"
    assert oct(stat.S_IMODE((data / "journal.sqlite3").stat().st_mode)) == "0o600"
    assert oct(stat.S_IMODE((tmp_path / "logs").stat().st_mode)) == "0o700"
    assert oct(stat.S_IMODE((tmp_path / "logs" / "goose-ls.log").stat().st_mode)) == "0o600"


async def test_no_secret_setting_reaches_the_log_even_at_debug_level(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "goose_ls", "--log-level", "debug"]
    editor = await start_editor(tmp_path, command)
    pushed = {"agent": {"env": {"PUSHED_KEY": SECRETS[3]}, "requestTimeout": 61}}
    editor.client.set_configuration(pushed, section="goose")  # the editor's answer
    try:
        await editor.start(
            {"turns": [[{"text": "hi"}]]},
            settings={
                "agent": {
                    "env": {"API_KEY": SECRETS[0]},
                    "mcpServers": [
                        {"name": "local", "command": "true", "env": {"TOKEN": SECRETS[1]}},
                        {
                            "type": "http",
                            "name": "remote",
                            "url": "https://mcp.example/",
                            "headers": [{"name": "Authorization", "value": SECRETS[2]}],
                        },
                    ],
                }
            },
        )
        session_id = await editor.new_session()
        await editor.goose.turn_end(await editor.prompt(session_id))
        (new,) = editor.received("session/new")
        assert SECRETS[1] in str(new["params"]["mcpServers"]), "the agent gets them"
    finally:
        await stop_editor(editor)
    text = "".join(
        log.read_text(encoding="utf-8", errors="replace") for log in (tmp_path / "logs").iterdir()
    )
    assert "Sending data" in text or "DEBUG" in text, "the log is the debug one"
    leaked = [secret for secret in SECRETS if secret in text]
    assert not leaked, f"the log holds {leaked}"


# --- a data dir that goes wrong under goose-ls ------------------------------------------


async def _one_chat(tmp_path: Path, text: str) -> str:
    """A goose-ls on ``tmp_path`` that holds one chat saying ``text``, then stops."""
    editor = await start_editor(tmp_path)
    try:
        await editor.start({"turns": [[{"text": "noted"}]]})
        session_id = await editor.new_session()
        await editor.goose.turn_end(await editor.prompt(session_id, text))
    finally:
        await stop_editor(editor)
    return session_id


async def _listed(editor: Editor) -> list[str]:
    """The chats goose-ls's journal knows (not those only the agent lists)."""
    listed = (await editor.goose.request("goose/listSessions", {}))["sessions"]
    return [entry["sessionId"] for entry in listed if entry["source"] != "agent"]


def _journaled(journal: Path, session_id: str) -> list[str]:
    """The kinds of the events the journal on disk holds for ``session_id``."""
    with contextlib.closing(sqlite3.connect(journal)) as db:
        rows = db.execute(
            "SELECT kind FROM events WHERE session_id = ? ORDER BY idx", (session_id,)
        )
        return [kind for (kind,) in rows]


def _told(editor: Editor, text: str) -> list[str]:
    return [m.message for m in editor.client.messages if text in m.message]


def _unshare_works() -> bool:
    done = subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False)
    return done.returncode == 0


async def test_a_read_only_data_dir_still_shows_its_chats(tmp_path: Path) -> None:
    if shutil.which("unshare") is None or not _unshare_works():
        pytest.skip("NOT RUN: needs unshare -rm (user and mount namespaces) for a read-only mount")
    old = await _one_chat(tmp_path, "remember the read-only dir")
    data = tmp_path / "data"
    quoted = " ".join(f"'{part}'" for part in SERVER_COMMAND)
    mount = f"mount --bind '{data}' '{data}' && mount -o remount,bind,ro '{data}'"
    editor = await start_editor(
        tmp_path, ["unshare", "-rm", "sh", "-c", f"{mount} && exec {quoted}"]
    )
    try:
        await editor.start({"turns": [[{"text": "still here"}]]})
        assert old in await _listed(editor), "the old chat is listed"
        message = await editor.shown("session store")
        read_only = ("Read-only file system", "readonly database")  # the OS's or SQLite's words
        assert any(w in message for w in read_only) and "shown from a copy" in message, message
        editor.goose.updates.clear()
        result = await editor.goose.request("goose/replay", {"sessionId": old})
        assert result["count"] > 0
        await editor.goose.wait_for(
            lambda: "remember the read-only dir" in str(editor.goose.updates),
            what="the old chat replayed",
        )
        new = await editor.new_session()
        end = await editor.goose.turn_end(await editor.prompt(new))
        assert end["stopReason"] == "end_turn", "a new chat goes on, in memory"
        assert set(await _listed(editor)) >= {old, new}
        assert len(_told(editor, "session store")) == 1, "told once"
    finally:
        await stop_editor(editor)
    assert not list(data.glob("*.bak")), "a journal that cannot be written is not corrupt"
    assert _journaled(data / "journal.sqlite3", old), "left as it was"


async def test_a_busy_journal_is_waited_for_never_set_aside(tmp_path: Path) -> None:
    old = await _one_chat(tmp_path, "remember the busy journal")
    journal = tmp_path / "data" / "journal.sqlite3"
    holder = sqlite3.connect(journal, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process in a long write transaction
    editor = await start_editor(tmp_path)
    try:
        await editor.start({"turns": [[{"text": "kept"}]]})
        assert old in await _listed(editor), "the old chat is listed"
        await editor.shown("busy")
        new = await editor.new_session()
        await editor.goose.turn_end(await editor.prompt(new, "said while it was busy"))
        holder.execute("ROLLBACK")
        holder.close()
        # The next write after the journal is free saves this window's chats in it.
        again = await editor.prompt(new, "said after")
        await editor.goose.turn_end(again)
        await editor.goose.wait_for(
            lambda: "user_message_chunk" in _journaled(journal, new),
            what="the chat saved",
            timeout=20,
        )
    finally:
        await stop_editor(editor)
    assert not list(journal.parent.glob("*.bak")), "a busy journal is not corrupt"
    assert _journaled(journal, old)
    assert _journaled(journal, new).count("turn_end") == 2, "both turns saved"


async def test_a_data_dir_deleted_while_running_is_made_again(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "first"}], [{"text": "second"}]]})
    session_id = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(session_id, "before"))
    data = editor.tmp / "data"
    while data.exists():  # goose-ls may still be saving the turn's transcript into it
        shutil.rmtree(data, ignore_errors=True)
    await editor.goose.turn_end(await editor.prompt(session_id, "after"))
    # "was deleted or replaced": the test's own folder names hold "deleted" too, and a
    # transcript that could not be written names its path.
    message = await editor.shown("was deleted or replaced")
    assert "made again" in message, message
    await stop_editor(editor)
    kinds = _journaled(data / "journal.sqlite3", session_id)
    assert kinds.count("turn_end") == 2, "both turns, the one before the deletion too"
    assert len(_told(editor, "was deleted or replaced")) == 1, "told once"
    assert oct(stat.S_IMODE(data.stat().st_mode)) == "0o700"


async def test_a_journal_of_a_newer_goose_ls_is_left_alone(tmp_path: Path) -> None:
    journal = tmp_path / "data" / "journal.sqlite3"
    journal.parent.mkdir()
    with contextlib.closing(sqlite3.connect(journal)) as db, db:
        db.execute("PRAGMA journal_mode = WAL")  # as goose-ls's journals are
        db.execute("CREATE TABLE from_the_future (x)")
        db.execute("INSERT INTO from_the_future VALUES ('kept')")
        db.execute("PRAGMA user_version = 999")
    editor = await start_editor(tmp_path)
    try:
        await editor.start({"turns": [[{"text": "ok"}]]})
        await editor.shown("newer")
        session_id = await editor.new_session()
        await editor.goose.turn_end(await editor.prompt(session_id))
    finally:
        await stop_editor(editor)
    assert not list(journal.parent.glob("*.bak")), "not corrupt: a newer goose-ls's"
    with contextlib.closing(sqlite3.connect(journal)) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (999,)
        assert db.execute("SELECT x FROM from_the_future").fetchall() == [("kept",)]
