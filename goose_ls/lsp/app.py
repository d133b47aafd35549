"""goose-ls assembled: the server, and each feature registered with what it needs."""

from __future__ import annotations

from goose_ls.lsp import (
    code_actions,
    commands,
    completion,
    documents,
    lifecycle,
    symbols,
)
from goose_ls.lsp.plugin_api import methods as plugin_methods
from goose_ls.lsp.server import GooseLanguageServer
from goose_ls.lsp.services import ServicesSlot


def create_server() -> GooseLanguageServer:
    """The server with every feature registered; ``initialize`` builds the rest."""
    server = GooseLanguageServer()
    services = ServicesSlot()
    lifecycle.register(server, services)
    plugin_methods.register(server, services)
    documents.register(server, services)
    code_actions.register(server, services)
    commands.register(server, services, server.tasks)
    completion.register(server, services)
    symbols.register(server, services)
    return server
