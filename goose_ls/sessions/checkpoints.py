"""What each turn changed on disk, whoever changed it: review and revert for any agent.

Most agents write with their own tools, in their own process, so goose-ls never sees
the write. Before a turn's prompt goes out, after each of its tool calls and when it
ends, :class:`TurnCheckpoints` snapshots each workspace root into a shadow git
repository (:mod:`goose_ls.workspace.snapshots`): what changed between two snapshots is
told in the chat under the tool call that ran meanwhile, and the turn's first and last
snapshots, kept under the chat's name, are what review and revert read, after a restart
too. goose-ls's own writes into open buffers never reach the disk; they come from the
session's in-memory record (:class:`~goose_ls.sessions.changes.OwnWrites`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from goose_ls import events
from goose_ls.sessions.changes import Change, OwnWrites, printable, unified_diff
from goose_ls.sessions.registry import Registry
from goose_ls.tasks import Tasks
from goose_ls.workspace.confinement import credential_in
from goose_ls.workspace.snapshots import Changed, ShadowRepo, SnapshotError, TooBig, key

log = logging.getLogger(__name__)

DISK_DIFF_LINES = 60
"""Lines of diff a tool call's disk changes show in the chat (the review shows all)."""


TOO_BIG_RETRY = 600.0
"""Seconds a root found too big for checkpoints is not looked at again."""
SWEEP_AFTER_NS = 86_400 * 10**9
"""A chat's checkpoints are swept once it is gone from the journal and its turn is older
than this (a day): a journal that reads short for a moment loses no recent turn."""


def _forgotten(ref: str, keys: set[str], now: int) -> bool:
    """Whether ``ref`` (``<chat key>/<time>-<turn key>/<side>``) is of a chat no longer
    in the journal, from a turn older than :data:`SWEEP_AFTER_NS`."""
    chat, _, rest = ref.partition("/")
    started = rest.partition("-")[0]
    return chat not in keys and started.isdigit() and now - int(started) > SWEEP_AFTER_NS


@attrs.frozen
class TurnRecord:
    """Where one turn's checkpoints are: per root, the trees before and after."""

    name: str
    """``<time_ns>-<message key>``: sorts in the order the turns started."""
    trees: dict[Path, tuple[str, str]]


