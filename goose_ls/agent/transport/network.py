"""The agent as a server goose-ls connects to: ``goose serve`` at ``agent.url``, over a
WebSocket (``ws://``, ``wss://``: :mod:`.websocket`) or streamable HTTP (``http://``,
``https://``: :mod:`.streamable_http`).

Each start connects anew (the token is read again, so a fixed token file takes effect
without restarting goose-ls); goose serves each connection with an agent of its own, its
sessions kept in its database, so a reconnected goose-ls reattaches them. Failures to
connect are told apart, each with its fix: ``unreachable`` (nothing answers; the status
names the URL), ``unauthorized`` (the token was refused: HTTP 401, answered at once),
``tls`` (the certificate is untrusted, or not the pinned one), ``insecure`` (refused
before connecting: see :mod:`.url_check`). A connection that drops later is the agent's
end, with the reason ``disconnected``: recovery reconnects and reattaches the chats.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable, Mapping
from typing import Any

import httpx
from websockets.exceptions import InvalidHandshake, InvalidStatus

from goose_ls.agent.transport.frames import Frames
from goose_ls.agent.transport.streamable_http import HttpFrames, HttpRefused, open_http
from goose_ls.agent.transport.url_check import (
    Target,
    check_pin,
    check_url,
    fingerprint,
    read_token,
    tls_context,
)
from goose_ls.agent.transport.websocket import WebSocketFrames, open_websocket, pinned
from goose_ls.errors import AgentError, AgentUnavailable
from goose_ls.settings import AgentSettings
from goose_ls.tasks import within

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0
"""Seconds to reach the server and have the upgrade answered."""


class NetworkEndpoint:
    """``agent.url``: a ``goose serve`` reached over a WebSocket or streamable HTTP."""

    command: list[str] = []
    lost = "disconnected"

    def __init__(
        self,
        settings: AgentSettings,
        environ: Mapping[str, str],
        warn: Callable[[str], None],
    ) -> None:
        self._settings = settings
        self._environ = environ
        self._warn = warn
        self.url = settings.url.strip()
        self.fix = (
            f"Check that goose serve runs at {self.url} (`goose-ls doctor --url {self.url}`); "
            "goose-ls reconnects by itself."
        )

    def facts(self) -> dict[str, Any]:
        return {"url": self.url}

    async def stop_server(self, grace: float) -> bool:
        return False  # the server at agent.url is not goose-ls's to stop

    async def open(self) -> NetworkChannel:
        settings = self._settings
        target = await check_url(settings)
        token, _ = read_token(settings, self._environ)
        if target.insecure:
            warning = (
                f"agent.allowInsecure: the token and the chat go to {target.host} "
                f"unencrypted ({target.url.partition(':')[0]}://)"
            )
            log.warning("%s", warning)
            self._warn(warning)
        tls = tls_context(settings) if target.secure else None
        pin = fingerprint(settings.tls_fingerprint) if settings.tls_fingerprint else None
        timeout = min(CONNECT_TIMEOUT, settings.request_timeout)
        if target.http:
            return NetworkChannel(await self._open_http(target, token, tls, pin, timeout), self.url)
        try:
            check = pinned(pin, target.host) if pin is not None else None
            frames = await open_websocket(target, token, tls, timeout, check)
        except InvalidStatus as exc:
            raise self._refused(exc.response.status_code, bool(token)) from None
        except (OSError, asyncio.TimeoutError) as exc:
            raise unreached(self.url, target.host, exc, timeout) from None
        except InvalidHandshake as exc:
            raise AgentError(f"{self.url} did not open a WebSocket: {exc}") from None
        log.info("connected to the agent at %s", self.url)
        return NetworkChannel(frames, self.url)

    async def _open_http(
        self,
        target: Target,
        token: str,
        tls: ssl.SSLContext | None,
        pin: bytes | None,
        timeout: float,
    ) -> HttpFrames:
        try:
            frames = await open_http(target, token, tls, pin, timeout)
        except HttpRefused as exc:
            raise self._refused(exc.status, bool(token)) from None
        except httpx.TimeoutException as exc:
            raise unreached(self.url, target.host, asyncio.TimeoutError(), timeout) from exc
        except httpx.HTTPError as exc:
            raise unreached(self.url, target.host, _underlying(exc), timeout) from None
        except OSError as exc:
            raise unreached(self.url, target.host, exc, timeout) from None
        log.info("connected to the agent at %s", self.url)
        return frames

    def _refused(self, status: int, had_token: bool) -> AgentError:
        if status in (401, 403):
            given = "refused the token" if had_token else "wants a token and none is set"
            return AgentUnavailable(
                "unauthorized",
                f"authentication failed: goose serve at {self.url} {given} (HTTP {status})",
                "Set GOOSE_LS_AGENT_TOKEN (or agent.tokenFile) to the "
                "GOOSE_SERVER__SECRET_KEY goose serve runs with.",
            )
        return AgentError(
            f"{self.url} answered HTTP {status} instead of taking ACP"
            f"{' (goose-ls follows no redirect)' if 300 <= status < 400 else ''}",
            fix="Check agent.url: goose serve takes ACP at /acp.",
        )


def _underlying(exc: BaseException) -> BaseException:
    """The OS's error under httpx's (an untrusted certificate is told apart by it)."""
    seen: BaseException | None = exc
    while seen is not None and not isinstance(seen, OSError):
        seen = seen.__cause__ or seen.__context__
    return seen or exc


def unreached(url: str, host: str, exc: BaseException, timeout: float) -> AgentUnavailable:
    """What failing to reach ``url`` means for the user: an untrusted certificate, or
    nothing that answers."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        return AgentUnavailable(
            "tls",
            f"the certificate of {host} is not trusted: {exc.verify_message}",
            "Set agent.tlsFingerprint to the GOOSED_CERT_FINGERPRINT goose serve "
            "printed, or give it a certificate your system trusts.",
        )
    if isinstance(exc, asyncio.TimeoutError):
        why = f"no answer within {timeout:g} s"
    else:
        why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return AgentUnavailable(
        "unreachable",
        f"nothing answers at {url} ({why})",
        "Start goose serve there (with GOOSE_SERVER__SECRET_KEY set), or correct agent.url.",
    )


