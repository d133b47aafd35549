"""What each turn changed: the content of every file before the agent's first write.

Review shows the turn's changes as diffs; revert puts the old content back, but only
where the file still holds what the agent wrote (anything else means someone changed it
since, and a revert would lose their work).
"""

from __future__ import annotations

import difflib
from pathlib import Path

import attrs


@attrs.define
class Change:
    before: str | None
    """None: the turn created the file (or, when not ``kept``, its content is unknown)."""
    after: str
    kept: bool = True
    """False: the file was there but not text goose-ls could keep (binary, too big,
    unreadable), so it cannot be put back."""


@attrs.define
class Checkpoints:
    """Per turn (message id), per file: the change the agent made through goose-ls."""

    turns: dict[str, dict[Path, Change]] = attrs.Factory(dict)

    def wrote(
        self, message_id: str, path: Path, before: str | None, after: str, kept: bool = True
    ) -> None:
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


def diff(path: Path, change: Change) -> str:
    old = (change.before or "").splitlines(keepends=True)
    new = change.after.splitlines(keepends=True)
    label = "/dev/null" if change.before is None and change.kept else f"a{path}"
    text = "".join(difflib.unified_diff(old, new, label, f"b{path}"))
    return text if text.endswith("\n") or not text else text + "\n"


def review(message_id: str, changes: dict[Path, Change]) -> str:
    """A markdown document with one diff per changed file."""
    parts = [f"# goose: changes of turn {message_id}\n"]
    for path, change in changes.items():
        state = "created" if change.before is None else "changed"
        if not change.kept:
            state = "replaced; its earlier content was not text goose-ls could keep"
        parts.append(f"\n## `{path}` ({state})\n\n```diff\n{diff(path, change)}```\n")
    if not changes:
        parts.append("\n_This turn changed no file through goose-ls._\n")
    return "".join(parts)
