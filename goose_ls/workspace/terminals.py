"""Terminals the agent runs through goose-ls: a shell line in its own process group.

goose sends a whole shell line as ``command``; it runs through the user's shell, in the
requested cwd (inside the workspace) with the requested environment. Output is kept up
to ``outputByteLimit`` bytes, dropping from the start at a character boundary. Killing
or releasing a terminal ends its whole process group, and every terminal of a session is
released when the session ends or goose-ls stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import uuid
from collections.abc import Mapping

import attrs

from goose_ls.tasks import Tasks

DEFAULT_OUTPUT_LIMIT = 1_000_000
KEEP_RELEASED = 50


@attrs.frozen
class ExitStatus:
    exit_code: int | None
    signal: str | None


def _trim(data: bytes, limit: int) -> tuple[bytes, bool]:
    """Keep the last ``limit`` bytes, starting on a UTF-8 character boundary."""
    if len(data) <= limit:
        return data, False
    start = len(data) - limit
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1  # a continuation byte: move to the next character's start
    return data[start:], True


class Terminal:
    def __init__(self, process: asyncio.subprocess.Process, limit: int, tasks: Tasks) -> None:
        self.process = process
        self.limit = limit
        self._output = b""
        self.truncated = False
        self._reader = tasks.run(self._read(), f"terminal {process.pid} output")

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(65536):
            self._output, cut = _trim(self._output + chunk, self.limit)
            self.truncated = self.truncated or cut

    @property
    def output(self) -> str:
        return self._output.decode("utf-8", "replace")

    def status(self) -> ExitStatus | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return ExitStatus(None, signal.Signals(-code).name)
        return ExitStatus(code, None)

    async def wait(self) -> ExitStatus:
        await self.process.wait()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        status = self.status()
        assert status is not None
        return status

    def kill(self) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)


class Terminals:
    """Every terminal, by id, with the session that owns it."""

    def __init__(self, tasks: Tasks) -> None:
        self._tasks = tasks
        self._terminals: dict[str, tuple[str, Terminal]] = {}
        self._released: dict[str, str] = {}
        """Output of released terminals (the chat still shows it), the latest few."""

    async def create(
        self,
        session_id: str,
        command: str,
        args: list[str],
        cwd: str,
        env: Mapping[str, str],
        limit: int | None,
    ) -> str:
        line = command if not args else " ".join([command, *map(shlex.quote, args)])
        shell = os.environ.get("SHELL") or "/bin/sh"
        process = await asyncio.create_subprocess_exec(
            shell,
            "-c",
            line,
            cwd=cwd,
            env={**os.environ, **env},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal_id = f"term-{uuid.uuid4().hex[:10]}"
        self._terminals[terminal_id] = (
            session_id,
            Terminal(process, limit if limit is not None else DEFAULT_OUTPUT_LIMIT, self._tasks),
        )
        return terminal_id

    def get(self, session_id: str, terminal_id: str) -> Terminal:
        owner, terminal = self._terminals.get(terminal_id, ("", None))
        if terminal is None or owner != session_id:
            raise KeyError(terminal_id)
        return terminal

    def release(self, session_id: str, terminal_id: str) -> None:
        terminal = self.get(session_id, terminal_id)
        terminal.kill()
        del self._terminals[terminal_id]
        self._released[terminal_id] = terminal.output
        while len(self._released) > KEEP_RELEASED:
            del self._released[next(iter(self._released))]

    def output_of(self, terminal_id: str) -> str | None:
        """A terminal's output so far, released or not (None: unknown id)."""
        if terminal_id in self._terminals:
            return self._terminals[terminal_id][1].output
        return self._released.get(terminal_id)

    def release_session(self, session_id: str) -> None:
        for terminal_id, (owner, _) in list(self._terminals.items()):
            if owner == session_id:
                self.release(session_id, terminal_id)

    def release_all(self) -> None:
        for terminal_id, (owner, _) in list(self._terminals.items()):
            self.release(owner, terminal_id)
