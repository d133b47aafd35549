"""Text document notifications that matter to goose-ls: transcripts opened and closed."""

from __future__ import annotations

from lsprotocol import types

from goose_ls.lsp.server import GooseLanguageServer


def register(server: GooseLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: GooseLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.transcripts.opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: GooseLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.transcripts.closed(params.text_document.uri)
