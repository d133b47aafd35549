"""What the agent asks goose-ls to do for it: read, write and run, inside the workspace.

Every path and terminal cwd goes through the confinement first; a refusal is a clear
error to the agent and a note in the session. Files open in the editor are read from
their buffers and written through the editor. goose-ls's own files (``.goose-ls/``, the
data dir) are never written for the agent, whatever a rule says: else it could grant
itself permissions. Protected files (they run code later) are written only when asked.

Every path the agent names, for a file or a terminal, passes the same checks here in the
same order.
"""

from __future__ import annotations

import asyncio
import functools
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import attrs

from goose_ls import events
from goose_ls.agent.interface import ClientRefusal
from goose_ls.paths import data_dir, own_folders
from goose_ls.sessions.asking.permissions import Permissions
from goose_ls.sessions.asking.proposed import with_diff
from goose_ls.sessions.changes import Change
from goose_ls.sessions.planted_watch import PlantedPaths
from goose_ls.sessions.registry import Registry
from goose_ls.settings import Settings
from goose_ls.tasks import Tasks
from goose_ls.tool_calls import merge
from goose_ls.workspace import agent_files, sandbox
from goose_ls.workspace.agent_files import EditorFiles, FileProblem
from goose_ls.workspace.agent_sandbox import Bounds, bounds_for
from goose_ls.workspace.audit import AuditLog
from goose_ls.workspace.confinement import (
    BadPath,
    Confinement,
    Denied,
    checked_spelling,
    credential_anywhere,
    roots_of,
)
from goose_ls.workspace.policy import protected_path
from goose_ls.workspace.protected import sandbox_patterns
from goose_ls.workspace.terminals import Terminal, Terminals, filter_env, line_of

OUTSIDE_OPTIONS = [
    events.PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    events.PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
]


