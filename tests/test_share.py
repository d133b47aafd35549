"""``agent.share``: the goose-ls processes of one user share one goose serve.

Each window is a real goose-ls with a data dir of its own; they meet in one runtime dir
(``XDG_RUNTIME_DIR``). goose is a fake ``goose`` that runs the scripted agent, which
``goose serve --host H --port P`` serves as goose serve does: one process, a WebSocket
per goose-ls, the sessions and the one-run-per-session rule shared by all connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import signal
import socket
import stat
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from goose_ls.agent.share.folder import SharePlace
from goose_ls.agent.share.keeper import look_every
from goose_ls.process_identity import process_named
from goose_ls.scripted import write_script
from goose_ls.scripted.script import prompt_texts
from support.fake_goose import write_fake_goose
from support.harness import (
    SERVER_COMMAND,
    Editor,
    gone,
    process_alive,
    sandbox_env,
    server_env,
    start_editor,
    stop_editor,
)
from support.logs import read_log

SCRIPT: dict[str, Any] = {
    "byPrompt": {"ask first": [{"permission": {"toolCallId": "t1", "title": "Run it"}}]},
}


class Share:
    """Windows sharing one goose serve, and what they share it through."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.runtime = tmp / "run"
        self.runtime.mkdir(mode=0o700)
        self.record = tmp / "server-received.jsonl"
        self.script = write_script(tmp / "script.json", {"record": str(self.record), **SCRIPT})
        self.goose = write_fake_goose(tmp / "bin", " 1.43.0", self.script)
        self.windows: list[Editor] = []

    async def window(
        self, name: str, start: bool = True, grace: float = 30, restart_delay: float = 1.0
    ) -> Editor:
        """A goose-ls with ``agent.share``, in a folder (and a data dir) of its own, on
        the one project: windows on other folders would each have a server, since the
        server's sandbox lets it write its windows' folders only."""
        folder = self.tmp / name
        folder.mkdir()
        # The fake goose, its script and its record are in the share's folder.
        env = {"XDG_RUNTIME_DIR": str(self.runtime), **sandbox_env([self.tmp])}
        editor = await start_editor(folder, SERVER_COMMAND, **env)
        editor.workspace = self.tmp / "workspace"
        editor.workspace.mkdir(exist_ok=True)
        editor.record = self.record  # what the server received, checked against ACP at stop
        self.windows.append(editor)
        if start:
            await self.start(editor, grace, restart_delay)
        return editor

    async def start(self, editor: Editor, grace: float = 30, restart_delay: float = 1.0) -> None:
        """``restart_delay``: how long after losing the server the window reconnects (a
        test of what comes after, not of the backoff, need not wait the default 1 s)."""
        agent = {
            "command": [str(self.goose), "acp"],
            "share": True,
            "shareIdleGrace": grace,
            "restartDelay": restart_delay,
        }
        await editor.start(settings={"agent": agent})

    @property
    def folder(self) -> Path:
        """The share's folder (one goose command line: one share)."""
        (found,) = (self.runtime / "goose-ls" / "share").iterdir()
        return found

    def state(self) -> dict[str, Any]:
        return dict(json.loads((self.folder / "state.json").read_text()))

    def servers(self) -> list[int]:
        """The scripted goose serve processes running for this test."""
        found = []
        for entry in Path("/proc").iterdir():
            try:
                words = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            ours = str(self.script).encode() in words and b"serve" in words
            if ours and process_alive(int(entry.name)):
                found.append(int(entry.name))
        return found

    async def stop(self) -> None:
        for editor in self.windows:
            await stop_editor(editor)
        for pid in self.servers():  # a server whose grace has not run out yet
            os.kill(pid, signal.SIGKILL)


@pytest_asyncio.fixture
async def share(tmp_path: Path) -> AsyncIterator[Share]:
    together = Share(tmp_path)
    yield together
    await together.stop()


async def turn(editor: Editor, session_id: str, text: str) -> dict[str, Any]:
    end = await editor.goose.turn_end(await editor.prompt(session_id, text))
    assert end["stopReason"] == "end_turn", end
    return end


