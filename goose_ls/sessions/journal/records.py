"""The journal's rows as Python values: a chat's record, and its events as numbered rows."""

from __future__ import annotations

import datetime
import json
import logging
import time
from collections.abc import Iterable, Iterator
from typing import NamedTuple

import attrs

from goose_ls import events
from goose_ls.wire import WireError

log = logging.getLogger(__name__)

TITLE_LENGTH = 50
NEW_SESSION_TITLE = "New Session"


to_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""How the journal writes an event's payload: a payload read back is written the same
way, so it is the very text first written."""


_second: tuple[int, str] = (0, "")
"""The last second :func:`now` wrote out, and how."""


def now() -> str:
    """The time to the second, in UTC (written out once a second: a batch of events
    is journaled up to a hundred times a second)."""
    global _second
    second = int(time.time())
    if second != _second[0]:
        moment = datetime.datetime.fromtimestamp(second, datetime.timezone.utc)
        _second = (second, moment.isoformat(timespec="seconds"))
    return _second[1]


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
    parts: str | None = None
    """For a row that holds a run of text chunks (indices ``idx`` on, one per chunk),
    each chunk's length in characters, comma-separated; None for a row of one event."""


_CHUNK_HEAD = '{"type":"text","text":'
_string = json.encoder.encode_basestring
"""A JSON string, non-ASCII as it is (as :func:`to_json` writes it), in C."""


def chunk_payload(kind: str, text: str) -> str:
    """A text chunk's payload as :func:`to_json` writes it, made directly (once per token)."""
    return string_chunk_payload(kind, _string(text))


def json_string(text: str) -> str:
    """``text`` as a JSON string, as the journal writes it: made once for a chunk, which
    the editor is sent and the journal keeps."""
    return _string(text)


def string_chunk_payload(kind: str, string: str) -> str:
    """A text chunk's payload around its text already made a JSON string."""
    return f'{{"sessionUpdate":"{kind}","content":{_CHUNK_HEAD}{string}}}}}'


def run_row(
    session_id: str,
    first: int,
    message_id: str | None,
    kind: str,
    texts: list[str],
    at: str,
    replay: bool,
    strings: list[str] | None = None,
    single: str | None = None,
) -> EventRow:
    """One row for consecutive text chunks of one message (indices ``first`` on);
    ``strings``: each text as a JSON string already (escaping is per character, so the
    strings joined are the joined text's); ``single``: the payload of a run of one chunk,
    made already (the editor was sent it: a long chunk is not copied again)."""
    parts = ",".join([str(len(text)) for text in texts]) if len(texts) > 1 else None
    if strings is None:
        payload = chunk_payload(kind, "".join(texts))
    elif len(strings) == 1:
        payload = single if single is not None else string_chunk_payload(kind, strings[0])
    else:
        joined = '"' + "".join([string[1:-1] for string in strings]) + '"'
        payload = string_chunk_payload(kind, joined)
    return EventRow(session_id, first, message_id, kind, payload, at, int(replay), parts)


def expanded(rows: Iterable[EventRow], after: int = 0) -> Iterator[EventRow]:
    """The rows one event each, as they were sent, those above index ``after`` only: a
    run of text chunks is cut back into its chunks (see :attr:`EventRow.parts`)."""
    for row in rows:
        if row.parts is None:
            if row.idx > after:
                yield row
            continue
        try:
            text = json.loads(row.payload)["content"]["text"]
            lengths = [int(part) for part in row.parts.split(",")]
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("journal run %s of %s skipped: %s", row.idx, row.session_id, exc)
            continue
        start = 0
        for idx, length in enumerate(lengths, row.idx):
            chunk = text[start : start + length]
            start += length
            if idx > after:
                yield row._replace(idx=idx, payload=chunk_payload(row.kind, chunk), parts=None)


def events_of(
    rows: Iterable[EventRow],
) -> Iterator[tuple[EventRow, events.SessionEvent, str | None]]:
    """Each journaled row with its event, and the subagent it happened in (None: the
    session's own); a row this version cannot read (a newer kind, a damaged payload) is
    skipped with a log line: the rest still tells the chat."""
    for row in rows:
        try:
            data = json.loads(row.payload)
            yield row, events.event_from_wire(data), events.subagent_of(data)
        except (ValueError, WireError, AttributeError) as exc:
            log.warning("journal event %s of %s skipped: %s", row.idx, row.session_id, exc)
