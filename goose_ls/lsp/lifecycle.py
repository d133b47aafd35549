"""Initialize, configuration and shutdown: when the agent starts and with which settings."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from goose_ls import settings as settings_model
from goose_ls.agent.supervisor import AgentState
from goose_ls.lsp.chat import EditorChat
from goose_ls.lsp.editor_files import EditorFileAccess
from goose_ls.lsp.permissions import PermissionPrompts
from goose_ls.lsp.progress import TurnProgress
from goose_ls.lsp.publisher import EditorPublisher
from goose_ls.lsp.server import CONFIGURATION_WAIT, GooseLanguageServer
from goose_ls.lsp.transcripts import Transcripts
from goose_ls.sessions.manager import SessionManager

log = logging.getLogger(__name__)


def workspace_root(params: types.InitializeParams) -> str:
    """The first workspace folder, else the root URI or path, else the server's cwd."""
    uris = [f.uri for f in params.workspace_folders or []]
    if params.root_uri:
        uris.append(params.root_uri)
    for uri in uris:
        path = to_fs_path(uri)
        if path and os.path.isdir(path):
            return path
    if params.root_path and os.path.isdir(params.root_path):
        return params.root_path
    return os.getcwd()


def register(server: GooseLanguageServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: GooseLanguageServer, params: types.InitializeParams) -> None:
        ls.root = workspace_root(params)
        ls.setting_sources = [("initializationOptions", params.initialization_options)]
        ls.settings, warnings = settings_model.load(ls.setting_sources)
        publisher = EditorPublisher(ls)
        sessions = SessionManager(ls.settings, ls.root, publisher, EditorFileAccess(ls))
        ls.attach(sessions, publisher)
        ls.transcripts = Transcripts(ls)
        ls.chat = EditorChat(ls)
        ls.turn_progress = TurnProgress(ls, sessions.cancel)
        ls.prompts = PermissionPrompts(ls, sessions.answer_permission, sessions.is_pending)
        _report(ls, warnings)
        if sessions.library.problem:
            publisher.show(types.MessageType.Warning, f"goose: {sessions.library.problem}")
        log.info("workspace %s; settings %s", ls.root, settings_model.describe(ls.settings))

    @server.feature(types.INITIALIZED)
    async def initialized(ls: GooseLanguageServer, _: types.InitializedParams) -> None:
        try:
            await _pull_configuration(ls)
        finally:
            ls.configured.set()
        if ls.settings.agent.start == "eager":
            ls.sessions.supervisor.start_in_background()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def changed(ls: GooseLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        pushed = settings_model.unwrap_section(params.settings)
        if isinstance(pushed, dict) and pushed:
            _apply(ls, ("didChangeConfiguration", pushed))
        else:
            await _pull_configuration(ls)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: GooseLanguageServer, *_: Any) -> None:
        ls.shutdown_requested = True
        if ls.initialized:
            await ls.sessions.shutdown()

    @server.feature(types.EXIT)
    def exit_(ls: GooseLanguageServer, *_: Any) -> None:
        # LSP: exit code 0 after a shutdown request, 1 without one.
        ls.exit_code = 0 if ls.shutdown_requested else 1


async def _pull_configuration(ls: GooseLanguageServer) -> None:
    caps = ls.client_capabilities.workspace
    if not (caps and caps.configuration):
        return
    try:
        result = await asyncio.wait_for(
            ls.workspace_configuration_async(
                types.ConfigurationParams(
                    items=[types.ConfigurationItem(section=settings_model.SECTION)]
                )
            ),
            CONFIGURATION_WAIT,
        )
    except Exception as exc:  # the editor may not answer; the settings we have stay
        log.warning("workspace/configuration failed: %s", exc)
        return
    if result and result[0] is not None:
        _apply(ls, ("workspace/configuration", result[0]))


def _apply(ls: GooseLanguageServer, source: tuple[str, Any]) -> None:
    """Recompute the settings from every source; env overrides stay on top."""
    ls.setting_sources = [s for s in ls.setting_sources if s[0] != source[0]] + [source]
    new, warnings = settings_model.load(ls.setting_sources)
    agent_changed = new.agent != ls.settings.agent
    ls.settings = new
    ls.sessions.update_settings(new)
    _report(ls, warnings)
    if agent_changed and ls.sessions.supervisor.status.state is AgentState.RUNNING:
        ls.publisher.show(
            types.MessageType.Info,
            "goose: agent settings changed; they apply when the agent next starts.",
        )


def _report(ls: GooseLanguageServer, warnings: list[str]) -> None:
    """Tell the user about each settings problem once, not at every reload."""
    new = [w for w in warnings if w not in ls.reported_warnings]
    ls.reported_warnings.update(new)
    for warning in new:
        log.warning("%s", warning)
    if new:
        ls.publisher.show(types.MessageType.Warning, "goose-ls settings: " + "; ".join(new))
