"""The agent's own process in the sandbox: what it may read, write and reach.

claude-agent-acp and codex-acp read, write and run commands in their own process; they
never ask goose-ls through ``fs/*`` or ``terminal/*``, so the checks on those requests
bind nothing for them. The agent itself runs in bubblewrap instead, as terminals do:

- the disk read-only, the workspace roots read-write, a private ``/tmp``;
- the home folder hidden (an empty, throw-away one in its place) but for the agent's own
  state (read-write) and a short read-only list (git config, toolchains), with
  goose-ls's own folders hidden wherever they are;
- the secrets in the roots and the home folder hidden, by name and by content, and
  the protected paths that exist read-only;
- the agent's program readable wherever it is installed (a node package or a
  virtualenv under ``/tmp`` or the home folder, the links to it, its interpreter, and
  the ``PATH`` folders in hidden places);
- its own process namespace, dying with goose-ls; the network on unless turned off.

Bubblewrap mounts in the order given, a later mount covering an earlier one at or
below it: mounts are sorted parents first, and at one path the hiding mount comes last.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

import attrs

from goose_ls.workspace import landlock
from goose_ls.workspace.confinement import Confinement, too_broad
from goose_ls.workspace.sandbox import WALK_LIMIT, Sandbox, Survey, survey

Kind = Literal["cover", "hide", "read", "write"]
_STRENGTH = {"cover": 0, "write": 1, "read": 2, "hide": 3}
"""At one path the stronger mount comes last, and so wins: a place the agent is shown
on purpose (a root, its state, the user's additions) over a covered one (the home
folder, ``/tmp``), and a secret or goose-ls's own files over all."""

TOOLCHAINS = (
    ".gitconfig",
    ".config/git",
    ".local/bin",
    ".cargo/bin",
    ".rustup",
    ".nvm",
    ".volta",
    ".pyenv",
    ".bun/bin",
    "go/bin",
    ".sdkman",
)
"""What the agent's commands commonly need from the home folder, read-only (those that
exist): git's configuration and the language toolchains installed per user."""

CONTROL_SOCKETS = (
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman/podman.sock",
    "/run/containerd/containerd.sock",
    "/run/libvirt/libvirt-sock",
)
"""Sockets that give whoever connects root on this machine (a container started with
the host's disk), for members of their group: hidden."""

AS_UID = 1000
"""The user a root goose-ls's agent runs as, in its namespace (root outside)."""

LINK_HOPS = 16
"""Links and interpreters followed from the agent's command before giving up."""


@attrs.frozen
class Bounds:
    """The workspace's side of the agent's sandbox (from the session layer)."""

    roots: list[Path]
    """Read-write: the workspace folder and the extra roots."""
    covered: Survey
    """Secrets to hide and protected paths to keep read-only, found in the roots and home."""
    own: list[Path]
    """goose-ls's own folders (data, config, logs, the shared servers' secrets): hidden."""
    unrooted: Path | None = None
    """Read-only: where sessions run when the editor opened no folder (then there are no
    roots and the agent may write nothing, but it must see where it starts)."""


def bounds_for(
    confinement: Confinement, protected: list[str], own: list[Path], cwd: str | None = None
) -> Bounds:
    """The bounds for these roots: their secrets and protected paths (and the home
    folder's secrets) surveyed now. It walks the roots: run it in a thread."""
    try:
        home: Path | None = Path(os.path.realpath(Path.home()))
    except (RuntimeError, KeyError):
        home = None
    covered = survey(confinement, home, protected, own)
    start = Path(os.path.realpath(cwd)) if cwd and not confinement.roots else None
    unrooted = start if start is not None and not too_broad(start) else None
    return Bounds(confinement.roots, covered, own, unrooted)


@attrs.frozen
class Reach:
    """The agent's side: its program, its state and what the user added."""

    program: list[Path]
    """Read-only: where the agent's program is installed, if in a hidden place."""
    state: list[Path]
    """Read-write: the agent's own configuration and data (made if missing)."""
    readable: list[Path]
    """Read-only: toolchains and the user's ``agent.sandboxReadable``."""
    writable: list[Path]
    """Read-write: the user's ``agent.sandboxWritable``."""
    homes: list[Path]
    """Hidden: the home folders (goose-ls's and the agent's ``HOME``)."""
    guarded: list[Path] = attrs.Factory(list)
    """Read-only, in its state: its settings that run code later (hooks, MCP servers)."""
    sockets: list[Path] = attrs.Factory(list)
    """Hidden: the user's runtime folder (``XDG_RUNTIME_DIR``), whose sockets (the
    session bus and its keyring, ssh-agent, gpg-agent) would let the agent act as you,
    and the container engines' sockets (:data:`CONTROL_SOCKETS`)."""
    network: bool = True
    tmpdir: str | None = None
    """The agent's ``TMPDIR``: kept where the sandbox shows it, else the private /tmp."""


