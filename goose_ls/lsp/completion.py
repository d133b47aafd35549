"""Slash commands in a transcript's prompt section: ``/`` offers the agent's commands."""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from goose_ls.lsp.services import ServicesSlot


def register(server: LanguageServer, services: ServicesSlot) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["/"])
    )
    def complete(_: LanguageServer, params: types.CompletionParams) -> types.CompletionList | None:
        s = services()
        uri = params.text_document.uri
        transcript = s.transcripts.by_uri(uri)
        session = s.sessions.registry.find(transcript.session_id) if transcript else None
        if transcript is None or session is None or not session.commands:
            return None
        line = s.transcripts.prompts.line(transcript, params.position.line)
        if line is None or not line.lstrip().startswith("/"):
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
