"""What one agent process keeps for all its clients, as goose serve keeps it for all its
connections: the sessions it knows, and the one run each may have going.

goose serve gives each connection an agent of its own over one database and one
active-run registry: a session made on one connection is listed and loaded on another,
and a prompt to a session whose run is active (for any connection) is refused with
goose's words (-32602, ``session already has active run `run_…`; use
_goose/unstable/session/steer``).
"""

from __future__ import annotations

import uuid
from typing import Any

from goose_ls.scripted.peer import RpcError


class ServerState:
    def __init__(self) -> None:
        self.sessions: dict[str, dict[str, Any]] = {}
        self.made: set[str] = set()
        """Every session id given out, closed ones too: never given again."""
        self._runs: dict[str, str] = {}

    def start_run(self, session_id: str) -> str:
        """A new run of ``session_id``, or goose's refusal while one is active."""
        if (active := self._runs.get(session_id)) is not None:
            raise RpcError(
                -32602,
                "Invalid params",
                f"session already has active run `{active}`; use _goose/unstable/session/steer",
            )
        run_id = self._runs[session_id] = f"run_{uuid.uuid4()}"
        return run_id

    def end_run(self, session_id: str, run_id: str) -> None:
        if self._runs.get(session_id) == run_id:
            del self._runs[session_id]
