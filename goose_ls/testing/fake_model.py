"""A fake model API on 127.0.0.1, so that a real agent (codex-acp) runs a turn offline.

It speaks the OpenAI Responses API as codex streams it: ``POST {base}/responses`` answered
with server-sent events. Each request takes the next scripted :class:`Reply`; every
request is kept, so a test can check what the agent asked. The server runs in its own
thread: goose-ls and the agent are other processes, and the test's event loop stays free.
"""

from __future__ import annotations

import json
import os
import select
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs

MODEL = "gpt-5.4"
"""A model codex knows offline: an unknown one makes it warn in the chat before a turn."""

TOTAL_TOKENS = 110
"""The tokens each response says it used: what the agent's usage update should report."""

KEY_VARIABLE = "FAKE_MODEL_API_KEY"
"""The environment variable codex reads the fake API key from (``env_key``)."""


@attrs.frozen
class Reply:
    """One streamed answer: ``chunks`` of text, then the end of the response, unless it
    ``hangs`` (the stream stays open until the agent closes it: a turn to cancel)."""

    chunks: tuple[str, ...]
    hangs: bool = False


@attrs.frozen
class Request:
    """One request as the server read it; header names in lower case, as HTTP ignores theirs."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    def conversation(self) -> list[tuple[str, str]]:
        """The user's and the assistant's messages of a turn's ``input``, as (role, text):
        what the model was told was said before, the new prompt last."""
        said = []
        for item in self.body.get("input", []):
            if item.get("type") == "message" and item.get("role") in ("user", "assistant"):
                text = "".join(part.get("text", "") for part in item.get("content", []))
                said.append((str(item["role"]), text))
        return said


class FakeModel:
    """The server: ``with FakeModel([...]) as model:``; ``model.base_url`` for the agent."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        """Written on close, to free the handlers of hanging replies."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        os.write(self._wake_w, b"x")
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def responses(self) -> list[Request]:
        """The turns the agent asked for."""
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/responses")]

    def _record(self, request: Request) -> tuple[Reply | None, int]:
        """Keep ``request``; for a turn, its reply (None when none is left) and number."""
        with self._lock:
            self.requests.append(request)
            if request.method != "POST" or not request.path.endswith("/responses"):
                return None, 0
            reply = self.replies.pop(0) if self.replies else None
            return reply, sum(r.path.endswith("/responses") for r in self.requests)

    def codex_home(self, path: Path) -> Path:
        """A ``CODEX_HOME`` whose config.toml makes this server codex's model provider, its
        key read from ``KEY_VARIABLE``, with no retries: a failure shows at once."""
        path.mkdir(parents=True, exist_ok=True)
        (path / "config.toml").write_text(
            f'model = "{MODEL}"\n'
            'model_provider = "fake"\n'
            "[model_providers.fake]\n"
            'name = "Fake model API"\n'
            f'base_url = "{self.base_url}"\n'
            'wire_api = "responses"\n'
            f'env_key = "{KEY_VARIABLE}"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n",
            encoding="utf-8",
        )
        return path


def _events(reply: Reply, n: int) -> Iterator[dict[str, Any]]:
    """The Responses API's stream for ``reply``, the ``n``th: an assistant message item."""
    item = f"msg_{n}"
    yield {"type": "response.created", "response": {"id": f"resp_{n}"}}
    message: dict[str, Any] = {"type": "message", "role": "assistant", "id": item}
    yield {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": message | {"content": []},
    }
    for chunk in reply.chunks:
        yield {
            "type": "response.output_text.delta",
            "item_id": item,
            "output_index": 0,
            "content_index": 0,
            "delta": chunk,
        }
    if reply.hangs:
        return
    text = {"type": "output_text", "text": "".join(reply.chunks), "annotations": []}
    yield {
        "type": "response.output_item.done",
        "output_index": 0,
        "item": message | {"content": [text]},
    }
    usage = {"input_tokens": TOTAL_TOKENS - 10, "output_tokens": 10, "total_tokens": TOTAL_TOKENS}
    yield {"type": "response.completed", "response": {"id": f"resp_{n}", "usage": usage}}


def _handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the requests are kept in ``model.requests``."""

        def do_GET(self) -> None:
            model._record(self._request())
            self._error(404, "not served")

        def do_POST(self) -> None:
            request = self._request()
            reply, n = model._record(request)
            if not n:
                self._error(404, "not served")
                return
            if reply is None:
                self._error(500, "the test scripted no reply for this request")
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in _events(reply, n):
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
            if reply.hangs:
                # Until the agent hangs up (the socket reads EOF) or the server closes.
                select.select([self.connection, model._wake_r], [], [])
            self.close_connection = True

        def _request(self) -> Request:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            return Request(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
            )

        def _error(self, status: int, message: str) -> None:
            body = json.dumps({"error": {"message": message}}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
