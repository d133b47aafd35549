"""What a turn changed through goose-ls, and how a change is shown.

goose-ls's own writes (``fs/write_text_file``) are kept in memory per turn, with the
text from before the first write: into an open buffer they never reach the disk, so only
this record knows them. What reached the disk, by whatever means, is found by the turn's
checkpoints (:mod:`goose_ls.sessions.checkpoints`); review and revert read both.
"""

from __future__ import annotations

import difflib
import os
import time
from pathlib import Path

import attrs

from goose_ls.inert import inert_line


@attrs.define
class Change:
    before: str | None
    """None: the turn created the file (or, when not ``kept``, its content is unknown)."""
    after: str | None
    """None: the turn removed the file."""
    kept: bool = True
    """False: the file was there but not text goose-ls could keep (binary, too big,
    unreadable, a link), so it cannot be put back."""
    on_disk: bool = False
    """The change is on disk (found by the turn's checkpoint), not only in a buffer."""
    hidden: bool = False
    """A secret (by name or by content): its content is never shown, only that it
    changed (revert still puts it back)."""
    executable: bool = False
    """The file was executable before the turn (a removed one comes back so)."""


@attrs.define
class OwnWrites:
    """Per turn (message id), per file: the change the agent made through goose-ls."""

    turns: dict[str, dict[Path, Change]] = attrs.Factory(dict)
    started: dict[str, int] = attrs.Factory(dict)
    """When each turn wrote first (``time.time_ns``): orders them with the checkpoints."""

    def wrote(
        self, message_id: str, path: Path, before: str | None, after: str, kept: bool = True
    ) -> None:
        self.started.setdefault(message_id, time.time_ns())
        changes = self.turns.setdefault(message_id, {})
        if path in changes:
            changes[path].after = after
        else:
            changes[path] = Change(before, after, kept)

    def last_turn(self) -> str | None:
        return next(reversed(self.turns), None)

    def last_change(self, path: Path) -> tuple[str, Change] | None:
        for message_id in reversed(self.turns):
            if path in self.turns[message_id]:
                return message_id, self.turns[message_id][path]
        return None


NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(old: str, new: str, name: str, created: bool = False) -> str:
    """``old`` to ``new`` as a unified diff of the file ``name`` (3 lines of context).

    A last line without a newline is followed by git's marker: difflib ran it into the
    next line of the diff (``-    return a + b+    return a + b  # edited``). Lines are
    split at newlines only, as an editor splits them."""
    label = "/dev/null" if created else _label("a", name)
    lines = difflib.unified_diff(_lines(old), _lines(new), label, _label("b", name))
    return "".join(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}" for line in lines)


def _label(side: str, name: str) -> str:
    """``a/app.py`` for a path in the workspace; a path outside it stays as it is."""
    return name if Path(name).is_absolute() else f"{side}/{name}"


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [f"{line}\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def in_workspace(path: str, root: str | None) -> str:
    """``path`` relative to the workspace folder ``root`` when it is inside, else whole."""
    if root and Path(path).is_relative_to(root) and Path(path) != Path(root):
        return Path(path).relative_to(root).as_posix()
    return path


def diff(path: Path, change: Change, root: str | None = None) -> str:
    created = change.before is None and change.kept
    name = in_workspace(printable(path), root)
    if change.after is None:
        return unified_diff(change.before or "", "", name).replace(
            f"+++ {_label('b', name)}\n", "+++ /dev/null\n", 1
        )
    return unified_diff(change.before or "", change.after, name, created)


def review(message_id: str, changes: dict[Path, Change], root: str | None = None) -> str:
    """A markdown document with one diff per changed file (named from ``root``, the
    chat's workspace folder)."""
    parts = [f"# goose: changes of turn {message_id}\n"]
    for path, change in changes.items():
        state = "created" if change.before is None else "changed"
        if change.after is None:
            state = "removed"
        if not change.kept:
            state = "replaced; its earlier content was not text goose-ls could keep"
        if change.hidden:
            state += "; its content is not shown: a secret"
        shown = inert_line(in_workspace(printable(path), root))
        ticks = "`" * (_longest_backticks(shown) + 1)
        pad = " " if shown.startswith("`") or shown.endswith("`") else ""
        parts.append(f"\n## {ticks}{pad}{shown}{pad}{ticks} ({state})\n")
        body = diff(path, change, root) if change.kept and not change.hidden else ""
        if body:
            fence = "`" * max(3, _longest_backticks(body) + 1)
            parts.append(f"\n{fence}diff\n{body}{fence}\n")
    if not changes:
        parts.append("\n_This turn changed no file._\n")
    return "".join(parts)


def printable(path: Path) -> str:
    """A path as text that can be shown and journaled: a name that is not UTF-8 (an old
    archive's Latin-1) has its odd bytes as U+FFFD, not as surrogates no encoder takes."""
    return os.fsencode(path).decode("utf-8", "replace")


def _longest_backticks(text: str) -> int:
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest
