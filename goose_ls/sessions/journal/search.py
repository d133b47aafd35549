"""Finding past chats by phrase, in the texts the journal keeps (:mod:`.texts`).

With SQLite's FTS5 (checked at run time: not every sqlite3 build has it) the phrase is
matched word by word, case and accents aside, the last word as a prefix (the editor
asks again as the user types); the full-text index first catches up with the texts that
changed since the last search. Without FTS5, the texts are scanned with ``LIKE``: the
phrase as typed, case aside for ASCII letters. Either way the newest messages come
first, one hit per message, and only chats the journal still has a record of.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import sqlite3

import attrs

log = logging.getLogger(__name__)

BEFORE = 30
AFTER = 60
"""Characters of context a snippet shows before and after the match."""
EXCERPT = 80
"""At most this many characters of the match's line are kept to find it again."""

_COLUMNS = (
    "SELECT t.session_id, s.title, t.first_idx, t.message_id, t.kind, t.at, t.text,"
    " s.transcript_path FROM texts t JOIN sessions s ON s.session_id = t.session_id"
)


@attrs.frozen
class Hit:
    """A message (or, for an empty query, a whole chat) that matched."""

    session_id: str
    title: str
    index: int
    """The index of the message's first event; 0 for a whole chat."""
    message_id: str | None
    """The turn's ``messageId``."""
    kind: str
    """``user``, ``agent``, ``thought``, ``tool``; ``chat`` for a whole chat."""
    at: str
    """When the message began (a chat: when it last changed), ISO 8601."""
    snippet: str
    """The match with a little text around it, on one line."""
    excerpt: str
    """The match's line as the message has it, to find it in the transcript."""
    transcript: str
    """The transcript's path as recorded; empty when none was recorded."""


@functools.cache
def fts_available() -> bool:
    """Whether this Python's SQLite has FTS5."""
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        try:
            db.execute("CREATE VIRTUAL TABLE probe USING fts5(text)")
        except sqlite3.OperationalError:
            return False
    return True


def prepare(db: sqlite3.Connection) -> None:
    """Create the full-text index if this SQLite can and the journal has none yet (a
    journal started without FTS5 gets one later); every text is then to be indexed."""
    if not fts_available() or _has_index(db):
        return
    db.execute(
        "CREATE VIRTUAL TABLE texts_fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 2')"
    )
    db.execute("UPDATE texts SET indexed = 0 WHERE indexed = 1")


def _has_index(db: sqlite3.Connection) -> bool:
    found = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'texts_fts'").fetchone()
    return found is not None


def catch_up(db: sqlite3.Connection) -> None:
    """Index the texts that changed since the last search (in the caller's transaction)."""
    if not fts_available() or not _has_index(db):
        return
    db.execute("DELETE FROM texts_fts WHERE rowid IN (SELECT id FROM texts WHERE indexed = 0)")
    db.execute("INSERT INTO texts_fts (rowid, text) SELECT id, text FROM texts WHERE indexed = 0")
    db.execute("UPDATE texts SET indexed = 1 WHERE indexed = 0")


def forget(db: sqlite3.Connection, session_id: str) -> None:
    """Drop a session's texts and their index entries (in the caller's transaction)."""
    if _has_index(db):
        db.execute(
            "DELETE FROM texts_fts WHERE rowid IN (SELECT id FROM texts WHERE session_id = ?)",
            (session_id,),
        )
    db.execute("DELETE FROM texts WHERE session_id = ?", (session_id,))


def find(db: sqlite3.Connection, query: str, limit: int) -> list[Hit]:
    """Messages holding ``query``, newest first; for an empty query, the latest chats."""
    query = " ".join(query.split())
    if not query:
        return _recent(db, limit)
    rows: list[sqlite3.Row] | None = None
    if fts_available() and _has_index(db):
        with contextlib.suppress(sqlite3.OperationalError):  # a query FTS5 cannot read
            rows = _select(
                db,
                f"{_COLUMNS} JOIN texts_fts f ON f.rowid = t.id WHERE texts_fts MATCH ?",
                fts_query(query),
                limit,
            )
    if rows is None:
        rows = _select(db, f"{_COLUMNS} WHERE t.text LIKE ? ESCAPE '\\'", like(query), limit)
    hits: dict[tuple[str, int], Hit] = {}
    for row in rows:
        key = (row["session_id"], row["first_idx"])
        if key not in hits and len(hits) < limit:  # a message's pages overlap
            hits[key] = _hit(row, query)
    return list(hits.values())


def _select(db: sqlite3.Connection, sql: str, match: str, limit: int) -> list[sqlite3.Row]:
    cursor = db.cursor()
    cursor.row_factory = sqlite3.Row
    # Twice the limit: the same message may match in two of its pages.
    order = " ORDER BY t.at DESC, t.id DESC LIMIT ?"
    return list(cursor.execute(sql + order, (match, 2 * limit)))


def _recent(db: sqlite3.Connection, limit: int) -> list[Hit]:
    rows = db.execute(
        "SELECT session_id, title, updated_at, transcript_path FROM sessions"
        " ORDER BY updated_at DESC, rowid DESC LIMIT ?",  # rowid: the last written
        (limit,),
    )
    return [
        Hit(session_id, title, 0, None, "chat", at, "", "", transcript)
        for session_id, title, at, transcript in rows
    ]


def fts_query(query: str) -> str:
    """The query as one FTS5 phrase; its last word a prefix when it ends in one."""
    phrase = '"' + query.replace('"', '""') + '"'
    return phrase + " *" if re.search(r"\w$", query) else phrase


def like(query: str) -> str:
    escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def match_span(text: str, query: str) -> tuple[int, int]:
    """Where ``query`` is in ``text``: its words with anything but letters between (as
    FTS5 matched them), from a word's start if possible; (0, 0) when not found (FTS5
    also matched accents away)."""
    words = re.findall(r"\w+", query)
    patterns = [re.escape(query)]
    if words:
        joined = r"\W+".join(map(re.escape, words))
        patterns[:0] = [rf"(?<!\w){joined}", joined]
    for pattern in patterns:
        if found := re.search(pattern, text, re.IGNORECASE):
            return found.span()
    return 0, 0


def snippet(text: str, start: int, end: int) -> str:
    left, right = max(0, start - BEFORE), min(len(text), end + AFTER)
    shown = " ".join(text[left:right].split())
    return ("…" if left else "") + shown + ("…" if right < len(text) else "")


def excerpt(text: str, start: int, end: int) -> str:
    """The match's line, cut around the match: a piece the transcript shows verbatim."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line_end = len(text) if line_end < 0 else line_end
    slack = max(0, EXCERPT - (end - start)) // 2
    left = max(line_start, start - slack)
    return text[left : min(line_end, left + EXCERPT)].strip()


def _hit(row: sqlite3.Row, query: str) -> Hit:
    text = row["text"]
    start, end = match_span(text, query)
    return Hit(
        session_id=row["session_id"],
        title=row["title"],
        index=row["first_idx"],
        message_id=row["message_id"],
        kind=row["kind"],
        at=row["at"],
        snippet=snippet(text, start, end),
        excerpt=excerpt(text, start, end),
        transcript=row["transcript_path"],
    )
