"""Large tool outputs, kept once in the journal however often the agent repeats them.

A tool call's ``content`` replaces the previous one at each ``tool_call_update``, so a
command's 5 MB output is usually sent again with each change of status. Each content
text longer than :data:`BLOB_THRESHOLD` is kept once in ``blobs``, keyed by its SHA-256;
the event's payload holds ``{"sha256": ...}`` in its place and ``event_blobs`` says
which events hold which. Reading puts the texts back and writes the payload the way it
was first written (:data:`~goose_ls.sessions.journal.records.to_json`), so readers get the
very text ``goose/update`` carried.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from goose_ls.sessions.journal.records import EventRow, to_json

BLOB_THRESHOLD = 64 * 1024
"""Content texts longer than this (in characters) are kept once, by their SHA-256."""
TOOL_EVENTS = ("tool_call", "tool_call_update")
REFERENCE = "sha256"
"""The key of the object that stands for a text kept apart."""

Json = dict[str, Any]


class BlobRef(NamedTuple):
    """Event ``idx`` of ``session_id`` holds the text ``data`` (UTF-8) kept as ``sha256``."""

    session_id: str
    idx: int
    sha256: str
    data: bytes


def set_aside(update: Json) -> tuple[Json, dict[str, bytes]]:
    """``update`` with each large content text replaced by a reference (``update`` itself
    is left as it is: the session still shows it), and those texts by SHA-256."""
    texts: dict[str, bytes] = {}
    content = update.get("content")
    if update.get("sessionUpdate") not in TOOL_EVENTS or not isinstance(content, list):
        return update, texts
    copied = [_copy(item) for item in content]
    for holder, key in _text_fields(copied):
        text = holder[key]
        if isinstance(text, str) and len(text) > BLOB_THRESHOLD:
            data = text.encode("utf-8", "surrogatepass")
            digest = hashlib.sha256(data).hexdigest()
            texts[digest] = data
            holder[key] = {REFERENCE: digest}
    return ({**update, "content": copied} if texts else update), texts


def restore(payload: str, texts: Mapping[str, bytes]) -> str:
    """The payload as it was before :func:`set_aside`, its texts put back."""
    update = json.loads(payload)
    for holder, key in _text_fields(update.get("content") or []):
        reference = holder[key]
        if isinstance(reference, dict) and reference.get(REFERENCE) in texts:
            holder[key] = texts[reference[REFERENCE]].decode("utf-8", "surrogatepass")
    return to_json(update)


def _copy(item: Any) -> Any:
    """A tool content item, copied as deep as :func:`_text_fields` reaches."""
    if not isinstance(item, dict):
        return item
    inner = item.get("content")
    return {**item, "content": dict(inner)} if isinstance(inner, dict) else dict(item)


def _text_fields(content: list[Any]) -> Iterator[tuple[Json, str]]:
    """Where tool content holds text: a ``content`` item's text block, a diff's two sides."""
    for item in content:
        if not isinstance(item, dict):
            continue
        inner = item.get("content")
        if item.get("type") == "content" and isinstance(inner, dict):
            if inner.get("type") == "text" and "text" in inner:
                yield inner, "text"
        elif item.get("type") == "diff":
            yield from ((item, key) for key in ("oldText", "newText") if key in item)


# --- the tables -------------------------------------------------------------------------
def insert(db: sqlite3.Connection, refs: list[BlobRef]) -> None:
    """Keep each text once, and which event holds it (in the caller's transaction)."""
    kept = {ref.sha256: ref.data for ref in refs}
    db.executemany("INSERT OR IGNORE INTO blobs VALUES (?, ?)", kept.items())
    db.executemany(
        "INSERT OR IGNORE INTO event_blobs VALUES (?, ?, ?)",
        [(ref.session_id, ref.idx, ref.sha256) for ref in refs],
    )


def restored(db: sqlite3.Connection, rows: list[EventRow], after: int) -> list[EventRow]:
    """``rows`` (one session's, above index ``after``) with their texts put back."""
    if not rows:
        return rows
    found = db.execute(
        "SELECT r.idx, b.sha256, b.data FROM event_blobs r JOIN blobs b USING (sha256)"
        " WHERE r.session_id = ? AND r.idx > ?",
        (rows[0].session_id, after),
    ).fetchall()
    texts: dict[int, dict[str, bytes]] = {}
    for idx, digest, data in found:
        texts.setdefault(idx, {})[digest] = data
    return [
        row._replace(payload=restore(row.payload, texts[row.idx])) if row.idx in texts else row
        for row in rows
    ]


def drop_unused(db: sqlite3.Connection) -> None:
    """Forget the texts no event holds any more (in the caller's transaction)."""
    db.execute(
        "DELETE FROM blobs WHERE NOT EXISTS"
        " (SELECT 1 FROM event_blobs r WHERE r.sha256 = blobs.sha256)"
    )
