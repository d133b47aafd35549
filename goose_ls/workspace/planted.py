"""Protected paths a turn created without the user's yes: found, and set aside unread.

The sandbox keeps existing protected paths read-only, but a path that does not exist yet
cannot be bound: a command the user allowed (``sh build.sh``), or an agent's own tool,
could create ``.vscode/settings.json``, ``.envrc`` or a git hook, which an editor or a
shell then acts on. goose-ls notes the protected paths in the roots before a turn and
looks again after each command it ran and at the turn's end: one that appeared, and that
the user did not allow in a card of that turn, is moved into the data dir (never read,
never deleted) and the user is told where.
"""

from __future__ import annotations

import os
import shutil
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from goose_ls.atomic_files import PRIVATE_FILE, private_folder, tighten
from goose_ls.workspace.protected import FOLDERS, NAMES, protected_class

WALK_LIMIT = 200_000
"""Entries looked at per root (a huge tree is looked at this far)."""
GIT_WATCHED = ("config", "commondir", "gitdir", "hooks", "info")
"""What of a ``.git`` folder is looked at: what makes git run something. Objects and refs
change with every commit the agent makes, and run nothing."""


def protected_in(roots: Iterable[Path], extra: Iterable[str] = ()) -> set[Path]:
    """The protected files (and links) under ``roots``."""
    patterns = list(extra)
    found: set[Path] = set()
    for root in roots:
        _walk(root, patterns, found)
    return found


def _walk(root: Path, patterns: list[str], found: set[Path]) -> None:
    """Breadth first, each folder carrying whether it is protected as a whole (``.vscode``
    and the like), so that most files are judged by their name alone."""
    seen = 0
    pending: deque[tuple[Path, bool]] = deque([(root, False)])
    while pending:
        here, whole = pending.popleft()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        git = here.name == ".git"
        for entry in entries:
            seen += 1
            if seen > WALK_LIMIT:
                return
            if entry.is_dir(follow_symlinks=False):
                if git and entry.name not in GIT_WATCHED:
                    continue  # objects and refs: every commit changes them, none runs
                # .git itself is looked at by name, its hooks/ and info/ as a whole
                inside = git or (entry.name in FOLDERS and entry.name != ".git") or whole
                pending.append((Path(entry.path), inside))
            elif git:
                if entry.name in GIT_WATCHED:
                    found.add(Path(entry.path))
            elif (whole and not entry.name.endswith(".sample")) or _protected_file(
                root, entry, patterns
            ):
                found.add(Path(entry.path))


def _protected_file(root: Path, entry: os.DirEntry[str], patterns: list[str]) -> bool:
    if entry.name in NAMES or entry.name in FOLDERS or entry.name.endswith(".mk"):
        return True  # a file named .git points git at a folder of the writer's choosing
    if not patterns and not entry.name.endswith((".yml", ".yaml")):
        return False  # the one pattern left is .github/workflows/*
    relative = Path(entry.path).relative_to(root).as_posix()
    return protected_class(relative, patterns) is not None


def set_aside(paths: Iterable[Path], roots: list[Path], into: Path) -> list[tuple[Path, Path]]:
    """Move each of ``paths`` (under one of ``roots``) into a new folder of ``into``,
    below its root's name and where it was, private (0700 folders, 0600 files); each path
    moved and where it went. One that cannot be moved is left (and not in the answer)."""
    moved: list[tuple[Path, Path]] = []
    folder = into / time.strftime("%Y%m%d-%H%M%S")
    for path in sorted(paths):
        root = next((r for r in roots if r in path.parents), None)
        if root is None:
            continue
        target = folder / root.name / path.relative_to(root)
        try:
            _private_folders(into, target.parent)
            shutil.move(path, target)  # a link as a link, never what it points at
            if not target.is_symlink():
                tighten(target, PRIVATE_FILE)
        except (OSError, shutil.Error):
            continue
        moved.append((path, target))
        _drop_emptied(path.parent, root)
    return moved


def _drop_emptied(folder: Path, root: Path) -> None:
    """Remove the protected folders (``.vscode/``...) the move left empty: made to hold
    what was planted (one that existed is read-only in the sandbox, nothing lands there)."""
    while folder != root and root in folder.parents and folder.name in FOLDERS:
        try:
            folder.rmdir()  # only if empty
        except OSError:
            return
        folder = folder.parent


def _private_folders(base: Path, folder: Path) -> None:
    """``folder`` and each folder between it and ``base`` (``base`` too), made 0700."""
    private_folder(base)
    here = base
    for part in folder.relative_to(base).parts:
        here = here / part
        private_folder(here)
