"""A bare pygls server: it answers ``initialize`` and nothing else. The floor for
goose-ls's start-up (bench only); the arguments goose-ls takes are ignored."""

from __future__ import annotations

from pygls.lsp.server import LanguageServer

if __name__ == "__main__":
    LanguageServer("bare", "0").start_io()
