"""An editor-side recorder of goose/* notifications, for tests of goose-ls and of plugins.

Attach it to a pygls (or pytest-lsp) client before ``initialize``; it keeps every
``goose/update``, ``goose/turnEnd`` and ``goose/agentStatus`` as plain JSON and lets a test
wait for what it expects.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

from pygls.client import JsonRPCClient
from pygls.protocol import JsonRPCNotification, JsonRPCResponseMessage

T = TypeVar("T")


def plain(value: Any) -> Any:
    """pygls hands custom params over as namedtuples; turn them back into JSON (a client
    with a recorder attached gets JSON already)."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def keep_json(client: JsonRPCClient) -> None:
    """Keep the params of notifications, and the results of requests, that pygls has no
    type for (goose/*) as the JSON they are.

    pygls would make them namedtuples, going through JSON twice and building a namedtuple
    class for every object: most of a test client's time while goose/update streams.
    """
    converter = client.protocol._converter
    as_sent = lambda data, cls: cls(**data)  # noqa: E731
    converter.register_structure_hook(JsonRPCNotification, as_sent)
    converter.register_structure_hook(JsonRPCResponseMessage, as_sent)


class GooseRecorder:
    def __init__(self, client: JsonRPCClient) -> None:
        self.client = client
        self.updates: list[dict[str, Any]] = []
        self.turn_ends: list[dict[str, Any]] = []
        self.statuses: list[dict[str, Any]] = []
        self.disk_synced: list[str] = []
        """The URIs of ``goose/diskSynced``, in order."""
        self.arrived: list[dict[str, Any]] = []
        """Every goose/update and goose/turnEnd, in the order they came."""
        self.ignored: set[str] = set()
        """Sessions whose goose/update and goose/turnEnd are dropped (another test's,
        when tests share a server)."""
        keep_json(client)
        client.feature("goose/update")(lambda params: self._keep(self.updates, params))
        client.feature("goose/turnEnd")(lambda params: self._keep(self.turn_ends, params))
        client.feature("goose/agentStatus")(lambda params: self.statuses.append(plain(params)))
        client.feature("goose/diskSynced")(
            lambda params: self.disk_synced.append(plain(params)["uri"])
        )

    def _keep(self, kind: list[dict[str, Any]], params: Any) -> None:
        event = plain(params)
        if event.get("sessionId") in self.ignored:
            return
        kind.append(event)
        self.arrived.append(event)

    def forget(self) -> None:
        """Drop everything received so far (a test that shares a server starts afresh)."""
        for kept in (self.updates, self.turn_ends, self.statuses, self.disk_synced, self.arrived):
            kept.clear()

    async def request(self, method: str, params: object) -> dict[str, Any]:
        result = await self.client.protocol.send_request_async(method, params)
        return plain(result)  # type: ignore[no-any-return]

    async def wait_for(
        self, condition: Callable[[], T | None], timeout: float = 30.0, what: str = "condition"
    ) -> T:
        """Poll ``condition`` until it returns something truthy, and return that (the
        timeout guards against hangs only)."""
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"gave up waiting for {what}; updates: {self._tail()}")
            await asyncio.sleep(0.01)

    async def turn_end(self, message_id: str, timeout: float = 30.0) -> dict[str, Any]:
        ends = await self.wait_for(
            lambda: [e for e in self.turn_ends if e["messageId"] == message_id],
            timeout,
            f"the end of turn {message_id}",
        )
        return ends[0]

    async def agent_state(self, state: str, timeout: float = 30.0) -> dict[str, Any]:
        found = await self.wait_for(
            lambda: [s for s in self.statuses if s["state"] == state], timeout, f"agent {state}"
        )
        return found[-1]

    def of_kind(self, kind: str, session_id: str | None = None) -> list[dict[str, Any]]:
        return [
            u["update"]
            for u in self.updates
            if u["update"]["sessionUpdate"] == kind and session_id in (None, u["sessionId"])
        ]

    def text(self, message_id: str, kind: str = "agent_message_chunk") -> str:
        """The concatenated text of one turn's chunks of ``kind``."""
        return "".join(
            u["update"]["content"].get("text", "")
            for u in self.updates
            if u["messageId"] == message_id and u["update"]["sessionUpdate"] == kind
        )

    def _tail(self) -> str:
        return json.dumps([u["update"].get("sessionUpdate") for u in self.updates[-10:]])
