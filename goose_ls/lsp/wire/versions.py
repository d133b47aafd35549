"""Document changes applied in the order the editor made them, whatever order they come in.

LSP numbers each change with a version that grows, but not one by one: Neovim sends its
changes in batches numbered by its change counter, and Helix skips the numbers of the
edits a completion preview makes and takes back. A change whose number is not the next
one is therefore either a skip or early, and only time tells them apart: Helix 25.01
sends ``didChange`` out of order when the user types fast (versions 35, 38, 36, 39, 37,
40), the missing ones a few milliseconds behind; applied as they arrived, incremental
changes garbled the text and the agent received words the user never typed.

So a change that skips numbers is held for :data:`SKIP_WAIT`: the ones it skipped that
come meanwhile are applied before it, in order; the numbers still missing then were
skipped. A change that comes after later ones were applied cannot be put back in its
place: it is not applied, and until the document is saved (the editor then wrote what it
shows, and the file is read back) the text may not be what the user sees. A save also
ends every wait: the editor sent all its changes before it. What must be
exactly what the user sees (a message being sent) waits while a change is held, and is
refused while one came too late.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from lsprotocol import types

from goose_ls.tasks import within

log = logging.getLogger(__name__)

SKIP_WAIT = 0.1
"""Seconds a change that skips numbers waits for the ones before it. Helix 25.01's late
changes came under a millisecond behind (measured in tests/test_helix.py); every batch
Neovim sends skips, and waits this long."""

Apply = Callable[[types.DidChangeTextDocumentParams], None]


class _Document:
    def __init__(self, version: int) -> None:
        self.applied = version
        """The version of the last change applied (or of the opened text)."""
        self.held: dict[int, tuple[types.DidChangeTextDocumentParams, float]] = {}
        """Changes that skip numbers, by version, with when they came."""
        self.timer: asyncio.TimerHandle | None = None
        self.late: int | None = None
        """The first change that came after later ones were applied, until a save."""
        self.settled = asyncio.Event()
        self.settled.set()

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.held.clear()
        self.settled.set()


class VersionGate:
    def __init__(self, apply: Apply) -> None:
        self._apply = apply
        self._documents: dict[str, _Document] = {}

    def opened(self, uri: str, version: int) -> None:
        if (old := self._documents.get(uri)) is not None:
            old.stop()
        self._documents[uri] = _Document(version)

    def closed(self, uri: str) -> None:
        if (document := self._documents.pop(uri, None)) is not None:
            document.stop()

    def arrived(self, params: types.DidChangeTextDocumentParams) -> None:
        """Apply the change now if it is the next, else hold it (see the module's doc)."""
        uri, version = params.text_document.uri, params.text_document.version
        document = self._documents.get(uri)
        if document is None:  # not opened through us: nothing to order against
            self._apply(params)
            return
        if version <= document.applied or version in document.held:
            log.warning(
                "change %d of %s came after change %d was applied: the text may differ "
                "from the editor's until it is saved",
                version, uri, document.applied,
            )  # fmt: skip
            if document.late is None:
                document.late = version
            return
        now = asyncio.get_running_loop().time()
        if document.held and version < (last := max(document.held)):
            waited = (now - document.held[last][1]) * 1000
            log.info("change %d of %s came %.1f ms after %d", version, uri, waited, last)
        document.held[version] = (params, now)
        self._release(uri, document)

    def _release(self, uri: str, document: _Document) -> None:
        """Apply, in order, the held changes that are next or have waited long enough."""
        now = asyncio.get_running_loop().time()
        while document.held:
            version = min(document.held)
            params, since = document.held[version]
            if version != document.applied + 1 and now - since < SKIP_WAIT:
                break
            if version != document.applied + 1:
                log.debug("versions %d-%d of %s skipped", document.applied + 1, version - 1, uri)
            del document.held[version]
            document.applied = version
            self._apply(params)
        if document.timer is not None:
            document.timer.cancel()
            document.timer = None
        if not document.held:
            document.settled.set()
            return
        document.settled.clear()
        _, since = document.held[min(document.held)]
        document.timer = asyncio.get_running_loop().call_later(
            max(0.0, since + SKIP_WAIT - now), self._release, uri, document
        )

    def saved(self, uri: str) -> bool:
        """The editor wrote the document. It sent every change it made before saying so:
        the changes held now are applied at once, in order (the numbers still missing were
        skipped). Whether the text here may still differ, a change having come too late
        (the caller then takes the text the editor saved)."""
        document = self._documents.get(uri)
        if document is None:
            return False
        while document.held:
            version = min(document.held)
            params, _ = document.held.pop(version)
            document.applied = version
            self._apply(params)
        document.stop()
        late, document.late = document.late, None
        return late is not None

    def in_step(self, uri: str) -> bool:
        """Whether the text here is the editor's now: no change held, none come too late."""
        document = self._documents.get(uri)
        return document is None or (not document.held and document.late is None)

    async def caught_up(self, uri: str, wait: float) -> int | None:
        """Wait up to ``wait`` seconds for the changes held to be applied. None when the
        text is the editor's, else the version of the change missing or come too late."""
        document = self._documents.get(uri)
        if document is None:
            return None
        if not document.settled.is_set():
            try:
                await within(wait, document.settled.wait())
            except asyncio.TimeoutError:
                return document.applied + 1
        return document.late
