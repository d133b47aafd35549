"""Each message's whole text, kept beside the events so chats can be searched by phrase.

Streamed text reaches the journal one token per event, so a phrase is cut across rows.
The ``texts`` table holds one row per message (what the user sent, a reply, a thought,
a tool call's title), keyed by its session and the index of its first event, its text
appended as the chunks come, in a transaction that journals them: when the message ends,
else once its oldest unwritten text is :data:`LAG_SECONDS` old, or before a search. (A
page rewritten at every batch of a long reply cost more than journaling its events; a
kill loses at most the last second of a reply from search, never from the chat.) A long message goes
on in a new page that starts with the last :data:`OVERLAP` characters of the one before:
an append never rewrites more than a page (the cost stays flat however long the reply),
and a phrase of up to :data:`OVERLAP` characters is never cut in two.

A row's ``indexed`` is 0 once its text changed: the full-text index (:mod:`.search`)
catches up with those rows when a search comes, so journaling pays nothing for it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from typing import NamedTuple

import attrs

from goose_ls import events
from goose_ls.sessions.journal.records import EventRow

PAGE_CHARS = 4000
"""A page grows to about this many characters before its message goes on in the next."""
OVERLAP = 200
"""Characters of a page repeated at the start of the next one."""
LAG_SECONDS = 1.0
"""How long a message's streamed text may wait to be added to its row."""
WAITING_CHARS = 16 * PAGE_CHARS
"""How much of it may wait: a long reply's text goes to its rows as it streams, in the
batches that bring it (large ones are written off the event loop), rather than all at
once, on the loop, in the small batch that ends the turn."""

SPEAKERS = {
    events.UserMessageChunk.KIND: "user",
    events.AgentMessageChunk.KIND: "agent",
    events.AgentThoughtChunk.KIND: "thought",
}
TOOL = "tool"
SUBAGENT = "subagent"
"""What a subagent was told, said or thought (its tool calls' titles are ``tool``)."""
QUIET = frozenset(
    {
        *SPEAKERS,
        events.Usage.KIND,
        events.AvailableCommands.KIND,
        events.CurrentMode.KIND,
        events.ConfigOptions.KIND,
        events.SessionInfo.KIND,
    }
)
"""Events that leave the message being written open: a transcript shows nothing between
its pieces for them (other chunks without text, a usage update...)."""


class Piece(NamedTuple):
    """What one event adds to the text of the message it belongs to."""

    kind: str
    """``user``, ``agent``, ``thought``, ``tool`` (a tool call's title) or ``subagent``."""
    text: str
    speaker: str = ""
    """Which subagent, and its task (``user``), its words or its thoughts: each a message
    of its own ("" outside subagents)."""


def _text(event_kind: object, content: object, subagent: str | None = None) -> Piece | None:
    speaker = SPEAKERS.get(str(event_kind))
    if speaker is None or not isinstance(content, dict) or content.get("type") != "text":
        return None
    text = content.get("text")
    if not isinstance(text, str) or not text:
        return None
    if subagent is None:
        return Piece(speaker, text)
    return Piece(SUBAGENT, text, f"{speaker} {subagent}")


def _title(title: object) -> Piece | None:
    return Piece(TOOL, title) if isinstance(title, str) and title else None


def piece_of_event(event: events.SessionEvent, subagent: str | None = None) -> Piece | None:
    """The text an event adds (as it is journaled: read from the object, no JSON);
    ``subagent``: the child session it happened in."""
    if isinstance(event, events.CHUNKS):
        return _text(event.KIND, event.content, subagent)
    if isinstance(event, events.ToolCall):
        return _title(event.title)
    return None


@attrs.define
class _Message:
    """The message a session is writing: its page's row, and the text not written yet."""

    first_idx: int
    message_id: str | None
    kind: str
    at: str
    speaker: str = ""
    row: int | None = None
    page: int = 0
    length: int = 0
    tail: str = ""
    """The page's last :data:`OVERLAP` characters."""
    waiting: list[str] = attrs.Factory(list)
    waiting_chars: int = 0
    since: float = 0.0
    """When the oldest waiting text came (``time.monotonic()``)."""


