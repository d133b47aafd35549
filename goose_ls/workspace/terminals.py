"""Terminals the agent runs through goose-ls: a shell line in its own process group.

goose sends a whole shell line as ``command``; it runs through the user's shell, in the
requested cwd (inside the workspace) with the requested environment, less the variables
that inject code into other programs, and inside the sandbox when there is one. Output
is kept in a ring buffer of ``outputByteLimit`` bytes (at most ``MAX_OUTPUT_LIMIT``),
read from a character boundary. Killing or releasing a terminal ends its process group
and every process below it, escaped ones included (see ``reaper``); every terminal of a
session is released when the session ends or goose-ls stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import os
import shlex
import signal
import uuid
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from goose_ls.tasks import Tasks
from goose_ls.workspace import reaper, sandbox

DEFAULT_OUTPUT_LIMIT = 1_000_000
MAX_OUTPUT_LIMIT = 8 * 1024 * 1024
"""The most output kept per terminal, whatever ``outputByteLimit`` the agent asks for."""
KEEP_RELEASED = 50
EXIT_GRACE = 1.0
EXIT_POLL = 0.05
INJECTING_ENV = (
    "LD_*",
    "DYLD_*",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONINSPECT",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "NODE_OPTIONS",
    "NODE_PATH",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "GIT_*",
    "PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "ZDOTDIR",
    "IFS",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "*_ASKPASS",
    "GOOSE_LS_*",
)
"""Variables that make an allowed command run other code (a preloaded library, a startup
file, a planted binary on ``PATH``, a ``.gitconfig`` under another ``HOME``), or fake
goose-ls's own mark: dropped from the agent's environment unless
``terminal.allowedEnv`` names them."""


@attrs.frozen
class ExitStatus:
    exit_code: int | None
    signal: str | None


def filter_env(env: Mapping[str, str], allowed: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """The agent's variables less the code-injecting ones; and the names dropped."""
    allowed = set(allowed)
    kept: dict[str, str] = {}
    dropped: list[str] = []
    for name, value in env.items():
        risky = any(fnmatch.fnmatchcase(name, pattern) for pattern in INJECTING_ENV)
        if risky and name not in allowed:
            dropped.append(name)
        else:
            kept[name] = value
    return kept, dropped


class OutputBuffer:
    """The last ``limit`` bytes of a stream: a ring of chunks, each append O(chunk)."""

    def __init__(self, limit: int | None) -> None:
        wanted = DEFAULT_OUTPUT_LIMIT if limit is None else limit
        self.limit = max(0, min(wanted, MAX_OUTPUT_LIMIT))
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self.truncated = False

    def append(self, chunk: bytes) -> None:
        self._chunks.append(chunk)
        self._size += len(chunk)
        while self._size > self.limit:
            extra = self._size - self.limit
            first = self._chunks[0]
            if len(first) <= extra:
                self._chunks.popleft()
                self._size -= len(first)
            else:
                self._chunks[0] = first[extra:]
                self._size -= extra
            self.truncated = True

    def __len__(self) -> int:
        return self._size

    def text(self) -> str:
        """The output decoded, starting on a character boundary when its start was cut."""
        data = b"".join(self._chunks)
        start = 0
        if self.truncated:
            while start < len(data) and (data[start] & 0xC0) == 0x80:
                start += 1  # a continuation byte: move to the next character's start
        return data[start:].decode("utf-8", "replace")


class Terminal:
    def __init__(
        self, process: asyncio.subprocess.Process, limit: int | None, marker: str, tasks: Tasks
    ) -> None:
        self.process = process
        self.marker = marker
        self._output = OutputBuffer(limit)
        self._reader = tasks.run(self._read(), f"terminal {process.pid} output")

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(65536):
            self._output.append(chunk)

    @property
    def truncated(self) -> bool:
        return self._output.truncated

    @property
    def output(self) -> str:
        return self._output.text()

    def status(self) -> ExitStatus | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return ExitStatus(None, signal.Signals(-code).name)
        return ExitStatus(code, None)

    async def wait(self) -> ExitStatus:
        """The command's exit, once its output is read, or ``EXIT_GRACE`` seconds after
        it exited when something it left behind still holds the output open."""
        # Not process.wait(): before Python 3.12 it also waits for the pipes to close.
        while self.process.returncode is None:  # noqa: ASYNC110 (no exit event to await)
            await asyncio.sleep(EXIT_POLL)
        await asyncio.wait({self._reader}, timeout=EXIT_GRACE)  # left running after that
        status = self.status()
        assert status is not None
        return status

    def kill(self) -> None:
        """Its process group and every process below it or marked as its own."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        reaper.kill_tree(self.process.pid, self.marker)


def line_of(command: str, args: list[str]) -> str:
    """The shell line a ``terminal/create`` runs: the command, then its quoted arguments."""
    return command if not args else " ".join([command, *map(shlex.quote, args)])


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
        jail: tuple[sandbox.Sandbox, list[Path], sandbox.Survey] = (
            sandbox.Sandbox("off"),
            [],
            sandbox.Survey([], []),
        ),
    ) -> str:
        """Start ``line_of(command, args)``; ``jail`` is the sandbox, its writable roots and
        what it hides or keeps read-only. ``env`` is used as given (filter it first)."""
        terminal_id = f"term-{uuid.uuid4().hex[:10]}"
        shell = os.environ.get("SHELL") or "/bin/sh"
        argv = sandbox.wrap(jail[0], [shell, "-c", line_of(command, args)], cwd, jail[1], jail[2])
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env={**os.environ, **env, reaper.MARKER: terminal_id},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        self._terminals[terminal_id] = (
            session_id,
            Terminal(process, limit, terminal_id, self._tasks),
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
