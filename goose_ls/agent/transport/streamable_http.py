"""ACP over streamable HTTP, as ``goose serve`` speaks it at ``/acp`` (``http://``, ``https://``).

Every request carries the token (``Authorization: Bearer`` and ``X-Secret-Key``, as the
WebSocket does). The ``initialize`` request opens a transport session: goose answers it
with an event stream (and an ``Acp-Session-Id``) that carries every message the agent
sends for the whole connection; its end is the agent's end. Later messages are POSTs with
that id: notifications and responses are answered 202, requests with another event stream
that goose leaves empty (closed at once). Any other answer (an unknown id is 404: the
server forgot the connection) ends the connection. Closing sends ``DELETE /acp``. No
redirect is followed, no proxy used; a pinned certificate is checked before the request's
headers go out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from goose_ls import __version__
from goose_ls.agent.transport.url_check import Target, check_pin

SESSION_HEADER = "Acp-Session-Id"
MESSAGE_LIMIT = 64 * 1024 * 1024
"""The largest event taken from the server; a larger one ends the connection."""
CLOSE_TIMEOUT = 2.0
"""Seconds the closing ``DELETE`` may take."""
_SEND = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class HttpRefused(Exception):
    """The server answered the first request with this HTTP status."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


Trace = Callable[[str, dict[str, Any]], Awaitable[None]]
"""httpx's request tracing hook, given as each request's ``trace`` extension."""


def pinned_client(
    target: Target,
    secret: dict[str, str],
    tls: ssl.SSLContext | None,
    pin: bytes | None,
    timeout: float,
) -> tuple[httpx.AsyncClient, httpx.URL, Trace]:
    """A client for ``target`` with the ``secret`` headers: to the checked loopback
    address rather than the name again, no redirect followed, no proxy, and the pinned
    certificate (``pin``) checked before the request's headers go out (through the
    trace hook each request is to carry). Also the URL to ask."""
    headers = {"User-Agent": f"goose-ls/{__version__}", **secret}
    url = httpx.URL(target.url)
    if target.address is not None:  # the checked loopback address, not the name again
        headers["Host"] = url.netloc.decode("ascii")
        url = url.copy_with(host=target.address)

    async def trace(event: str, info: dict[str, Any]) -> None:
        if pin is not None and event == "connection.start_tls.complete":
            check_pin(info["return_value"].get_extra_info("ssl_object"), pin, target.host)

    client = httpx.AsyncClient(
        headers=headers,
        verify=tls if tls is not None else True,
        follow_redirects=False,
        trust_env=False,
        timeout=httpx.Timeout(None, connect=timeout),
    )
    return client, url, trace


async def open_http(
    target: Target, token: str, tls: ssl.SSLContext | None, pin: bytes | None, timeout: float
) -> HttpFrames:
    """A client for ``target`` whose token the server took (asked with a ``DELETE`` of no
    session, which changes nothing); :class:`HttpRefused`, httpx's or the OS's errors if not."""
    secret = {"Authorization": f"Bearer {token}", "X-Secret-Key": token} if token else {}
    client, url, trace = pinned_client(target, secret, tls, pin, timeout)
    frames = HttpFrames(client, url, target.url, trace)
    try:
        answer = await frames.request("DELETE", timeout=timeout)
    except BaseException:
        await client.aclose()
        raise
    await answer.aclose()
    if answer.status_code >= 300 and answer.status_code != 400:  # 400: "no session id"
        await client.aclose()
        raise HttpRefused(answer.status_code)
    return frames


