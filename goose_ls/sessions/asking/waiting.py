"""What waits for the user's answer, by goose-ls's request id: the agent's permission
requests and its questions alike (one owner of each's waiting map).

An entry lives while its asker awaits the answer; it is "waiting" until answered. The
editor's side looks entries up by id (request ids are random, never reused), and, given a
session, only among that session's. How many wait in a session, of every kind together,
is counted in one :class:`WaitingLimit`: past :data:`~goose_ls.prompt_limits.MAX_PENDING` a
new prompt is refused (:func:`over_cap`).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
import weakref
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Generic, TypeVar

import attrs

from goose_ls.agent.interface import ClientRefusal
from goose_ls.prompt_limits import MAX_PENDING

if TYPE_CHECKING:
    from goose_ls.sessions.registry import Registry
    from goose_ls.sessions.session import Session, Turn

Question = TypeVar("Question")
Answer = TypeVar("Answer")


@attrs.define
class Asked(Generic[Question, Answer]):
    session_id: str
    question: Question
    answer: asyncio.Future[Answer]


class WaitingLimit:
    """How many prompts wait for the user in each session, permission requests and
    questions together (one for the whole goose-ls, shared by every :class:`Asking`)."""

    def __init__(self) -> None:
        self._count: Counter[str] = Counter()
        self._told: weakref.WeakKeyDictionary[Turn, set[str]] = weakref.WeakKeyDictionary()
        """The caps the agent went past in each turn (the user is told once each)."""

    def first_time(self, turn: Turn, cap: str) -> bool:
        """Whether ``cap`` is one the agent goes past for the first time in ``turn``."""
        told = self._told.setdefault(turn, set())
        if cap in told:
            return False
        told.add(cap)
        return True

    def count(self, session_id: str) -> int:
        return self._count[session_id]

    def full(self, session_id: str) -> str | None:
        """Why one more prompt may not wait in the session (None: it may)."""
        if self._count[session_id] < MAX_PENDING:
            return None
        return (
            f"{MAX_PENDING} prompts already wait for the user in this session "
            f"(goose-ls's cap on prompts waiting at once, {MAX_PENDING})"
        )

    @contextlib.contextmanager
    def one(self, session_id: str) -> Iterator[None]:
        self._count[session_id] += 1
        try:
            yield
        finally:
            self._count[session_id] -= 1
            if not self._count[session_id]:
                del self._count[session_id]


def over_cap(
    registry: Registry, waiting: WaitingLimit, session: Session, cap: str, problem: str
) -> ClientRefusal:
    """The agent's error for a prompt past a cap (``problem`` says which); the user hears
    of it in the chat once a turn for each ``cap``."""
    turn = session.active
    if turn is not None and waiting.first_time(turn, cap):
        registry.note(
            session,
            "warning",
            f"goose-ls refused a prompt from the agent: {problem}. The agent was told; "
            "more of the same in this turn are refused without a note.",
        )
    return ClientRefusal(ClientRefusal.INVALID, f"goose-ls refused to ask the user: {problem}")


class Asking(Generic[Question, Answer]):
    """The questions of one kind waiting for the user."""

    def __init__(self, waiting: WaitingLimit | None = None) -> None:
        self._asked: dict[str, Asked[Question, Answer]] = {}
        self.waiting_count = waiting or WaitingLimit()
        """The prompts waiting per session, shared with the other kinds'."""

    @contextlib.contextmanager
    def ask(
        self, session_id: str, question: Question
    ) -> Iterator[tuple[str, Asked[Question, Answer]]]:
        """A new request id and its entry, kept while the asker awaits the answer."""
        request_id = uuid.uuid4().hex[:12]
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        asked = self._asked[request_id] = Asked(session_id, question, future)
        try:
            with self.waiting_count.one(session_id):
                yield request_id, asked
        finally:
            del self._asked[request_id]

    def waiting(
        self, request_id: str, session_id: str | None = None
    ) -> Asked[Question, Answer] | None:
        """The unanswered entry ``request_id`` (of ``session_id``, when given), or None."""
        asked = self._asked.get(request_id)
        if asked is None or asked.answer.done() or session_id not in (None, asked.session_id):
            return None
        return asked

    def pending_requests(self, session_id: str | None = None) -> list[str]:
        """Ids of the unanswered entries (of ``session_id``, when given), oldest first."""
        return [rid for rid in self._asked if self.waiting(rid, session_id) is not None]

    def answer_all(self, answer: Answer, session_id: str | None = None) -> None:
        """Answer every unanswered entry (of ``session_id``, when given) with ``answer``."""
        for request_id in self.pending_requests(session_id):
            self._asked[request_id].answer.set_result(answer)
