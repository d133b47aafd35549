"""``@file`` mentions in a prompt section: completed from the workspace's files (open
buffers first), and sent as file context with the message that names them; an image
file's (``.png``, ``.jpg``, ``.gif``, ``.webp``) as an image, which the sessions layer reads
and checks (and refuses, saying why, when it may not: outside the workspace, a secret)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from goose_ls.sessions import ContextItem, named_image
from goose_ls.workspace import file_list

MENTION = re.compile(r"(?<![\w@/])@([\w.~+/-]*[\w/])")
"""``@`` then a path, not inside a word or an e-mail address; a sentence's full stop
after it is not part of it."""
PARTIAL = re.compile(r"(?<![\w@/])@([\w.~+/-]*)$")
"""A mention being typed, at the end of the text before the cursor."""
LISTED_MAX = 20_000
"""Workspace files considered for completion at most (a huge tree is cut, not walked)."""
OFFERED_MAX = 200
"""Completion items at most; the list says it is incomplete, so typing asks again."""


def typed(prefix: str) -> str | None:
    """The partial path of the mention the cursor ends (``prefix``: the line up to the
    cursor), or None when it is in none."""
    found = PARTIAL.search(prefix)
    return found.group(1) if found else None


def candidates(root: Path, open_paths: Iterable[Path], partial: str) -> list[str]:
    """Workspace-relative paths holding ``partial`` (case aside), open buffers first."""
    needle = partial.lower()
    seen: set[str] = set()
    found: list[str] = []
    for relative in _relative(root, open_paths):
        if relative not in seen:
            seen.add(relative)
            if needle in relative.lower():
                found.append(relative)
    for relative in workspace_files(root):
        if len(found) >= OFFERED_MAX:
            break
        if relative not in seen and needle in relative.lower():
            seen.add(relative)
            found.append(relative)
    return found[:OFFERED_MAX]


def mentioned(draft: str, root: Path) -> list[ContextItem]:
    """A file item for each ``@path`` of ``draft`` naming a file in the workspace, once;
    an image item for each naming an image file that is there (as named: its links are
    the sessions layer's to judge)."""
    items: list[ContextItem] = []
    seen: set[Path] = set()
    base = root.resolve()
    for match in MENTION.finditer(draft):
        named = Path(os.path.abspath(base / os.path.expanduser(match.group(1))))
        if named_image(match.group(1)) and os.path.lexists(named):
            if named not in seen:
                seen.add(named)
                items.append(ContextItem(type="image", uri=named.as_uri()))
            continue
        path = named.resolve()
        if path in seen or not path.is_relative_to(base) or not path.is_file():
            continue
        seen.add(path)
        items.append(ContextItem(type="file", uri=path.as_uri()))
    return items


def workspace_files(root: Path) -> list[str]:
    """The workspace's files, relative, those git ignores left out; at most LISTED_MAX.
    No git runs (:mod:`goose_ls.workspace.file_list` says why).

    Completion asks again at every key typed after the ``@``: the list is made once
    and kept for :data:`LISTING_SECONDS`, not walked again per key."""
    kept = _listed.get(root)  # (not a time of 0 for "never": clocks start near 0 at boot)
    if kept is not None and time.monotonic() - kept[0] <= LISTING_SECONDS:
        return kept[1]
    files = file_list.files(root, LISTED_MAX, WALK_SECONDS)
    _listed[root] = (time.monotonic(), files)
    return files


LISTING_SECONDS = 5.0
"""How long a workspace's file list serves completion before it is made again."""
WALK_SECONDS = 2.0
"""The longest one listing walks; a tree too big for that is cut."""
_listed: dict[Path, tuple[float, list[str]]] = {}


def _relative(root: Path, paths: Iterable[Path]) -> Iterator[str]:
    base = root.resolve()
    for path in paths:
        resolved = path.resolve()
        if resolved.is_relative_to(base) and resolved != base:
            yield resolved.relative_to(base).as_posix()
