"""What the agent asks goose-ls to do for it: read, write and run, inside the workspace.

Every path and terminal cwd goes through the confinement first; a refusal is a clear
error to the agent and a note in the session. Files open in the editor are read from
their buffers and written through the editor.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

from goose_ls import events
from goose_ls.agent.interface import ClientRefusal
from goose_ls.sessions.checkpoints import Change
from goose_ls.sessions.permissions import Permissions
from goose_ls.sessions.registry import Registry
from goose_ls.settings import Settings
from goose_ls.tasks import Tasks
from goose_ls.workspace import files
from goose_ls.workspace.audit import AuditLog
from goose_ls.workspace.confinement import Confinement, Denied
from goose_ls.workspace.files import EditorFiles, FileProblem
from goose_ls.workspace.terminals import Terminal, Terminals

OUTSIDE_OPTIONS = [
    events.PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    events.PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
]


class AgentTools:
    """Implements the agent floor's ``ClientTools`` for the sessions goose-ls holds."""

    def __init__(
        self,
        registry: Registry,
        permissions: Permissions,
        audit: AuditLog,
        editor: EditorFiles,
        settings: Callable[[], Settings],
        cwd: str,
        tasks: Tasks,
    ) -> None:
        self._registry = registry
        self._permissions = permissions
        self._audit = audit
        self._editor = editor
        self._settings = settings
        self._cwd = cwd
        self.terminals = Terminals(tasks)

    def confinement(self) -> Confinement:
        settings = self._settings().workspace
        return Confinement([self._cwd, *settings.extra_roots], settings.secrets)

    async def _check(self, session_id: str, path: str, action: str, kind: str) -> Path:
        try:
            return self.confinement().check(path)
        except Denied as exc:
            if exc.outside is not None and await self._ask_outside(
                session_id, exc.outside, action, kind
            ):
                return exc.outside
            self._registry.note_for(
                session_id, "warning", f"Refused to let the agent {action}: {exc}."
            )
            self._audit.record(session_id, action.split(" ", 1)[0], path, "denied", "confinement")
            raise ClientRefusal(ClientRefusal.DENIED, f"permission denied: {exc}") from None

    async def _ask_outside(self, session_id: str, path: Path, action: str, kind: str) -> bool:
        """With ``workspace.outside: ask``, the user (or the policy) decides."""
        if self._settings().workspace.outside != "ask":
            return False
        call = events.ToolCallUpdate(
            tool_call_id=f"goose-ls-{uuid.uuid4().hex[:8]}",
            title=f"{action} (outside the workspace)",
            kind=kind,
            locations=[{"path": str(path)}],
        )
        chosen = await self._permissions.request(session_id, call, OUTSIDE_OPTIONS)
        return chosen == "allow_once"

    async def read_text_file(
        self, session_id: str, path: str, line: int | None, limit: int | None
    ) -> str:
        resolved = await self._check(session_id, path, f"read {path}", "read")
        text = self._editor.buffer_text(resolved)
        if text is None:
            try:
                text = files.read_disk(resolved)
            except FileProblem as exc:
                code = ClientRefusal.NOT_FOUND if exc.not_found else ClientRefusal.INVALID
                raise ClientRefusal(code, str(exc)) from None
        return files.select_lines(text, line, limit)

    def current_text(self, path: Path) -> str | None:
        """The file as the user sees it: the editor's buffer, else the disk (None: absent)."""
        text = self._editor.buffer_text(path)
        if text is not None:
            return text
        try:
            return files.read_disk(path)
        except FileProblem:
            return None

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        resolved = await self._check(session_id, path, f"write {path}", "edit")
        before = self.current_text(resolved)
        try:
            await files.write(self._editor, resolved, content)
        except FileProblem as exc:
            raise ClientRefusal(ClientRefusal.INVALID, str(exc)) from None
        session = self._registry.find(session_id)
        if session is not None and session.active is not None:
            session.checkpoints.wrote(session.active.message_id, resolved, before, content)

    async def revert(self, path: Path, change: Change) -> str | None:
        """Put back the content from before the turn; returns why not, when it cannot."""
        now = self.current_text(path)
        if now != change.after:
            return f"{path} changed since the agent wrote it; not reverted"
        if change.before is None:
            if self._editor.buffer_text(path) is not None:
                return f"{path} was created in that turn and is open; close it, then delete it"
            path.unlink(missing_ok=True)  # noqa: ASYNC240 (one unlink)
            return None
        try:
            await files.write(self._editor, path, change.before)
        except FileProblem as exc:
            return str(exc)
        return None

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str],
        env: dict[str, str],
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> str:
        session = self._registry.find(session_id)
        where = cwd or (session.cwd if session else self._cwd)
        resolved = await self._check(session_id, where, f"run `{command}` in {where}", "execute")
        if not resolved.is_dir():
            raise ClientRefusal(ClientRefusal.INVALID, f"{where} is not a directory")
        return await self.terminals.create(
            session_id, command, args, str(resolved), env, output_byte_limit
        )

    async def terminal_output(
        self, session_id: str, terminal_id: str
    ) -> tuple[str, bool, tuple[int | None, str | None] | None]:
        terminal = self.terminal(session_id, terminal_id)
        status = terminal.status()
        exit_status = (status.exit_code, status.signal) if status else None
        return terminal.output, terminal.truncated, exit_status

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str
    ) -> tuple[int | None, str | None]:
        status = await self.terminal(session_id, terminal_id).wait()
        return status.exit_code, status.signal

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
        self.terminal(session_id, terminal_id).kill()

    async def release_terminal(self, session_id: str, terminal_id: str) -> None:
        self.terminal(session_id, terminal_id)  # refuses unknown ids
        self.terminals.release(session_id, terminal_id)

    def terminal(self, session_id: str, terminal_id: str) -> Terminal:
        try:
            return self.terminals.get(session_id, terminal_id)
        except KeyError:
            raise ClientRefusal(ClientRefusal.NOT_FOUND, f"no terminal {terminal_id}") from None
