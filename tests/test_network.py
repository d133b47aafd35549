"""goose serve reached over a WebSocket (``agent.url``): turns, the token, failures that
say what is wrong, a server restarted mid-turn, and what goose-ls refuses to do; the
certificate tests run over streamable HTTP (https://) too.

The server is the scripted agent served as goose serve serves goose
(``goose_ls.scripted.serve``), in a process of its own.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from goose_ls.scripted.script import write_script
from goose_ls.scripted.serve import GOOSE_1_43_AUTH, NEWER_AUTH
from support.harness import Editor, start_editor, stop_editor
from support.served import ServedAgent

TOKEN = "goose-acp-Zq8cT3vN1LwY5pR7"
"""goose's own form of a generated token (``goose-acp-`` and 32 characters or fewer)."""

Started = Callable[..., Awaitable[tuple[Editor, ServedAgent]]]
Settings = dict[str, Any] | Callable[[ServedAgent], dict[str, Any]]


@pytest_asyncio.fixture
async def served(tmp_path: Path) -> AsyncIterator[Started]:
    """Start a served agent and a goose-ls whose ``agent.url`` is it; both stopped after.
    ``agent`` is more agent settings (or a function of the server making them)."""
    running: list[tuple[Editor, ServedAgent]] = []

    async def start(
        script: dict[str, Any] | None = None,
        agent: Settings | None = None,
        token: str | None = TOKEN,
        log_level: str = "info",
        **server: Any,
    ) -> tuple[Editor, ServedAgent]:
        command = [sys.executable, "-m", "goose_ls", "--log-level", log_level]
        env = {"GOOSE_LS_AGENT_TOKEN": token} if token is not None else {}
        editor = await start_editor(tmp_path, command, **env)
        path = write_script(
            tmp_path / "script.json",
            {
                "record": str(editor.record),
                "sessionsFile": str(tmp_path / "agent-sessions"),
                **(script or {}),
            },
        )
        agent_server = ServedAgent(path, TOKEN, **server)
        running.append((editor, agent_server))
        url = await agent_server.start()
        more = agent(agent_server) if callable(agent) else agent or {}
        await editor.start(settings={"agent": {"url": url, **more}})
        return editor, agent_server

    yield start
    for editor, agent_server in running:
        await stop_editor(editor)
        await agent_server.stop()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def refused(editor: Editor) -> tuple[str, dict[str, Any]]:
    """goose/newSession's -32001 error: its message, and its data."""
    with pytest.raises(JsonRpcException) as raised:
        await editor.new_session()
    assert raised.value.code == -32001
    assert isinstance(raised.value.data, dict)
    return str(raised.value), raised.value.data


@pytest.mark.parametrize("forms", [NEWER_AUTH, GOOSE_1_43_AUTH], ids=["newer", "goose-1.43"])
async def test_a_turn_over_websocket(served: Started, forms: tuple[str, ...]) -> None:
    editor, server = await served({"serveAuth": list(forms)})
    status = await editor.goose.agent_state("running")
    assert status["url"] == server.url and "pid" not in status
    session_id = await editor.new_session()
    end = await editor.goose.turn_end(await editor.prompt(session_id, "over the wire"))
    assert end["stopReason"] == "end_turn"
    assert "You said: over the wire" in editor.goose.text(end["messageId"])
    assert [m["method"] for m in editor.received("initialize")] == ["initialize"]


async def test_the_agent_reads_files_through_goose_ls_over_websocket(
    served: Started, tmp_path: Path
) -> None:
    """fs/* requests come over the socket and are served (and confined) as ever."""
    notes, outside = tmp_path / "workspace" / "notes.txt", tmp_path / "outside.txt"
    steps = [{"readFile": {"path": str(notes)}}, {"readFile": {"path": str(outside)}}]
    editor, _ = await served({"turns": [steps]})
    notes.write_text("in the workspace\n")
    outside.write_text("not for the agent\n")
    session_id = await editor.new_session()
    end = await editor.goose.turn_end(await editor.prompt(session_id))
    said = editor.goose.text(end["messageId"])
    assert '[read "in the workspace\\n"]' in said
    assert "[read error -32003" in said and "not for the agent" not in said


