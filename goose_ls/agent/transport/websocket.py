"""ACP over a WebSocket, as ``goose serve`` speaks it: one JSON-RPC message a text frame.

Opened with the token in the upgrade request's headers (``X-Secret-Key``, which goose
1.38 to 1.43 read, and ``Authorization: Bearer``, which the ``goose-acp`` transport in
goose's repository reads; never in the URL), no
redirect followed (the token would go along), no proxy, and the websockets library's own
logger kept above DEBUG (it would log the headers). A pinned certificate is checked
after the TLS handshake and before the upgrade request, so a wrong server never sees the
token. Pings every 20 s notice a connection the network dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from goose_ls import __version__
from goose_ls.agent.transport.frames import drop
from goose_ls.agent.transport.url_check import Target, check_pin

MESSAGE_LIMIT = 64 * 1024 * 1024
"""The largest message taken from the server (a session/load replay, a file's content);
a larger one ends the connection."""

CLOSE_TIMEOUT = 2.0
"""Seconds to wait for the server's answer to goose-ls closing the connection."""

_quiet = logging.getLogger("goose_ls.agent.transport.websocket.frames")
_quiet.setLevel(logging.INFO)  # its DEBUG lines would show the upgrade's headers

_KEEPALIVE = 1011


class _NoRedirects(connect):
    """A redirect is answered as the error it is: following it would send the token on."""

    def process_redirect(self, exc: Exception) -> Exception:
        return exc


Check = Callable[[asyncio.BaseTransport], Awaitable[None]]
"""A look at the open connection before the upgrade request, which carries the token:
it raises to refuse (a certificate not the pinned one, a port another user holds)."""


def pinned(pin: bytes, host: str) -> Check:
    """The check that the connection's certificate is the pinned one."""

    async def check(transport: asyncio.BaseTransport) -> None:
        check_pin(transport.get_extra_info("ssl_object"), pin, host)

    return check


def _checked(check: Check) -> type[ClientConnection]:
    """A connection class that runs ``check`` before it sends the upgrade."""

    class Checked(ClientConnection):
        async def handshake(self, *args: Any, **kwargs: Any) -> None:
            await check(self.transport)
            await super().handshake(*args, **kwargs)

    return Checked


async def open_websocket(
    target: Target,
    token: str,
    tls: ssl.SSLContext | None,
    timeout: float,
    check: Check | None = None,
) -> WebSocketFrames:
    """Connect and upgrade; the errors are websockets' and the OS's (see :mod:`.network`),
    and ``check``'s."""
    headers = {"Authorization": f"Bearer {token}", "X-Secret-Key": token} if token else {}
    options: dict[str, Any] = {}
    if target.address is not None:
        options.update(host=target.address, port=target.port)
    if tls is not None:
        options["ssl"] = tls
    ws = await _NoRedirects(
        target.url,
        additional_headers=headers,
        user_agent_header=f"goose-ls/{__version__}",
        compression=None,
        open_timeout=timeout,
        close_timeout=CLOSE_TIMEOUT,
        max_size=MESSAGE_LIMIT,
        proxy=None,
        logger=_quiet,
        create_connection=_checked(check) if check is not None else None,
        **options,
    )
    return WebSocketFrames(ws, target.url)


class WebSocketFrames:
    """The transport's :class:`~goose_ls.agent.transport.frames.Frames` over an open WebSocket."""

    def __init__(self, ws: ClientConnection, url: str) -> None:
        self._ws = ws
        self._url = url
        self._why = f"at {url} closed the connection"
        self._sending: set[asyncio.Future[None]] = set()

    async def read(self) -> str | None:
        while True:
            try:
                message = await self._ws.recv()
            except ConnectionClosed as exc:
                self._why = self._describe(exc)
                return None
            if isinstance(message, str):
                return message
            drop(message, "a binary frame; ACP messages are text frames")

    def why_ended(self) -> str:
        return self._why

    def _describe(self, exc: ConnectionClosed) -> str:
        where = f"at {self._url}"
        if exc.rcvd is not None:
            said = f": {exc.rcvd.reason}" if exc.rcvd.reason else ""
            return f"{where} closed the connection (code {exc.rcvd.code}{said})"
        if exc.sent is not None and exc.sent.code == _KEEPALIVE:
            return f"{where} stopped answering (no pong within 20 s)"
        if exc.sent is not None and exc.sent.code == 1009:
            return f"{where} sent a message over {MESSAGE_LIMIT >> 20} MiB"
        if exc.sent is not None:
            return f"{where} was disconnected by goose-ls"
        return f"{where} dropped the connection"

    async def send(self, data: bytes) -> None:
        try:
            await self._ws.send(data, text=True)
        except ConnectionClosed as exc:
            raise ConnectionResetError(self._describe(exc)) from exc

    def send_now(self, data: bytes) -> None:
        sending = asyncio.ensure_future(self._ws.send(data, text=True))
        self._sending.add(sending)
        sending.add_done_callback(self._sent)

    def _sent(self, sending: asyncio.Future[None]) -> None:
        self._sending.discard(sending)
        if not sending.cancelled():
            sending.exception()  # a closed connection: nothing more to say

    def closing(self) -> bool:
        return self._ws.state is not State.OPEN

    async def close(self) -> None:
        await self._ws.close()
        sending = set(self._sending)  # this connection's: they end with it, waited for
        for task in sending:
            task.cancel()
        if sending:
            await asyncio.wait(sending)

    def abort(self) -> None:
        """Drop the connection now (goose-ls is exiting, its loop may be gone)."""
        with contextlib.suppress(Exception):
            self._ws.transport.abort()
