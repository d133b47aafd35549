"""A fake model API on 127.0.0.1, so that a real agent runs a turn offline: what the
OpenAI and the Anthropic fakes share (:mod:`.fake_model`, :mod:`.fake_anthropic`).

Each turn request (``POST`` to the API's turn path) takes the next scripted reply and is
answered with server-sent events; every request is kept, so a test can check what the
agent asked; anything else is answered as the API's fake says, else 404. The server runs in its own thread: goose-ls
and the agent are other processes, and the test's event loop stays free.
"""

from __future__ import annotations

import json
import os
import select
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Generic, Protocol, TypeVar
from urllib.parse import urlsplit

import attrs


class Streamed(Protocol):
    """What the server reads of every scripted reply: whether its stream stays open
    until the agent closes it (a turn to cancel)."""

    @property
    def hangs(self) -> bool: ...


R = TypeVar("R", bound=Streamed)


@attrs.frozen
class Request:
    """One request as the server read it; header names in lower case, as HTTP ignores theirs."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


Event = dict[str, Any]
"""One server-sent event: its ``type`` is also the event's name."""


class FakeApi(Generic[R]):
    """The server: ``with Fake([...]) as api:``; ``api.base_url`` for the agent. A
    subclass names its turn path and streams a reply as its API does."""

    TURN_PATH: ClassVar[str]
    """The path (no query) of a turn request, e.g. ``/v1/responses``."""

    def __init__(self, replies: list[R]) -> None:
        self.replies = list(replies)
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        """Written on close, to free the handlers of hanging replies."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self: F) -> F:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        os.write(self._wake_w, b"x")
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def turns(self) -> list[Request]:
        """The turns the agent asked for, in order."""
        with self._lock:
            return [r for r in self.requests if self._is_turn(r)]

    def stream(self, reply: R, n: int, request: Request) -> Iterator[Event]:
        """The events that answer ``request``, the ``n``th turn, with ``reply``."""
        raise NotImplementedError

    def aside(self, request: Request) -> R | None:
        """The reply to a request that is not a turn; None: it is answered 404."""
        return None

    def _is_turn(self, request: Request) -> bool:
        return request.method == "POST" and urlsplit(request.path).path == self.TURN_PATH

    def _record(self, request: Request) -> tuple[R | None, int]:
        """Keep ``request``; for a turn, its reply (None when none is left) and number."""
        with self._lock:
            self.requests.append(request)
            if not self._is_turn(request):
                return None, 0
            reply = self.replies.pop(0) if self.replies else None
            return reply, sum(self._is_turn(r) for r in self.requests)


F = TypeVar("F", bound=FakeApi[Any])


def _handler(api: FakeApi[Any]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the requests are kept in ``api.requests``."""

        def do_GET(self) -> None:
            api._record(self._request())
            self._error(404, "not served")

        def do_POST(self) -> None:
            request = self._request()
            reply, n = api._record(request)
            if not n and (reply := api.aside(request)) is None:
                self._error(404, "not served")
                return
            if reply is None:
                self._error(500, "the test scripted no reply for this request")
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in api.stream(reply, n, request):
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
            if reply.hangs:
                # Until the agent hangs up (the socket reads EOF) or the server closes.
                select.select([self.connection, api._wake_r], [], [])
            self.close_connection = True

        def _request(self) -> Request:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            return Request(self.command, self.path, headers, body)

        def _error(self, status: int, message: str) -> None:
            body = json.dumps({"error": {"message": message}}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
