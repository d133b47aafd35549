"""The scripted ACP agent: plays a script (see ``script.py``) over :mod:`.peer`.

Its defaults copy goose 1.43 on the wire: the ``initialize`` answer, session ids like
``20260719_1``, usage and command updates sent before the ``session/new`` response,
tool calls without ``kind`` or ``status``, and the four permission options. It also
answers what goose does not (``session/resume``, ``session/delete``, ``logout``) as ACP
says, for scripts whose ``capabilities`` advertise them.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from goose_ls.scripted import sign_in
from goose_ls.scripted.memory import Memory
from goose_ls.scripted.options import changed, offered, takes_booleans
from goose_ls.scripted.peer import Peer, RpcError, stdio
from goose_ls.scripted.script import AGENT_KEYS, load_script
from goose_ls.scripted.server_state import ServerState
from goose_ls.scripted.steering import ACP_METHOD, GOOSE_METHOD, ScriptedSteering
from goose_ls.scripted.steps import StepPlayer, TurnOver

GOOSE_CAPABILITIES: dict[str, Any] = {
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
    """Answers the ACP methods goose answers, by playing a script."""

    def __init__(
        self, script: dict[str, Any], peer: Peer, server: ServerState | None = None
    ) -> None:
        self.script = script
        self.own_script = script
        """The script the agent started with (``script`` is it, or it with a chat
        script's keys over it)."""
        self.chat_script = ""
        """The name of the last script taken from ``chatScripts``."""
        self.server = server or ServerState()
        """What this agent shares with the others of its process (served, one a
        connection)."""
        self.memory = Memory(script.get("conversations"), bool(script.get("saveChunks")))
        self.steps = StepPlayer(peer, self.memory)
        self.steering = ScriptedSteering(
            script.get("steering"), self.steps, bool(script.get("steerTooLate"))
        )
        self.sessions = self.server.sessions
        self.steps.sessions = self.sessions
        self.prompts = 0
        self.cancelled: dict[str, asyncio.Event] = {}
        self.signed_in = False
        self.booleans = False
        """The client takes boolean config options (said in ``initialize``)."""
        self.chosen_ids = [str(i) for i in script.get("sessionIds", [])]
        """The ids ``session/new`` and ``session/fork`` answer first (an agent chooses)."""
        self.methods: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]] = {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "session/new": self.new_session,
            "session/load": self.load_session,
            "session/set_mode": self.set_session_mode,
            "session/prompt": self.prompt,
            "session/list": self.list_sessions,
            "session/set_config_option": self.set_config_option,
            "session/close": self.close_session,
            "session/resume": self.resume_session,
            "session/fork": self.fork_session,
            "session/delete": self.delete_session,
            "logout": self.logout,
        }
        if self.steering.shape == "acp":
            self.methods[ACP_METHOD] = self.steering.acp
        elif self.steering.shape == "goose":
            self.methods[GOOSE_METHOD] = self.steering.goose

    async def request(self, method: str, params: Any) -> Any:
        self._take_chat_script()
        handler = self.methods.get(method)
        if handler is None:
            raise RpcError(-32601, "Method not found", {"method": method})
        if not isinstance(params, dict):
            raise RpcError(-32602, "Invalid params", {"params": params})
        return await handler(params)

    async def notification(self, method: str, params: Any) -> None:
        if method == "session/cancel" and isinstance(params, dict):
            event = self.cancelled.get(params.get("sessionId", ""))
            if event is not None:
                event.set()

    def _take_chat_script(self) -> None:
        """Play the newest script of ``chatScripts`` from now on, if there is a new one."""
        folder = self.own_script.get("chatScripts")
        if not folder:
            return
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
        if not names or names[-1] == self.chat_script:
            return
        chat = load_script(Path(folder) / names[-1])
        if refused := sorted(AGENT_KEYS & chat.keys()):
            raise RpcError(-32603, "Internal error", f"{names[-1]}: read at start only: {refused}")
        self.chat_script = names[-1]
        self.script = {**self.own_script, **chat}
        self.prompts = 0
        self.chosen_ids = [str(i) for i in self.script.get("sessionIds", [])]

    # --- ACP methods -------------------------------------------------------------
    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        capabilities = params.get("clientCapabilities") or {}
        meta = capabilities.get("_meta") or {}
        self.steps.elicitation = capabilities.get("elicitation") or {}
        self.steps.capabilities = capabilities
        self.steps.custom_notifications = bool((meta.get("goose") or {}).get("customNotifications"))
        self.booleans = takes_booleans(params)
        if (error := self.script.get("initializeError")) is not None:
            raise RpcError(error["code"], error["message"], error.get("data"))
        return {
            # goose echoes what it was sent; an agent of ACP v2 only answers 2
            "protocolVersion": self.script.get("protocolVersion", params["protocolVersion"]),
            "agentCapabilities": self.script.get("capabilities", GOOSE_CAPABILITIES),
            "agentInfo": self.script.get("agentInfo", {"name": "goose", "version": "1.43.0"}),
            **({"_meta": meta} if (meta := self.steering.meta()) else {}),
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

    async def authenticate(self, params: dict[str, Any]) -> dict[str, Any]:
        accepted = self.script.get("acceptAuth")
        method_id = params["methodId"]
        if accepted is not None and method_id not in accepted:
            raise RpcError(-32000, "Authentication required", f"{method_id} did not work")
        self.signed_in = True
        return {}

    async def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = params["cwd"]
        if (
            self.script.get("requireAuth")
            and not self.signed_in
            and not sign_in.signed_in(self.script)
        ):
            raise RpcError(-32000, "Authentication required")
        there = cwd in self.script.get("agentFolders", []) or os.path.isdir(cwd)  # noqa: ASYNC240
        if not os.path.isabs(cwd) or not there:
            raise RpcError(-32602, "Invalid params", "invalid directory path")
        session_id = self._new_id()
        self.sessions[session_id] = {"cwd": cwd}
        self._store_session(session_id)
        await self.steps.play(session_id, self.script.get("sessionSetup", DEFAULT_SETUP))
        return {"sessionId": session_id, **self._options()}

    def _new_id(self) -> str:
        if self.chosen_ids:
            return self.chosen_ids.pop(0)
        # Never an id given out before (as goose's database never does): a closed chat
        # leaves the count, not the ids taken.
        taken = {*self._stored_sessions(), *self.sessions, *self.server.made}
        prefix = f"{self.script.get('idPrefix', '')}{datetime.date.today():%Y%m%d}_"
        number = len(self._stored_sessions()) + len(self.sessions) + 1
        while f"{prefix}{number}" in taken:
            number += 1
        self.server.made.add(f"{prefix}{number}")
        return f"{prefix}{number}"

    async def fork_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """``session/fork``, as goose answers it (unadvertised, a fork point in
        ``_meta.conversationBefore``) or claude-agent-acp (``_meta.jetbrains.air.fork``):
        a new session, nothing replayed. ``noFork`` in the script: no such method, as
        codex-acp; ``forkError``: fails with it."""
        if self.script.get("noFork"):
            raise RpcError(-32601, "Method not found", {"method": "session/fork"})
        if (error := self.script.get("forkError")) is not None:
            raise RpcError(error["code"], error["message"], error.get("data"))
        source = self._reopen({"sessionId": params["sessionId"], "cwd": params["cwd"]})
        session_id = self._new_id()
        self.sessions[session_id] = {"cwd": params["cwd"], "forkedFrom": source}
        self._store_session(session_id)
        await self.steps.play(session_id, self.script.get("sessionSetup", DEFAULT_SETUP))
        return {"sessionId": session_id, **self._options()}

    async def load_session(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = self._reopen(params)
        for update in self.memory.conversation(session_id):
            await self.steps.peer.notify(
                "session/update", {"sessionId": session_id, "update": update}
            )
        await self.steps.play(session_id, self.script.get("load", []))
        return self._options()

    def _options(self) -> dict[str, Any]:
        """The modes and config options part of a session/new or session/load answer."""
        response: dict[str, Any] = {"modes": GOOSE_MODES}
        if "configOptions" in self.script:
            response["configOptions"] = offered(self.script["configOptions"], self.booleans)
        return response

    async def resume_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """As ``session/load``, without replaying the chat (ACP's resume); the script's
        ``resume`` steps are played before the answer, as claude-agent-acp sends its
        slash commands."""
        session_id = self._reopen(params)
        await self.steps.play(session_id, self.script.get("resume", []))
        return self._options()

    def _reopen(self, params: dict[str, Any]) -> str:
        session_id = str(params["sessionId"])
        if session_id not in self.sessions and not self._loadable(session_id):
            raise RpcError(-32002, "Resource not found", f"Session not found: {session_id}")
        self.sessions[session_id] = {"cwd": params["cwd"]}
        return session_id

    async def set_session_mode(self, params: dict[str, Any]) -> dict[str, Any]:
        await self.steps.update(
            params["sessionId"],
            {"sessionUpdate": "current_mode_update", "currentModeId": params["modeId"]},
        )
        return {}

    async def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        run_id = self.server.start_run(params["sessionId"])
        try:
            return await self._run(params)
        finally:
            self.server.end_run(params["sessionId"], run_id)

    async def _run(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = params["sessionId"]
        turns = self.script.get("turns")
        index = self.prompts
        self.prompts += 1
        cancel = self.cancelled[session_id] = asyncio.Event()
        said = " ".join(
            str(block.get("text") or "") for block in params["prompt"] if isinstance(block, dict)
        ).strip()
        self.memory.said(session_id, params["prompt"])
        if said in self.script.get("byPrompt", {}):
            steps = self.script["byPrompt"][said]
        elif turns:
            steps = turns[min(index, len(turns) - 1)]
        else:
            steps = [{"text": f"You said: {said}", "chunks": 3}]
        await self.steering.turn_starts(session_id)
        try:
            await self.steps.play(session_id, steps, cancel)
        except TurnOver as over:
            raise over.error from None
        finally:
            await self.steering.turn_ends(session_id)
        stop = "cancelled" if cancel.is_set() else "end_turn"
        for step in steps:
            if cancel.is_set() and step.get("cancelledAs"):
                stop = step["cancelledAs"]
            if "stopReason" in step:
                stop = step["stopReason"]
        used = next((step["turnUsage"] for step in steps if "turnUsage" in step), None)
        return {"stopReason": stop, **({"usage": used} if used else {})}

    async def list_sessions(self, params: dict[str, Any]) -> dict[str, Any]:
        known = dict.fromkeys([*self._stored_sessions(), *self.sessions])  # goose's database
        listed = [
            {"sessionId": sid, "cwd": params.get("cwd") or "/", "title": f"stored {sid}"}
            for sid in known
        ]
        return {"sessions": [*listed, *self.script.get("agentSessions", [])]}

    async def set_config_option(self, params: dict[str, Any]) -> dict[str, Any]:
        self.script["configOptions"] = changed(self.script.get("configOptions", []), params)
        options = offered(self.script["configOptions"], self.booleans)
        await self.steps.update(
            params["sessionId"], {"sessionUpdate": "config_option_update", "configOptions": options}
        )
        return {"configOptions": options}

    async def close_session(self, params: dict[str, Any]) -> dict[str, Any]:
        self.sessions.pop(params["sessionId"], None)
        return {}

    async def delete_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """Forget the session (an unknown one too, as ACP asks), or fail as scripted."""
        if error := self.script.get("deleteError"):
            raise RpcError(error["code"], error["message"], error.get("data"))
        session_id = params["sessionId"]
        self.sessions.pop(session_id, None)
        self._unstore_session(session_id)
        return {}

    async def logout(self, params: dict[str, Any]) -> dict[str, Any]:
        self.signed_in = False
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

    def _unstore_session(self, session_id: str) -> None:
        if path := self.script.get("sessionsFile"):
            kept = [known for known in self._stored_sessions() if known != session_id]
            Path(path).write_text("".join(f"{known}\n" for known in kept), encoding="utf-8")

    def _loadable(self, session_id: str) -> bool:
        """Without a sessions file every id loads; with one, only the ids it holds."""
        return not self.script.get("sessionsFile") or session_id in self._stored_sessions()


async def serve(script: dict[str, Any]) -> None:
    reader, writer = await stdio()
    peer = Peer(reader, writer, Path(script["record"]) if script.get("record") else None)
    agent = ScriptedAgent(script, peer)
    for step in script.get("startup", []):
        if "exit" in step:
            sys.stderr.write(step.get("message", "scripted agent: exiting at start") + "\n")
            sys.stderr.flush()
            os._exit(int(step["exit"]))
        await agent.steps.step("", step, asyncio.Event())
    await peer.listen(agent.request, agent.notification)