class TextIndex:
    """Keeps ``texts`` in step with the events, in the transaction that journals them."""

    def __init__(self) -> None:
        self._open: dict[str, _Message] = {}
        """Per session, the message its next text chunk may go on."""

    def reset(self) -> None:
        """The batch's transaction was rolled back: what was written of the open messages
        is not known any more, so their next text starts rows of their own (the text
        still waiting is given up: search misses it, the journal keeps its events)."""
        self._open.clear()

    def add(
        self,
        db: sqlite3.Connection,
        rows: Sequence[EventRow],
        pieces: Sequence[Piece | None],
        every: bool = False,
    ) -> None:
        """Add a batch of journaled events: the text of each message that ended, and of
        those waiting :data:`LAG_SECONDS` (``every``: all of it, a search is coming)."""
        now = time.monotonic()
        for row, piece in zip(rows, pieces, strict=True):
            current = self._open.get(row.session_id)
            if piece is None:
                if current is not None and row.kind not in QUIET:
                    self._end(db, row.session_id)  # something else shows: the message ends
                continue
            if (
                current is None
                or piece.kind == TOOL
                or (current.kind, current.speaker, current.message_id)
                != (piece.kind, piece.speaker, row.message_id)
            ):
                self._end(db, row.session_id)
                current = _Message(row.idx, row.message_id, piece.kind, row.at, piece.speaker)
                self._open[row.session_id] = current
            if not current.waiting:
                current.since = now
            current.waiting.append(piece.text)
            current.waiting_chars += len(piece.text)
        for session_id, message in self._open.items():
            if message.waiting and (
                every
                or now - message.since >= LAG_SECONDS
                or message.waiting_chars >= WAITING_CHARS
            ):
                _write(db, session_id, message)

    def waiting(self) -> bool:
        """Whether some journaled text is not in its row yet."""
        return any(message.waiting for message in self._open.values())

    def _end(self, db: sqlite3.Connection, session_id: str) -> None:
        message = self._open.pop(session_id, None)
        if message is not None and message.waiting:
            _write(db, session_id, message)


def _write(db: sqlite3.Connection, session_id: str, message: _Message) -> None:
    """Add the message's waiting text: its page filled up to :data:`PAGE_CHARS`, the rest
    on new pages."""
    text = "".join(message.waiting)
    message.waiting.clear()
    message.waiting_chars = 0
    at = 0  # what is written of it (no slicing off the rest: a reply can be megabytes)
    while at < len(text):
        if message.row is not None and message.length < PAGE_CHARS:
            room = PAGE_CHARS - message.length
            if _append(db, message, text[at : at + room]):
                at += room
                continue
        _new_page(db, session_id, message, text[at : at + PAGE_CHARS])
        at += PAGE_CHARS


def _append(db: sqlite3.Connection, message: _Message, text: str) -> bool:
    """Append to the message's page; False when its row is gone."""
    appended = db.execute("UPDATE texts SET text = text || ? WHERE id = ?", (text, message.row))
    if not appended.rowcount:
        return False
    # Apart, and only when needed: setting the flag rewrites its index's page.
    db.execute("UPDATE texts SET indexed = 0 WHERE id = ? AND indexed = 1", (message.row,))
    message.length += len(text)
    message.tail = (message.tail + text)[-OVERLAP:]
    return True


def _new_page(db: sqlite3.Connection, session_id: str, message: _Message, text: str) -> None:
    """The message's first page, or the next one (starting with the last one's tail)."""
    if message.row is not None:
        message.page += 1
        text = message.tail + text
    inserted = db.execute(
        "INSERT OR REPLACE INTO texts (session_id, first_idx, page, message_id, kind, at, text)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            message.first_idx,
            message.page,
            message.message_id,
            message.kind,
            message.at,
            text,
        ),
    )
    message.row = inserted.lastrowid
    message.length = len(text)
    message.tail = text[-OVERLAP:]
