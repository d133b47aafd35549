"""Where the agent runs: a process goose-ls starts, or a server goose-ls connects to.

The supervisor's state machine is one for both. Each kind is an :class:`Endpoint` that
opens a :class:`Channel`: ``agent.command`` (the default) is a child process speaking
ACP on its pipes (:mod:`.transport.child_process`), ``agent.url`` a ``goose serve`` reached over a
WebSocket (:mod:`.transport.network`), ``agent.goosed`` Goose Desktop's goosed spoken to
through a translation into ACP (:mod:`.goosed`), ``agent.share`` one goose serve all of the user's goose-ls
share, started by the first (:mod:`.share.attach`). Above the channel (the handshake, sessions,
permissions, the agent's file and terminal requests, recovery) nothing knows which it is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from goose_ls.agent.transport.frames import Frames
from goose_ls.settings import AgentSettings
from goose_ls.tasks import Tasks
from goose_ls.workspace.agent_sandbox import Bounds


class Channel(Protocol):
    """One running agent's way in and out, and how it ends."""

    @property
    def frames(self) -> Frames: ...

    @property
    def pid(self) -> int | None:
        """The agent's process id while it runs, when goose-ls started it."""

    def facts(self) -> dict[str, Any]:
        """What ``goose/agentStatus`` says of where it runs (``binary``... or ``url``)."""

    async def ended(
        self, output_ended: asyncio.Future[str], stopping: Callable[[], bool]
    ) -> tuple[str, bool]:
        """Wait for the agent's end (its output's end is ``output_ended``): what
        happened, as the end of "the agent ...", and whether that says it all (else
        the status adds "unexpectedly")."""

    def hint(self) -> str:
        """More on why it ended (`` (last output: ...)``), or nothing."""

    async def close(self, grace: float) -> None:
        """End it, waiting at most about ``grace`` seconds for it to go by itself."""

    def close_now(self, grace: float) -> None:
        """The same without an event loop (goose-ls is exiting)."""


class Endpoint(Protocol):
    """How to reach the agent, resolved from the settings at each start."""

    command: list[str]
    """The agent's command line (a terminal sign-in runs it again); empty for a server."""
    lost: str
    """The ``reason`` of an unexpected end: ``crashed``, or ``disconnected``."""
    fix: str
    """What to do after an unexpected end."""

    def facts(self) -> dict[str, Any]:
        """What ``goose/agentStatus`` says of it before it runs (binary, or url)."""

    async def open(self) -> Channel:
        """Start or reach the agent. :class:`~goose_ls.errors.AgentUnavailable` when it
        cannot be had (with a reason and a fix), another
        :class:`~goose_ls.errors.AgentError` when it failed to start."""

    async def stop_server(self, grace: float) -> bool:
        """Stop the server behind the channels, if goose-ls keeps one (the shared goose
        serve): the next :meth:`open` starts a new one. Whether one was stopped."""


def endpoint_for(
    settings: AgentSettings,
    environ: Mapping[str, str],
    cwd: str,
    tasks: Tasks,
    warn: Callable[[str], None],
    bounds: Callable[[], Awaitable[Bounds]],
) -> Endpoint:
    """``agent.goosed`` when set (Goose Desktop's goosed), else ``agent.url`` (``warn`` tells the user what they should hear of it), else
    the shared goose serve with ``agent.share``, else the agent's command. ``bounds``
    says what a sandboxed agent process may write and must not see."""
    if settings.goosed.strip():
        from goose_ls.agent.goosed.channel import GoosedEndpoint

        return GoosedEndpoint(settings, environ)
    if settings.url.strip():
        from goose_ls.agent.transport.network import NetworkEndpoint

        return NetworkEndpoint(settings, environ, warn)
    if settings.share:
        from goose_ls.agent.share.attach import SharedEndpoint

        return SharedEndpoint(settings, environ, bounds)
    from goose_ls.agent.transport.child_process import ProcessEndpoint

    return ProcessEndpoint(settings, environ, cwd, tasks, bounds)
