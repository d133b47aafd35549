"""goosed's HTTP API, as goose-ls uses it: the secret, the pinned certificate, what the
server is (its version, which way it streams a turn), and its requests.

goosed answers ``GET /status`` without the secret; every other route wants it in
``X-Secret-Key`` (401 otherwise). How a turn streams depends on the version, found by
asking, never by number alone:

- 1.16 to 1.27: ``POST /reply`` answers with the turn's events (``data: <json>`` frames,
  ``Ping`` frames to keep it open); closing the stream cancels the turn.
- 1.28 and later: ``GET /sessions/{id}/events`` (frames with an ``id:``, heartbeats as
  comments, each event naming the ``request_id`` it belongs to), and the turn started by
  ``POST /sessions/{id}/reply``; ``POST /sessions/{id}/cancel`` cancels it.

The routes are told apart by a ``GET`` of ``/sessions/{id}/reply`` (a route that takes
``POST`` only answers 405; none at all, 404), which changes nothing. No redirect is
followed, no proxy used; a pinned certificate is checked before the request's headers go
out.
"""

from __future__ import annotations

import json
import logging
import re
import ssl
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import quote

import attrs
import httpx

from goose_ls.agent.transport.network import unreached
from goose_ls.agent.transport.streamable_http import pinned_client
from goose_ls.agent.transport.url_check import (
    Target,
    check_url,
    fingerprint,
    read_token,
    tls_context,
)
from goose_ls.errors import AgentError, AgentUnavailable
from goose_ls.settings import AgentSettings

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0
"""Seconds to reach goosed and have a request answered (a turn's stream has none)."""
EVENT_LIMIT = 64 * 1024 * 1024
"""The largest event taken from goosed; a larger one ends the turn with an error."""
PROBE_ID = "goose-ls-probe"
"""A session id no goosed makes (its ids are ``YYYYMMDD_N``), for questions that change nothing."""
SETTING = "agent.goosed"
FIX_URL = "Set agent.goosed to Goose Desktop's goosed, e.g. https://127.0.0.1:PORT."


@attrs.frozen
class GoosedFacts:
    """What goose-ls learned of a goosed before using it."""

    url: str
    version: str | None
    """``app_version`` from ``/system_info`` (1.3x on), else None."""
    session_events: bool
    """Whether it streams turns by session (1.28+), else by ``POST /reply``."""
    lists_sessions: bool
    """Whether ``GET /sessions`` answers (until 1.39)."""

    def describe(self) -> str:
        style = "sessions/{id}/events" if self.session_events else "POST /reply"
        return f"goosed {self.version or '(version not said)'} (turns stream by {style})"


class GoosedLost(AgentError):
    """goosed could not be reached for a request: the agent's end, as a dropped connection."""


class GoosedRefused(AgentError):
    """goosed answered a request with an error status."""

    def __init__(self, what: str, status: int, body: str) -> None:
        said = f": {body[:200]}" if body else ""
        super().__init__(f"goosed refused {what} (HTTP {status}{said})")
        self.status = status


