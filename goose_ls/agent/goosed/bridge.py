"""goosed spoken to as an ACP agent: the :class:`~goose_ls.agent.transport.frames.Frames`
of a channel whose other end is goose-ls's own translation of ACP into goosed's requests.

The layers above send ACP as to any agent (``initialize``, ``session/new``,
``session/load``, ``session/list``, ``session/prompt``, ``session/cancel``) and read
ACP back; so a goosed chat goes through the same sessions, journal, policy, permission
cards and popups as any other. What each becomes:

- ``session/new``: ``POST /agent/start`` in the session's folder, then ``/agent/resume``
  (goosed loads the provider and extensions there).
- ``session/load``: ``/agent/resume``, then the session's conversation from
  ``GET /sessions/{id}``, replayed as updates (the journal keeps only what it lacks).
- ``session/list``: ``GET /sessions`` where goosed still has it (until 1.39), each entry
  marked as goosed's.
- ``session/prompt``: the turn streamed (:mod:`.server` says how, by version); its
  ``Message`` events become updates, a tool confirmation becomes
  ``session/request_permission`` and its answer ``POST /action-required/tool-confirmation``
  (anything but an allow is ``deny_once``), ``Finish`` the end (its ``token_state`` the
  turn's usage), ``Error`` a failed turn with goosed's words, ``UpdateConversation``
  (goosed compacted what the model sees) a completed compaction, ``Notification`` (a
  tool's MCP notices) and ``Ping`` nothing.
- ``session/cancel``: ``POST /sessions/{id}/cancel`` (1.28+), and the stream closed
  (which is 1.16-1.27's cancel); the turn ends ``cancelled``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from goose_ls import __version__
from goose_ls.agent.goosed import translate
from goose_ls.agent.goosed.server import (
    Goosed,
    GoosedLost,
    GoosedRefused,
    events,
    session_path,
)
from goose_ls.agent.interface import RENAME
from goose_ls.errors import AgentError

log = logging.getLogger(__name__)

OPTIONS = [
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject_once", "name": "Deny", "kind": "reject_once"},
    {"optionId": "reject_always", "name": "Always deny", "kind": "reject_always"},
]
"""The choices a tool confirmation offers, as goose's ACP offers them (id == kind)."""
ACTIONS = {
    "allow_always": "always_allow",
    "allow_once": "allow_once",
    "reject_once": "deny_once",
    "reject_always": "always_deny",
}
"""goosed's answer for each option; anything else (cancelled, an error) is ``deny_once``."""
DENY = "deny_once"
SHOWN_TYPES = ("user", "scheduled")
"""The session types goosed's own list shows (Desktop's chats)."""
BUSY = "already has active run"
"""What the turn's refusal says when the chat's turn runs for another client (Desktop):
goose's own words for it over ACP, so goose-ls waits and sends the prompt again."""
ERROR_CHARS = 2000
"""The most of goosed's error text a failed turn repeats."""


