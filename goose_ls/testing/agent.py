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
    SetSessionModeResponse,
)

from goose_ls.testing.script import load_script
from goose_ls.testing.steps import StepPlayer, TurnOver

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


class ScriptedAgent:
    """Implements the SDK's ``Agent`` interface by playing a script."""

    def __init__(self, script: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        self.script = script
        self.steps = StepPlayer(writer)
        self.sessions: dict[str, dict[str, Any]] = {}
        self.prompts = 0
        self.cancelled: dict[str, asyncio.Event] = {}
        self.signed_in = False

    def on_connect(self, conn: AgentSideConnection) -> None:
        self.steps.conn = conn

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
        await self.steps.play(session_id, self.script.get("sessionSetup", DEFAULT_SETUP))
        response: dict[str, Any] = {"sessionId": session_id, "modes": GOOSE_MODES}
        if "configOptions" in self.script:
            response["configOptions"] = self.script["configOptions"]
        return NewSessionResponse.model_validate(response)

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        if session_id not in self.sessions and not self._loadable(session_id):
            raise RequestError(-32002, "Resource not found", f"Session not found: {session_id}")
        self.sessions[session_id] = {"cwd": cwd}
        await self.steps.play(session_id, self.script.get("load", []))
        return LoadSessionResponse.model_validate({"modes": GOOSE_MODES})

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> SetSessionModeResponse:
        await self.steps.update(
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
            await self.steps.play(session_id, steps, cancel)
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
        await self.steps.update(
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
        await agent.steps.step("", step, asyncio.Event())
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
