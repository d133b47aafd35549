"""Turns: a prompt accepted at once, run in the background, one at a time per session.

The agent takes one prompt per session, so later prompts wait in order. A cancelled
turn is reported as cancelled whatever the agent answers, its waiting questions to the
user (permission requests, elicitations) are answered ``cancelled``, its subagents at
work are cancelled with it (those the agent lets goose-ls cancel, each by its own
``session/cancel``), and if the agent does not end it within
``agent.cancelTimeout`` goose-ls ends it itself. A turn that hears nothing from the
agent for ``agent.stallTimeout`` seconds gets a note offering cancel and restart. Before
an agent that reads the disk answers, a note names the open files it cannot see the
unsaved changes of (:mod:`.unsaved`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from goose_ls import events, heap
from goose_ls.errors import AgentBusy, AgentError, Refused
from goose_ls.sessions.checkpoints import TurnCheckpoints
from goose_ls.sessions.context import ContextItem, PromptImage, to_blocks
from goose_ls.sessions.images import Images
from goose_ls.sessions.journal.library import SessionLibrary
from goose_ls.sessions.link import AgentLink
from goose_ls.sessions.live import LiveBuffers
from goose_ls.sessions.planted_watch import PlantedPaths
from goose_ls.sessions.registry import Registry
from goose_ls.sessions.session import Session, Turn
from goose_ls.sessions.unsaved import UnsavedFiles
from goose_ls.settings import AgentSettings
from goose_ls.tasks import Tasks

if TYPE_CHECKING:
    from goose_ls.agent.acp.connection import AgentConnection

log = logging.getLogger(__name__)

STALL_CHECK_EVERY = 5.0
"""Seconds between two looks at a running turn's silence (at most)."""
BUSY_NOTE = "This chat is busy in another window; your message waits."
STILL_RUNNING_NOTE = "The agent is still busy with the turn ended earlier; your message waits."
BUSY_RETRY_FIRST = 0.25
BUSY_RETRY_MAX = 4.0
"""Seconds between two tries of a prompt the agent refused because the chat's turn runs
for another window: doubling from the first to the most (it tells no one when that
turn ends)."""


def no_images(agent: str) -> str:
    """Why a prompt with an image is not sent to ``agent``."""
    return (
        f"{agent} does not take images (it advertises no promptCapabilities.image): "
        "the message was not sent. Take the image out, or use an agent that takes images"
    )


class WaitingOnUser(Protocol):
    """What waits on the user during a turn, answered ``cancel`` when the turn ends."""

    def cancel(self, session_id: str | None = None) -> None: ...


