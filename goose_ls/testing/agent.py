"""The scripted ACP agent: the SDK's agent side, playing a script (see ``script.py``).

Its defaults copy goose 1.43 on the wire: the ``initialize`` answer, session ids like
``20260719_1``, usage and command updates sent before the ``session/new`` response,
tool calls without ``kind`` or ``status``, and the four permission options.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, cast

from acp import RequestError, stdio_streams
from acp.agent.connection import AgentSideConnection
from acp.connection import StreamEvent
from acp.schema import (
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestPermissionRequest,
    SessionNotification,
    SetSessionModeResponse,
)

from goose_ls.testing.script import GOOSE_PERMISSION_OPTIONS, load_script

LINE_LIMIT = 64 * 1024 * 1024

GOOSE_CAPABILITIES = {
    "loadSession": True,
    "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
    "mcpCapabilities": {"http": True, "sse": False},
    "sessionCapabilities": {"list": {}, "close": {}},
}
GOOSE_MODES = {
    "currentModeId": "auto",
    "availableModes": [
        {"id": mode, "name": mode, "description": text}
        for mode, text in (
            ("auto", "Automatically approve tool calls"),
            ("approve", "Ask before every tool call"),
            ("smart_approve", "Ask only for sensitive tool calls"),
            ("chat", "Chat only, no tool calls"),
        )
    ],
}
DEFAULT_SETUP: list[dict[str, Any]] = [
    {"usage": {"used": 0, "size": 200000}},
    {"commands": [{"name": "compact", "description": "Compact the conversation history"}]},
]


class TurnOver(Exception):
    """A step ended the turn early (with this reply)."""

    def __init__(self, reply: PromptResponse | RequestError) -> None:
        self.reply = reply


class ScriptedAgent:
    """Implements the SDK's ``Agent`` interface by playing a script."""

    def __init__(self, script: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        self.script = script
        self.writer = writer
        self.conn: AgentSideConnection | None = None
        self.sessions: dict[str, dict[str, Any]] = {}
        self.prompts = 0
        self.cancelled: dict[str, asyncio.Event] = {}
        self.signed_in = False

    def on_connect(self, conn: AgentSideConnection) -> None:
        self.conn = conn

    # --- ACP methods -------------------------------------------------------------
    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse.model_validate(
            {
                "protocolVersion": protocol_version,  # goose echoes what it was sent
                "agentInfo": self.script.get("agentInfo", {"name": "goose", "version": "1.43.0"}),
                "agentCapabilities": self.script.get("capabilities", GOOSE_CAPABILITIES),
                "authMethods": self.script.get(
                    "authMethods",
                    [
                        {
                            "id": "goose-provider",
                            "name": "Configure Provider",
                            "description": "Run `goose configure` to set up your AI provider",
                        }
                    ],
                ),
            }
        )

    async def authenticate(self, method_id: str, **_: Any) -> dict[str, Any]:
        accepted = self.script.get("acceptAuth")
        if accepted is not None and method_id not in accepted:
            raise RequestError(-32000, "Authentication required", f"{method_id} did not work")
        self.signed_in = True
        return {}

    async def new_session(self, cwd: str, mcp_servers: Any = None, **_: Any) -> NewSessionResponse:
        if self.script.get("requireAuth") and not self.signed_in:
            raise RequestError(-32000, "Authentication required")
        if not os.path.isabs(cwd) or not os.path.isdir(cwd):  # noqa: ASYNC240
            raise RequestError(-32602, "Invalid params", "invalid directory path")
        known = self._stored_sessions()
        session_id = f"{datetime.date.today():%Y%m%d}_{len(known) + len(self.sessions) + 1}"
        self.sessions[session_id] = {"cwd": cwd}
        self._store_session(session_id)
        await self.play(session_id, self.script.get("sessionSetup", DEFAULT_SETUP))
        response: dict[str, Any] = {"sessionId": session_id, "modes": GOOSE_MODES}
        if "configOptions" in self.script:
            response["configOptions"] = self.script["configOptions"]
        return NewSessionResponse.model_validate(response)

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        if session_id not in self.sessions and not self._loadable(session_id):
            raise RequestError(-32002, "Resource not found", f"Session not found: {session_id}")
        self.sessions[session_id] = {"cwd": cwd}
        await self.play(session_id, self.script.get("load", []))
        return LoadSessionResponse.model_validate({"modes": GOOSE_MODES})

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> SetSessionModeResponse:
        await self.update(
            session_id, {"sessionUpdate": "current_mode_update", "currentModeId": mode_id}
        )
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        turns = self.script.get("turns")
        index = self.prompts
        self.prompts += 1
        cancel = self.cancelled[session_id] = asyncio.Event()
        said = " ".join(getattr(block, "text", "") or "" for block in prompt).strip()
        if said in self.script.get("byPrompt", {}):
            steps = self.script["byPrompt"][said]
        elif turns:
            steps = turns[min(index, len(turns) - 1)]
        else:
            steps = [{"text": f"You said: {said}", "chunks": 3}]
        try:
            await self.play(session_id, steps, cancel)
        except TurnOver as over:
            if isinstance(over.reply, RequestError):
                raise over.reply from None
            return over.reply
        stop = "cancelled" if cancel.is_set() else "end_turn"
        for step in steps:
            if cancel.is_set() and step.get("cancelledAs"):
                stop = step["cancelledAs"]
            if "stopReason" in step:
                stop = step["stopReason"]
        return PromptResponse.model_validate({"stopReason": stop})

    async def cancel(self, session_id: str, **_: Any) -> None:
        event = self.cancelled.get(session_id)
        if event is not None:
            event.set()

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> Any:
        from acp.schema import ListSessionsResponse

        listed = [
            {"sessionId": sid, "cwd": cwd or "/", "title": f"stored {sid}"}
            for sid in self._stored_sessions()
        ]
        return ListSessionsResponse.model_validate(
            {"sessions": [*listed, *self.script.get("agentSessions", [])]}
        )

    async def set_config_option(self, config_id: str, session_id: str, value: Any, **_: Any) -> Any:
        from acp.schema import SetSessionConfigOptionResponse

        options = [
            {**option, "currentValue": value} if option["id"] == config_id else option
            for option in self.script.get("configOptions", [])
        ]
        self.script["configOptions"] = options
        await self.update(
            session_id, {"sessionUpdate": "config_option_update", "configOptions": options}
        )
        return SetSessionConfigOptionResponse.model_validate({"configOptions": options})

    async def close_session(self, session_id: str, **_: Any) -> dict[str, Any]:
        self.sessions.pop(session_id, None)
        return {}

    # --- sessions kept across restarts, as goose keeps them in its database ----------
    def _stored_sessions(self) -> list[str]:
        path = self.script.get("sessionsFile")
        if not path or not Path(path).exists():
            return []
        return Path(path).read_text(encoding="utf-8").split()

    def _store_session(self, session_id: str) -> None:
        if path := self.script.get("sessionsFile"):
            with Path(path).open("a", encoding="utf-8") as out:
                out.write(session_id + "\n")

    def _loadable(self, session_id: str) -> bool:
        """Without a sessions file every id loads; with one, only the ids it holds."""
        return not self.script.get("sessionsFile") or session_id in self._stored_sessions()

    # --- playing steps -----------------------------------------------------------
    async def play(
        self, session_id: str, steps: list[dict[str, Any]], cancel: asyncio.Event | None = None
    ) -> None:
        cancel = cancel or asyncio.Event()
        for step in steps:
            if cancel.is_set():
                return
            await self.step(session_id, step, cancel)

    async def step(self, session_id: str, step: dict[str, Any], cancel: asyncio.Event) -> None:
        if "text" in step or "thought" in step or "userText" in step:
            kind, text = _chunk_kind(step)
            for piece in _split(text, int(step.get("chunks", 1))):
                if cancel.is_set():
                    return
                await self.update(
                    session_id, {"sessionUpdate": kind, "content": {"type": "text", "text": piece}}
                )
                if step.get("delay"):
                    await asyncio.sleep(float(step["delay"]))
        elif "toolCall" in step:
            await self.update(session_id, {"sessionUpdate": "tool_call", **step["toolCall"]})
        elif "toolUpdate" in step:
            await self.update(
                session_id, {"sessionUpdate": "tool_call_update", **step["toolUpdate"]}
            )
        elif "plan" in step:
            await self.update(session_id, {"sessionUpdate": "plan", "entries": step["plan"]})
        elif "usage" in step:
            await self.update(session_id, {"sessionUpdate": "usage_update", **step["usage"]})
        elif "commands" in step:
            await self.update(
                session_id,
                {
                    "sessionUpdate": "available_commands_update",
                    "availableCommands": step["commands"],
                },
            )
        elif "mode" in step:
            await self.update(
                session_id, {"sessionUpdate": "current_mode_update", "currentModeId": step["mode"]}
            )
        elif "configOptions" in step:
            await self.update(
                session_id,
                {"sessionUpdate": "config_option_update", "configOptions": step["configOptions"]},
            )
        elif "sessionInfo" in step:
            await self.update(
                session_id, {"sessionUpdate": "session_info_update", **step["sessionInfo"]}
            )
        elif "update" in step:
            await self.raw_notification(session_id, step["update"])
        elif "readFile" in step:
            await self.read_file(session_id, step["readFile"])
        elif "writeFile" in step:
            await self.write_file(session_id, step["writeFile"])
        elif "terminal" in step:
            await self.run_terminal(session_id, step["terminal"])
        elif "permission" in step:
            await self.ask_permission(session_id, step["permission"], cancel)
        elif "sleep" in step:
            await asyncio.sleep(float(step["sleep"]))
        elif "waitForCancel" in step:
            await cancel.wait()
        elif "raw" in step:
            await self.write_line(step["raw"].encode())
        elif "rawHex" in step:
            await self.write_line(bytes.fromhex(step["rawHex"]))
        elif "stamped" in step:
            await self.stamped(session_id, step)
        elif "bigText" in step:
            await self.update(
                session_id,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "x" * int(step["bigText"])},
                },
            )
        elif "bigRaw" in step:
            await self.write_line(b"y" * int(step["bigRaw"]))
        elif "halfLine" in step:
            self.writer.write(step["halfLine"].encode())
            await self.writer.drain()
            os._exit(1)
        elif "crash" in step:
            sys.stdout.flush()
            os._exit(int(step["crash"]))
        elif "hang" in step:
            await asyncio.Event().wait()
        elif "stderr" in step:
            sys.stderr.write(step["stderr"] + "\n")
            sys.stderr.flush()
        elif "error" in step:
            error = step["error"]
            raise TurnOver(
                RequestError(
                    error.get("code", -32603),
                    error.get("message", "Internal error"),
                    error.get("data"),
                )
            )

    async def stamped(self, session_id: str, step: dict[str, Any]) -> None:
        """Chunks whose text starts with the monotonic clock when written (for benchmarks).

        Written as raw lines so the agent's own validation does not set the pace;
        ``rate`` spaces them evenly at that many chunks a second.
        """
        size, count = int(step.get("size", 20)), int(step["stamped"])
        rate = float(step.get("rate", 0))
        started = time.monotonic()
        for number in range(count):
            if rate and (ahead := started + number / rate - time.monotonic()) > 0.001:
                await asyncio.sleep(ahead)
            text = f"{time.monotonic_ns():020d}" + "x" * max(0, size - 20)
            await self.raw_notification(
                session_id,
                {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
            )

    async def say(self, session_id: str, text: str) -> None:
        await self.update(
            session_id,
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
        )

    async def read_file(self, session_id: str, spec: dict[str, Any]) -> None:
        """Read through the client, as goose's developer tools do; say what came back."""
        assert self.conn is not None
        try:
            response = await self.conn.read_text_file(
                session_id=session_id,
                path=spec["path"],
                line=spec.get("line"),
                limit=spec.get("limit"),
            )
            await self.say(session_id, f"[read {json.dumps(response.content)}]")
        except RequestError as exc:
            await self.say(session_id, f"[read error {exc.code}: {exc}]")

    async def write_file(self, session_id: str, spec: dict[str, Any]) -> None:
        assert self.conn is not None
        try:
            await self.conn.write_text_file(
                session_id=session_id, path=spec["path"], content=spec["content"]
            )
            await self.say(session_id, "[written]")
        except RequestError as exc:
            await self.say(session_id, f"[write error {exc.code}: {exc}]")

    async def run_terminal(self, session_id: str, spec: dict[str, Any]) -> None:
        """Create, wait (or kill after ``killAfter`` s), read and release a terminal."""
        assert self.conn is not None
        try:
            created = await self.conn.create_terminal(
                session_id=session_id,
                command=spec["command"],
                cwd=spec.get("cwd"),
                output_byte_limit=spec.get("outputByteLimit"),
            )
        except RequestError as exc:
            await self.say(session_id, f"[terminal error {exc.code}: {exc}]")
            return
        terminal_id = created.terminal_id
        call = spec.get("toolCallId")  # report it in a tool call, as goose's shell tool does
        if call:
            await self.update(
                session_id,
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call,
                    "kind": "execute",
                    "content": [{"type": "terminal", "terminalId": terminal_id}],
                },
            )
        if "killAfter" in spec:
            await asyncio.sleep(float(spec["killAfter"]))
            await self.conn.kill_terminal(session_id=session_id, terminal_id=terminal_id)
        exit_status = await self.conn.wait_for_terminal_exit(
            session_id=session_id, terminal_id=terminal_id
        )
        output = await self.conn.terminal_output(session_id=session_id, terminal_id=terminal_id)
        if spec.get("release", True):
            await self.conn.release_terminal(session_id=session_id, terminal_id=terminal_id)
        if call:
            await self.update(
                session_id,
                {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed"},
            )
        result = {
            "exitCode": exit_status.exit_code,
            "signal": exit_status.signal,
            "output": output.output,
            "truncated": output.truncated,
        }
        await self.say(session_id, f"[terminal {json.dumps(result)}]")

    async def ask_permission(
        self, session_id: str, spec: dict[str, Any], cancel: asyncio.Event
    ) -> None:
        assert self.conn is not None
        request = RequestPermissionRequest.model_validate(
            {
                "sessionId": session_id,
                "toolCall": {"kind": "other", "status": "pending", **spec.get("toolCall", spec)},
                "options": spec.get("options", GOOSE_PERMISSION_OPTIONS),
            }
        )
        response = await self.conn.request_permission(
            session_id=session_id, tool_call=request.tool_call, options=request.options
        )
        outcome = response.outcome
        answer = getattr(outcome, "option_id", None) or outcome.outcome
        if spec.get("announce", True):
            await self.update(
                session_id,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": f"[permission: {answer}]"},
                },
            )

    async def update(self, session_id: str, update: dict[str, Any]) -> None:
        assert self.conn is not None
        notification = SessionNotification.model_validate(
            {"sessionId": session_id, "update": update}
        )
        await self.conn.session_update(session_id=session_id, update=notification.update)

    async def raw_notification(self, session_id: str, update: Any) -> None:
        message = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": update},
        }
        await self.write_line(json.dumps(message).encode())

    async def write_line(self, data: bytes) -> None:
        self.writer.write(data + b"\n")
        await self.writer.drain()


