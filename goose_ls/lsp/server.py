"""The pygls server goose-ls runs: its protocol, its background work, its last words.

It knows nothing of goose-ls's features; :mod:`goose_ls.lsp.app` registers them, and
they receive what they need instead of reaching into this class.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

from pygls.lsp.server import LanguageServer

from goose_ls import __version__
from goose_ls.lsp.jsonrpc import GooseProtocol
from goose_ls.tasks import Tasks

log = logging.getLogger(__name__)


class GooseLanguageServer(LanguageServer):
    protocol: GooseProtocol

    def __init__(self) -> None:
        super().__init__("goose-ls", __version__, protocol_cls=GooseProtocol)
        self.tasks = Tasks()
        """Every background task of this server (see :mod:`goose_ls.tasks`)."""
        self.exit_code = 0
        self._on_exit: list[Callable[[], None]] = []

    def on_exit(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` when goose-ls stops for any reason, even without its event loop."""
        self._on_exit.append(hook)

    def stop_now(self) -> None:
        """The last words: stop the agent, keep what is known. Synchronous, runs once."""
        hooks, self._on_exit = self._on_exit, []
        for hook in hooks:
            with contextlib.suppress(Exception):
                hook()
