"""One transcript document per session: a view of the journal, on disk and in the editor.

This is the chat for editors without a plugin: the conversation streams in above a
prompt section where the user writes the next message and gathers context. A transcript
is drawn from the session's journaled events when goose-ls first needs it (so a file
that is stale, edited or missing is drawn anew), then follows each new event; its file
is saved even while the editor shows it, so quitting without saving loses nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types
from pygls.workspace import TextDocument

from goose_ls.atomic_files import atomic_write
from goose_ls.events import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCall,
    TurnEnded,
)
from goose_ls.inert import agent_name, inert_line
from goose_ls.lsp.chat.prompt_sections import PromptSections, chips_in
from goose_ls.lsp.editor import EditorConnection
from goose_ls.lsp.positions import Position, advance
from goose_ls.lsp.transcript.editor_copy import TranscriptDocument
from goose_ls.lsp.transcript.outputs import OutputFiles
from goose_ls.lsp.transcript.render import Renderer
from goose_ls.lsp.transcript.session_transcript import Transcript
from goose_ls.lsp.transcript.streamer import TranscriptStreamer
from goose_ls.lsp.transcript.text import TranscriptText
from goose_ls.paths import data_dir
from goose_ls.sessions import IndexedEvent, SessionManager, events_of, safe_name
from goose_ls.settings import Settings
from goose_ls.tasks import Tasks, within
from goose_ls.tool_calls import ToolCalls

log = logging.getLogger(__name__)


REPLY_EVENTS = (AgentMessageChunk, AgentThoughtChunk, ToolCall)
"""What the agent shows of a reply; the first of each turn is sent at once."""


def headline(sandbox: str) -> str:
    """The sandbox in a few words, for a line under the title (``goose/status`` and
    doctor give it whole): its kind, and what a reader must not miss."""
    kind = sandbox.split(": ", 1)[0]
    warnings = [
        said
        for mark, said in (
            ("the editor opened none", "the editor opened no folder: it may write none"),
            ("NOT hidden", "some secrets NOT hidden"),
            ("UNSANDBOXED", "the agent runs as you do"),
        )
        if mark in sandbox
    ]
    return "; ".join([kind, *warnings])


class Transcripts:
    def __init__(
        self,
        editor: EditorConnection,
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
        self._showing: dict[str, asyncio.Lock] = {}
        """Per session: held while a ``window/showDocument`` of its transcript waits."""
        self.sections = PromptSections(editor, self.apply_edit)
        editor.follow_documents(self._document_of, self._open_uris)

    def _document_of(self, uri: str) -> TranscriptDocument | None:
        transcript = self._by_uri.get(uri)
        return transcript.document if transcript is not None else None

    def _open_uris(self) -> list[str]:
        return [uri for uri, t in self._by_uri.items() if t.document is not None]

    @property
    def directory(self) -> Path:
        return data_dir(self._settings().data_dir) / "transcripts"

    def path_for(self, session_id: str) -> Path:
        """Where a session's transcript lives (whether it exists or not)."""
        return (self.directory / f"{safe_name(session_id)}.md").resolve()

    def parts_of(self, session_id: str) -> list[Path]:
        """The earlier parts a long transcript moved out (``<session>.partN.md``), in order."""
        found = self.directory.glob(f"{safe_name(session_id)}.part*.md")
        return sorted(found, key=lambda part: (len(part.name), part.name))

    def get(self, session_id: str) -> Transcript | None:
        return self._by_session.get(session_id)

    def by_uri(self, uri: str) -> Transcript | None:
        return self._by_uri.get(uri)

    def _head(self, session_id: str) -> str:
        """The title, and where the agent runs: a reader of the file knows what it could
        reach while this chat went on."""
        sandbox = self._sessions.sandbox()
        where = f"> Agent sandbox: {headline(sandbox)}\n\n" if sandbox else ""
        # The agent chose the id too: on one line, inert (a newline in it forged a turn).
        return f"# {self.agent_of(session_id)} chat · {inert_line(session_id)}\n\n{where}"

    def for_session(self, session_id: str) -> Transcript:
        """The session's transcript, created (and written to disk) on first use."""
        existing = self._by_session.get(session_id)
        if existing is not None:
            return existing
        path = self.path_for(session_id)
        text = TranscriptText(self._head(session_id), self._editor.units)
        transcript: Transcript
        streamer = TranscriptStreamer(
            path.as_uri(),
            path,
            text,
            is_open=lambda: self._editor.is_open(path.as_uri()),
            apply_edit=self.apply_edit if self._editor.can_apply_edits() else None,
            interval=self._settings().transcript.edit_interval,
            save_interval=self._settings().transcript.save_interval,
            context_lines=lambda: transcript.context_lines,
            # The draft is saved as the editor has it, and only then (not while one of
            # its changes is held or came too late: the editor's own save is the truth).
            editor_section=lambda: (
                self.sections.section(transcript) if self._editor.in_step(transcript.uri) else None
            ),
            write_failed=self._editor.cannot_write,
            tasks=self._tasks,
        )
        renderer = Renderer(
            text,
            lambda: self._tool_calls(session_id),
            self._sessions.terminal_output,
            outputs=OutputFiles(
                path.parent.parent / "outputs" / path.stem, path.parent, self._editor.cannot_write
            ),
            root=lambda: self._cwd_of(session_id),
            agent=lambda: self.agent_of(session_id),
        )
        transcript = Transcript(
            session_id, path, text, renderer, streamer, root=self._cwd_of(session_id)
        )
        self._draw_history(transcript)
        streamer.write_file()
        self._sessions.set_transcript(session_id, str(path))
        self._by_session[session_id] = transcript
        self._by_uri[transcript.uri] = transcript
        if self._editor.is_open(transcript.uri):  # opened before its session was
            self._follow(transcript, self._editor.document(transcript.uri))
        return transcript

    def _draw_history(self, transcript: Transcript) -> None:
        """Render what the journal holds of the session (parts rotated out as they were)."""
        rows = self._sessions.history(transcript.session_id)
        with transcript.renderer.replaying():
            for row, event, subagent in events_of(rows):
                transcript.renderer.render(event, row.message_id, subagent)
                if isinstance(event, TurnEnded):
                    self._rotate_if_long(transcript)
        transcript.drawn_through = rows[-1].idx if rows else 0

    def _cwd_of(self, session_id: str) -> str | None:
        """The chat's workspace folder (its ACP ``cwd``), when known."""
        session = self._sessions.find(session_id)
        if session is not None:
            return session.cwd
        record = self._sessions.record(session_id)
        return record.cwd if record is not None else None

    def turn_at(self, transcript: Transcript, line: int, text: str) -> str | None:
        """The turn whose heading is ``line`` (its ``text`` as the editor has it), if any:
        a ``## `` line of the body, placed by goose-ls's own copy of it."""
        body_line = line - transcript.text.head_lines
        if not text.startswith("## ") or body_line < 0:
            return None
        lines = transcript.text.body.split("\n")
        if body_line >= len(lines) - 1 or lines[body_line] != text.rstrip("\r\n"):
            return None  # below the body, or not (yet) the line goose-ls drew there
        offset = sum(len(before) + 1 for before in lines[:body_line])
        return transcript.renderer.turn_at(offset)

    def agent_of(self, session_id: str) -> str:
        """The name the chat's agent gives itself (as the session store keeps it), inert
        and short: the agent chose it."""
        record = self._sessions.record(session_id)
        return agent_name(record.agent if record else None)

    def _tool_calls(self, session_id: str) -> ToolCalls | None:
        session = self._sessions.find(session_id)
        return session.tool_calls if session is not None else None

    async def close(self, session_id: str) -> None:
        """Write out a closed session's transcript and let it go (the file stays)."""
        transcript = self._by_session.pop(session_id, None)
        self._showing.pop(session_id, None)
        if transcript is not None:
            self._release(transcript)
            await transcript.streamer.close()

    def forget(self, session_id: str) -> None:
        """Stop following a deleted session's transcript (the session layer removes its
        files, parts and saved outputs with the session)."""
        transcript = self._by_session.pop(session_id, None)
        self._showing.pop(session_id, None)
        if transcript is not None:
            self._release(transcript)

    def event_recorded(self, event: IndexedEvent) -> None:
        transcript = self.for_session(event.session_id)
        if event.index <= transcript.drawn_through:
            return  # drawn from the journal already
        transcript.renderer.render(event.event, event.message_id, event.subagent)
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
        limit = self._settings().transcript.max_bytes
        # 1 to 4 bytes a character: most turns end without reading the whole body, and a
        # long one is moved without counting its bytes.
        if text.length * 4 <= limit:
            return
        body = text.body
        if text.length <= limit and len(body.encode("utf-8")) <= limit:
            return
        part = transcript.path.with_name(f"{transcript.path.stem}.part{transcript.parts + 1}.md")
        content = text.head + body
        try:
            if not _holds(part, content):
                atomic_write(part, content)
        except OSError as exc:
            self._editor.cannot_write(part, exc)
            return  # keep the conversation in the transcript rather than lose it
        transcript.parts += 1
        transcript.renderer.restart(f"_Earlier in this chat: [{part.name}]({part.name})_\n")

    async def show(self, transcript: Transcript, above: int | None = None) -> None:
        """Show the transcript, with the cursor where the user is to look: on the last
        line before body offset ``above`` when text is about to come there (it then
        grows below the cursor, never pushing it out of view), else on the last line,
        where the user writes. Shown at every call: the user may have left it.

        A transcript the editor does not have open opens beside the code; an open one
        is brought where the user is (Helix replaces the current view with it, Neovim
        goes to the window that shows it): another split would pile up at each call."""
        # One at a time: until the editor answers, it may not have told goose-ls that
        # it opened the file (a second request would then open another split, or put
        # the cursor past the end of the text the editor read).
        async with self._showing.setdefault(transcript.session_id, asyncio.Lock()):
            await self._show(transcript, above)

    async def _show(self, transcript: Transcript, above: int | None) -> None:
        streamer = transcript.streamer
        await streamer.flush()  # what is drawn (a card) is in the editor first
        # Under the lock no edit is on its way: the position is the one the editor
        # holds when it reads the request, and edits sent later come after it. Not
        # waiting for the stream to pause: a reply may stream for minutes.
        async with streamer.lock:
            opened = self._editor.is_open(transcript.uri)
            if not opened and (transcript.text.dirty or not transcript.path.exists()):
                streamer.write_file()  # the editor reads the file: all of it
            if above is None:
                at = self._last_line(transcript, opened)
            else:
                at = self._line_before(transcript, above)
            shown = self._editor.show_document(transcript.path, beside=not opened, at=at)
            log.info("showing %s at %d:%d", transcript.path.name, at.line + 1, at.character + 1)
        try:
            ok = await within(self._settings().transcript.apply_edit_timeout, shown)
        except asyncio.TimeoutError:
            log.warning("the editor did not answer window/showDocument for %s", transcript.path)
            return
        if not ok:
            self._editor.show(types.MessageType.Info, f"goose chat: {transcript.path}")

    def _last_line(self, transcript: Transcript, opened: bool) -> Position:
        """The start of the document's last line (where ``ge`` goes in Helix)."""
        if opened:
            end = self._editor.end_of(transcript.uri)
        else:
            section = transcript.streamer.section_on_disk()
            end = advance(Position(transcript.text.sentinel_line, 0), section, self._editor.units)
        return Position(end.line - 1 if end.character == 0 and end.line else end.line, 0)

    @staticmethod
    def _line_before(transcript: Transcript, offset: int) -> Position:
        """The start of the line that holds the body's character before ``offset``, as
        the editor (or the file) shows the body."""
        text = transcript.text
        offset = min(offset, text.shown.length)
        if offset == 0:
            return Position(max(text.head_lines - 1, 0), 0)
        return text.editor_position(Position(text.shown.position(offset - 1).line, 0))

    async def drawn(self, session_id: str) -> None:
        """Wait until what is rendered of a chat of this run is in the editor (or the
        file): a message about a card comes after the card, so a search finds it."""
        transcript = self._by_session.get(session_id)
        if transcript is not None:
            await transcript.streamer.flush()

    async def show_end(self, session_id: str, below_new_text: bool = False) -> None:
        """Show a chat of this run at its end (a card waiting for an answer is there);
        ``below_new_text``: on its last line now, so that what comes next goes below."""
        transcript = self._by_session.get(session_id)
        if transcript is not None:
            await self.show(transcript, transcript.text.length if below_new_text else None)

    # --- the editor's copy ------------------------------------------------------------
    def did_open(self, item: types.TextDocumentItem) -> bool:
        """The editor opened a document: True when it is a transcript (followed here)."""
        transcript = self._by_uri.get(item.uri)
        if transcript is not None:
            self._follow(transcript, TextDocument(item.uri, item.text, item.version))
        return transcript is not None

    def _follow(self, transcript: Transcript, opened: TextDocument) -> None:
        """Stream from what the editor really shows.

        The file may have been written again between the editor reading it and this
        notification; whatever differs is sent again from the first difference.
        """
        document = TranscriptDocument(transcript.text, opened.source, opened.version)
        self._editor.take_over(transcript.uri)
        transcript.document = document
        if document.sentinel_line is None:
            log.warning("transcript %s was changed above its prompt section", transcript.path)
            return
        document.follow_editor()
        transcript.streamer.opened()
        transcript.chips_shown = chips_in(document.prompt or "")

    def did_change(self, params: types.DidChangeTextDocumentParams) -> bool:
        """The editor changed a document: True when it is a transcript (followed here)."""
        uri = params.text_document.uri
        transcript = self._by_uri.get(uri)
        document = transcript.document if transcript is not None else None
        if document is None or transcript is None:
            return False
        draft = document.prompt
        if document.change(params.content_changes, params.text_document.version):
            log.info("%s differs from what goose-ls sent: sending it again", transcript.path)
            transcript.streamer.changed()
        if document.prompt != draft:
            transcript.streamer.draft_changed()
        return True

    def did_close(self, uri: str) -> bool:
        """The editor closed a transcript: the file on disk becomes the copy to update."""
        transcript = self._by_uri.get(uri)
        document = transcript.document if transcript is not None else None
        if document is not None:
            document.close()
        if transcript is not None:
            transcript.document = None
            transcript.streamer.write_file()
        return document is not None

    def _release(self, transcript: Transcript) -> None:
        """The session is gone: an open transcript becomes a plain document."""
        self._by_uri.pop(transcript.uri, None)
        if (document := transcript.document) is not None:
            transcript.document = None
            self._editor.hand_back(transcript.uri, document)
            document.close()

    # --- edits -------------------------------------------------------------------
    async def apply_edit(self, uri: str, start: Position, end: Position, new_text: str) -> bool:
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