async def test_a_wrong_token_is_an_authentication_error_not_a_hang(served: Started) -> None:
    editor, server = await served(token="not-the-token")
    error, data = await refused(editor)
    assert "authentication failed" in str(error) and server.url in str(error)
    assert data["reason"] == "unauthorized"
    assert "GOOSE_LS_AGENT_TOKEN" in data["fix"]
    status = await editor.goose.agent_state("error")
    assert status["reason"] == "unauthorized" and status["url"] == server.url
    assert editor.agent_messages() == [], "nothing reached the agent"


async def test_no_token_at_all_says_one_is_wanted(served: Started) -> None:
    editor, _ = await served(token=None)
    error, data = await refused(editor)
    assert "wants a token and none is set" in error and data["reason"] == "unauthorized"


async def test_a_remote_agent_s_sign_in_is_done_where_it_runs(served: Started) -> None:
    """A terminal sign-in runs the agent's own command, which goose-ls does not have for
    an agent at a URL: none is offered, asking for one says why, and the help names the
    environment variable as the agent's to set, not agent.env (never sent there)."""
    methods = [
        {"id": "key", "name": "API key", "type": "env_var", "vars": [{"name": "UNSET_KEY"}]},
        {"id": "login", "name": "Log in", "type": "terminal", "args": ["--login"]},
    ]
    editor, server = await served({"authMethods": methods, "requireAuth": True})
    with pytest.raises(JsonRpcException, match="needs you to sign in") as raised:
        await editor.new_session()
    assert "set UNSET_KEY where the agent runs" in str(raised.value), raised.value
    assert "agent.env" not in str(raised.value)
    status = (await editor.goose.request("goose/status", {}))["agent"]
    assert status["reason"] == "auth_required" and "signIn" not in status, status
    with pytest.raises(JsonRpcException, match=f"runs at {server.url}: sign in there"):
        await editor.goose.request("goose/signInCommand", {"methodId": "login"})


async def test_an_unreachable_server_is_reported_with_its_url(editor: Editor) -> None:
    url = f"ws://127.0.0.1:{free_port()}/acp"
    await editor.start(settings={"agent": {"url": url}})
    status = await editor.goose.agent_state("error")
    assert status["reason"] == "unreachable" and status["url"] == url
    assert url in status["message"]
    error, data = await refused(editor)
    assert data["reason"] == "unreachable" and url in str(error)


async def test_a_server_restarted_mid_turn_ends_the_turn_and_the_chat_goes_on(
    served: Started,
) -> None:
    editor, server = await served({"byPrompt": {"long": [{"text": "working"}, {"hang": True}]}})
    session_id = await editor.new_session()
    long_turn = await editor.prompt(session_id, "long")
    await editor.goose.wait_for(lambda: "working" in editor.goose.text(long_turn))
    await server.kill()
    end = await editor.goose.turn_end(long_turn)
    assert server.url in end["error"] and "connection" in end["error"]
    status = await editor.goose.agent_state("error")
    assert status["reason"] == "disconnected" and status["url"] == server.url
    await server.start()  # the same port, as a restarted goose serve
    again = await editor.goose.turn_end(await editor.prompt(session_id, "again"))
    assert again["stopReason"] == "end_turn", again
    assert "You said: again" in editor.goose.text(again["messageId"])
    loads = editor.received("session/load")
    assert [m["params"]["sessionId"] for m in loads] == [session_id], "the chat was reattached"
    assert len(editor.received("initialize")) == 2