async def test_two_windows_share_one_server(share: Share) -> None:
    a = await share.window("a")
    b = await share.window("b")
    status_a = await a.goose.agent_state("running")
    status_b = await b.goose.agent_state("running")
    assert status_a["shared"] is True and status_b["shared"] is True
    assert status_a["url"] == status_b["url"] == share.state()["url"]
    assert status_a["binary"] == str(share.goose) and "pid" not in status_a
    assert len(share.servers()) == 1, "one goose serve for both windows"
    session_id = await a.new_session()
    end = await turn(a, session_id, "from a")
    assert "You said: from a" in a.goose.text(end["messageId"])
    listed = await b.goose.request("goose/listSessions", {})
    assert session_id in [s["sessionId"] for s in listed["sessions"]], "b lists a's chat"
    await b.goose.request("goose/loadSession", {"sessionId": session_id})
    end = await turn(b, session_id, "from b")
    assert "You said: from b" in b.goose.text(end["messageId"])


async def test_windows_starting_together_start_one_server(share: Share) -> None:
    a = await share.window("a", start=False)
    b = await share.window("b", start=False)
    await asyncio.gather(share.start(a), share.start(b))
    status_a = await a.goose.agent_state("running")
    status_b = await b.goose.agent_state("running")
    assert status_a["url"] == status_b["url"]
    assert len(share.servers()) == 1
    assert "ended" not in (share.folder / "server.log").read_text()


async def test_the_last_window_out_stops_the_server_after_the_grace(share: Share) -> None:
    grace = 1.0
    a = await share.window("a", grace=grace)
    b = await share.window("b", grace=grace)
    await b.goose.agent_state("running")
    keeper = share.state()["pid"]
    await stop_editor(a)  # the window that started it
    # A keeper that took b for gone would stop the server within the grace and two looks.
    await asyncio.sleep(grace + 3 * look_every(grace))
    assert process_alive(keeper) and len(share.servers()) == 1, "b uses it: it stays"
    await turn(b, await b.new_session(), "still here")
    await stop_editor(b)  # the last one out: the grace begins
    # A lease taken at once, as a goose-ls attaching takes one (starting a whole goose-ls
    # could outlast the grace on a busy machine), then a window using it.
    lease = SharePlace(share.folder).lease()
    try:
        c = await share.window("c", grace=grace)
        assert (await c.goose.agent_state("running"))["url"] == share.state()["url"]
        assert share.state()["pid"] == keeper, "leased within the grace: the server was kept"
    finally:
        os.close(lease)
    await stop_editor(c)
    assert await gone(keeper, timeout=30), "nobody used it for the grace: it stopped"
    assert share.servers() == []
    assert not (share.folder / "state.json").exists()
    assert "no goose-ls used goose serve for 1 s" in (share.folder / "server.log").read_text()


@pytest.mark.parametrize("leaving", ["exit", "SIGKILL"])
async def test_the_starter_leaving_leaves_the_others_working(share: Share, leaving: str) -> None:
    grace = 1.0  # a keeper that took b for gone would stop the server within it, too
    a = await share.window("a", grace=grace)
    await a.goose.agent_state("running")
    b = await share.window("b", grace=grace)
    await b.goose.agent_state("running")
    keeper = share.state()["pid"]
    if leaving == "exit":
        await stop_editor(a)
    else:
        a.client._server.kill()  # type: ignore[union-attr]
        await a.client._server.wait()  # type: ignore[union-attr]
    # Time for a server tied to a to go with it, or for its keeper to give up on b.
    await asyncio.sleep(grace + 3 * look_every(grace))
    await turn(b, await b.new_session(), "after a")
    assert share.state()["pid"] == keeper and process_alive(keeper)
    assert [s["state"] for s in b.goose.statuses] == ["starting", "running"], "never dropped"


async def test_a_server_killed_with_its_keeper_is_replaced(share: Share) -> None:
    """Its state file stays behind, naming a dead process: the next start replaces it."""
    a = await share.window("a", restart_delay=0.05)
    await a.goose.agent_state("running")
    session_id = await a.new_session()
    old = share.state()
    os.killpg(old["pid"], signal.SIGKILL)  # nothing of it is left to forget its state
    assert await gone(old["pid"])
    assert share.state() == old
    lost = await a.goose.wait_for(lambda: [s for s in a.goose.statuses if s["state"] == "error"])
    assert lost[0]["reason"] == "disconnected"
    await a.goose.wait_for(lambda: a.goose.statuses[-1]["state"] == "running")
    new = share.state()
    assert new["pid"] != old["pid"] and new["url"] == a.goose.statuses[-1]["url"]
    await turn(a, session_id, "on the new server")
    b = await share.window("b")
    assert (await b.goose.agent_state("running"))["url"] == new["url"]


