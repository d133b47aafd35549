"""The scripted agent's end of the wire: JSON-RPC 2.0, one JSON object per line on stdio
(or per text frame on a WebSocket, through :mod:`.serve`'s adapters).

Hand-written instead of the ACP SDK's ``AgentSideConnection``: importing the SDK's
pydantic schema costs 0.8 s of CPU, and the scripted agent starts once or more in
every test. What goose-ls sends is still checked against that schema, once per test in
the test process (tests/support/conformance.py), from the record kept here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from goose_ls.tasks import within

LINE_LIMIT = 64 * 1024 * 1024


class RpcError(Exception):
    """An error answer: raised by a handler to send it, or by :meth:`Peer.request` on one."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data

    def as_error(self) -> dict[str, Any]:
        return {"code": self.code, "message": str(self), "data": self.data}


class Lines(Protocol):
    """Where messages come from: stdin, or a WebSocket's frames."""

    async def readline(self) -> bytes:
        """The next message (b"" at the end)."""


class Sink(Protocol):
    """Where messages go: stdout, or a WebSocket."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


Handler = Callable[[str, Any], Awaitable[Any]]
"""Called with a method name and its params; returns the result of a request."""


class Peer:
    """Dispatches each request and notification in a task of its own, as the SDK does,
    so a long ``session/prompt`` never holds up ``session/cancel``."""

    def __init__(
        self,
        reader: Lines,
        writer: Sink,
        record: Path | None = None,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.record = record
        self.sent = record.with_suffix(".sent.jsonl") if record else None
        """Each request this agent sent (id and method): what the answers in the record answer."""
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def listen(self, requests: Handler, notifications: Handler) -> None:
        """Serve until the client closes our stdin."""
        while line := await self.reader.readline():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            _append(self.record, message)
            if "method" in message:
                work = (
                    self._answer(message, requests)
                    if "id" in message
                    else notifications(message["method"], message.get("params"))
                )
                task = asyncio.create_task(_quietly(work))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            elif (future := self._pending.pop(message.get("id", -1), None)) and not future.done():
                if "error" in message:
                    error = message["error"] or {}
                    future.set_exception(
                        RpcError(
                            error.get("code", -32603),
                            error.get("message", "Error"),
                            error.get("data"),
                        )
                    )
                else:
                    future.set_result(message.get("result"))

    async def request(
        self, method: str, params: dict[str, Any], withdraw_after: float | None = None
    ) -> Any:
        """Send a request and wait for its answer; ``withdraw_after`` seconds on, withdraw
        it with ``$/cancel_request`` (the answer is still awaited: it must come)."""
        self._next_id += 1
        request_id = self._next_id
        answer = self._pending[request_id] = asyncio.get_running_loop().create_future()
        _append(self.sent, {"id": request_id, "method": method})
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        if withdraw_after is None:
            return await answer
        try:
            return await within(withdraw_after, asyncio.shield(answer))
        except asyncio.TimeoutError:
            await self.notify("$/cancel_request", {"requestId": request_id})
        return await answer

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def send(self, message: dict[str, Any]) -> None:
        await self.write_line(json.dumps(message).encode())

    async def write_line(self, data: bytes) -> None:
        self.writer.write(data + b"\n")  # one write per message: lines never interleave
        await self.writer.drain()

    async def _answer(self, message: dict[str, Any], handle: Handler) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = await handle(message["method"], message.get("params") or {})
        except RpcError as exc:
            reply["error"] = exc.as_error()
        except Exception as exc:  # as the SDK answers a handler that failed
            reply["error"] = RpcError(-32603, "Internal error", {"details": str(exc)}).as_error()
        await self.send(reply)


async def stdio(limit: int = LINE_LIMIT) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """asyncio streams over this process's stdin and stdout."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


async def _quietly(work: Awaitable[Any]) -> None:
    """A client gone mid-answer is not an error of the agent's."""
    with contextlib.suppress(ConnectionError):
        await work


def _append(path: Path | None, message: dict[str, Any]) -> None:
    if path is not None:
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(message) + "\n")