class Unsafe(Exception):
    """The agent cannot be sandboxed safely with these settings; the message says why."""


def install_folder(path: Path, homes: Iterable[Path]) -> Path:
    """The folder a program file belongs to: the package holding a ``node_modules``, a
    virtualenv, the prefix of a ``bin`` folder, else the file's folder. Never a home
    folder or a place shared by many (``~/.local``): then the file alone."""
    parts = path.parts
    venv = next((p for p in list(path.parents)[:6] if (p / "pyvenv.cfg").is_file()), None)
    if "node_modules" in parts:
        folder = Path(*parts[: parts.index("node_modules")])
    elif venv is not None:
        folder = venv
    else:
        folder = path.parent.parent if path.parent.name == "bin" else path.parent
    shared = {home / ".local" for home in homes}
    if too_broad(folder) or folder in set(homes) | shared or folder == Path("/tmp"):
        return path.parent if path.parent.name == "bin" and not too_broad(path.parent) else path
    return folder


def _interpreter(path: Path, environ: Mapping[str, str]) -> str | None:
    """The program a ``#!`` script runs (``env node`` looked up on ``PATH``)."""
    try:
        with path.open("rb") as file:
            head = file.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env":
        named = next((w for w in words[1:] if not w.startswith("-")), None)
        return shutil.which(named, path=environ.get("PATH")) if named else None
    return words[0]


def program_paths(binary: str, environ: Mapping[str, str], homes: Iterable[Path]) -> list[Path]:
    """Every install folder on the way from ``binary`` to what really runs: each link
    hop, its target, and a script's interpreter (and theirs)."""
    homes = list(homes)
    found: list[Path] = []
    pending = [binary]
    while pending and len(found) < LINK_HOPS:
        path = Path(os.path.abspath(pending.pop()))
        if not path.exists():
            continue
        found.append(install_folder(path, homes))
        if path.is_symlink():
            pending.append(os.path.join(path.parent, os.readlink(path)))
        elif (interpreter := _interpreter(path, environ)) is not None:
            pending.append(interpreter)
    return list(dict.fromkeys(found))


def control_sockets() -> list[Path]:
    """Those of :data:`CONTROL_SOCKETS` that are here, as real paths."""
    found = (Path(os.path.realpath(p)) for p in CONTROL_SOCKETS if os.path.exists(p))
    return list(dict.fromkeys(found))


def path_folders(environ: Mapping[str, str]) -> list[Path]:
    """The ``PATH`` folders that exist: the agent's commands run their tools from them."""
    folders = (Path(p) for p in environ.get("PATH", "").split(os.pathsep) if os.path.isabs(p))
    return [f for f in dict.fromkeys(folders) if f.is_dir() and not too_broad(f)]