async def test_a_state_naming_a_pid_now_anothers_leaves_that_process_alone(
    share: Share,
) -> None:
    a = await share.window("a")
    await a.goose.agent_state("running")
    old = share.state()
    os.killpg(old["pid"], signal.SIGKILL)
    await stop_editor(a)
    stranger = await asyncio.create_subprocess_exec("sleep", "600", start_new_session=True)
    try:
        # The server's pid given to another process since (its start time differs).
        stale = {**old, "pid": stranger.pid, "process": f"{socket.gethostname()}:{stranger.pid}:1"}
        fd = os.open(share.folder / "state.json", os.O_WRONLY | os.O_TRUNC)
        os.write(fd, json.dumps(stale).encode())
        os.close(fd)
        b = await share.window("b")
        assert (await b.goose.agent_state("running"))["url"] == share.state()["url"]
        assert share.state()["pid"] not in (stranger.pid, old["pid"])
        assert process_alive(stranger.pid), "a process that is not the server is never signalled"
    finally:
        stranger.kill()
        await stranger.wait()


async def test_the_secret_is_yours_alone_or_it_is_not_used(share: Share) -> None:
    a = await share.window("a")
    await a.goose.agent_state("running")
    secret = share.folder / "secret"
    for path, mode in (
        (share.folder, 0o700),
        (secret, 0o600),
        (share.folder / "state.json", 0o600),
    ):
        info = path.stat()
        assert stat.S_IMODE(info.st_mode) == mode and info.st_uid == os.geteuid(), path
    for log in (share.tmp / "a" / "logs").iterdir():
        assert secret.read_text() not in log.read_text(), "the secret is never logged"
    secret.chmod(0o644)
    b = await share.window("b")
    refused = await b.goose.agent_state("error")
    assert refused["reason"] == "insecure" and str(secret) in refused["message"]
    assert "others may open it (mode -rw-r--r--)" in refused["message"]
    secret.chmod(0o600)
    if os.geteuid() == 0:  # as root, the file can be given to someone else
        os.chown(secret, 65534, 65534)
        with pytest.raises(JsonRpcException, match="it belongs to user 65534, not to you"):
            await b.goose.request("goose/restart", {})
        assert b.goose.statuses[-1]["reason"] == "insecure"
        os.chown(secret, os.geteuid(), os.getegid())
    await b.goose.request("goose/restart", {})
    await b.goose.wait_for(lambda: b.goose.statuses[-1]["state"] == "running")
    await turn(b, await b.new_session(), "with the secret back")


async def test_restarting_the_server_gives_every_window_a_new_one(share: Share) -> None:
    """goose/restart with server (as after `goose configure`): the shared goose serve is
    stopped, this window starts a new one, and the other reconnects to it by itself."""
    a = await share.window("a", restart_delay=0.05)
    b = await share.window("b")
    await a.goose.agent_state("running")
    session_a = await a.new_session()
    await turn(a, session_a, "before")
    old = share.state()
    seen = len(a.goose.statuses)
    answer = await b.goose.request("goose/restart", {"server": True})
    assert answer["agent"]["state"] == "running"
    assert await gone(old["pid"], timeout=30), "the old server was stopped"
    killed = [line for line in read_log(share.tmp / "b" / "logs").splitlines() if "killing" in line]
    assert not killed, "the old server and its keeper ended when told to, not killed"
    new = share.state()  # its port may be the old one again: the system hands it out
    assert new["pid"] != old["pid"] and new["url"] == answer["agent"]["url"]
    await a.goose.wait_for(
        lambda: (
            "error" in [s["state"] for s in a.goose.statuses[seen:]]
            and a.goose.statuses[-1]["state"] == "running"
        ),
        what="a lost the old server, then reached the new one",
    )
    await turn(a, session_a, "after")
    assert len(share.servers()) == 1


