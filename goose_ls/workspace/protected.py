"""Paths whose change makes something run or decide later, by class rather than by list.

A write there is how a hostile agent outlives its turn: a git hook or ``core.fsmonitor``
runs at the user's next commit, an editor's folder settings start a server or a task on
open, an agent's own settings allow it everything next time, a build file runs at the
next ``make``. Each class is recognised wherever it sits in the workspace (a nested
repository's ``.git`` too), whether the file exists yet or not; the user's
``workspace.protected`` patterns add to the classes, never take one away.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePath

FOLDERS = {
    ".git": "git's own files",
    ".vscode": "editor settings",
    ".helix": "editor settings",
    ".idea": "editor settings",
    ".zed": "editor settings",
    ".devcontainer": "editor settings",
    ".claude": "an agent's settings",
    ".gemini": "an agent's settings",
    ".codex": "an agent's settings",
    ".goose": "an agent's settings",
    ".cursor": "an agent's settings",
    ".goose-ls": "goose-ls's settings",
}
"""Folders everything under which is protected, by the class it is in."""
NAMES = {
    ".nvim.lua": "editor settings",
    ".nvimrc": "editor settings",
    ".exrc": "editor settings",
    ".dir-locals.el": "editor settings",
    ".dir-locals-2.el": "editor settings",
    ".envrc": "shell settings",
    ".mcp.json": "an agent's settings",
    ".goosehints": "an agent's settings",
    ".gitattributes": "git's own files",
    ".gitmodules": "git's own files",
    "Makefile": "build files",
    "makefile": "build files",
    "GNUmakefile": "build files",
    "justfile": "build files",
    "Justfile": "build files",
    ".pre-commit-config.yaml": "build files",
}
"""File names protected wherever they are."""
PATTERNS = ("*.mk", ".github/workflows/*")
"""Build and CI files matched by their ending."""


def protected_class(relative: str, extra: Iterable[str] = ()) -> str | None:
    """The class of a path (relative to a root) that is protected, else None; ``extra``
    are the user's own patterns (matched from the right, as ``PurePath.match``)."""
    path = PurePath(relative)
    if path.is_absolute() or ".." in path.parts:
        return None  # outside the root: the workspace's confinement decides
    for part in path.parts:
        if part in FOLDERS:
            return FOLDERS[part]
    if path.name in NAMES:
        return NAMES[path.name]
    if any(path.match(pattern) for pattern in PATTERNS):
        return "build files"
    if any(path.match(pattern) for pattern in extra):
        return "your protected paths (workspace.protected)"
    return None


GIT_READ_ONLY = (".git/hooks/*", ".git/config", ".git/commondir", ".git/info/*")
"""What of ``.git`` a sandbox keeps read-only: what makes git run something. The rest of it
(objects, refs, the index) changes with every commit the agent is asked to make."""


def sandbox_patterns(extra: Iterable[str] = ()) -> list[str]:
    """The protected classes as the sandboxes' survey reads them (a ``folder/*`` pattern
    keeps that folder read-only whole, new files included), then the user's ``extra``."""
    folders = [f"{name}/*" for name in FOLDERS if name != ".git"]
    return list(dict.fromkeys([*GIT_READ_ONLY, *folders, *NAMES, *PATTERNS, *extra]))
