"""JSON-RPC messages to and from the agent, tolerant of what agents really send.

The ACP SDK's connection takes any message transport; this one reads whole messages from
:class:`Frames` (a line on the agent's pipes, see :mod:`goose_ls.agent.transport.stdio`; a text frame on a
WebSocket, see :mod:`goose_ls.agent.transport.websocket`) and drops, with a log line, anything that is not a
JSON-RPC message: log text on stdout, invalid UTF-8, JSON that is not an object, ids of
the wrong type, JSON nested too deeply to parse. The connection lives on. When reading
stops for good (the agent closed its output or the connection, or reading failed),
``ended`` says why: the supervisor treats that as the agent's end, even while its
process lives on.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

import attrs

from goose_ls import events
from goose_ls.agent.acp.cancelling import CANCEL_REQUEST, SERVING, RequestId, Serving, note_sent
from goose_ls.agent.acp.unstable_updates import (
    carry_capabilities,
    carry_fields,
    unstable_update,
)
from goose_ls.agent.transport.frames import Frames, drop

log = logging.getLogger(__name__)

YIELD_EVERY = 64
"""Messages read in a row before the loop runs what they started: the SDK handles each in
a task of its own, and an agent that sends faster than goose-ls handles would otherwise
pile up tasks (and memory) without bound."""


RUN_CHARS = 65_536
"""Characters of text chunks read in a row that are joined into one event, at most."""

EventHandler = Callable[[str, events.SessionEvent], None]
"""Takes a session's event read past the SDK: a text chunk (see :func:`text_chunk`) or an
update the SDK has no model for (:mod:`.unstable_updates`)."""


@attrs.define
class _Run:
    session_id: str
    first: Chunk
    """The run's first chunk: handed on as it is when no other joins it."""
    texts: list[str]
    chars: int


class AgentTransport:
    """An ``acp`` message transport over the agent's :class:`Frames`."""

    def __init__(
        self,
        frames: Frames,
        on_event: EventHandler | None = None,
        amend: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        """``on_event`` takes what is read past the SDK (see :data:`EventHandler`);
        ``amend`` may add to a message's JSON what the SDK's models cannot hold."""
        self._frames = frames
        self._on_event = on_event
        self._amend = amend
        self._write_lock = asyncio.Lock()
        self._loop = asyncio.get_running_loop()
        """Kept: asking for it costs a system call (Python checks its process id), once a
        chunk."""
        self.ended: asyncio.Future[str] = self._loop.create_future()
        """Set, with the reason, when nothing more can be read from the agent."""
        self._in_a_row = 0
        self._run: _Run | None = None
        """The text chunks read in a row, not handed on yet."""
        self.serving = Serving()
        """The agent's requests being served, which it may withdraw."""

    async def send(self, message: dict[str, Any]) -> None:
        if self._amend is not None:
            self._amend(message)
        data = json.dumps(
            message, ensure_ascii=False, separators=(",", ":"), default=_as_text
        ).encode()
        async with self._write_lock:
            # Only now can a withdrawal name it: one sent earlier could beat the request.
            note_sent(message)
            await self._frames.send(data)

    def withdraw(self, request_id: RequestId) -> None:
        """Tell the agent goose-ls gave up its request ``request_id`` (``$/cancel_request``);
        sent at once, from a task being cancelled."""
        if self._frames.closing():
            return
        message = {"jsonrpc": "2.0", "method": CANCEL_REQUEST, "params": {"requestId": request_id}}
        self._frames.send_now(json.dumps(message).encode())

    async def receive(self) -> dict[str, Any] | None:
        self._in_a_row += 1
        if self._in_a_row >= YIELD_EVERY:  # let the handlers of those before run first
            self._in_a_row = 0
            await asyncio.sleep(0)
        try:
            while True:
                line = await self._frames.read()
                if line is None:
                    self._end(self._frames.why_ended())
                    return None
                message = self._decode(line)
                if message is None:
                    continue
                if message.get("method") == CANCEL_REQUEST:
                    self.serving.withdraw(message.get("params"))
                    continue
                on_event = self._on_event
                chunk = None if on_event is None else text_chunk(message)
                if chunk is not None and on_event is not None:
                    self._gather(on_event, *chunk)
                    continue
                self._run = None  # what follows this message is no longer next to the run
                past = None if on_event is None else unstable_update(message)
                if on_event is None or past is None:
                    if message.get("method") == "session/update":
                        carry_fields(message)
                    elif "result" in message:
                        carry_capabilities(message)
                    # The SDK starts the task that serves a request next: it inherits the id.
                    SERVING.set(message.get("id") if "method" in message else None)
                    return message
                # After the tasks the SDK started for the messages before it: in order.
                self._loop.call_soon(on_event, *past)
        except Exception as exc:
            self._end(f"sent output that could not be read ({type(exc).__name__}: {exc})")
            raise

    def _gather(self, on_event: EventHandler, session_id: str, event: Chunk) -> None:
        """A text chunk joins the chunks read just before it, of the same session and
        kind, into one event: a burst read at once is handled once, not once a token.
        The run is handed on after the tasks the SDK started for the messages before
        it, in order."""
        text = event.content["text"]
        run = self._run
        if (
            run is not None
            and run.session_id == session_id
            and type(run.first) is type(event)
            and run.chars < RUN_CHARS
        ):
            run.texts.append(text)
            run.chars += len(text)
            return
        run = self._run = _Run(session_id, event, [text], len(text))
        self._loop.call_soon(self._hand_on, on_event, run)

    def _hand_on(self, on_event: EventHandler, run: _Run) -> None:
        if self._run is run:
            self._run = None
        event = run.first
        if len(run.texts) > 1:
            event = type(event)({"type": "text", "text": "".join(run.texts)})
        on_event(run.session_id, event)

    def _end(self, why: str) -> None:
        if not self.ended.done():
            self.ended.set_result(why)

    async def close(self) -> None:
        if not self._frames.closing():
            await self._frames.close()

    def _decode(self, line: bytes | str) -> dict[str, Any] | None:
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
        drop(line, problem)
        return None


def _as_text(value: object) -> str:
    """What JSON cannot hold, as text: the SDK's error answer to a request it could not
    read carries pydantic's error details, exceptions among them. Without this the
    answer is never sent, and the agent waits for it forever."""
    return str(value)


Chunk = events.UserMessageChunk | events.AgentMessageChunk | events.AgentThoughtChunk


def text_chunk(message: dict[str, Any]) -> tuple[str, Chunk] | None:
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


_CHUNK_KINDS: dict[Any, type[Chunk]] = {kind.KIND: kind for kind in events.CHUNKS}


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
