"""The open sessions, and the one way an event enters one.

Updates from the agent are routed here by session id. An update may name a session whose
``session/new`` answer is still on its way: it is kept aside and recorded once the session
opens. What is kept aside is bounded per id and across ids (an agent may name a million
ids nobody opens); beyond that updates are dropped, with one log line per flood. Every
event recorded gets its session's next index, is journaled by the library, then handed
to the listener (which may read the journal: the event is there already).

A subagent's updates (a child session, :mod:`.subagents`) enter its parent's session
here, tagged with the child; what names a child never announced on an open session is
kept aside like any unknown id, and never recorded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Literal

import attrs

from goose_ls import events
from goose_ls.errors import UnknownSession
from goose_ls.sessions.journal.library import SessionLibrary
from goose_ls.sessions.session import IndexedEvent, Session
from goose_ls.sessions.subagents import MAX_SUBAGENTS, Child, Subagents

log = logging.getLogger(__name__)

EARLY_EVENTS_LIMIT = 10_000
"""Updates kept for a session id the agent has not named yet (its ``session/new`` is pending)."""
EARLY_EVENTS_TOTAL = 20_000
"""Updates kept for all such ids together."""
EARLY_SESSIONS_LIMIT = 100
"""Session ids whose early updates are kept at once (a few ``session/new`` may be pending)."""

Severity = Literal["info", "warning", "error"]


class Registry:
    def __init__(self, library: SessionLibrary, publish: Callable[[IndexedEvent], None]) -> None:
        self._library = library
        self._publish = publish
        self._sessions: dict[str, Session] = {}
        self._early: dict[str, list[events.SessionEvent]] = {}
        self._early_count = 0
        self._dropping = False
        self.subagents = Subagents(self._full)
        """The announced children of the open sessions."""

    # --- lookup ------------------------------------------------------------------
    def get(self, session_id: str) -> Session:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise UnknownSession(session_id) from None

    def find(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions

    def __iter__(self) -> Iterator[Session]:
        """The open sessions (a copy: a loop may close one)."""
        return iter(list(self._sessions.values()))

    def ids(self) -> set[str]:
        return set(self._sessions)

    def route(self, session_id: str) -> tuple[str, str | None]:
        """Where a request naming ``session_id`` belongs: that session, or the open
        session an announced child of that id is shown in, and the child; any other id
        as it is (then no session has it, and the request is refused)."""
        if session_id in self._sessions:
            return session_id, None
        child = self.subagents.child(session_id)
        if child is None:
            return session_id, None
        return child.session_id, child.subagent_id

    # --- opening and closing -------------------------------------------------------
    def open(
        self,
        session_id: str,
        cwd: str,
        generation: int,
        first_index: int = 0,
        tab_id: str | None = None,
    ) -> Session:
        session = Session(session_id, cwd, generation, first_index, tab_id)
        self._sessions[session_id] = session
        # An id is a chat's or a child's: a child announced with it before ends here.
        child = self.subagents.release(session_id)
        if child is not None and (parent := self._sessions.get(child.session_id)):
            self.record(parent, child.state, subagent=child.subagent_id)
        return session

    def flush_early(self, session: Session) -> None:
        """Record what arrived for ``session`` before it opened."""
        for event in self._take_early(session.session_id):
            self._arrived(session, event)

    def drop_early(self, session_id: str) -> None:
        self._take_early(session_id)

    def remove(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
        self._take_early(session_id)
        self.subagents.forget(session_id)

    def _take_early(self, session_id: str) -> list[events.SessionEvent]:
        taken = self._early.pop(session_id, [])
        self._early_count -= len(taken)
        if not self._early:
            self._dropping = False  # a later flood is logged again
        return taken

    def _keep_early(self, session_id: str, event: events.SessionEvent) -> None:
        early = self._early.get(session_id)
        if (
            (early is None and len(self._early) >= EARLY_SESSIONS_LIMIT)
            or len(early or ()) >= EARLY_EVENTS_LIMIT
            or self._early_count >= EARLY_EVENTS_TOTAL
        ):
            self._drop_early_event(session_id)
        else:
            self._early.setdefault(session_id, []).append(event)
            self._early_count += 1

    def _drop_early_event(self, session_id: str) -> None:
        if not self._dropping:
            self._dropping = True
            log.warning(
                "dropping updates for sessions goose-ls does not know (first: %s); "
                "already keeping %d updates for %d such ids",
                session_id[:100],
                self._early_count,
                len(self._early),
            )

    # --- events ------------------------------------------------------------------
    def session_event(self, session_id: str, event: events.SessionEvent) -> None:
        """An update from the agent, in arrival order."""
        session = self._sessions.get(session_id)
        if session is not None:
            self._arrived(session, event)
        elif (child := self.subagents.child(session_id)) is not None:
            self._child_arrived(child, event)
        else:
            self._keep_early(session_id, event)

    def _arrived(self, session: Session, event: events.SessionEvent) -> None:
        if isinstance(event, (events.Subagent, events.SessionMessage)):
            self._about_children(session, event)
            return
        if isinstance(event, events.SessionInfo):
            if event.run_id is not None and session.active is not None:
                session.agent_run = event.run_id
            event = attrs.evolve(event, run_id=None)
            if event == events.SessionInfo():
                return  # said nothing but the run (goose marks each turn's start and end)
        if session.replaying:
            return  # history this session already holds, sent again by session/load
        if session.history is not None:  # loading: keep what the journal lacks
            kept = session.history.take(event)
            if kept is None:
                return
            event = kept
        self.record(session, event, replay=session.loading)

    def _child_arrived(self, child: Child, event: events.SessionEvent) -> None:
        """An update a subagent's own session sent: shown in its parent's session."""
        session = self._sessions[child.session_id]
        if isinstance(event, (events.Subagent, events.SessionMessage)):
            self._about_children(session, event)  # a nested subagent, shown beside it
        elif isinstance(event, events.IN_SUBAGENT):
            self._in_child(session, event, child.subagent_id)
        else:
            log.debug("not shown: %s of subagent %s", event.KIND, child.subagent_id[:100])

    def _about_children(
        self, session: Session, event: events.Subagent | events.SessionMessage
    ) -> None:
        """A child announced or changed, or a child's task: recorded in the session."""
        if isinstance(event, events.Subagent):
            state = self.subagents.announce(session.session_id, event, self._sessions)
            if state is not None:
                self._take_early(state.subagent_id)  # what it sent before: never shown
                self._in_child(session, state, state.subagent_id)
            return
        child_id = self.subagents.task(session.session_id, event)
        if child_id is not None:
            for block in event.content:
                self._in_child(session, events.UserMessageChunk(content=block), child_id)

    def _in_child(self, session: Session, event: events.SessionEvent, child_id: str) -> None:
        """Record a subagent's event in its session: not while a restarted agent replays
        the session (it holds it), nor while a journaled session loads (the journal holds
        its subagents; the agent's replay names them anew)."""
        if session.replaying or session.history is not None:
            return
        self.record(session, event, replay=session.loading, subagent=child_id)

    def _full(self, session_id: str) -> None:
        """The session's agent runs more subagents at once than goose-ls keeps."""
        self.note_for(
            session_id,
            "warning",
            f"The agent runs more than {MAX_SUBAGENTS} subagents at once: goose-ls does not "
            "show what the others do, and refuses what they ask.",
        )

    def end_subagents(self, session: Session, stop_reason: str | None) -> None:
        """The session's turn ends: its children still running end with it."""
        for state in self.subagents.ended(session.session_id, stop_reason):
            self.record(session, state, subagent=state.subagent_id)

    def child_asks(self, session: Session, child_id: str | None) -> None:
        """A child of the session asks the user (a card, a question): recorded at work if
        it said it was not."""
        state = self.subagents.asks(child_id) if child_id is not None else None
        if state is not None:
            self.record(session, state, subagent=child_id)

    def running_subagents(self, session: Session) -> list[Child]:
        """The session's children still at work."""
        return [c for c in self.subagents.of_session(session.session_id) if c.running]

    def record(
        self,
        session: Session,
        event: events.SessionEvent,
        replay: bool = False,
        message_id: str | None = None,
        subagent: str | None = None,
    ) -> IndexedEvent:
        """Number, journal and publish an event of ``session`` (``subagent``: of that
        child of it)."""
        indexed = session.number(event, replay, message_id, subagent)
        encoded = self._library.observe(session.session_id, indexed)
        if encoded is not None:
            indexed = attrs.evolve(indexed, encoded=encoded)
        self._publish(indexed)
        return indexed

    def note(
        self, session: Session, severity: Severity, text: str, subagent: str | None = None
    ) -> None:
        """Tell the user something about a session (or one of its children), in its
        event stream."""
        self.record(session, events.Note(severity, text), subagent=subagent)

    def note_for(self, session_id: str, severity: Severity, text: str) -> None:
        if session := self._sessions.get(session_id):
            self.note(session, severity, text)

    def note_all(self, severity: Severity, text: str) -> None:
        for session in self:
            self.note(session, severity, text)