class RpcError(Exception):
    """An ACP error answer: its code and message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Turn:
    """A running turn: goosed's id for it, whether goose-ls cancelled it, its reader and
    the tool confirmations it waits on."""

    def __init__(self) -> None:
        self.request_id = str(uuid.uuid4())
        self.cancelled = False
        self.reader: asyncio.Task[dict[str, Any]] | None = None
        self.asking: set[asyncio.Task[None]] = set()
        self.compactions = 0
        self.calls: dict[str, tuple[str, dict[str, Any]]] = {}
        """The tool calls goosed streamed in this turn (what the chat shows), by id."""


class GoosedBridge:
    """The :class:`Frames` of a goosed channel: ACP in, ACP out, goosed in between."""

    def __init__(self, goosed: Goosed) -> None:
        self._goosed = goosed
        self._incoming: asyncio.Queue[str | None] = asyncio.Queue()
        self._ended = False
        self._why = f"at {goosed.url} was disconnected by goose-ls"
        self._tasks: dict[Any, asyncio.Task[None]] = {}
        self._others: set[asyncio.Task[None]] = set()
        self._turns: dict[str, _Turn] = {}
        self._asked: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 0
        self._handlers: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]] = {
            "initialize": self._initialize,
            "session/new": self._new,
            "session/load": self._load,
            "session/list": self._list,
            "session/close": self._close_session,
            "session/prompt": self._prompt,
            "_goose-ls/rename": self._rename,
        }

    # --- Frames ------------------------------------------------------------------
    async def read(self) -> str | None:
        return await self._incoming.get()

    def why_ended(self) -> str:
        return self._why

    async def send(self, data: bytes) -> None:
        if self._ended:
            raise ConnectionResetError(self._why)
        try:
            message = json.loads(data)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        method, request_id = message.get("method"), message.get("id")
        if isinstance(method, str) and request_id is not None:
            task = asyncio.ensure_future(self._serve(request_id, method, message.get("params")))
            self._tasks[request_id] = task
            task.add_done_callback(lambda _: self._tasks.pop(request_id, None))
        elif method == "session/cancel":
            self._start(self._cancel(message.get("params")))
        elif method == "$/cancel_request":
            params = message.get("params")
            withdrawn = params.get("requestId") if isinstance(params, dict) else None
            if (found := self._tasks.get(withdrawn)) is not None:
                found.cancel()
        elif method is None and isinstance(request_id, str):
            future = self._asked.pop(request_id, None)
            if future is not None and not future.done():
                future.set_result(message)

    def send_now(self, data: bytes) -> None:
        self._start(self.send(data))

    def closing(self) -> bool:
        return self._ended

    async def close(self) -> None:
        self.abort()
        running = [*self._tasks.values(), *self._others]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
        await self._goosed.aclose()

    def abort(self) -> None:
        self._end(f"at {self._goosed.url} was disconnected by goose-ls")
        for future in self._asked.values():
            future.cancel()

    def _end(self, why: str) -> None:
        if not self._ended:
            self._ended, self._why = True, why
            self._incoming.put_nowait(None)

    def _start(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._others.add(task)
        task.add_done_callback(self._others.discard)

    # --- ACP out -----------------------------------------------------------------
    def _put(self, message: dict[str, Any]) -> None:
        if not self._ended:
            self._incoming.put_nowait(
                self._redacted(translate.dumps({"jsonrpc": "2.0", **message}))
            )

    def _redacted(self, text: str) -> str:
        """``text`` without goosed's secret: whatever goosed repeats of it (in its text, a
        tool's output, an error) reaches neither the chat, its transcript, the journal
        nor the editor."""
        secret = self._goosed.secret
        if len(secret) < 6:  # as the log's: a shorter one would blank common words
            return text
        for form in {secret, json.dumps(secret, ensure_ascii=False)[1:-1]}:
            text = text.replace(form, "<redacted>")
        return text

    def _update(self, session_id: str, update: dict[str, Any]) -> None:
        self._put(
            {"method": "session/update", "params": {"sessionId": session_id, "update": update}}
        )

    async def _serve(self, request_id: Any, method: str, params: Any) -> None:
        handler = self._handlers.get(method)
        try:
            if handler is None:
                raise RpcError(-32601, f"Method not found: {method}")
            if not isinstance(params, dict):
                raise RpcError(-32602, "Invalid params")
            result = await handler(params)
        except RpcError as exc:
            self._put({"id": request_id, "error": {"code": exc.code, "message": str(exc)}})
        except GoosedLost as exc:
            self._put({"id": request_id, "error": {"code": -32603, "message": str(exc)}})
            self._end(f"at {self._goosed.url} could not be reached")
        except AgentError as exc:
            self._put({"id": request_id, "error": {"code": -32603, "message": str(exc)}})
        except Exception as exc:  # a request is always answered, never left waiting
            log.exception("goosed: %s failed", method)
            message = f"goose-ls could not translate goosed's answer ({type(exc).__name__})"
            self._put({"id": request_id, "error": {"code": -32603, "message": message}})
        else:
            self._put({"id": request_id, "result": result})

    async def _ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A request of goosed's side to goose-ls (a permission), its whole answer."""
        self._next_id += 1
        request_id = f"goosed-{self._next_id}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._asked[request_id] = future
        self._put({"id": request_id, "method": method, "params": params})
        try:
            return await future
        finally:
            self._asked.pop(request_id, None)

    # --- requests --------------------------------------------------------------
    async def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        facts = self._goosed.facts
        return {
            "protocolVersion": 1,
            "agentInfo": {
                "name": "goosed",
                "title": "goosed (Goose Desktop)",
                "version": facts.version or "unknown",
            },
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                "sessionCapabilities": {"list": {}, "close": {}},
            },
            "authMethods": [],
            "_meta": {"goose-ls/bridge": __version__, RENAME: True},
        }

    async def _new(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = params.get("cwd")
        if not isinstance(cwd, str):
            raise RpcError(-32602, "session/new needs a cwd")
        session = await self._goosed.call(
            "POST", "/agent/start", {"working_dir": cwd}, "a new session"
        )
        info = translate.session_info(session)
        if info is None:
            raise AgentError("goosed answered /agent/start without a session id")
        await self._resume(info["sessionId"])
        return {"sessionId": info["sessionId"]}

    async def _resume(self, session_id: str) -> Any:
        return await self._goosed.call(
            "POST",
            "/agent/resume",
            {"session_id": session_id, "load_model_and_extensions": True},
            f"to open session {session_id}",
        )

    async def _load(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = params.get("sessionId")
        if not isinstance(session_id, str):
            raise RpcError(-32602, "session/load needs a sessionId")
        try:
            await self._resume(session_id)
            session = await self._goosed.call("GET", session_path(session_id))
        except GoosedRefused as exc:
            if exc.status in (400, 404):
                raise RpcError(
                    -32002, f"Resource not found (Session not found: {session_id})"
                ) from None
            raise
        conversation = session.get("conversation") if isinstance(session, dict) else None
        for message in conversation if isinstance(conversation, list) else []:
            for update in translate.updates(message, replay=True):
                self._update(session_id, update)
        return {}

    async def _list(self, params: dict[str, Any]) -> dict[str, Any]:
        if not self._goosed.facts.lists_sessions:
            return {"sessions": []}
        answer = await self._goosed.call("GET", "/sessions", what="the list of sessions")
        sessions = answer.get("sessions") if isinstance(answer, dict) else None
        cwd = params.get("cwd")
        found = []
        for session in sessions if isinstance(sessions, list) else []:
            info = translate.session_info(session)
            if info is None or info["_meta"]["goosed"]["sessionType"] not in SHOWN_TYPES:
                continue
            if isinstance(cwd, str) and info["cwd"] != cwd:
                continue
            found.append(info)
        return {"sessions": found}

    async def _rename(self, params: dict[str, Any]) -> dict[str, Any]:
        """A chat renamed in goose-ls is renamed in Desktop's list too (200 characters at most)."""
        session_id, title = params.get("sessionId"), params.get("title")
        if not isinstance(session_id, str) or not isinstance(title, str):
            raise RpcError(-32602, "a rename needs a sessionId and a title")
        await self._goosed.call(
            "PUT", session_path(session_id, "/name"), {"name": title[:200]}, "the new title"
        )
        return {}

    async def _close_session(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    # --- a turn --------------------------------------------------------------
    async def _prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id, blocks = params.get("sessionId"), params.get("prompt")
        if not isinstance(session_id, str) or not isinstance(blocks, list):
            raise RpcError(-32602, "session/prompt needs a sessionId and a prompt")
        if session_id in self._turns:
            raise RpcError(-32602, "the session already has a turn running")
        turn = self._turns[session_id] = _Turn()
        message = translate.user_message(blocks)
        reader = turn.reader = asyncio.ensure_future(self._stream(session_id, turn, message))
        try:
            await asyncio.wait([reader])
        finally:
            reader.cancel()
            for task in turn.asking:
                task.cancel()
            del self._turns[session_id]
        if reader.cancelled():
            if turn.cancelled:
                return {"stopReason": "cancelled"}
            raise asyncio.CancelledError
        return reader.result()

    async def _stream(
        self, session_id: str, turn: _Turn, message: dict[str, Any]
    ) -> dict[str, Any]:
        goosed = self._goosed
        if goosed.facts.session_events:
            stream = await goosed.stream("GET", session_path(session_id, "/events"))
            try:
                body = {"request_id": turn.request_id, "user_message": message}
                try:
                    await goosed.call(
                        "POST", session_path(session_id, "/reply"), body, "the prompt"
                    )
                except GoosedRefused as exc:
                    # a turn of Desktop's runs there ("active request"): wait for it
                    if exc.status == 400 and "active" in str(exc).lower():
                        raise RpcError(-32602, f"session {BUSY}: {exc}") from None
                    raise
                try:
                    return await self._follow(session_id, turn, stream)
                except (RpcError, AgentError) as exc:
                    # the turn failed here (what goosed sent was wrong): goosed's turn
                    # stops too, as closing the stream stops it before 1.28
                    if not isinstance(exc, GoosedLost):
                        with contextlib.suppress(AgentError):
                            await goosed.call(
                                "POST",
                                session_path(session_id, "/cancel"),
                                {"request_id": turn.request_id},
                                "the cancel",
                            )
                    raise
            finally:
                await stream.aclose()
        # goosed 1.16 read the whole conversation (``messages``), later ones only the new
        # message (``user_message``): both go, as each ignores the other's field.
        before = await goosed.call("GET", session_path(session_id), what="the conversation")
        history = before.get("conversation") if isinstance(before, dict) else None
        messages = [*(history if isinstance(history, list) else []), message]
        body = {"session_id": session_id, "user_message": message, "messages": messages}
        stream = await goosed.stream("POST", "/reply", body)
        try:
            return await self._follow(session_id, turn, stream)
        finally:
            await stream.aclose()

    async def _follow(self, session_id: str, turn: _Turn, stream: Any) -> dict[str, Any]:
        """The turn's events until its ``Finish`` (the result) or ``Error`` (raised)."""
        try:
            async for _, event in events(stream):
                belongs = event.get("request_id")
                if isinstance(belongs, str) and belongs != turn.request_id:
                    continue  # another client's turn on the same session
                end = self._event(session_id, turn, event)
                if end is not None:
                    return end
        except (httpx.HTTPError, OSError) as exc:
            raise GoosedLost(f"goosed at {self._goosed.url} dropped the turn ({exc})") from exc
        ended = f"goosed at {self._goosed.url} ended the turn's stream without finishing it"
        try:  # goosed gone (Desktop quit) is the agent's end; else only this turn failed
            await self._goosed.call("GET", "/status")
        except GoosedLost:
            raise GoosedLost(f"{ended}, and no longer answers") from None
        raise AgentError(ended)

    def _event(self, session_id: str, turn: _Turn, event: dict[str, Any]) -> dict[str, Any] | None:
        kind = event.get("type")
        if kind == "Message":
            message = event.get("message")
            for update in translate.updates(message):
                if update["sessionUpdate"] == "tool_call":
                    turn.calls[update["toolCallId"]] = (update["title"], update["rawInput"])
                self._update(session_id, update)
            for asked in translate.confirmation(message):
                task = asyncio.ensure_future(self._confirm(session_id, asked, turn.calls))
                turn.asking.add(task)
                task.add_done_callback(turn.asking.discard)
        elif kind == "Finish":
            result: dict[str, Any] = {"stopReason": "end_turn"}
            if (used := translate.usage(event.get("token_state"))) is not None:
                result["usage"] = used
            return result
        elif kind == "Error":
            error = event.get("error")
            said = error[:ERROR_CHARS] if isinstance(error, str) and error else "no reason given"
            raise RpcError(-32603, f"goosed: {said}")
        elif kind == "Notification":
            log.debug("goosed: a tool's notification on %s", session_id)
        elif kind == "UpdateConversation":
            # goosed replaced the conversation the model sees (a compaction): the chat's
            # history stays in the journal, and the chat says it happened.
            turn.compactions += 1
            compaction = f"goosed-{turn.request_id}-{turn.compactions}"
            self._update(
                session_id,
                {"sessionUpdate": "compaction_update", "compactionId": compaction,
                 "status": "completed"},
            )  # fmt: skip
        elif kind not in ("Ping", "ActiveRequests", "ModelChange", "MessageUsage"):
            log.info("goosed sent an event of a kind goose-ls does not know: %.40s", kind)
        return None

    async def _confirm(
        self,
        session_id: str,
        asked: dict[str, Any],
        calls: dict[str, tuple[str, dict[str, Any]]],
    ) -> None:
        """A tool confirmation asked as any agent's permission, answered to goosed. One
        whose tool or arguments are not those of the tool call it names (what the chat
        shows, and what goosed runs once allowed) is denied unasked: its card would show
        another call than the one allowed."""
        name, arguments = translate.call_of(asked)
        streamed = calls.get(asked["id"])
        if streamed is not None and streamed != (translate.title_of(name), arguments):
            log.warning("goosed asked to confirm tool call %.80s with other arguments than "
                        "it streamed: denied unasked", asked["id"])  # fmt: skip
            await self._answer_confirmation(session_id, asked["id"], DENY)
            return
        call = {
            "toolCallId": asked["id"],
            "title": translate.title_of(name),
            "kind": translate.kind_of(name, arguments),
            "status": "pending",
            "rawInput": arguments,
        }
        action = DENY
        try:
            answer = await self._ask(
                "session/request_permission",
                {"sessionId": session_id, "toolCall": call, "options": OPTIONS},
            )
            result = answer.get("result")
            outcome = result.get("outcome") if isinstance(result, dict) else None
            if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
                action = ACTIONS.get(str(outcome.get("optionId")), DENY)
        finally:
            await self._answer_confirmation(session_id, asked["id"], action)

    async def _answer_confirmation(self, session_id: str, call_id: str, action: str) -> None:
        body = {"id": call_id, "action": action, "sessionId": session_id,
                "principalType": "Tool"}  # fmt: skip
        with contextlib.suppress(AgentError):
            await asyncio.shield(
                self._goosed.call("POST", "/action-required/tool-confirmation", body, "the answer")
            )

    async def _cancel(self, params: Any) -> None:
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        turn = self._turns.get(session_id) if isinstance(session_id, str) else None
        if turn is None or session_id is None:
            return
        turn.cancelled = True
        if self._goosed.facts.session_events:
            with contextlib.suppress(AgentError):
                await self._goosed.call(
                    "POST",
                    session_path(session_id, "/cancel"),
                    {"request_id": turn.request_id},
                    "the cancel",
                )
        if turn.reader is not None:
            turn.reader.cancel()  # its stream closed: goosed's cancel before 1.28