async def health(settings: AgentSettings) -> str:
    """``GET /status`` (goose serve answers ``ok`` without a token, as it answers
    ``/health``): the answer's status line and body, for ``goose-ls doctor``."""
    target = await check_url(settings)
    tls = tls_context(settings) if target.secure else None
    pin = fingerprint(settings.tls_fingerprint) if settings.tls_fingerprint else None
    timeout = min(CONNECT_TIMEOUT, settings.request_timeout)
    host = target.address or target.host
    try:
        reader, writer = await within(
            timeout,
            asyncio.open_connection(
                host, target.port, ssl=tls, server_hostname=target.host if tls else None
            ),
        )
    except (OSError, asyncio.TimeoutError) as exc:
        raise unreached(settings.url, target.host, exc, timeout) from None
    try:
        if pin is not None:
            check_pin(writer.get_extra_info("ssl_object"), pin, target.host)
        status, body = await ask_status(reader, writer, f"{target.host}:{target.port}", timeout)
    except (OSError, asyncio.TimeoutError) as exc:
        raise unreached(settings.url, target.host, exc, timeout) from None
    finally:
        writer.close()
    return f"GET /status: {status or 'no HTTP answer'} {body[:40]!r}"


async def ask_status(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, authority: str, timeout: float
) -> tuple[str, str]:
    """``GET /status`` on an open connection: the answer's status (``200 OK``) and body."""
    writer.write(f"GET /status HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n".encode())
    answer = await within(timeout, reader.read(4096))
    head, _, body = answer.decode("utf-8", "replace").partition("\r\n\r\n")
    return head.split("\r\n", 1)[0].partition(" ")[2], body.strip()


class NetworkChannel:
    """One open connection to the server."""

    pid = None

    def __init__(self, frames: WebSocketFrames | HttpFrames, url: str) -> None:
        self._frames = frames
        self._url = url

    @property
    def frames(self) -> Frames:
        return self._frames

    def facts(self) -> dict[str, Any]:
        return {"url": self._url}

    async def ended(
        self, output_ended: asyncio.Future[str], stopping: Callable[[], bool]
    ) -> tuple[str, bool]:
        reason = await output_ended
        if not stopping():
            log.error("the agent %s", reason)
        return reason, True  # a connection that ends is never expected

    def hint(self) -> str:
        return ""

    async def close(self, grace: float) -> None:
        await self._frames.close()

    def close_now(self, grace: float) -> None:
        self._frames.abort()
