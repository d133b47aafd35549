"""Whole messages to and from the agent, however a channel frames them.

Each way of reaching the agent (a line on its pipes: :mod:`.stdio`; a text frame on a
WebSocket: :mod:`.websocket`; streamable HTTP: :mod:`.streamable_http`) gives
:class:`Frames`; the ACP layer above (:mod:`goose_ls.agent.acp.message_transport`) reads JSON-RPC
messages from them.
"""

from __future__ import annotations

import logging
from typing import Protocol

log = logging.getLogger(__name__)

READER_GRACE = 1.0
"""Seconds an agent whose output ended may take to exit before it is killed."""

_EXCERPT = 200


class Frames(Protocol):
    """Whole messages in and out, however the channel frames them."""

    async def read(self) -> bytes | str | None:
        """The next message as it came (None: nothing more will come)."""

    def why_ended(self) -> str:
        """Why nothing more comes, as the end of "the agent ...": ``closed its output``."""

    async def send(self, data: bytes) -> None:
        """Send one message (serialised by the caller: messages never interleave)."""

    def send_now(self, data: bytes) -> None:
        """Send one message without waiting, from a task being cancelled."""

    def closing(self) -> bool: ...

    async def close(self) -> None: ...


def drop(message: bytes | str, why: str) -> None:
    """Log a message from the agent that goose-ls skips, with its start."""
    start = message[:_EXCERPT]
    excerpt = start.decode("utf-8", "replace") if isinstance(start, bytes) else start
    more = f" ... ({len(message)} bytes)" if len(message) > _EXCERPT else ""
    log.warning("skipped a message from the agent (%s): %s%s", why, excerpt, more)