def _chunk_kind(step: dict[str, Any]) -> tuple[str, str]:
    if "thought" in step:
        return "agent_thought_chunk", str(step["thought"])
    if "userText" in step:
        return "user_message_chunk", str(step["userText"])
    return "agent_message_chunk", str(step["text"])


def _split(text: str, chunks: int) -> list[str]:
    """Split ``text`` into ``chunks`` pieces that concatenate back to it exactly."""
    chunks = max(1, min(chunks, len(text) or 1))
    size, extra = divmod(len(text), chunks)
    pieces, start = [], 0
    for i in range(chunks):
        end = start + size + (1 if i < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces


def _recorder(path: Path) -> Any:
    def record(event: StreamEvent) -> None:
        if event.direction.value == "incoming":
            with path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(event.message) + "\n")

    return record


async def serve(script: dict[str, Any]) -> None:
    reader, writer = await stdio_streams(limit=LINE_LIMIT)
    agent = ScriptedAgent(script, writer)
    for step in script.get("startup", []):
        if "exit" in step:
            sys.stderr.write(step.get("message", "scripted agent: exiting at start") + "\n")
            sys.stderr.flush()
            os._exit(int(step["exit"]))
        await agent.step("", step, asyncio.Event())
    observers = [_recorder(Path(script["record"]))] if script.get("record") else []
    conn = AgentSideConnection(
        cast(Any, agent),
        writer,
        reader,
        listening=False,
        observers=observers,
        use_unstable_protocol=True,  # session/close and friends, as goose serves them
    )
    await conn.listen()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(
            "usage: python -m goose_ls.testing SCRIPT.json  (an ACP agent on stdio)",
            file=sys.stderr,
        )
        return 2
    script = load_script(args[0])
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        asyncio.run(serve(script))
    return 0
