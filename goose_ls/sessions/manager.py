"""The sessions layer's one entry: every operation the LSP layer may ask of it.

:class:`SessionManager` builds the layer's parts and hands each what it needs: the
:class:`Registry` of open sessions, :class:`Turns`, :class:`Permissions`, the agent's file
and terminal tools, the :class:`AgentLink` that reloads chats into a restarted agent, the
:class:`Lifecycle` that opens, closes and deletes them, and :class:`Recovery`. The parts
are its own (private); the LSP layer calls the methods below, and answers permission
requests and questions through :attr:`permissions` and :attr:`questions`, and follows
open buffers through :attr:`open_files`. It is also what the agent layer calls back
(updates and permission requests).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from goose_ls import events
from goose_ls.agent.auth import TerminalCommand
from goose_ls.agent.status import LOST, AgentState, AgentStatus
from goose_ls.agent.supervisor import AgentSupervisor
from goose_ls.atomic_files import remove_stale_temps
from goose_ls.errors import AgentError, Refused, UnknownSession
from goose_ls.paths import data_dir
from goose_ls.sessions import forking
from goose_ls.sessions.asking.elicitations import Answer, Elicitations, QuestionAnswers
from goose_ls.sessions.asking.permissions import PermissionAnswers, Permissions
from goose_ls.sessions.asking.waiting import WaitingLimit
from goose_ls.sessions.changes import Change
from goose_ls.sessions.checkpoints import TurnCheckpoints
from goose_ls.sessions.context import ContextItem, PromptImage
from goose_ls.sessions.forking import ForkUnavailable
from goose_ls.sessions.images import Images
from goose_ls.sessions.journal import chat_list
from goose_ls.sessions.journal.library import SessionLibrary
from goose_ls.sessions.journal.records import NEW_SESSION_TITLE, EventRow, SessionRecord
from goose_ls.sessions.journal.retention import Limits, Pruned, Retention
from goose_ls.sessions.journal.search import Hit
from goose_ls.sessions.link import AgentLink
from goose_ls.sessions.live import LiveBuffers, OpenFiles
from goose_ls.sessions.modes import Modes
from goose_ls.sessions.planted_watch import PlantedPaths
from goose_ls.sessions.recovery import Recovery
from goose_ls.sessions.registry import Registry, Severity
from goose_ls.sessions.send_now import Steering
from goose_ls.sessions.session import IndexedEvent, Session
from goose_ls.sessions.session_lifecycle import Lifecycle
from goose_ls.sessions.system_prompt import SystemPrompts
from goose_ls.sessions.tools import AgentTools
from goose_ls.sessions.turns import Turns, no_images
from goose_ls.sessions.unsaved import UnsavedFiles
from goose_ls.settings import Settings
from goose_ls.tasks import Tasks
from goose_ls.workspace.agent_files import EditorFiles
from goose_ls.workspace.audit import AuditLog
from goose_ls.workspace.confinement import Confinement
from goose_ls.workspace.policy import Policy, Untrusted
from goose_ls.workspace.trust import PolicyTrust

if TYPE_CHECKING:
    from goose_ls.agent.acp.connection import AgentConnection

log = logging.getLogger(__name__)


@attrs.frozen
class Forked:
    """A chat that goes on from a turn of another."""

    session: Session
    seed: str | None = None
    """None: forked at the agent, with its history. Else a new chat, and the summary of
    the turns up to there that its first message is to be (the user edits it)."""
    why: str | None = None
    """Why it is not a fork."""


class SessionListener(Protocol):
    """What the LSP layer provides: where events and agent states go."""

    def event_recorded(self, event: IndexedEvent) -> None: ...

    def agent_status(self, status: AgentStatus, announce: bool = True) -> None:
        """The agent's state changed; ``announce`` errors to the user (not a repeat crash)."""

    def cannot_write(self, path: Path, error: OSError) -> None:
        """One of goose-ls's files could not be written; the user should know."""

    def warning(self, message: str) -> None:
        """Something the user should hear once (the agent layer's setup warnings)."""

    async def session_gone(self, session_id: str, deleted: bool) -> None:
        """A chat was closed, or is being deleted (before its files go)."""