class Goosed:
    """One goosed, reached with its secret (and pin)."""

    def __init__(
        self, client: httpx.AsyncClient, base: httpx.URL, shown: str, trace: Any, secret: str = ""
    ) -> None:
        self._client = client
        self.secret = secret
        """What goosed is sent in ``X-Secret-Key``: never repeated from what goosed says."""
        self._base = base
        self.url = shown
        self._trace = trace
        self.facts = GoosedFacts(shown, None, False, False)

    def _url(self, path: str) -> httpx.URL:
        return self._base.copy_with(path=self._base.path.rstrip("/") + path)

    def _request(self, method: str, path: str, body: Any = None) -> httpx.Request:
        content = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if content is not None else {}
        if (method == "GET" and path.endswith("/events")) or path == "/reply":
            headers["Accept"] = "text/event-stream"
        return self._client.build_request(
            method,
            self._url(path),
            content=content,
            headers=headers,
            extensions={"trace": self._trace},
        )

    async def call(self, method: str, path: str, body: Any = None, what: str = "") -> Any:
        """One request answered in full: its JSON (or text), or :class:`GoosedRefused`."""
        answer = await self._send(self._request(method, path, body), stream=False)
        text = answer.text
        if answer.status_code >= 300:
            raise GoosedRefused(what or f"{method} {path}", answer.status_code, text.strip())
        if not text.strip():
            return None
        try:
            return json.loads(text)
        except ValueError:
            return text

    async def status_of(self, method: str, path: str) -> int:
        """Only the status a request is answered with (its body left unread)."""
        answer = await self._send(self._request(method, path), stream=True)
        await answer.aclose()
        return answer.status_code

    async def _send(self, request: httpx.Request, stream: bool) -> httpx.Response:
        try:
            return await self._client.send(request, stream=stream)
        except httpx.TimeoutException as exc:
            raise GoosedLost(f"goosed at {self.url} did not answer in time") from exc
        except (httpx.HTTPError, OSError) as exc:
            raise GoosedLost(f"goosed at {self.url} dropped the connection ({exc})") from exc

    async def stream(self, method: str, path: str, body: Any = None) -> httpx.Response:
        """A request whose answer is an event stream, its headers read (the caller closes
        it); :class:`GoosedRefused` when it is not one."""
        answer = await self._send(self._request(method, path, body), stream=True)
        if answer.status_code >= 300:
            text = (await answer.aread()).decode("utf-8", "replace").strip()
            await answer.aclose()
            raise GoosedRefused(f"{method} {path}", answer.status_code, text)
        return answer

    async def aclose(self) -> None:
        await self._client.aclose()


def session_path(session_id: str, tail: str = "") -> str:
    """``/sessions/<id><tail>``, the id quoted whole (an agent's id is never a path)."""
    return f"/sessions/{quote(session_id, safe='')}{tail}"


async def events(stream: httpx.Response) -> AsyncIterator[tuple[str | None, dict[str, Any]]]:
    """The stream's events as goosed frames them: ``id:`` (or none) and one ``data:``
    JSON object each, ended by a blank line; comments (``: ping``) and anything that is
    not a JSON object are skipped. An event (or a line that never ends) over
    :data:`EVENT_LIMIT` ends the turn with an error as soon as it is that long."""
    data: list[str] = []
    event_id: str | None = None
    size = 0
    async for line in _lines(stream):
        if line.startswith(":"):
            continue
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
            size += len(line)
            if size > EVENT_LIMIT:
                raise AgentError(f"goosed sent an event over {EVENT_LIMIT >> 20} MiB")
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif not line and data:
            try:
                event = json.loads("\n".join(data))
            except ValueError:
                event = None
            if isinstance(event, dict):
                yield event_id, event
            else:
                log.warning("skipped an event from goosed that is not a JSON object")
            data, event_id, size = [], None, 0


_LINE_END = re.compile(rb"\r\n|\r|\n")


async def _lines(stream: httpx.Response) -> AsyncIterator[str]:
    """The stream's lines (ended by CR LF, CR or LF, as server-sent events are), each
    UTF-8 with what is not shown as U+FFFD; a line still unended past
    :data:`EVENT_LIMIT` bytes is an error then, not a buffer that grows without end."""
    pending = bytearray()
    async for chunk in stream.aiter_bytes():
        start, seen = 0, max(len(pending) - 1, 0)  # what was looked at already holds no end
        pending += chunk
        while (found := _LINE_END.search(pending, max(start, seen))) is not None:
            if found.group() == b"\r" and found.end() == len(pending):
                break  # a CR last: its LF may be in the next chunk
            yield pending[start : found.start()].decode("utf-8", "replace")
            start = found.end()
        del pending[:start]
        if len(pending) > EVENT_LIMIT:
            raise AgentError(f"goosed sent a line over {EVENT_LIMIT >> 20} MiB without its end")
    if pending:
        yield pending.rstrip(b"\r").decode("utf-8", "replace")