def _under(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def _unrooted(bounds: Bounds) -> list[Path]:
    return [bounds.unrooted] if bounds.unrooted is not None else []


def _hidden_areas(bounds: Bounds, reach: Reach) -> list[Path]:
    return [Path("/tmp"), *reach.homes, *reach.sockets, *bounds.own]


def mounts(bounds: Bounds, reach: Reach) -> list[tuple[Kind, Path]]:
    """Every mount beyond the read-only disk, in the order bubblewrap must make them."""
    hidden_areas = _hidden_areas(bounds, reach)
    bound: list[tuple[Kind, Path]] = [("hide", folder) for folder in bounds.own]
    bound += [("cover", area) for area in hidden_areas if area not in bounds.own]
    # What lies in a hidden place must be mounted again to be seen; elsewhere the disk,
    # read-only, already shows it.
    writable = [*reach.state, *reach.writable, *bounds.roots]
    readable = [*reach.program, *reach.readable, *_unrooted(bounds)]
    bound += [("read", p) for p in readable if _under(p, hidden_areas) and not _under(p, writable)]
    bound += [("write", p) for p in writable]
    shown = [p for kind, p in bound if kind in ("read", "write")]
    bound += [("read", p) for p in [*bounds.covered.read_only, *reach.guarded]]
    for secret in bounds.covered.hidden:
        if _under(secret, shown) or not _under(secret, hidden_areas):
            bound.append(("hide", secret))
    unique = {(kind, path) for kind, path in bound if path.exists()}  # nothing to hide or show
    return sorted(unique, key=lambda m: (len(m[1].parts), str(m[1]), _STRENGTH[m[0]]))


def wrap_agent(
    sandbox: Sandbox, argv: list[str], cwd: str, bounds: Bounds, reach: Reach
) -> list[str]:
    """``argv`` run in the agent's sandbox (unchanged without one)."""
    if sandbox.bwrap is None:
        return argv
    args = [sandbox.bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc"]
    if os.geteuid() == 0:
        # Root keeps every capability in bubblewrap, enough to unmount what hides the
        # secrets. As a plain user of a namespace of its own, without any, it cannot;
        # what it writes is still root's outside, and its own sandboxes still nest.
        args += ["--unshare-user", "--uid", str(AS_UID), "--gid", str(AS_UID)]
    args += ["--cap-drop", "ALL"]
    if not reach.network:
        args.append("--unshare-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    planned = mounts(bounds, reach)
    for kind, path in planned:
        if kind == "write":
            args += ["--bind", str(path), str(path)]
        elif kind == "read":
            args += ["--ro-bind", str(path), str(path)]
        elif path.is_dir() or not path.exists():
            args += ["--tmpfs", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    seen = [p for k, p in planned if k in ("read", "write")]
    hidden = _hidden_areas(bounds, reach)

    def shown(path: Path) -> bool:
        return _under(path, seen) or not _under(path, hidden)

    where = Path(cwd)
    if not shown(where):
        where = bounds.roots[0] if bounds.roots else Path("/")
    temp = reach.tmpdir
    if temp is None or not os.path.isabs(temp) or not shown(Path(temp)):
        args += ["--setenv", "TMPDIR", "/tmp"]  # the private one, not a hidden place
    return [*args, "--chdir", str(where), "--", *argv]


DEVICES = ("/dev/null", "/dev/zero", "/dev/tty", "/dev/pts", "/dev/ptmx", "/dev/shm")
"""What a process writes to that is no file of the user's."""
READ_DEVICES = ("/dev/random", "/dev/urandom", "/dev/full")
"""What it only reads."""


def confine(
    sandbox: Sandbox, argv: list[str], cwd: str, bounds: Bounds, reach: Reach
) -> tuple[list[str], str]:
    """``argv`` in the strongest sandbox this machine makes (bubblewrap, else Landlock),
    and what that means; unchanged, and said so, with none. :class:`Unsafe` when
    goose-ls's own files lie where the agent may write."""
    inside = [own for own in bounds.own if _under(own, bounds.roots)]
    if inside:
        raise Unsafe(
            f"goose-ls keeps its files in {inside[0]}, inside the workspace: the agent could "
            "rename the folder around them and write its own (a policy, its trust)"
        )
    if sandbox.active:
        return wrap_agent(sandbox, argv, cwd, bounds, reach), describe(sandbox, bounds, reach)
    version = landlock.abi() if sandbox.mode != "off" else 0
    if version < 1:
        return argv, describe(sandbox)
    hidden = [*reach.homes, *reach.sockets, *bounds.own]
    shown = [p for p in [*reach.program, *reach.readable, *_unrooted(bounds)] if _under(p, hidden)]
    writable = [*bounds.roots, *reach.state, *reach.writable, Path("/tmp")]
    writable += [Path(d) for d in DEVICES]
    # Landlock only grants: a grant holding a hidden place is split around it (in odd
    # setups only: a home folder under /tmp, goose-ls's files in a root).
    writable = [
        part
        for p in writable
        for part in landlock.split_around([h for h in hidden if p in h.parents], p)
        if part.exists()
    ]
    # Of /dev only what a program needs: never a disk, which root would read raw.
    devices = [Path(d) for d in (*DEVICES, *READ_DEVICES)]
    readable = landlock.split_around([*hidden, Path("/dev")]) + shown + devices
    wrapped = landlock.wrap(argv, readable, writable)
    said = (
        f"workspace (Landlock {version}, as {sandbox.problem}): writes only to "
        f"{_writes(bounds)}, its own state and /tmp; home folder hidden; NOT hidden: "
        "secrets inside the workspace"
    )
    return wrapped, said


def describe(sandbox: Sandbox, bounds: Bounds | None = None, reach: Reach | None = None) -> str:
    """One line for ``goose-ls doctor``, ``goose/status`` and the transcript."""
    if not sandbox.active:
        if sandbox.mode == "off":
            return "off (agent.sandbox is off): the agent reads, writes and runs as you do"
        return f"none ({sandbox.problem}): the agent runs UNSANDBOXED, as you do"
    net = "" if reach is None or reach.network else ", no network"
    state = ", ".join(str(p) for p in reach.state) if reach and reach.state else "none"
    return (
        f"workspace (bubblewrap): writes only to {_writes(bounds)} and its own state "
        f"({state}); home folder and secrets hidden{net}{_cut(bounds)}"
    )


def _cut(bounds: Bounds | None) -> str:
    if bounds is None or bounds.covered.cut is None:
        return ""
    return (
        f"; but {bounds.covered.cut} is too big to look at whole: secrets past its first "
        f"{WALK_LIMIT:,} entries are NOT hidden"
    )


def _writes(bounds: Bounds | None) -> str:
    """The roots, or why there are none."""
    if bounds is not None and bounds.roots:
        return ", ".join(str(r) for r in bounds.roots)
    seen = f"; it may read {bounds.unrooted}" if bounds and bounds.unrooted else ""
    return f"no folder (the editor opened none: open a project folder{seen})"
