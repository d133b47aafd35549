"""Open buffers follow the disk while the agent works, whoever writes the files.

claude-agent-acp and codex-acp write files with their own tools, never through
goose-ls: without this, the buffer of a file they edit goes stale, and the next save
puts the old text back. While a turn runs (and ``workspace.watchAfterTurn`` seconds
after the last one ends) the folders of the open files are watched
(:mod:`goose_ls.workspace.watcher`); at each batch of changes, and when the watch ends,
every open file is compared with the disk:

- a buffer that held the file's text as it was on disk (no unsaved changes) is brought
  to the new text by the editor with the smallest edit: one undo takes it back, and the
  plugins mark it saved (``goose/diskSynced``). VS Code reloads such a buffer itself
  (undo kept, nothing left unsaved), and an edit from goose-ls would race its reload:
  there goose-ls waits for the reload, and edits only a buffer still not reloaded when
  the watch ends. eglot without goose-ls.el questions such an edit (and a "yes, reread"
  answer gets it applied twice): there the note says how to reload the buffer;
- a buffer with unsaved changes is left alone, and so is the disk: that is a conflict.
  The agent's text is copied into the data dir, the chat says so, and code actions in
  the file take the agent's version or keep the user's. Nothing of either is lost.

The text a buffer is compared against is the file as it was on disk when the watch
began (or when the turn's checkpoint was taken, for a file opened since).
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import os
import stat
from collections.abc import Awaitable, Callable, Mapping, Set
from pathlib import Path
from typing import Protocol

import attrs

from goose_ls.atomic_files import private_folder, tighten
from goose_ls.sessions.registry import Registry
from goose_ls.tasks import Tasks
from goose_ls.workspace import watcher
from goose_ls.workspace.agent_files import EditorFiles

log = logging.getLogger(__name__)

MAX_TEXT = 10_000_000
"""Bytes: a bigger open file is not followed."""


@attrs.define
class Conflict:
    """The agent changed a file whose buffer has unsaved changes."""

    agent_text: str
    copy: Path
    """Where the agent's text is kept, in the data dir."""


class OpenFiles(Protocol):
    """What the LSP layer tells of the editor's buffers, and the user's choices in a
    conflict."""

    @property
    def conflicts(self) -> Mapping[Path, Conflict]: ...

    @property
    def changed(self) -> Set[Path]: ...

    def buffer_changed(self, path: Path) -> None: ...

    def buffer_saved(self, path: Path) -> None: ...

    async def take_agents(self, path: Path) -> None: ...

    def keep_mine(self, path: Path) -> Conflict | None: ...

    def reload_hint(self) -> str: ...