async def open_goosed(settings: AgentSettings, environ: Mapping[str, str]) -> Goosed:
    """goosed at ``agent.goosed``, reached, its secret taken and what it is found out;
    :class:`AgentUnavailable` (``unreachable``, ``unauthorized``, ``tls``, ``unusable``)
    saying why not."""
    url = settings.goosed.strip()
    target = await check_url(settings, url, SETTING, ("http", "https"), FIX_URL)
    secret, _ = read_token(settings, environ)
    tls = tls_context(settings) if target.secure else None
    pin = fingerprint(settings.tls_fingerprint) if settings.tls_fingerprint else None
    goosed = _client(target, secret, tls, pin, min(CONNECT_TIMEOUT, settings.request_timeout))
    try:
        goosed.facts = await _probe(goosed, target, bool(secret), settings.request_timeout)
    except BaseException:
        await goosed.aclose()
        raise
    log.info("connected to %s at %s", goosed.facts.describe(), url)
    return goosed


def _client(
    target: Target, secret: str, tls: ssl.SSLContext | None, pin: bytes | None, timeout: float
) -> Goosed:
    headers = {"X-Secret-Key": secret} if secret else {}
    client, url, trace = pinned_client(target, headers, tls, pin, timeout)
    return Goosed(client, url, target.url, trace, secret)


async def _probe(goosed: Goosed, target: Target, had_secret: bool, timeout: float) -> GoosedFacts:
    """``/status`` (reachable), then the secret and the version, then the turn's routes."""
    try:
        status = await goosed.call("GET", "/status", what="GET /status")
    except GoosedRefused as refused:  # something answers, but not as goosed does
        raise AgentUnavailable(
            "unusable",
            f"{goosed.url} answers, but is not goosed (GET /status: HTTP {refused.status})",
            FIX_URL,
        ) from None
    except AgentError as exc:
        raise _unreached(goosed.url, target, exc, timeout) from None
    if status != "ok":
        raise AgentUnavailable(
            "unusable",
            f"{goosed.url} answered /status with {str(status)[:40]!r}, not goosed's ok",
            FIX_URL,
        )
    version: str | None = None
    try:
        about = await goosed.call("GET", "/system_info")
        info = 200
        found = about.get("app_version") if isinstance(about, dict) else None
        version = found[:40] if isinstance(found, str) else None
    except GoosedRefused as refused:
        info = refused.status
    if info == 404:
        # older: no /system_info; a session that does not exist says whether we may ask
        info = await goosed.status_of("GET", session_path(PROBE_ID))
    if info in (401, 403):
        given = "refused the secret" if had_secret else "wants a secret and none is set"
        raise AgentUnavailable(
            "unauthorized",
            f"authentication failed: goosed at {goosed.url} {given} (HTTP {info})",
            "Set GOOSE_LS_AGENT_TOKEN (or agent.tokenFile) to the GOOSE_SERVER__SECRET_KEY "
            "goosed runs with (see `goose-ls doctor --find-goosed`).",
        )
    session_events = await goosed.status_of("GET", session_path(PROBE_ID, "/reply")) == 405
    replies = session_events or await goosed.status_of("GET", "/reply") == 405
    if not replies:
        raise AgentUnavailable(
            "unusable",
            f"{goosed.url} answers /status but takes no turn (no /reply): not goosed",
            "For goose serve (ACP) set agent.url instead, e.g. ws://127.0.0.1:3284/acp.",
        )
    lists = await goosed.status_of("GET", "/sessions") == 200
    return GoosedFacts(goosed.url, version, session_events, lists)


def _unreached(url: str, target: Target, exc: AgentError, timeout: float) -> AgentUnavailable:
    """The OS's (or TLS's) reason under httpx's, told as for ``agent.url``."""
    if isinstance(exc, AgentUnavailable):
        return exc
    seen: BaseException | None = exc
    while seen is not None and not isinstance(seen, OSError | AgentUnavailable):
        seen = seen.__cause__ or seen.__context__
    if isinstance(seen, AgentUnavailable):  # the pin's refusal, raised inside the trace
        return seen
    found = unreached(url, target.host, seen or exc, timeout)
    fix = found.fix or ""
    if found.reason == "unreachable":
        fix = (
            "Start Goose Desktop (its goosed), or correct agent.goosed "
            "(`goose-ls doctor --find-goosed` shows a running one)."
        )
    return AgentUnavailable(found.reason or "unreachable", found.message, fix)
