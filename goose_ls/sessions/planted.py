"""Each turn's watch for protected paths it created unasked (:mod:`goose_ls.workspace.planted`).

The protected paths of the roots are noted before a turn's prompt goes out; after each
command goose-ls ran for it and at its end, a protected path that appeared since, and
that no card of the turn allowed, is set aside in the data dir, in the audit log, and
told in the chat. Checks of one session run one at a time, and a turn's first look waits
for the last turn's check: what a turn planted is never taken as where the next began.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from goose_ls.sessions.registry import Registry
from goose_ls.sessions.session import Session, Turn
from goose_ls.tasks import Tasks
from goose_ls.workspace.audit import AuditLog
from goose_ls.workspace.planted import protected_in, set_aside

log = logging.getLogger(__name__)


class PlantedPaths:
    def __init__(
        self,
        registry: Registry,
        audit: AuditLog,
        roots: Callable[[], list[Path]],
        extra: Callable[[], list[str]],
        into: Callable[[], Path],
        tasks: Tasks,
    ) -> None:
        self._registry = registry
        self._audit = audit
        self._roots = roots
        self._extra = extra
        self._into = into
        self._tasks = tasks
        self._known: dict[str, set[Path]] = {}
        """The protected paths each session's running turn started with (or allowed since)."""
        self._locks: dict[str, asyncio.Lock] = {}
        self._last: dict[str, asyncio.Task[None]] = {}

    async def before(self, session: Session) -> None:
        """Note the protected paths as the turn starts."""
        if (last := self._last.pop(session.session_id, None)) is not None:
            await asyncio.shield(last)
        async with self._lock(session.session_id):
            roots, extra = self._roots(), self._extra()
            self._known[session.session_id] = await asyncio.to_thread(protected_in, roots, extra)

    async def check(self, session: Session, turn: Turn) -> None:
        """Set aside what appeared since, unless a card of ``turn`` allowed it."""
        known = self._known.get(session.session_id)
        if known is None:
            return
        async with self._lock(session.session_id):
            roots, extra = self._roots(), self._extra()
            now = await asyncio.to_thread(protected_in, roots, extra)
            allowed = {Path(path) for path in turn.approved_paths}
            planted = sorted(now - known - allowed)
            if not planted:
                return
            folder, moved = await asyncio.to_thread(set_aside, planted, roots, self._into())
            self._known[session.session_id] = now - set(moved)
        for path in moved:
            self._audit.record(session.session_id, "created", str(path), "set aside", "goose-ls")
            log.warning("set aside %s, created without a yes, in %s", path, folder)
        if moved:
            names = ", ".join(str(path) for path in moved[:5])
            more = f" and {len(moved) - 5} more" if len(moved) > 5 else ""
            self._registry.note(
                session,
                "warning",
                f"This turn created {names}{more}: protected paths (editor, agent, shell or "
                f"git settings) that no card allowed. goose-ls moved them, unread, to {folder}; "
                "move them back if you want them.",
            )

    async def finish(self, session: Session, turn: Turn) -> None:
        """The turn's last look, before its end is told."""
        await self._final(session, turn)

    def after(self, session: Session, turn: Turn) -> None:
        """The turn ended without its last look (cancelled): look in the background (the
        session's next turn waits for it)."""
        if session.session_id in self._known:
            task = self._tasks.run(self._final(session, turn), "checking for planted paths")
            self._last[session.session_id] = task

    async def _final(self, session: Session, turn: Turn) -> None:
        try:
            await self.check(session, turn)
        finally:
            self._known.pop(session.session_id, None)

    def _lock(self, session_id: str) -> asyncio.Lock:
        return self._locks.setdefault(session_id, asyncio.Lock())
