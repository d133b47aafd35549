"""The editor's copy of an open transcript, followed without keeping it whole.

The editor answers every edit goose-ls applies with ``textDocument/didChange``. Rather
than a full copy of a document of megabytes re-joined at each change, goose-ls keeps
what it needs: the prompt section as the editor has it (the user's draft), and above it
a :class:`View` of the body. A change in the prompt section is applied to the section;
a change above it is applied to the view, and is either the editor applying goose-ls's
edits (the view then comes back to what goose-ls has shown) or the user's: then the
editor no longer shows what goose-ls sent, and goose-ls takes the editor's text as what
it shows (and sends what differs), as on opening. A change that breaks the layout (the
sentinel edited away, the head changed) is applied to the whole text, read anew.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from lsprotocol import types

from goose_ls.lsp.positions import Position, Units, advance, offset_in
from goose_ls.lsp.transcript.text import SENTINEL, TranscriptText, split_prompt
from goose_ls.lsp.transcript.view import View

log = logging.getLogger(__name__)

LAG = 50
"""Edits goose-ls may send before the editor reports applying them (editors that batch
their changes report late); a change above the prompt section beyond that is the user's."""


def _splice(
    text: str, origin: Position, start: Position, end: Position, new: str, units: Units
) -> str:
    """``text`` (which starts at ``origin``) with ``start``-``end`` replaced by ``new``."""
    return (
        text[: offset_in(text, origin, start, units)]
        + new
        + text[offset_in(text, origin, end, units) :]
    )


class TranscriptDocument:
    def __init__(self, text: TranscriptText, source: str, version: int | None) -> None:
        self._text = text
        self.version = version
        self._above: View | None = None
        self._section = ""
        self._whole: str | None = None
        """The editor's text while it has no layout goose-ls can follow (read whole)."""
        self._synced_at = text.edits_sent
        """``edits_sent`` when the editor was last seen to show what goose-ls sent."""
        self._load(source)

    # --- what goose-ls reads ---------------------------------------------------------
    @property
    def prompt(self) -> str | None:
        """The prompt section as the editor has it, or None when it has none."""
        if self._whole is None:
            return self._section
        parts = split_prompt(self._whole)
        return parts[1] if parts else None

    @property
    def source(self) -> str:
        """The whole text (built on demand: code actions, search, the agent's reads)."""
        if self._above is None:
            return self._whole or ""
        return f"{self._text.head}{self._above}\n{self._section}"

    @property
    def sentinel_line(self) -> int | None:
        if self._above is None:
            return None
        return self._text.head_lines + self._above.end.line + 1

    @property
    def end(self) -> Position:
        """The position after the last character."""
        line = self.sentinel_line
        if line is None:
            return advance(Position(0, 0), self._whole or "", self._text.units)
        return advance(Position(line, 0), self._section, self._text.units)

    # --- what the editor reports -------------------------------------------------------
    def follow_editor(self) -> bool:
        """Take what the editor shows as what goose-ls has shown; True when they differed."""
        if self._above is None or self._above.same_as(self._text.shown):
            self._synced()
            return False
        self._text.shown.set(self._above)
        self._synced_at = self._text.edits_sent
        return True

    def change(
        self, changes: Sequence[types.TextDocumentContentChangeEvent], version: int | None
    ) -> bool:
        """Apply the editor's changes; True when it no longer shows what goose-ls sent
        (goose-ls then follows the editor, and has something to send)."""
        self.version = version
        diverged = False
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                diverged = self._partial(change) or diverged
            else:
                self._load(change.text)
                diverged = diverged or self._outstanding() == 0
        if diverged:
            return self.follow_editor()
        if self._above is not None and self._above.same_as(self._text.shown):
            self._synced()
        return False

    def close(self) -> None:
        if self._above is not None:
            self._text.forget(self._above)

    # --- inside ------------------------------------------------------------------------
    def _outstanding(self) -> int:
        return self._text.edits_sent - self._synced_at

    def _synced(self) -> None:
        self._synced_at = self._text.edits_sent
        if self._above is not None:
            self._above.set(self._text.shown)

    def _load(self, source: str) -> None:
        """Read the editor's whole text: on open, or after a change that broke the layout."""
        self.close()
        head = self._text.head
        parts = split_prompt(source)
        if parts is None or len(parts[0]) <= len(head) or not parts[0].startswith(head):
            self._above, self._whole = None, source
            return
        above, self._section = parts
        if not above.endswith("\n"):
            self._above, self._whole = None, source
            return
        self._above, self._whole = self._text.view(above[len(head) : -1]), None

    def _partial(self, change: types.TextDocumentContentChangePartial) -> bool:
        """One ranged change; True when it is the user's, above the prompt section."""
        start = Position(change.range.start.line, change.range.start.character)
        end = Position(change.range.end.line, change.range.end.character)
        units, above, sentinel = self._text.units, self._above, self.sentinel_line
        head_lines = self._text.head_lines
        if above is None or sentinel is None:
            self._load(_splice(self.source, Position(0, 0), start, end, change.text, units))
            return True
        if start.line >= sentinel:
            section = _splice(self._section, Position(sentinel, 0), start, end, change.text, units)
            if section.rfind(SENTINEL) == 0:
                self._section = section
                return False
            self._load(f"{self._text.head}{above}\n{section}")
            return True
        in_body = Position(start.line - head_lines, start.character)
        body_end = Position(end.line - head_lines, end.character)
        if in_body.line < 0 or body_end > above.end:  # the head, or the line break below
            self._load(_splice(self.source, Position(0, 0), start, end, change.text, units))
            return True
        begin, stop = above.offset(in_body), above.offset(body_end)
        agreed = min(above.kept, self._text.shown.kept)
        above.replace(begin, stop, change.text)
        # goose-ls's own edits land where the editor and goose-ls still differ.
        return begin < agreed or not 0 < self._outstanding() <= LAG
