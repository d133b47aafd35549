"""The scripted agent's steps: what one entry of a script makes the agent do on the wire.

See ``script.py`` for the format. Each step sends updates, calls the client (files,
terminals, permissions), writes raw bytes, sleeps, crashes or ends the turn.
Over 300 lines: one short method per step kind, read beside the script format.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from typing import Any

from goose_ls.scripted.memory import Memory
from goose_ls.scripted.peer import Peer, RpcError
from goose_ls.scripted.script import GOOSE_PERMISSION_OPTIONS


class TurnOver(Exception):
    """A step ended the turn early, answering the prompt with this error."""

    def __init__(self, error: RpcError) -> None:
        self.error = error


class StepPlayer:
    """Plays steps on one agent's connection to its client."""

    def __init__(self, peer: Peer, memory: Memory) -> None:
        self.peer = peer
        self.writer = peer.writer
        self.memory = memory
        self.custom_notifications = False
        """Whether the client asked for goose's own notifications in ``initialize``."""
        self.elicitation: dict[str, Any] = {}
        """The client's ``elicitation`` capability (its modes, as keys)."""
        self.capabilities: dict[str, Any] = {}
        """The client's ``clientCapabilities`` (from ``initialize``)."""
        self.steered: dict[str, asyncio.Event] = {}
        """Set when a message is taken into the session's running turn (``steering.py``)."""
        self.sessions: dict[str, Any] = {}
        """The agent's open sessions (``onSession``'s ``{other}`` names one of them)."""

    async def play(
        self, session_id: str, steps: list[dict[str, Any]], cancel: asyncio.Event | None = None
    ) -> None:
        cancel = cancel or asyncio.Event()
        for step in steps:
            if cancel.is_set() and not step.get("evenIfCancelled"):
                return
            await self.step(session_id, step, cancel)

    async def step(self, session_id: str, step: dict[str, Any], cancel: asyncio.Event) -> None:
        if "onSession" in step:  # sent as another session's (a child's, or any id)
            await self.on_session(session_id, step, cancel)
        elif "text" in step or "thought" in step or "userText" in step:
            kind, text = _chunk_kind(step)
            for piece in _split(text, int(step.get("chunks", 1))):
                if cancel.is_set():
                    return
                chunk = {"sessionUpdate": kind, "content": {"type": "text", "text": piece}}
                if "messageId" in step:  # the agent's own id of the message (Claude's)
                    chunk["messageId"] = step["messageId"]
                await self.update(session_id, chunk)
                if step.get("delay"):
                    await asyncio.sleep(float(step["delay"]))
            self.memory.message(session_id, kind, text)
        elif "toolCall" in step:
            await self.update(session_id, {"sessionUpdate": "tool_call", **step["toolCall"]})
        elif "toolUpdate" in step:
            for _ in range(int(step.get("repeat", 1))):  # goose re-sends a call's whole content
                await self.update(
                    session_id, {"sessionUpdate": "tool_call_update", **step["toolUpdate"]}
                )
        elif "plan" in step:
            await self.update(session_id, {"sessionUpdate": "plan", "entries": step["plan"]})
        elif "usage" in step:
            await self.update(session_id, {"sessionUpdate": "usage_update", **step["usage"]})
        elif "gooseStatus" in step and self.custom_notifications:  # as goose: only if asked
            update = {"sessionUpdate": "status_message", "status": step["gooseStatus"]}
            await self.peer.notify(
                "_goose/unstable/session/update", {"sessionId": session_id, "update": update}
            )
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
        elif "update" in step:  # as ACP asks: an unstable kind only to a client that offers it
            update = step["update"]
            if self.offered(update.get("sessionUpdate") if isinstance(update, dict) else None):
                await self.update(session_id, update)
        elif "readFile" in step:
            await self.read_file(session_id, step["readFile"])
        elif "writeFile" in step:
            await self.write_file(session_id, step["writeFile"])
        elif "terminal" in step:
            await self.run_terminal(session_id, step["terminal"])
        elif "shell" in step:
            await self.run_shell(session_id, step["shell"], bool(step.get("quiet")))
        elif "permission" in step:
            await self.ask_permission(session_id, step["permission"], cancel)
        elif "elicit" in step:
            await self.elicit(session_id, step["elicit"])
        elif "elicitComplete" in step:  # a URL question done out of band
            await self.peer.notify(
                "elicitation/complete", {"elicitationId": step["elicitComplete"]}
            )
        elif "together" in step:  # steps at once, as an agent running tools in parallel
            await asyncio.gather(
                *(self.step(session_id, each, cancel) for each in step["together"])
            )
        elif "sleep" in step:
            await asyncio.sleep(float(step["sleep"]))
        elif "waitForCancel" in step:
            await cancel.wait()
        elif "waitForSteer" in step:  # until a message is taken into the turn (or a cancel)
            await _either(self.steered.setdefault(session_id, asyncio.Event()), cancel)
            self.steered[session_id].clear()
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
        elif "burst" in step:
            await self.burst(session_id, str(step["burst"]), int(step.get("chunks", 1)))
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
        elif "closeStdout" in step:
            self.writer.close()
            with contextlib.suppress(OSError):
                os.close(1)
            await asyncio.Event().wait()
        elif "orphanCrash" in step:
            await self.orphan_crash(session_id, step["orphanCrash"])
        elif "exitLater" in step:
            asyncio.get_running_loop().call_later(float(step["exitLater"]), os._exit, 1)
        elif "unknownSessions" in step:
            for number in range(int(step["unknownSessions"])):
                await self.update(f"unknown-{number}", {"sessionUpdate": "plan", "entries": []})
        elif "stderr" in step:
            sys.stderr.write(step["stderr"] + "\n")
            sys.stderr.flush()
        elif "error" in step:
            error = step["error"]
            raise TurnOver(
                RpcError(
                    error.get("code", -32603),
                    error.get("message", "Internal error"),
                    error.get("data"),
                )
            )

    async def on_session(
        self, session_id: str, step: dict[str, Any], cancel: asyncio.Event
    ) -> None:
        """Play ``step`` naming the session ``onSession`` (``{other}``: another open
        session of this agent's, ``{this}``: the turn's) in its messages, as an agent
        speaks for a child session; a permission's or question's answer is said on the
        turn's own session."""
        named = str(step["onSession"])
        other = next((s for s in self.sessions if s != session_id), "no-other-session")
        target = named.replace("{other}", other).replace("{this}", session_id)
        rest = {key: value for key, value in step.items() if key != "onSession"}
        if "permission" in rest:
            await self.ask_permission(target, rest["permission"], cancel, said_on=session_id)
        elif "elicit" in rest:
            await self.elicit(target, rest["elicit"], said_on=session_id)
        elif "update" in rest and isinstance(rest["update"], dict):
            update = {
                key: value.replace("{other}", other).replace("{this}", session_id)
                if isinstance(value, str)
                else value
                for key, value in rest["update"].items()
            }
            await self.step(target, {**rest, "update": update}, cancel)
        else:
            await self.step(target, rest, cancel)

    async def stamped(self, session_id: str, step: dict[str, Any]) -> None:
        """Chunks whose text starts with the monotonic clock when written (for benchmarks).

        ``rate`` spaces them evenly at that many chunks a second.
        """
        size, count = int(step.get("size", 20)), int(step["stamped"])
        rate = float(step.get("rate", 0))
        started = time.monotonic()
        for number in range(count):
            if rate and (ahead := started + number / rate - time.monotonic()) > 0.001:
                await asyncio.sleep(ahead)
            text = f"{time.monotonic_ns():020d}" + "x" * max(0, size - 20)
            await self.update(
                session_id,
                {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
            )

    async def orphan_crash(self, session_id: str, spec: dict[str, Any]) -> None:
        """Leave a child holding our pipes (as an MCP server would), say its pid, then die."""
        child = await asyncio.create_subprocess_exec("sleep", str(spec.get("childSleeps", 30)))
        await self.say(session_id, f"[child {child.pid}]")
        os._exit(int(spec.get("code", 1)))

    async def say(self, session_id: str, text: str) -> None:
        await self.update(
            session_id,
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
        )

    async def read_file(self, session_id: str, spec: dict[str, Any]) -> None:
        """Read through the client, as goose's developer tools do; say what came back."""
        params = {"sessionId": session_id, "path": spec["path"]}
        params.update({k: spec[k] for k in ("line", "limit") if spec.get(k) is not None})
        try:
            response = await self.peer.request("fs/read_text_file", params)
            await self.say(session_id, f"[read {json.dumps(response['content'])}]")
        except RpcError as exc:
            await self.say(session_id, f"[read error {exc.code}: {exc}]")

    async def write_file(self, session_id: str, spec: dict[str, Any]) -> None:
        try:
            await self.peer.request(
                "fs/write_text_file",
                {"sessionId": session_id, "path": spec["path"], "content": spec["content"]},
            )
            await self.say(session_id, "[written]")
        except RpcError as exc:
            await self.say(session_id, f"[write error {exc.code}: {exc}]")

    async def run_shell(self, session_id: str, line: str, quiet: bool = False) -> None:
        """Run ``line`` in the agent's own process, as goose's shell tool does (no
        ``terminal/*``), and say what it printed: ``[shell 0: ...]`` (not when ``quiet``)."""
        shell = await asyncio.create_subprocess_exec(
            "sh",
            "-c",
            line,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await shell.communicate()
        said = out.decode(errors="replace").strip()
        if not quiet:
            await self.say(session_id, f"[shell {shell.returncode}: {said}]")

    async def run_terminal(self, session_id: str, spec: dict[str, Any]) -> None:
        """Create, wait (or kill after ``killAfter`` s), read and release a terminal;
        with ``summary``, say the output's length instead of the output."""
        params: dict[str, Any] = {"sessionId": session_id, "command": spec["command"]}
        if spec.get("env"):  # as the SDK sends it: empty and unset fields left out
            params["env"] = [{"name": k, "value": v} for k, v in spec["env"].items()]
        for key in ("args", "cwd", "outputByteLimit"):
            if spec.get(key) is not None:
                params[key] = spec[key]
        try:
            created = await self.peer.request("terminal/create", params)
        except RpcError as exc:
            await self.say(session_id, f"[terminal error {exc.code}: {exc}]")
            return
        terminal_id = created["terminalId"]
        ids = {"sessionId": session_id, "terminalId": terminal_id}
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
            await self.peer.request("terminal/kill", ids)
        exit_status = await self.peer.request("terminal/wait_for_exit", ids)
        output = await self.peer.request("terminal/output", ids)
        if spec.get("release", True):
            await self.peer.request("terminal/release", ids)
        if call:
            await self.update(
                session_id,
                {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed"},
            )
        result = {
            "exitCode": exit_status.get("exitCode"),
            "signal": exit_status.get("signal"),
            "output": len(output["output"]) if spec.get("summary") else output["output"],
            "truncated": output["truncated"],
        }
        await self.say(session_id, f"[terminal {json.dumps(result)}]")

    async def ask_permission(
        self,
        session_id: str,
        spec: dict[str, Any],
        cancel: asyncio.Event,
        said_on: str | None = None,
    ) -> None:
        call = {key: value for key, value in spec.items() if key != "withdrawAfter"}
        try:
            response = await self.peer.request(
                "session/request_permission",
                {
                    "sessionId": session_id,
                    "toolCall": {
                        "kind": "other",
                        "status": "pending",
                        **spec.get("toolCall", call),
                    },
                    "options": spec.get("options", GOOSE_PERMISSION_OPTIONS),
                },
                withdraw_after=spec.get("withdrawAfter"),
            )
        except RpcError as exc:  # withdrawn: -32800
            answer = f"error {exc.code}"
        else:
            outcome = response["outcome"]
            answer = outcome.get("optionId") or outcome["outcome"]
        if spec.get("announce", True):
            await self.update(
                said_on or session_id,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": f"[permission: {answer}]"},
                },
            )

    async def elicit(
        self, session_id: str, spec: dict[str, Any], said_on: str | None = None
    ) -> None:
        """Ask the user through the client, as goose does only of a client that advertised
        the mode; say what came back (on ``said_on``, if given)."""
        mode = spec.get("mode", "form")
        said_on = said_on or session_id
        if mode not in self.elicitation:
            await self.say(said_on, f"[elicitation: {mode} not supported]")
            return
        params = {"sessionId": session_id, "mode": mode, "message": spec["message"]}
        if mode == "form":
            params["requestedSchema"] = spec["schema"]
        else:
            params.update(elicitationId=spec.get("elicitationId", "e1"), url=spec["url"])
        try:
            answer = await self.peer.request(
                "elicitation/create", params, withdraw_after=spec.get("withdrawAfter")
            )
        except RpcError as exc:
            await self.say(said_on, f"[elicitation: error {exc.code}]")
            return
        content = f" {json.dumps(answer['content'])}" if "content" in answer else ""
        await self.say(said_on, f"[elicitation: {answer['action']}{content}]")

    def offered(self, kind: object) -> bool:
        """Whether the client offered the capability an update of ``kind`` needs."""
        session = self.capabilities.get("session") or {}
        needs = {
            "notice": "notices" in session,
            "compaction_update": "compaction" in session,
            "compaction_summary_chunk": "compaction" in session,
            "plan_update": "plan" in self.capabilities,
            "plan_removed": "plan" in self.capabilities,
            "subagent_update": "subagents" in self.capabilities,
            "session_message": "subagents" in self.capabilities,
            "session_message_chunk": "subagents" in self.capabilities,
        }
        return needs.get(str(kind), True)

    async def burst(self, session_id: str, text: str, chunks: int) -> None:
        """``text`` in ``chunks`` text chunks written at once, as a fast agent's pipe
        delivers them to a reader that was busy."""
        lines = []
        for piece in _split(text, chunks):
            update = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": piece},
            }
            params = {"sessionId": session_id, "update": update}
            lines.append(
                json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})
            )
            self.memory.sent(session_id, update)
        await self.write_line("\n".join(lines).encode())

    async def update(self, session_id: str, update: Any) -> None:
        await self.peer.notify("session/update", {"sessionId": session_id, "update": update})
        if isinstance(update, dict):
            self.memory.sent(session_id, update)

    async def write_line(self, data: bytes) -> None:
        await self.peer.write_line(data)


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


async def _either(first: asyncio.Event, second: asyncio.Event) -> None:
    """Wait until either event is set."""
    waits = [asyncio.ensure_future(event.wait()) for event in (first, second)]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
