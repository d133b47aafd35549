"""Text document notifications that matter to goose-ls: transcripts opened and closed."""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from goose_ls.lsp.services import ServicesSlot


def register(server: LanguageServer, services: ServicesSlot) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(_: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        services().transcripts.opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(_: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        services().transcripts.closed(params.text_document.uri)
