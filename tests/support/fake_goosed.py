"""A fake goosed (Goose Desktop's server, goose 1.16 to 1.40) on 127.0.0.1, in the test's
event loop: the routes goose-ls uses, answered as goosed's OpenAPI files have them, and a
turn streamed in goosed's server-sent events, in either of its two styles:

- ``reply`` (1.16 to 1.27): ``POST /reply`` answers with the events, each a
  ``data: <json>`` frame, a ``{"type":"Ping"}`` frame between steps; the client closing
  the stream cancels the turn. No ``/system_info``.
- ``sessions`` (1.28 on): ``GET /sessions/{id}/events`` (frames ``id: N`` then
  ``data: <json>`` with ``request_id`` and ``chat_request_id`` added, heartbeats as
  ``: ping N`` comments, ``ActiveRequests`` first), the turn started by
  ``POST /sessions/{id}/reply`` and cancelled by ``POST /sessions/{id}/cancel``.

Every route but ``/status`` wants ``X-Secret-Key``. A turn follows the script given for
it (steps: ``text``, ``thinking``, ``tool``, ``confirm`` (waits for
``/action-required/tool-confirmation``), ``hang`` (waits for a cancel), ``error``, ``event`` (sent as it is), ``raw`` (bytes written
to the stream as they are, no framing)), then
``Finish`` with its token state. What it received is kept in ``requests``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote

Step = dict[str, Any]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class FakeGoosed:
    def __init__(
        self,
        secret: str = "goosed-secret-4f1c",
        style: str = "sessions",
        version: str = "1.34.0",
        turns: list[list[Step]] | None = None,
        lists: bool = True,
    ) -> None:
        self.secret = secret
        self.style = style
        self.version = version
        self.turns = list(turns or [])
        self.lists = lists
        self.requests: list[dict[str, Any]] = []
        self.sessions: dict[str, dict[str, Any]] = {}
        self.confirmations: dict[str, asyncio.Future[str]] = {}
        self.cancels: dict[str, asyncio.Event] = {}
        self.subscribers: dict[str, list[asyncio.Queue[dict[str, Any] | None]]] = {}
        self.answers: list[dict[str, Any]] = []
        self.redirects: dict[str, str] = {}
        """Paths answered ``307`` to another URL (a hostile goosed's redirect)."""
        self.active: set[str] = set()
        """Sessions whose turn runs (a second ``/sessions/{id}/reply`` is refused, 400)."""
        self._server: asyncio.Server | None = None
        self._running: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._seq = 0
        self._count = 0
        self.url = ""

    async def start(self, port: int = 0, tls: ssl.SSLContext | None = None) -> str:
        """Serve on 127.0.0.1 (``tls``: https, as goosed does from 1.26)."""
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", port, ssl=tls)
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        return self.url

    async def stop(self) -> None:
        for task in list(self._running):
            task.cancel()
        for writer in list(self._writers):
            writer.close()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None

    def add_session(
        self, name: str, working_dir: str, conversation: list[dict[str, Any]] | None = None
    ) -> str:
        self._count += 1
        session_id = f"20261127_{self._count}"
        self.sessions[session_id] = {
            "id": session_id,
            "name": name,
            "working_dir": working_dir,
            "created_at": "2026-11-27T10:00:00Z",
            "updated_at": f"2026-11-27T10:{self._count:02d}:00Z",
            "extension_data": {},
            "message_count": len(conversation or []),
            "session_type": "user",
            "conversation": list(conversation or []),
        }
        return session_id

    def received(self, path: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"] == path]

    # --- HTTP ---------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {
                k.strip().lower(): v.strip()
                for k, _, v in (line.partition(":") for line in lines[1:] if line)
            }
            length = int(headers.get("content-length", "0"))
            raw = await reader.readexactly(length) if length else b""
            body = json.loads(raw) if raw else None
            path = unquote(target.split("?", 1)[0])
            self.requests.append({"method": method, "path": path, "headers": headers, "body": body})
            await self._route(method, path, headers, body, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    @staticmethod
    async def _answer(
        writer: asyncio.StreamWriter,
        status: int,
        body: Any = None,
        text: str | None = None,
        location: str | None = None,
    ) -> None:
        data = (text if text is not None else json.dumps(body) if body is not None else "").encode()
        kind = "text/plain" if text is not None else "application/json"
        reasons = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
                   405: "Method Not Allowed", 307: "Temporary Redirect"}  # fmt: skip
        moved = f"Location: {location}\r\n" if location else ""
        writer.write(
            f"HTTP/1.1 {status} {reasons.get(status, 'Error')}\r\nContent-Type: {kind}\r\n{moved}"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
            + data
        )
        await writer.drain()

    async def _route(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        body: Any,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        if path in self.redirects:
            return await self._answer(writer, 307, location=self.redirects[path])
        if path == "/status":
            return await self._answer(writer, 200, text="ok")
        if headers.get("x-secret-key") != self.secret:
            return await self._answer(writer, 401)
        parts = path.strip("/").split("/")
        sessions_style = self.style == "sessions"
        if path == "/system_info" and sessions_style:
            about = {"app_version": self.version, "os": "linux", "os_version": "6",
                     "architecture": "x86_64", "enabled_extensions": ["developer"]}  # fmt: skip
            return await self._answer(writer, 200, about)
        if path == "/reply":
            if method != "POST":
                return await self._answer(writer, 405)
            return await self._reply_stream(body, reader, writer)
        if path == "/agent/start" and method == "POST":
            session_id = self.add_session("New Chat", body["working_dir"])
            return await self._answer(writer, 200, self._listed(session_id))
        if path == "/agent/resume" and method == "POST":
            found = self.sessions.get(body.get("session_id"))
            if found is None:
                return await self._answer(writer, 400, text="session not found")
            return await self._answer(writer, 200, {"session": self._listed(found["id"])})
        if path == "/action-required/tool-confirmation" and method == "POST":
            self.answers.append(body)
            future = self.confirmations.get(body.get("id"))
            if future is not None and not future.done():
                future.set_result(body.get("action"))
            return await self._answer(writer, 200, {})
        if path == "/sessions" and method == "GET" and self.lists:
            listed = [self._listed(i) for i in self.sessions]
            return await self._answer(writer, 200, {"sessions": listed})
        if parts[0] == "sessions" and len(parts) >= 2:
            return await self._session_route(method, parts[1], parts[2:], body, reader, writer)
        return await self._answer(writer, 404)

    async def _session_route(
        self,
        method: str,
        session_id: str,
        rest: list[str],
        body: Any,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        sessions_style = self.style == "sessions"
        found = self.sessions.get(session_id)
        if rest == [] and method == "GET":
            if found is None:
                return await self._answer(writer, 404)
            return await self._answer(writer, 200, found)
        if rest == ["name"] and method == "PUT" and found is not None:
            found["name"] = body["name"]
            return await self._answer(writer, 200)
        if not sessions_style or rest[:1] not in (["reply"], ["events"], ["cancel"]):
            return await self._answer(writer, 404)
        if rest == ["reply"] and method != "POST":
            return await self._answer(writer, 405)
        if found is None:
            return await self._answer(writer, 404)
        if rest == ["events"] and method == "GET":
            return await self._events_stream(session_id, writer)
        if rest == ["reply"]:
            if session_id in self.active:
                return await self._answer(
                    writer, 400, text="Session already has an active request. Cancel it first."
                )
            request_id = body["request_id"]
            queues = self.subscribers.get(session_id, [])

            async def send(event: dict[str, Any]) -> None:
                for queue in queues:
                    queue.put_nowait({**event, "request_id": request_id,
                                      "chat_request_id": request_id})  # fmt: skip

            self.cancels[session_id] = asyncio.Event()
            turn = asyncio.ensure_future(self._turn(session_id, body["user_message"], send))
            self._running.add(turn)
            turn.add_done_callback(self._running.discard)
            return await self._answer(writer, 200, {"request_id": request_id})
        if rest == ["cancel"] and method == "POST":
            if (event := self.cancels.get(session_id)) is not None:
                event.set()
            return await self._answer(writer, 200)
        return await self._answer(writer, 404)

    def _listed(self, session_id: str) -> dict[str, Any]:
        return {k: v for k, v in self.sessions[session_id].items() if k != "conversation"}

    # --- streams ------------------------------------------------------------------
    @staticmethod
    def _stream_head(writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            b"Connection: close\r\n\r\n"
        )

    async def _reply_stream(
        self, body: Any, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        session_id = body["session_id"]
        if session_id not in self.sessions:
            return await self._answer(writer, 404)
        self._stream_head(writer)
        await writer.drain()
        cancel = self.cancels[session_id] = asyncio.Event()

        async def watch() -> None:  # the client closing the stream is the cancel
            with contextlib.suppress(Exception):
                await reader.read()
            cancel.set()

        watcher = asyncio.ensure_future(watch())

        async def send(event: dict[str, Any]) -> None:
            if "__raw__" in event:
                writer.write(event["__raw__"])
            else:
                writer.write(f"data: {json.dumps(event)}\n\n".encode())
            await writer.drain()

        try:
            await self._turn(session_id, body["user_message"], send)
        except ConnectionError:
            pass
        finally:
            watcher.cancel()

    async def _events_stream(self, session_id: str, writer: asyncio.StreamWriter) -> None:
        self._stream_head(writer)
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.subscribers.setdefault(session_id, []).append(queue)
        try:
            writer.write(b": ping 0\n\n")
            self._seq += 1
            first = {"type": "ActiveRequests", "request_ids": []}
            writer.write(f"id: {self._seq}\ndata: {json.dumps(first)}\n\n".encode())
            await writer.drain()
            while True:
                event = await queue.get()
                if event is None:
                    break
                self._seq += 1
                if "__raw__" in event:
                    writer.write(event["__raw__"])
                elif event.get("type") == "Ping":
                    writer.write(f": ping {self._seq}\n\n".encode())
                else:
                    writer.write(f"id: {self._seq}\ndata: {json.dumps(event)}\n\n".encode())
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            self.subscribers[session_id].remove(queue)

    # --- a turn ---------------------------------------------------------------------
    async def _turn(self, session_id: str, user: dict[str, Any], send: Send) -> None:
        self.active.add(session_id)
        try:
            await self._steps(session_id, user, send)
        finally:
            self.active.discard(session_id)

    async def desktop_turn(self, session_id: str, until: asyncio.Event) -> None:
        """A turn Desktop (another client) runs on the session until ``until`` is set."""
        self.active.add(session_id)
        try:
            await until.wait()
        finally:
            self.active.discard(session_id)

    async def _steps(self, session_id: str, user: dict[str, Any], send: Send) -> None:
        session = self.sessions[session_id]
        session["conversation"].append(user)
        steps: list[Step] = self.turns.pop(0) if self.turns else [{"text": "You said something"}]
        cancel = self.cancels[session_id]
        reply_id = f"msg_{len(session['conversation'])}"
        said: list[dict[str, Any]] = []
        tokens = {"inputTokens": 120, "outputTokens": 30, "totalTokens": 150,
                  "accumulatedInputTokens": 120, "accumulatedOutputTokens": 30,
                  "accumulatedTotalTokens": 150}  # fmt: skip

        async def message(content: list[dict[str, Any]], role: str = "assistant",
                          visible: bool = True) -> None:  # fmt: skip
            msg = {"id": reply_id, "role": role, "created": int(time.time()), "content": content,
                   "metadata": {"userVisible": True, "agentVisible": visible}}  # fmt: skip
            await send({"type": "Message", "message": msg, "token_state": tokens})
            if visible:
                keep(msg)

        def keep(msg: dict[str, Any]) -> None:
            """Kept as goosed keeps a streamed reply: the pieces of one message (one id and
            role) as one, consecutive text joined into one text item."""
            nonlocal reply_id
            last = said[-1] if said else None
            if last is None or last["id"] != msg["id"] or last["role"] != msg["role"]:
                said.append({**msg, "content": [dict(c) for c in msg["content"]]})
            else:
                for item in msg["content"]:
                    end = last["content"][-1] if last["content"] else None
                    if item.get("type") == "text" and end and end.get("type") == "text":
                        end["text"] += item["text"]
                    else:
                        last["content"].append(dict(item))
            if any(c.get("type") != "text" for c in msg["content"]):
                reply_id += "+"  # a tool's request or response ends its message

        for step in steps:
            if cancel.is_set():
                return
            await send({"type": "Ping"})
            if "text" in step:
                for piece in step.get("pieces", [step["text"]]):
                    await message([{"type": "text", "text": piece}])
            elif "event" in step:  # anything at all, as a hostile goosed sends it
                await send(step["event"])
            elif "raw" in step:  # bytes, no framing (``wait``: then nothing until a cancel)
                pieces = step["raw"] if isinstance(step["raw"], list) else [step["raw"]]
                for piece in pieces:  # each its own write, apart in time
                    await send({"__raw__": piece})
                    await asyncio.sleep(0.05)
                if step.get("wait"):
                    await cancel.wait()
                    return
            elif "thinking" in step:
                await message([{"type": "thinking", "thinking": step["thinking"], "signature": ""}])
            elif "tool" in step:
                call = step["tool"]
                await message([self._tool_request(call)])
                await message([self._tool_response(call["id"], call.get("result", "done"))], "user")
            elif "confirm" in step:
                call = step["confirm"]
                await message([self._tool_request(call)])
                future = self.confirmations[call["id"]] = asyncio.get_running_loop().create_future()
                data = {"actionType": "toolConfirmation", "id": call["id"],
                        "toolName": call["name"], "arguments": call["arguments"],
                        "prompt": call.get("prompt")}  # fmt: skip
                await message([{"type": "actionRequired", "data": data}], visible=False)
                waiting = asyncio.ensure_future(cancel.wait())
                await asyncio.wait([future, waiting], return_when=asyncio.FIRST_COMPLETED)
                waiting.cancel()
                if not future.done():
                    return
                action = future.result()
                result = "ran" if action in ("allow_once", "always_allow") else f"refused: {action}"
                await message([self._tool_response(call["id"], result)], "user")
            elif step.get("hang"):
                while not cancel.is_set():
                    await send({"type": "Ping"})
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(cancel.wait(), 0.5)
                await send({"type": "Finish", "reason": "stop", "token_state": tokens})
                return
            elif "error" in step:
                await send({"type": "Error", "error": step["error"]})
                return
        session["conversation"] += said
        await send({"type": "Finish", "reason": "stop", "token_state": tokens})

    @staticmethod
    def _tool_request(call: dict[str, Any]) -> dict[str, Any]:
        value = {"name": call["name"], "arguments": call["arguments"]}
        return {"type": "toolRequest", "id": call["id"],
                "toolCall": {"status": "success", "value": value}}  # fmt: skip

    @staticmethod
    def _tool_response(call_id: str, text: str) -> dict[str, Any]:
        result = {"content": [{"type": "text", "text": text}], "isError": False}
        return {"type": "toolResponse", "id": call_id,
                "toolResult": {"status": "success", "value": result}}  # fmt: skip


class GoosedThread:
    """A :class:`FakeGoosed` served from an event loop of its own, in a thread: for tests
    that drive a real editor and wait by polling (their own thread blocks)."""

    def __init__(self, fake: FakeGoosed) -> None:
        self.fake = fake
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> FakeGoosed:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.fake.start(), self._loop).result(10)
        return self.fake

    def __exit__(self, *_: object) -> None:
        asyncio.run_coroutine_threadsafe(self._end(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _end(self) -> None:
        await self.fake.stop()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