class TurnCheckpoints:
    """Snapshots each workspace root before and after every turn (one shadow repository
    per root, in the data dir), and reads back what a turn changed on disk.

    A root that cannot be snapshotted (git missing, too many files) is told once and
    skipped: the turn runs anyway, and review shows goose-ls's own writes only."""

    def __init__(
        self,
        registry: Registry,
        roots: Callable[[], list[Path]],
        folder: Callable[[], Path],
        options: Callable[[], tuple[bool, list[str], int, int]],
        secret: Callable[[Path], bool],
        warn: Callable[[str], None],
        tasks: Tasks,
    ) -> None:
        self._registry = registry
        self._secret = secret
        self._roots = roots
        self._folder = folder
        self._options = options
        """(enabled, exclude, max file bytes, max files) from the settings."""
        self._warn = warn
        self._tasks = tasks
        self._repos: dict[Path, ShadowRepo] = {}
        self._before: dict[tuple[str, str], tuple[int, dict[Path, str]]] = {}
        """Turns running now: (session id, message id) → (start time, tree per root)."""
        self._last: dict[tuple[str, str], dict[Path, str]] = {}
        """Turns running now: the trees their last tool call's changes were told from."""
        self._warned: set[str] = set()
        self._skip: dict[Path, float] = {}
        """Roots too big to snapshot, until when (``time.monotonic``) they are skipped."""
        self._lock = asyncio.Lock()
        self._next: asyncio.Future[dict[Path, str]] | None = None
        """The snapshot the callers waiting now will share, once the running one ends."""
        self._telling = asyncio.Lock()
        """One tool call's changes at a time: each is told from where the last one ended."""
        self._ending: set[asyncio.Task[None]] = set()

    def _repo(self, root: Path) -> ShadowRepo:
        _, exclude, max_file_bytes, max_files = self._options()
        repo = self._repos.get(root)
        if repo is None:
            repo = self._repos[root] = ShadowRepo(root, self._folder())
        repo.exclude, repo.max_file_bytes, repo.max_files = exclude, max_file_bytes, max_files
        return repo

    async def _snapshot(self) -> dict[Path, str]:
        """The roots now. Callers that come while one snapshot is taken share the next
        one (it starts after they asked, so it sees what they need): twenty turns that
        start together cost two snapshots, not twenty."""
        if not self._options()[0]:
            return {}
        if self._next is None:
            # Kept by the server's tasks: the callers waiting on it may all be cancelled.
            self._next = self._tasks.run(self._take(), "checkpoint snapshot")
        return await asyncio.shield(self._next)

    async def _take(self) -> dict[Path, str]:
        trees: dict[Path, str] = {}
        async with self._lock:
            self._next = None  # who asks from now on waits for the one after this
            for root in self._roots():
                if time.monotonic() < self._skip.get(root, 0.0):
                    continue
                repo = self._repo(root)
                try:
                    trees[root] = await asyncio.to_thread(repo.snapshot)
                except SnapshotError as exc:
                    if isinstance(exc, TooBig):  # walking it again each time costs as much
                        self._skip[root] = time.monotonic() + TOO_BIG_RETRY
                    if str(exc) not in self._warned:
                        self._warned.add(str(exc))
                        self._warn(f"no turn checkpoint for {root}: {exc}")
                    log.warning("no snapshot of %s: %s", root, exc)
        return trees

    def warm(self, known: Callable[[], list[str] | None]) -> None:
        """Take a first snapshot in the background: the first of a big root hashes every
        file, and the first turn would wait for it. Then forget the checkpoints of chats
        the journal no longer has (``known``: its chats, None when it cannot be read;
        another window pruned them)."""

        async def warm() -> None:
            await self._snapshot()
            chats = known()
            if chats is None:
                return  # an unreadable journal forgets nothing
            keys = {key(session_id) for session_id in chats}
            for root in self._roots():
                repo = self._repo(root)
                try:
                    kept = await asyncio.to_thread(repo.kept, "")
                    gone = [ref for ref, _ in kept if _forgotten(ref, keys, time.time_ns())]
                    await asyncio.to_thread(repo.drop, gone)
                    if gone:
                        await asyncio.to_thread(repo.prune)
                except SnapshotError as exc:
                    log.warning("cannot sweep the checkpoints of %s: %s", root, exc)

        self._tasks.run(warm(), "first checkpoint of the workspace")

    async def begin(self, session_id: str, message_id: str) -> None:
        """The turn's prompt is about to go out."""
        started = time.time_ns()
        trees = await self._snapshot()
        self._before[(session_id, message_id)] = (started, trees)
        self._last[(session_id, message_id)] = trees

    def tool_finished(self, session_id: str, tool_call_id: str) -> None:
        """A tool call of a running turn completed or failed: what changed on disk since
        the last one is told under it (in the background; snapshots go one at a time)."""
        session = self._registry.find(session_id)
        if session is None or session.active is None:
            return
        turn = (session_id, session.active.message_id)
        if turn in self._last:
            self._tasks.run(self._tell(turn, tool_call_id), "changes on disk of a tool call")

    async def _tell(
        self, turn: tuple[str, str], tool_call_id: str | None, now: dict[Path, str] | None = None
    ) -> None:
        async with self._telling:
            await self._tell_now(turn, tool_call_id, now)

    async def _tell_now(
        self, turn: tuple[str, str], tool_call_id: str | None, now: dict[Path, str] | None
    ) -> None:
        last = self._last.get(turn)
        if last is None:
            return
        if now is None:
            now = await self._snapshot()
        self._last[turn] = {**last, **now}
        files = []
        for root, tree in now.items():
            if root in last and last[root] != tree:
                repo = self._repo(root)
                found = await asyncio.to_thread(repo.changes, last[root], tree)
                contents = await asyncio.to_thread(repo.read_all, found)
                files += [self._told(root, changed, contents) for changed in found]
        session = self._registry.find(turn[0])
        if files and session is not None:
            self._registry.record(session, events.DiskChanges(tool_call_id, files))

    def _told(self, root: Path, changed: Changed, contents: dict[str, bytes]) -> events.Json:
        """One file's change as the chat shows it (``contents``: of the blobs, by id)."""
        state = (
            "created"
            if changed.before is None
            else "removed"
            if changed.after is None
            else "changed"
        )
        old = contents.get(changed.before, b"") if changed.before else b""
        new = contents.get(changed.after, b"") if changed.after else b""
        path = root / changed.path
        text = {"path": printable(path), "state": state, "added": 0, "removed": 0, "diff": ""}
        if not changed.regular or self._secret(path) or credential_in(old) or credential_in(new):
            return text
        try:
            before, after = old.decode("utf-8"), new.decode("utf-8")
        except UnicodeDecodeError:
            return text
        if "\0" in before[:8192] or "\0" in after[:8192]:
            return text
        name = printable(Path(changed.path))
        lines = unified_diff(before, after, name, created=changed.before is None).splitlines(True)
        body = [line for line in lines[2:] if not line.startswith("@@")]
        text["added"] = sum(1 for line in body if line.startswith("+"))
        text["removed"] = sum(1 for line in body if line.startswith("-"))
        shown = lines[:DISK_DIFF_LINES]
        if len(lines) > DISK_DIFF_LINES:
            shown.append(
                f"… {len(lines) - DISK_DIFF_LINES} more lines: “Goose: Review turn” shows them\n"
            )
        text["diff"] = "".join(shown)
        return text

    def end_later(self, session_id: str, message_id: str) -> None:
        """The turn ended without :meth:`end` (cancelled): snapshot in the background (a
        review waits for it)."""
        if (session_id, message_id) not in self._before:
            return
        task = self._tasks.run(self.end(session_id, message_id), "checkpoint after a turn")
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    async def end(self, session_id: str, message_id: str) -> None:
        """The turn ended: snapshot again before its end is told (what the user changes
        after is not the turn's), and keep both under the session's name."""
        started, before = self._before.pop((session_id, message_id), (0, {}))
        if not before:
            return
        after = await self._snapshot()
        await self._tell((session_id, message_id), None, after)  # no tool call told them
        self._last.pop((session_id, message_id), None)
        name = f"{key(session_id)}/{started:020d}-{key(message_id)}"
        for root, tree in before.items():
            if root in after:
                repo = self._repo(root)
                try:
                    both = (f"{name}/after", after[root])
                    await asyncio.to_thread(repo.keep, f"{name}/before", tree, both)
                except SnapshotError as exc:
                    log.warning("cannot keep the checkpoint of %s: %s", root, exc)

    def running_before(self, root: Path) -> list[str]:
        """The trees of ``root`` from before each running turn, oldest first."""
        return [
            trees[root]
            for _, trees in sorted(self._before.values(), key=lambda b: b[0])
            if root in trees
        ]

    async def read_before(self, path: Path) -> bytes | None:
        """``path`` as the oldest running turn's checkpoint has it (None: not there)."""
        for root in self._roots():
            if path.is_relative_to(root):
                for tree in self.running_before(root)[:1]:
                    repo = self._repo(root)
                    relative = path.relative_to(root).as_posix()
                    try:
                        return await asyncio.to_thread(repo.read, f"{tree}:{relative}")
                    except SnapshotError:
                        return None
        return None

    async def turns(self, session_id: str) -> list[TurnRecord]:
        """The session's kept turns, oldest first."""
        if self._ending:
            await asyncio.wait(set(self._ending))
        found: dict[str, dict[Path, dict[str, str]]] = {}
        for root in self._roots():
            repo = self._repo(root)
            try:
                kept = await asyncio.to_thread(repo.kept, f"{key(session_id)}/")
            except SnapshotError:
                continue
            for ref, tree in kept:
                turn, _, side = ref.rpartition("/")
                found.setdefault(turn.split("/", 1)[1], {}).setdefault(root, {})[side] = tree
        return [
            TurnRecord(
                name, {r: (t["before"], t["after"]) for r, t in roots.items() if len(t) == 2}
            )
            for name, roots in sorted(found.items())
        ]

    async def changes(self, record: TurnRecord) -> dict[Path, Change]:
        """What the turn changed on disk: text before and after each file."""
        changes: dict[Path, Change] = {}
        for root, (before, after) in record.trees.items():
            repo = self._repo(root)
            found = await asyncio.to_thread(repo.changes, before, after)
            contents = await asyncio.to_thread(repo.read_all, found)
            for changed in found:
                path = root / changed.path
                data = [contents.get(b) or b"" for b in (changed.before, changed.after) if b]
                old = _text(contents.get(changed.before)) if changed.before else None
                new = _text(contents.get(changed.after)) if changed.after else None
                kept = changed.regular and old is not False and new is not False
                changes[path] = Change(
                    old if isinstance(old, str) else None,
                    new if isinstance(new, str) else ("" if changed.after else None),
                    kept,
                    on_disk=True,
                    hidden=self._secret(path) or any(credential_in(d) for d in data),
                    executable=changed.mode_before == "100755",
                )
        return changes

    async def forget(self, session_ids: list[str]) -> None:
        """The journal pruned or deleted these chats: their checkpoints go too."""
        prefixes = [f"{key(s)}/" for s in session_ids]
        for root in self._roots():
            repo = self._repo(root)
            try:
                refs = [
                    r
                    for r, _ in await asyncio.to_thread(repo.kept, "")
                    if r.startswith(tuple(prefixes))
                ]
                await asyncio.to_thread(repo.drop, refs)
                if refs:
                    await asyncio.to_thread(repo.prune)
            except SnapshotError as exc:
                log.warning("cannot forget checkpoints in %s: %s", root, exc)

    async def last_changes(
        self, session_id: str, written: OwnWrites, path: Path | None = None
    ) -> tuple[str, dict[Path, Change]] | None:
        """The newest turn of the session that changed files (that changed ``path``, when
        given), named by its message id (or its key, after a restart), with its changes:
        goose-ls's own writes, and what the checkpoints found on disk."""
        memory = {key(message_id): message_id for message_id in written.turns}
        candidates: dict[str, tuple[int, TurnRecord | None]] = {
            k: (written.started.get(m, 0), None) for k, m in memory.items()
        }
        for kept in await self.turns(session_id):
            started, _, turn_key = kept.name.partition("-")
            candidates[turn_key] = (int(started), kept)
        newest_first = sorted(candidates.items(), key=lambda c: c[1][0], reverse=True)
        for turn_key, (_, record) in newest_first:
            changes = dict(written.turns.get(memory.get(turn_key, ""), {}))
            if record is not None:
                changes.update(await self.changes(record))
            if path is not None:
                changes = {path: changes[path]} if path in changes else {}
            if changes:
                return memory.get(turn_key, turn_key), changes
        return None


def _text(data: bytes | None) -> str | bool:
    """A blob as text, or False when it is not text (or was not read: a link, a nested
    repository)."""
    if data is None or b"\0" in data[:8192]:
        return False
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return False
