"""The scripted agent served over ACP's streamable HTTP at ``/acp``, as ``goose serve``
serves it (``crates/goose-acp/src/transport/http.rs`` in goose's repository), for a
script whose ``serveOver`` is ``http``.

On the wire, as goose does: the token on every request to ``/acp`` (else 401, see
:mod:`.serve`); ``POST`` of an ``initialize`` makes a transport session (an agent of its
own over the process's one :class:`.ServerState`) and answers an event stream, with its
``Acp-Session-Id``, that carries everything the agent sends until the session ends; a
later request is answered with an event stream that stays empty, a notification or a
response 202; an unknown id 404 ``Session not found``; a missing one 400; ``DELETE`` ends
the session. One request a connection (``Connection: close``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from websockets.datastructures import Headers
from websockets.http11 import Request

from goose_ls.scripted.agent import ScriptedAgent
from goose_ls.scripted.peer import Peer
from goose_ls.scripted.server_state import ServerState

SESSION_HEADER = "Acp-Session-Id"
_REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}


class Inbox:
    """The session's messages to the agent, as the lines :class:`Peer` reads."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()

    async def readline(self) -> bytes:
        return await self.queue.get()


class EventSink:
    """What :class:`Peer` writes, an event per message on the initialize answer."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    def write(self, data: bytes) -> None:
        self._writer.write(b"data: " + data.rstrip(b"\n") + b"\n\n")

    async def drain(self) -> None:
        await self._writer.drain()

    def close(self) -> None:
        self._writer.close()


class HttpServer:
    """The transport sessions of one served process, and the answer to each request."""

    def __init__(self, script: dict[str, Any], authorized: Any) -> None:
        self._script = script
        self._authorized = authorized
        self._record = Path(script["record"]) if script.get("record") else None
        self._shared = ServerState()
        self._sessions: dict[str, Inbox] = {}

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, ValueError, asyncio.IncompleteReadError):
            try:
                await self._one_request(reader, writer)
            finally:
                writer.close()

    async def _one_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        method, target, _ = (await reader.readline()).decode("latin-1").split(" ", 2)
        headers = Headers()
        while (line := (await reader.readline()).decode("latin-1").strip()) != "":
            name, _, value = line.partition(":")
            headers[name.strip()] = value.strip()
        body = await reader.readexactly(int(headers.get("Content-Length", "0")))
        path = urlsplit(target).path
        if path in ("/health", "/status") and method == "GET":
            return await _answer(writer, 200, b"ok")
        if path != "/acp":
            return await _answer(writer, 404)
        if not self._authorized(Request(target, headers)):
            return await _answer(writer, 401)
        session = headers.get(SESSION_HEADER)
        if method == "DELETE":
            return await self._delete(writer, session)
        if method != "POST":
            return await _answer(writer, 400)
        message = json.loads(body)
        if isinstance(message, dict) and message.get("method") == "initialize":
            return await self._initialize(writer, body)
        inbox = self._sessions.get(session or "")
        if session is None:
            return await _answer(writer, 400, b"Bad Request: Acp-Session-Id header required")
        if inbox is None:
            return await _answer(writer, 404, b"Session not found")
        inbox.queue.put_nowait(body)
        if isinstance(message, dict) and "method" in message and "id" in message:
            return await _answer(writer, 200, stream=True)  # goose's stream that stays empty
        return await _answer(writer, 202)

    async def _initialize(self, writer: asyncio.StreamWriter, body: bytes) -> None:
        session = str(uuid.uuid4())
        inbox = self._sessions[session] = Inbox()
        inbox.queue.put_nowait(body)
        await _answer(writer, 200, stream=True, more={SESSION_HEADER: session})
        peer = Peer(inbox, EventSink(writer), self._record)
        agent = ScriptedAgent(self._script, peer, self._shared)
        try:
            await peer.listen(agent.request, agent.notification)
        finally:
            self._sessions.pop(session, None)

    async def _delete(self, writer: asyncio.StreamWriter, session: str | None) -> None:
        if session is None:
            return await _answer(writer, 400, b"Bad Request: Acp-Session-Id header required")
        inbox = self._sessions.pop(session, None)
        if inbox is None:
            return await _answer(writer, 404, b"Session not found")
        inbox.queue.put_nowait(b"")  # the agent's end: its stream ends
        await _answer(writer, 202)


async def _answer(
    writer: asyncio.StreamWriter,
    status: int,
    body: bytes = b"",
    stream: bool = False,
    more: dict[str, str] | None = None,
) -> None:
    """The status line and headers, then ``body`` (an event stream goes on after them)."""
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, '')}", "Connection: close"]
    if stream:
        lines += ["Content-Type: text/event-stream", "Cache-Control: no-cache"]
    else:
        lines.append(f"Content-Length: {len(body)}")
    lines += [f"{name}: {value}" for name, value in (more or {}).items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
    await writer.drain()


async def serve_http(
    script: dict[str, Any], authorized: Any, host: str, port: int, tls: ssl.SSLContext | None
) -> None:
    """Serve until killed; print ``listening on http://HOST:PORT/acp`` (``https://``)."""
    state = HttpServer(script, authorized)
    server = await asyncio.start_server(state.connection, host, port, ssl=tls)
    bound = next(iter(server.sockets)).getsockname()[1]
    print(f"listening on {'https' if tls else 'http'}://{host}:{bound}/acp", flush=True)
    async with server:
        await server.serve_forever()
