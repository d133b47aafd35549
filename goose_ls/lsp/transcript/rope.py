"""Long text that grows at its end, kept so that the end costs what changes there.

A transcript's body reaches megabytes, and every streamed chunk appends to it; an edit
needs the text from some offset near the end and the position of that offset in the
editor's units. :class:`Rope` keeps the text as pieces of a few thousand characters, each
with the line and column it starts at, so appending, cutting the end, reading the end and
finding a position cost the size of the change (and of one piece), never of the whole.
"""

from __future__ import annotations

import bisect

from goose_ls.lsp.positions import Position, Units, advance, offset_in

PIECE = 4096
"""Characters a piece is filled to before the next one starts."""


class Rope:
    def __init__(self, units: Units) -> None:
        self.units = units
        self._pieces: list[str] = []
        self._starts: list[int] = []
        """Each piece's offset, line and column, in step with ``_pieces``."""
        self._lines: list[int] = []
        self._columns: list[int] = []
        self._open: list[str] = []
        """Appends to the last piece not joined into it yet (one join per read)."""
        self._last = 0
        """The last piece's length, open appends included."""
        self.length = 0
        self.end = Position(0, 0)

    def __str__(self) -> str:
        self._join()
        return "".join(self._pieces)

    def append(self, text: str) -> None:
        if not text:
            return
        if not self._pieces or self._last >= PIECE:
            self._join()
            self._pieces.append("")
            self._starts.append(self.length)
            self._lines.append(self.end.line)
            self._columns.append(self.end.character)
            self._last = 0
        self._open.append(text)
        self._last += len(text)
        self.length += len(text)
        self.end = advance(self.end, text, self.units)

    def cut(self, offset: int) -> None:
        """Drop everything from ``offset`` on."""
        if offset >= self.length:
            return
        self._join()
        at = self._piece_at(offset)
        kept = self._pieces[at][: offset - self._starts[at]]
        self.end = advance(Position(self._lines[at], self._columns[at]), kept, self.units)
        del self._pieces[at + 1 :], self._starts[at + 1 :]
        del self._lines[at + 1 :], self._columns[at + 1 :]
        self._pieces[at] = kept
        self._last = len(kept)
        self.length = offset

    def text(self, start: int, stop: int | None = None) -> str:
        """``str(self)[start:stop]``, at the cost of that text and one piece."""
        stop = self.length if stop is None else min(stop, self.length)
        if start >= stop:
            return ""
        self._join()
        first, last = self._piece_at(start), self._piece_at(stop - 1)
        parts = self._pieces[first : last + 1]
        end_cut = stop - self._starts[last]
        parts[-1] = parts[-1][:end_cut]
        parts[0] = parts[0][start - self._starts[first] :]
        return "".join(parts)

    def endswith(self, suffix: str) -> bool:
        return self.text(max(self.length - len(suffix), 0)).endswith(suffix)

    def position(self, offset: int) -> Position:
        """The line and column of ``offset``, counted from the rope's start."""
        if offset >= self.length:
            return self.end
        self._join()
        at = self._piece_at(offset)
        piece_start = Position(self._lines[at], self._columns[at])
        return advance(piece_start, self._pieces[at][: offset - self._starts[at]], self.units)

    def offset(self, position: Position) -> int:
        """The offset of ``position`` (clamped as :func:`offset_in` says)."""
        if position >= self.end:
            return self.length
        self._join()
        at = max(bisect.bisect_right(self._lines, position.line) - 1, 0)
        while at > 0 and (self._lines[at], self._columns[at]) > (position.line, position.character):
            at -= 1
        start = Position(self._lines[at], self._columns[at])
        # A line may run on over the next pieces: take them while they start on it.
        stop = at + 1
        while stop < len(self._pieces) and self._lines[stop] <= position.line:
            stop += 1
        text = "".join(self._pieces[at:stop])
        return self._starts[at] + offset_in(text, start, position, self.units)

    def common_prefix(self, text: str) -> int:
        """How many characters ``text`` shares with the start of the rope."""
        self._join()
        for start, piece in zip(self._starts, self._pieces, strict=True):
            other = text[start : start + len(piece)]
            if other != piece:
                low, high = 0, min(len(piece), len(other))  # the longest equal start
                while low < high:
                    middle = (low + high + 1) // 2
                    if piece[:middle] == other[:middle]:
                        low = middle
                    else:
                        high = middle - 1
                return start + low
        return min(self.length, len(text))

    def _join(self) -> None:
        if self._open:
            self._pieces[-1] += "".join(self._open)
            self._open.clear()

    def _piece_at(self, offset: int) -> int:
        return max(bisect.bisect_right(self._starts, offset) - 1, 0)
