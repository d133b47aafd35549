"""The editor's side of the agent's file access: open buffers, and edits with undo."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from goose_ls.lsp.editor import EditorConnection
from goose_ls.lsp.positions import Position, Units

LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
"""A line as LSP counts them: ended by ``\\n``, ``\\r\\n`` or ``\\r`` (or the text's end)."""
DISK_SYNCED = "goose/diskSynced"

EDIT_TIMEOUT = 10.0
"""Seconds to wait for the editor to apply goose-ls's write for the agent to an open
buffer (the agent's request waits on it)."""
RELOADING_EDITORS = {
    "visual studio code",
    "visual studio code - insiders",
    "code - oss",
    "code-server",
    "vscodium",
}
"""``clientInfo.name`` of the editors that reload a clean buffer whose file changed on
disk by themselves, undo kept: VS Code and its builds (the extension sends its
``vscode.env.appName``)."""


class EditorFileAccess:
    """Implements the workspace layer's ``EditorFiles`` with the LSP client."""

    def __init__(self, editor: EditorConnection) -> None:
        self._editor = editor
        self._syncing: dict[str, tuple[int | None, str]] = {}
        """URI → the version a sync was made from and the text it brought, until the
        editor reports a change: the same sync asked again meanwhile (a revert, and the
        watch seeing the file it wrote) is not applied twice."""

    def buffer_text(self, path: Path) -> str | None:
        return self._editor.buffer_text(path.as_uri())

    def open_files(self) -> list[Path]:
        return self._editor.open_files()

    async def settled(self, path: Path) -> None:
        await self._editor.settled(path.as_uri())

    def reload_hint(self) -> str:
        """What the editor asks about a buffer brought along with the disk, where no
        plugin marks it saved (``goose/diskSynced``), and the answer that keeps its text."""
        name = self._editor.client_name.lower()
        if name == "helix":
            return (
                " Helix refuses your next :w of it (“file modified by an external process”): "
                ":reload or :w!, either keeps this text."
            )
        if name == "neovim" and not self._editor.plugin:
            return (
                " Neovim asks at your next :w whether to write over a file “changed since "
                "reading it”: y writes this same text."
            )
        return ""

    def reloads_clean_buffers(self) -> bool:
        return self._editor.client_name.lower() in RELOADING_EDITORS

    def reload_instead(self) -> str | None:
        # eglot applies an edit to a buffer whose file changed on disk only after asking
        # "Reread from disk?", and a yes rereads it, then applies the edit on top (eglot
        # 1.9 numbers the reread buffer as the edit's version: the change lands twice).
        # eglot before 1.10 gives no clientInfo, as no other editor goose-ls serves.
        name = self._editor.client_name.lower()
        if name in ("eglot", "") and not self._editor.plugin:
            return "C-x x g"
        return None

    async def sync_buffer(self, path: Path, old: str, new: str) -> str | None:
        """Bring the open buffer from ``old`` (its text now) to ``new`` with the fewest
        lines changed, in one undo step; the plugins then mark it saved. An edit refused
        because the editor reloaded the file meanwhile (VS Code does; Emacs on a "Reread
        from disk?" answered yes) got the buffer there all the same."""
        if not self._editor.can_apply_edits():
            return "the editor cannot apply edits (no workspace/applyEdit)"
        if (how := self.reload_instead()) is not None:
            return f"the editor would ask first; {how} in it rereads the file"
        uri = path.as_uri()
        if self._editor.buffer_text(uri) != old:
            return "the buffer changed meanwhile"
        version = self._editor.document(uri).version
        if (pending := self._syncing.get(uri)) is not None and pending[0] == version:
            return None if pending[1] == new else "the buffer is being changed"
        edits = line_edits(old, new, self._editor.units)
        if not edits:
            return None
        self._syncing[uri] = (version, new)
        # No time limit: an editor held by its user (Neovim in `:!make` or at a "Press
        # ENTER" prompt) applies the edit when it is free, and an answer given up on then
        # made a conflict of a buffer that held the agent's text after all.
        problem = await self._editor.apply_edits(
            uri, edits, None, label="goose: changed on disk", version=version
        )
        if problem is None:
            self._editor.notify(DISK_SYNCED, {"uri": uri})
            return None
        self._syncing.pop(uri, None)
        await self._editor.settled(uri)  # the reload's change came before the answer
        return None if self._editor.buffer_text(uri) == new else problem

    async def replace_buffer(self, path: Path, content: str) -> str | None:
        if not self._editor.can_apply_edits():
            return "the editor cannot apply edits (no workspace/applyEdit)"
        uri = path.as_uri()
        end = self._editor.end_of(uri)
        return await self._editor.apply_edit(
            uri, Position(0, 0), end, content, EDIT_TIMEOUT, label="goose"
        )


def line_edits(old: str, new: str, units: Units) -> list[tuple[Position, Position, str]]:
    """The edits that turn ``old`` into ``new``, whole lines each (so positions need no
    units but at a last line without its newline).

    Lines added after the last line end are not inserted there, at the document's end:
    Neovim adds such an insert as lines of their own, the empty one after the text's last
    line end included, so the buffer would end with an extra empty line. The edit takes
    the last line in too (and the edit just before it, when only that line is between)."""
    a, b = LINE.findall(old), LINE.findall(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    spans = [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    if spans and a and spans[-1][0] == len(a) and a[-1].endswith(("\n", "\r")):
        _, end, j1, j2 = spans.pop()  # after an "equal" run: b[j1 - 1] is a[-1]
        start, first = len(a) - 1, j1 - 1
        if spans and spans[-1][1] == start:
            start, _, first, _ = spans.pop()
        spans.append((start, end, first, j2))
    return [(_at(a, i1, units), _at(a, i2, units), "".join(b[j1:j2])) for i1, i2, j1, j2 in spans]


def _at(lines: list[str], index: int, units: Units) -> Position:
    """The start of line ``index``; past a last line without its newline, its end."""
    if index < len(lines) or not lines or lines[-1].endswith(("\n", "\r")):
        return Position(index, 0)
    return Position(len(lines) - 1, units(lines[-1]))
