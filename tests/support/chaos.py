"""An editor for tests that does everything LSP allows and real editors do, picked by a
seed: what goose-ls must hold whatever an editor does within the spec.

Each :class:`Chaos` is one mix of what editors were seen doing:

- version numbers that skip (Neovim numbers its batches by its change counter);
- several changes in one ``didChange`` (Neovim batches about 150 ms of typing);
- two ``didChange`` sent in the wrong order (Helix 25.01 typing fast);
- a completion preview inserted and taken back (Helix);
- ``didSave`` with the text or without it;
- ``window/showDocument`` answered ``null`` (a client that does not say);
- a request sent and cancelled at once (a code-action request overtaken by the cursor);
- a chat opened late: the file read when ``showDocument`` came, ``didOpen`` sent after
  goose-ls drew more into it (a card, a reply's first words).

The seed makes a failure repeat: it is in the test's name.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import attrs
from lsprotocol import types
from pygls.client import JsonRPCClient

from support.buffers import EditorBuffers, position_of


@attrs.frozen
class Chaos:
    """What the editor does, each turned on or off by the seed."""

    seed: int
    skips: bool
    batches: bool
    reorders: bool
    previews: bool
    saves_with_text: bool
    null_show_document: bool
    cancels: bool
    opens_late: bool

    @classmethod
    def of(cls, seed: int) -> Chaos:
        draw = random.Random(seed)
        return cls(seed, *(draw.random() < 0.6 for _ in range(8)))


class ChaosBuffers(EditorBuffers):
    """:class:`EditorBuffers` whose changes reach goose-ls as :class:`Chaos` says.

    Every change (the user's typing and goose-ls's own edits, which an editor reports
    back like any other) goes through one queue: numbered, maybe batched, maybe sent in
    the wrong order. Before each request the queue is flushed, as editors do, except
    for a change held back to come just after it."""

    def __init__(self, client: JsonRPCClient, encoding: str, chaos: Chaos) -> None:
        super().__init__(client, encoding, incremental=True)
        self.chaos = chaos
        self.random = random.Random(chaos.seed ^ 0x5EED)
        self.shown: list[types.ShowDocumentParams] = []
        self._read_at_show: dict[str, str] = {}
        self._pending: dict[str, list[Any]] = {}
        self._held: types.DidChangeTextDocumentParams | None = None
        # In place of pytest-lsp's own answer (always success), which pygls would not let
        # a second handler replace through ``feature``.
        client.protocol.fm.features[types.WINDOW_SHOW_DOCUMENT] = self._show_document

    def _show_document(self, params: types.ShowDocumentParams) -> types.ShowDocumentResult | None:
        self.shown.append(params)
        if params.uri not in self.texts:
            self._read_at_show[params.uri] = _read(params.uri)
        return None if self.chaos.null_show_document else types.ShowDocumentResult(success=True)

    def open_shown(self, uri: str) -> None:
        """Open a document goose-ls showed; when the chaos opens late, with the text read
        when ``showDocument`` came (goose-ls may have drawn more into the file since)."""
        stale = self._read_at_show.pop(uri, None)
        self.open(uri, stale if self.chaos.opens_late else None)

    # --- changes ---------------------------------------------------------------------
    def _report(self, uri: str, changes: list[Any]) -> None:
        self._pending.setdefault(uri, []).extend(changes)
        if not self.chaos.batches or self.random.random() < 0.35:
            self._flush_uri(uri)

    def _flush_uri(self, uri: str) -> None:
        changes = self._pending.pop(uri, [])
        if not changes:
            return
        self.versions[uri] += 1 + (self.random.randint(1, 3) if self.chaos.skips else 0)
        notice = types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=uri, version=self.versions[uri]
            ),
            content_changes=changes,
        )
        if self._held is not None:
            self.send(notice)  # the later one first
            self.send(self._held)
            self._held = None
        elif self.chaos.reorders and self.random.random() < 0.3:
            self._held = notice
        else:
            self.send(notice)

    def flush(self) -> None:
        """Send every change not sent yet (an editor does before a request)."""
        for uri in list(self._pending):
            self._flush_uri(uri)

    def release(self) -> None:
        """Send the change held back to come late."""
        if self._held is not None:
            self.send(self._held)
            self._held = None

    def type_fast(self, uri: str, text: str) -> None:
        """Type ``text`` at the end in pieces of 1 to 6 characters, with a completion
        preview inserted and taken back now and then."""
        at = 0
        while at < len(text):
            size = self.random.randint(1, 6)
            self.type_at_end(uri, text[at : at + size])
            at += size
            if self.chaos.previews and self.random.random() < 0.2:
                end = len(self.texts[uri])
                self.replace(uri, end, end, "@app.py")
                self.replace(uri, end, end + len("@app.py"), "")

    def save(self, uri: str) -> None:
        """``:w``: the buffer to its file, then ``didSave`` (with the text, if so)."""
        self.flush()
        self.release()
        _path(uri).write_text(self.texts[uri], encoding="utf-8")
        text = self.texts[uri] if self.chaos.saves_with_text else None
        self.client.protocol.notify(
            types.TEXT_DOCUMENT_DID_SAVE,
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=uri), text=text
            ),
        )

    # --- requests ----------------------------------------------------------------------
    async def code_actions(
        self, uri: str, line: int, to_line: int | None = None
    ) -> dict[str, types.CodeAction]:
        """The code actions at ``line`` (or on the lines up to ``to_line``), by title;
        after one request cancelled on the way, when the chaos has it."""
        self.flush()
        end = types.Position(line if to_line is None else to_line, 0)
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line, 0), end=end),
            context=types.CodeActionContext(diagnostics=[]),
        )
        if self.chaos.cancels:
            await cancelled(self.client, types.TEXT_DOCUMENT_CODE_ACTION, params)
        asking = self.client.protocol.send_request_async(types.TEXT_DOCUMENT_CODE_ACTION, params)
        await asyncio.sleep(0)
        self.release()  # a change sent out of order comes right behind (Helix 25.01: < 1 ms)
        result = await asking
        return {a.title: a for a in result or [] if isinstance(a, types.CodeAction)}

    async def run(self, action: types.CodeAction) -> None:
        """Run a code action's command, the held change (if any) just behind it."""
        assert action.command is not None, action.title
        self.flush()
        running = self.client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(
                command=action.command.command, arguments=action.command.arguments
            ),
        )
        await asyncio.sleep(0)
        self.release()
        await running

    def end_position(self, uri: str) -> types.Position:
        text = self.texts[uri]
        return position_of(text, len(text), self.encoding)


def _path(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


def _read(uri: str) -> str:
    return _path(uri).read_text(encoding="utf-8")


async def cancelled(client: JsonRPCClient, method: str, params: Any) -> None:
    """Send a request and ``$/cancelRequest`` right behind it (an editor whose cursor
    moved on); whatever it ends with, an answer or the cancellation, is let go."""
    msg_id = str(uuid.uuid4())
    future = client.protocol.send_request(method, params, msg_id=msg_id)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    with contextlib.suppress(Exception):
        await asyncio.wrap_future(future)
