"""Writing files so that a crash or a full disk never leaves half of one."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

TEMP_NAME = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")
"""What :func:`atomic_write` names its temporary files (``.sessions.md.k3j_x9a2.tmp``)."""
STALE_AFTER = 60.0
"""Seconds after which such a file is a leftover (a write takes milliseconds)."""

PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600
"""goose-ls's own folders and files: they hold every chat, its audit and its log, so
they are the user's alone whatever the umask (a umask of 022 would make them readable
by every local user)."""

WriteFailed = Callable[[Path, OSError], None]
"""Told when goose-ls could not write one of its files (a full or read-only data dir):
the user hears of it, and the work goes on without the file."""


def private_folder(folder: Path) -> None:
    """Make ``folder`` and its missing parents 0700; an existing ``folder`` of this
    user's that others may enter is closed to them. Raises OSError as mkdir does."""
    missing: list[Path] = []
    for path in (folder, *folder.parents):
        if os.path.isdir(path):
            break
        missing.append(path)
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another goose-ls made it meanwhile
            os.mkdir(path, PRIVATE_FOLDER)
    tighten(folder, PRIVATE_FOLDER)


def tighten(path: Path | str | int, mode: int) -> None:
    """Take from ``path`` (a path or an open descriptor) every permission ``mode`` does
    not give, if it is this user's: never adds one, never touches another's file."""
    try:
        info = os.stat(path)
        loose = stat.S_IMODE(info.st_mode) & ~mode
        if loose and info.st_uid == _uid():
            os.chmod(path, stat.S_IMODE(info.st_mode) & mode)
    except OSError as exc:
        log.warning("cannot restrict the permissions of %s: %s", path, exc)


def _uid() -> int:
    getuid = getattr(os, "getuid", None)  # not on Windows, where modes mean little
    return getuid() if getuid is not None else -1


def create_private(path: Path) -> None:
    """Make ``path`` as an empty file readable by this user alone, if it does not exist
    (SQLite then gives its ``-wal`` and ``-shm`` the same mode); tighten it if it does."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, PRIVATE_FILE)
    except FileExistsError:
        # By its path, never by a descriptor: closing one would drop the locks SQLite
        # holds on the file for this process's other connections, and two processes'
        # writes would then corrupt it.
        tighten(path, PRIVATE_FILE)
        return
    os.close(fd)


def atomic_write(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder, fsync, then rename over ``path``.
    Only for goose-ls's own files: the file is 0600 (``mkstemp``'s mode) and a folder
    made for it 0700."""
    private_folder(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def replace_at(folder: int, name: str, data: bytes, mode: int | None) -> None:
    """Replace ``name`` in the open ``folder`` the same way, all through its descriptor:
    a folder swapped for a symlink meanwhile cannot redirect the write. ``mode`` is the
    replaced file's (kept); None for a new file (0o666 less the umask)."""
    tmp = f".{name[:200]}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, 0o666, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            if mode is not None:
                os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise


def remove_stale_temps(folder: Path) -> None:
    """Delete the temporary files a killed goose-ls left in ``folder`` (one of its own).

    Only old ones: another goose-ls sharing the data dir may be writing right now."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not TEMP_NAME.fullmatch(entry.name):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False) and (
                time.time() - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER
            ):
                os.unlink(entry.path)
                log.info("removed %s, left by an interrupted write", entry.path)
