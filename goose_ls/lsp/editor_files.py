"""The editor's side of the agent's file access: open buffers, and edits with undo."""

from __future__ import annotations

from pathlib import Path

from goose_ls.lsp.editor import Editor
from goose_ls.lsp.transcript.rope import Position

EDIT_TIMEOUT = 10.0
"""Seconds to wait for the editor to apply the agent's write to an open buffer."""


class EditorFileAccess:
    """Implements the workspace floor's ``EditorFiles`` with the LSP client."""

    def __init__(self, editor: Editor) -> None:
        self._editor = editor

    def buffer_text(self, path: Path) -> str | None:
        return self._editor.buffer_text(path.as_uri())

    def open_files(self) -> list[Path]:
        return self._editor.open_files()

    async def replace_buffer(self, path: Path, content: str) -> str | None:
        if not self._editor.can_apply_edits():
            return "the editor cannot apply edits (no workspace/applyEdit)"
        uri = path.as_uri()
        end = self._editor.end_of(uri)
        return await self._editor.apply_edit(
            uri, Position(0, 0), end, content, EDIT_TIMEOUT, label="goose"
        )
