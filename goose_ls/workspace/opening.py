"""Opening the agent's folders without following a link anywhere on the way.

The confinement checks a resolved path, but a folder on the way can be swapped for a
symlink between that check and the open. So goose-ls opens the path's folder starting
from the root it was checked against and refuses every symlink below that root:
``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`` where the kernel has it (Linux
5.6+), else one component at a time with ``O_NOFOLLOW`` and ``dir_fd``. Files are then
opened, stat'ed and replaced relative to that folder's descriptor. Where ``dir_fd`` does
not exist (Windows), nothing is opened: the agent's file access is refused.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat
import sys
from pathlib import Path

from goose_ls.workspace.confinement import Denied

RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
SYS_OPENAT2 = 437
"""The same number on every architecture with the unified syscall table (listed below)."""
UNIFIED_TABLE = {"x86_64", "amd64", "i386", "i686", "aarch64", "arm64", "armv7l", "riscv64"}
FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
"""(Windows has no O_DIRECTORY, but opens nothing here: no ``dir_fd``.)"""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _syscall() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if sys.platform != "linux" or platform.machine().lower() not in UNIFIED_TABLE:
        return None
    call = ctypes.CDLL(None, use_errno=True).syscall
    call.restype = ctypes.c_long
    return call


_SYSCALL = _syscall()


def openat2_available() -> bool:
    return _SYSCALL is not None


def _openat2(dir_fd: int, relative: str) -> int | None:
    """The folder opened beneath ``dir_fd``; None when the kernel (or a seccomp filter)
    has no openat2, so the caller walks instead."""
    if _SYSCALL is None:
        return None
    how = _OpenHow(FOLDER_FLAGS, 0, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
    fd = int(
        _SYSCALL(
            ctypes.c_long(SYS_OPENAT2),
            ctypes.c_int(dir_fd),
            ctypes.c_char_p(os.fsencode(relative)),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
    )
    if fd >= 0:
        return fd
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EPERM):
        return None
    raise OSError(code, os.strerror(code), relative)


def _walk(dir_fd: int, parts: tuple[str, ...], create: bool) -> int:
    """One component at a time, none of them a symlink; missing folders made if asked."""
    fd = os.dup(dir_fd)
    try:
        for part in parts:
            try:
                step = os.open(part, FOLDER_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, dir_fd=fd)
                step = os.open(part, FOLDER_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except NotADirectoryError:  # Linux says so of a symlink with O_DIRECTORY
                if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), part) from None
                raise
            os.close(fd)
            fd = step
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_folder(root: Path, folder: Path, create: bool = False) -> int:
    """``folder`` (resolved, ``root`` or below it) as a descriptor, reached from ``root``
    without following any symlink; with ``create``, missing folders are made on the way.

    Raises :class:`Denied` when a symlink is found on the way (the path changed after it
    was checked), ``OSError`` otherwise.
    """
    if os.open not in os.supports_dir_fd:
        raise Denied("this platform cannot open files without following links; refused")
    parts = folder.relative_to(root).parts
    root_fd = os.open(root, FOLDER_FLAGS)
    try:
        try:
            fd = _openat2(root_fd, os.path.join(".", *parts))
        except FileNotFoundError:
            if not create:
                raise
            fd = None
        return fd if fd is not None else _walk(root_fd, parts, create)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EXDEV):
            raise Denied(f"{folder} has a symlink on the way (it changed); not followed") from None
        raise
    finally:
        os.close(root_fd)
