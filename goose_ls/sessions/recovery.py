"""Keeping chats alive when the agent dies: restart it with backoff, reload the chats.

Every open session gets a note and the agent is started again after ``restartDelay``
seconds, then the open sessions are loaded into it. Each failure (a crash, a restart that
fails, an agent that dies while the chats are reloaded) doubles the next delay; after
``restartLimit`` failures within ``restartWindow`` seconds goose-ls gives up and says so
once: no agent starts until ``goose.restart``. An agent that crashes after a good start
is still counted, so a crash loop ends too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable

from goose_ls.errors import AgentError
from goose_ls.sessions.link import AgentLink
from goose_ls.sessions.registry import Registry
from goose_ls.tasks import Tasks

log = logging.getLogger(__name__)


class Recovery:
    def __init__(
        self,
        registry: Registry,
        link: AgentLink,
        tasks: Tasks,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._registry = registry
        self._link = link
        self._tasks = tasks
        self._clock = clock
        self._restarting: asyncio.Task[None] | None = None
        self._failures: deque[float] = deque()

    @property
    def in_series(self) -> bool:
        """Whether the agent has failed lately (the user was told of the first failure)."""
        self._forget_old()
        return bool(self._failures)

    def agent_died(self, reason: str) -> None:
        if self._restarting is not None and not self._restarting.done():
            return  # a restart attempt died: the restart loop counts it and goes on
        self._registry.note_all("error", f"{reason[0].upper()}{reason[1:]}. Restarting it.")
        self._restarting = self._tasks.run(self._restart(), "restarting the agent")

    async def _restart(self) -> None:
        link = self._link
        while True:
            failures = self._failed()
            settings = link.agent_settings
            if failures >= settings.restart_limit:
                self._give_up(failures, settings.restart_window)
                return
            await asyncio.sleep(settings.restart_delay * 2 ** (failures - 1))
            if link.running is None:  # else a request restarted it meanwhile
                try:
                    await link.connection()
                except AgentError as exc:
                    log.warning("restart after %d failures failed: %s", failures, exc)
                    continue
            await link.reload_open_sessions()
            if link.running is not None:
                return

    def _failed(self) -> int:
        """Count one more failure; return how many fall within the window."""
        self._failures.append(self._clock())
        self._forget_old()
        return len(self._failures)

    def _forget_old(self) -> None:
        horizon = self._clock() - self._link.agent_settings.restart_window
        while self._failures and self._failures[0] < horizon:
            self._failures.popleft()

    def _give_up(self, failures: int, window: float) -> None:
        message = (
            f"the agent failed {failures} times in {window:g} s and goose-ls gave up "
            "restarting it; run the command goose.restart to try again"
        )
        log.error("%s", message)
        self._registry.note_all("error", message[0].upper() + message[1:] + ".")
        self._link.give_up(message)

    def stop(self) -> None:
        if self._restarting is not None:
            self._restarting.cancel()

    def reset(self) -> None:
        """The user restarts the agent: forget past failures."""
        self.stop()
        self._failures.clear()
