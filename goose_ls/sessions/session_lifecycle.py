"""A chat's life at the agent: new, opened again (resumed or loaded), closed, deleted.

A new chat is put in the mode it starts in (:mod:`.modes`); one opened again keeps the
mode the agent brings it back in, unless that agent forgets it.

An agent that advertises ``session/resume`` takes a chat back without replaying it; a
chat goose-ls has journaled is resumed there, its history read from the journal. Other
chats, and agents without resume, go through ``session/load`` and its replay, of which
only what the journal lacks is kept. Closing and deleting are forwarded to an agent that
advertises them; what goose-ls keeps is let go of whatever the agent answers.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from goose_ls.agent.interface import SessionOptions, SystemPrompt
from goose_ls.agent.presets import ForkPoint
from goose_ls.errors import AgentError, UnknownSession
from goose_ls.inert import inert_line
from goose_ls.sessions import forking
from goose_ls.sessions.checkpoints import TurnCheckpoints
from goose_ls.sessions.forking import ForkUnavailable
from goose_ls.sessions.images import Images, safe_name
from goose_ls.sessions.journal.library import SessionLibrary
from goose_ls.sessions.journal.records import events_of
from goose_ls.sessions.journal.retention import remove_files
from goose_ls.sessions.link import AgentLink
from goose_ls.sessions.modes import Modes
from goose_ls.sessions.reconcile import Reconciler
from goose_ls.sessions.registry import Registry
from goose_ls.sessions.session import Session
from goose_ls.sessions.turns import Turns
from goose_ls.workspace.terminals import Terminals

if TYPE_CHECKING:
    from goose_ls.agent.acp.connection import AgentConnection

log = logging.getLogger(__name__)


class Lifecycle:
    def __init__(
        self,
        registry: Registry,
        library: SessionLibrary,
        link: AgentLink,
        turns: Turns,
        modes: Modes,
        terminals: Terminals,
        folder: Path,
        cwd: str,
        warning: Callable[[str], None],
        checkpoints: TurnCheckpoints,
        images: Images,
    ) -> None:
        """``folder`` holds goose-ls's files (transcripts removed on delete); ``cwd`` is
        where sessions run; ``warning`` tells the user what the agent refused."""
        self._checkpoints = checkpoints
        self._images = images
        self._registry = registry
        self._library = library
        self._link = link
        self._turns = turns
        self._modes = modes
        self._terminals = terminals
        self._folder = folder
        self._cwd = cwd
        self._warning = warning

    async def new_session(self, cwd: str | None = None, tab_id: str | None = None) -> Session:
        conn = await self._link.connection()
        cwd = cwd or self._cwd
        prepared = await self._link.prompts.prepare(conn, cwd)
        session_id, options = await self._link.signed_in(
            conn, lambda: conn.new_session(cwd, prepared.prompt)
        )
        self._refuse_known(session_id, "session/new", conn.profile.title)
        self._library.hold(session_id)
        session = self._registry.open(session_id, cwd, conn.generation, tab_id=tab_id)
        session.options = options
        self._library.created(session_id, cwd, conn.profile.title)
        self._registry.flush_early(session)
        self._link.prompts.tell(session, prepared)
        await self._modes.start(session, conn)
        return session

    async def fork_session(
        self, source_id: str, message_id: str, tab_id: str | None = None
    ) -> Session:
        """A new chat with the history of ``source_id`` up to the end of its turn
        ``message_id``: forked at the agent, its history copied from the journal (the
        agent replays none). Raises :class:`ForkUnavailable` where the agent cannot fork
        it there (it has no fork, the chat is another agent's, or no fork point)."""
        self._library.flush()
        where = forking.cut(self._library.history(source_id), message_id)
        record = self._library.record(source_id)
        title = record.title if record is not None else source_id
        conn = await self._link.connection()
        profile = conn.profile
        if not profile.forks:
            raise ForkUnavailable(f"{profile.title} cannot fork chats")
        if record is not None and record.agent and record.agent != profile.title:
            raise ForkUnavailable(
                f"this chat is {record.agent}'s, and the agent running is {profile.title}"
            )
        point: str | int | None = None
        if not where.last_turn:
            if profile.fork_point is ForkPoint.AGENT_MESSAGE:
                point = where.agent_message
            elif profile.fork_point is ForkPoint.BEFORE_TIME:
                point = where.next_turn_at
            if point is None:
                raise ForkUnavailable(f"{profile.title} forks a chat only at its last turn")
        cwd = record.cwd if record is not None else self._cwd
        prepared = await self._link.prompts.prepare(conn, cwd)
        try:
            fork_id, options = await self._link.signed_in(
                conn, lambda: conn.fork_session(source_id, cwd, point, prepared.prompt)
            )
        except AgentError as exc:
            if exc.code is None:  # no answer (gone, timed out, unavailable): not a refusal
                raise
            # The agent refused this fork (a chat it no longer has, a cut point it does not
            # find): the summary still lets the user go on from there.
            raise ForkUnavailable(f"{profile.title} could not fork it there ({exc})") from exc
        self._refuse_known(fork_id, "session/fork", profile.title)
        self._library.hold(fork_id)
        session = self._registry.open(fork_id, cwd, conn.generation, tab_id=tab_id)
        session.options = options
        self._library.created(fork_id, cwd, profile.title)
        for row, event, subagent in events_of(where.rows):
            # Its images copied into its own folder: the parent's goes when it is deleted.
            event = self._images.forked(source_id, fork_id, event)
            self._registry.record(
                session, event, replay=True, message_id=row.message_id, subagent=subagent
            )
        self._library.rename(fork_id, f"{title} (fork)")
        self._registry.note(session, "info", f"Forked from “{title}” ({source_id}).")
        self._registry.flush_early(session)
        self._link.prompts.tell(session, prepared)
        await self._modes.reopened(session, conn)
        return session

    def _refuse_known(self, session_id: str, method: str, agent: str) -> None:
        """A chat the agent says it just made must be new here: taken under the id of one
        goose-ls has (open, or in the journal), its events would be written over that
        chat's history, and that chat renamed; under an id naming the same files as
        one's, it would share that chat's transcript and images."""
        if session_id in self._registry or self._library.record(session_id) is not None:
            raise AgentError(
                f"{agent} answered {method} with the id of a chat goose-ls has already "
                f"({inert_line(session_id)}): no chat was made, and that one is left as it was"
            )
        # Its files (transcript, outputs folder) are named by its id made safe: an id
        # that only differs from another's where that is ``_`` (``p/q``, ``p_q``), or in
        # case (a file system that ignores it), would share that chat's files: its history
        # written into that transcript, and deleting either deleting the other's images.
        name = safe_name(session_id).casefold()
        known = self._registry.ids() | {r.session_id for r in self._library.store.all()}
        for other in sorted(known):
            if safe_name(other).casefold() == name:
                raise AgentError(
                    f"{agent} answered {method} with an id whose files would be those of a "
                    f"chat goose-ls has ({inert_line(other)}): no chat was made, and that "
                    "one is left as it was"
                )

    async def load_session(self, session_id: str, tab_id: str | None = None) -> Session:
        """Open a stored (or agent-listed) session.

        What the journal holds of it is history already (``goose/replay`` and the
        transcript read it): an agent with ``session/resume`` sends none again, and of a
        ``session/load`` replay only what the journal lacks is kept. When the agent
        cannot take it back, a journaled chat still opens, to be read: a note says the
        agent has forgotten it.
        """
        if (session := self._registry.find(session_id)) is not None:
            session.tab_id = tab_id or session.tab_id
            return session
        conn = await self._link.connection()
        profile = conn.profile
        record = self._library.record(session_id)
        journaled = record is not None and self._library.first_index(session_id) > 0
        resumes = profile.session_capability("resume")
        if not (profile.load_session or resumes) and not journaled:
            raise AgentError(f"{profile.name} cannot load earlier sessions (no session/load)")
        self._library.hold(session_id)  # before anything: it may be open elsewhere
        cwd = record.cwd if record else self._cwd
        first = self._library.first_index(session_id)
        session = self._registry.open(session_id, cwd, conn.generation, first, tab_id)
        try:
            if resumes and (journaled or not profile.load_session):
                await self._reopen(conn, session, conn.resume_session)
            elif profile.load_session:
                self._expect_replay(session)
                await self._reopen(conn, session, conn.load_session)
            else:
                self._forgotten(session, f"{profile.name} cannot load earlier chats")
        except AgentError as exc:
            if not journaled:
                self._drop(session_id)
                raise
            self._forgotten(session, f"{profile.name} could not load it ({exc})")
        except BaseException:
            self._drop(session_id)
            raise
        self._library.created(session_id, cwd, profile.title)
        if session.forgotten is None:
            await self._modes.reopened(session, conn)
        return session

    def _expect_replay(self, session: Session) -> None:
        """The agent's replay is matched against what the journal holds of it."""
        history = self._library.history(session.session_id)
        session.history = Reconciler(
            event for _, event, subagent in events_of(history) if subagent is None
        )
        session.loading = True

    async def _reopen(
        self,
        conn: AgentConnection,
        session: Session,
        request: Callable[[str, str, SystemPrompt | None], Awaitable[SessionOptions]],
    ) -> None:
        try:
            prepared = await self._link.prompts.prepare(conn, session.cwd)
            session.options = await self._link.signed_in(
                conn, lambda: request(session.session_id, session.cwd, prepared.prompt)
            )
            self._registry.flush_early(session)
            self._link.prompts.tell(session, prepared)
        finally:
            session.loading = False
            session.history = None

    def _drop(self, session_id: str) -> None:
        self._registry.remove(session_id)
        self._library.release(session_id)

    def _forgotten(self, session: Session, why: str) -> None:
        session.forgotten = f"The agent has forgotten this chat: {why}"
        self._registry.note(
            session,
            "warning",
            f"{session.forgotten}. Its history above is goose-ls's own record; "
            "to go on, start a new chat.",
        )

    async def restore_last(self) -> tuple[Session, str | None]:
        """The workspace's last session, loaded; or a new one, with the reason why."""
        last = self._library.last_used(self._cwd)
        if last is None:
            return await self.new_session(), None
        try:
            session = await self.load_session(last)
        except AgentError as exc:
            reason = f"could not resume the last chat {last} ({exc}); started a new one"
            return await self.new_session(), reason
        if session.forgotten is None:
            return session, None
        await self.close_session(last)
        reason = f"could not resume the last chat {last} ({session.forgotten}); started a new one"
        return await self.new_session(), reason

    async def close_session(self, session_id: str) -> None:
        """Let go of an open session here, then at an agent that has ``session/close``
        (a failure there is only logged: nothing is left open here)."""
        session = self._registry.get(session_id)
        await self._turns.drop(session)
        self._terminals.release_session(session_id)
        self._drop(session_id)
        self._library.flush()
        # A long chat is a large graph of events with cycles: free it now, not whenever.
        gc.collect()
        conn = self._link.running  # an agent that is not running has it closed
        if conn is not None and conn.profile.session_capability("close"):
            await _told(conn.close_session(session_id), "session/close", session_id)

    async def delete_session(self, session_id: str) -> str | None:
        """Close the session if open and forget it here, then at an agent that has
        ``session/delete``. Returns the agent's failure (the user is told it too): the
        local copy is gone either way."""
        if session_id in self._registry:
            await self.close_session(session_id)
        record = self._library.forget(session_id)
        if record is None:
            raise UnknownSession(session_id)
        remove_files(self._folder, record.transcript_path)
        await self._checkpoints.forget([session_id])
        try:
            conn = await self._link.connection()  # the agent keeps its own copy
        except AgentError as exc:
            failure: str | None = str(exc)
        else:
            if not conn.profile.session_capability("delete"):
                return None
            failure = await _told(conn.delete_session(session_id), "session/delete", session_id)
        if failure is not None:
            self._warning(f"the chat {session_id} was deleted here, not at the agent: {failure}")
        return failure


async def _told(request: Awaitable[None], method: str, session_id: str) -> str | None:
    """Tell the agent of a session let go of here; its failure, logged."""
    try:
        await request
    except AgentError as exc:
        log.warning("%s %s failed: %s", method, session_id, exc)
        return str(exc)
    return None
