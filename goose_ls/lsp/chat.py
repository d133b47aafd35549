"""The chat for editors without a plugin: the current session, its transcript, its turns.

Commands and code actions call these; each returns once the work is done, and the
command handlers run them in the background so the editor is never blocked.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from goose_ls.files import atomic_write
from goose_ls.sessions.checkpoints import Change, review
from goose_ls.sessions.context import ContextItem, path_of

if TYPE_CHECKING:
    from goose_ls.lsp.server import GooseLanguageServer
    from goose_ls.lsp.transcripts import Transcript
    from goose_ls.sessions.session import Session


class NothingToSend(ValueError):
    pass


class EditorChat:
    def __init__(self, server: GooseLanguageServer) -> None:
        self._server = server
        self.current_session: str | None = None
        self.turns: set[str] = set()
        """Message ids of the turns started from the editor (they get progress and popups)."""

    async def transcript(self, new: bool = False, uri: str | None = None) -> Transcript:
        """The transcript at ``uri``, else the current chat's (a new chat if asked or none)."""
        if uri and (found := self._server.transcripts.by_uri(uri)):
            self.current_session = found.session_id
            return found
        if new or self.current_session is None:
            await self._server.settings_settled()
            sessions = self._server.sessions
            if new:
                session = await sessions.new_session()
            else:  # the first use: resume the workspace's last chat
                session, problem = await sessions.restore_last()
                if problem:
                    sessions.note(session, "warning", problem[0].upper() + problem[1:] + ".")
                    self._server.publisher.show(types.MessageType.Warning, f"goose: {problem}")
            self.current_session = session.session_id
        return self._server.transcripts.for_session(self.current_session)

    async def attach(
        self, items: list[ContextItem], new: bool = False, show: bool = True
    ) -> Transcript:
        """Add context to a chat's prompt section (shown as reference lines)."""
        transcript = await self.transcript(new=new)
        transcript.context.extend(items)
        await self._server.transcripts.rewrite_prompt_section(transcript, keep_draft=True)
        if show:
            await self._server.transcripts.show(transcript)
        return transcript

    async def ask_now(self, prompt: str, items: list[ContextItem], title: str) -> None:
        """Send a question with its context at once, and show the chat."""
        transcript = await self.transcript()
        self._start_turn(transcript, prompt, items, title)
        await self._server.transcripts.show(transcript)

    async def send(self, uri: str | None = None) -> None:
        """Send what the user wrote in the prompt section, with the context gathered there."""
        transcripts = self._server.transcripts
        transcript = await self.transcript(uri=uri)
        draft = transcripts.draft(transcript)
        if not draft and not transcript.context:
            raise NothingToSend(
                f"Write your message under “## You” at the end of {transcript.path.name} first."
            )
        items, transcript.context = transcript.context, []
        await transcripts.rewrite_prompt_section(transcript, keep_draft=False)
        self._start_turn(transcript, draft, items, draft.splitlines()[0][:40] if draft else "goose")
        await transcripts.show(transcript)

    async def open_session(self, session_id: str) -> None:
        """Resume a session (loading it if need be) and show its transcript."""
        await self._server.settings_settled()
        await self._server.sessions.load_session(session_id)
        self.current_session = session_id
        await self._server.transcripts.show(self._server.transcripts.for_session(session_id))

    async def _last_changes(self, uri: str | None) -> tuple[Transcript, Session, str]:
        """The chat at ``uri`` (or the current one), and its last turn that changed files."""
        transcript = await self.transcript(uri=uri)
        session = self._server.sessions.get(transcript.session_id)
        message_id = session.checkpoints.last_turn()
        if message_id is None:
            raise NothingToSend("the agent has changed no file through goose-ls in this chat")
        return transcript, session, message_id

    async def review(self, uri: str | None = None) -> None:
        """Show the last turn's changes of a chat as a diff document."""
        transcript, session, message_id = await self._last_changes(uri)
        text = review(message_id, session.checkpoints.turns[message_id])
        path = transcript.path.with_name(f"{transcript.path.stem}.review-{message_id[:8]}.md")
        atomic_write(path, text)
        await self._server.window_show_document_async(
            types.ShowDocumentParams(uri=path.as_uri(), take_focus=False)
        )

    async def revert_turn(self, uri: str | None = None) -> None:
        """Put back every file the chat's last turn changed (where nobody changed it since)."""
        _, session, message_id = await self._last_changes(uri)
        await self._revert(session, list(session.checkpoints.turns[message_id].items()))

    async def revert_file(self, uri: str) -> None:
        """Put back one file as it was before the last turn that changed it."""
        path = Path(path_of(uri)).resolve()  # noqa: ASYNC240 (a path, resolved once)
        for session in self._server.sessions.sessions.values():
            if (found := session.checkpoints.last_change(path)) is not None:
                await self._revert(session, [(path, found[1])])
                return
        raise NothingToSend(f"the agent has not changed {path.name} through goose-ls")

    async def _revert(self, session: Session, changes: list[tuple[Path, Change]]) -> None:
        tools = self._server.sessions.tools
        refused = [r for path, change in changes if (r := await tools.revert(path, change))]
        done = len(changes) - len(refused)
        message = f"reverted {done} of {len(changes)} file(s)" + "".join(f"; {r}" for r in refused)
        self._server.sessions.note(
            session, "warning" if refused else "info", message[0].upper() + message[1:] + "."
        )
        kind = types.MessageType.Warning if refused else types.MessageType.Info
        self._server.publisher.show(kind, f"goose: {message}")

    async def cancel(self, uri: str | None = None) -> bool:
        transcript = await self.transcript(uri=uri)
        return await self._server.sessions.cancel(transcript.session_id)

    def _start_turn(
        self, transcript: Transcript, prompt: str, items: list[ContextItem], title: str
    ) -> None:
        message_id = str(uuid.uuid4())
        self.turns.add(message_id)
        self._server.sessions.prompt(transcript.session_id, message_id, prompt, items)
        self._server.turn_progress.start(transcript.session_id, message_id, f"goose: {title}")