class LiveBuffers:
    def __init__(
        self,
        editor: EditorFiles,
        registry: Registry,
        before: Callable[[Path], Awaitable[bytes | None]],
        into: Callable[[], Path],
        tasks: Tasks,
        grace: Callable[[], float],
    ) -> None:
        """``grace``: seconds the watch goes on after the last turn ends (the setting
        ``workspace.watchAfterTurn``): an agent's process may still be writing what its
        turn started (a formatter it ran, its own tool finishing)."""
        self._editor = editor
        self._registry = registry
        self._before = before
        self._into = into
        self._tasks = tasks
        self._grace = grace
        self._turns = 0
        self._stop: asyncio.Event | None = None
        self._watch: asyncio.Task[None] | None = None
        self._ending: asyncio.TimerHandle | None = None
        self._base: dict[Path, str] = {}
        """Open file → its text on disk as the buffer last matched it."""
        self._reloading: dict[Path, str] = {}
        """Open file → the disk's text the editor is to reload it with (VS Code)."""
        self._real: dict[Path, str] = {}
        """Open file → where it really was when first read (its links resolved)."""
        self.conflicts: dict[Path, Conflict] = {}
        self.changed: set[Path] = set()
        """Every path the watch saw change (for the code actions that offer a revert)."""
        self._lock = asyncio.Lock()

    # --- the watch, from the first turn to the last turn's end -------------------------
    async def turn_started(self) -> None:
        self._turns += 1
        if self._ending is not None:
            self._ending.cancel()
            self._ending = None
        if self._watch is None:
            await self._remember_open()
            self._stop = asyncio.Event()
            self._watch = self._tasks.run(self._follow(self._stop), "following the disk")

    def turn_ended(self) -> None:
        self._turns = max(0, self._turns - 1)
        if self._turns == 0 and self._watch is not None and self._ending is None:
            self._ending = asyncio.get_running_loop().call_later(self._grace(), self._end)

    def _end(self) -> None:
        self._ending = None
        if self._turns == 0 and self._stop is not None:
            self._stop.set()

    async def _follow(self, stop: asyncio.Event) -> None:
        try:
            folders = lambda: {path.parent for path in self._editor.open_files()}  # noqa: E731
            async for paths in watcher.changes(folders, stop):
                if paths:
                    self.changed |= paths
                    await self.check()
            await self.check(last=True)  # what came after the last batch, or was missed
            log.info("the turns are over: stopped following open files on disk")
        finally:
            if self._stop is stop:
                self._watch = self._stop = None
                self._base.clear()
                self._reloading.clear()

    async def _remember_open(self) -> None:
        for path in self._editor.open_files():
            if path not in self._base and (text := await self._disk(path)) is not None:
                self._base[path] = text

    # --- comparing open buffers with the disk --------------------------------------------
    async def check(self, last: bool = False) -> None:
        """Compare every open buffer with the disk; ``last``: the watch ends, so a buffer
        the editor was left to reload itself and did not is edited now."""
        async with self._lock:
            for path in self._editor.open_files():
                await self._compare(path, last)

    async def _compare(self, path: Path, last: bool = False) -> None:
        disk = await self._disk(path)
        await self._editor.settled(path)  # the editor's changes held back, applied first
        buffer = self._editor.buffer_text(path)
        if disk is None or buffer is None:
            return
        base = self._base.get(path)
        if base is None:
            before = await self._before(path)
            base = _text(before) if before is not None else disk
            self._base[path] = base
        if _holds(buffer, disk):
            # The user saved, an edit was applied (a revert's), or the editor reloaded
            # the file; a conflict the buffer has come out of has nothing left to settle.
            self._base[path] = disk
            self.conflicts.pop(path, None)
            if self._reloading.pop(path, None) == disk != base:
                self._reloaded(path)
            return
        if disk == base or (path in self.conflicts and self.conflicts[path].agent_text == disk):
            self._reloading.pop(path, None)
            return
        if not _holds(buffer, base):
            self._reloading.pop(path, None)
            await self._conflict(path, disk)
            return
        how = self._editor.reload_instead()
        if how is not None or (self._editor.reloads_clean_buffers() and not last):
            told = self._reloading.get(path) == disk
            self._reloading[path] = disk  # see buffer_changed
            if how is not None and not told:
                self._tell(
                    "info",
                    f"{path.name} changed on disk; your buffer of it shows the old text "
                    f"still: {how} in it shows the new one (one undo takes it back).",
                )
            return
        problem = await self._editor.sync_buffer(path, buffer, disk)
        if problem is not None:
            log.warning("could not bring %s along: %s", path, problem)
            await self._conflict(path, disk, problem)
            return
        self._base[path] = disk
        self._followed(path)

    def buffer_changed(self, path: Path) -> None:
        """The editor changed an open buffer: when it is the reload goose-ls waits for,
        the buffer follows the disk from now on (its user's next change is theirs); a
        buffer that now holds the agent's text of a conflict has nothing left to settle."""
        expected = self._reloading.get(path)
        conflict = self.conflicts.get(path)
        if expected is None and conflict is None:
            return
        buffer = self._editor.buffer_text(path)
        if buffer is None:
            return
        if expected is not None and _holds(buffer, expected):
            del self._reloading[path]
            self._base[path] = expected
            self._reloaded(path)
        if conflict is not None and _holds(buffer, conflict.agent_text):
            del self.conflicts[path]

    def buffer_saved(self, path: Path) -> None:
        """The user saved a buffer: the disk holds their text now (not the agent's
        change to follow), and in a conflict theirs is kept, as the note says."""
        self.conflicts.pop(path, None)
        if path in self._base and (buffer := self._editor.buffer_text(path)) is not None:
            self._base[path] = buffer

    def _reloaded(self, path: Path) -> None:
        self._tell("info", f"{path.name} changed on disk; the editor reloaded it.")

    def _followed(self, path: Path) -> None:
        self._tell(
            "info",
            f"{path.name} changed on disk; your buffer shows the new text "
            f"(one undo takes it back).{self._editor.reload_hint()}",
        )

    async def _disk(self, path: Path) -> str | None:
        """The file's text, if it is still where it was when first read: a folder on its
        way swapped for a link (to outside the workspace) shows nothing of what it leads
        to."""
        real = await asyncio.to_thread(os.path.realpath, path)
        if self._real.setdefault(path, real) != real:
            return None
        return await asyncio.to_thread(_read, path)

    async def _conflict(self, path: Path, agent_text: str, problem: str | None = None) -> None:
        copy = await asyncio.to_thread(self._keep, path, agent_text)
        self.conflicts[path] = Conflict(agent_text, copy)
        what = (
            f"{path.name} changed on disk, and the editor did not take the new text into "
            f"your buffer ({problem})."
            if problem
            else f"{path.name} changed on disk while your buffer of it has unsaved changes."
        )
        self._tell(
            "warning",
            f"{what} "
            f"Both are kept: yours in the buffer, the new text on disk and in {copy}. "
            "In that file, the code actions “Goose: Take the agent's version” and "
            "“Goose: Keep my version” choose; “Goose: Compare with the agent's version” "
            "shows the difference. Saving the buffer keeps yours.",
        )

    def _keep(self, path: Path, text: str) -> Path:
        stamp = datetime.datetime.now().strftime("%Y%m%dT%H%M%S.%f")
        folder = self._into() / stamp
        private_folder(folder.parent)
        private_folder(folder)
        copy = folder / path.name
        copy.write_text(text, encoding="utf-8")
        tighten(copy, 0o600)
        return copy

    def _tell(self, severity: str, text: str) -> None:
        running = [s for s in self._registry if s.active is not None]
        for session in running or list(self._registry)[-1:]:
            self._registry.note(session, severity, text)  # type: ignore[arg-type]

    # --- the user's choice in a conflict ----------------------------------------------
    async def take_agents(self, path: Path) -> None:
        """The buffer gets the agent's text (the user's stays in the undo history, and
        in a copy beside the agent's)."""
        conflict = self.conflicts.pop(path, None)
        buffer = self._editor.buffer_text(path)
        if conflict is None or buffer is None:
            return
        await asyncio.to_thread(self._keep_mine, conflict.copy, buffer)
        problem = await self._editor.sync_buffer(path, buffer, conflict.agent_text)
        if problem is not None:
            self.conflicts[path] = conflict
            raise OSError(problem)
        self._base[path] = conflict.agent_text

    def reload_hint(self) -> str:
        """What the editor will ask before it saves a buffer goose-ls changed to the disk's
        text, and how to answer (nothing, where a plugin marks the buffer saved)."""
        return self._editor.reload_hint()

    def keep_mine(self, path: Path) -> Conflict | None:
        """The user keeps the buffer; the agent's text stays in its copy (and is no
        conflict again while the disk holds it)."""
        conflict = self.conflicts.pop(path, None)
        if conflict is not None:
            self._base[path] = conflict.agent_text
        return conflict

    @staticmethod
    def _keep_mine(agent_copy: Path, text: str) -> None:
        mine = agent_copy.with_name(f"yours-{agent_copy.name}")
        mine.write_text(text, encoding="utf-8")
        tighten(mine, 0o600)


def _holds(buffer: str, text: str) -> bool:
    """Whether a buffer holds the file's ``text``. Neovim's text of an empty file is one
    line end (its buffer has one empty line, and the line end it would write)."""
    return buffer == text or (text == "" and buffer in ("\n", "\r\n"))


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _read(path: Path) -> str | None:
    """The file's text, or None when it is not a readable regular text file of sane size
    (a FIFO put in its place is not waited on, a link put there is not followed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_TEXT:
            return None
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = stream.read(MAX_TEXT + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
