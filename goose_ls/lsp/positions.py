"""Positions in a document as LSP counts them: lines, and columns in the editor's units."""

from __future__ import annotations

from collections.abc import Callable

import attrs

Units = Callable[[str], int]
"""Length of a string in the editor's position units (utf-8 bytes, utf-16 or utf-32 units)."""


@attrs.frozen(order=True)
class Position:
    """A place in a document, in the editor's units (:data:`Units`)."""

    line: int
    character: int = 0


def units_of(encoding: str | None) -> Units:
    """The length function of an LSP position encoding (UTF-16 when none was agreed)."""
    if encoding == "utf-8":
        return lambda text: len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len
    return lambda text: len(text.encode("utf-16-le", "surrogatepass")) // 2


def advance(start: Position, text: str, units: Units) -> Position:
    """The position after ``text`` when it starts at ``start``."""
    lines = text.count("\n")
    if not lines:
        return Position(start.line, start.character + units(text))
    return Position(start.line + lines, units(text[text.rfind("\n") + 1 :]))


def offset_in(text: str, start: Position, target: Position, units: Units) -> int:
    """The index in ``text`` (which starts at ``start``) of ``target``, clamped to its
    line's end and to the text's end, as editors read positions past them."""
    index = 0
    for _ in range(target.line - start.line):
        newline = text.find("\n", index)
        if newline < 0:
            return len(text)
        index = newline + 1
    column = start.character if target.line == start.line else 0
    line_end = text.find("\n", index)
    line = text[index : len(text) if line_end < 0 else line_end]
    if column + units(line) <= target.character:
        return index + len(line)
    # Counting from the start of the line: at most one line of text.
    low, high = 0, len(line)
    while low < high:
        middle = (low + high) // 2
        if column + units(line[:middle]) < target.character:
            low = middle + 1
        else:
            high = middle
    return index + low


@attrs.frozen
class Range:
    """An LSP range; the lines it covers are 1-based and inclusive in :meth:`lines`."""

    start: Position
    end: Position

    def lines(self) -> tuple[int, int]:
        first, last = self.start.line + 1, self.end.line + 1
        if self.end.character == 0 and last > first:
            last -= 1  # a selection ending at column 0 does not include that line
        return first, max(first, last)

    def problem(self) -> str | None:
        if self.start.line < 0 or self.end.line < 0:
            return "lines are 0-based and cannot be negative"
        return None
