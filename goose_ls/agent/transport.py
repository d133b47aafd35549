"""Newline-delimited JSON-RPC over the agent's pipes, tolerant of what agents really print.

The ACP SDK's connection takes any message transport; this one reads lines of any length
(goose's ``session/load`` replays and file contents are far over asyncio's 64 KiB default)
and drops, with a log line, anything that is not a JSON-RPC message: log text on stdout,
invalid UTF-8, JSON that is not an object, ids of the wrong type, JSON nested too deeply
to parse. The connection lives on. When reading stops for good (the agent closed its
output, or reading failed), ``ended`` says why: the supervisor treats that as the
agent's death, even while its process lives on.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from goose_ls import events
from goose_ls.agent.cancelling import CANCEL_REQUEST, SERVING, RequestId, Serving, note_sent
from goose_ls.agent.unstable_updates import carry_fields, unstable_update

log = logging.getLogger(__name__)

READ_AHEAD = 1024 * 1024
"""asyncio's read-buffer limit for the agent's stdout: past twice this much unread, the
pipe is not read until goose-ls catches up, so an agent sending faster than goose-ls
handles waits instead of filling goose-ls's memory. Longer lines are still read whole."""

YIELD_EVERY = 64
"""Messages read in a row before the loop runs what they started: the SDK handles each in
a task of its own, and an agent that sends faster than goose-ls handles would otherwise
pile up tasks (and memory) without bound."""

READER_GRACE = 1.0
"""Seconds an agent whose output ended may take to exit before it is killed."""

_EXCERPT = 200

EventHandler = Callable[[str, events.SessionEvent], None]
"""Takes a session's event read past the SDK: a text chunk (see :func:`text_chunk`) or an
update the SDK has no model for (:mod:`.unstable_updates`)."""


class AgentTransport:
    """An ``acp`` message transport over a child process's stdin and stdout."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        on_event: EventHandler | None = None,
        amend: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        """``on_event`` takes what is read past the SDK (see :data:`EventHandler`);
        ``amend`` may add to a message's JSON what the SDK's models cannot hold."""
        self._reader = reader
        self._writer = writer
        self._on_event = on_event
        self._amend = amend
        self._write_lock = asyncio.Lock()
        self.ended: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        """Set, with the reason, when nothing more can be read from the agent."""
        self._in_a_row = 0
        self.serving = Serving()
        """The agent's requests being served, which it may withdraw."""

    async def send(self, message: dict[str, Any]) -> None:
        if self._amend is not None:
            self._amend(message)
        note_sent(message)
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        async with self._write_lock:
            self._writer.write(data)
            await self._writer.drain()

    def withdraw(self, request_id: RequestId) -> None:
        """Tell the agent goose-ls gave up its request ``request_id`` (``$/cancel_request``);
        written at once, from a task being cancelled (one write: lines never interleave)."""
        if self._writer.is_closing():
            return
        message = {"jsonrpc": "2.0", "method": CANCEL_REQUEST, "params": {"requestId": request_id}}
        self._writer.write(json.dumps(message).encode() + b"\n")

    async def receive(self) -> dict[str, Any] | None:
        self._in_a_row += 1
        if self._in_a_row >= YIELD_EVERY:  # let the handlers of those before run first
            self._in_a_row = 0
            await asyncio.sleep(0)
        try:
            while True:
                line = await self._read_line()
                if line is None:
                    self._end("closed its output")
                    return None
                message = self._decode(line)
                if message is None:
                    continue
                if message.get("method") == CANCEL_REQUEST:
                    self.serving.withdraw(message.get("params"))
                    continue
                on_event = self._on_event
                past = None if on_event is None else text_chunk(message) or unstable_update(message)
                if on_event is None or past is None:
                    if message.get("method") == "session/update":
                        carry_fields(message)
                    # The SDK starts the task that serves a request next: it inherits the id.
                    SERVING.set(message.get("id") if "method" in message else None)
                    return message
                # After the tasks the SDK started for the messages before it: in order.
                asyncio.get_running_loop().call_soon(on_event, *past)
        except Exception as exc:
            self._end(f"sent output that could not be read ({type(exc).__name__}: {exc})")
            raise

    def _end(self, why: str) -> None:
        if not self.ended.done():
            self.ended.set_result(why)

    async def close(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()

    async def _read_line(self) -> bytes | None:
        parts: list[bytes] = []
        while True:
            try:
                parts.append(await self._reader.readuntil(b"\n"))
                return b"".join(parts)
            except asyncio.LimitOverrunError as exc:
                parts.append(await self._reader.readexactly(exc.consumed))
            except asyncio.IncompleteReadError as exc:
                if exc.partial or parts:
                    parts.append(exc.partial)
                    self._drop(b"".join(parts), "the agent closed its output mid-line")
                return None

    def _decode(self, line: bytes) -> dict[str, Any] | None:
        line = line.strip()
        if not line:
            return None
        try:
            message = json.loads(line)
        except UnicodeDecodeError:
            problem: str | None = "invalid UTF-8"
        except ValueError:
            problem = "not JSON"
        except RecursionError:
            problem = "nested too deeply"
        else:
            problem = _envelope_problem(message)
        if problem is None:
            return message  # type: ignore[no-any-return]
        self._drop(line, problem)
        return None

    def _drop(self, line: bytes, why: str) -> None:
        excerpt = line[:_EXCERPT].decode("utf-8", "replace")
        more = f" ... ({len(line)} bytes)" if len(line) > _EXCERPT else ""
        log.warning("skipped a line from the agent (%s): %s%s", why, excerpt, more)
        return None


def text_chunk(message: dict[str, Any]) -> tuple[str, events.SessionEvent] | None:
    """A ``session/update`` that is only a text chunk (most messages: one per token), as
    its session and event; None for anything else, which goes through the SDK.

    The SDK handles each message in a task of its own, routed and validated by pydantic:
    half the CPU a streamed token costs. A text chunk needs none of it: the few fields
    that matter are checked here, and anything more (annotations, other keys) takes the
    SDK's path."""
    if message.get("method") != "session/update" or "id" in message:
        return None
    params = message.get("params")
    if not isinstance(params, dict) or len(params) != 2:
        return None
    session_id, update = params.get("sessionId"), params.get("update")
    if not isinstance(session_id, str) or not isinstance(update, dict) or len(update) != 2:
        return None
    name, content = update.get("sessionUpdate"), update.get("content")
    kind = _CHUNK_KINDS.get(name) if isinstance(name, str) else None
    if kind is None or not isinstance(content, dict) or len(content) != 2:
        return None
    if content.get("type") != "text" or not isinstance(content.get("text"), str):
        return None
    return session_id, kind(content)


_CHUNK_KINDS: dict[
    Any, type[events.UserMessageChunk | events.AgentMessageChunk | events.AgentThoughtChunk]
] = {kind.KIND: kind for kind in events.CHUNKS}


def _envelope_problem(message: Any) -> str | None:
    """Say what is wrong with a JSON-RPC envelope, or None when it is usable."""
    if not isinstance(message, dict):
        return "JSON but not a JSON-RPC message"
    if "id" in message and not (message["id"] is None or isinstance(message["id"], (str, int))):
        return "a JSON-RPC id must be a string, a number or null"
    method = message.get("method")
    if method is not None and not isinstance(method, str):
        return "a JSON-RPC method must be a string"
    if method is None and "id" not in message:
        return "neither a request, a notification nor a response"
    if method is not None and not isinstance(message.get("params", {}), (dict, list)):
        return "JSON-RPC params must be an object or an array"
    return None
