"""The baseline: the ACP SDK's own client side, talking straight to the agent.

It does nothing with an update but note its arrival, so it is the floor for any Python
client of the same agent.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from acp import connect_to_agent
from acp.client.connection import ClientSideConnection
from arrivals import Arrivals

LINE_LIMIT = 64 * 1024 * 1024


class _Client:
    def __init__(self, arrivals: Arrivals) -> None:
        self.arrivals = arrivals

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        content = getattr(update, "content", None)
        if content is not None and getattr(content, "type", "") == "text":
            self.arrivals.add(session_id, content.text)

    async def request_permission(self, *_: Any, **__: Any) -> Any:
        raise RuntimeError("the benchmark scripts ask no permission")


class DirectClient:
    def __init__(self, command: list[str], workdir: Path, arrivals: Arrivals) -> None:
        self.command = command
        self.workdir = workdir
        self.arrivals = arrivals
        self.conn: ClientSideConnection | None = None
        self._process: asyncio.subprocess.Process | None = None

    async def start(self) -> float:
        """Spawn and initialize the agent; the seconds that took."""
        started = time.perf_counter()
        self._process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=LINE_LIMIT,
        )
        assert self._process.stdin and self._process.stdout
        self.conn = connect_to_agent(
            _Client(self.arrivals),  # type: ignore[arg-type]
            self._process.stdin,
            self._process.stdout,
        )
        await self.conn.initialize(protocol_version=1)
        return time.perf_counter() - started

    async def new_session(self) -> str:
        assert self.conn is not None
        response = await self.conn.new_session(cwd=str(self.workdir), mcp_servers=[])
        return response.session_id

    async def prompt(self, session_id: str) -> None:
        assert self.conn is not None
        await self.conn.prompt(session_id=session_id, prompt=[{"type": "text", "text": "go"}])  # type: ignore[list-item]

    async def load(self, session_id: str) -> None:
        assert self.conn is not None
        await self.conn.load_session(session_id=session_id, cwd=str(self.workdir), mcp_servers=[])

    async def stop(self) -> None:
        if self.conn is not None:
            await self.conn.close()
        if self._process is not None:
            self._process.kill()
            await self._process.wait()