class HttpFrames:
    """The transport's :class:`~goose_ls.agent.transport.frames.Frames` over streamable HTTP."""

    def __init__(self, client: httpx.AsyncClient, url: httpx.URL, shown: str, trace: Any) -> None:
        self._client = client
        self._url = url
        self._shown = shown
        self._trace = trace
        self._session: str | None = None
        self._incoming: asyncio.Queue[str | None] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None
        self._why = f"at {shown} closed the connection"
        self._ended = False
        self._sending: set[asyncio.Task[None]] = set()

    async def request(
        self, method: str, body: bytes | None = None, timeout: float | None = None
    ) -> httpx.Response:
        """One request to ``/acp`` (its body unread), with the session's id once it has one."""
        headers = dict(_SEND) if body is not None else {}
        if self._session is not None:
            headers[SESSION_HEADER] = self._session
        extensions: dict[str, Any] = {"trace": self._trace}
        if timeout is not None:
            extensions["timeout"] = dict.fromkeys(("connect", "read", "write", "pool"), timeout)
        built = self._client.build_request(
            method, self._url, headers=headers, content=body, extensions=extensions
        )
        return await self._client.send(built, stream=True)

    async def read(self) -> str | None:
        return await self._incoming.get()

    def why_ended(self) -> str:
        return self._why

    def _end(self, why: str) -> None:
        if not self._ended:
            self._ended, self._why = True, why
            self._incoming.put_nowait(None)

    async def send(self, data: bytes) -> None:
        if self._ended:
            raise ConnectionResetError(self._why)
        opening = self._session is None and _method(data) == "initialize"
        try:
            answer = await self.request("POST", data)
        except (httpx.HTTPError, OSError) as exc:
            self._end(f"at {self._shown} dropped the connection ({exc or type(exc).__name__})")
            raise ConnectionResetError(self._why) from exc
        session = answer.headers.get(SESSION_HEADER)
        if opening and answer.status_code == 200 and session:
            self._session = session
            self._reader = asyncio.create_task(self._read_events(answer))
            return
        await answer.aclose()
        if answer.status_code not in (200, 202) or self._session is None:
            said = " (it no longer knows the connection)" if answer.status_code == 404 else ""
            self._end(f"at {self._shown} answered HTTP {answer.status_code}{said}")
            raise ConnectionResetError(self._why)

    async def _read_events(self, stream: httpx.Response) -> None:
        """The initialize answer's events, each ``data`` one message, until it ends."""
        why = f"at {self._shown} closed the connection"
        data: list[str] = []
        size = 0
        try:
            async for line in stream.aiter_lines():
                if line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
                    size += len(line)
                    if size > MESSAGE_LIMIT:
                        why = f"at {self._shown} sent a message over {MESSAGE_LIMIT >> 20} MiB"
                        break
                elif not line and data:
                    self._incoming.put_nowait("\n".join(data))
                    data, size = [], 0
        except (httpx.HTTPError, OSError):
            why = f"at {self._shown} dropped the connection"
        finally:
            await stream.aclose()
            self._end(why)

    def send_now(self, data: bytes) -> None:
        sending = asyncio.ensure_future(self._send_quietly(data))
        self._sending.add(sending)
        sending.add_done_callback(self._sending.discard)

    async def _send_quietly(self, data: bytes) -> None:
        with contextlib.suppress(ConnectionResetError):
            await self.send(data)

    def closing(self) -> bool:
        return self._ended

    async def close(self) -> None:
        """End the transport session (``DELETE``), then the client. The event reader and
        the sends still under way are this connection's: they end with it, waited for."""
        ending = self._session
        self._end(f"at {self._shown} was disconnected by goose-ls")
        if ending is not None:
            with contextlib.suppress(httpx.HTTPError, OSError, asyncio.TimeoutError):
                await (await self.request("DELETE", timeout=CLOSE_TIMEOUT)).aclose()
        self.abort()
        running = {*self._sending, *([self._reader] if self._reader is not None else [])}
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
        await self._client.aclose()

    def abort(self) -> None:
        """Stop reading now (goose-ls is exiting)."""
        self._end(f"at {self._shown} was disconnected by goose-ls")
        if self._reader is not None:
            self._reader.cancel()


def _method(data: bytes) -> str | None:
    try:
        message = json.loads(data)
    except ValueError:
        return None
    method = message.get("method") if isinstance(message, dict) else None
    return method if isinstance(method, str) else None