def _listener_of(uid: int, port: int) -> socket.socket:
    """A socket listening on the loopback ``port`` that belongs to user ``uid``, as
    another user's program's would: made by a thread whose file-system uid (Linux: a
    thread's own) is ``uid``; the rest of this process stays root."""
    made: list[socket.socket] = []

    def make() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.setfsuid(uid)
        try:
            made.append(socket.socket())
        finally:
            libc.setfsuid(0)

    thread = threading.Thread(target=make)
    thread.start()
    thread.join()
    (sock,) = made
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0,
    reason="holding a port as another user takes root (and Linux's per-thread fsuid)",
)
async def test_a_port_another_user_took_is_sent_no_secret(share: Share) -> None:
    """The server gone, another user's program holds its port and answers /status as it
    did: the next window checks who holds the connection's other end before the upgrade,
    sends nothing, says so, and forgets that server; a restart starts a new one."""
    a = await share.window("a")
    await a.goose.agent_state("running")
    old = share.state()
    port = int(old["url"].rsplit(":", 1)[1].split("/", 1)[0])
    os.killpg(old["pid"], signal.SIGKILL)
    await stop_editor(a)
    while True:  # until the killed server's port is free
        try:
            sock = _listener_of(65534, port)
        except OSError:
            await asyncio.sleep(0.05)
        else:
            break
    heard: list[bytes] = []

    async def squat(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            heard.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()
        writer.close()

    squatter = await asyncio.start_server(squat, sock=sock)
    stranger = await asyncio.create_subprocess_exec("sleep", "600", start_new_session=True)
    try:
        named = {**old, "pid": stranger.pid, "process": process_named(stranger.pid)}
        fd = os.open(share.folder / "state.json", os.O_WRONLY | os.O_TRUNC)
        os.write(fd, json.dumps(named).encode())
        os.close(fd)
        b = await share.window("b")
        refused = await b.goose.agent_state("error")
        assert refused["reason"] == "insecure", refused
        assert f"{port}" in refused["message"] and "user 65534 holds it" in refused["message"], (
            refused
        )
        assert heard and all(h.startswith(b"GET /status ") for h in heard), heard
        secret = (share.folder / "secret").read_bytes()
        assert not any(secret in h for h in heard), "the secret went to another user"
        assert not (share.folder / "state.json").exists(), "that server is forgotten"
        assert process_alive(stranger.pid), "a process that is not the server is never signalled"
        await b.goose.request("goose/restart", {})
        await b.goose.wait_for(lambda: b.goose.statuses[-1]["state"] == "running")
        assert share.state()["url"] != old["url"]
        await turn(b, await b.new_session(), "on a port of its own")
    finally:
        squatter.close()
        stranger.kill()
        await stranger.wait()


async def test_doctor_attaches_to_the_shared_server_and_names_it(share: Share) -> None:
    a = await share.window("a")
    await a.goose.agent_state("running")
    settings = {"agent": {"command": [str(share.goose), "acp"], "share": True}}
    doctor = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "goose_ls",
        "doctor",
        "--settings",
        json.dumps(settings),
        stdout=asyncio.subprocess.PIPE,
        env=server_env(
            share.tmp / "doctor", XDG_RUNTIME_DIR=str(share.runtime), **sandbox_env([share.tmp])
        ),
        cwd=share.tmp / "workspace",  # run in the project, as a user does
    )
    out = (await doctor.communicate())[0].decode()
    assert doctor.returncode == 0, out
    assert f"shared       goose serve at {share.state()['url']} (agent.share)" in out, out
    assert len(share.servers()) == 1, "the running server, not a second one"


def json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def waiting(editor: Editor, count: int) -> None:
    """Until ``count`` prompts have been told that they wait for another window."""
    await editor.goose.wait_for(
        lambda: [n for n in editor.goose.of_kind("note") if "busy in another window" in n["text"]][
            count - 1 :
        ]
    )


async def test_one_chat_prompted_from_two_windows_waits_its_turn(share: Share) -> None:
    """goose runs one turn per chat at a time, whichever window asks: the second prompt
    waits for the first turn (a note says so) and then runs; it never fails."""
    a = await share.window("a")
    b = await share.window("b")
    session_id = await a.new_session()
    await b.goose.request("goose/loadSession", {"sessionId": session_id})
    first = await a.prompt(session_id, "ask first")
    (asked,) = await a.goose.wait_for(lambda: a.goose.of_kind("permission_request"))
    dropped = await b.prompt(session_id, "not now")
    await waiting(b, 1)
    await b.goose.request("goose/cancel", {"sessionId": session_id})
    assert (await b.goose.turn_end(dropped))["stopReason"] == "cancelled"
    assert not [m for m in json_lines(share.record) if m.get("method") == "session/cancel"], (
        "a cancel while it waits ends the wait, never a's turn"
    )
    second = await b.prompt(session_id, "then me")
    await waiting(b, 2)
    await b.goose.wait_for(lambda: prompt_texts(share.record).count("then me") >= 2)
    assert not [e for e in b.goose.turn_ends if e["messageId"] == second], "it waits"
    await a.goose.request(
        "goose/permission", {"requestId": asked["requestId"], "optionId": "allow_once"}
    )
    assert (await a.goose.turn_end(first))["stopReason"] == "end_turn"
    end = await b.goose.turn_end(second)
    assert end["stopReason"] == "end_turn" and "error" not in end, end
    assert "You said: then me" in b.goose.text(second)
