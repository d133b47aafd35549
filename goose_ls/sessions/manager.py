"""The session floor's face: builds its parts; list, rename, modes, restart.

It builds the floor's parts and hands each what it needs: the :class:`Registry` of open
sessions, :class:`Turns`, :class:`Permissions`, the agent's file and terminal tools, the
:class:`AgentLink` that reloads chats into a restarted agent, the :class:`Lifecycle`
that opens, closes and deletes them, and :class:`Recovery`. It is also what the agent
floor calls back (updates and permission requests).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from goose_ls import events
from goose_ls.agent.status import LOST, AgentState, AgentStatus
from goose_ls.agent.supervisor import AgentSupervisor
from goose_ls.errors import Refused, UnknownSession
from goose_ls.files import remove_stale_temps
from goose_ls.paths import data_dir
from goose_ls.sessions import listing
from goose_ls.sessions.asking import Waiting
from goose_ls.sessions.elicitations import Answer, Elicitations
from goose_ls.sessions.library import SessionLibrary
from goose_ls.sessions.lifecycle import Lifecycle
from goose_ls.sessions.link import AgentLink
from goose_ls.sessions.live import LiveBuffers
from goose_ls.sessions.modes import Modes
from goose_ls.sessions.permissions import Permissions
from goose_ls.sessions.planted import PlantedPaths
from goose_ls.sessions.recovery import Recovery
from goose_ls.sessions.registry import Registry
from goose_ls.sessions.retention import Limits, Retention
from goose_ls.sessions.session import IndexedEvent
from goose_ls.sessions.steering import Steering
from goose_ls.sessions.tools import AgentTools
from goose_ls.sessions.turn_changes import TurnCheckpoints
from goose_ls.sessions.turns import Turns
from goose_ls.sessions.unsaved import UnsavedFiles
from goose_ls.settings import Settings
from goose_ls.tasks import Tasks
from goose_ls.workspace.audit import AuditLog
from goose_ls.workspace.confinement import Confinement
from goose_ls.workspace.files import EditorFiles
from goose_ls.workspace.policy import Policy, Untrusted
from goose_ls.workspace.trust import PolicyTrust


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
        self.library = SessionLibrary(folder, listener.cannot_write, tasks, listener.warning)
        self.registry = Registry(self.library, listener.session_event)
        self.retention = Retention(
            self.library.store,
            lambda: Limits(self.settings.journal.max_age_days, self.settings.journal.max_bytes),
            self.registry.ids,
        )
        self.trust = PolicyTrust(folder / "trusted-policies.json", listener.cannot_write)
        waiting = Waiting()  # prompts of every kind count against one cap per session
        self.permissions = Permissions(
            self.registry,
            self._policy,
            AuditLog(folder / "audit.log", listener.cannot_write),
            self._confinement,
            waiting,
        )
        self.elicitations = Elicitations(self.registry, waiting, self.permissions.audit)
        self.planted = PlantedPaths(
            self.registry,
            self.permissions.audit,
            editor,
            lambda: self.tools.confinement().roots,
            lambda: self.settings.workspace.protected,
            lambda: data_dir(self.settings.data_dir) / "set-aside",
            tasks,
        )
        self.checkpoints = TurnCheckpoints(
            self.registry,
            lambda: self.tools.confinement().roots,
            lambda: data_dir(self.settings.data_dir) / "checkpoints",
            lambda: (
                self.settings.checkpoints.enabled,
                self.settings.checkpoints.exclude,
                self.settings.checkpoints.max_file_bytes,
                self.settings.checkpoints.max_files,
            ),
            lambda path: self.tools.confinement().secret_named(path) is not None,
            listener.warning,
            tasks,
        )
        self.retention.forgotten.append(self.checkpoints.forget)
        self.live = LiveBuffers(
            editor,
            self.registry,
            self.checkpoints.read_before,
            lambda: data_dir(self.settings.data_dir) / "conflicts",
            tasks,
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
            self.planted,
        )
        self.supervisor = AgentSupervisor(
            settings.agent, self, self.tools, cwd, self._agent_status, tasks
        )
        self.modes = Modes(self.registry, lambda: self.settings.agent)
        self.link = AgentLink(
            self.supervisor, self.registry, lambda: self.settings.agent, self.modes
        )
        self.turns = Turns(
            self.registry,
            self.link,
            (self.permissions, self.elicitations),
            self.library,
            self.planted,
            self.checkpoints,
            self.live,
            tasks,
            lambda: self.settings.agent,
            cwd,
            UnsavedFiles(
                editor,
                lambda: self.settings.workspace.max_read_bytes,
                lambda: data_dir(self.settings.data_dir),
            ),
        )
        self.steering = Steering(self.registry, self.link, tasks)
        self.lifecycle = Lifecycle(
            self.registry,
            self.library,
            self.link,
            self.turns,
            self.modes,
            self.tools.terminals,
            folder,
            cwd,
            listener.warning,
            self.checkpoints,
        )
        self.recovery = Recovery(self.registry, self.link, tasks)
        self._sandbox: str | None = None
        """The sandbox the agent last ran in (``goose/agentStatus``'s ``sandbox``)."""

    def update_settings(self, settings: Settings) -> None:
        """New settings; the agent ones apply from the agent's next start."""
        self.settings = settings
        self.supervisor.settings = settings.agent

    def _policy(self) -> tuple[Policy, str | None]:
        rules, protected = self.settings.policy.rules, self.settings.workspace.protected
        return Policy.load(self.cwd, rules, protected, self.trust)

    def _confinement(self) -> tuple[Confinement, str]:
        return self.tools.confinement(), self.settings.workspace.outside

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
        if isinstance(event, (events.ToolCall, events.ToolCallUpdate)) and event.status in (
            "completed",
            "failed",
        ):
            self.checkpoints.tool_finished(session_id, event.tool_call_id)

    async def request_permission(
        self,
        session_id: str,
        tool_call: events.ToolCallUpdate,
        options: list[events.PermissionOption],
        foreign: tuple[str, ...] = (),
    ) -> str | None:
        if not foreign:  # a foreign path's local namesake is another file: no diff
            tool_call = await self.tools.proposed(session_id, tool_call)
        return await self.permissions.request(session_id, tool_call, options, foreign=foreign)

    async def elicit(
        self, session_id: str, message: str, schema: dict[str, Any] | None, url: str | None
    ) -> Answer:
        return await self.elicitations.request(session_id, message, schema, url)

    def warning(self, message: str) -> None:
        self._listener.warning(message)

    def _agent_status(self, status: AgentStatus) -> None:
        if status.state in (AgentState.ERROR, AgentState.STOPPED):
            self.permissions.cancel()  # nobody can act on these any more; fail closed
            self.elicitations.cancel()
        error = status.reason if status.state is AgentState.ERROR else None
        crashed = error in LOST
        # In a crash loop the first crash and the giving up are announced, not each crash
        # (nor each time a server that went away is still unreachable).
        repeat = (crashed or error == "unreachable") and self.recovery.in_series
        self._listener.agent_status(status, announce=not repeat)
        if crashed:
            self.recovery.agent_died(status.message or "the agent stopped")
        if status.state is AgentState.RUNNING:
            self._sandbox_now(status.sandbox)

    def sandbox(self) -> str | None:
        """Where the agent's process runs now (``agent.sandbox``); None when goose-ls did
        not start it (a server's host decides) or it has not started yet."""
        return self.link.sandbox()

    def _sandbox_now(self, sandbox: str | None) -> None:
        """Tell every open chat when the agent comes back in another sandbox (settings
        changed under it, perhaps by a file the agent wrote): what a chat said at its
        top no longer holds."""
        before, self._sandbox = self._sandbox, sandbox
        if before is not None and sandbox != before:
            changed = f"The agent was started again in another sandbox: {sandbox or 'none'}."
            self.registry.note_all("warning", changed)

    # --- sessions ----------------------------------------------------------------
    async def list_sessions(self) -> list[dict[str, Any]]:
        """Local sessions merged with the agent's own list (when it has session/list)."""
        agent_side: list[dict[str, Any]] = []
        conn = await self.link.connection()
        if conn.profile.session_capability("list"):
            agent_side = await conn.list_sessions(self.cwd)
        return listing.merged(self.library.store, agent_side, self.registry.ids())

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
        session = self.registry.get(session_id)
        await self.modes.switch(session, await self.link.attach(session), mode_id)

    async def set_config_option(self, session_id: str, config_id: str, value: str | bool) -> None:
        session = self.registry.get(session_id)
        await self.modes.set_option(session, await self.link.attach(session), config_id, value)

    async def restart(self, server: bool = False) -> None:
        """Restart the agent now (even after goose-ls gave up) and load the open sessions;
        with ``server``, a new shared goose serve too (``agent.share``)."""
        self.recovery.reset()
        await self.supervisor.restart(server)
        await self.link.reload_open_sessions()

    async def signed_in_in_terminal(self, method_id: str) -> bool:
        """The user's terminal sign-in ``method_id`` exited 0: as ACP v1 asks, connect to
        the agent anew (the open sessions loaded into it). Whether it runs."""
        await self.link.terminal_method(method_id)
        await self.restart()
        return self.supervisor.status.state is AgentState.RUNNING

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
