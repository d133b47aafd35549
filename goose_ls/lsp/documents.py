"""Text document notifications that matter to goose-ls: transcripts opened and closed,
and files saved (a file written after a change went missing is read back)."""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from goose_ls.lsp.services import ServicesSlot


def register(server: LanguageServer, services: ServicesSlot) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(_: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        services().transcripts.opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(_: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        services().editor.saved(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(_: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        services().transcripts.closed(params.text_document.uri)
