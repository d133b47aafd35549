"""Events journaled as the registry journals them, for tests and benchmarks of the journal."""

from __future__ import annotations

from goose_ls import events
from goose_ls.sessions.library import SessionLibrary
from goose_ls.sessions.session import IndexedEvent


def journal_event(
    library: SessionLibrary,
    session_id: str,
    event: events.SessionEvent,
    index: int,
    message_id: str | None,
) -> None:
    """Journal ``event`` as the registry does once it has numbered it."""
    library.observe(session_id, IndexedEvent(session_id, index, message_id, event))
