"""What the journal keeps: a session's record and its events, as goose-ls handles them."""

from __future__ import annotations

import datetime
import json
import logging
from collections.abc import Iterable, Iterator
from typing import NamedTuple

import attrs

from goose_ls import events
from goose_ls.wire import WireError

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
"""Of the ``sessions.json`` earlier versions wrote (read once, to import it)."""
TITLE_LENGTH = 50
NEW_SESSION_TITLE = "New Session"


to_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""How the journal writes an event's payload: a payload read back is written the same
way, so it is the very text first written."""


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def title_from_prompt(text: str) -> str:
    """The first user message as a title: 50 characters, cut at a word boundary."""
    words = " ".join(text.split())
    if not words:
        return NEW_SESSION_TITLE
    if len(words) <= TITLE_LENGTH:
        return words
    cut = words[:TITLE_LENGTH]
    if " " in cut and words[TITLE_LENGTH] != " ":
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip() + "..."


@attrs.define
class SessionRecord:
    session_id: str
    cwd: str
    title: str = NEW_SESSION_TITLE
    title_from_agent: bool = False
    created_at: str = attrs.Factory(now)
    updated_at: str = attrs.Factory(now)
    agent: str = ""
    transcript_path: str = ""
    last_index: int = 0
    reserved_index: int = 0
    """Indices up to this one may have been handed out: a run killed before it saved
    ``last_index`` goes on above it, so no index is ever used twice."""


@attrs.define
class StoreData:
    """``sessions.json`` as earlier versions wrote it (read once, to import it)."""

    schema_version: int = SCHEMA_VERSION
    sessions: list[SessionRecord] = attrs.Factory(list)
    last_active: dict[str, str] = attrs.Factory(dict)
    """Workspace folder -> the session last used there."""


class EventRow(NamedTuple):
    """One event as the journal keeps it."""

    session_id: str
    idx: int
    message_id: str | None
    kind: str
    """Its ``sessionUpdate`` (``agent_message_chunk``, ``tool_call``, ``turn_end``...)."""
    payload: str
    """The event as JSON, as ``goose/update`` carries it."""
    at: str
    replay: int = 0
    """1 for history the agent replayed when goose-ls first loaded the session."""


def events_of(rows: Iterable[EventRow]) -> Iterator[tuple[EventRow, events.SessionEvent]]:
    """Each journaled row with its event; a row this version cannot read (a newer kind,
    a damaged payload) is skipped with a log line: the rest still tells the chat."""
    for row in rows:
        try:
            yield row, events.event_from_wire(json.loads(row.payload))
        except (ValueError, WireError) as exc:
            log.warning("journal event %s of %s skipped: %s", row.idx, row.session_id, exc)