async def test_plain_ws_to_another_machine_is_refused(editor: Editor) -> None:
    """192.0.2.1 is a documentation address: the refusal comes before any connection."""
    await editor.start(settings={"agent": {"url": "ws://192.0.2.1:3284/acp"}})
    error, data = await refused(editor)
    assert data["reason"] == "insecure" and "192.0.2.1 over ws://" in error
    assert "allowInsecure" in data["fix"] and "wss://" in data["fix"]


async def test_a_token_file_that_is_a_fifo_is_refused_not_waited_on(
    served: Started, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    os.mkfifo(token_file, 0o600)
    editor, _ = await served(token=None, agent={"tokenFile": str(token_file)})
    error, data = await refused(editor)
    assert data["reason"] == "unusable" and f"{token_file} is not a plain file" in error


async def test_a_token_file_others_may_read_is_refused(served: Started, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o644)
    editor, _ = await served(token=None, agent={"tokenFile": str(token_file)})
    error, data = await refused(editor)
    assert data["reason"] == "insecure" and "chmod 600" in data["fix"]
    assert f"{token_file} may be read by others (mode -rw-r--r--)" in error
    assert editor.agent_messages() == []
    token_file.chmod(0o600)  # read again at the next start
    session_id = await editor.new_session()
    end = await editor.goose.turn_end(await editor.prompt(session_id))
    assert end["stopReason"] == "end_turn"


async def test_the_token_is_never_logged_nor_shown(served: Started, tmp_path: Path) -> None:
    editor, _ = await served(log_level="debug", agent={"token": TOKEN})
    session_id = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(session_id))
    status = await editor.goose.request("goose/status", {})
    assert status["settings"]["agent"]["token"] == "<redacted>"
    await stop_editor(editor)
    logs = list((tmp_path / "logs").iterdir())
    assert logs
    for log in logs:
        text = log.read_text(encoding="utf-8", errors="replace")
        assert "connected to the agent at ws://127.0.0.1" in text, "the log is the debug one"
        assert TOKEN not in text, f"{log} holds the token"


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 as goose serve makes one: signed by itself."""

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "goosed localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


OVER_TLS = pytest.mark.parametrize(
    ("over", "scheme"), [({}, "wss"), ({"serveOver": "http"}, "https")], ids=["websocket", "http"]
)
"""The certificate tests, over both transports: ``over`` is the served agent's script."""


@OVER_TLS
async def test_a_pinned_certificate_connects(
    served: Started, tmp_path: Path, over: dict[str, Any], scheme: str
) -> None:
    cert, key = _self_signed(tmp_path)
    editor, server = await served(
        over, cert=cert, key=key, agent=lambda server: {"tlsFingerprint": server.fingerprint}
    )
    assert server.url.startswith(f"{scheme}://127.0.0.1:")
    assert server.fingerprint.count(":") == 31
    session_id = await editor.new_session()
    end = await editor.goose.turn_end(await editor.prompt(session_id, "pinned"))
    assert "You said: pinned" in editor.goose.text(end["messageId"])


@OVER_TLS
async def test_another_certificate_than_the_pinned_one_is_refused_before_the_token(
    served: Started, tmp_path: Path, over: dict[str, Any], scheme: str
) -> None:
    cert, key = _self_signed(tmp_path)
    editor, _ = await served(over, cert=cert, key=key, agent={"tlsFingerprint": "AB:" * 31 + "AB"})
    error, data = await refused(editor)
    assert data["reason"] == "tls" and "not the pinned one" in str(error)
    assert editor.agent_messages() == []


@OVER_TLS
async def test_a_self_signed_certificate_is_not_trusted_without_a_pin(
    served: Started, tmp_path: Path, over: dict[str, Any], scheme: str
) -> None:
    cert, key = _self_signed(tmp_path)
    editor, _ = await served(over, cert=cert, key=key)
    error, data = await refused(editor)
    assert data["reason"] == "tls" and "not trusted" in str(error)
    assert "tlsFingerprint" in data["fix"]
