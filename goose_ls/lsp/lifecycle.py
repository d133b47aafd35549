"""Initialize, configuration, shutdown and exit: where goose-ls's parts are built.

``initialize``'s params are the composition root's input: once its answer is out
(:mod:`goose_ls.lsp.app`), goose-ls reads the workspace and the settings from them,
builds the sessions layer and the plugin-free chat, and fills the slot every feature
takes its services from. Settings are layered from ``initializationOptions``,
``workspace/configuration`` and the environment; each problem is shown once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from typing import Any

import attrs
from lsprotocol import types
from pygls.uris import to_fs_path

from goose_ls import provenance
from goose_ls import settings as settings_model
from goose_ls.lsp.chat.current import EditorChat
from goose_ls.lsp.chat.elicitation_prompts import ElicitationPrompts
from goose_ls.lsp.chat.permission_prompts import PermissionPrompts
from goose_ls.lsp.chat.progress import TurnProgress
from goose_ls.lsp.chat.transcript_documents import Transcripts
from goose_ls.lsp.editor import EditorConnection
from goose_ls.lsp.editor_files import EditorFileAccess
from goose_ls.lsp.publisher import EditorPublisher, PluginFreeChat
from goose_ls.lsp.server import GooseLanguageServer
from goose_ls.lsp.services import Services, ServicesSlot
from goose_ls.sessions import AgentState, SessionManager
from goose_ls.settings import AgentSettings, Settings
from goose_ls.tasks import uncancelled, within

log = logging.getLogger(__name__)

CONFIGURATION_WAIT = 5.0
"""Seconds a request waits for ``workspace/configuration`` before going on without it."""


def workspace_root(params: types.InitializeParams) -> str | None:
    """The first workspace folder, else the root URI or path; None when there is none
    (the server's cwd is then where sessions run, but the agent is confined to nothing)."""
    uris = [f.uri for f in params.workspace_folders or []]
    if params.root_uri:
        uris.append(params.root_uri)
    for uri in uris:
        path = to_fs_path(uri)
        if path and os.path.isdir(path):
            return path
    if params.root_path and os.path.isdir(params.root_path):
        return params.root_path
    return None


def other_folders(server: GooseLanguageServer, workspace: str | None) -> list[str]:
    """The editor's workspace folders besides ``workspace``, as they are now (an editor
    may add or remove some: ``workspace/didChangeWorkspaceFolders``)."""
    if workspace is None:
        return []
    ours = os.path.realpath(workspace)
    paths = (to_fs_path(uri) for uri in server.workspace.folders)
    return [p for p in paths if p and os.path.isdir(p) and os.path.realpath(p) != ours]


class Configuration:
    """Where the settings came from, and whether the editor's own have arrived."""

    def __init__(self, editor: EditorConnection) -> None:
        self._editor = editor
        self.sources: list[tuple[str, Any]] = []
        self.folders: set[str] = set()
        """The names of the sources a folder (the repository) may have written."""
        self.arrived = asyncio.Event()
        """Set once the settings from ``workspace/configuration`` are in (or known absent)."""
        self._reported: set[str] = set()

    def load(self, *sources: tuple[str, Any], folder: bool = False) -> settings_model.Settings:
        """Recompute the settings with ``sources`` replacing their earlier values;
        ``folder``: a folder's answer, screened (:mod:`goose_ls.provenance`)."""
        names = {name for name, _ in sources}
        self.sources = [s for s in self.sources if s[0] not in names] + list(sources)
        if folder:
            self.folders |= names
        settings, warnings = provenance.load(self.sources, self.folders)
        new = [w for w in warnings if w not in self._reported]
        self._reported.update(new)
        for warning in new:
            log.warning("%s", warning)
        if new:
            self._editor.show(types.MessageType.Warning, "goose-ls settings: " + "; ".join(new))
        return settings

    async def settled(self) -> None:
        """Wait (briefly) for the editor's configuration, so the agent starts as configured."""
        with contextlib.suppress(asyncio.TimeoutError):
            await within(CONFIGURATION_WAIT, self.arrived.wait())


def build(
    server: GooseLanguageServer,
    editor: EditorConnection,
    workspace: str | None,
    settings: Settings,
    configuration: Configuration,
) -> Services:
    """Every part of goose-ls, wired together."""
    publisher = EditorPublisher(editor)
    root = workspace or os.getcwd()
    sessions = SessionManager(
        settings,
        root,
        publisher,
        EditorFileAccess(editor),
        server.tasks,
        workspace,
        lambda: other_folders(server, workspace),
    )
    current = lambda: sessions.settings  # noqa: E731 (read at each use: settings change)
    transcripts = Transcripts(editor, sessions, current, server.tasks)
    progress = TurnProgress(editor, sessions.cancel, server.tasks)
    chat = EditorChat(editor, sessions, transcripts, progress, configuration.settled)
    prompts = PermissionPrompts(editor, sessions.permissions, transcripts, server.tasks)
    publisher.connect(
        PluginFreeChat(
            transcripts,
            progress,
            chat,
            prompts,
            ElicitationPrompts(editor, sessions.questions, transcripts, server.tasks),
            lambda session_id: s.tab_id if (s := sessions.find(session_id)) else None,
        ),
        sessions.history,
    )
    server.protocol.send_through = sessions.send_journaled
    server.on_exit(sessions.stop_now)
    return Services(editor, root, sessions, publisher, transcripts, chat, configuration.settled)


UPDATES_FLAG = "gooseUpdates"
"""``initializationOptions`` flag of a client that wants ``goose/update`` from the start
(see :meth:`EditorPublisher.listen`)."""


def register(
    server: GooseLanguageServer, services: ServicesSlot
) -> Callable[[types.InitializeParams], None]:
    """The lifecycle's handlers; returns what builds goose-ls from ``initialize``'s
    params (called once every feature is registered)."""
    editor = EditorConnection(server)
    configuration = Configuration(editor)
    shutdown_requested = False

    def initialize(params: types.InitializeParams) -> None:
        editor.client_name = params.client_info.name if params.client_info else ""
        options = params.initialization_options
        wants_updates = isinstance(options, dict) and options.get(UPDATES_FLAG) is True
        editor.plugin = wants_updates
        if isinstance(options, dict):  # a flag of the protocol, not a setting
            options = {key: value for key, value in options.items() if key != UPDATES_FLAG}
        settings = configuration.load(("initializationOptions", options))
        built = build(server, editor, workspace_root(params), settings, configuration)
        services.fill(built)
        if wants_updates:
            built.publisher.listen()
        if problem := built.sessions.journal_problem:
            editor.show(types.MessageType.Warning, f"goose: {problem}")
        log.info("workspace %s; settings %s", built.root, settings_model.describe(built.settings))

    @server.feature(types.INITIALIZED)
    async def initialized(_: GooseLanguageServer, __: types.InitializedParams) -> None:
        try:
            await _pull_configuration()
        finally:
            configuration.arrived.set()
        if services().settings.agent.start == "eager":
            services().sessions.start_agent()
        server.tasks.run(_prune_journal(), "journal prune")  # with the editor's limits
        services().sessions.warm()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def changed(_: GooseLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        pushed = settings_model.unwrap_section(params.settings)
        # Said in the log: a change the editor never sent is then told from one not applied.
        log.info("the editor's settings changed (%s)", "sent" if pushed else "to be asked for")
        if isinstance(pushed, dict) and pushed:
            _apply(("didChangeConfiguration", pushed))
        else:
            await _pull_configuration()

    @server.feature(types.SHUTDOWN)
    async def shutdown(_: GooseLanguageServer, *__: Any) -> None:
        nonlocal shutdown_requested
        shutdown_requested = True
        if services.ready:
            await services().sessions.shutdown()
        await server.drain()

    @server.feature(types.EXIT)
    def exit_(_: GooseLanguageServer, *__: Any) -> None:
        # LSP: exit code 0 after a shutdown request, 1 without one.
        server.exit_code = 0 if shutdown_requested else 1
        # The last words now, not as the process ends: Helix 25.07 sends ``exit`` right
        # behind ``shutdown`` and kills goose-ls a moment later, so the chats it holds
        # would stay claimed and its agent would be left to the kernel.
        server.stop_now()

    async def _prune_journal() -> None:
        """The day's first prune on this data dir; the user hears of what it removed."""
        pruned = await services().sessions.prune(scheduled=True)
        if pruned is not None and pruned.session_ids:
            editor.show(types.MessageType.Info, f"goose: journal limits reached: {pruned}")

    async def _pull_configuration() -> None:
        """The user's settings (an item without ``scopeUri``), then each workspace
        folder's (with it): what a folder's answer sets that only the user may is
        ignored, and the user told (docs/configuration.md, "Who may set what")."""
        caps = editor.capabilities.workspace
        if not (caps and caps.configuration):
            return
        folders = [f.uri for f in server.workspace.folders.values()]
        folders = folders or [server.workspace.root_uri or ""]
        scopes = [uri for uri in folders if uri]
        items = [types.ConfigurationItem(section=settings_model.SECTION)] + [
            types.ConfigurationItem(section=settings_model.SECTION, scope_uri=uri) for uri in scopes
        ]
        try:
            result = await within(
                CONFIGURATION_WAIT,
                uncancelled(
                    server.workspace_configuration_async(types.ConfigurationParams(items=items))
                ),
            )
        except Exception as exc:  # the editor may not answer; the settings we have stay
            log.warning("workspace/configuration failed: %s", exc)
            return
        if not result:
            return
        if result[0] is not None:
            _apply(("workspace/configuration", result[0]))
        scoped = [
            (f"the settings of folder {to_fs_path(uri) or uri}", answer)
            for uri, answer in zip(scopes, result[1:], strict=False)  # a short answer: fewer
            if answer is not None
        ]
        if scoped:
            _apply(*scoped, folder=True)

    def _apply(*sources: tuple[str, Any], folder: bool = False) -> None:
        """Recompute the settings from every source; env overrides stay on top."""
        sessions = services().sessions
        new = configuration.load(*sources, folder=folder)
        agent_changed = _at_start(new.agent) != _at_start(sessions.settings.agent)
        sessions.update_settings(new)
        if agent_changed and sessions.agent_status.state is AgentState.RUNNING:
            editor.show(
                types.MessageType.Info,
                "goose: agent settings changed; they apply when the agent next starts.",
            )

    return initialize


def _at_start(agent: AgentSettings) -> AgentSettings:
    """The agent settings read when the agent starts: not ``agent.mode`` and the system
    prompt's, which apply to the next chat set up."""
    return attrs.evolve(
        agent,
        mode="",
        system_prompt="",
        system_prompt_mode="append",
        project_instructions=False,
        project_instructions_file="",
    )
