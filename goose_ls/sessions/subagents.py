"""The subagents of the open sessions: which session each child belongs to, and its state.

An agent that runs subagents (Claude's Agent tool) reports each as a child session, as
ACP's subagent sessions have it: a ``subagent_update`` on the parent announces the child,
then the child's own updates, permission requests and questions carry the child's id.
goose-ls shows all of it in the parent session, each event tagged with its child.

Every child id, title and description is the agent's choice, so a child is taken only
as announced, and only where it can reach nothing but its own parent:

- a child id is valid once a ``subagent_update`` on a session open here announced it
  (on the session itself, or on one of its children: a nested subagent), never before;
- it stays with the session that announced it first: announced again on another session,
  it is refused, as is the id of a session open here;
- a session holds at most :data:`MAX_SUBAGENTS` of them, for its life here.

What names an id that is not an announced child is treated as it was before subagents
existed: an update waits, bounded, for a session of that id to open; a permission
request or a question is answered ``cancelled``.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Collection

import attrs

from goose_ls import events

log = logging.getLogger(__name__)

MAX_SUBAGENTS = 500
"""Children one session may have announced, for as long as it is open here."""
TASKS_KEPT = 1000
"""Task messages remembered (by id, across sessions): the same task comes twice, as the
parent sent it and as the child received it, and its chunks name it."""
ENDED = "idle"
"""The state a child's block ends in (ACP's ``idle``)."""


@attrs.define
class Child:
    """One announced subagent."""

    subagent_id: str
    session_id: str
    """The open session it is shown in: its parent, or its parent's (a nested child)."""
    state: events.Subagent
    """Its whole state, as last recorded."""

    @property
    def running(self) -> bool:
        return self.state.state != ENDED


class Subagents:
    """The announced children of the open sessions."""

    def __init__(self) -> None:
        self._children: dict[str, Child] = {}
        self._tasks: OrderedDict[str, str] = OrderedDict()
        """Task messages seen, by message id: the child each was for."""
        self._full: set[str] = set()
        """Sessions told they have :data:`MAX_SUBAGENTS` children (logged once)."""

    def child(self, child_id: str) -> Child | None:
        """The announced child of that id, if any."""
        return self._children.get(child_id)

    def of_session(self, session_id: str) -> list[Child]:
        """The children shown in an open session, in the order they were announced."""
        return [c for c in self._children.values() if c.session_id == session_id]

    def announce(
        self, session_id: str, update: events.Subagent, open_ids: Collection[str]
    ) -> events.Subagent | None:
        """A ``subagent_update`` for session ``session_id``: the child's whole state to
        record, or None when it is refused, or says nothing new."""
        child_id = update.subagent_id
        known = self._children.get(child_id)
        if child_id in open_ids:
            log.warning("refused a subagent named as chat %s is", child_id[:100])
            return None
        if known is not None and known.session_id != session_id:
            log.warning(
                "refused subagent %s of %s: announced on %s first",
                child_id[:100],
                session_id,
                known.session_id,
            )
            return None
        if known is None and len(self.of_session(session_id)) >= MAX_SUBAGENTS:
            if session_id not in self._full:
                self._full.add(session_id)
                log.warning("refused subagents of %s past %d", session_id, MAX_SUBAGENTS)
            return None
        before = known.state if known is not None else events.Subagent(child_id)
        state = _merged(before, update)
        if known is None:
            self._children[child_id] = Child(child_id, session_id, state)
        elif state == known.state:
            return None
        else:
            known.state = state
        return state

    def ended(self, session_id: str, stop_reason: str | None) -> list[events.Subagent]:
        """The session's turn ended: each child still running, ended with it (its state
        to record)."""
        ended = []
        for child in self.of_session(session_id):
            if child.running:
                child.state = attrs.evolve(child.state, state=ENDED, stop_reason=stop_reason)
                ended.append(child.state)
        return ended

    def task(self, session_id: str, message: events.SessionMessage) -> str | None:
        """The child of ``session_id`` a message is the task of (its text to be shown as
        the child's first words), or None: a message from a child (its report, which the
        child's own words said), one for no child of this session, or the same task seen
        again from the child's side."""
        if message.append:
            child_id = self._tasks.get(message.message_id)
        else:
            recipient = message.recipient_session_id
            if recipient is None or message.message_id in self._tasks:
                return None
            child_id = recipient
            self._tasks[message.message_id] = recipient
            while len(self._tasks) > TASKS_KEPT:
                self._tasks.popitem(last=False)
        child = self._children.get(child_id) if child_id is not None else None
        return child_id if child is not None and child.session_id == session_id else None

    def forget(self, session_id: str) -> None:
        """The session closed, or is taken into a restarted agent: its children are no
        longer valid ids."""
        for child in self.of_session(session_id):
            del self._children[child.subagent_id]
        self._full.discard(session_id)


def _merged(before: events.Subagent, update: events.Subagent) -> events.Subagent:
    """The child's state with what the update says (a field left None is unchanged)."""
    if update.state is None:
        state, stop_reason = before.state or "running", before.stop_reason
    else:
        state, stop_reason = update.state, update.stop_reason
    cancellable = before.cancellable if update.cancellable is None else update.cancellable
    return events.Subagent(
        before.subagent_id,
        title=update.title or before.title,
        description=update.description or before.description,
        state=state,
        stop_reason=stop_reason if state == ENDED else None,
        cancellable=bool(cancellable),
    )
