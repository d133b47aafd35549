"""The agent's file reads and writes, served from what the editor sees.

A file open in the editor is read from its buffer (the unsaved text) and written through
the editor, so the change lands with undo; when the editor does not apply the edit, the
write fails rather than going to disk under the buffer. Other files come from and go to
the disk, through their folder opened without following links (``opening``): only
regular files (never a FIFO, socket or device, which could block goose-ls for good),
streamed when a part is asked for, whole only up to a size cap.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, Protocol

from goose_ls.atomic_files import replace_at
from goose_ls.workspace.confinement import Denied, credential_anywhere
from goose_ls.workspace.opening import open_folder

READ_FLAGS = os.O_RDONLY
for _flag in ("O_NONBLOCK", "O_NOFOLLOW", "O_NOCTTY"):  # POSIX; Windows opens nothing
    READ_FLAGS |= getattr(os, _flag, 0)
SNIFF_BYTES = 8192
"""A NUL byte in this many first bytes makes a file binary."""

LinkCheck = Callable[[Path, os.stat_result], None]
"""Raises :class:`Denied` when a file with several names is a secret under another."""


class EditorFiles(Protocol):
    """What the LSP layer offers: open buffers and edits to them."""

    def buffer_text(self, path: Path) -> str | None:
        """The unsaved text of ``path`` when the editor has it open, else None."""

    def open_files(self) -> list[Path]:
        """The files the user has open in the editor (not goose-ls's chat transcripts)."""

    async def replace_buffer(self, path: Path, content: str) -> str | None:
        """Replace an open buffer's text through the editor; None when done, else why not."""

    async def sync_buffer(self, path: Path, old: str, new: str) -> str | None:
        """Bring an open buffer holding ``old`` to ``new`` (the file changed on disk) with
        the smallest edit, one undo step; None when done (or when the editor refused the
        edit but holds ``new`` meanwhile: it reloaded the file itself), else why not."""

    def reloads_clean_buffers(self) -> bool:
        """Whether the editor reloads a buffer without unsaved changes by itself when its
        file changes on disk, keeping undo (VS Code): an edit from goose-ls would race it."""

    def reload_instead(self) -> str | None:
        """The keys that reload a buffer from its changed file, for a note, where the
        editor would question an edit of goose-ls's to it (eglot without goose-ls.el:
        "File changed on disk.  Reread from disk?"); else None."""

    async def settled(self, path: Path) -> None:
        """Wait (briefly) until the changes the editor sent for ``path`` are applied: its
        buffer as goose-ls has it is then the editor's."""

    def reload_hint(self) -> str:
        """What the user must do in this editor after a buffer was brought to the disk's
        text ("" when nothing), as a sentence to add to the note."""


class FileProblem(Exception):
    def __init__(self, message: str, not_found: bool = False, too_big: bool = False) -> None:
        super().__init__(message)
        self.not_found = not_found
        self.too_big = too_big


class TooBig(FileProblem):
    """A file over the cap it was to be read whole within."""


def select_lines(text: str, line: int | None, limit: int | None) -> str:
    """ACP's ``line`` (1-based) and ``limit`` (lines), applied to ``text``."""
    if line is None and limit is None:
        return text
    # Lines end at "\n" only, as on disk (``_lines``): not at the "\r", "\x0c" or
    # "\u2028" that str.splitlines also breaks at, or a buffer and its file would differ.
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    start = max((line or 1) - 1, 0)
    end = start + limit if limit is not None else len(lines)
    return "".join(lines[start:end])


def _kind(mode: int) -> str | None:
    """Why a file of this mode is not read or written, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    return "is not a regular file (a FIFO, socket or device); goose-ls does not open those"


@contextlib.contextmanager
def _folder(root: Path, path: Path, create: bool = False) -> Iterator[int]:
    if path == root:
        raise FileProblem(f"{path} is a directory, not a file")
    try:
        fd = open_folder(root, path.parent, create)
    except FileNotFoundError:
        raise FileProblem(f"{path} does not exist", not_found=True) from None
    except OSError as exc:
        raise FileProblem(f"cannot open the folder of {path}: {exc.strerror}") from None
    try:
        yield fd
    finally:
        os.close(fd)


def _entry(folder: int, path: Path) -> os.stat_result | None:
    """The file's status, not following a link (refused: it was resolved when checked)."""
    try:
        entry = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FileProblem(f"cannot read {path}: {exc.strerror}") from None
    if stat.S_ISLNK(entry.st_mode):
        raise Denied(f"{path} became a symlink after it was checked; not followed")
    return entry


def read_disk(
    path: Path,
    root: Path,
    line: int | None = None,
    limit: int | None = None,
    cap: int = 10_000_000,
    check_links: LinkCheck = lambda _, __: None,
) -> str:
    """The text of a regular file below ``root`` (blocking: run it off the event loop)."""
    with open(_open_regular(path, root), "rb") as stream:
        opened = os.fstat(stream.fileno())
        if why := _kind(opened.st_mode):  # swapped between the stat and the open
            raise FileProblem(f"{path} {why}")
        check_links(path, opened)
        fd = stream.fileno()
        if b"\0" in os.pread(fd, SNIFF_BYTES, 0):
            raise FileProblem(f"{path} is a binary file")
        # The whole file, whatever part is asked for: a key 1 MB in is a key.
        if what := credential_anywhere(lambda at, n: os.pread(fd, n, at), opened.st_size):
            raise Denied(f"{path} is a secret (it holds {what}); goose-ls does not hand those out")
        data = _lines(stream, line, limit, cap, path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileProblem(f"{path} is not UTF-8 text") from None


def _open_regular(path: Path, root: Path) -> int:
    """A descriptor of the regular file ``path`` below ``root``, opened through its
    folder without following a link anywhere on the way."""
    with _folder(root, path) as folder:
        entry = _entry(folder, path)
        if entry is None:
            raise FileProblem(f"{path} does not exist", not_found=True)
        if why := _kind(entry.st_mode):
            raise FileProblem(f"{path} {why}")
        try:
            return os.open(path.name, READ_FLAGS, dir_fd=folder)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Denied(f"{path} became a symlink after it was checked") from None
            raise FileProblem(f"cannot read {path}: {exc.strerror}") from None


def read_bytes(
    path: Path, root: Path, cap: int, check_links: LinkCheck = lambda _, __: None
) -> bytes:
    """The bytes of a regular file below ``root``, at most ``cap`` of them (a bigger file
    is refused, never read whole), opened as :func:`read_disk` opens one; a file holding
    a credential is refused whatever it is (blocking: run it off the event loop)."""
    with open(_open_regular(path, root), "rb") as stream:
        opened = os.fstat(stream.fileno())
        if why := _kind(opened.st_mode):  # swapped between the stat and the open
            raise FileProblem(f"{path} {why}")
        check_links(path, opened)
        data = stream.read(cap + 1)
    if len(data) > cap:
        raise FileProblem(f"{path} is over {cap:,} bytes", too_big=True)
    if what := credential_anywhere(lambda at, n: data[at : at + n], len(data)):
        raise Denied(f"{path} is a secret (it holds {what}); goose-ls does not hand those out")
    return data


def _lines(stream: BinaryIO, line: int | None, limit: int | None, cap: int, path: Path) -> bytes:
    """The whole file up to ``cap`` bytes, or the lines asked for, read one at a time."""
    if line is None and limit is None:
        data = stream.read(cap + 1)
        if len(data) > cap:
            raise TooBig(
                f"{path} is over {cap} bytes, too big to read whole; "
                "read it in parts with line and limit"
            )
        return data
    start = max((line or 1) - 1, 0)
    end = start + limit if limit is not None else None
    taken: list[bytes] = []
    size = number = 0
    while end is None or number < end:
        piece = stream.readline(cap + 1)
        if not piece:
            break
        if number >= start:
            size += len(piece)
            if size > cap:
                raise FileProblem(f"the lines asked for in {path} are over {cap} bytes")
            taken.append(piece)
        if piece.endswith(b"\n"):
            number += 1
    return b"".join(taken)


def write_disk(
    path: Path, root: Path, content: str, hard_links: bool = False, new_mode: int | None = None
) -> None:
    """Replace a regular file below ``root`` (or create it, with ``new_mode`` when given)
    through its opened folder."""
    with _folder(root, path, create=True) as folder:
        entry = _entry(folder, path)
        mode: int | None = new_mode
        if entry is not None:
            if why := _kind(entry.st_mode):
                raise FileProblem(f"{path} {why}")
            if entry.st_nlink > 1 and not hard_links:
                raise Denied(
                    f"{path} has {entry.st_nlink} hard links (another name may be outside "
                    "the workspace); set workspace.allowHardLinks to write it"
                )
            mode = stat.S_IMODE(entry.st_mode)
        try:
            replace_at(folder, path.name, content.encode("utf-8"), mode)
        except OSError as exc:
            raise FileProblem(f"cannot write {path}: {exc.strerror}") from None


def remove_disk(path: Path, root: Path) -> None:
    """Delete a regular file below ``root`` through its opened folder (no link followed:
    a folder swapped for a link since the check cannot lead the removal out)."""
    with _folder(root, path) as folder:
        entry = _entry(folder, path)
        if entry is None:
            return
        if why := _kind(entry.st_mode):
            raise FileProblem(f"{path} {why}")
        try:
            os.unlink(path.name, dir_fd=folder)
        except OSError as exc:
            raise FileProblem(f"cannot delete {path}: {exc.strerror}") from None


async def write(editor: EditorFiles, path: Path, content: str, to_disk: Callable[[], None]) -> None:
    """Write ``content`` exactly (line endings included): into the buffer when it is open,
    else with ``to_disk``."""
    if editor.buffer_text(path) is not None:
        if problem := await editor.replace_buffer(path, content):
            raise FileProblem(
                f"{path} is open in the editor, which did not apply the edit ({problem}); "
                "not written to disk under its buffer"
            )
        return
    await asyncio.to_thread(to_disk)
