"""The chat for editors without a plugin: the current session, its transcript, its turns.

Commands and code actions call these; each returns once the work is done, and the
command handlers run them in the background so the editor is never blocked.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from lsprotocol import types

from goose_ls.atomic_files import atomic_write
from goose_ls.errors import Refused
from goose_ls.lsp.chat.progress import TurnProgress
from goose_ls.lsp.chat.transcript_documents import Transcripts
from goose_ls.lsp.editor import EditorConnection
from goose_ls.lsp.prompt_context import with_mentions
from goose_ls.lsp.transcript.session_transcript import Transcript
from goose_ls.sessions import (
    Change,
    ContextItem,
    Forked,
    PromptImage,
    Session,
    SessionManager,
    path_of,
    review,
)


class EditorChat:
    def __init__(
        self,
        editor: EditorConnection,
        sessions: SessionManager,
        transcripts: Transcripts,
        progress: TurnProgress,
        settled: Callable[[], Awaitable[None]],
    ) -> None:
        self._editor = editor
        self._sessions = sessions
        self._transcripts = transcripts
        self._progress = progress
        self._settled = settled
        """Waits (briefly) for the editor's settings, so the agent starts as configured."""
        self.current_session: str | None = None

    def session_gone(self, session_id: str) -> None:
        """The chat was closed or deleted: the next use resumes the workspace's last one."""
        if self.current_session == session_id:
            self.current_session = None

    async def transcript(self, new: bool = False, uri: str | None = None) -> Transcript:
        """The transcript at ``uri``, else the current chat's (a new chat if asked or none)."""
        if uri and (found := self._transcripts.by_uri(uri)):
            self.current_session = found.session_id
            return found
        if new or self.current_session is None:
            await self._settled()
            sessions = self._sessions
            if new:
                session = await sessions.new_session()
            else:  # the first use: resume the workspace's last chat
                session, problem = await sessions.restore_last()
                if problem:
                    sessions.note(session, "warning", problem[0].upper() + problem[1:] + ".")
                    self._editor.show(types.MessageType.Warning, f"goose: {problem}")
            self.current_session = session.session_id
        return self._transcripts.for_session(self.current_session)

    async def attach(
        self, items: list[ContextItem], new: bool = False, show: bool = True
    ) -> Transcript:
        """Add context to a chat's prompt section (shown as reference lines)."""
        transcript = await self.transcript(new=new)
        transcript.context.extend(items)
        await self._transcripts.sections.rewrite(transcript, keep_draft=True)
        if show:
            await self._transcripts.show(transcript)
        return transcript

    async def ask_now(self, prompt: str, items: list[ContextItem], title: str) -> None:
        """Send a question with its context at once, and show the chat."""
        transcript = await self.transcript()
        above = transcript.text.length  # the turn is drawn from here
        self._start_turn(transcript, prompt, items, title)
        await self._transcripts.show(transcript, above)

    async def send(self, uri: str | None = None) -> None:
        """Send what the user wrote in the prompt section, with the context gathered there."""
        transcripts = self._transcripts
        transcript = await self.transcript(uri=uri)
        await self._editor.caught_up(transcript.uri)  # what is sent is what the user sees
        draft = transcripts.sections.draft(transcript)
        if not draft and not transcript.context:
            raise Refused(
                f"Write your message under “## You” at the end of {transcript.path.name} first."
            )
        items = with_mentions(draft, transcript.context, Path(self._sessions.cwd))
        try:  # before the draft goes: a refused image leaves it as it was
            images = await self._sessions.read_images(transcript.session_id, items)
        except Refused as exc:
            if session := self._sessions.find(transcript.session_id):
                self._sessions.note(session, "warning", f"Not sent: {exc}")
            raise
        above = transcript.text.length
        # Accepted first: a refused message (a chat the agent forgot) stays the draft.
        self._start_turn(
            transcript, draft, items, draft.splitlines()[0][:40] if draft else "context", images
        )
        transcript.context = []
        await transcripts.sections.rewrite(transcript, keep_draft=False)
        if self._editor.cursor_rides_inserts() and self._editor.is_open(transcript.uri):
            return  # sent from the chat: the cursor there rides the reply in as it comes
        await transcripts.show(transcript, above)  # Helix: just above the new turn

    async def open_session(self, session_id: str) -> None:
        """Resume a session (loading it if need be) and show its transcript."""
        await self._settled()
        await self._sessions.load_session(session_id)
        self.current_session = session_id
        await self._transcripts.show(self._transcripts.for_session(session_id))

    async def fork(self, session_id: str, message_id: str) -> Forked:
        """A new chat that goes on from the end of a turn (see
        :meth:`SessionManager.fork`), shown; a summary to edit and send in its prompt
        section where the agent could not fork."""
        await self._settled()
        forked = await self._sessions.fork(session_id, message_id)
        self.current_session = forked.session.session_id
        transcript = self._transcripts.for_session(self.current_session)
        if forked.seed is not None:
            await self._transcripts.sections.start_with(transcript, forked.seed)
        await self._transcripts.show(transcript)
        return forked

    async def _last_changes(
        self, uri: str | None
    ) -> tuple[Transcript, Session, str, dict[Path, Change]]:
        """The chat at ``uri`` (or the current one), its last turn that changed files,
        and what that turn changed."""
        transcript = await self.transcript(uri=uri)
        session = self._sessions.get(transcript.session_id)
        found = await self._sessions.last_changes(session)
        if found is None:
            raise Refused("no turn of this chat changed a file in the workspace")
        return transcript, session, *found

    async def review(self, uri: str | None = None) -> None:
        """Show the last turn's changes of a chat as a diff document."""
        transcript, session, message_id, changes = await self._last_changes(uri)
        text = review(message_id, changes, session.cwd)
        path = transcript.path.with_name(f"{transcript.path.stem}.review-{message_id[:8]}.md")
        atomic_write(path, text)
        await self._editor.show_document(path)

    async def revert_turn(self, uri: str | None = None) -> None:
        """Put back every file the chat's last turn changed (where nobody changed it since)."""
        _, session, _, changes = await self._last_changes(uri)
        await self._revert(session, list(changes.items()))

    async def revert_file(self, uri: str) -> None:
        """Put back one file as it was before the last turn that changed it."""
        path = Path(path_of(uri)).resolve()  # noqa: ASYNC240 (a path, resolved once)
        for session in self._sessions.open_sessions():
            found = await self._sessions.last_changes(session, path)
            if found is not None:
                await self._revert(session, list(found[1].items()))
                return
        raise Refused(f"no turn of an open chat changed {path.name}")

    async def _revert(self, session: Session, changes: list[tuple[Path, Change]]) -> None:
        refused = await self._sessions.revert(session, changes)
        done = len(changes) - len(refused)
        message = f"reverted {done} of {len(changes)} file(s)" + "".join(f"; {r}" for r in refused)
        kind = types.MessageType.Warning if refused else types.MessageType.Info
        self._editor.show(kind, f"goose: {message}")

    async def cancel(self, uri: str | None = None) -> bool:
        transcript = await self.transcript(uri=uri)
        return await self._sessions.cancel(transcript.session_id)

    def _start_turn(
        self,
        transcript: Transcript,
        prompt: str,
        items: list[ContextItem],
        title: str,
        images: dict[str, PromptImage] | None = None,
    ) -> None:
        message_id = str(uuid.uuid4())
        agent = self._transcripts.agent_of(transcript.session_id)
        self._sessions.prompt(transcript.session_id, message_id, prompt, items, images)
        self._progress.start(transcript.session_id, message_id, f"{agent}: {title}")
