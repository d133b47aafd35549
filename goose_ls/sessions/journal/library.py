"""The journal as the rest of goose-ls uses it: events batched in, history read back.

The library writes through the store (the journal, a SQLite database in the data dir):
every event, in batches; the session's record when something worth keeping changes (a
session is created or loaded, its title changes, a turn ends). Replays and transcripts
read the events back from here, so nothing of a session's history needs to stay in
memory. The batching of events (when a batch is written, runs of text as one row) belongs
with the records it keeps in step.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

import attrs

from goose_ls import events
from goose_ls.atomic_files import WriteFailed
from goose_ls.errors import Refused
from goose_ls.sessions.journal import blobs
from goose_ls.sessions.journal.blobs import BlobRef
from goose_ls.sessions.journal.records import (
    NEW_SESSION_TITLE,
    EventRow,
    SessionRecord,
    json_string,
    now,
    run_row,
    string_chunk_payload,
    title_from_prompt,
    to_json,
)
from goose_ls.sessions.journal.search import Hit
from goose_ls.sessions.journal.store import Notice, SessionStore
from goose_ls.sessions.journal.texts import SPEAKERS, Piece, piece_of_event
from goose_ls.sessions.session import IndexedEvent
from goose_ls.tasks import Tasks

log = logging.getLogger(__name__)

JOURNAL = "journal.sqlite3"
"""The session store in the data dir."""
BATCH_SECONDS = 0.05
"""Events are written together once the oldest has waited this long, on the wakeup the
next event's arrival makes anyway: a stream pays a transaction (about 0.2 to 0.4 ms, its
pages rewritten in the WAL) ten times a second at most, and no wakeup of its own."""
LINGER_SECONDS = 0.1
"""The longest an event waits when nothing follows it: the journal's only wakeup of its
own. Events the editor is sent do not wait for it: they are logged before the write to
the editor that carries them (:meth:`SessionLibrary.send_after`, :mod:`.spool`), so a
kill never loses what the user saw; a turn's end is written at once."""
COMMIT_SECONDS = 0.5
"""How long logged events wait for their commit to the journal, at most: a kill loses none
of them, so it only decides how often a commit is paid for (about 0.3 ms of CPU after a
pause, in the writer thread) and how late another window reading the journal sees them."""
LOG_BYTES = 1 << 20
"""Logged events are committed at once when their records weigh this much."""
EventFields = tuple[str, int, "str | None", str, str, bool]
"""An event's row as it waits for its batch: all but its time (``EventRow``'s order)."""
BACKLOG_LIMIT = 200_000
"""Events kept while the journal cannot be written (about 100 MB at most); older ones
beyond it are given up, and the log says how many."""
RUN_LIMIT = 1000
"""Text chunks joined in one row at most (a backlog held by a full disk can be long)."""
INDEX_BLOCK = 1000
"""Indices reserved in the journal at a time (see ``SessionRecord.reserved_index``)."""
INLINE_CHARS = 16_384
"""A batch this small, with what the editor is sent with it, is logged on the event loop
(one write, about 15 µs; see :mod:`.spool`), and committed with the others logged
:data:`COMMIT_SECONDS` later. A larger one (a burst of chunks, a long chunk) goes to the
writer thread, which commits it and then makes the write to the editor, and the loop reads
on meanwhile."""


@attrs.define
class _Run:
    """Consecutive text chunks of one message, waiting for their batch: one row."""

    session_id: str
    first: int
    message_id: str | None
    kind: str
    replay: bool
    texts: list[str] = attrs.Factory(list)
    strings: list[str] = attrs.Factory(list)
    """Each text as a JSON string, as the editor was sent it."""
    single: str | None = None
    """The payload of the run's first chunk, as the editor was sent it."""

    def row(self, at: str) -> EventRow:
        return run_row(
            self.session_id,
            self.first,
            self.message_id,
            self.kind,
            self.texts,
            at,
            self.replay,
            self.strings,
            self.single,
        )

    def piece(self) -> Piece | None:
        text = "".join(self.texts)
        return Piece(SPEAKERS[self.kind], text) if text else None


_Waiting = list["tuple[EventFields, Piece | None] | _Run"]
"""Events waiting for their batch: their row (time aside) and the text each adds to its
message, or a run of text chunks."""
_Batch = tuple[_Waiting, list[BlobRef], list[EventRow], list["Piece | None"]]
"""Events taken for a write: as they waited, their large texts, their rows, their text."""


