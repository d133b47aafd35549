"""What goose-ls serves, declared once: the LSP features and commands its ``initialize``
answer lists.

goose-ls answers ``initialize`` before it loads its features (docs/architecture.md,
"Start-up"), so the answer is built from this declaration. The features take their
options from here when they are registered, and the protocol checks, once they are, that
what they registered is what the answer said (:mod:`goose_ls.lsp.wire.jsonrpc`). The
``goose/*`` methods are not capabilities (docs/protocol.md, "Detecting support").

Light on purpose: it is loaded before ``initialize`` is answered.
"""

from __future__ import annotations

from lsprotocol import types

COMMANDS = (
    "goose.ask",
    "goose.explain",
    "goose.fixDiagnostics",
    "goose.addSelection",
    "goose.addFile",
    "goose.newChat",
    "goose.openChat",
    "goose.send",
    "goose.sendNow",
    "goose.cancel",
    "goose.permission",
    "goose.question",
    "goose.sessions",
    "goose.openSession",
    "goose.renameSession",
    "goose.deleteSession",
    "goose.exportChat",
    "goose.setMode",
    "goose.setConfigOption",
    "goose.restart",
    "goose.restartServer",
    "goose.pruneJournal",
    "goose.forkChat",
    "goose.reviewTurn",
    "goose.revertTurn",
    "goose.revertFile",
    "goose.takeAgentVersion",
    "goose.keepMyVersion",
    "goose.compareAgentVersion",
    "goose.authenticate",
    "goose.logout",
    "goose.trustWorkspacePolicy",
)
"""``workspace/executeCommand``'s commands, in the order of the command table
(:data:`goose_ls.lsp.commands.COMMANDS`, which has their titles, arguments and work)."""

CODE_ACTIONS = types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Refactor],
    resolve_provider=False,
)
COMPLETION = types.CompletionOptions(trigger_characters=["/", "@"])
"""Slash commands and ``@`` mentions in a chat's compose area."""

FEATURES: dict[str, object | None] = {
    types.INITIALIZED: None,
    types.SHUTDOWN: None,
    types.EXIT: None,
    types.WORKSPACE_DID_CHANGE_CONFIGURATION: None,
    types.TEXT_DOCUMENT_DID_SAVE: None,
    types.TEXT_DOCUMENT_CODE_ACTION: CODE_ACTIONS,
    types.TEXT_DOCUMENT_COMPLETION: COMPLETION,
    types.WORKSPACE_SYMBOL: None,
}
"""The standard LSP methods goose-ls handles beyond pygls' own, each with its options."""