class Turns:
    def __init__(
        self,
        registry: Registry,
        link: AgentLink,
        questions: Sequence[WaitingOnUser],
        library: SessionLibrary,
        planted: PlantedPaths,
        checkpoints: TurnCheckpoints,
        live: LiveBuffers,
        tasks: Tasks,
        settings: Callable[[], AgentSettings],
        cwd: str,
        unsaved: UnsavedFiles,
        images: Images,
    ) -> None:
        self._registry = registry
        self._images = images
        self._unsaved = unsaved
        self._link = link
        self._questions = questions
        self._library = library
        self._planted = planted
        self._checkpoints = checkpoints
        self._live = live
        self._tasks = tasks
        self._settings = settings
        self._cwd = cwd

    def prompt(
        self,
        session_id: str,
        message_id: str,
        prompt: str,
        context: list[ContextItem],
        images: dict[str, PromptImage] | None = None,
    ) -> Turn:
        """Accept a turn and run it in the background; returns at once. ``images``: the
        bytes of its image items, read and checked (:meth:`Images.read`)."""
        session = self._registry.get(session_id)
        if session.forgotten is not None:
            raise Refused(session.forgotten, "Start a new chat (goose/newSession)")
        if message_id in session.message_ids:
            raise Refused(f"messageId: {message_id} was already used in this session")
        if not prompt.strip() and not context:
            raise Refused("prompt: empty, and there is no context either")
        session.message_ids.add(message_id)
        self._library.used(self._cwd, session_id)
        if missing := [i.uri for i in context if i.type == "image" and i.uri not in (images or {})]:
            raise Refused(f"context: the image {missing[0]} was not read")
        turn = Turn(message_id=message_id, prompt=prompt, context=context, images=images or {})
        session.waiting.append(turn)
        turn.task = self._tasks.run(self._run(session, turn), f"turn {message_id}")
        return turn

    async def _run(self, session: Session, turn: Turn) -> None:
        try:
            await session.turn_lock.acquire()
        except asyncio.CancelledError:  # cancelled while it waited its turn
            if not turn.steered:  # one taken into the running turn ends with that turn
                session.waiting.remove(turn)
                self._registry.record(
                    session, events.TurnEnded(stop_reason="cancelled"), message_id=turn.message_id
                )
            raise
        try:
            # Being sent into the turn that just ended: if the agent took it, it is done.
            if turn.steering is None or not await asyncio.shield(turn.steering):
                await self._take(session, turn)
        finally:
            session.turn_lock.release()

    async def _take(self, session: Session, turn: Turn) -> None:
        session.waiting.remove(turn)
        session.active = turn
        turn.start()
        end = events.TurnEnded(stop_reason="cancelled")
        try:
            await self._live.turn_started()
            if not turn.cancelled:
                end = await self._send(session, turn)
            await self._planted.finish(session, turn)
            await self._checkpoints.end(session.session_id, turn.message_id)
        except asyncio.CancelledError:
            end = events.TurnEnded(stop_reason="cancelled")
            raise
        finally:
            # Stop what holds the session, so that a closed one can go.
            for handle in (turn.watchdog, turn.cancel_deadline):
                if handle is not None:
                    handle.cancel()
            self._cancel_questions(session.session_id)
            self._planted.after(session, turn)
            self._checkpoints.end_later(session.session_id, turn.message_id)
            self._live.turn_ended()
            turn.end(end)
            # Its subagents' blocks end with it (one still at work shows again if it speaks).
            stopped = "cancelled" if end.stop_reason == "cancelled" else None
            self._registry.end_subagents(session, stopped)
            self._registry.record(session, end)
            for message_id in turn.joined:  # the messages steered into it end with it
                self._registry.record(session, end, message_id=message_id)
            session.active = None
            session.agent_run = None
            heap.give_back()  # what a long reply used, freed, goes back to the system

    async def _send(self, session: Session, turn: Turn) -> events.TurnEnded:
        recorded = False
        try:
            conn = await self._link.attach(session)
            if turn.images and not conn.profile.images:
                self._keep_unsent(session, turn)
                return events.TurnEnded(error=no_images(conn.profile.title))
            embedded = conn.profile.embedded_context
            blocks = to_blocks(turn.prompt, turn.context, embedded, conn.agent_path, turn.images)
            self._record_prompt(session, turn, blocks)
            recorded = True
            if not conn.reads_buffers:
                await self._tell_unsaved(session, turn)
            await self._planted.before(session)
            await self._checkpoints.begin(session.session_id, turn.message_id)
            self._watch(session, turn)
            stop, used = await self._prompt(session, turn, conn, blocks)
        except AgentError as exc:
            if not recorded:  # the agent could not be reached: what the user wrote stays
                self._keep_unsent(session, turn)
            if turn.cancelled:
                return events.TurnEnded(stop_reason="cancelled")
            return events.TurnEnded(error=str(exc))
        # goose may answer end_turn for a cancelled turn: trust what we sent, not that.
        return events.TurnEnded(stop_reason="cancelled" if turn.cancelled else stop, usage=used)

    def _record_prompt(self, session: Session, turn: Turn, blocks: list[dict[str, Any]]) -> None:
        """The user's message, into the chat and the journal (images as links to copies)."""
        for block in self._images.recorded(session.session_id, turn, blocks):
            self._registry.record(session, events.UserMessageChunk(content=block))
        turn.images = {}  # in the blocks now

    def _keep_unsent(self, session: Session, turn: Turn) -> None:
        """A message that never reached the agent is still recorded as the user's, above
        the note that says why: nothing else holds it (the prompt section was cleared)."""
        blocks = to_blocks(turn.prompt, turn.context, True, str, turn.images)
        self._record_prompt(session, turn, blocks)

    async def _tell_unsaved(self, session: Session, turn: Turn) -> None:
        """The agent reads the disk: name the open files it will see as last saved."""
        note = await self._unsaved.note(session, turn.context)
        if note is not None:
            self._registry.note(session, "warning", note)

    async def _prompt(
        self, session: Session, turn: Turn, conn: AgentConnection, blocks: list[dict[str, Any]]
    ) -> tuple[str, dict[str, Any] | None]:
        """Send the prompt; while the session's turn runs for another window (a shared
        goose serve takes one at a time), wait and send it again."""
        delay = BUSY_RETRY_FIRST
        while True:
            turn.to_agent()
            try:
                answer = await conn.prompt(session.session_id, blocks)
                session.left_running = False
                return answer
            except AgentBusy as busy:
                log.info("%s is busy; %s waits: %s", session.session_id, turn.message_id, busy)
            if turn.cancelled:  # cancelled while goose answered busy: never sent again
                return "cancelled", None
            turn.agent_busy()  # a cancel now ends the wait, not the other window's turn
            if delay == BUSY_RETRY_FIRST:
                why = STILL_RUNNING_NOTE if session.left_running else BUSY_NOTE
                self._registry.note(session, "info", why)
            session.last_event_at = time.monotonic()  # waiting is not a stall
            await asyncio.sleep(delay)
            delay = min(delay * 2, BUSY_RETRY_MAX)

    def _cancel_questions(self, session_id: str) -> None:
        for questions in self._questions:
            questions.cancel(session_id)

    async def cancel(self, session_id: str, message_id: str | None = None) -> bool:
        """Cancel the running turn, or the waiting one with ``message_id``.

        Returns False when there was no such turn.
        """
        session = self._registry.get(session_id)
        if message_id is not None and (
            session.active is None or session.active.message_id != message_id
        ):
            waiting = next((t for t in session.waiting if t.message_id == message_id), None)
            if waiting is None or waiting.task is None:
                return False
            if waiting.steering is not None and not waiting.steering.done():
                return False  # being sent into the running turn: that turn's cancel ends it
            waiting.cancel()
            waiting.task.cancel()
            return True
        turn = session.active
        if turn is None or not turn.cancel():
            return False
        self._cancel_questions(session_id)
        if not turn.sent:
            if turn.task is not None:
                turn.task.cancel()
            return True
        conn = self._link.running
        if conn is not None and conn.alive:
            # The session first (its agent stops asking its subagents for more), then each
            # subagent at work that may be cancelled on its own.
            children = self._registry.running_subagents(session)
            cancellable = [c.subagent_id for c in children if c.state.cancellable]
            for target in (session_id, *cancellable):
                try:
                    await conn.cancel(target)
                except AgentError as exc:
                    log.warning("session/cancel for %s failed: %s", target[:100], exc)
        if grace := self._settings().cancel_timeout:
            turn.cancel_deadline = asyncio.get_running_loop().call_later(
                grace, self._end_uncancelled, session, turn, grace
            )
        return True

    def _end_uncancelled(self, session: Session, turn: Turn, grace: float) -> None:
        """The agent did not end a cancelled turn in time: end it here, as cancelled."""
        if session.active is not turn or turn.task is None or turn.task.done():
            return
        log.warning("the agent did not confirm the cancel of %s in %g s", turn.message_id, grace)
        session.left_running = True
        self._registry.note(
            session,
            "warning",
            f"The agent did not stop within {grace:g} s of the cancel; the turn is ended "
            "here. If the agent stays stuck, restart it (goose.restart).",
        )
        turn.task.cancel()

    async def drop(self, session: Session) -> None:
        """Cancel the session's running and waiting turns, and wait until they are over."""
        if session.active is not None:
            await self.cancel(session.session_id)
        tasks = [t.task for t in (session.active, *session.waiting) if t and t.task]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # --- stalls ------------------------------------------------------------------
    def _watch(self, session: Session, turn: Turn) -> None:
        """Watch a turn for silence (``agent.stallTimeout``; 0 turns this off)."""
        limit = self._settings().stall_timeout
        if limit > 0:
            turn.watchdog = self._tasks.run(
                self._stalls(session, turn, limit), f"stall watch of {turn.message_id}"
            )

    async def _stalls(self, session: Session, turn: Turn, limit: float) -> None:
        warned_at = 0.0
        while session.active is turn:
            await asyncio.sleep(min(limit, STALL_CHECK_EVERY))
            quiet = time.monotonic() - session.last_event_at
            if session.active is turn and quiet >= limit and session.last_event_at != warned_at:
                self._registry.note(
                    session,
                    "warning",
                    f"Nothing from the agent for {quiet:.0f} s: this turn may be stalled. "
                    "Cancel it (Goose: Cancel) or restart the agent (goose.restart).",
                )
                warned_at = session.last_event_at
