"""``agent.pathMap``: the folders the agent sees under other paths (a container, a remote host).

A map is pairs of absolute folders, ``{"/home/me/proj": "/workspace"}``: the local one as
goose-ls and the editor name it, the agent's as the agent names it. A path is mapped by
the deepest folder holding it, compared whole component by component (``/workspace2`` is
not in ``/workspace``), after ``..``, ``.`` and ``//`` are undone lexically, so
``/workspace/../etc/passwd`` is ``/etc/passwd``, in no mapped folder. Nested folders are
allowed and read as nested mounts: the deeper one hides what lies under it in the other.

Mapping is only spelling: whether the agent may touch the local file is the confinement's
question, asked after the map (symlinks are resolved there, on the local side).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import posixpath
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from goose_ls.wire import converter

Convert = Callable[[str], "str | None"]
"""A path from one side to the other; None when it lies in no mapped folder."""


def normal(path: str) -> str | None:
    """``path`` absolute and lexically normal (no ``..``, ``.``, ``//``, trailing ``/``);
    None for a relative path or one no file can have."""
    if not path.startswith("/") or "\0" in path:
        return None
    return "/" + posixpath.normpath(path).lstrip("/")  # POSIX keeps a leading "//"


def _rest(path: str, root: str) -> str | None:
    """What follows ``root`` in ``path`` ("" for the root itself); None when outside it."""
    if path == root:
        return ""
    prefix = root if root == "/" else root + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def _join(root: str, rest: str) -> str:
    return posixpath.join(root, rest) if rest else root


# Not an attrs class: the settings read an attrs value as a group of settings of its own.
@dataclasses.dataclass(frozen=True)
class PathMap:
    """Local folder to agent folder pairs, normal and absolute; empty maps nothing."""

    pairs: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.pairs)

    @classmethod
    def parse(cls, value: Any) -> PathMap:
        """The map a setting describes; ``ValueError`` names what makes it unusable."""
        if not isinstance(value, Mapping):
            raise TypeError(f"expected an object, got {type(value).__name__}")
        pairs: list[tuple[str, str]] = []
        for local, agent in value.items():
            if not isinstance(agent, str):
                raise ValueError(f"{local!r}: expected str, got {type(agent).__name__}")
            local_root, agent_root = normal(str(local)), normal(agent)
            if local_root is None or agent_root is None:
                raise ValueError(f"{local!r} -> {agent!r}: both folders must be absolute paths")
            for earlier_local, earlier_agent in pairs:
                if earlier_local == local_root:
                    raise ValueError(f"{local!r}: the local folder {local_root} is mapped twice")
                if earlier_agent == agent_root:
                    raise ValueError(
                        f"{local!r}: the agent's folder {agent_root} is mapped from "
                        f"{earlier_local} too: its paths would have two local meanings"
                    )
            pairs.append((local_root, agent_root))
        return cls(tuple(pairs))

    def agent_roots(self) -> list[str]:
        return [agent for _, agent in self.pairs]

    @functools.cached_property
    def _deepest_agent_first(self) -> list[tuple[str, str]]:
        return sorted(self.pairs, key=lambda pair: -len(pair[1]))

    @functools.cached_property
    def _deepest_local_first(self) -> list[tuple[str, str]]:
        return sorted(self.pairs, key=lambda pair: -len(pair[0]))

    @functools.cached_property
    def _resolved(self) -> PathMap:
        """The map with its local folders' links undone (for paths spelt through one)."""
        return PathMap(tuple((os.path.realpath(local), agent) for local, agent in self.pairs))

    def to_local(self, agent: str) -> str | None:
        """The local path of an agent path; None outside every mapped agent folder."""
        path = normal(agent)
        if path is None:
            return None
        for local_root, agent_root in self._deepest_agent_first:
            if (rest := _rest(path, agent_root)) is not None:
                return _join(local_root, rest)
        return None

    def to_agent(self, local: str) -> str | None:
        """The agent's path of a local path; None when the agent cannot see it (outside
        every mapped folder, or under a deeper agent folder that hides it). A path spelt
        through a symlink maps by its real path when it does not map as written."""
        path = normal(local)
        if path is None:
            return None
        found = self._to_agent(path)
        if found is None and (real := os.path.realpath(path)) != path:
            found = self._resolved._to_agent(real)  # noqa: SLF001 (another map of this class)
        return found

    def _to_agent(self, path: str) -> str | None:
        for local_root, agent_root in self._deepest_local_first:
            rest = _rest(path, local_root)
            if rest is not None and self.to_local(mapped := _join(agent_root, rest)) == path:
                return mapped
        return None


NO_MAP = PathMap()
"""Every path as it is: the agent sees what goose-ls sees."""


def map_uri(uri: str, convert: Convert) -> str | None:
    """A ``file://`` URI with its path converted (percent-encoding undone, then redone;
    a ``#L3-L5`` fragment kept); None for another scheme, a host, or a path that maps
    nowhere."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    mapped = convert(unquote(parts.path))
    if mapped is None:
        return None
    query = f"?{parts.query}" if parts.query else ""
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    return PurePosixPath(mapped).as_uri() + query + fragment


converter.register_structure_hook(PathMap, lambda value, _: PathMap.parse(value))
converter.register_unstructure_hook(PathMap, lambda paths: dict(paths.pairs))
