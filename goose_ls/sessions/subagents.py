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
  it is refused, as is the id of a session open here; a session that opens here later
  with a child's id ends that child (an id is a chat's or a child's, never both: the
  parent's cancel must not reach the chat, nor the chat's traffic the parent);
- a session holds at most :data:`MAX_SUBAGENTS` of them at work: an ended one is
  forgotten to make room for a new one; past that, the user is told that what the others
  do is not shown (their requests are refused).

What names an id that is not an announced child is treated as it was before subagents
existed: an update waits, bounded, for a session of that id to open; a permission
request or a question is answered ``cancelled``.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Collection

import attrs

from goose_ls import events

log = logging.getLogger(__name__)

MAX_SUBAGENTS = 500
"""Children one session may have at once (its ended ones are forgotten, the oldest first,
to make room for more)."""
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

    def __init__(self, on_full: Callable[[str], None] = lambda _: None) -> None:
        """``on_full``: told (once per session) of a child refused because the session
        has :data:`MAX_SUBAGENTS` at work."""
        self._on_full = on_full
        self._children: dict[str, Child] = {}
        self._tasks: OrderedDict[str, str] = OrderedDict()
        """Task messages seen, by message id: the child each was for."""
        self._full: set[str] = set()
        """Sessions that had :data:`MAX_SUBAGENTS` children at work (said once)."""
        self._refused: set[str] = set()
        """Ids whose announcement was refused and logged: a flood of them is one line
        each, not one a message (each names a child or a session, so they are few)."""

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
            self._refuse(child_id, "refused a subagent named as chat %s is", child_id[:100])
            return None
        if known is not None and known.session_id != session_id:
            self._refuse(
                child_id,
                "refused subagent %s of %s: announced on %s first",
                child_id[:100],
                session_id,
                known.session_id,
            )
            return None
        if known is None and not self._room(session_id):
            if session_id not in self._full:
                self._full.add(session_id)
                log.warning("refused subagents of %s past %d", session_id, MAX_SUBAGENTS)
                self._on_full(session_id)
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

    def _room(self, session_id: str) -> bool:
        """Whether the session may have one more child: under the cap, or once the oldest
        of its ended children is forgotten (an ended child that works again says so
        first, and is announced anew)."""
        children = self.of_session(session_id)
        if len(children) < MAX_SUBAGENTS:
            return True
        ended = next((c for c in children if not c.running), None)
        if ended is None:
            return False
        del self._children[ended.subagent_id]
        return True

    def _refuse(self, child_id: str, message: str, *args: object) -> None:
        """Log a refused announcement: a warning once per id, then at debug level."""
        if child_id in self._refused:
            log.debug(message, *args)
            return
        self._refused.add(child_id)
        log.warning(message, *args)

    def asks(self, child_id: str) -> events.Subagent | None:
        """The child puts a card or a question to the user: it is at work, whatever it
        said last (an idle child's heading would say it is done, and the user's cancel
        would pass it by). Its state to record, when that changed it."""
        child = self._children.get(child_id)
        if child is None or child.running:
            return None
        child.state = attrs.evolve(child.state, state="running", stop_reason=None)
        return child.state

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

    def release(self, child_id: str) -> Child | None:
        """A session of ``child_id`` opened here: the child of that id is no more. The
        child, ended, when it was still at work (its state to record in its session)."""
        child = self._children.pop(child_id, None)
        if child is None:
            return None
        log.warning(
            "subagent %s of %s ended: a chat opened with its id", child_id[:100], child.session_id
        )
        if not child.running:
            return None
        child.state = attrs.evolve(child.state, state=ENDED, stop_reason=None)
        return child

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
