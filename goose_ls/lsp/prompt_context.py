"""What goes with a prompt, the same whichever side sends it (a goose.* command, the
plugin-free chat, a plugin's goose/prompt): a selection's lines as the editor's buffer
has them (else the disk), and a file for each ``@path`` the prompt mentions."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from goose_ls.errors import Refused
from goose_ls.lsp.editor import EditorConnection
from goose_ls.lsp.mentions import mentioned
from goose_ls.sessions import ContextItem, path_of


def selected_lines(
    editor: EditorConnection, uri: str, first: int, last: int, where: str = ""
) -> str:
    """Lines ``first`` to ``last`` (1-based, inclusive) of the buffer at ``uri``;
    ``where`` names the argument in the error."""
    try:
        lines = editor.document(uri).lines if editor.is_open(uri) else _disk_lines(uri)
    except OSError as exc:
        raise Refused(f"{where}cannot read {uri} ({exc.strerror})") from None
    return "".join(lines[first - 1 : last])


DISK_SELECTION_BYTES = 10_000_000
"""The largest file a selection is read from when its buffer is not open (it is read whole,
on the loop)."""


def _disk_lines(uri: str) -> list[str]:
    """The lines of the file at ``uri``, for a selection whose buffer is not open here.
    Only a ``file:`` URI names a file (any other's path, ``data:/etc/passwd``, a notebook
    cell's, is not the file it spells), and only a regular file is opened, without
    waiting: a FIFO would hold goose-ls, a device (``/dev/zero``) fill its memory."""
    if not uri.lower().startswith("file:"):
        raise OSError(errno.EINVAL, "not open in the editor, and not a file")
    fd = os.open(path_of(uri), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "is not a regular file (a FIFO, socket or device)")
        data = file.read(DISK_SELECTION_BYTES + 1)
    if len(data) > DISK_SELECTION_BYTES:
        raise OSError(
            errno.EFBIG, f"over {DISK_SELECTION_BYTES:,} bytes, and not open in the editor"
        )
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        raise OSError(errno.EINVAL, "not UTF-8 text") from None


def selection(editor: EditorConnection, uri: str, first: int, last: int) -> ContextItem:
    text = selected_lines(editor, uri, first, last)
    return ContextItem(type="selection", uri=uri, text=text, start_line=first, end_line=last)


def with_mentions(prompt: str, items: list[ContextItem], root: Path) -> list[ContextItem]:
    """``items`` and a file (or image) item for each workspace file ``prompt``
    @-mentions that is not attached already."""
    attached = {item.uri for item in items if item.type in ("file", "image")}
    return items + [m for m in mentioned(prompt, root) if m.uri not in attached]
