"""The editor's side of the agent's file access: open buffers, and edits with undo."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from goose_ls.lsp.server import GooseLanguageServer

log = logging.getLogger(__name__)

EDIT_TIMEOUT = 10.0


class EditorFileAccess:
    """Implements the workspace floor's ``EditorFiles`` with the LSP client."""

    def __init__(self, server: GooseLanguageServer) -> None:
        self._server = server

    def buffer_text(self, path: Path) -> str | None:
        uri = path.as_uri()
        if uri not in self._server.workspace.text_documents:
            return None
        return self._server.workspace.get_text_document(uri).source

    async def replace_buffer(self, path: Path, content: str) -> bool:
        workspace = self._server.client_capabilities.workspace
        if not (workspace and workspace.apply_edit):
            return False
        uri = path.as_uri()
        document = self._server.workspace.get_text_document(uri)
        lines = document.lines
        if not lines:
            end = types.Position(line=0, character=0)
        elif lines[-1].endswith("\n"):
            end = types.Position(line=len(lines), character=0)
        else:
            units = document.position_codec.client_num_units(lines[-1])
            end = types.Position(line=len(lines) - 1, character=units)
        edit = types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
            edits=[
                types.TextEdit(
                    range=types.Range(start=types.Position(line=0, character=0), end=end),
                    new_text=content,
                )
            ],
        )
        try:
            result = await asyncio.wait_for(
                self._server.workspace_apply_edit_async(
                    types.ApplyWorkspaceEditParams(
                        edit=types.WorkspaceEdit(document_changes=[edit]), label="goose"
                    )
                ),
                EDIT_TIMEOUT,
            )
        except Exception as exc:
            log.warning("applying the agent's write to %s failed: %s", path, exc)
            return False
        return bool(result and result.applied)
