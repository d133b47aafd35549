"""The agent's file reads and writes, served from what the editor sees.

A file open in the editor is read from its buffer (the unsaved text) and written through
the editor, so the change lands with undo; other files come from and go to the disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from goose_ls.files import atomic_write


class EditorFiles(Protocol):
    """What the LSP floor offers: open buffers and edits to them."""

    def buffer_text(self, path: Path) -> str | None:
        """The unsaved text of ``path`` when the editor has it open, else None."""

    async def replace_buffer(self, path: Path, content: str) -> bool:
        """Replace an open buffer's text through the editor; False if it could not."""


class FileProblem(Exception):
    def __init__(self, message: str, not_found: bool = False) -> None:
        super().__init__(message)
        self.not_found = not_found


def select_lines(text: str, line: int | None, limit: int | None) -> str:
    """ACP's ``line`` (1-based) and ``limit`` (lines), applied to ``text``."""
    if line is None and limit is None:
        return text
    lines = text.splitlines(keepends=True)
    start = max((line or 1) - 1, 0)
    end = start + limit if limit is not None else len(lines)
    return "".join(lines[start:end])


def read_disk(path: Path) -> str:
    if path.is_dir():
        raise FileProblem(f"{path} is a directory, not a file")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileProblem(f"{path} does not exist", not_found=True) from None
    except OSError as exc:
        raise FileProblem(f"cannot read {path}: {exc.strerror}") from None
    if b"\0" in data[:8192]:
        raise FileProblem(f"{path} is a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileProblem(f"{path} is not UTF-8 text") from None


async def write(editor: EditorFiles, path: Path, content: str) -> None:
    """Write ``content`` exactly (line endings included): into the buffer when it is open."""
    if editor.buffer_text(path) is not None and await editor.replace_buffer(path, content):
        return
    if path.is_dir():  # noqa: ASYNC240 (a stat, where the write is synchronous anyway)
        raise FileProblem(f"{path} is a directory")
    try:
        atomic_write(path, content)
    except OSError as exc:
        raise FileProblem(f"cannot write {path}: {exc.strerror}") from None