class AgentTools:
    """Implements the agent layer's ``ClientTools`` for the sessions goose-ls holds."""

    def __init__(
        self,
        registry: Registry,
        permissions: Permissions,
        audit: AuditLog,
        editor: EditorFiles,
        settings: Callable[[], Settings],
        cwd: str,
        tasks: Tasks,
        workspace: str | None,
        folders: Callable[[], list[str]] = list,
        planted: PlantedPaths | None = None,
    ) -> None:
        """``folders``: the editor's other workspace folders (roots like ``extraRoots``);
        ``planted`` looks for protected paths a command created (after each one ends)."""
        self._registry = registry
        self._permissions = permissions
        self._audit = audit
        self._editor = editor
        self._settings = settings
        self._cwd = cwd
        self._workspace = workspace
        """The workspace folder; None when the editor opened none (nothing is allowed)."""
        self._folders = folders
        self._planted = planted
        self.terminals = Terminals(tasks)

    def confinement(self) -> Confinement:
        settings = self._settings().workspace
        roots = roots_of(self._workspace, [*settings.extra_roots, *self._folders()])
        return Confinement(roots, settings.secrets)

    def directories(self) -> list[str]:
        """Every root but the workspace: ``workspace.extraRoots`` and the editor's other
        folders, resolved (the agent is told of exactly what it is confined to)."""
        return [str(root) for root in dict.fromkeys(self.confinement().roots[1:])]

    async def sandbox_bounds(self) -> Bounds:
        settings = self._settings()
        own = own_folders(settings.data_dir)
        protected = sandbox_patterns(settings.protected_paths())
        confinement = self.confinement()
        return await asyncio.to_thread(bounds_for, confinement, protected, own, self._cwd)

    async def _check(self, session_id: str, path: str, action: str, kind: str) -> Path:
        try:
            return self.confinement().check(path)
        except BadPath as exc:
            raise ClientRefusal(ClientRefusal.INVALID, str(exc)) from None
        except Denied as exc:
            if exc.outside is not None and await self._ask_outside(
                session_id, exc.outside, action, kind
            ):
                return exc.outside
            raise self._refused(session_id, path, action, exc) from None

    def _refused(self, session_id: str, path: str, action: str, exc: Denied) -> ClientRefusal:
        return self.refusal(session_id, action, path, str(exc))

    def refusal(self, session_id: str, action: str, path: str, why: str) -> ClientRefusal:
        """Noted in the session, audited, and the error the agent gets."""
        self._registry.note_for(session_id, "warning", f"Refused to let the agent {action}: {why}.")
        self._audit.record(session_id, action.split(" ", 1)[0], path, "denied", "confinement")
        return ClientRefusal(ClientRefusal.DENIED, f"permission denied: {why}")

    def _refuse(self, session_id: str, path: str, why: str) -> ClientRefusal:
        self._registry.note_for(
            session_id, "warning", f"Refused to let the agent write {path}: {why}."
        )
        self._audit.record(session_id, "write", path, "denied", "confinement")
        return ClientRefusal(ClientRefusal.DENIED, f"permission denied: {path}: {why}")

    def _during_turn(self, session_id: str, what: str, action: str) -> None:
        """Files change and commands run only for a turn the user has running: not after
        they cancelled it (an agent may ignore the cancel), nor between turns, nor what
        they refused on a card of this turn (``what``: a resolved path or a shell line)."""
        session = self._registry.find(session_id)
        turn = session.active if session is not None else None
        if (
            turn is not None
            and not turn.cancelled
            and not self._permissions.grants.refused(turn, what)
        ):
            return
        if turn is None:
            why = "no turn of it is running"
        else:
            why = "its turn was cancelled" if turn.cancelled else "you refused it in this turn"
        self._registry.note_for(session_id, "warning", f"Refused to let the agent {action}: {why}.")
        self._audit.record(session_id, action.split(" ", 1)[0], what, "denied", "no turn")
        raise ClientRefusal(ClientRefusal.DENIED, f"permission denied: {action}: {why}")

    def _own(self, path: str) -> str | None:
        """Why ``path`` is goose-ls's own (its configuration or data), if it is."""
        resolved = Path(os.path.realpath(path))
        if any(part.casefold() == ".goose-ls" for part in resolved.parts):
            return "goose-ls's configuration (.goose-ls) is not the agent's to change"
        own = Path(os.path.realpath(data_dir(self._settings().data_dir)))
        if resolved == own or own in resolved.parents:
            return "goose-ls's data (sessions, audit log, transcripts) is not the agent's to change"
        return None

    async def _ask_protected(self, session_id: str, path: Path) -> None:
        """Writing a file that runs code later is asked (or allowed by a rule naming it)."""
        relative = protected_path(self._cwd, self._settings().protected_paths(), str(path))
        if relative is None:
            return
        session = self._registry.find(session_id)
        turn = session.active if session is not None else None
        granted = self._permissions.grants.of(turn).paths if turn is not None else []
        if str(path) in granted:  # the user allowed this very change on the agent's card
            granted.remove(str(path))
            return
        call = events.ToolCallUpdate(
            tool_call_id=f"goose-ls-{uuid.uuid4().hex[:8]}",
            title=f"write {relative} (a protected path)",
            kind="edit",
            locations=[{"path": str(path)}],
        )
        if await self._permissions.request(session_id, call, OUTSIDE_OPTIONS) != "allow_once":
            raise self._refuse(session_id, str(path), "a protected path, and not allowed")

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
        if text is not None:
            data = text.encode("utf-8", "replace")
            if what := credential_anywhere(lambda at, n: data[at : at + n], len(data)):
                denied = Denied(
                    f"{path} is a secret (it holds {what}); goose-ls does not hand those out"
                )
                raise self._refused(session_id, path, f"read {path}", denied)
            return agent_files.select_lines(text, line, limit)
        try:
            return await asyncio.to_thread(self._read_disk, resolved, line, limit)
        except Denied as exc:
            raise self._refused(session_id, path, f"read {path}", exc) from None
        except FileProblem as exc:
            code = ClientRefusal.NOT_FOUND if exc.not_found else ClientRefusal.INVALID
            raise ClientRefusal(code, str(exc)) from None

    async def read_for_user(self, path: str, cap: int) -> bytes:
        """A project file goose-ls sends on the user's behalf (an image their prompt
        attaches, the project's instruction file), read whole: confined as the agent's
        reads are (the roots, secrets by name and by content, hard links, no link followed
        on the way), goose-ls's own files refused, at most ``cap`` bytes. Raises
        :class:`FileProblem` (``too_big`` over the cap) or :class:`Denied` saying why not,
        and tells nobody."""
        try:
            checked_spelling(path)
        except BadPath as exc:
            raise FileProblem(str(exc)) from None
        if os.path.isabs(path) and self._own(path):
            raise Denied(f"{path} is one of goose-ls's own files; goose-ls does not send those")
        resolved = self.confinement().check(path)
        root = self.confinement().root_of(resolved)
        check = self._link_check()
        return await asyncio.to_thread(agent_files.read_bytes, resolved, root, cap, check)

    def _read_disk(self, path: Path, line: int | None = None, limit: int | None = None) -> str:
        cap = self._settings().workspace.max_read_bytes
        root = self.confinement().root_of(path)
        return agent_files.read_disk(path, root, line, limit, cap, self._link_check())

    def _link_check(self) -> agent_files.LinkCheck:
        """Refuses a file with a hard link outside the roots (unless the user allows it)."""
        confinement = self.confinement()
        outside_ok = self._settings().workspace.allow_hard_links

        def check_links(path: Path, stat: os.stat_result) -> None:
            confinement.check_links(path, stat, outside_ok)

        return check_links

    async def proposed(
        self, session_id: str, tool_call: events.ToolCallUpdate
    ) -> events.ToolCallUpdate:
        """``tool_call`` with the diff of the edit it asks for, against the file as the
        user sees it (only files the agent may read: a secret is never shown)."""
        session = self._registry.find(session_id)
        earlier = session.tool_calls.get(tool_call.tool_call_id) if session else None
        merged = merge(earlier, tool_call) if earlier else tool_call

        async def current(path: str) -> str | None:
            try:
                resolved = self.confinement().check(path)
            except Denied:
                return None
            return await self.current_text(resolved)

        content = await with_diff(merged, current)
        return attrs.evolve(tool_call, content=content) if content is not None else tool_call

    async def current_text(self, path: Path) -> str | None:
        """The file as the user sees it: the editor's buffer, else the disk (None: absent,
        or not text goose-ls reads)."""
        return (await self._before(path))[0]

    async def _write(self, path: Path, content: str) -> None:
        """Through the editor when the file is open, else to the disk, no link followed."""
        root = self.confinement().root_of(path)
        links = self._settings().workspace.allow_hard_links
        to_disk = functools.partial(agent_files.write_disk, path, root, content, links)
        await agent_files.write(self._editor, path, content, to_disk)

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        try:
            checked_spelling(path)  # before anything resolves it
        except BadPath as exc:
            raise ClientRefusal(ClientRefusal.INVALID, str(exc)) from None
        if os.path.isabs(path) and (why := self._own(path)):
            raise self._refuse(session_id, path, why)
        self._during_turn(session_id, path, f"write {path}")
        resolved = await self._check(session_id, path, f"write {path}", "edit")
        self._during_turn(session_id, str(resolved), f"write {path}")
        await self._ask_protected(session_id, resolved)
        before, kept = await self._before(resolved)
        try:
            await self._write(resolved, content)
        except Denied as exc:
            raise self._refused(session_id, path, f"write {path}", exc) from None
        except FileProblem as exc:
            raise ClientRefusal(ClientRefusal.INVALID, str(exc)) from None
        session = self._registry.find(session_id)
        if session is not None and session.active is not None:
            message_id = session.active.message_id
            session.own_writes.wrote(message_id, resolved, before, content, kept)
            # judged, asked where due: no planted path
            self._permissions.grants.of(session.active).approved.add(str(resolved))

    async def revert(self, path: Path, change: Change) -> str | None:
        """Put back the content from before the turn; returns why not, when it cannot."""
        if not change.kept:
            return f"{path} was not text goose-ls could keep before that turn; not reverted"
        if change.on_disk:
            return await self._revert_disk(path, change)
        now = await self.current_text(path)
        if now != change.after:
            return f"{path} changed since the agent wrote it; not reverted"
        try:
            if change.before is not None:
                await self._write(path, change.before)
            elif self._editor.buffer_text(path) is not None:
                return f"{path} was created in that turn and is open; close it, then delete it"
            else:
                root = self.confinement().root_of(path)
                await asyncio.to_thread(agent_files.remove_disk, path, root)
        except (FileProblem, Denied) as exc:
            return str(exc)
        return None

    async def _revert_disk(self, path: Path, change: Change) -> str | None:
        """A change found on disk: the disk goes back, and an open buffer that showed the
        turn's text follows it (one undo step)."""
        try:
            root = self.confinement().root_of(path)
        except Denied as exc:
            return str(exc)
        buffer = self._editor.buffer_text(path)
        try:
            disk: str | None = await asyncio.to_thread(self._read_disk, path)
        except FileProblem as exc:
            if not exc.not_found:
                return str(exc)
            disk = None
        except Denied as exc:
            return str(exc)
        if disk != change.after:
            return f"{path} changed since that turn; not reverted"
        if buffer is not None and buffer != change.after:
            return f"{path} has unsaved changes in the editor; not reverted"
        if change.before is None and buffer is not None:
            return f"{path} was created in that turn and is open; close it, then revert again"
        links = self._settings().workspace.allow_hard_links
        try:
            if change.before is None:
                await asyncio.to_thread(agent_files.remove_disk, path, root)
            else:
                # A file the turn removed comes back private: git kept no more of its
                # mode than whether it ran, and it may have been 0600.
                mode = 0o700 if change.executable else 0o600
                await asyncio.to_thread(
                    agent_files.write_disk, path, root, change.before, links, mode
                )
        except (FileProblem, Denied) as exc:
            return str(exc)
        if (
            buffer is not None
            and change.before is not None
            and (problem := await self._editor.sync_buffer(path, buffer, change.before))
        ):
            return f"{path} was reverted on disk, but its buffer was not ({problem})"
        return None

    async def _before(self, path: Path) -> tuple[str | None, bool]:
        """The file's text before a write, and whether it could be kept: absent is
        (None, True); there but binary, too big or unreadable is (None, False)."""
        text = self._editor.buffer_text(path)
        if text is not None:
            return text, True
        try:
            return await asyncio.to_thread(self._read_disk, path), True
        except FileProblem as exc:
            return None, exc.not_found
        except Denied:
            return None, False

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str],
        env: dict[str, str],
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> str:
        line = line_of(command, args)
        self._during_turn(session_id, line.strip(), f"run `{line}`")
        session = self._registry.find(session_id)
        where = cwd or (session.cwd if session else self._cwd)
        resolved = await self._check(session_id, where, f"run `{command}` in {where}", "execute")
        if not resolved.is_dir():
            raise ClientRefusal(ClientRefusal.INVALID, f"{where} is not a directory")
        settings = self._settings().terminal
        jail = sandbox.choose(settings.sandbox)
        if jail.refuses:
            self._refuse_run(session_id, line, f"terminal.sandbox is strict and {jail.problem}")
        unsandboxed = "" if jail.active else f" (UNSANDBOXED: {jail.describe()})"
        call = events.ToolCallUpdate(
            tool_call_id=f"goose-ls-{uuid.uuid4().hex[:8]}",
            title=f"Run `{line}` in {resolved}{unsandboxed}",
            kind="execute",
            raw_input={"command": line, "cwd": str(resolved)},
        )
        if why := await self._permissions.authorize_command(session_id, call):
            self._refuse_run(session_id, line, why)
        kept, dropped = filter_env(env, settings.allowed_env)
        if dropped:
            self._registry.note_for(
                session_id,
                "warning",
                f"Dropped {', '.join(dropped)} from the agent's environment for `{line}` "
                "(they can make it run other code; terminal.allowedEnv lets them through).",
            )
        confinement = self.confinement()
        covered = sandbox.Survey([], [])
        if jail.active:
            own = [Path(data_dir(self._settings().data_dir))]
            protected = sandbox_patterns(self._settings().protected_paths())
            covered = await asyncio.to_thread(sandbox.survey, confinement, _home(), protected, own)
        return await self.terminals.create(
            session_id,
            command,
            args,
            str(resolved),
            kept,
            output_byte_limit,
            (jail, confinement.roots, covered),
        )

    def _refuse_run(self, session_id: str, line: str, why: str) -> NoReturn:
        self._registry.note_for(session_id, "warning", f"Refused to run `{line}`: {why}.")
        raise ClientRefusal(ClientRefusal.DENIED, f"permission denied: `{line}` {why}")

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
        session = self._registry.find(session_id)
        if self._planted is not None and session is not None and session.active is not None:
            await self._planted.check(session, session.active)  # before the agent goes on
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


def _home() -> Path | None:
    try:
        return Path.home()
    except RuntimeError:
        return None
