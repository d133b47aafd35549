"""Asking the user about a tool call, with or without a popup.

Turns started from the editor ask through ``window/showMessageRequest`` when the editor
has it (Neovim, eglot, VS Code, Helix 25.07); the answer is matched by its title (eglot
sends only the title). The card is in the editor and in view first: the popup hides
what it asks about, and the user must see the diff they approve. Without popups (Helix
25.01), and whenever the popup fails or is dismissed, the permission card in the
transcript stays open, answered by its code actions or the ``goose.permission`` command.
Fail closed: nothing here ever answers "allow" by itself. Requests are asked one at a
time, in order.
"""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types

from goose_ls import events
from goose_ls.inert import inert_line
from goose_ls.lsp.chat.transcript_documents import Transcripts
from goose_ls.lsp.editor import EditorConnection
from goose_ls.prompt_limits import MAX_SHOWN_CHARS, cut
from goose_ls.sessions import PermissionAnswers
from goose_ls.tasks import Tasks

log = logging.getLogger(__name__)

TITLE = 200
"""Characters of the agent's title a popup repeats."""
ACTION = MAX_SHOWN_CHARS - TITLE - 200
"""Characters of what allowing does a popup shows (with the title, within the cap)."""


def popup_message(request: events.PermissionRequested) -> str:
    """What a popup (or the note of an editor without popups) says it asks about: the
    action first (cut within the cap on messages, saying where the whole is), the
    agent's name for it after."""
    title = inert_line(cut(request.tool_call.title or request.tool_call.tool_call_id, TITLE))
    action = inert_line(request.action or title)
    if len(action) > ACTION:  # cut: where to read the whole of it
        action = f"{cut(action, ACTION)} (the whole of it is on the card in the chat)"
    return f"The agent is waiting for your approval: {action} (it calls this “{title}”)"


def rejecting_first(options: list[events.PermissionOption]) -> list[events.PermissionOption]:
    """The choices as a menu lists them: rejecting first. Helix selects a menu's first
    entry, and a stray Enter must not allow what the agent listed first."""
    return sorted(options, key=lambda option: not option.kind.startswith("reject"))


class PermissionPrompts:
    def __init__(
        self,
        editor: EditorConnection,
        permissions: PermissionAnswers,
        transcripts: Transcripts,
        tasks: Tasks,
    ) -> None:
        self._editor = editor
        self._permissions = permissions
        self._transcripts = transcripts
        self._tasks = tasks
        self._queue: asyncio.Queue[tuple[str, events.PermissionRequested]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None

    def ask(self, session_id: str, request: events.PermissionRequested) -> None:
        self._queue.put_nowait((session_id, request))
        if self._worker is None or self._worker.done():
            self._worker = self._tasks.run(self._work(), "permission popups")

    async def _work(self) -> None:
        while not self._queue.empty():
            session_id, request = self._queue.get_nowait()
            if self._permissions.is_pending(request.request_id):
                await self._prompt(session_id, request)

    async def _prompt(self, session_id: str, request: events.PermissionRequested) -> None:
        message = popup_message(request)
        await self._transcripts.drawn(session_id)  # the card first: then the news of it
        if not self._editor.has_popups():
            self._editor.show(
                types.MessageType.Warning,
                f"{message}. Answer on the card in the chat (code actions there).",
            )
            return
        # The card drawn and in view (at the chat's end) before the popup covers the screen.
        await self._transcripts.show_end(session_id)
        if not self._permissions.is_pending(request.request_id):
            return  # answered on the card meanwhile
        ordered = rejecting_first(request.options)
        labels = {o.label: o.option_id for o in ordered}
        chosen = await self._editor.ask(types.MessageType.Warning, message, list(labels))
        option_id = labels.get(chosen) if chosen is not None else None
        if option_id is None or not self._permissions.is_pending(request.request_id):
            return  # dismissed, or answered on the card meanwhile: the card stays the way
        self._permissions.answer(request.request_id, option_id)
        # The user just answered: the reply goes on below the cursor, in view.
        await self._transcripts.show_end(session_id, below_new_text=True)
