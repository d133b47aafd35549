"""The open sessions, and the one way an event enters one.

Updates from the agent are routed here by session id. An update may name a session whose
``session/new`` answer is still on its way: it is kept aside and recorded once the session
opens. What is kept aside is bounded per id and across ids (an agent may name a million
ids nobody opens); beyond that updates are dropped, with one log line per flood. Every
event recorded gets its session's next index, is journaled by the library, then handed
to the listener (which may read the journal: the event is there already).
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
        if session is None:
            self._keep_early(session_id, event)
            return
        self._arrived(session, event)

    def _arrived(self, session: Session, event: events.SessionEvent) -> None:
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

    def record(
        self,
        session: Session,
        event: events.SessionEvent,
        replay: bool = False,
        message_id: str | None = None,
    ) -> IndexedEvent:
        indexed = session.number(event, replay, message_id)
        self._library.observe(session.session_id, indexed)
        self._publish(indexed)
        return indexed

    def note(self, session: Session, severity: Severity, text: str) -> None:
        """Tell the user something about a session, in its event stream."""
        self.record(session, events.Note(severity, text))

    def note_for(self, session_id: str, severity: Severity, text: str) -> None:
        if session := self._sessions.get(session_id):
            self.note(session, severity, text)

    def note_all(self, severity: Severity, text: str) -> None:
        for session in self:
            self.note(session, severity, text)
