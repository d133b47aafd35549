"""Keeping chats alive: restart a dead agent with backoff, and notice turns that stall.

When the agent dies, every open session gets a note, the agent is started again after
1, 2, 4 and 8 seconds (until one start works) and the open sessions are loaded into
it; after the last try goose-ls gives up and says so. A turn that hears nothing from
the agent for ``agent.stallTimeout`` seconds gets a note offering cancel and restart.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from goose_ls.agent.discovery import AgentUnavailable
from goose_ls.agent.interface import AgentError

if TYPE_CHECKING:
    from goose_ls.sessions.manager import SessionManager
    from goose_ls.sessions.session import Session, Turn

log = logging.getLogger(__name__)

BACKOFF = (1.0, 2.0, 4.0, 8.0)


class Recovery:
    def __init__(self, manager: SessionManager) -> None:
        self._manager = manager
        self._restarting: asyncio.Task[None] | None = None
        self._watchdogs: set[asyncio.Task[None]] = set()
        self.backoff = BACKOFF

    def agent_died(self, reason: str) -> None:
        if self._restarting is not None and not self._restarting.done():
            return  # a restart attempt died: the restart loop is already on it
        for session in list(self._manager.sessions.values()):
            self._manager.note(session, "error", f"{reason[0].upper()}{reason[1:]}. Restarting it.")
        self._restarting = asyncio.create_task(self._restart())

    async def _restart(self) -> None:
        for attempt, delay in enumerate(self.backoff, start=1):
            await asyncio.sleep(delay)
            if self._manager.supervisor.current is not None:
                break  # a request restarted it meanwhile
            try:
                await self._manager.supervisor.connection()
            except (AgentError, AgentUnavailable) as exc:
                log.warning("restart %d of %d failed: %s", attempt, len(self.backoff), exc)
                continue
            break
        else:
            message = (
                f"the agent could not be restarted after {len(self.backoff)} tries; "
                "run the command goose.restart to try again"
            )
            for session in list(self._manager.sessions.values()):
                self._manager.note(session, "error", message[0].upper() + message[1:] + ".")
            self._manager.supervisor.give_up(message)
            return
        await self._manager.reload_open_sessions()

    def watch(self, session: Session, turn: Turn) -> None:
        """Watch a turn for silence (``agent.stallTimeout``; 0 turns this off)."""
        limit = self._manager.settings.agent.stall_timeout
        if limit <= 0:
            return
        task = turn.watchdog = asyncio.create_task(self._watch(session, turn, limit))
        self._watchdogs.add(task)
        task.add_done_callback(self._watchdogs.discard)

    async def _watch(self, session: Session, turn: Turn, limit: float) -> None:
        warned_at = 0.0
        while session.active is turn:
            await asyncio.sleep(min(limit, 5.0))
            quiet = time.monotonic() - session.last_event_at
            if session.active is turn and quiet >= limit and session.last_event_at != warned_at:
                self._manager.note(
                    session,
                    "warning",
                    f"Nothing from the agent for {quiet:.0f} s: this turn may be stalled. "
                    "Cancel it (Goose: Cancel) or restart the agent (goose.restart).",
                )
                warned_at = session.last_event_at

    def stop(self) -> None:
        for task in [self._restarting, *self._watchdogs]:
            if task is not None:
                task.cancel()
        self._watchdogs.clear()
