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
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import attrs

from goose_ls.workspace.confinement import HOME_DEPTH, Confinement, Denied, credential_file
from goose_ls.workspace.policy import protected_path

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
        return Sandbox(mode, problem=f"no sandbox for terminals on {sys.platform} yet")
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
    """The secrets list's files and folders: replaced by empty ones."""
    read_only: list[Path]
    """goose-ls's own files and the protected paths that exist: bound read-only, so that
    even an allowed command cannot grant the agent more or plant code that runs later."""


def survey(
    confinement: Confinement, home: Path | None, protected: Iterable[str], own: Iterable[Path]
) -> Survey:
    """The secrets, protected paths and goose-ls's own files under the roots (and secrets
    in the home folder)."""
    hidden: list[Path] = []
    resolved = [Path(os.path.realpath(path)) for path in own]
    read_only = [path for path in resolved if path.exists() and confinement.contains(path)]
    patterns = list(protected)
    folders = [pattern.rsplit("/", 1)[0] for pattern in patterns if "/" in pattern]
    for root in confinement.roots:
        read_only += [root / ".goose-ls"] if (root / ".goose-ls").is_dir() else []
        found, guarded = _walk(root, confinement, None, patterns=patterns, folders=folders)
        hidden += found
        read_only += guarded
    if home is not None and home.is_dir():
        hidden += _walk(home, confinement, HOME_DEPTH, skip=set(confinement.roots))[0]
    return Survey(list(dict.fromkeys(hidden)), list(dict.fromkeys(read_only)))


def _walk(
    top: Path,
    confinement: Confinement,
    depth: int | None,
    skip: Iterable[Path] = (),
    patterns: list[str] | None = None,
    folders: list[str] | None = None,
) -> tuple[list[Path], list[Path]]:
    """Secrets under ``top``, and the files matching ``patterns`` and folders matching
    ``folders`` (``.git/hooks`` for ``.git/hooks/*``: new hooks must not be created)."""
    found: list[Path] = []
    guarded: list[Path] = []
    seen = 0
    skipped = set(skip)
    for folder, dirs, files in os.walk(top):
        here = Path(folder)
        inside = here.relative_to(top).parts
        level = len(inside)
        sniff = patterns is not None and ".git" not in inside  # git's objects are packed
        if depth is not None and level >= depth:
            dirs.clear()
        for name in [*dirs, *files]:
            seen += 1
            path = here / name
            if path in skipped or path.is_symlink():
                continue
            try:
                confinement.check(str(path))
            except Denied as exc:
                if exc.outside is None:
                    found.append(path)
                continue
            rules = folders if name in dirs else patterns
            if rules and protected_path(str(top), rules, str(path)):
                guarded.append(path)
            elif sniff and name not in dirs and credential_file(path):
                found.append(path)  # a key by its content, whatever its name
        dirs[:] = [d for d in dirs if here / d not in skipped and here / d not in found]
        if seen > WALK_LIMIT:
            log.warning("stopped looking for secrets in %s after %d entries", top, seen)
            break
    return found, guarded


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
