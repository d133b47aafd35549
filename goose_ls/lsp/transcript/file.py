"""A transcript's file, written from where it last changed rather than whole.

The file is saved every few seconds while a reply streams (and several times a second
when no editor shows it); rewriting megabytes each time made a save cost the
transcript's size. goose-ls remembers what it wrote (a view of the body, and where the
body ends in the file) and, while the file is still exactly that (same inode, size and
modification time), writes only from the first character that changed: usually the
new text and the prompt section after it. A file changed by anyone else, or missing,
is written whole again, atomically. An in-place write is not atomic: a crash in the
middle of one leaves a short file, which the next run draws again from the journal.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import attrs

from goose_ls.atomic_files import atomic_write
from goose_ls.lsp.transcript.text import SENTINEL, TranscriptText, split_prompt


@attrs.frozen
class _Written:
    stat: tuple[int, int, int]
    """The file's inode, size and modification time right after goose-ls wrote it."""
    body_end: int
    """The byte where the body ends (the line break before the prompt section)."""
    section: str
    """The prompt section written after it (what the file still holds, while it is ours)."""


class TranscriptFile:
    def __init__(self, path: Path, text: TranscriptText) -> None:
        self.path = path
        self._text = text
        self._saved = text.view("")
        """What of the body the file holds (kept right as the body's end is rewritten)."""
        self._written: _Written | None = None

    def write(self, section: str, durable: bool = False) -> None:
        """Make the file the head, the body and ``section``; ``durable`` also syncs it to
        the disk (a turn's end). Raises OSError."""
        written = self._still_ours()
        if written is None:
            self._write_whole(section)
            return
        saved = self._saved
        at = written.body_end - len(saved.tail.encode())
        new = self._text.body_text(saved.kept).encode()
        with self.path.open("r+b") as out:
            out.seek(at)
            out.write(new + b"\n" + section.encode())
            out.truncate()
            out.flush()
            if durable:
                os.fsync(out.fileno())
        self._wrote(at + len(new), section)

    def section(self) -> str | None:
        """The prompt section the file holds (the user's draft, when no editor shows
        it): what goose-ls last wrote while the file is unchanged since, else read from
        it; None when the file has none."""
        written = self._still_ours()
        if written is not None and written.section.startswith(SENTINEL):
            return written.section
        try:
            parts = split_prompt(self.path.read_text(encoding="utf-8"), legacy=True)
        except (OSError, UnicodeDecodeError):
            return None
        return parts[1] if parts else None

    def _write_whole(self, section: str) -> None:
        above = (self._text.head + self._text.body).encode()
        atomic_write(self.path, f"{self._text.head}{self._text.body}\n{section}")
        self._wrote(len(above), section)

    def _wrote(self, body_end: int, section: str) -> None:
        self._saved.whole_body()
        stat = self.path.stat()
        self._written = _Written((stat.st_ino, stat.st_size, stat.st_mtime_ns), body_end, section)

    def _still_ours(self) -> _Written | None:
        """What goose-ls last wrote, if the file is still exactly that."""
        if self._written is None:
            return None
        with contextlib.suppress(OSError):
            stat = self.path.stat()
            if (stat.st_ino, stat.st_size, stat.st_mtime_ns) == self._written.stat:
                return self._written
        self._written = None
        return None