class SessionManager:
    def __init__(
        self,
        settings: Settings,
        cwd: str,
        listener: SessionListener,
        editor: EditorFiles,
        tasks: Tasks,
        workspace: str | None,
        folders: Callable[[], list[str]] = list,
    ) -> None:
        """``cwd`` is where sessions run; ``workspace`` the folder the agent is confined
        to (None when the editor opened none: its file and terminal requests are refused);
        ``folders`` the editor's other workspace folders, confined to as well."""
        self.settings = settings
        self.cwd = cwd
        self._listener = listener
        folder = data_dir(settings.data_dir)
        for leftovers in (folder, folder / "transcripts"):
            remove_stale_temps(leftovers)
        self._tasks = tasks
        self._library = SessionLibrary(folder, listener.cannot_write, tasks, listener.warning)
        self._registry = Registry(self._library, listener.event_recorded)
        self._retention = Retention(
            self._library.store,
            lambda: Limits(self.settings.journal.max_age_days, self.settings.journal.max_bytes),
            self._registry.ids,
        )
        self._trust = PolicyTrust(folder / "trusted-policies.json", listener.cannot_write)
        waiting = WaitingLimit()  # prompts of every kind count against one cap per session
        self._permissions = Permissions(
            self._registry,
            self._policy,
            AuditLog(folder / "audit.log", listener.cannot_write),
            self._confinement,
            waiting,
        )
        self._elicitations = Elicitations(self._registry, waiting, self._permissions.audit)
        self._planted = PlantedPaths(
            self._registry,
            self._permissions.audit,
            self._permissions.grants,
            editor,
            lambda: self._tools.confinement().roots,
            lambda: self.settings.protected_paths(),
            lambda: data_dir(self.settings.data_dir) / "set-aside",
            tasks,
        )
        self._checkpoints = TurnCheckpoints(
            self._registry,
            lambda: self._tools.confinement().roots,
            lambda: data_dir(self.settings.data_dir) / "checkpoints",
            lambda: (
                self.settings.checkpoints.enabled,
                self.settings.checkpoints.exclude,
                self.settings.checkpoints.max_file_bytes,
                self.settings.checkpoints.max_files,
            ),
            lambda path: self._tools.confinement().secret_named(path) is not None,
            listener.warning,
            tasks,
        )
        self._retention.forgotten.append(self._checkpoints.forget)
        self._live = LiveBuffers(
            editor,
            self._registry,
            self._checkpoints.read_before,
            lambda: data_dir(self.settings.data_dir) / "conflicts",
            tasks,
            lambda: self.settings.workspace.watch_after_turn,
        )
        self._tools = AgentTools(
            self._registry,
            self._permissions,
            self._permissions.audit,
            editor,
            lambda: self.settings,
            cwd,
            tasks,
            workspace,
            folders,
            self._planted,
        )
        self._images = Images(
            lambda: data_dir(self.settings.data_dir),
            lambda: self.settings.images.max_bytes,
            listener.cannot_write,
            self._tools.read_for_user,
        )
        self._accepting: dict[str, asyncio.Lock] = {}
        """Per session: held while a prompt's images are read, so prompts are accepted
        in the order they came."""
        self._supervisor = AgentSupervisor(
            settings.agent, self, self._tools, cwd, self._agent_status, tasks
        )
        self._modes = Modes(self._registry, lambda: self.settings.agent)
        prompts = SystemPrompts(
            lambda: self.settings.agent, self._tools.read_for_user, self._registry
        )
        self._link = AgentLink(
            self._supervisor, self._registry, lambda: self.settings.agent, self._modes, prompts
        )
        self._turns = Turns(
            self._registry,
            self._link,
            (self._permissions, self._elicitations),
            self._library,
            self._planted,
            self._checkpoints,
            self._live,
            tasks,
            lambda: self.settings.agent,
            cwd,
            UnsavedFiles(
                editor,
                lambda: self.settings.workspace.max_read_bytes,
                lambda: data_dir(self.settings.data_dir),
            ),
            self._images,
        )
        self._steering = Steering(self._registry, self._link, tasks, self._images)
        self._lifecycle = Lifecycle(
            self._registry,
            self._library,
            self._link,
            self._turns,
            self._modes,
            self._tools.terminals,
            folder,
            cwd,
            listener.warning,
            self._checkpoints,
            self._images,
        )
        self._recovery = Recovery(self._registry, self._link, tasks)
        self._sandbox: str | None = None
        """The sandbox the agent last ran in (``goose/agentStatus``'s ``sandbox``)."""

    def update_settings(self, settings: Settings) -> None:
        """New settings; the agent ones apply from the agent's next start."""
        self.settings = settings
        self._supervisor.settings = settings.agent

    def _policy(self) -> tuple[Policy, str | None]:
        rules, protected = self.settings.policy.rules, self.settings.protected_paths()
        return Policy.load(self.cwd, rules, protected, self._trust)

    def _confinement(self) -> tuple[Confinement, str]:
        return self._tools.confinement(), self.settings.workspace.outside

    def untrusted_policy(self) -> Untrusted | None:
        """The workspace policy file whose loosening rules wait for the user's trust."""
        return self._policy()[0].untrusted

    def trust_policy(self, file_digest: str) -> Path:
        """Trust the workspace policy file, if it still is what the user was shown."""
        untrusted = self.untrusted_policy()
        if untrusted is None or untrusted.digest != file_digest:
            raise Refused("the workspace policy changed or is trusted already; nothing trusted")
        self._trust.trust(untrusted.path, untrusted.digest)
        return untrusted.path

    # --- what the agent layer calls ------------------------------------------------
    def session_event(self, session_id: str, event: events.SessionEvent) -> None:
        shown_in, _ = self._registry.route(session_id)  # a subagent's: its session's
        # the bytes kept on disk, not here; only for a chat that is open
        event = self._images.event(shown_in, event, shown_in in self._registry)
        self._registry.session_event(session_id, event)
        if isinstance(event, (events.ToolCall, events.ToolCallUpdate)) and event.status in (
            "completed",
            "failed",
        ):
            self._checkpoints.tool_finished(shown_in, event.tool_call_id)

    async def request_permission(
        self,
        session_id: str,
        tool_call: events.ToolCallUpdate,
        options: list[events.PermissionOption],
        foreign: tuple[str, ...] = (),
    ) -> str | None:
        """A permission request, the session's or one of its subagents' (judged and
        asked as the session's, its card in the subagent's block)."""
        session_id, subagent = self._registry.route(session_id)
        tool_call = self._images.event(session_id, tool_call, session_id in self._registry)
        if not foreign:  # a foreign path's local namesake is another file: no diff
            tool_call = await self._tools.proposed(session_id, tool_call)
        return await self._permissions.request(
            session_id, tool_call, options, foreign=foreign, subagent=subagent
        )

    async def elicit(
        self,
        session_id: str,
        message: str,
        schema: dict[str, Any] | None,
        url: str | None,
        tool_call_id: str | None = None,
    ) -> Answer:
        """A question of the session's agent, or of one of its subagents."""
        session_id, subagent = self._registry.route(session_id)
        return await self._elicitations.request(
            session_id, message, schema, url, tool_call_id, subagent
        )

    def warning(self, message: str) -> None:
        self._listener.warning(message)

    def _agent_status(self, status: AgentStatus) -> None:
        if status.state in (AgentState.ERROR, AgentState.STOPPED):
            self._permissions.cancel()  # nobody can act on these any more; fail closed
            self._elicitations.cancel()
        error = status.reason if status.state is AgentState.ERROR else None
        crashed = error in LOST
        # In a crash loop the first crash and the giving up are announced, not each crash
        # (nor each time a server that went away is still unreachable).
        repeat = (crashed or error == "unreachable") and self._recovery.in_series
        self._listener.agent_status(status, announce=not repeat)
        if crashed:
            self._recovery.agent_died(status.message or "the agent stopped")
        if status.state is AgentState.RUNNING:
            self._sandbox_now(status.sandbox)

    def sandbox(self) -> str | None:
        """Where the agent's process runs now (``agent.sandbox``); None when goose-ls did
        not start it (a server's host decides) or it has not started yet."""
        return self._link.sandbox()

    def _sandbox_now(self, sandbox: str | None) -> None:
        """Tell every open chat when the agent comes back in another sandbox (settings
        changed under it, perhaps by a file the agent wrote): what a chat said at its
        top no longer holds."""
        before, self._sandbox = self._sandbox, sandbox
        if before is not None and sandbox != before:
            changed = f"The agent was started again in another sandbox: {sandbox or 'none'}."
            self._registry.note_all("warning", changed)

    # --- sessions ----------------------------------------------------------------
    async def list_sessions(self) -> list[dict[str, Any]]:
        """Local sessions merged with the agent's own list (when it has session/list)."""
        agent_side: list[dict[str, Any]] = []
        try:
            conn = await self._link.connection()
            if conn.profile.session_capability("list"):
                agent_side = await conn.list_sessions(self.cwd)
        except AgentError as exc:  # the journal's chats are listed all the same
            log.warning("listing the journal's chats only: %s", exc)
        return chat_list.merged(self._library.store, agent_side, self._registry.ids())

    def rename(self, session_id: str, title: str) -> None:
        try:
            self._library.rename(session_id, title)
        except KeyError:
            raise UnknownSession(session_id) from None
        if (session := self._registry.find(session_id)) is not None:
            # Tell the clients (the library knows it is no title of the agent's).
            record = self._library.record(session_id)
            self._registry.record(
                session, events.SessionInfo(title=record.title if record else title)
            )
        conn = self._link.running
        if conn is not None and conn.profile.renames:
            self._tasks.run(self._rename_at_agent(conn, session_id, title), "a chat renamed")

    @staticmethod
    async def _rename_at_agent(conn: AgentConnection, session_id: str, title: str) -> None:
        """The agent's own list shows the new title too (goosed: Desktop's chats)."""
        try:
            await conn.rename_session(session_id, title.strip()[:200] or NEW_SESSION_TITLE)
        except AgentError as exc:
            log.warning("the agent kept its own title for %s: %s", session_id, exc)

    async def set_mode(self, session_id: str, mode_id: str) -> None:
        session = self._registry.get(session_id)
        await self._modes.switch(session, await self._link.attach(session), mode_id)

    async def set_config_option(self, session_id: str, config_id: str, value: str | bool) -> None:
        session = self._registry.get(session_id)
        await self._modes.set_option(session, await self._link.attach(session), config_id, value)

    async def restart(self, server: bool = False) -> None:
        """Restart the agent now (even after goose-ls gave up) and load the open sessions;
        with ``server``, a new shared goose serve too (``agent.share``)."""
        self._recovery.reset()
        await self._supervisor.restart(server)
        await self._link.reload_open_sessions()

    async def signed_in_in_terminal(self, method_id: str) -> bool:
        """The user's terminal sign-in ``method_id`` exited 0: as ACP v1 asks, connect to
        the agent anew (the open sessions loaded into it). Whether it runs."""
        await self._link.terminal_method(method_id)
        await self.restart()
        return self._supervisor.status.state is AgentState.RUNNING

    async def shutdown(self) -> None:
        """Cancel every turn and stop the agent."""
        self._recovery.stop()
        self._retention.stop()
        for session in self._registry:
            await self._turns.drop(session)
        self._tools.terminals.release_all()
        self._library.release(*self._registry.ids())
        self._library.flush()
        await self._supervisor.stop()

    # --- the open chats ---------------------------------------------------------------
    def find(self, session_id: str) -> Session | None:
        """The open session, if it is open."""
        return self._registry.find(session_id)

    def get(self, session_id: str) -> Session:
        """The open session; :class:`UnknownSession` if it is not open."""
        return self._registry.get(session_id)

    def open_sessions(self) -> list[Session]:
        return list(self._registry)

    def open_ids(self) -> set[str]:
        return self._registry.ids()

    def note(self, session: Session, severity: Severity, text: str) -> None:
        """Tell the user something in a chat's stream (its transcript and plugins)."""
        self._registry.note(session, severity, text)

    # --- the journal ------------------------------------------------------------------
    def record(self, session_id: str) -> SessionRecord | None:
        """What the journal keeps of a chat, open or not."""
        return self._library.record(session_id)

    def send_journaled(self, send: Callable[[], None], size: int) -> bool:
        """Before each write to the editor (``send``, of ``size`` bytes): the events it
        carries are journaled first; True when the journal's writer thread took the
        write, to make it once they are."""
        return self._library.send_after(send, size)

    def history(self, session_id: str, after: int = 0) -> list[EventRow]:
        return self._library.history(session_id, after)

    def search(self, query: str, limit: int) -> list[Hit]:
        return self._library.search(query, limit)

    def last_used(self) -> str | None:
        """The workspace's last chat."""
        return self._library.last_used(self.cwd)

    def set_transcript(self, session_id: str, path: str) -> None:
        self._library.set_transcript(session_id, path)

    @property
    def journal_problem(self) -> str | None:
        """Why the journal could not be opened (chats are then kept in memory only)."""
        return self._library.problem

    async def prune(self, scheduled: bool = False) -> Pruned | None:
        """Prune the journal to its limits (None: it could not be opened)."""
        return await self._retention.prune(scheduled=scheduled)

    def warm(self) -> None:
        """Take each root's first snapshot now, in the background, so the first turn
        does not pay for it; sweep the checkpoints of chats the journal no longer has."""
        store = self._library.store
        self._checkpoints.warm(
            lambda: [r.session_id for r in store.all()] if store.usable else None
        )

    # --- opening and closing chats ------------------------------------------------------
    async def new_session(self, cwd: str | None = None, tab_id: str | None = None) -> Session:
        return await self._lifecycle.new_session(cwd, tab_id)

    async def load_session(self, session_id: str, tab_id: str | None = None) -> Session:
        return await self._lifecycle.load_session(session_id, tab_id)

    async def fork(self, session_id: str, message_id: str, tab_id: str | None = None) -> Forked:
        """A new chat that goes on from the end of turn ``message_id`` of ``session_id``:
        forked at the agent where it can, else started afresh with a summary of the turns
        up to there for the user to edit and send (``seed``), and a note saying why."""
        try:
            return Forked(await self._lifecycle.fork_session(session_id, message_id, tab_id))
        except ForkUnavailable as exc:
            why = str(exc)
        where = forking.cut(self._library.history(session_id), message_id)
        record = self._library.record(session_id)
        title = record.title if record is not None else session_id
        agent = (record.agent if record is not None else "") or "agent"
        session = await self._lifecycle.new_session(record.cwd if record else None, tab_id)
        self._registry.note(
            session,
            "info",
            f"Not a fork: {why}. This new chat starts with a summary of “{title}” up to "
            "that turn, in your message below: edit it, then send it.",
        )
        return Forked(session, forking.seed(where.rows, title, agent), why)

    async def restore_last(self) -> tuple[Session, str | None]:
        """The workspace's last chat, loaded (else a new one), and why not, if not."""
        return await self._lifecycle.restore_last()

    async def close_session(self, session_id: str) -> None:
        """Close an open chat (the agent lets it go; the journal keeps it)."""
        self._registry.get(session_id)
        await self._lifecycle.close_session(session_id)
        await self._listener.session_gone(session_id, deleted=False)

    async def delete_session(self, session_id: str) -> str | None:
        """Delete a chat here and at the agent; the agent's failure, if it failed."""
        await self._listener.session_gone(session_id, deleted=True)
        return await self._lifecycle.delete_session(session_id)

    # --- turns --------------------------------------------------------------------------
    def prompt(
        self,
        session_id: str,
        message_id: str,
        text: str,
        context: list[ContextItem],
        images: dict[str, PromptImage] | None = None,
    ) -> None:
        """Queue a prompt; it goes out when the chat's turn before it ends. ``images``:
        its image items as :meth:`read_images` read them."""
        self._turns.prompt(session_id, message_id, text, context, images)

    @contextlib.asynccontextmanager
    async def accepting(self, session_id: str) -> AsyncIterator[None]:
        """Held from reading a prompt's images to queueing it: prompts sent one after
        the other are queued in that order, whichever had images to read."""
        async with self._accepting.setdefault(session_id, asyncio.Lock()):
            yield

    async def read_images(
        self, session_id: str, context: list[ContextItem]
    ) -> dict[str, PromptImage]:
        """The bytes of the prompt's image items, read and checked; :class:`Refused`
        when one cannot be sent, or when the agent takes no images (then nothing is)."""
        if not any(item.type == "image" for item in context):
            return {}
        self._registry.get(session_id)
        conn = await self._link.connection()
        if not conn.profile.images:
            raise Refused(no_images(conn.profile.title))
        return await self._images.read(context)

    async def cancel(self, session_id: str, message_id: str | None = None) -> bool:
        return await self._turns.cancel(session_id, message_id)

    def forks(self) -> bool | None:
        """Whether the running agent forks chats (None: no agent runs yet to say)."""
        conn = self._link.running
        return conn.profile.forks if conn is not None else None

    def can_steer(self, session_id: str) -> bool:
        """Whether a message can go into the running turn (the agent takes it)."""
        return self._steering.possible(session_id)

    def steer_soon(self, session_id: str, message_id: str) -> None:
        self._steering.send_soon(session_id, message_id)

    async def steer_now(self, session_id: str, message_id: str | None = None) -> bool:
        return await self._steering.send_now(session_id, message_id)

    # --- asking the user ------------------------------------------------------------------
    @property
    def permissions(self) -> PermissionAnswers:
        """The agent's permission requests waiting for the user."""
        return self._permissions

    @property
    def questions(self) -> QuestionAnswers:
        """The agent's questions (elicitations) waiting for the user."""
        return self._elicitations

    # --- files ------------------------------------------------------------------------
    @property
    def open_files(self) -> OpenFiles:
        """Open buffers following what the agent writes on disk, and their conflicts."""
        return self._live

    async def last_changes(
        self, session: Session, path: Path | None = None
    ) -> tuple[str, dict[Path, Change]] | None:
        """The chat's last turn that changed files (``path``, when given) and what it
        changed, from its checkpoints and goose-ls's own writes."""
        return await self._checkpoints.last_changes(session.session_id, session.own_writes, path)

    async def revert(self, session: Session, changes: list[tuple[Path, Change]]) -> list[str]:
        """Put the files back as they were before the changes, where nobody changed them
        since; told in the chat. Why each file left alone was."""
        refused = [r for path, change in changes if (r := await self._tools.revert(path, change))]
        done = len(changes) - len(refused)
        message = f"reverted {done} of {len(changes)} file(s)" + "".join(f"; {r}" for r in refused)
        self.note(session, "warning" if refused else "info", message[0].upper() + message[1:] + ".")
        return refused

    def terminal_output(self, terminal_id: str) -> str | None:
        return self._tools.terminals.output_of(terminal_id)

    # --- the agent ----------------------------------------------------------------------
    @property
    def agent_status(self) -> AgentStatus:
        return self._supervisor.status

    def start_agent(self) -> None:
        """Start the agent now, in the background (``agent.start`` eager)."""
        self._supervisor.start_in_background()

    async def authenticate(self) -> bool:
        return await self._link.authenticate()

    async def logout(self) -> None:
        await self._link.logout()

    async def terminal_command(self, method_id: str) -> TerminalCommand:
        """The command a terminal sign-in runs (for the editor to run in a terminal)."""
        return await self._link.terminal_command(method_id)

    def stop_now(self) -> None:
        """goose-ls exits: keep what is known and let the chats go first (a window
        started at once can open them while this one waits for its agent to die), then
        kill the agent and its terminals."""
        self._library.flush()
        self._library.release(*self._registry.ids())
        self._supervisor.kill_now()
        self._tools.terminals.release_all()
        self._retention.stop()
