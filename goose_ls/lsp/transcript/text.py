"""The transcript's text: a server-owned body above a user-owned prompt section.

```
# goose chat · <session>            <- head (fixed)
...the conversation...              <- body: only ever grows at its end, except that the
                                       last block may be rewritten (a tool call's status)
<!-- goose-ls: prompt -->           <- the sentinel: everything below belongs to the user
## You
> 📎 context lines
<the user's draft>
```

Positions are counted in the position encoding negotiated with the editor, so an edit
lands right after emoji and CJK text whatever the editor counts in.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

SENTINEL = "<!-- goose-ls: prompt. Write below, then run the code action “Goose: Send”. -->"
PROMPT_HEADING = "## You"

Units = Callable[[str], int]
"""Length of a string in the editor's position units (utf-8 bytes, utf-16 or utf-32 units)."""


@attrs.frozen
class Position:
    line: int
    character: int


def position_at(text: str, offset: int, first_line: int, units: Units) -> Position:
    """The position of ``offset`` in ``text``, which starts at line ``first_line``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return Position(first_line + text.count("\n", 0, offset), units(text[line_start:offset]))


def prompt_section(context_lines: list[str], draft: str = "") -> str:
    chips = "".join(f"{line}\n" for line in context_lines)
    return f"{SENTINEL}\n{PROMPT_HEADING}\n{chips}\n{draft}"


def split_prompt(document: str) -> tuple[str, str] | None:
    """Split a transcript into (everything above the prompt section, the section)."""
    at = document.rfind(SENTINEL)
    if at < 0 or (at > 0 and document[at - 1] != "\n"):
        return None
    return document[:at], document[at:]


def draft_of(section: str) -> str:
    """The user's text in a prompt section: what follows the heading and context lines."""
    lines = section.split("\n")[2:]  # sentinel, heading
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    return "\n".join(lines).strip()


@attrs.frozen
class Edit:
    start: Position
    end: Position
    new_text: str
    result: str
    """The body once this edit is applied."""
    offset: int


@attrs.define
class TranscriptText:
    """What the server knows of a transcript, and what it has already shown.

    The body grows by many small appends (one per streamed chunk); they are kept as
    pieces and joined when the body is read, at most once per edit sent, so a long
    reply costs linear time rather than a copy of the whole body per chunk.
    """

    head: str
    shown: str = ""
    """The body as the editor (or the file) has it now."""
    dirty_from: int | None = None
    """The first body offset that differs from ``shown``; None when in sync."""
    _joined: str = ""
    _pieces: list[str] = attrs.Factory(list)
    _length: int = 0

    @property
    def body(self) -> str:
        if self._pieces:
            self._joined = "".join([self._joined, *self._pieces])
            self._pieces.clear()
        return self._joined

    @body.setter
    def body(self, value: str) -> None:
        self._joined = value
        self._pieces.clear()
        self._length = len(value)

    @property
    def length(self) -> int:
        """``len(body)``, without joining it."""
        return self._length

    def endswith(self, suffix: str) -> bool:
        """``body.endswith(suffix)`` for a short suffix, without joining the body."""
        tail = ""
        for piece in reversed(self._pieces):
            tail = piece + tail
            if len(tail) >= len(suffix):
                break
        else:
            tail = self._joined[len(self._joined) - len(suffix) :] + tail
        return tail.endswith(suffix)

    @property
    def head_lines(self) -> int:
        return self.head.count("\n")

    def append(self, text: str) -> None:
        if not text:
            return
        if self.dirty_from is None:
            self.dirty_from = self._length
        self._pieces.append(text)
        self._length += len(text)

    def rewrite_from(self, offset: int, text: str) -> None:
        """Replace the body from ``offset`` (the start of the last block) with ``text``."""
        self.dirty_from = offset if self.dirty_from is None else min(self.dirty_from, offset)
        self.body = self.body[:offset] + text

    def take_pending(self, units: Units) -> Edit | None:
        """The one edit that brings the shown body up to date, or None when it is.

        Changes made while the edit is on its way mark the body dirty again; call
        :meth:`shown_as` once the edit is applied, or :meth:`retry` when it failed.
        """
        if self.dirty_from is None:
            return None
        start = min(self.dirty_from, len(self.shown))
        self.dirty_from = None
        return Edit(
            position_at(self.shown, start, self.head_lines, units),
            position_at(self.shown, len(self.shown), self.head_lines, units),
            self.body[start:],
            self.body,
            start,
        )

    def shown_as(self, edit: Edit) -> None:
        self.shown = edit.result

    def retry(self, edit: Edit) -> None:
        self.dirty_from = (
            edit.offset if self.dirty_from is None else min(self.dirty_from, edit.offset)
        )

    def mark_shown(self) -> None:
        """The whole body is shown (the file was written)."""
        self.shown = self.body
        self.dirty_from = None

    def document(self, section: str) -> str:
        """The whole file: head, body, a line break, then the prompt section."""
        return f"{self.head}{self.body}\n{section}"

    @property
    def sentinel_line(self) -> int:
        """The sentinel's line in the document as shown."""
        return self.head_lines + self.shown.count("\n") + 1
