"""Keeping chats alive when the agent dies: restart it with backoff, reload the chats.

Every open session gets a note, the agent is started again after 1, 2, 4 and 8 seconds
(until one start works) and the open sessions are loaded into it; after the last try
goose-ls gives up and says so, until ``goose.restart`` or the next request.
"""

from __future__ import annotations

import asyncio
import logging

from goose_ls.errors import AgentError
from goose_ls.sessions.link import AgentLink
from goose_ls.sessions.registry import Registry
from goose_ls.tasks import Tasks

log = logging.getLogger(__name__)

BACKOFF = (1.0, 2.0, 4.0, 8.0)


class Recovery:
    def __init__(self, registry: Registry, link: AgentLink, tasks: Tasks) -> None:
        self._registry = registry
        self._link = link
        self._tasks = tasks
        self._restarting: asyncio.Task[None] | None = None
        self.backoff = BACKOFF

    def agent_died(self, reason: str) -> None:
        if self._restarting is not None and not self._restarting.done():
            return  # a restart attempt died: the restart loop is already on it
        self._registry.note_all("error", f"{reason[0].upper()}{reason[1:]}. Restarting it.")
        self._restarting = self._tasks.run(self._restart(), "restarting the agent")

    async def _restart(self) -> None:
        supervisor = self._link.supervisor
        for attempt, delay in enumerate(self.backoff, start=1):
            await asyncio.sleep(delay)
            if supervisor.current is not None:
                break  # a request restarted it meanwhile
            try:
                await supervisor.connection()
            except AgentError as exc:
                log.warning("restart %d of %d failed: %s", attempt, len(self.backoff), exc)
                continue
            break
        else:
            message = (
                f"the agent could not be restarted after {len(self.backoff)} tries; "
                "run the command goose.restart to try again"
            )
            self._registry.note_all("error", message[0].upper() + message[1:] + ".")
            supervisor.give_up(message)
            return
        await self._link.reload_open_sessions()

    def stop(self) -> None:
        if self._restarting is not None:
            self._restarting.cancel()
