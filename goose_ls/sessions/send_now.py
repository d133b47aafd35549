"""Send now: a waiting prompt taken into the running turn, where the agent can take it.

A prompt sent while a turn runs waits its turn (see :mod:`.turns`). An agent that can
steer (see :mod:`goose_ls.agent.steering`) may take it into the running turn instead: the
user's message is recorded there, and it ends when that turn ends. While the agent
answers, the prompt stays in the queue, marked: if the running turn ends first, the
prompt runs as a turn of its own only when the agent did not take it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from goose_ls import events
from goose_ls.errors import AgentError, Refused
from goose_ls.sessions.context import to_blocks
from goose_ls.sessions.images import Images
from goose_ls.sessions.link import AgentLink
from goose_ls.sessions.registry import Registry
from goose_ls.sessions.session import Session, Turn
from goose_ls.tasks import Tasks

if TYPE_CHECKING:
    from goose_ls.agent.acp.connection import AgentConnection

log = logging.getLogger(__name__)


class Steering:
    def __init__(self, registry: Registry, link: AgentLink, tasks: Tasks, images: Images) -> None:
        self._registry = registry
        self._images = images
        self._link = link
        self._tasks = tasks

    def possible(self, session_id: str) -> bool:
        """Whether a waiting prompt of the session could be sent into its running turn."""
        session = self._registry.find(session_id)
        if session is None or not session.waiting:
            return False
        try:
            self._steerer(session)
        except Refused:
            return False
        return True

    def _steerer(self, session: Session) -> AgentConnection:
        """The agent that can take a message into the session's running turn; else
        :class:`Refused`, saying why."""
        if not _running(session):
            raise Refused("no turn is running: the waiting message is sent as it is")
        conn = self._link.running
        if conn is None or not conn.alive:
            raise Refused("the agent is not running")
        if not conn.can_steer(session.agent_run):
            raise Refused(
                f"{conn.profile.name} cannot take a message into a running turn; "
                "the message waits its turn"
            )
        return conn

    async def send_now(self, session_id: str, message_id: str | None = None) -> bool:
        """Send the waiting prompt ``message_id`` (the oldest, when None) into the running
        turn. True when the agent took it; False when that turn was over first (the
        prompt then runs next, as a turn of its own). Raises :class:`Refused` when there
        is nothing to send now, and :class:`AgentError` when the agent would not take it
        (the prompt keeps its place in the queue)."""
        session = self._registry.get(session_id)
        turn = next(
            (t for t in session.waiting if message_id in (None, t.message_id)),
            None,
        )
        if turn is None:
            raise Refused(
                f"messageId: no waiting message {message_id!r} in session {session_id!r}"
                if message_id
                else f"no message waits in session {session_id!r}"
            )
        conn = self._steerer(session)
        running = session.active
        assert running is not None  # _steerer checked it runs
        if turn.steering is not None:
            raise Refused(f"message {turn.message_id} is being sent already")
        if turn.images and not conn.profile.images:
            raise Refused(f"{conn.profile.title} does not take images; the message waits its turn")
        blocks = to_blocks(
            turn.prompt, turn.context, conn.profile.embedded_context, conn.agent_path, turn.images
        )
        steering = turn.steer()
        try:
            took = await conn.steer(session_id, blocks, session.agent_run)
        except BaseException:
            turn.not_steered()
            steering.set_result(False)
            raise
        steering.set_result(took)
        if took:
            self._joined(session, running, turn, blocks)
        else:
            turn.not_steered()  # still waiting: it may be sent now again later
        return took

    def send_soon(self, session_id: str, message_id: str) -> None:
        """Send a prompt now, in the background: what goes wrong is said in the chat
        (the prompt then waits its turn)."""
        self._tasks.run(self._send_soon(session_id, message_id), f"send {message_id} now")

    async def _send_soon(self, session_id: str, message_id: str) -> None:
        try:
            await self.send_now(session_id, message_id)
        except (Refused, AgentError) as exc:
            log.info("message %s waits its turn: %s", message_id, exc)
            self._registry.note_for(
                session_id, "info", f"Your message waits for the running turn to end: {exc}"
            )

    def _joined(
        self, session: Session, running: Turn, turn: Turn, blocks: list[dict[str, Any]]
    ) -> None:
        """The agent took ``turn``'s prompt into ``running``: record it there."""
        if turn in session.waiting:
            session.waiting.remove(turn)
        for block in self._images.recorded(session.session_id, turn, blocks):
            self._registry.record(
                session, events.UserMessageChunk(content=block), message_id=turn.message_id
            )
        turn.images = {}
        if turn.cancelled:  # cancelled while it was being sent: its end is recorded
            pass
        elif running.ended is None:
            running.join(turn.message_id)
        else:  # the turn ended while the agent answered
            self._registry.record(session, running.ended, message_id=turn.message_id)
        if turn.task is not None:
            turn.task.cancel()


def _running(session: Session) -> bool:
    """Whether the session's turn is at the agent (sent, and not being cancelled)."""
    active = session.active
    return active is not None and active.sent and not active.cancelled
