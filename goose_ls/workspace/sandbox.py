"""What a terminal may touch, enforced by the kernel: bubblewrap on Linux.

The confinement checks paths the agent names; a command line names none that goose-ls
can trust (``cat $(echo .e)nv``). So an allowed command runs in a bubblewrap sandbox:
the whole disk read-only, the workspace and the extra roots writable, a private
``/tmp``, the secrets list's files replaced by empty ones, goose-ls's own files
(``.goose-ls``, its data dir) and the protected files and folders that exist (git hooks
and config, editor and build configs) read-only, its own process namespace (nothing in it
survives the sandbox), and in ``strict`` mode no network either.
Without bubblewrap, ``workspace`` falls back to running unsandboxed (the permission card
says so) and ``strict`` refuses to run anything.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import sys
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import attrs

from goose_ls.workspace.confinement import (
    HOME_DEPTH,
    Confinement,
    TrailingPatterns,
    credential_file,
)

log = logging.getLogger(__name__)

Mode = Literal["workspace", "strict", "off"]
WALK_LIMIT = 200_000
"""Entries looked at per root when finding the secrets to hide (a huge tree stops there)."""
INSTALL = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"


@attrs.frozen
class Sandbox:
    """The sandbox terminals run in, as far as this machine allows the chosen mode."""

    mode: Mode
    bwrap: str | None = None
    """The bubblewrap binary; None: commands run unsandboxed (or not at all, ``strict``)."""
    problem: str | None = None
    """Why there is no sandbox when one was asked for."""

    @property
    def active(self) -> bool:
        return self.bwrap is not None

    @property
    def refuses(self) -> bool:
        """``strict`` without a sandbox: nothing may run."""
        return self.mode == "strict" and not self.active

    def describe(self) -> str:
        if self.active:
            net = ", no network" if self.mode == "strict" else ""
            return f"{self.mode} (bubblewrap {self.bwrap}: workspace writable, rest read-only{net})"
        if self.mode == "off":
            return "off (terminal.sandbox is off: commands run unsandboxed)"
        if self.refuses:
            return f"strict, unavailable ({self.problem}): terminals are refused"
        return f"none ({self.problem}): commands run unsandboxed"


@functools.cache
def _works(bwrap: str) -> str | None:
    """Whether bubblewrap can make namespaces here (None) or why not."""
    probe = [bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--die-with-parent", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{bwrap} does not run ({exc})"
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
        return f"{bwrap} cannot create a sandbox here ({reason})"
    return None


def choose(mode: Mode) -> Sandbox:
    """The sandbox for ``terminal.sandbox = mode`` on this machine."""
    if mode == "off":
        return Sandbox("off")
    if not sys.platform.startswith("linux"):
        return Sandbox(
            mode, problem=f"no sandbox on {sys.platform} yet (bubblewrap and Landlock are Linux's)"
        )
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Sandbox(mode, problem=f"bubblewrap (bwrap) is not installed; {INSTALL}")
    if problem := _works(bwrap):
        return Sandbox(mode, problem=problem)
    return Sandbox(mode, bwrap)


@attrs.frozen
class Survey:
    """What the sandbox must cover in the roots and the home folder."""

    hidden: list[Path]
    """The secrets list's files and folders, the files whose content is a credential
    and the other names of a secret's inode: replaced by empty ones."""
    read_only: list[Path]
    """goose-ls's own files and the protected paths that exist: bound read-only, so that
    even an allowed command cannot grant the agent more or plant code that runs later."""
    cut: Path | None = None
    """A root too big to look at whole (:data:`WALK_LIMIT`): secrets deep in it may be
    shown, and the sandbox says so."""


@attrs.define
class _Found:
    hidden: list[Path] = attrs.Factory(list)
    guarded: list[Path] = attrs.Factory(list)
    linked: dict[tuple[int, int], list[Path]] = attrs.Factory(dict)
    """Files with more than one name, by (device, inode): one of the others may be a secret."""
    secret_inodes: set[tuple[int, int]] = attrs.Factory(set)
    complete: bool = True


