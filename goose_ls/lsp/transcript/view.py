"""What an editor shows of a transcript's body, known without a copy of it.

The editor's text above the prompt section follows the body: it is the body up to some
offset, then a short stretch that differs (an edit not applied yet, a tool call's block
as it was before the body rewrote it). A :class:`View` keeps exactly that: how many of
the body's characters it shares, and its own tail. It stays right when the body's end
is rewritten (what the view still shows moves into its tail), and an editor's change is
applied to it at the cost of the distance from the change to the end.
"""

from __future__ import annotations

import attrs

from goose_ls.lsp.positions import Position, Units, advance, offset_in
from goose_ls.lsp.transcript.rope import Rope

START = Position(0, 0)


@attrs.define
class View:
    body: Rope
    kept: int = 0
    """How many characters at the start are the body's."""
    tail: str = ""
    end: Position = START
    """Where the view's text ends, counted from the body's start."""

    @classmethod
    def of(cls, body: Rope, text: str) -> View:
        """A view of ``text`` (read whole: on open, or a whole-text change)."""
        kept = body.common_prefix(text)
        view = cls(body, kept, text[kept:])
        view.end = advance(body.position(kept), view.tail, body.units)
        return view

    @property
    def length(self) -> int:
        return self.kept + len(self.tail)

    def __str__(self) -> str:
        return self.body.text(0, self.kept) + self.tail

    def copy(self) -> View:
        return attrs.evolve(self)

    def set(self, other: View) -> None:
        self.kept, self.tail, self.end = other.kept, other.tail, other.end

    def whole_body(self) -> None:
        """The view shows the body as it is now."""
        self.kept, self.tail, self.end = self.body.length, "", self.body.end

    def is_body(self) -> bool:
        return not self.tail and self.kept == self.body.length

    def before_cut(self, offset: int) -> None:
        """The body is about to lose what follows ``offset``: keep what the view shows."""
        if self.kept > offset:
            self.tail = self.body.text(offset, self.kept) + self.tail
            self.kept = offset

    def text_from(self, offset: int) -> str:
        if offset >= self.kept:
            return self.tail[offset - self.kept :]
        return self.body.text(offset, self.kept) + self.tail

    def position(self, offset: int) -> Position:
        if offset <= self.kept:
            return self.body.position(offset)
        return advance(self.body.position(self.kept), self.tail[: offset - self.kept], self.units)

    def offset(self, position: Position) -> int:
        shared_end = self.body.position(self.kept)
        if position < shared_end:
            return self.body.offset(position)
        return self.kept + offset_in(self.tail, shared_end, position, self.units)

    def replace(self, start: int, stop: int, text: str) -> None:
        """Replace the characters ``start``-``stop`` with ``text`` (an editor's change)."""
        self.before_cut(start)
        at = start - self.kept
        self.tail = self.tail[:at] + text + self.tail[stop - self.kept :]
        self.end = advance(self.body.position(self.kept), self.tail, self.units)

    def same_as(self, other: View) -> bool:
        """Whether both show the same text (compared from where they part from the body)."""
        if self.length != other.length:
            return False
        start = min(self.kept, other.kept)
        return self.text_from(start) == other.text_from(start)

    @property
    def units(self) -> Units:
        return self.body.units
