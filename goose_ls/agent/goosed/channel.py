"""``agent.goosed``: the endpoint and channel of Goose Desktop's goosed.

goosed holds no connection open between turns, so the channel ends when a request cannot
reach it (the agent's end, reason ``disconnected``); the next request reaches it again
(``/status``, the secret and the version asked anew).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from goose_ls.agent.goosed.bridge import GoosedBridge
from goose_ls.agent.goosed.server import open_goosed
from goose_ls.agent.transport.frames import Frames
from goose_ls.settings import AgentSettings


class GoosedEndpoint:
    """Goose Desktop's goosed at ``agent.goosed``."""

    command: list[str] = []
    lost = "disconnected"

    def __init__(self, settings: AgentSettings, environ: Mapping[str, str]) -> None:
        self._settings = settings
        self._environ = environ
        self.url = settings.goosed.strip()
        self.fix = (
            f"Check that Goose Desktop runs with its goosed at {self.url} "
            f"(`goose-ls doctor --goosed {self.url}`); goose-ls reconnects by itself."
        )

    def facts(self) -> dict[str, Any]:
        return {"url": self.url}

    async def stop_server(self, grace: float) -> bool:
        return False  # Goose Desktop's, not goose-ls's

    async def open(self) -> GoosedChannel:
        goosed = await open_goosed(self._settings, self._environ)
        return GoosedChannel(GoosedBridge(goosed), self.url, goosed.facts.version)


class GoosedChannel:
    pid = None

    def __init__(self, bridge: GoosedBridge, url: str, version: str | None) -> None:
        self._bridge = bridge
        self._url = url
        self._version = version

    @property
    def frames(self) -> Frames:
        return self._bridge

    def facts(self) -> dict[str, Any]:
        facts: dict[str, Any] = {"url": self._url}
        if self._version:
            facts["version"] = self._version
        return facts

    async def ended(
        self, output_ended: asyncio.Future[str], stopping: Callable[[], bool]
    ) -> tuple[str, bool]:
        return await output_ended, True

    def hint(self) -> str:
        return ""

    async def close(self, grace: float) -> None:
        await self._bridge.close()

    def close_now(self, grace: float) -> None:
        self._bridge.abort()
