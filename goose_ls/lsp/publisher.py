"""Everything goose-ls tells the editor on its own: goose/* notifications and messages.

Each session event becomes ``goose/update`` (a turn's end becomes ``goose/turnEnd``),
each agent state ``goose/agentStatus``; then the plugin-free chat gets the event too
(the transcript, the turn's progress, a permission popup, the agent's questions).
Failures, and a chat whose context is nearly full (once), also reach editors without a
plugin through ``window/showMessage``. Routine news does not where the editor shows
progress (a turn's progress ends saying how the turn ended): Neovim asks for Enter at
every message, and a person has nothing to do about a turn that finished.

A session's events reach the editor in index order: an event is never sent before the
earlier ones the editor has not had. A chat opened again has its history in the journal
only; what the agent says while taking it back (Claude's slash commands, say) comes
after that history, which is sent first, as ``goose/replay`` sends it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types

from goose_ls.events import (
    ElicitationRequested,
    PermissionRequested,
    TurnEnded,
    Usage,
    event_to_wire,
)
from goose_ls.inert import agent_name
from goose_ls.lsp import usage
from goose_ls.lsp.chat.current import EditorChat
from goose_ls.lsp.chat.elicitation_prompts import ElicitationPrompts
from goose_ls.lsp.chat.permission_prompts import PermissionPrompts
from goose_ls.lsp.chat.progress import TurnProgress
from goose_ls.lsp.chat.transcript_documents import Transcripts
from goose_ls.lsp.editor import EditorConnection
from goose_ls.lsp.plugin_api import protocol
from goose_ls.lsp.plugin_api.protocol import status_to_wire
from goose_ls.sessions import AgentState, AgentStatus, EventRow, IndexedEvent

log = logging.getLogger(__name__)
Json = dict[str, Any]


@attrs.define
class PluginFreeChat:
    """The parts of the plugin-free chat that follow every event."""

    transcripts: Transcripts
    progress: TurnProgress
    chat: EditorChat
    permission_popups: PermissionPrompts
    question_popups: ElicitationPrompts
    tab_of: Callable[[str], str | None]
    """The client's tab id for a session, if it gave one."""


