"""Work-done progress for each turn started from the editor: begin, what it is doing, end.

The end says how the turn ended, and how full the context is when the agent told it.

Where the editor lets the user cancel the progress (VS Code does), the turn is cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

from lsprotocol import types

from goose_ls import events
from goose_ls.lsp.editor import EditorConnection
from goose_ls.lsp.usage import context_line
from goose_ls.sessions import IndexedEvent
from goose_ls.tasks import Tasks, uncancelled, within

log = logging.getLogger(__name__)

REPORT_EVERY = 0.5
"""Seconds between two progress reports that only say "writing" again."""


def describe(event: events.SessionEvent) -> str | None:
    """What a progress report says about an event (None: nothing new to say)."""
    if isinstance(event, (events.ToolCall, events.ToolCallUpdate)) and event.title:
        return event.title
    if isinstance(event, events.AgentMessageChunk):
        return "writing"
    if isinstance(event, events.AgentThoughtChunk):
        return "thinking"
    if isinstance(event, events.PermissionRequested):
        return "waiting for your approval"
    return None


class TurnProgress:
    def __init__(
        self,
        editor: EditorConnection,
        cancel: Callable[[str], Coroutine[Any, Any, object]],
        tasks: Tasks,
    ) -> None:
        self._editor = editor
        self._cancel = cancel
        self._tasks = tasks
        self._queues: dict[str, asyncio.Queue[events.SessionEvent]] = {}

    def start(self, session_id: str, message_id: str, title: str) -> None:
        """Show progress for the turn ``message_id`` (sent from the editor)."""
        queue: asyncio.Queue[events.SessionEvent] = asyncio.Queue()
        self._queues[message_id] = queue
        task = self._tasks.run(
            self._run(session_id, message_id, title, queue), f"progress of {message_id}"
        )
        task.add_done_callback(lambda _: self._queues.pop(message_id, None))

    def follows(self, message_id: str) -> bool:
        """Whether the turn was started from the plugin-free chat and has not ended: its
        permission requests and questions pop up, and its end is told."""
        return message_id in self._queues

    def event_recorded(self, event: IndexedEvent) -> None:
        if event.message_id is not None and (queue := self._queues.get(event.message_id)):
            queue.put_nowait(event.event)

    async def _run(
        self,
        session_id: str,
        message_id: str,
        title: str,
        queue: asyncio.Queue[events.SessionEvent],
    ) -> None:
        token = await self._create_token()
        progress = self._editor.progress
        if token is not None:
            progress.begin(
                token,
                types.WorkDoneProgressBegin(title=title, message="starting", cancellable=True),
            )
            loop = asyncio.get_running_loop()

            def cancel_turn() -> None:
                self._tasks.run(self._cancel(session_id), f"cancelling {message_id}")

            progress.tokens[token].add_done_callback(
                lambda f: f.cancelled() and loop.call_soon_threadsafe(cancel_turn)
            )
        said, said_at = "", 0.0
        usage: events.Usage | None = None
        while True:
            event = await queue.get()
            if isinstance(event, events.Usage):
                usage = event
            if isinstance(event, events.TurnEnded):
                if token is not None:
                    outcome = "failed" if event.error else (event.stop_reason or "done")
                    if usage is not None:
                        outcome = f"{outcome} · {context_line(usage)}"
                    progress.end(token, types.WorkDoneProgressEnd(message=outcome))
                return
            message = describe(event)
            now = time.monotonic()
            if token is None or message is None:
                continue
            if message != said or now - said_at > REPORT_EVERY * 10:
                if message == "writing" and said == "writing" and now - said_at < REPORT_EVERY:
                    continue
                progress.report(token, types.WorkDoneProgressReport(message=message))
                said, said_at = message, now

    async def _create_token(self) -> str | None:
        if not self._editor.has_progress():
            return None
        token = str(uuid.uuid4())
        try:
            await within(5.0, uncancelled(self._editor.progress.create_async(token)))
        except Exception as exc:
            log.info("the editor refused a progress token: %s", exc)
            return None
        return token
