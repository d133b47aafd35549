"""The server core: one small class holding the shared state, and the list of features.

Data flows editor -> LSP feature (``lsp/``) -> session manager (``sessions/``) -> agent
connection (``agent/``) -> the agent, and back through :mod:`goose_ls.lsp.publisher`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer

from goose_ls import __version__
from goose_ls.lsp.protocol import GooseProtocol
from goose_ls.sessions.manager import SessionManager
from goose_ls.settings import Settings

if TYPE_CHECKING:
    from goose_ls.lsp.chat import EditorChat
    from goose_ls.lsp.permissions import PermissionPrompts
    from goose_ls.lsp.progress import TurnProgress
    from goose_ls.lsp.publisher import EditorPublisher
    from goose_ls.lsp.transcripts import Transcripts


CONFIGURATION_WAIT = 5.0
"""Seconds a request waits for ``workspace/configuration`` before going on without it."""


class NotInitialized(JsonRpcServerNotInitialized):
    """A goose/* request arrived before ``initialize``."""


class GooseLanguageServer(LanguageServer):
    protocol: GooseProtocol

    def __init__(self) -> None:
        super().__init__("goose-ls", __version__, protocol_cls=GooseProtocol)
        self.settings = Settings()
        self.setting_sources: list[tuple[str, Any]] = []
        self.reported_warnings: set[str] = set()
        self.background_tasks: set[asyncio.Task[None]] = set()
        self.root = ""
        self.configured = asyncio.Event()
        """Set once the settings from ``workspace/configuration`` are in (or known absent)."""
        self.shutdown_requested = False
        self.exit_code = 0
        self._sessions: SessionManager | None = None
        self._publisher: EditorPublisher | None = None
        # The plugin-free face, set up at initialize (see lifecycle.py).
        self.transcripts: Transcripts
        self.chat: EditorChat
        self.turn_progress: TurnProgress
        self.prompts: PermissionPrompts

    @property
    def sessions(self) -> SessionManager:
        if self._sessions is None:
            raise NotInitialized("goose-ls has not been initialized yet")
        return self._sessions

    @property
    def publisher(self) -> EditorPublisher:
        if self._publisher is None:
            raise NotInitialized("goose-ls has not been initialized yet")
        return self._publisher

    def attach(self, sessions: SessionManager, publisher: EditorPublisher) -> None:
        self._sessions = sessions
        self._publisher = publisher

    @property
    def initialized(self) -> bool:
        return self._sessions is not None

    def warn_once(self, key: str, message: str) -> None:
        """Show a warning the first time ``key`` comes up (a fault that repeats per chunk)."""
        if key in self.reported_warnings:
            return
        self.reported_warnings.add(key)
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        )

    async def settings_settled(self) -> None:
        """Wait (briefly) for the editor's configuration, so the agent starts as configured."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.configured.wait(), CONFIGURATION_WAIT)


def create_server() -> GooseLanguageServer:
    """Build the server with every feature registered."""
    from goose_ls.lsp import (
        code_actions,
        commands,
        completion,
        documents,
        goose_methods,
        lifecycle,
    )

    server = GooseLanguageServer()
    lifecycle.register(server)
    goose_methods.register(server)
    documents.register(server)
    code_actions.register(server)
    commands.register(server)
    completion.register(server)
    return server
