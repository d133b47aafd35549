"""One transcript document per session: a view of the journal, on disk and in the editor.

This is the chat for editors without a plugin: the conversation streams in above a
prompt section where the user writes the next message and gathers context. A transcript
is drawn from the session's journaled events when goose-ls first needs it (so a file
that is stale, edited or missing is drawn anew), then follows each new event; its file
is saved even while the editor shows it, so quitting without saving loses nothing.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path

import attrs
from lsprotocol import types

from goose_ls.events import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCall,
    TurnEnded,
    event_from_wire,
)
from goose_ls.files import atomic_write
from goose_ls.lsp.editor import Editor
from goose_ls.lsp.transcript.outputs import OutputFiles
from goose_ls.lsp.transcript.render import Renderer
from goose_ls.lsp.transcript.streamer import TranscriptStreamer
from goose_ls.lsp.transcript.text import (
    Position,
    TranscriptText,
    draft_of,
    prompt_section,
    split_prompt,
)
from goose_ls.paths import data_dir
from goose_ls.sessions import ContextItem, IndexedEvent, SessionManager, path_of
from goose_ls.settings import Settings
from goose_ls.tasks import Tasks
from goose_ls.tool_calls import ToolCalls
from goose_ls.wire import WireError

log = logging.getLogger(__name__)


def context_line(item: ContextItem) -> str:
    if item.type == "selection":
        return f"> 📎 `{path_of(item.uri or '')}:{item.start_line}-{item.end_line}`"
    if item.type == "file":
        return f"> 📎 `{path_of(item.uri or '')}` (file)"
    return f"> 📎 {(item.text or '').splitlines()[0][:60] if item.text else 'text'}"


@attrs.define(eq=False)
class Transcript:
    session_id: str
    path: Path
    text: TranscriptText
    renderer: Renderer
    streamer: TranscriptStreamer
    context: list[ContextItem] = attrs.Factory(list)
    chips_shown: int = 0
    """How many context lines the prompt section shows now."""
    shown: bool = False
    """Whether ``window/showDocument`` was sent (it is sent once)."""
    drawn_through: int = 0
    """The last event index drawn from the journal when the transcript was made."""
    parts: int = 0
    """How many earlier parts (``<session>.partN.md``) the conversation has moved to."""
    answered: str | None = None
    """The last turn (message id) whose reply has started to show."""

    @property
    def uri(self) -> str:
        return self.path.as_uri()


def _safe(session_id: str) -> str:
    """A session id as a file name: anything but letters, digits, ``.`` and ``-`` as ``_``."""
    return re.sub(r"[^\w.-]", "_", session_id)


REPLY_EVENTS = (AgentMessageChunk, AgentThoughtChunk, ToolCall)
"""What the agent shows of a reply; the first of each turn is sent at once."""


class Transcripts:
    def __init__(
        self,
        editor: Editor,
        sessions: SessionManager,
        settings: Callable[[], Settings],
        tasks: Tasks,
    ) -> None:
        self._editor = editor
        self._sessions = sessions
        self._settings = settings
        self._tasks = tasks
        self._by_session: dict[str, Transcript] = {}
        self._by_uri: dict[str, Transcript] = {}

    @property
    def directory(self) -> Path:
        return data_dir(self._settings().data_dir) / "transcripts"

    def path_for(self, session_id: str) -> Path:
        """Where a session's transcript lives (whether it exists or not)."""
        return (self.directory / f"{_safe(session_id)}.md").resolve()

    def parts_of(self, session_id: str) -> list[Path]:
        """The earlier parts a long transcript moved out (``<session>.partN.md``), in order."""
        found = self.directory.glob(f"{_safe(session_id)}.part*.md")
        return sorted(found, key=lambda part: (len(part.name), part.name))

    def get(self, session_id: str) -> Transcript | None:
        return self._by_session.get(session_id)

    def by_uri(self, uri: str) -> Transcript | None:
        return self._by_uri.get(uri)

    def for_session(self, session_id: str) -> Transcript:
        """The session's transcript, created (and written to disk) on first use."""
        existing = self._by_session.get(session_id)
        if existing is not None:
            return existing
        path = self.path_for(session_id)
        text = TranscriptText(head=f"# goose chat · {session_id}\n\n")
        transcript: Transcript
        streamer = TranscriptStreamer(
            path.as_uri(),
            path,
            text,
            is_open=lambda: self._editor.is_open(path.as_uri()),
            apply_edit=self._apply_edit if self._editor.can_apply_edits() else None,
            units=self._editor.units,
            interval=self._settings().transcript.edit_interval,
            save_interval=self._settings().transcript.save_interval,
            context_lines=lambda: [context_line(c) for c in transcript.context],
            buffer_text=lambda: self._editor.buffer_text(path.as_uri()),
            write_failed=self._editor.cannot_write,
            tasks=self._tasks,
        )
        renderer = Renderer(
            text,
            lambda: self._tool_calls(session_id),
            self._sessions.tools.terminals.output_of,
            outputs=OutputFiles(
                path.parent.parent / "outputs" / path.stem, path.parent, self._editor.cannot_write
            ),
        )
        transcript = Transcript(session_id, path, text, renderer, streamer)
        self._draw_history(transcript)
        streamer.write_file()
        self._sessions.library.set_transcript(session_id, str(path))
        self._by_session[session_id] = transcript
        self._by_uri[transcript.uri] = transcript
        if self._editor.is_open(transcript.uri):  # left open by an earlier run
            self.opened(transcript.uri)
        return transcript

    def _draw_history(self, transcript: Transcript) -> None:
        """Render what the journal holds of the session (parts rotated out as they were)."""
        rows = self._sessions.library.history(transcript.session_id)
        with transcript.renderer.replaying():
            for row in rows:
                try:
                    event = event_from_wire(json.loads(row.payload))
                except (ValueError, WireError) as exc:
                    log.warning("journal event %s of %s skipped: %s", row.idx, row.session_id, exc)
                    continue
                transcript.renderer.render(event)
                if isinstance(event, TurnEnded):
                    self._rotate_if_long(transcript)
        transcript.drawn_through = rows[-1].idx if rows else 0

    def _tool_calls(self, session_id: str) -> ToolCalls | None:
        session = self._sessions.registry.find(session_id)
        return session.tool_calls if session is not None else None

    async def close(self, session_id: str) -> None:
        """Write out a closed session's transcript and let it go (the file stays)."""
        transcript = self._by_session.pop(session_id, None)
        if transcript is not None:
            self._by_uri.pop(transcript.uri, None)
            await transcript.streamer.close()

    def delete(self, session_id: str) -> None:
        """Forget a session's transcript and remove its files (parts included)."""
        transcript = self._by_session.pop(session_id, None)
        path = transcript.path if transcript else None
        if transcript is not None:
            self._by_uri.pop(transcript.uri, None)
        for candidate in [path, self.path_for(session_id), *self.parts_of(session_id)]:
            if candidate is not None:
                candidate.unlink(missing_ok=True)

    def session_event(self, event: IndexedEvent) -> None:
        transcript = self.for_session(event.session_id)
        if event.index <= transcript.drawn_through:
            return  # drawn from the journal already
        transcript.renderer.render(event.event)
        if isinstance(event.event, TurnEnded):
            self._rotate_if_long(transcript)
        first_reply = (
            isinstance(event.event, REPLY_EVENTS)
            and not event.replay
            and transcript.answered != event.message_id
        )
        if first_reply:
            transcript.answered = event.message_id
        # A turn's end goes out at once too, and to disk: the editor says it finished.
        ended = isinstance(event.event, TurnEnded)
        transcript.streamer.changed(urgent=first_reply or ended, save=ended)

    def _rotate_if_long(self, transcript: Transcript) -> None:
        """Move a long conversation to ``<session>.partN.md`` and link to it.

        Parts are numbered in the order the conversation reached them, so drawing the
        transcript again from the journal finds the same parts (written only if changed).
        """
        text = transcript.text
        if len(text.body.encode("utf-8")) <= self._settings().transcript.max_bytes:
            return
        part = transcript.path.with_name(f"{transcript.path.stem}.part{transcript.parts + 1}.md")
        content = text.head + text.body
        try:
            if not _holds(part, content):
                atomic_write(part, content)
        except OSError as exc:
            self._editor.cannot_write(part, exc)
            return  # keep the conversation in the transcript rather than lose it
        transcript.parts += 1
        transcript.renderer.restart(f"_Earlier in this chat: [{part.name}]({part.name})_\n")

    async def show(self, transcript: Transcript) -> None:
        """Open the transcript in the editor, once (another call would open another split)."""
        if transcript.shown:
            return
        transcript.shown = True
        await transcript.streamer.settled()
        if not transcript.path.exists():  # removed since it was made: draw it again
            transcript.streamer.write_file()
        if not await self._editor.show_document(transcript.path):
            self._editor.show(types.MessageType.Info, f"goose chat: {transcript.path}")

    def opened(self, uri: str) -> None:
        """The editor opened a transcript: stream from what it really shows.

        The file may have been written again between the editor reading it and this
        notification; whatever differs is sent again from the first difference.
        """
        transcript = self._by_uri.get(uri)
        if transcript is None:
            return
        parts = split_prompt(self._editor.document(uri).source)
        text = transcript.text
        above = parts[0] if parts else ""
        if not (above.startswith(text.head) and above.endswith("\n")):
            log.warning("transcript %s was changed above its prompt section", transcript.path)
            return
        shown = above[len(text.head) : -1]
        if shown != text.shown:
            text.shown = shown
            # A character prefix of two texts, not a path: commonprefix is what is wanted.
            text.dirty_from = len(os.path.commonprefix([shown, text.body]))  # noqa: RUF071
            transcript.streamer.changed()
        transcript.chips_shown = sum(
            1 for line in (parts[1].split("\n")[2:] if parts else []) if line.startswith("> 📎")
        )

    def closed(self, uri: str) -> None:
        """The editor closed a transcript: the file on disk becomes the copy to update."""
        transcript = self._by_uri.get(uri)
        if transcript is not None:
            transcript.streamer.write_file()

    # --- the prompt section ------------------------------------------------------
    def document_text(self, transcript: Transcript) -> str:
        if (text := self._editor.buffer_text(transcript.uri)) is not None:
            return text
        try:
            return transcript.path.read_text(encoding="utf-8")
        except OSError:
            return ""

    def draft(self, transcript: Transcript) -> str:
        parts = split_prompt(self.document_text(transcript))
        return draft_of(parts[1]) if parts else ""

    async def rewrite_prompt_section(self, transcript: Transcript, keep_draft: bool) -> None:
        """Show the current context lines, and keep or clear the draft under them."""
        # Under the streamer's lock the editor holds exactly ``text.shown`` above the
        # sentinel, so the section's lines are known even while a reply streams.
        async with transcript.streamer.lock:
            await self._rewrite_prompt_section(transcript, keep_draft)

    async def _rewrite_prompt_section(self, transcript: Transcript, keep_draft: bool) -> None:
        lines = [context_line(c) for c in transcript.context]
        if transcript.streamer.uses_editor():
            start = Position(transcript.text.sentinel_line + 2, 0)
            if keep_draft:
                end = Position(start.line + transcript.chips_shown, 0)
                new_text = "".join(f"{line}\n" for line in lines)
            else:
                end = self._editor.end_of(transcript.uri)
                new_text = "".join(f"{line}\n" for line in lines) + "\n"
            if await self._apply_edit(transcript.uri, start, end, new_text):
                transcript.chips_shown = len(lines)
                return
        draft = self.draft(transcript) if keep_draft else ""
        try:
            atomic_write(transcript.path, transcript.text.document(prompt_section(lines, draft)))
        except OSError as exc:
            self._editor.cannot_write(transcript.path, exc)
            return
        transcript.chips_shown = len(lines)

    # --- edits -------------------------------------------------------------------
    async def _apply_edit(self, uri: str, start: Position, end: Position, new_text: str) -> bool:
        timeout = self._settings().transcript.apply_edit_timeout
        problem = await self._editor.apply_edit(uri, start, end, new_text, timeout)
        if problem is None:
            return True
        self._editor.warn_once(
            f"applyEdit {uri}",
            f"goose: the editor did not apply an edit to {Path(uri).name} ({problem}); "
            "the chat is written to its file instead. Reopen it to see the latest.",
        )
        return False


def _holds(path: Path, content: str) -> bool:
    """Whether the file at ``path`` holds exactly ``content``."""
    try:
        return path.read_text(encoding="utf-8") == content
    except (OSError, UnicodeDecodeError):
        return False
