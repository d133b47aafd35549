"""The agent's sandbox where bubblewrap cannot make one: Landlock (Linux 5.13+).

Some systems forbid the user namespaces bubblewrap needs (Ubuntu's AppArmor default
since 23.10, many containers) but have Landlock, which lets a process give up rights to
files without any privilege. It grants and never denies, so what the agent may read is
the whole disk split around the hidden places: each folder on the way to a hidden one is
replaced by its other entries (read-only, so a new entry there cannot be made anyway).
What it may write is the roots, its state and ``/tmp``.

The agent's command line is wrapped, as bubblewrap's is:
``python -I -m goose_ls.workspace.landlock --read P... --write P... -- AGENT ARGS`` gives
up the rights, then runs the agent, which inherits the restriction (so does the shared
goose serve, run by its keeper).

Weaker than the bubblewrap sandbox, and said so: secrets and protected paths inside the
roots stay reachable (a root split around its ``.env`` could take no new file), ``/tmp``
is shared, a socket in a visible place still connects, and there is no process namespace.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable
from pathlib import Path

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
"""The system call numbers, the same on every architecture (they came after the split)."""
VERSION_FLAG = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CAPABILITY_VERSION_3 = 0x20080522
LAST_CAPABILITY = 63

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
READ = EXECUTE | READ_FILE | READ_DIR
WRITE_V1 = (1 << 13) - 1  # every right of ABI 1: write, remove, make entries of each kind
REFER, TRUNCATE = 1 << 13, 1 << 14
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE
"""The rights a rule on a file (not a folder) may carry."""


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_capabilities(libc: ctypes.CDLL) -> None:
    """Give up every capability for good: root would otherwise read a raw disk or
    reach round the rules some other way."""
    for cap in range(LAST_CAPABILITY + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EPERM for a plain user: it has none
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(CAPABILITY_VERSION_3, 0)
    nothing = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), nothing) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


class _Ruleset(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def abi() -> int:
    """The Landlock ABI version this kernel offers; 0 when it offers none."""
    if not sys.platform.startswith("linux") or (libc := _libc()) is None:
        return 0
    version = libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), VERSION_FLAG)
    return max(int(version), 0)


def write_rights(version: int) -> int:
    rights = WRITE_V1
    rights |= REFER if version >= 2 else 0
    rights |= TRUNCATE if version >= 3 else 0
    return rights


def split_around(hidden: Iterable[Path], top: Path = Path("/")) -> list[Path]:
    """The paths that together show everything under ``top`` but ``hidden``: every
    folder on the way to a hidden path is replaced by its other entries (links left
    out)."""
    shown = {top}
    for place in sorted(set(hidden), key=lambda p: len(p.parts)):
        holder = next((s for s in shown if s == place or s in place.parents), None)
        if holder is None:
            continue  # already outside what is shown
        shown.discard(holder)
        if holder == place:
            continue
        for depth in range(len(holder.parts), len(place.parts)):
            folder, next_part = Path(*place.parts[:depth]), place.parts[depth]
            try:
                entries = list(os.scandir(folder))
            except OSError:
                entries = []
            # A link is not followed: a grant through it would show what it leads to,
            # hidden or not (its target is shown, or not, where it lies).
            shown.update(
                folder / e.name for e in entries if e.name != next_part and not e.is_symlink()
            )
    return sorted(shown)


def restrict(readable: Iterable[str], writable: Iterable[str]) -> None:
    """Give up every file right but reading ``readable`` and reading and writing
    ``writable`` (and beneath them), for this process and all it runs."""
    version, libc = abi(), _libc()
    if version < 1 or libc is None:
        raise OSError("this kernel offers no Landlock")
    write = write_rights(version)
    attr = _Ruleset(READ | write)
    ruleset = libc.syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    rules = [(p, READ) for p in readable] + [(p, READ | write) for p in writable]
    for path, rights in rules:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # gone since it was planned: nothing to show
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        rule = _PathBeneath(rights, fd)
        added = libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0)
        os.close(fd)
        if added != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "no_new_privs failed")
    drop_capabilities(libc)
    if libc.syscall(RESTRICT_SELF, ruleset, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    os.close(ruleset)


def wrap(argv: list[str], readable: Iterable[Path], writable: Iterable[Path]) -> list[str]:
    """``argv`` run under Landlock with these rights."""
    line = [sys.executable, "-I", "-m", "goose_ls.workspace.landlock"]
    line += [arg for p in readable for arg in ("--read", str(p))]
    line += [arg for p in writable for arg in ("--write", str(p))]
    return [*line, "--", *argv]


def main(args: list[str]) -> int:
    split = args.index("--")
    options, command = args[:split], args[split + 1 :]
    readable = [options[i + 1] for i, o in enumerate(options) if o == "--read"]
    writable = [options[i + 1] for i, o in enumerate(options) if o == "--write"]
    try:
        restrict(readable, writable)
    except OSError as exc:
        print(f"goose-ls: the agent's Landlock sandbox failed: {exc}", file=sys.stderr)
        return 126  # fail closed: the agent does not run unconfined
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
