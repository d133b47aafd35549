"""Everything goose-ls tells the editor on its own: goose/* notifications and messages.

Each session event becomes ``goose/update`` (a turn's end becomes ``goose/turnEnd``),
each agent state ``goose/agentStatus``. Failures also reach editors without a plugin
through ``window/showMessage``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from lsprotocol import types

from goose_ls.agent.supervisor import AgentState, AgentStatus
from goose_ls.events import PermissionRequested, TurnEnded, event_to_wire
from goose_ls.lsp import protocol
from goose_ls.lsp.server import GooseLanguageServer
from goose_ls.sessions.session import IndexedEvent
from goose_ls.wire import to_wire

log = logging.getLogger(__name__)


def status_to_wire(status: AgentStatus) -> dict[str, Any]:
    data: dict[str, Any] = to_wire(status)
    data["state"] = status.state.value
    return data


class EditorPublisher:
    """The session manager's listener: forwards events and states to the editor."""

    def __init__(self, server: GooseLanguageServer) -> None:
        self._server = server

    def session_event(self, event: IndexedEvent) -> None:
        self.forward(event)
        server = self._server
        server.transcripts.session_event(event)
        server.turn_progress.session_event(event)
        ended = event.event if isinstance(event.event, TurnEnded) else None
        if ended and ended.error:
            self.show(types.MessageType.Error, f"goose: the turn failed: {ended.error}")
        if event.message_id not in server.chat.turns:
            return
        if isinstance(event.event, PermissionRequested):
            server.prompts.ask(event.event)
        elif ended and not ended.error:
            self.show(types.MessageType.Info, f"goose: turn finished ({ended.stop_reason})")

    def forward(self, event: IndexedEvent) -> None:
        """Send one event as its notification (again, for ``goose/replay``)."""
        if isinstance(event.event, TurnEnded):
            params = turn_end_to_wire(event)
            method = protocol.TURN_END
        else:
            params = update_to_wire(event)
            method = protocol.UPDATE
        session = self._server.sessions.sessions.get(event.session_id)
        if session is not None and session.tab_id is not None:
            params["tabId"] = session.tab_id
        self._notify(method, params)

    def agent_status(self, status: AgentStatus) -> None:
        self._notify(protocol.AGENT_STATUS, status_to_wire(status))
        if status.state is AgentState.ERROR:
            fix = f" {status.fix}" if status.fix else ""
            self.show(types.MessageType.Error, f"goose: {status.message}.{fix}")

    def cannot_write(self, path: Path, error: OSError) -> None:
        """Once per folder: a full or read-only disk fails every write the same way."""
        self._server.warn_once(
            f"cannot write {path.parent}",
            f"goose-ls cannot write {path}: {error.strerror or error}. Chats go on, but "
            "what is not written is lost when goose-ls stops; free space or set dataDir.",
        )

    def show(self, kind: types.MessageType, message: str) -> None:
        log.log(logging.ERROR if kind == types.MessageType.Error else logging.INFO, "%s", message)
        self._server.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def _notify(self, method: str, params: dict[str, Any]) -> None:
        self._server.protocol.notify_json(method, params)


def update_to_wire(event: IndexedEvent) -> dict[str, Any]:
    data = {
        "sessionId": event.session_id,
        "messageId": event.message_id,
        "index": event.index,
        "update": event_to_wire(event.event),
    }
    if event.replay:
        data["replay"] = True
    return data


def turn_end_to_wire(event: IndexedEvent) -> dict[str, Any]:
    assert isinstance(event.event, TurnEnded)
    return {
        "sessionId": event.session_id,
        "messageId": event.message_id,
        "index": event.index,
        **to_wire(event.event),
    }
