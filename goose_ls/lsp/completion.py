"""Completion in a transcript's prompt section: ``/`` at the start of a line offers the
agent's slash commands, ``@`` the workspace's files (see :mod:`.mentions`)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from goose_ls.lsp import capabilities, mentions
from goose_ls.lsp.positions import Units
from goose_ls.lsp.services import Services, ServicesSlot


def register(server: LanguageServer, services: ServicesSlot) -> None:
    @server.feature(types.TEXT_DOCUMENT_COMPLETION, capabilities.COMPLETION)
    def complete(_: LanguageServer, params: types.CompletionParams) -> types.CompletionList | None:
        s = services()
        transcript = s.transcripts.by_uri(params.text_document.uri)
        if transcript is None:
            return None
        line = s.transcripts.sections.line(transcript, params.position.line)
        if line is None:
            return None
        prefix = _before(line, params.position.character, s.editor.units)
        partial = mentions.typed(prefix)
        if partial is not None:
            return _files(s, params.position, partial)
        if line.lstrip().startswith("/"):
            return _commands(s, transcript.session_id)
        return None


def _commands(s: Services, session_id: str) -> types.CompletionList | None:
    session = s.sessions.find(session_id)
    if session is None or not session.commands:
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


def _files(s: Services, at: types.Position, partial: str) -> types.CompletionList:
    """Files for ``@partial``: each replaces what was typed after the ``@``."""
    start = types.Position(at.line, at.character - s.editor.units(partial))
    items = [
        types.CompletionItem(
            label=f"@{path}",
            kind=types.CompletionItemKind.File,
            filter_text=f"@{path}",
            sort_text=f"{rank:05d}",
            text_edit=types.TextEdit(types.Range(start, at), path),
        )
        for rank, path in enumerate(
            mentions.candidates(Path(s.root), s.editor.open_paths(), partial)
        )
    ]
    return types.CompletionList(is_incomplete=True, items=items)


def _before(line: str, character: int, units: Units) -> str:
    """``line`` up to ``character`` (counted in the editor's position units)."""
    counted = 0
    for index, char in enumerate(line):
        if counted >= character:
            return line[:index]
        counted += units(char)
    return line