def survey(
    confinement: Confinement, home: Path | None, protected: Iterable[str], own: Iterable[Path]
) -> Survey:
    """The secrets, protected paths and goose-ls's own files under the roots (and secrets
    in the home folder)."""
    resolved = [Path(os.path.realpath(path)) for path in own]
    read_only = [path for path in resolved if path.exists() and confinement.contains(path)]
    patterns = list(protected)
    folders = [pattern.rsplit("/", 1)[0] for pattern in patterns if "/" in pattern]
    found = _Found()
    cut = None
    for root in confinement.roots:
        ours = root / ".goose-ls"
        read_only += [ours] if ours.is_dir() and not ours.is_symlink() else []
        if not _walk(root, confinement, None, found, patterns=patterns, folders=folders):
            cut = cut or root
    if home is not None and home.is_dir():
        _walk(home, confinement, HOME_DEPTH, found, skip=set(confinement.roots))
    for inode, names in found.linked.items():
        if inode in found.secret_inodes:
            found.hidden += names  # another name of a secret (a hard link made to read it)
    hidden, read_only = list(dict.fromkeys(found.hidden)), [*read_only, *found.guarded]
    return Survey(hidden, list(dict.fromkeys(read_only)), cut)


def _walk(
    top: Path,
    confinement: Confinement,
    depth: int | None,
    found: _Found,
    skip: Iterable[Path] = (),
    patterns: list[str] | None = None,
    folders: list[str] | None = None,
) -> bool:
    """Note in ``found`` the secrets under ``top``, and the files matching ``patterns``
    and folders matching ``folders`` (``.git/hooks`` for ``.git/hooks/*``: new hooks must
    not be created). Breadth first, so that what lies near the top is seen first; False
    when it stopped at :data:`WALK_LIMIT` entries."""
    seen = 0
    skipped = set(skip)
    file_rules = TrailingPatterns(patterns) if patterns else None
    folder_rules = TrailingPatterns(folders) if folders else None
    pending: deque[tuple[Path, int]] = deque([(top, 0)])
    while pending:
        here, level = pending.popleft()
        sniff = patterns is not None and ".git" not in here.relative_to(top).parts
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > WALK_LIMIT:
                log.warning("stopped looking for secrets in %s after %d entries", top, seen)
                return False
            path = Path(entry.path)
            if path in skipped or entry.is_symlink():
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            # Walked from a resolved folder, links never taken: the path is its own real
            # one, and its name alone says whether it is a secret.
            if confinement.secret_named(path):  # hidden whole, not looked into
                found.hidden.append(path)
                _note_inode(entry, found.secret_inodes)
                continue
            if not confinement.contains(path):  # the home folder: only its secrets
                if is_dir and (depth is None or level + 1 < depth):
                    pending.append((path, level + 1))
                continue
            rules = folder_rules if is_dir else file_rules
            if rules is not None and rules.match(path.relative_to(top).parts):
                found.guarded.append(path)
            elif sniff and not is_dir and credential_file(path):
                found.hidden.append(path)  # a key by its content, whatever its name
                _note_inode(entry, found.secret_inodes)
            elif patterns is not None and not is_dir:
                _note_linked(entry, path, found.linked)
            if is_dir and (depth is None or level + 1 < depth):
                pending.append((path, level + 1))
    return True


def _inode(entry: os.DirEntry[str]) -> tuple[tuple[int, int], int] | None:
    """The entry's (device, inode) and its count of names; None if it is gone."""
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return (info.st_dev, info.st_ino), info.st_nlink


def _note_inode(entry: os.DirEntry[str], inodes: set[tuple[int, int]]) -> None:
    if (found := _inode(entry)) is not None:
        inodes.add(found[0])


def _note_linked(
    entry: os.DirEntry[str], path: Path, linked: dict[tuple[int, int], list[Path]]
) -> None:
    if (found := _inode(entry)) is not None and found[1] > 1:
        linked.setdefault(found[0], []).append(path)


def wrap(
    sandbox: Sandbox, argv: list[str], cwd: str, roots: Iterable[Path], covered: Survey
) -> list[str]:
    """``argv`` run inside the sandbox (unchanged without one)."""
    if sandbox.bwrap is None:
        return argv
    args = [sandbox.bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--new-session"]
    if sandbox.mode == "strict":
        args.append("--unshare-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for root in roots:
        args += ["--bind", str(root), str(root)]
    for path in covered.read_only:
        args += ["--ro-bind", str(path), str(path)]
    for path in covered.hidden:
        if path.is_dir():
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    return [*args, "--setenv", "TMPDIR", "/tmp", "--chdir", cwd, "--", *argv]
