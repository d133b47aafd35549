"""Slash commands in a transcript's prompt section: ``/`` offers the agent's commands."""

from __future__ import annotations

from lsprotocol import types

from goose_ls.lsp.server import GooseLanguageServer
from goose_ls.lsp.transcript.text import SENTINEL


def register(server: GooseLanguageServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["/"])
    )
    def complete(
        ls: GooseLanguageServer, params: types.CompletionParams
    ) -> types.CompletionList | None:
        uri = params.text_document.uri
        transcript = ls.transcripts.by_uri(uri)
        session = ls.sessions.sessions.get(transcript.session_id) if transcript else None
        if session is None or not session.commands:
            return None
        lines = ls.workspace.get_text_document(uri).lines
        line = params.position.line
        sentinel = next((i for i, text in enumerate(lines) if text.startswith(SENTINEL)), None)
        if sentinel is None or line <= sentinel or line >= len(lines):
            return None
        if not lines[line].lstrip().startswith("/"):
            return None
        items = [
            types.CompletionItem(
                label=f"/{command['name']}",
                kind=types.CompletionItemKind.Function,
                detail=str(command.get("description", "")),
                filter_text=f"/{command['name']}",
                insert_text=str(command["name"]),
            )
            for command in session.commands
            if isinstance(command.get("name"), str)
        ]
        return types.CompletionList(is_incomplete=False, items=items)
