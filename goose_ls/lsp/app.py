"""goose-ls assembled, in two steps: the server, which answers ``initialize`` from its
declared capabilities (:mod:`goose_ls.lsp.capabilities`); then, once that answer is out,
every feature, registered with what it needs (docs/architecture.md, "Start-up").

Only the server and pygls are loaded before the answer: the features bring the sessions
layer, the journal, the workspace's watchers and the settings, some 0.3 s of imports and
set-up that the editor no longer waits for to hear from goose-ls. The agent's side (the
ACP SDK and its models) loads later still, when an agent starts
(:meth:`goose_ls.agent.supervisor.AgentSupervisor.start`).
"""

from __future__ import annotations

import gc

from lsprotocol import types

from goose_ls.lsp.server import GooseLanguageServer


def create_server() -> GooseLanguageServer:
    """The server; the features are assembled once ``initialize`` is answered."""
    server = GooseLanguageServer()
    server.protocol.assemble = lambda params: assemble(server, params)
    return server


def assemble(server: GooseLanguageServer, params: types.InitializeParams) -> None:
    """Every feature registered, and the parts of goose-ls built for this workspace and
    these settings. The one place the features are imported."""
    # Some 100,000 objects made here (goose-ls's modules and classes) live as long as
    # goose-ls: the collector walking them again and again while they are made cost
    # 20-30 ms. Made, they are frozen (never walked again).
    gc.disable()
    try:
        from goose_ls.lsp import (
            code_actions,
            commands,
            completion,
            documents,
            lifecycle,
            symbols,
        )
        from goose_ls.lsp.plugin_api import methods as plugin_methods
        from goose_ls.lsp.services import ServicesSlot

        services = ServicesSlot()
        initialize = lifecycle.register(server, services)
        plugin_methods.register(server, services)
        documents.register(server, services)
        code_actions.register(server, services)
        commands.register(server, services, server.tasks)
        completion.register(server, services)
        symbols.register(server, services)
        initialize(params)
    finally:
        gc.freeze()
        gc.enable()
