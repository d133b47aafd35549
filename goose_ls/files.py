"""Writing files so that a crash or a full disk never leaves half of one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

WriteFailed = Callable[[Path, OSError], None]
"""Told when goose-ls could not write one of its files (a full or read-only data dir):
the user hears of it, and the work goes on without the file."""


def atomic_write(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder, fsync, then rename over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
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