class EditorPublisher:
    """The session manager's listener: forwards events and states to the editor."""

    def __init__(self, editor: EditorConnection) -> None:
        self._editor = editor
        self._plain: PluginFreeChat | None = None
        self._journal: Callable[[str, int], list[EventRow]] = lambda _, __: []
        self._sent: dict[str, int] = {}
        """Per session, the highest index the editor was sent (a turn's end is sent to
        an editor that does not listen too: one that starts listening goes on from it)."""
        self.listening = False
        """Whether ``goose/update`` is sent (see :meth:`listen`)."""

    def connect(self, plain: PluginFreeChat, journal: Callable[[str, int], list[EventRow]]) -> None:
        """The plugin-free chat exists now (it needs the sessions this listens to), and
        the journal: ``journal(session_id, after)`` reads a session's events above
        ``after``, oldest first."""
        self._plain = plain
        self._journal = journal

    def event_recorded(self, event: IndexedEvent) -> None:
        self.forward(event)
        plain = self._plain
        if plain is None:
            return
        plain.transcripts.event_recorded(event)
        plain.progress.event_recorded(event)
        ended = event.event if isinstance(event.event, TurnEnded) else None
        if ended and ended.error:
            agent = plain.transcripts.agent_of(event.session_id)
            self._editor.show(types.MessageType.Error, f"{agent}: the turn failed: {ended.error}")
        if isinstance(event.event, Usage) and not event.replay and usage.nearly_full(event.event):
            self._editor.warn_once(
                f"context of {event.session_id}", usage.full_warning(event.event)
            )
        if event.message_id is None or not plain.progress.follows(event.message_id):
            return
        if isinstance(event.event, PermissionRequested):
            plain.permission_popups.ask(event.session_id, event.event)
        elif isinstance(event.event, ElicitationRequested):
            plain.question_popups.ask(event.session_id, event.event)
        elif ended and not ended.error:
            self._finished(event.message_id, ended, plain.transcripts.agent_of(event.session_id))

    def _finished(self, message_id: str | None, ended: TurnEnded, agent: str) -> None:
        """A turn of the editor's ended: its progress says so; a message only where the
        editor has no progress to show (it would hear nothing else)."""
        log.info("turn %s finished (%s)", message_id, ended.stop_reason)
        if not self._editor.has_progress():
            self._editor.show(
                types.MessageType.Info, f"{agent}: turn finished ({ended.stop_reason})"
            )

    def listen(self) -> None:
        """The client wants ``goose/update``: it said so in ``initializationOptions``, or
        sent a goose/* request. Until then none is sent (Helix and other editors without a
        plugin would only parse and drop them, one per streamed token); ``goose/turnEnd``
        and ``goose/agentStatus``, a few per turn, always go."""
        self.listening = True

    def forward(self, event: IndexedEvent) -> None:
        """Send one event as its notification, after the earlier ones the editor lacks."""
        e = event
        if self.listening:
            self._catch_up(e.session_id, e.index)
        elif not isinstance(e.event, TurnEnded):
            return
        self._sent[e.session_id] = max(e.index, self._sent.get(e.session_id, 0))
        if e.encoded is not None and not isinstance(e.event, TurnEnded):  # the journal's text
            self._send_encoded(e.session_id, e.index, e.message_id, e.encoded, e.replay)
            return
        update = event_to_wire(e.event, e.subagent)
        self._send(e.session_id, e.index, e.message_id, update, e.replay)

    def _catch_up(self, session_id: str, index: int) -> None:
        """Before ``index``, send the journal's events between the last one the editor
        was sent and it: history of a chat opened again that it never had, which the
        agent's first word there would otherwise overtake. (After a kill the journal has
        a gap of its own: what it lacks is not there to send.)"""
        sent = self._sent.get(session_id, 0)
        if index <= sent + 1:
            return
        for row in self._journal(session_id, sent):
            if row.idx >= index:
                break
            self.forward_journaled(row)

    def forward_journaled(self, row: EventRow) -> None:
        """Send one event again, as the journal keeps it (for ``goose/replay``): its
        stored JSON goes into the notification as it is, not decoded and encoded again."""
        self._sent[row.session_id] = max(row.idx, self._sent.get(row.session_id, 0))
        if row.kind == TurnEnded.KIND:  # its fields sit at the top of goose/turnEnd
            self._send(row.session_id, row.idx, row.message_id, json.loads(row.payload), False)
            return
        self._send_encoded(row.session_id, row.idx, row.message_id, row.payload, row.replay)

    def _send_encoded(
        self, session_id: str, index: int, message_id: str | None, update: str, replay: object
    ) -> None:
        """``goose/update`` with its update as JSON text already."""
        params: Json = {"sessionId": session_id, "messageId": message_id, "index": index}
        if replay:
            params["replay"] = True
        tab_id = self._plain.tab_of(session_id) if self._plain else None
        if tab_id is not None:
            params["tabId"] = tab_id
        self._editor.notify_encoded(
            protocol.UPDATE, f'{json.dumps(params)[:-1]}, "update": ', update, "}"
        )

    def _send(
        self, session_id: str, index: int, message_id: str | None, update: Json, replay: object
    ) -> None:
        params: Json = {"sessionId": session_id, "messageId": message_id, "index": index}
        if update.get("sessionUpdate") == TurnEnded.KIND:
            method = protocol.TURN_END
            params.update((k, v) for k, v in update.items() if k != "sessionUpdate")
        else:
            method = protocol.UPDATE
            params["update"] = update
            if replay:
                params["replay"] = True
        tab_id = self._plain.tab_of(session_id) if self._plain else None
        if tab_id is not None:
            params["tabId"] = tab_id
        self._editor.notify(method, params)

    def agent_status(self, status: AgentStatus, announce: bool = True) -> None:
        self._editor.notify(protocol.AGENT_STATUS, status_to_wire(status))
        if status.state is AgentState.ERROR and announce:
            fix = f" {status.fix}" if status.fix else ""
            who = agent_name(status.name, unnamed="goose-ls")
            self._editor.show(types.MessageType.Error, f"{who}: {status.message}.{fix}")

    def cannot_write(self, path: Path, error: OSError) -> None:
        self._editor.cannot_write(path, error)

    async def session_gone(self, session_id: str, deleted: bool) -> None:
        """A chat was closed or deleted, whichever side asked (a plugin or the plugin-free chat): its transcript is written
        out (or, deleted, released before its files go), and the plugin-free chat no longer
        points at it."""
        if self._plain is None:
            return
        if deleted:
            self._plain.transcripts.forget(session_id)
        else:
            await self._plain.transcripts.close(session_id)
        self._plain.chat.session_gone(session_id)

    def warning(self, message: str) -> None:
        self._editor.warn_once(message, f"goose-ls: {message}")
