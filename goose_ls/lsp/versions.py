"""Document changes applied in the order the editor made them, whatever order they come in.

Helix sends ``didChange`` notifications out of order when the user types fast (versions
35, 38, 36, 39, 37, 40); applied as they arrive, incremental changes garble the text
and the agent receives words the user never typed. Each open document's next version is
known here: a change that comes early is held until the ones before it arrive, so the
text goose-ls reads is always one the editor really had. While a change is missing the
text is older than the editor's, never wrong; what must be exactly what the user sees
(a message being sent) waits for the gap to close, and a document saved meanwhile is
taken from the disk (the editor just wrote what it shows there).
"""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types

from goose_ls.tasks import within

log = logging.getLogger(__name__)


class VersionGate:
    def __init__(self) -> None:
        self._next: dict[str, int] = {}
        """The version each open document's next change must have."""
        self._held: dict[str, dict[int, types.DidChangeTextDocumentParams]] = {}
        self._caught_up: dict[str, asyncio.Event] = {}

    def opened(self, uri: str, version: int) -> None:
        self._next[uri] = version + 1
        self._held.pop(uri, None)
        self._event(uri).set()

    def closed(self, uri: str) -> None:
        self._next.pop(uri, None)
        self._held.pop(uri, None)
        if (event := self._caught_up.pop(uri, None)) is not None:
            event.set()

    def arrived(
        self, params: types.DidChangeTextDocumentParams
    ) -> list[types.DidChangeTextDocumentParams]:
        """The changes that can be applied now, in order (none while one is missing)."""
        uri, version = params.text_document.uri, params.text_document.version
        expected = self._next.get(uri)
        if expected is None:  # not opened through us: nothing to order against
            return [params]
        if version < expected:
            log.warning("dropped change %d of %s: it was applied already", version, uri)
            return []
        held = self._held.setdefault(uri, {})
        held[version] = params
        ready = []
        while expected in held:
            ready.append(held.pop(expected))
            expected += 1
        self._next[uri] = expected
        if held:
            log.info("change %d of %s came before %d: held", min(held), uri, expected)
            self._event(uri).clear()
        else:
            self._held.pop(uri, None)
            self._event(uri).set()
        return ready

    def saved(self, uri: str) -> bool:
        """The editor wrote the document: changes held until then are in the file. Whether
        a gap was open (the caller then takes the text from the disk)."""
        held = self._held.pop(uri, None)
        if not held:
            return False
        self._next[uri] = max(held) + 1
        self._event(uri).set()
        return True

    async def caught_up(self, uri: str, wait: float) -> int | None:
        """Wait up to ``wait`` seconds for every change the editor sent to be applied;
        None when they are, else the first missing version."""
        event = self._event(uri)
        if not event.is_set():
            try:
                await within(wait, event.wait())
            except asyncio.TimeoutError:
                return self._next.get(uri)
        return None

    def _event(self, uri: str) -> asyncio.Event:
        event = self._caught_up.get(uri)
        if event is None:
            event = self._caught_up[uri] = asyncio.Event()
            event.set()
        return event
