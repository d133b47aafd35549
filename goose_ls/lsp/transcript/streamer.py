"""Getting transcript text to the editor: few, serialised, append-only edits.

Changes pile up in :class:`TranscriptText`; a flush turns all of them into one
``workspace/applyEdit`` and waits for the editor's answer before the next, and flushes
come at most every ``interval`` seconds, so the editor sees a handful of edits a second
whatever the agent's token rate. The first change after a quiet spell goes out at once,
and so does the first of a turn's reply (the user is waiting to see it start). While text
streams, a flush rides on the wakeup of the chunk that comes once ``interval`` has passed;
the streamer's own timers wait ``LINGER`` intervals, so a paced stream costs it at most
two wakeups a second, not one per chunk.

When the transcript is not open in the editor, or the editor cannot apply edits, the
file on disk is written instead (keeping the user's draft there): at once after a quiet
spell, then every ``save_interval`` seconds while text streams, when the stream pauses
for ``LINGER`` intervals (a replay ends with no turn's end), and at the turn's end; the
journal holds the chat meanwhile (rewriting a file nobody shows 4 times a second was most
of what a paced stream cost). While the editor shows it, the file is saved too, with the
editor's prompt section, as often, so an editor quit without saving (``:qa!``) loses
nothing of the chat, and the user's draft only since that save.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from goose_ls.atomic_files import WriteFailed
from goose_ls.lsp.positions import Position
from goose_ls.lsp.transcript.file import TranscriptFile
from goose_ls.lsp.transcript.text import TranscriptText, prompt_section
from goose_ls.tasks import Tasks, within

log = logging.getLogger(__name__)

LINGER = 2
"""Intervals a change waits for a flush when no later change brings one sooner."""

ApplyEdit = Callable[[str, Position, Position, str], Awaitable[bool]]


class TranscriptStreamer:
    def __init__(
        self,
        uri: str,
        path: Path,
        text: TranscriptText,
        *,
        is_open: Callable[[], bool],
        apply_edit: ApplyEdit | None,
        interval: float,
        save_interval: float,
        context_lines: Callable[[], list[str]],
        editor_section: Callable[[], str | None],
        write_failed: WriteFailed,
        tasks: Tasks,
    ) -> None:
        self.uri = uri
        self.path = path
        self.text = text
        self.file = TranscriptFile(path, text)
        self._is_open = is_open
        self._apply_edit = apply_edit
        self.interval = interval
        self.save_interval = save_interval
        self._context_lines = context_lines
        self._editor_section = editor_section
        """The prompt section as the editor has it (None when it has none)."""
        self._write_failed = write_failed
        self._tasks = tasks
        self._wake = asyncio.Event()
        self._hurry = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._last_flush = -math.inf
        """When the last edit went out: never, so the first goes at once (``monotonic()``
        counts from boot on Linux, and may be below ``interval`` on a new machine)."""
        self._saved_at = -math.inf
        self._changed_at = -math.inf
        """When the last change was rendered."""
        self._unsaved = False
        """The editor shows changes the file does not have yet."""
        self._save_now = False
        self._task: asyncio.Task[None] | None = None
        self.lock = asyncio.Lock()
        """Held for every change to the document, so edits never interleave."""

    def uses_editor(self) -> bool:
        return self._apply_edit is not None and self._is_open()

    def changed(self, urgent: bool = False, save: bool = False) -> None:
        """Something was rendered; ``urgent`` sends it without waiting out the interval,
        ``save`` also saves the file then (a turn's end)."""
        self._save_now = self._save_now or save
        self._changed_at = time.monotonic()
        if self._unsaved and not (urgent or save) and not self.uses_editor():
            return  # the file's next save, already due, takes this too
        self._idle.clear()
        self._wake.set()
        if urgent or time.monotonic() - self._last_flush >= self.interval:
            self._hurry.set()
        if self._task is None or self._task.done():
            self._task = self._tasks.run(self._run(), f"streaming {self.path.name}")

    def opened(self) -> None:
        """The editor opened the document: what it lacks goes out now. The file it read
        may be older than the chat: a card drawn while it opened waits for the file's
        next save, and nothing else would wake the streamer to send it."""
        if self.text.dirty:
            self.changed(urgent=True)

    def draft_changed(self) -> None:
        """The user wrote in the prompt section: the file is saved with it when its save
        is due, so that quitting without saving keeps the draft too."""
        if not self.uses_editor():
            return
        self._unsaved = True
        self._changed_at = time.monotonic()
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = self._tasks.run(self._run(), f"streaming {self.path.name}")

    async def settled(self) -> None:
        """Wait until everything rendered so far has reached the editor or the disk."""
        await self._idle.wait()
        if self._unsaved and not self.uses_editor():
            async with self.lock:
                self._save()

    async def close(self) -> None:
        """Send what is left, then stop (the session was closed)."""
        await self.settled()
        if self._task is not None:
            self._task.cancel()

    async def _run(self) -> None:
        while True:
            if self._unsaved and not self._wake.is_set():
                # Nothing to send: wait for more, or until the file's save is due, or
                # until the stream pauses (a replay ends with no turn's end to say so).
                save_at = self._saved_at + self.save_interval
                paused_at = self._changed_at + LINGER * self.interval
                with contextlib.suppress(asyncio.TimeoutError):
                    await within(
                        max(min(save_at, paused_at) - time.monotonic(), 0.0), self._wake.wait()
                    )
                if not self._wake.is_set():
                    now = time.monotonic()
                    if now >= save_at or now >= self._changed_at + LINGER * self.interval:
                        async with self.lock:
                            self._save()
                continue
            await self._wake.wait()
            wait = self._last_flush + LINGER * self.interval - time.monotonic()
            if wait > 0 and not self._hurry.is_set():
                with contextlib.suppress(asyncio.TimeoutError):
                    await within(wait, self._hurry.wait())
            self._hurry.clear()
            self._wake.clear()
            try:
                await self.flush()
            except Exception:
                log.exception("could not update transcript %s", self.path)
            self._last_flush = time.monotonic()
            if not self._wake.is_set():
                self._idle.set()

    async def flush(self) -> None:
        async with self.lock:
            await self._flush()

    async def _flush(self) -> None:
        if not self.uses_editor():
            if not self.text.dirty:
                return
            if self._save_now or time.monotonic() - self._saved_at >= self.save_interval:
                self._save()
            else:  # written when the save is due: the journal holds it meanwhile
                self._unsaved = True
            return
        edit = self.text.take_pending()
        if edit is None:
            if self._save_now:  # a turn's end that drew nothing: its save is still due
                self._save()
            return
        assert self._apply_edit is not None
        if await self._apply_edit(self.uri, edit.start, edit.end, edit.new_text):
            self._unsaved = True
            if self._save_now or time.monotonic() - self._saved_at >= self.save_interval:
                self._save()
            return
        log.warning("the editor did not apply an edit to %s; writing the file", self.path)
        self.text.retry(edit)
        self.write_file()

    def write_file(self) -> None:
        """Write the transcript, keeping the draft the file already holds (to the disk
        for good at a turn's end)."""
        if self._write(self.section_on_disk(), durable=self._save_now):
            self._save_now = False
            self.text.mark_shown()

    def _save(self) -> None:
        """Save the file: what the editor shows, its prompt section as it is there now;
        when no editor shows it, what the file lacks (a failed save is tried again
        ``save_interval`` later)."""
        self._saved_at = time.monotonic()
        if not self.uses_editor():  # the file is the only copy: write what it lacks
            self._unsaved = False
            if self.text.dirty:
                self.write_file()
            return
        section = self._editor_section()
        section = self.section_on_disk() if section is None else section
        if self._write(section, durable=self._save_now):
            self._unsaved = self._save_now = False

    def save_section(self, section: str) -> None:
        """Save the file now with ``section`` as its prompt section (a sent draft
        cleared: a kill must not bring it back as a draft)."""
        self._saved_at = time.monotonic()
        if self._write(section, durable=True):
            self._unsaved = self._save_now = False

    def section_on_disk(self) -> str:
        """The prompt section the file holds, else an empty one."""
        return self.file.section() or prompt_section(self._context_lines())

    def _write(self, section: str, durable: bool) -> bool:
        try:
            self.file.write(section, durable)
        except OSError as exc:
            log.error("cannot write transcript %s: %s", self.path, exc)
            self._write_failed(self.path, exc)
            return False  # still dirty: the next flush tries again
        return True
