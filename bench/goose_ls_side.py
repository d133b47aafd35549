"""goose-ls under measurement: a server process driven over goose/* by the lean client."""

from __future__ import annotations

import asyncio
import os
import re
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tests_on_path  # noqa: F401  (puts tests/ on sys.path for `support`)
from arrivals import Arrivals
from editor import SERVER, BenchEditor

from goose_ls.tasks import within
from support.harness import sandbox_env


class GooseLsSide:
    def __init__(
        self,
        command: list[str],
        workdir: Path,
        arrivals: Arrivals,
        *,
        apply_edits: bool = False,
        did_change: bool = False,
        lazy: bool = True,
        data_dir: Path | None = None,
        options: dict[str, Any] | None = None,
        server: Sequence[str] = SERVER,
    ) -> None:
        """``options`` are more ``initializationOptions``; ``data_dir`` is
        ``<workdir>-data`` unless given."""
        self.command = command
        self.workdir = workdir
        self.arrivals = arrivals
        self.lazy = lazy
        # Beside the workspace, not in it: the agent's sandbox refuses goose-ls's own
        # files where the agent may write.
        self.data_dir = data_dir or workdir.with_name(f"{workdir.name}-data")
        self.options = options or {}
        self.server = server
        self.messages: list[str] = []
        """What goose-ls told the user (``window/showMessage``)."""
        self.editor = BenchEditor(workdir, apply_edits=apply_edits, did_change=did_change)
        self.editor.handlers["goose/update"] = self._on_update
        self.editor.handlers["goose/turnEnd"] = self._on_turn_end
        self.editor.handlers["goose/agentStatus"] = self._on_status
        self.editor.handlers["window/showMessage"] = lambda p: self.messages.append(p["message"])
        self._turns: dict[str, asyncio.Future[None]] = {}
        self._running = asyncio.Event()

    async def start(self) -> float:
        """Spawn and initialize goose-ls; the seconds until ``initialize`` answered."""
        started = time.perf_counter()
        # The agent's sandbox shows it the bench's folder: its scripts are there.
        logs = self.workdir.with_name(f"{self.workdir.name}-logs")
        env = {"GOOSE_LS_LOG_DIR": str(logs), **sandbox_env([self.workdir.parent])}
        await self.editor.start(env=env, server=self.server)
        agent: dict[str, Any] = {"command": self.command}
        if self.lazy:
            agent["start"] = "lazy"
        await self.editor.initialize(
            {"agent": agent, "dataDir": str(self.data_dir), **self.options}
        )
        return time.perf_counter() - started

    async def agent_running(self) -> None:
        """Wait for the agent to be up (it starts in the background unless lazy)."""
        await within(60, self._running.wait())

    async def new_session(self) -> str:
        result = await self.editor.request("goose/newSession", {})
        return str(result["sessionId"])

    async def prompt(self, session_id: str) -> None:
        """Send a prompt and wait for its ``goose/turnEnd``."""
        message_id = str(uuid.uuid4())
        ended = self._turns[message_id] = asyncio.get_running_loop().create_future()
        await self.editor.request(
            "goose/prompt", {"sessionId": session_id, "messageId": message_id, "prompt": "go"}
        )
        await ended

    async def load(self, session_id: str) -> None:
        await self.editor.request("goose/loadSession", {"sessionId": session_id})

    async def close_session(self, session_id: str) -> None:
        await self.editor.request("goose/closeSession", {"sessionId": session_id})

    def transcript(self, session_id: str) -> Path:
        safe = re.sub(r"[^\w.-]", "_", session_id)
        return self.data_dir / "transcripts" / f"{safe}.md"

    def open_transcript(self, session_id: str) -> None:
        """Open the transcript as an editor does after ``window/showDocument``."""
        path = self.transcript(session_id)
        self.editor.open(path.as_uri(), path.read_text(encoding="utf-8"))

    def cpu_s(self) -> float:
        """CPU time goose-ls has used so far (user and system, all its threads)."""
        return cpu_seconds(self.editor.pid)

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.editor.pid}/status").read_text()
        kilobytes = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
        return kilobytes / 1024

    async def stop(self) -> None:
        await self.editor.stop()

    def _on_update(self, params: dict[str, Any]) -> None:
        update = params["update"]
        if update["sessionUpdate"] == "agent_message_chunk":
            self.arrivals.add(params["sessionId"], update["content"]["text"])

    def _on_status(self, params: dict[str, Any]) -> None:
        if params.get("state") == "running":
            self._running.set()

    def _on_turn_end(self, params: dict[str, Any]) -> None:
        ended = self._turns.pop(params["messageId"], None)
        if ended is not None and not ended.done():
            ended.set_result(None)


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` (``/proc/<pid>/stat``, in clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
