"""The scripted agent served as ``goose serve`` serves goose: ACP over a WebSocket at
``/acp``, one JSON-RPC message a text frame, a token required.

As goose does on the wire:

- ``GET /health`` and ``GET /status`` answer ``ok`` without a token;
- ``/acp`` takes the token the way the script's ``serveAuth`` names (default: the forms
  of the ``goose-acp`` transport in goose's repository, ``bearer`` (``Authorization:
  Bearer``) and ``subprotocol`` (the offered ``goose-acp-auth.<token>``, echoed back);
  goose 1.38 to 1.43 took ``x-secret-key`` (the ``X-Secret-Key`` header) and ``query``
  (``?token=``)); anything else is HTTP 401;
- a browser's ``Origin`` that is not loopback is HTTP 403;
- every WebSocket gets an agent of its own (and an ``Acp-Connection-Id``), over the
  process's one set of sessions and active runs (see :mod:`.server_state`): a session
  made on one connection is listed and loaded on another, and prompted on one while its
  run goes on for another, is refused as goose refuses it; the sessions are also kept in
  the script's ``sessionsFile`` as goose keeps them in its database;
- the token is ``GOOSE_SERVER__SECRET_KEY``; without it the server will not start;
- with a certificate it serves TLS and prints ``GOOSED_CERT_FINGERPRINT=AB:CD:...``.

When it listens it prints ``listening on ws://HOST:PORT/acp`` (``wss://`` with TLS).
A script whose ``serveOver`` is ``http`` is served over streamable HTTP instead (see
:mod:`.serve_http`).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import ssl
import sys
import uuid
from collections.abc import Sequence
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.typing import Subprotocol

from goose_ls.scripted.agent import ScriptedAgent
from goose_ls.scripted.peer import Peer
from goose_ls.scripted.server_state import ServerState

SECRET_VARIABLE = "GOOSE_SERVER__SECRET_KEY"
SUBPROTOCOL_PREFIX = "goose-acp-auth."
NEWER_AUTH = ("bearer", "subprotocol")
"""What the ``goose-acp`` crate's ``goose serve`` takes (``crates/goose-acp/src/transport.rs``)."""
GOOSE_1_43_AUTH = ("x-secret-key", "query")
"""What goose 1.38 to 1.43 took (``crates/goose/src/acp/transport/auth.rs``)."""
LOOPBACK_ORIGINS = ("localhost", "127.0.0.1", "[::1]")


class FrameLines:
    """A WebSocket's text frames as the lines :class:`Peer` reads."""

    def __init__(self, ws: ServerConnection) -> None:
        self._ws = ws

    async def readline(self) -> bytes:
        while True:
            try:
                message = await self._ws.recv()
            except ConnectionClosed:
                return b""
            if isinstance(message, str):  # goose ignores binary frames
                return message.encode()


class FrameSink:
    """What :class:`Peer` writes, a text frame per message."""

    def __init__(self, ws: ServerConnection) -> None:
        self._ws = ws
        self._queued: list[bytes] = []

    def write(self, data: bytes) -> None:
        self._queued.append(data.rstrip(b"\n"))

    async def drain(self) -> None:
        while self._queued:
            try:
                await self._ws.send(self._queued.pop(0), text=True)
            except ConnectionClosed as exc:
                raise ConnectionResetError("the client went away") from exc

    def close(self) -> None:
        self._ws.transport.close()


def _authorized(request: Request, token: str, forms: list[str]) -> str | None:
    """How the request carries the token (a form of ``forms``), or None."""
    headers = request.headers

    def same(candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(candidate.encode(), token.encode())

    bearer = headers.get("Authorization", "")
    if "bearer" in forms and bearer.startswith("Bearer ") and same(bearer[7:].strip()):
        return "bearer"
    if "subprotocol" in forms and _subprotocol(headers, token):
        return "subprotocol"
    if "x-secret-key" in forms and same(headers.get("X-Secret-Key")):
        return "x-secret-key"
    query = parse_qs(urlsplit(request.path).query).get("token")
    if "query" in forms and query and same(query[0]):
        return "query"
    return None


def _subprotocol(headers: Headers, token: str) -> str | None:
    offered = [p.strip() for v in headers.get_all("Sec-WebSocket-Protocol") for p in v.split(",")]
    wanted = SUBPROTOCOL_PREFIX + token
    return next((p for p in offered if hmac.compare_digest(p.encode(), wanted.encode())), None)


def _origin_allowed(origin: str) -> bool:
    if not origin.startswith("http://"):
        return False
    host = origin[len("http://") :]
    return host.rsplit(":", 1)[0] in LOOPBACK_ORIGINS or host in LOOPBACK_ORIGINS


def _tls(cert: Path | None, key: Path | None) -> ssl.SSLContext | None:
    """TLS with this certificate, its fingerprint printed as goose prints it."""
    if cert is None or key is None:
        return None
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    der = ssl.PEM_cert_to_DER_cert(cert.read_text(encoding="ascii"))
    digest = hashlib.sha256(der).digest()
    print("GOOSED_CERT_FINGERPRINT=" + ":".join(f"{b:02X}" for b in digest), flush=True)
    return tls


async def serve_script(
    script: dict[str, Any], host: str, port: int, cert: Path | None, key: Path | None
) -> None:
    token = os.environ.get(SECRET_VARIABLE, "").strip()
    if not token:
        sys.exit(f"{SECRET_VARIABLE} must be set to start `goose serve`")
    forms = list(script.get("serveAuth", NEWER_AUTH))
    record = Path(script["record"]) if script.get("record") else None
    tls = _tls(cert, key)
    if script.get("serveOver") == "http":
        from goose_ls.scripted.serve_http import serve_http

        return await serve_http(script, lambda r: _authorized(r, token, forms), host, port, tls)

    def process_request(connection: ServerConnection, request: Request) -> Response | None:
        path = urlsplit(request.path).path
        if path in ("/health", "/status"):
            return connection.respond(HTTPStatus.OK, "ok")
        if path != "/acp":
            return connection.respond(HTTPStatus.NOT_FOUND, "")
        if not _authorized(request, token, forms):
            return connection.respond(HTTPStatus.UNAUTHORIZED, "")
        origin = request.headers.get("Origin")
        if origin is not None and not _origin_allowed(origin):
            return connection.respond(HTTPStatus.FORBIDDEN, "")
        return None

    def select_subprotocol(
        connection: ServerConnection, offered: Sequence[Subprotocol]
    ) -> Subprotocol | None:
        if "subprotocol" not in forms or connection.request is None:
            return None
        chosen = _subprotocol(connection.request.headers, token)
        return Subprotocol(chosen) if chosen else None

    def process_response(
        connection: ServerConnection, request: Request, response: Response
    ) -> Response:
        response.headers["Acp-Connection-Id"] = str(uuid.uuid4())
        return response

    shared = ServerState()

    async def one_connection(ws: ServerConnection) -> None:
        peer = Peer(FrameLines(ws), FrameSink(ws), record)
        agent = ScriptedAgent(script, peer, shared)
        await peer.listen(agent.request, agent.notification)

    async with serve(
        one_connection,
        host,
        port,
        ssl=tls,
        process_request=process_request,
        process_response=process_response,
        select_subprotocol=select_subprotocol,
        max_size=None,
        compression=None,
    ) as server:
        bound = next(iter(server.sockets)).getsockname()[1]
        scheme = "wss" if tls else "ws"
        print(f"listening on {scheme}://{host}:{bound}/acp", flush=True)
        await server.serve_forever()
