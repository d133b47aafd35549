"""The session floor's face: open, load, list, close, delete, rename, modes, restart.

It builds the floor's parts and hands each what it needs: the :class:`Registry` of open
sessions, :class:`Turns`, :class:`Permissions`, the agent's file and terminal tools, the
:class:`AgentLink` that reloads chats into a restarted agent, and :class:`Recovery`. It is
also what the agent floor calls back (updates and permission requests).

Over 300 lines for now: each session request is a few lines of wiring here; resume,
delete and logout at the agent (ACP's newer methods) are where it splits, by request.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from goose_ls import events
from goose_ls.agent.status import AgentState, AgentStatus
from goose_ls.agent.supervisor import AgentSupervisor
from goose_ls.errors import AgentError, Refused, UnknownSession
from goose_ls.files import remove_stale_temps
from goose_ls.paths import data_dir
from goose_ls.sessions import listing
from goose_ls.sessions.library import SessionLibrary
from goose_ls.sessions.link import AgentLink
from goose_ls.sessions.permissions import Permissions
from goose_ls.sessions.reconcile import Reconciler
from goose_ls.sessions.records import events_of
from goose_ls.sessions.recovery import Recovery
from goose_ls.sessions.registry import Registry
from goose_ls.sessions.retention import Limits, Retention, remove_files
from goose_ls.sessions.session import IndexedEvent, Session
from goose_ls.sessions.tools import AgentTools
from goose_ls.sessions.turns import Turns
from goose_ls.settings import Settings
from goose_ls.tasks import Tasks
from goose_ls.workspace.audit import AuditLog
from goose_ls.workspace.files import EditorFiles
from goose_ls.workspace.policy import Policy, Untrusted
from goose_ls.workspace.trust import PolicyTrust

if TYPE_CHECKING:
    from goose_ls.agent.connection import AgentConnection

log = logging.getLogger(__name__)


class SessionListener(Protocol):
    """What the LSP floor provides: where events and agent states go."""

    def session_event(self, event: IndexedEvent) -> None: ...

    def agent_status(self, status: AgentStatus, announce: bool = True) -> None:
        """The agent's state changed; ``announce`` errors to the user (not a repeat crash)."""

    def cannot_write(self, path: Path, error: OSError) -> None:
        """One of goose-ls's files could not be written; the user should know."""

    def warning(self, message: str) -> None:
        """Something the user should hear once (the agent floor's setup warnings)."""


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
        self._folder = folder
        self.library = SessionLibrary(folder, listener.cannot_write, tasks)
        self.registry = Registry(self.library, listener.session_event)
        self.retention = Retention(
            self.library.store,
            lambda: Limits(self.settings.journal.max_age_days, self.settings.journal.max_bytes),
            self.registry.ids,
        )
        self.trust = PolicyTrust(folder / "trusted-policies.json", listener.cannot_write)
        self.permissions = Permissions(
            self.registry, self._policy, AuditLog(folder / "audit.log", listener.cannot_write)
        )
        self.tools = AgentTools(
            self.registry,
            self.permissions,
            self.permissions.audit,
            editor,
            lambda: self.settings,
            cwd,
            tasks,
            workspace,
            folders,
        )
        self.supervisor = AgentSupervisor(
            settings.agent, self, self.tools, cwd, self._agent_status, tasks
        )
        self.link = AgentLink(self.supervisor, self.registry, lambda: self.settings.agent)
        self.turns = Turns(
            self.registry,
            self.link,
            self.permissions,
            self.library,
            tasks,
            lambda: self.settings.agent,
            cwd,
        )
        self.recovery = Recovery(self.registry, self.link, tasks)

    def update_settings(self, settings: Settings) -> None:
        """New settings; the agent ones apply from the agent's next start."""
        self.settings = settings
        self.supervisor.settings = settings.agent

    def _policy(self) -> tuple[Policy, str | None]:
        rules, protected = self.settings.policy.rules, self.settings.workspace.protected
        return Policy.load(self.cwd, rules, protected, self.trust)

    def untrusted_policy(self) -> Untrusted | None:
        """The workspace policy file whose loosening rules wait for the user's trust."""
        return self._policy()[0].untrusted

    def trust_policy(self, file_digest: str) -> Path:
        """Trust the workspace policy file, if it still is what the user was shown."""
        untrusted = self.untrusted_policy()
        if untrusted is None or untrusted.digest != file_digest:
            raise Refused("the workspace policy changed or is trusted already; nothing trusted")
        self.trust.trust(untrusted.path, untrusted.digest)
        return untrusted.path

    # --- what the agent floor calls ------------------------------------------------
    def session_event(self, session_id: str, event: events.SessionEvent) -> None:
        self.registry.session_event(session_id, event)

    async def request_permission(
        self,
        session_id: str,
        tool_call: events.ToolCallUpdate,
        options: list[events.PermissionOption],
    ) -> str | None:
        tool_call = await self.tools.proposed(session_id, tool_call)
        return await self.permissions.request(session_id, tool_call, options)

    def warning(self, message: str) -> None:
        self._listener.warning(message)

    def _agent_status(self, status: AgentStatus) -> None:
        if status.state in (AgentState.ERROR, AgentState.STOPPED):
            self.permissions.cancel()  # nobody can act on these any more; fail closed
        crashed = status.state is AgentState.ERROR and status.reason == "crashed"
        # In a crash loop the first crash and the giving up are announced, not each crash.
        self._listener.agent_status(status, announce=not (crashed and self.recovery.in_series))
        if crashed:
            self.recovery.agent_died(status.message or "the agent stopped")

    # --- sessions ----------------------------------------------------------------
    async def new_session(self, cwd: str | None = None, tab_id: str | None = None) -> Session:
        conn = await self.link.connection()
        cwd = cwd or self.cwd
        session_id, options = await self.link.signed_in(conn, lambda: conn.new_session(cwd))
        self.library.hold(session_id)
        session = self.registry.open(session_id, cwd, conn.generation, tab_id=tab_id)
        session.options = options
        self.library.created(session_id, cwd, conn.profile.name)
        self.registry.flush_early(session)
        return session

    async def load_session(self, session_id: str, tab_id: str | None = None) -> Session:
        """Open a stored (or agent-listed) session.

        What the journal holds of it is history already (``goose/replay`` and the
        transcript read it); the agent's ``session/load`` replay adds only what the
        journal lacks. When the agent cannot load it, a journaled chat still opens, to
        be read: a note says the agent has forgotten it.
        """
        if (session := self.registry.find(session_id)) is not None:
            session.tab_id = tab_id or session.tab_id
            return session
        conn = await self.link.connection()
        record = self.library.record(session_id)
        journaled = record is not None and self.library.first_index(session_id) > 0
        if not conn.profile.load_session and not journaled:
            raise AgentError(f"{conn.profile.name} cannot load earlier sessions (no session/load)")
        self.library.hold(session_id)  # before anything: it may be open elsewhere
        cwd = record.cwd if record else self.cwd
        first = self.library.first_index(session_id)
        session = self.registry.open(session_id, cwd, conn.generation, first, tab_id)
        try:
            if conn.profile.load_session:
                await self._replay_from_agent(conn, session)
            else:
                self._forgotten(session, f"{conn.profile.name} cannot load earlier chats")
        except AgentError as exc:
            if not journaled:
                self.registry.remove(session_id)
                self.library.let_go(session_id)
                raise
            self._forgotten(session, f"{conn.profile.name} could not load it ({exc})")
        except BaseException:
            self.registry.remove(session_id)
            self.library.let_go(session_id)
            raise
        self.library.created(session_id, cwd, conn.profile.name)
        return session

    async def _replay_from_agent(self, conn: AgentConnection, session: Session) -> None:
        history = self.library.history(session.session_id)
        session.history = Reconciler(event for _, event in events_of(history))
        session.loading = True
        try:
            session.options = await self.link.signed_in(
                conn, lambda: conn.load_session(session.session_id, session.cwd)
            )
            self.registry.flush_early(session)
        finally:
            session.loading = False
            session.history = None

    def _forgotten(self, session: Session, why: str) -> None:
        session.forgotten = f"The agent has forgotten this chat: {why}"
        self.registry.note(
            session,
            "warning",
            f"{session.forgotten}. Its history above is goose-ls's own record; "
            "to go on, start a new chat.",
        )

    async def restore_last(self) -> tuple[Session, str | None]:
        """The workspace's last session, loaded; or a new one, with the reason why."""
        last = self.library.last_used(self.cwd)
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

    async def list_sessions(self) -> list[dict[str, Any]]:
        """Local sessions merged with the agent's own list (when it has session/list)."""
        agent_side: list[dict[str, Any]] = []
        conn = await self.link.connection()
        if conn.profile.session_capability("list"):
            agent_side = await conn.list_sessions(self.cwd)
        return listing.merged(self.library.store, agent_side, self.registry.ids())

    async def close_session(self, session_id: str) -> None:
        session = self.registry.get(session_id)
        await self.turns.drop(session)
        self.tools.terminals.release_session(session_id)
        self.registry.remove(session_id)
        self.library.let_go(session_id)
        self.library.flush()
        # A long chat is a large graph of events with cycles: free it now, not whenever.
        gc.collect()
        conn = self.supervisor.current
        if conn is not None and conn.profile.session_capability("close"):
            try:
                await conn.close_session(session_id)
            except AgentError as exc:
                log.warning("session/close %s failed: %s", session_id, exc)

    async def delete_session(self, session_id: str) -> None:
        """Close the session if open and forget it here (the agent keeps its own copy)."""
        if session_id in self.registry:
            await self.close_session(session_id)
        record = self.library.forget(session_id)
        if record is None:
            raise UnknownSession(session_id)
        remove_files(self._folder, record.transcript_path)

    def rename(self, session_id: str, title: str) -> None:
        try:
            self.library.rename(session_id, title)
        except KeyError:
            raise UnknownSession(session_id) from None
        if (session := self.registry.find(session_id)) is not None:
            # Tell the clients (the library knows it is no title of the agent's).
            record = self.library.record(session_id)
            self.registry.record(
                session, events.SessionInfo(title=record.title if record else title)
            )

    async def set_mode(self, session_id: str, mode_id: str) -> None:
        """Switch mode: through the ``mode`` config option when there is one (preferred)."""
        session = self.registry.get(session_id)
        conn = await self.link.attach(session)
        option = next(
            (o for o in session.options.config_options or [] if o.get("category") == "mode"), None
        )
        if option is not None:
            await self.set_config_option(session_id, str(option["id"]), mode_id)
        else:
            await conn.set_mode(session_id, mode_id)

    async def set_config_option(self, session_id: str, config_id: str, value: str | bool) -> None:
        session = self.registry.get(session_id)
        conn = await self.link.attach(session)
        options = await conn.set_config_option(session_id, config_id, value)
        if options != session.options.config_options:  # the agent did not send the update
            self.registry.record(session, events.ConfigOptions(config_options=options))

    async def restart(self) -> None:
        """Restart the agent now (even after goose-ls gave up) and load the open sessions."""
        self.recovery.reset()
        await self.supervisor.restart()
        await self.link.reload_open_sessions()

    async def shutdown(self) -> None:
        """Cancel every turn and stop the agent."""
        self.recovery.stop()
        self.retention.stop()
        for session in self.registry:
            await self.turns.drop(session)
        self.tools.terminals.release_all()
        self.library.let_go(*self.registry.ids())
        self.library.flush()
        await self.supervisor.stop()
