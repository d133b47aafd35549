"""Open files an agent that reads the disk sees as last saved, named before its turn.

goose-ls answers ``fs/read_text_file`` from the editor's buffer, but an agent that reads
the disk itself (Claude Code, codex; any agent with ``agent.clientFs`` off) sees a file
as it was last saved. So when such an agent's turn starts, the chat says which open
files differ from the disk: those the prompt names (an @-mention, an attached file, a
selection's file) each time, the other open ones briefly, and only when they change.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import stat
from collections.abc import Callable
from pathlib import Path

from goose_ls.sessions.context import ContextItem, path_of
from goose_ls.sessions.session import Session
from goose_ls.workspace.agent_files import READ_FLAGS, EditorFiles

LISTED = 5
"""Other unsaved files named at most; the rest are counted."""


class UnsavedFiles:
    def __init__(self, editor: EditorFiles, cap: Callable[[], int], own: Callable[[], Path]):
        """``cap``: the largest file compared (``workspace.maxReadBytes``); ``own``:
        goose-ls's data dir, whose files (the sessions index) are not the user's."""
        self._editor = editor
        self._cap = cap
        self._own = own

    async def note(self, session: Session, context: list[ContextItem]) -> str | None:
        """What to tell the user before a turn with ``context`` starts in ``session``
        under an agent that reads the disk; None when nothing is worth saying."""
        buffers = [(path, self._editor.buffer_text(path)) for path in self._editor.open_files()]
        named = [Path(path_of(item.uri)) for item in context if item.uri]
        cap, own = self._cap(), self._own()
        unsaved, mentioned = await asyncio.to_thread(_unsaved, buffers, named, cap, own)
        told, session.unsaved_told = session.unsaved_told, frozenset(unsaved)
        others = [path for path in unsaved if path not in mentioned]
        if not mentioned and (not others or told == session.unsaved_told):
            return None
        return wording(mentioned, others, Path(session.cwd))


def wording(mentioned: list[Path], others: list[Path], cwd: Path) -> str:
    """The note: the files the prompt names first, then the others, briefly."""
    if not mentioned:
        return (
            f"Open files with unsaved changes, which the agent reads as last saved: "
            f"{_names(others, cwd, LISTED)}."
        )
    one = len(mentioned) == 1
    said = (
        f"{_names(mentioned, cwd)} {'has' if one else 'have'} unsaved changes: the agent "
        f"reads the {'file' if one else 'files'} on disk, not your "
        f"{'buffer' if one else 'buffers'}; save {'it' if one else 'them'} for it to see them."
    )
    return f"{said} Also unsaved: {_names(others, cwd, LISTED)}." if others else said


def _names(paths: list[Path], cwd: Path, most: int | None = None) -> str:
    shown = [_shown(path, cwd) for path in paths[:most]]
    if most is not None and len(paths) > most:
        shown.append(f"{len(paths) - most} more")
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def _shown(path: Path, cwd: Path) -> str:
    return str(path.relative_to(cwd)) if path.is_relative_to(cwd) else str(path)


def _unsaved(
    buffers: list[tuple[Path, str | None]], named: list[Path], cap: int, own: Path
) -> tuple[list[Path], list[Path]]:
    """The open files whose buffer differs from the disk, and which of them are
    ``named`` (blocking: run it off the event loop)."""
    wanted = {Path(os.path.realpath(path)) for path in named}
    own = Path(os.path.realpath(own))
    unsaved: list[Path] = []
    for path, text in buffers:
        resolved = Path(os.path.realpath(path))
        if text is None or resolved == own or own in resolved.parents or resolved in unsaved:
            continue
        if _differs(resolved, text, cap):
            unsaved.append(resolved)
    return unsaved, [path for path in unsaved if path in wanted]


def _differs(path: Path, text: str, cap: int) -> bool:
    """Whether the disk holds other than ``text`` at ``path`` (nothing counts); a file
    goose-ls does not compare (not a regular file, too big, unreadable) does not."""
    buffer = text.encode("utf-8")
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        return True  # a new buffer, never saved
    except OSError:
        return False
    try:
        with open(fd, "rb") as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
                return False
            if info.st_size not in (len(buffer), len(buffer) + len(codecs.BOM_UTF8)):
                return True
            disk = stream.read(cap + 1)
    except OSError:
        return False
    return disk.removeprefix(codecs.BOM_UTF8) != buffer
