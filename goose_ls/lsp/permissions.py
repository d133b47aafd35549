"""Asking the user about a tool call, with or without a popup.

Turns started from the editor ask through ``window/showMessageRequest`` when the editor
has it (Neovim, eglot, VS Code); the answer is matched by its title (eglot sends only the
title). Helix has no such request: there, and whenever the popup fails or is dismissed,
the permission card in the transcript stays open, answered by its code actions or the
``goose.permission`` command. Fail closed: nothing here ever answers "allow" by itself.
Requests are asked one at a time, in order.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

from goose_ls import events

if TYPE_CHECKING:
    from goose_ls.lsp.server import GooseLanguageServer

log = logging.getLogger(__name__)


class PermissionPrompts:
    def __init__(
        self,
        server: GooseLanguageServer,
        answer: Callable[[str, str | None], None],
        is_pending: Callable[[str], bool],
    ) -> None:
        self._server = server
        self._answer = answer
        self._is_pending = is_pending
        self._queue: asyncio.Queue[events.PermissionRequested] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None

    def ask(self, request: events.PermissionRequested) -> None:
        self._queue.put_nowait(request)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work())

    async def _work(self) -> None:
        while not self._queue.empty():
            request = self._queue.get_nowait()
            if self._is_pending(request.request_id):
                await self._prompt(request)

    def _has_popup(self) -> bool:
        window = self._server.client_capabilities.window
        return bool(window and window.show_message)

    async def _prompt(self, request: events.PermissionRequested) -> None:
        title = request.tool_call.title or request.tool_call.tool_call_id
        message = f"goose is waiting for your approval: {title}"
        if not self._has_popup():
            self._server.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"{message}. Answer on the card in the chat (code actions there).",
                )
            )
            return
        labels = {o.label: o.option_id for o in request.options}
        try:
            chosen = await self._server.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Warning,
                    message=message,
                    actions=[types.MessageActionItem(title=label) for label in labels],
                )
            )
        except Exception as exc:  # no popup after all (Helix answers MethodNotFound)
            log.info("window/showMessageRequest failed (%s); the card stays open", exc)
            return
        option_id = labels.get(chosen.title) if chosen is not None else None
        if option_id is None or not self._is_pending(request.request_id):
            return  # dismissed, or answered on the card meanwhile: the card stays the way
        self._answer(request.request_id, option_id)
