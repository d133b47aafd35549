"""A chat with the agent: its numbered events, its active turn and its waiting prompts.

Every event gets the next index of its session (strictly increasing, from 1), and the
``messageId`` of the turn it belongs to (the UUID the client chose; None outside a turn).
A client that saw up to index N asks for the events after N and never sees one twice.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

import attrs

from goose_ls.events import SessionEvent
from goose_ls.sessions.context import ContextItem


@attrs.frozen
class IndexedEvent:
    session_id: str
    index: int
    message_id: str | None
    event: SessionEvent


@attrs.define(eq=False)
class Turn:
    """One prompt and the agent's answer to it."""

    message_id: str
    prompt: str
    context: list[ContextItem]
    cancelled: bool = False
    sent: bool = False
    task: asyncio.Task[None] | None = None


class Session:
    def __init__(
        self,
        session_id: str,
        cwd: str,
        generation: int,
        publish: Callable[[IndexedEvent], None],
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.generation = generation
        """The agent generation that knows this session; a restarted agent must load it."""
        self.events: list[IndexedEvent] = []
        self.active: Turn | None = None
        self.waiting: deque[Turn] = deque()
        self.turn_lock = asyncio.Lock()
        self.replaying = False
        self.message_ids: set[str] = set()
        self._publish = publish

    @property
    def last_index(self) -> int:
        return self.events[-1].index if self.events else 0

    def record(self, event: SessionEvent) -> IndexedEvent:
        message_id = self.active.message_id if self.active else None
        indexed = IndexedEvent(self.session_id, self.last_index + 1, message_id, event)
        self.events.append(indexed)
        self._publish(indexed)
        return indexed

    def events_after(self, index: int) -> list[IndexedEvent]:
        """Events with an index above ``index``, oldest first."""
        start = max(0, index - self.events[0].index + 1) if self.events else 0
        return self.events[start:]
