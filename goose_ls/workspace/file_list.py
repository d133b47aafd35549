"""The workspace's files, listed without running git.

``git ls-files`` runs what the repository's configuration names: ``core.fsmonitor``
from ``.git/config``, or from the config a ``.git/commondir`` points at. A cloned
repository, or one the agent wrote to, would then run code as the user each time the
editor completes an ``@`` mention. So the listing runs no git: it walks the tree and
reads the ignore files the way git does (``.gitignore`` in each folder, the repository's
``.git/info/exclude``, the user's ``~/.config/git/ignore``), matched by ``pathspec``.
Reading a file never runs one.

Differences from ``git ls-files --cached --others --exclude-standard``, all harmless
for completion: a tracked file that an ignore rule matches is left out; a nested
repository's files are listed; ``core.excludesFile`` set to another file is not read
(that would mean reading git's configuration).
"""

from __future__ import annotations

import itertools
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from pathspec import GitIgnoreSpec

SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", ".venv", "venv", "target"})
"""Build folders skipped outside a git work tree, where no ignore file names them."""
IGNORE_FILE_MAX = 64 * 1024
"""Bytes of one ignore file read at most: about 3,000 patterns, 0.2 s to compile. Real
ones hold a few hundred; a hostile one of megabytes would take seconds per folder."""

Rules = list[tuple[str, GitIgnoreSpec]]
"""Ignore rules in force, lowest precedence first: each with the folder (relative,
``""`` or ending in ``/``) its patterns are relative to."""


def files(root: Path, limit: int, seconds: float) -> list[str]:
    """Up to ``limit`` files under ``root``, relative, in ``/`` form, that git would not
    ignore; what was found within ``seconds`` (a huge tree is cut, not walked whole)."""
    return list(itertools.islice(_walk(root, time.monotonic() + seconds), limit))


def _walk(root: Path, deadline: float) -> Iterator[str]:
    """Names are matched relative to the work tree's top, as git matches them, and
    given relative to ``root``."""
    top = _work_tree(root)
    in_git = top is not None
    top = root if top is None else top
    prefix = "" if root == top else root.relative_to(top).as_posix() + "/"
    stack: list[tuple[str, Path, Rules]] = [(prefix, root, _outer_rules(top, root, in_git))]
    while stack and time.monotonic() < deadline:
        relative, folder, inherited = stack.pop()
        here = list(inherited)
        own = _spec(_read(folder / ".gitignore", follow=False))
        if own is not None:
            here.append((relative, own))
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            continue
        folders: list[tuple[str, Path, Rules]] = []
        for entry in entries:
            if time.monotonic() > deadline:  # each name is matched against every rule
                return
            name = relative + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if entry.name == ".git":
                continue
            if not is_dir:
                if not _ignored(here, name):
                    yield name[len(prefix) :]
            elif (in_git or not _build_or_hidden(entry.name)) and not _ignored(here, name + "/"):
                folders.append((name + "/", Path(entry.path), here))
        stack.extend(reversed(folders))  # depth first, in name order


def _build_or_hidden(name: str) -> bool:
    return name in SKIPPED_DIRS or name.startswith(".")


def _ignored(rules: Rules, name: str) -> bool:
    """Whether git would ignore ``name``: the last rule that says either way wins, and a
    deeper folder's rules come after its parents'."""
    for base, spec in reversed(rules):
        if name.startswith(base):
            verdict = spec.check_file(name[len(base) :]).include
            if verdict is not None:
                return verdict
    return False


def _work_tree(root: Path) -> Path | None:
    """The nearest folder from ``root`` up that holds a ``.git`` (a folder, or a
    worktree's file); None outside a work tree."""
    for folder in (root, *root.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def _outer_rules(top: Path, root: Path, in_git: bool) -> Rules:
    """The rules in force at ``root`` before its own ``.gitignore``: the user's global
    ignore file, ``.git/info/exclude`` (of a plain ``.git`` folder: a worktree's or a
    submodule's ``.git`` file points elsewhere), and the ``.gitignore`` of each folder
    from ``top`` down to ``root``'s parent."""
    if not in_git:
        return []
    rules: Rules = []
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    sources = [_read(Path(xdg) / "git" / "ignore", follow=True)]
    dot_git = top / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        sources.append(_read(dot_git / "info" / "exclude", follow=True))
    rules += [("", spec) for spec in map(_spec, sources) if spec is not None]
    parts = root.relative_to(top).parts
    for depth in range(len(parts)):
        base = "".join(part + "/" for part in parts[:depth])
        spec = _spec(_read(top / base / ".gitignore", follow=False))
        if spec is not None:
            rules.append((base, spec))
    return rules


def _spec(lines: list[str]) -> GitIgnoreSpec | None:
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    return GitIgnoreSpec.from_lines(lines)


def _read(path: Path, follow: bool) -> list[str]:
    """An ignore file's lines; none when it is missing, not a regular file (a FIFO would
    block, a device never end) or, in the tree, a symlink (git no longer follows those
    since 2.32)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        data = os.read(fd, IGNORE_FILE_MAX)
    except OSError:
        return []
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace").splitlines()
