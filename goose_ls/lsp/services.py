"""What every LSP feature is handed: the parts of goose-ls it works with.

They are built at ``initialize`` (they need the workspace and the settings), by
:mod:`goose_ls.lsp.lifecycle`; a feature receives a :class:`ServicesSlot` when it is
registered and takes the services from it when a request comes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

import attrs
from pygls.exceptions import JsonRpcServerNotInitialized

from goose_ls.lsp.chat.current import EditorChat
from goose_ls.lsp.chat.transcript_documents import Transcripts
from goose_ls.lsp.editor import EditorConnection
from goose_ls.sessions import EventRow, SessionManager
from goose_ls.settings import Settings


class Updates(Protocol):
    """What the goose/* routes ask of the publisher (:mod:`goose_ls.lsp.publisher`)."""

    def listen(self) -> None:
        """Send ``goose/update`` from now on."""

    def forward_journaled(self, row: EventRow) -> None:
        """Send one journaled event again (``goose/replay``)."""


class NotInitialized(JsonRpcServerNotInitialized):
    """A request arrived before ``initialize``."""


@attrs.define(eq=False)
class Services:
    editor: EditorConnection
    root: str
    """The workspace folder."""
    sessions: SessionManager
    publisher: Updates
    transcripts: Transcripts
    chat: EditorChat
    settled: Callable[[], Awaitable[None]]
    """Waits (briefly) for the editor's settings, so the agent starts as configured."""

    @property
    def settings(self) -> Settings:
        return self.sessions.settings


class ServicesSlot:
    """The services, once ``initialize`` has built them."""

    def __init__(self) -> None:
        self._services: Services | None = None

    def fill(self, services: Services) -> None:
        self._services = services

    @property
    def ready(self) -> bool:
        return self._services is not None

    def __call__(self) -> Services:
        if self._services is None:
            raise NotInitialized("goose-ls has not been initialized yet")
        return self._services