class SessionLibrary:
    def __init__(
        self,
        folder: Path,
        write_failed: WriteFailed,
        tasks: Tasks | None = None,
        notice: Notice | None = None,
    ) -> None:
        """``tasks`` run the journal's checkpoint when a turn ends (without them, SQLite's
        own safety net does, inside a commit); ``notice`` tells the user of a journal lost
        or back while running."""
        self.store = SessionStore(folder / JOURNAL, write_failed, notice)
        self.store.load()
        self.store.fold_logs()  # what windows killed meanwhile only logged
        self._tasks = tasks
        self._checkpoint: asyncio.Task[None] | None = None
        self._pending: _Waiting = []
        """Events to journal: their row (time aside) and the text each adds to its message,
        or a run of text chunks."""
        self._runs: dict[str, _Run] = {}
        """Per session, the run of text chunks its next chunk may join."""
        self._pending_blobs: list[BlobRef] = []
        self._batch: asyncio.Handle | None = None
        """The write of the waiting events, once scheduled: a timer, or at the end of
        this loop turn."""
        self._batch_since = 0.0
        """When the oldest waiting event came (the event loop's clock)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._failing = False
        """The last write failed (a full disk): the next try waits for the batch's timer
        rather than being made before every write to the editor."""
        self._pending_chars = 0
        """About how much the waiting events weigh (their text and JSON)."""
        self._commit: asyncio.Handle | None = None
        """The commit of the logged events, once scheduled."""

    @property
    def problem(self) -> str | None:
        return self.store.problem

    def record(self, session_id: str) -> SessionRecord | None:
        return self.store.get(session_id)

    def created(self, session_id: str, cwd: str, agent: str) -> SessionRecord:
        """A session was created or loaded (``agent``: the name the agent that holds it
        gives itself, which its messages are headed with)."""
        record = self.store.get(session_id) or SessionRecord(session_id, cwd, agent=agent)
        self.store.put(record)
        return record

    def observe(self, session_id: str, indexed: IndexedEvent) -> str | None:
        """Journal the event, and keep what it says about the session (titles, the last
        index). Returns the event's ``goose/update`` payload as JSON text when the
        journal keeps it whole, or a text chunk whose JSON string the journal keeps (no
        text set aside): the editor is sent the same text, encoded once."""
        event, index, subagent = indexed.event, indexed.index, indexed.subagent
        text = _plain_text(event) if subagent is None else None
        encoded = None
        if text is not None:  # once per token: joins the run of its message
            string = json_string(text)  # the editor is sent the text the journal keeps
            encoded = string_chunk_payload(event.KIND, string)
            self._keep_text(indexed, text, string, encoded)
        else:
            self._runs.pop(session_id, None)
            payload, texts = _payload(event, subagent)
            self._pending_blobs += [BlobRef(session_id, index, *t) for t in texts.items()]
            row = (session_id, index, indexed.message_id, event.KIND, payload, indexed.replay)
            self._pending_chars += len(payload)
            self._keep(row, piece_of_event(event, subagent))
            encoded = None if texts else payload
        self._note(session_id, indexed)
        return encoded

    def _note(self, session_id: str, indexed: IndexedEvent) -> None:
        """What the event says about its session: the last index, a title, a turn's end."""
        event, index, subagent = indexed.event, indexed.index, indexed.subagent
        record = self.store.get(session_id)
        if record is None:
            return
        record.last_index = index  # saved with the next write (a turn's end at the latest)
        if index > record.reserved_index:  # one write per INDEX_BLOCK events
            record.reserved_index = index + INDEX_BLOCK
            self.store.put(record)
        if isinstance(event, events.SessionInfo) and event.title and event.title != record.title:
            record.title, record.title_from_agent = event.title, True
            self.store.put(record)
        elif (
            isinstance(event, events.UserMessageChunk)
            and subagent is None
            and record.title == NEW_SESSION_TITLE
            and not record.title_from_agent
            and event.content.get("type") == "text"
        ):
            record.title = title_from_prompt(str(event.content.get("text", "")))
            self.store.put(record)
        elif isinstance(event, events.TurnEnded):
            self.store.look(retry_now=True)  # a stand-in's chats, into the journal if it is back
            self.store.put(record)
            self.write_events()  # before the editor hears of it: a whole turn survives a kill
            self._checkpoint_soon()

    def _checkpoint_soon(self) -> None:
        """Checkpoint the journal in a thread, the stream it waited for being over."""
        if self._tasks is None or (self._checkpoint and not self._checkpoint.done()):
            return
        self._checkpoint = self._tasks.run(
            asyncio.to_thread(self.store.checkpoint), "journal checkpoint"
        )

    def hold(self, session_id: str) -> None:
        """Open ``session_id`` here; refused while another goose-ls has it open."""
        if (holder := self.store.hold(session_id)) is not None:
            pid = holder.split(":")[1]
            raise Refused(
                f"session {session_id} is open in another goose-ls window (process {pid})",
                "Close it there first (goose/closeSession), or work in that window",
            )

    def release(self, *session_ids: str) -> None:
        self.store.release(list(session_ids))

    def _keep(self, row: EventFields, piece: Piece | None) -> None:
        """Events are written in batches (see :data:`BATCH_SECONDS`,
        :data:`LINGER_SECONDS`), a run of text chunks one row."""
        self._pending.append((row, piece))
        self._write_soon()

    def _keep_text(self, indexed: IndexedEvent, text: str, string: str, payload: str) -> None:
        """A text chunk goes on the run its message's last chunk started, if it directly
        follows it in the batch: one row for a run (see ``EventRow.parts``); ``payload``:
        its ``goose/update`` payload, kept as the row's while the run has no other."""
        run = self._runs.get(indexed.session_id)
        kind = indexed.event.KIND
        if (
            run is None
            or run.first + len(run.texts) != indexed.index
            or (run.kind, run.message_id, run.replay) != (kind, indexed.message_id, indexed.replay)
            or len(run.texts) >= RUN_LIMIT
        ):
            run = _Run(indexed.session_id, indexed.index, indexed.message_id, kind, indexed.replay)
            run.single = payload
            self._runs[indexed.session_id] = run
            self._pending.append(run)
        run.texts.append(text)
        run.strings.append(string)
        self._pending_chars += len(text)
        self._write_soon()

    def _running_loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop this runs on, None when none runs (goose-ls stopping). Kept
        while it runs: asking Python for it costs a system call, and this is asked once a
        chunk."""
        if self._loop is not None and self._loop.is_running():
            return self._loop
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        return self._loop

    def _write_soon(self) -> None:
        loop = self._running_loop()
        if loop is None:  # goose-ls stopping: now
            self.write_events()
            return
        if self._batch is None:
            self._batch_since = loop.time()
            self._batch = loop.call_later(LINGER_SECONDS, self._write_behind)
        elif (
            isinstance(self._batch, asyncio.TimerHandle)
            and loop.time() - self._batch_since >= BATCH_SECONDS
        ):  # after the rest of what this wakeup brought
            self._batch.cancel()
            self._batch = loop.call_soon(self._write_behind)

    def _write_behind(self) -> None:
        """The batch's time came with nothing sent to the editor: written in the thread
        (or here, trying again after a failed write)."""
        if self._failing:
            self.write_events()
        else:
            self.send_after(None, 0)

    def send_after(self, send: Callable[[], None] | None, size: int) -> bool:
        """The editor is about to be sent ``size`` bytes (by ``send``): the waiting events
        are logged first (or written, when they cannot be, or are large), so that nothing
        the editor is sent is missing from the journal after a kill. True when the writer
        thread took ``send`` too (it calls it once the events are written, or once the
        writes to the editor it holds are made); False when the caller sends now (the
        events, if any, are logged or written already, or could not be)."""
        loop = self._running_loop()
        if loop is None:  # goose-ls stopping: everything now, in order
            self.write_events()
            return False
        if not self._pending or self._failing:
            return send is not None and self.store.after_writes(send)
        if self._pending_chars + size <= INLINE_CHARS:
            taken = self._take()
            assert taken is not None
            pending, refs, rows, pieces = taken
            if self.store.log(rows, pieces, refs):
                self._commit_soon(loop)
                return send is not None and self.store.after_writes(send)
            self._put_back(pending, refs)  # as without a log: written before the write
            if not self.store.writing:
                self.write_events()
                return False
        taken = self._take()
        assert taken is not None
        pending, refs, rows, pieces = taken

        def failed() -> None:
            self._failing = True
            self._put_back(pending, refs)
            self._write_soon()

        if self.store.append_later(rows, pieces, refs, send, failed):
            return send is not None
        self._failing = not self.store.append(rows, pieces, refs)  # a stand-in: here
        if self._failing:
            self._put_back(pending, refs)
        return False

    def _commit_soon(self, loop: asyncio.AbstractEventLoop) -> None:
        """Commit the logged events :data:`COMMIT_SECONDS` after the first of them (one
        wakeup for them all), or at once when they weigh :data:`LOG_BYTES`."""
        if self._commit is None:
            self._commit = loop.call_later(COMMIT_SECONDS, self._commit_logged)
        elif self.store.logged_bytes >= LOG_BYTES:
            self._commit_logged()

    def _commit_logged(self) -> None:
        if self._commit is not None:
            self._commit.cancel()
            self._commit = None
        if not self.store.commit_logged():  # one is under way: the next after it
            loop = self._running_loop()
            if loop is not None:
                self._commit_soon(loop)

    def write_events(self) -> None:
        """Write the waiting events now, on this thread (after those the writer thread
        has); a batch that cannot be written (a full disk) waits for the next, so the
        journal catches up once there is room again."""
        taken = self._take()
        if taken is None:
            self.store.settle()
            return
        pending, refs, rows, pieces = taken
        self._failing = not self.store.append(rows, pieces, refs)
        if self._failing:
            self._put_back(pending, refs)

    def _take(self) -> _Batch | None:
        """The waiting events, taken for a write: their rows, and the text each adds."""
        if self._batch is not None:
            self._batch.cancel()
            self._batch = None
        pending, self._pending = self._pending, []
        refs, self._pending_blobs = self._pending_blobs, []
        self._runs.clear()  # the next chunk starts a row of its own
        self._pending_chars = 0
        if not pending:
            return None
        at = now()  # one time for the batch: its events came within milliseconds
        rows: list[EventRow] = []
        pieces: list[Piece | None] = []
        for entry in pending:
            if isinstance(entry, _Run):
                rows.append(entry.row(at))
                pieces.append(entry.piece())
            else:
                row, piece = entry
                rows.append(EventRow(*row[:5], at, row[5]))
                pieces.append(piece)
        return pending, refs, rows, pieces

    def _put_back(self, pending: _Waiting, refs: list[BlobRef]) -> None:
        """A batch that could not be written waits for the next one."""
        if len(pending) > BACKLOG_LIMIT:
            log.error("the journal lost %d events it could not write", len(pending) - BACKLOG_LIMIT)
            pending = pending[-BACKLOG_LIMIT:]
        self._pending = pending + self._pending
        self._pending_blobs = refs + self._pending_blobs

    def history(self, session_id: str, after: int = 0) -> list[EventRow]:
        """The session's journaled events above ``after``, oldest first (those still
        waiting for their batch included)."""
        self.write_events()
        return self.store.events(session_id, after)

    def flush(self) -> None:
        """Save what is only in memory (the last indices, events not yet written): every
        index handed out is saved now, so the next run needs no reservation above them."""
        self.write_events()
        self.store.write_texts()
        self.store.save(release=True)

    def first_index(self, session_id: str) -> int:
        """Where a session loaded again goes on numbering: above every index handed out."""
        record = self.store.get(session_id)
        return max(record.last_index, record.reserved_index) if record else 0

    def search(self, query: str, limit: int) -> list[Hit]:
        """Past messages holding ``query``, newest first; the latest chats for no query.
        Events still waiting for their batch are written first, so they are found."""
        self.write_events()
        return self.store.search(query, limit)

    def used(self, workspace: str, session_id: str) -> None:
        self.store.set_last_active(workspace, session_id)

    def last_used(self, workspace: str) -> str | None:
        return self.store.last_active(workspace)

    def set_transcript(self, session_id: str, path: str) -> None:
        record = self.store.get(session_id)
        if record is not None and record.transcript_path != path:
            record.transcript_path = path
            self.store.put(record)

    def rename(self, session_id: str, title: str) -> None:
        record = self.store.get(session_id)
        if record is None:
            raise KeyError(session_id)
        record.title = title.strip() or NEW_SESSION_TITLE
        record.title_from_agent = False
        self.store.put(record)

    def forget(self, session_id: str) -> SessionRecord | None:
        return self.store.remove(session_id)


def _plain_text(event: events.SessionEvent) -> str | None:
    """The text of a chunk that is only text (most events: one per token), else None."""
    if isinstance(event, events.CHUNKS) and event.message_id is None:
        content = event.content
        if len(content) == 2 and content.get("type") == "text":
            text = content.get("text")
            return text if isinstance(text, str) else None
    return None


def _payload(event: events.SessionEvent, subagent: str | None) -> tuple[str, dict[str, bytes]]:
    """The event as ``goose/update`` carries it (``subagent``: tagged with that child), as
    JSON text, its large tool outputs set aside (:mod:`~goose_ls.sessions.journal.blobs`);
    the session's own plain text chunks go the direct way, in
    :meth:`SessionLibrary.observe`."""
    update, texts = blobs.set_aside(events.event_to_wire(event, subagent))
    return to_json(update), texts
