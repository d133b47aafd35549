"""The watch for protected paths the agent created unasked (:mod:`goose_ls.workspace.planted`).

goose-ls notes the protected paths of the roots before a turn's prompt goes out, after
each command it ran for the agent, and before a turn's end is told. A protected path
that appeared since the last look is set aside in the data dir, in the audit log, and
told in the chat, unless a card or a rule allowed it (or goose-ls wrote it after its
checks) or the user has it open in the editor. The last look of one turn is where the
next begins, whichever chat of this window it is in: what the agent's process left
running planted after its turn is set aside when the next turn starts.

Checks run one at a time; a turn's first look waits for the last turn's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from goose_ls.sessions.asking.grants import Grants
from goose_ls.sessions.registry import Registry
from goose_ls.sessions.session import Session, Turn
from goose_ls.tasks import Tasks
from goose_ls.workspace.agent_files import EditorFiles
from goose_ls.workspace.audit import AuditLog
from goose_ls.workspace.planted import protected_in, set_aside

log = logging.getLogger(__name__)


class PlantedPaths:
    def __init__(
        self,
        registry: Registry,
        audit: AuditLog,
        grants: Grants,
        editor: EditorFiles,
        roots: Callable[[], list[Path]],
        extra: Callable[[], list[str]],
        into: Callable[[], Path],
        tasks: Tasks,
    ) -> None:
        self._registry = registry
        self._audit = audit
        self._grants = grants
        self._editor = editor
        self._roots = roots
        self._extra = extra
        self._into = into
        self._tasks = tasks
        self._known: set[Path] | None = None
        """The protected paths at the last look (None: no look yet in this window)."""
        self._allowed: set[Path] = set()
        """Paths a card or a rule allowed changing, or goose-ls wrote, in this window."""
        self._lock = asyncio.Lock()
        self._last: asyncio.Task[None] | None = None

    async def before(self, session: Session) -> None:
        """The turn starts: what appeared while no turn ran is set aside too."""
        if (last := self._last) is not None:
            self._last = None
            await asyncio.shield(last)
        await self._look(session, None, "appeared while no turn of this chat ran")

    async def check(self, session: Session, turn: Turn) -> None:
        """After a command, and at the turn's end."""
        await self._look(session, turn, "this turn created")

    async def finish(self, session: Session, turn: Turn) -> None:
        """The turn's last look, before its end is told."""
        await self.check(session, turn)

    def after(self, session: Session, turn: Turn) -> None:
        """The turn ended without its last look (cancelled): look in the background (the
        next turn waits for it)."""
        self._last = self._tasks.run(self.check(session, turn), "checking for planted paths")

    async def _look(self, session: Session, turn: Turn | None, how: str) -> None:
        # What any running turn of this window was allowed (another chat may be mid-turn).
        running = [s.active for s in self._registry if s.active is not None]
        for allowed in (turn, *running):
            if allowed is not None:
                self._allowed.update(Path(path) for path in self._grants.approved(allowed))
        async with self._lock:
            roots, extra = self._roots(), self._extra()
            now = await asyncio.to_thread(protected_in, roots, extra)
            known, self._known = self._known, now
            if known is None:
                return
            kept = self._allowed | set(self._editor.open_files())
            planted = sorted(now - known - kept)
            if not planted:
                return
            moved = await asyncio.to_thread(set_aside, planted, roots, self._into())
            self._known = now - {path for path, _ in moved}
        self._tell(session, how, moved)

    def _tell(self, session: Session, how: str, moved: list[tuple[Path, Path]]) -> None:
        for path, where in moved:
            self._audit.record(session.session_id, "created", str(path), "set aside", "goose-ls")
            log.warning("set aside %s, created without a yes, as %s", path, where)
        if not moved:
            return
        names = ", ".join(str(path) for path, _ in moved[:5])
        more = f" and {len(moved) - 5} more" if len(moved) > 5 else ""
        (first, where), *_ = moved
        self._registry.note(
            session,
            "warning",
            f"Protected paths (editor, agent, shell or git settings) that no card allowed "
            f"{how}: {names}{more}. goose-ls moved them, unread, out of the workspace "
            f"({first.name} is now {where}); move them back if you want them.",
        )
