"""Text document notifications: transcripts are followed by goose-ls, the rest by pygls.

pygls keeps a full copy of every open document and re-applies each change to it, which
for a transcript of megabytes streamed into several times a second costs its size at
every edit. Its handlers for open, change and close are wrapped here: a transcript's
go to :class:`~goose_ls.lsp.chat.transcript_documents.Transcripts` (which keeps only what it needs),
anything else to pygls as before. A file saved after one of its changes went missing
is read back (:mod:`goose_ls.lsp.wire.versions`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from goose_ls.lsp.chat.transcript_documents import Transcripts
from goose_ls.lsp.services import ServicesSlot
from goose_ls.sessions import path_of


def register(server: LanguageServer, services: ServicesSlot) -> None:
    def transcripts() -> Transcripts | None:
        return services().transcripts if services.ready else None

    def route(
        method: str,
        ours: Callable[[Transcripts, Any], bool],
        after: Callable[[Any], None] | None = None,
    ) -> None:
        theirs = server.protocol.fm.builtin_features[method]

        def handler(params: Any) -> Iterator[Any]:
            followed = transcripts()
            if followed is None or not ours(followed, params):
                yield from theirs(params)
                if after is not None and services.ready:
                    after(params)

        server.protocol.fm.add_builtin_feature(method, handler)

    def changed(
        params: types.DidChangeTextDocumentParams | types.DidOpenTextDocumentParams,
    ) -> None:
        """Open buffers the agent's writes are followed into (goose_ls.sessions.live);
        eglot opens a buffer again when it is reread from its file."""
        if (path := _file(params.text_document.uri)) is not None:
            services().sessions.open_files.buffer_changed(path)

    route(types.TEXT_DOCUMENT_DID_OPEN, lambda t, p: t.did_open(p.text_document), changed)
    route(types.TEXT_DOCUMENT_DID_CHANGE, lambda t, p: t.did_change(p), changed)
    route(types.TEXT_DOCUMENT_DID_CLOSE, lambda t, p: t.did_close(p.text_document.uri))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(_: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        s = services()
        s.editor.saved(params.text_document.uri, params.text)
        if (path := _file(params.text_document.uri)) is not None:
            s.sessions.open_files.buffer_saved(path)


def _file(uri: str) -> Path | None:
    """The file of a ``file:`` URI, as the editor's open files are named."""
    return Path(path_of(uri)) if uri.startswith("file:") else None
