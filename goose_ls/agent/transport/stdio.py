"""Newline-delimited JSON over a child process's pipes: one message a line.

Lines of any length are read whole (goose's ``session/load`` replays and file contents
are far over asyncio's 64 KiB default); half a line left when the agent closes its output
is logged and dropped.
"""

from __future__ import annotations

import asyncio

from goose_ls.agent.transport.frames import drop

READ_AHEAD = 1024 * 1024
"""asyncio's read-buffer limit for the agent's stdout: past twice this much unread, the
pipe is not read until goose-ls catches up, so an agent sending faster than goose-ls
handles waits instead of filling goose-ls's memory. Longer lines are still read whole."""


class LineFrames:
    """The transport's :class:`~goose_ls.agent.transport.frames.Frames` over stdout and stdin."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self) -> bytes | None:
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
                    drop(b"".join(parts), "the agent closed its output mid-line")
                return None

    def why_ended(self) -> str:
        return "closed its output"

    async def send(self, data: bytes) -> None:
        self._writer.write(data + b"\n")
        await self._writer.drain()

    def send_now(self, data: bytes) -> None:
        self._writer.write(data + b"\n")  # one write: lines never interleave

    def closing(self) -> bool:
        return self._writer.is_closing()

    async def close(self) -> None:
        self._writer.close()
