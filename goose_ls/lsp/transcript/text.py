"""The transcript's text: a server-owned body above a user-owned prompt section.

```
# goose chat · <session>            <- head (fixed)
...the conversation...              <- body: only ever grows at its end, except that the
                                       last block may be rewritten (a tool call's status)
## You ✎ write below, then …        <- the sentinel: everything below belongs to the user
> 📎 context lines
<the user's draft>
```

Positions are counted in the position encoding negotiated with the editor, so an edit
lands right after emoji and CJK text whatever the editor counts in.
"""

from __future__ import annotations

import attrs

from goose_ls.lsp.positions import Position, Units
from goose_ls.lsp.transcript.rope import Rope
from goose_ls.lsp.transcript.view import View

SENTINEL = "## You ✎ write below, then run the code action “Goose: Send”"
"""The prompt section's heading: the line after which everything belongs to the user. A
heading a person can read (no hidden marker), unlike any heading of the conversation."""
LEGACY_SENTINEL = (
    "<!-- goose-ls: prompt. Write below, then run the code action “Goose: Send”. -->\n## You"
)
"""The same, as earlier versions wrote it (a draft in such a file is kept)."""


def prompt_section(context_lines: list[str], draft: str = "") -> str:
    chips = "".join(f"{line}\n" for line in context_lines)
    return f"{SENTINEL}\n{chips}\n{draft}"


def split_prompt(document: str, legacy: bool = False) -> tuple[str, str] | None:
    """Split a transcript into (everything above the prompt section, the section); with
    ``legacy``, a section under an earlier version's sentinel too, given the current one."""
    parts = _split(document, SENTINEL)
    if parts is None and legacy and (old := _split(document, LEGACY_SENTINEL)) is not None:
        return old[0], SENTINEL + old[1][len(LEGACY_SENTINEL) :]
    return parts


def _split(document: str, sentinel: str) -> tuple[str, str] | None:
    at = document.rfind(sentinel)
    if at < 0 or (at > 0 and document[at - 1] != "\n"):
        return None
    return document[:at], document[at:]


def draft_of(section: str) -> str:
    """The user's text in a prompt section: what follows the heading and context lines."""
    lines = section.split("\n")[1:]  # the sentinel
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    return "\n".join(lines).strip()


@attrs.frozen
class Edit:
    start: Position
    end: Position
    new_text: str
    offset: int
    """Where the edit starts in the body."""
    before: View
    """What was shown before it (for :meth:`TranscriptText.retry`)."""


class TranscriptText:
    """What the server knows of a transcript, and what the editor (or the file) shows.

    The body is a :class:`Rope`, the shown text a :class:`View` of it: an edit costs the
    text it carries, whatever the transcript's length. ``shown`` is what the editor will
    hold once the edits sent so far are applied; other views (the editor's copy as it
    reported it) are kept right when the body's end is rewritten.
    """

    def __init__(self, head: str, units: Units = len) -> None:
        self.head = head
        self.head_lines = head.count("\n")
        self._body = Rope(units)
        self.shown = View(self._body)
        self._views = [self.shown]
        self.edits_sent = 0
        """How many edits :meth:`take_pending` has handed out."""

    @property
    def units(self) -> Units:
        return self._body.units

    @property
    def body(self) -> str:
        """The whole body (built for files, which are written every few seconds)."""
        return str(self._body)

    @property
    def length(self) -> int:
        return self._body.length

    def body_text(self, start: int) -> str:
        """The body from ``start`` on (its cost is that text's, not the body's)."""
        return self._body.text(start)

    def endswith(self, suffix: str) -> bool:
        return self._body.endswith(suffix)

    def view(self, text: str) -> View:
        """A view of ``text`` (the editor's, read whole) that follows the body from now on."""
        view = View.of(self._body, text)
        self._views.append(view)
        return view

    def forget(self, view: View) -> None:
        self._views.remove(view)

    def append(self, text: str) -> None:
        self._body.append(text)

    def rewrite_from(self, offset: int, text: str) -> None:
        """Replace the body from ``offset`` (the start of the last block) with ``text``."""
        for view in self._views:
            view.before_cut(offset)
        self._body.cut(offset)
        self._body.append(text)

    @property
    def dirty(self) -> bool:
        """Whether the body has changed since it was last shown."""
        return not self.shown.is_body()

    def take_pending(self) -> Edit | None:
        """The one edit that brings the shown body up to date, or None when it is.

        From now on the edit counts as shown; call :meth:`retry` if it failed.
        """
        if not self.dirty:
            return None
        before = self.shown.copy()
        start = before.kept
        edit = Edit(
            self.editor_position(self._body.position(start)),
            self.editor_position(before.end),
            self._body.text(start),
            start,
            before,
        )
        self.shown.whole_body()
        self.edits_sent += 1
        return edit

    def retry(self, edit: Edit) -> None:
        """The edit was not applied: what it replaced is shown again (the body may have
        been rewritten meanwhile, below where the edit started)."""
        before = edit.before
        shared = min(self.shown.kept, before.kept)
        tail = self.shown.text_from(shared)[: before.kept - shared] + before.tail
        self.shown.kept, self.shown.tail, self.shown.end = shared, tail, before.end

    def mark_shown(self) -> None:
        """The whole body is shown (the file was written)."""
        self.shown.whole_body()

    def editor_position(self, position: Position) -> Position:
        """A body position as a position in the document (below the head)."""
        return Position(position.line + self.head_lines, position.character)

    def document(self, section: str) -> str:
        """The whole file: head, body, a line break, then the prompt section."""
        return f"{self.head}{self.body}\n{section}"

    @property
    def sentinel_line(self) -> int:
        """The sentinel's line in the document as shown."""
        return self.head_lines + self.shown.end.line + 1
