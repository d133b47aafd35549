"""What waits for the user's answer, by goose-ls's request id: the agent's permission
requests and its questions alike (one owner of each's waiting map).

An entry lives while its asker awaits the answer; it is "waiting" until answered. The
editor's side looks entries up by id (request ids are random, never reused), and, given a
session, only among that session's.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator
from typing import Generic, TypeVar

import attrs

Question = TypeVar("Question")
Answer = TypeVar("Answer")


@attrs.define
class Asked(Generic[Question, Answer]):
    session_id: str
    question: Question
    answer: asyncio.Future[Answer]


class Asking(Generic[Question, Answer]):
    """The questions of one kind waiting for the user."""

    def __init__(self) -> None:
        self._asked: dict[str, Asked[Question, Answer]] = {}

    @contextlib.contextmanager
    def ask(
        self, session_id: str, question: Question
    ) -> Iterator[tuple[str, Asked[Question, Answer]]]:
        """A new request id and its entry, kept while the asker awaits the answer."""
        request_id = uuid.uuid4().hex[:12]
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        asked = self._asked[request_id] = Asked(session_id, question, future)
        try:
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
