"""What goose-ls asks of the editor, in one place: messages, documents, edits, progress.

Features talk to the editor through :class:`EditorConnection` rather than the pygls server: it
says what the editor can do (its capabilities, its open buffers, positions in its
encoding) and turns each request into one call that logs and survives an editor that
refuses, fails or never answers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.progress import Progress
from pygls.workspace import TextDocument

from goose_ls.errors import Refused
from goose_ls.lsp.positions import Position, Units, units_of
from goose_ls.lsp.server import GooseLanguageServer
from goose_ls.lsp.transcript.editor_copy import TranscriptDocument
from goose_ls.prompt_limits import MAX_BUTTON_CHARS, cut
from goose_ls.sessions import path_of
from goose_ls.tasks import uncancelled, within

log = logging.getLogger(__name__)

CATCH_UP_SECONDS = 2.0
"""How long Send waits for the changes held back by the version gate (each is held a
tenth of a second at most, unless the event loop is starved)."""


class EditorConnection:
    def __init__(self, server: GooseLanguageServer) -> None:
        self._server = server
        self.client_name = ""
        """``clientInfo.name`` of ``initialize`` (``helix``, ``Neovim``...), or ""."""
        self.plugin = False
        """Whether the client is one of goose-ls's plugins (it asked for ``goose/update``
        from the start), which handle goose-ls's own notifications."""
        self._warned: set[str] = set()
        self._followed: Callable[[str], TranscriptDocument | None] = lambda _: None
        self._followed_uris: Callable[[], Iterable[str]] = tuple
        """The open documents goose-ls follows itself rather than through pygls'
        workspace (the transcripts: their owner, the chat, tells them)."""

    # --- what it can do ----------------------------------------------------------
    @property
    def capabilities(self) -> types.ClientCapabilities:
        return self._server.client_capabilities

    def cursor_rides_inserts(self) -> bool:
        """Whether text goose-ls inserts above the cursor carries the cursor, and the view,
        down with it (Neovim, Emacs, VS Code): a cursor at the end then follows a reply.
        Helix's does not follow: there the cursor goes above the new text instead."""
        return self.client_name.lower() != "helix"

    def can_apply_edits(self) -> bool:
        workspace = self.capabilities.workspace
        return bool(workspace and workspace.apply_edit)

    def has_popups(self) -> bool:
        window = self.capabilities.window
        return bool(window and window.show_message)

    def has_progress(self) -> bool:
        window = self.capabilities.window
        return bool(window and window.work_done_progress)

    @property
    def units(self) -> Units:
        """The length of a text in the editor's position units."""
        return units_of(self._server.workspace.position_encoding)

    # --- its documents -------------------------------------------------------------
    def is_open(self, uri: str) -> bool:
        followed = self._followed(uri) is not None
        return followed or unquote(uri) in self._server.workspace.text_documents

    def open_paths(self) -> list[Path]:
        """The files of the editor's open buffers, most recently opened last."""
        uris = [*self._server.workspace.text_documents, *self._followed_uris()]
        return [Path(path_of(uri)) for uri in uris if uri.startswith("file:")]

    def open_files(self) -> list[Path]:
        """The files of the user's open buffers: not the transcripts goose-ls follows."""
        uris = self._server.workspace.text_documents
        return [Path(path_of(uri)) for uri in uris if uri.startswith("file:")]

    def document(self, uri: str) -> TextDocument:
        """The open buffer at ``uri``, else the file on disk (OSError when unreadable)."""
        kept = self._followed(uri)
        if kept is None:
            return self._server.workspace.get_text_document(uri)
        workspace = self._server.workspace
        return TextDocument(uri, kept.source, kept.version, position_codec=workspace.position_codec)

    async def caught_up(self, uri: str) -> None:
        """Wait until the changes the editor sent to ``uri`` are applied, in order; refused
        when one came too late to be (then nothing can be read from it as the user sees
        it). Short: Helix's status line cuts a long message before its advice."""
        missing = await self._server.protocol.versions.caught_up(uri, CATCH_UP_SECONDS)
        if missing is not None:
            raise Refused(
                f"change {missing} of {Path(path_of(uri)).name} came out of order; nothing was sent",
                "Save the file, then send again",
            )

    def in_step(self, uri: str) -> bool:
        """Whether goose-ls's copy of ``uri`` is the editor's text now."""
        return self._server.protocol.versions.in_step(uri)

    async def settled(self, uri: str) -> None:
        """Wait (briefly) until the changes the editor sent to ``uri`` are applied."""
        await self._server.protocol.versions.caught_up(uri, CATCH_UP_SECONDS)

    def saved(self, uri: str, text: str | None = None) -> None:
        """The editor wrote ``uri`` (``text``, when it says): if a change it sent came too
        late to be applied, what it saved is the truth."""
        if not self._server.protocol.versions.saved(uri):
            return
        if text is None:
            try:
                text = Path(path_of(uri)).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                log.warning("cannot read %s back after a missing change: %s", uri, exc)
                return
        self._server.protocol.resync(uri, text)

    def buffer_text(self, uri: str) -> str | None:
        """The unsaved text of an open buffer, or None when it is not open."""
        if (kept := self._followed(uri)) is not None:
            return kept.source
        return self.document(uri).source if self.is_open(uri) else None

    def follow_documents(
        self,
        document_of: Callable[[str], TranscriptDocument | None],
        uris: Callable[[], Iterable[str]],
    ) -> None:
        """Who follows the documents pygls does not: ``document_of(uri)`` and the
        ``uris`` of those open now."""
        self._followed, self._followed_uris = document_of, uris

    def take_over(self, uri: str) -> None:
        """goose-ls follows this open document from now on: pygls lets it go."""
        self._server.workspace.remove_text_document(uri)

    def hand_back(self, uri: str, document: TranscriptDocument) -> None:
        """goose-ls stops following a document the editor still has open: pygls does."""
        item = types.TextDocumentItem(uri, "markdown", document.version or 0, document.source)
        self._server.workspace.put_text_document(item)

    def end_of(self, uri: str) -> Position:
        """The position after the last character of an open buffer."""
        if (kept := self._followed(uri)) is not None:
            return kept.end
        document = self.document(uri)
        lines = document.lines
        if not lines:
            return Position(0, 0)
        if lines[-1].endswith("\n"):
            return Position(len(lines), 0)
        return Position(len(lines) - 1, self.units(lines[-1]))

    # --- telling the user --------------------------------------------------------------
    def show(self, kind: types.MessageType, message: str) -> None:
        """A message in the editor, cut to :data:`~goose_ls.prompt_limits.MAX_SHOWN_CHARS`
        (whatever it carries of the agent's, a message stays a line or two)."""
        message = cut(message)
        log.log(logging.ERROR if kind == types.MessageType.Error else logging.INFO, "%s", message)
        self._server.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def warn_once(self, key: str, message: str) -> None:
        """Show a warning the first time ``key`` comes up (a fault that repeats per chunk)."""
        if key not in self._warned:
            self._warned.add(key)
            self.show(types.MessageType.Warning, message)

    def cannot_write(self, path: Path, error: OSError) -> None:
        """Once per folder: a full or read-only disk fails every write the same way."""
        self.warn_once(
            f"cannot write {path.parent}",
            f"goose-ls cannot write {path}: {error.strerror or error}. Chats go on, but "
            "what is not written is lost when goose-ls stops; free space or set dataDir.",
        )

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """A goose/* notification (plain JSON, sent as it is)."""
        self._server.protocol.notify_json(method, params)

    def notify_encoded(self, method: str, *params: str) -> None:
        """A goose/* notification whose params are JSON text already (in pieces, joined
        once: a long reply's chunk is copied as few times as can be)."""
        self._server.protocol.notify_encoded(method, *params)

    async def ask(self, kind: types.MessageType, message: str, choices: list[str]) -> str | None:
        """A popup with buttons; the chosen choice, or None (dismissed, or no popup). The
        message and each button are cut (:mod:`goose_ls.prompt_limits`); a button whose cut
        title another's shares means nothing, and choosing it is a dismissal."""
        shown: dict[str, str | None] = {}
        for choice in choices:
            title = cut(choice, MAX_BUTTON_CHARS)
            shown[title] = None if title in shown else choice
        try:
            chosen = await self._server.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=kind,
                    message=cut(message),
                    actions=[types.MessageActionItem(title=title) for title in shown],
                )
            )
        except Exception as exc:  # no popup after all (Helix answers MethodNotFound)
            log.info("window/showMessageRequest failed: %s", exc)
            return None
        return shown.get(chosen.title) if chosen is not None else None

    def show_document(
        self, path: Path, beside: bool = False, at: Position | None = None
    ) -> Awaitable[bool]:
        """Open a file in the editor: the request goes out now, in order with the edits
        sent before and after it; the awaitable says whether the editor showed it.

        ``beside`` for a chat, shown next to the code (Helix opens a split for it) without
        taking the focus; anything else takes the focus where the user is (Helix replaces
        the current view), so documents never pile up splits. ``at`` puts the cursor
        there (editors scroll it into view; Helix centres it)."""
        selection = None
        if at is not None:
            here = types.Position(line=at.line, character=at.character)
            selection = types.Range(start=here, end=here)
        params = types.ShowDocumentParams(
            uri=path.as_uri(), take_focus=not beside, selection=selection
        )
        return self._show_document(params)

    async def open_external(self, url: str) -> bool:
        """Open a web page outside the editor (its browser); False when it cannot."""
        return await self._show_document(types.ShowDocumentParams(uri=url, external=True))

    def _show_document(self, params: types.ShowDocumentParams) -> Awaitable[bool]:
        try:
            sent = self._server.protocol.send_request_async(types.WINDOW_SHOW_DOCUMENT, params)
        except Exception as exc:  # the connection is gone
            log.info("window/showDocument failed: %s", exc)
            sent = None
        return self._shown(sent)

    async def _shown(self, sent: Awaitable[Any] | None) -> bool:
        if sent is None:
            return False
        try:
            result = await uncancelled(sent)  # a caller may stop waiting (transcripts)
        except Exception as exc:  # eglot before 1.16 and others do not have it
            log.info("window/showDocument failed: %s", exc)
            return False
        # eglot 1.9 answers null, and shows nothing: only a real success counts.
        return getattr(result, "success", False) is True

    # --- changing its buffers ------------------------------------------------------------
    async def apply_edit(
        self,
        uri: str,
        start: Position,
        end: Position,
        new_text: str,
        timeout: float,
        label: str | None = None,
    ) -> str | None:
        """Replace ``start``-``end`` of the buffer at ``uri``; None when applied, else why not."""
        return await self.apply_edits(uri, [(start, end, new_text)], timeout, label)

    async def apply_edits(
        self,
        uri: str,
        edits: list[tuple[Position, Position, str]],
        timeout: float | None,
        label: str | None = None,
        version: int | None = None,
    ) -> str | None:
        """Replace ranges of the buffer at ``uri`` (of its text now, not overlapping) in
        one edit, so one undo; with ``version``, an editor that checks it refuses the
        edit if the buffer changed since. None when applied, else why not."""
        text_edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = [
            types.TextEdit(
                range=types.Range(
                    start=types.Position(line=start.line, character=start.character),
                    end=types.Position(line=end.line, character=end.character),
                ),
                new_text=new_text,
            )
            for start, end, new_text in edits
        ]
        workspace = self.capabilities.workspace
        if workspace and workspace.workspace_edit and workspace.workspace_edit.document_changes:
            identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            change = types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(text_document=identifier, edits=text_edits)
                ]
            )
        else:
            change = types.WorkspaceEdit(changes={uri: text_edits})  # type: ignore[dict-item]
        try:
            result = await within(
                timeout,
                uncancelled(
                    self._server.workspace_apply_edit_async(
                        types.ApplyWorkspaceEditParams(edit=change, label=label)
                    )
                ),
            )
        except asyncio.TimeoutError:
            problem = f"no answer in {timeout:g} s" if timeout else "no answer"
        except Exception as exc:
            problem = str(exc) or type(exc).__name__
        else:
            if result and result.applied:
                return None
            problem = (result.failure_reason if result else None) or "refused"
        log.warning("workspace/applyEdit to %s failed: %s", uri, problem)
        return problem

    # --- progress --------------------------------------------------------------------
    @property
    def progress(self) -> Progress:
        return self._server.work_done_progress
