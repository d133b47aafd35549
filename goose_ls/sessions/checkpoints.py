"""What each turn changed, whoever changed it: review and revert for any agent.

Two records meet here. goose-ls's own writes (``fs/write_text_file``) are kept in memory
per turn, with the text from before the first write: into an open buffer they never
reach the disk, so only this record knows them. Everything else is on disk: before a
turn's prompt goes out and after it ends, :class:`TurnCheckpoints` snapshots each
workspace root into a shadow git repository (:mod:`goose_ls.workspace.snapshots`), so a
file the agent's own tools or its commands changed is found as well, and the record
survives a restart. Review shows a turn's changes as diffs; revert puts the old content
back, but only where the file still holds what the turn left (anything else means
someone changed it since, and a revert would lose their work).
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from goose_ls.tasks import Tasks
from goose_ls.workspace.snapshots import ShadowRepo, SnapshotError, key

log = logging.getLogger(__name__)


@attrs.define
class Change:
    before: str | None
    """None: the turn created the file (or, when not ``kept``, its content is unknown)."""
    after: str | None
    """None: the turn removed the file."""
    kept: bool = True
    """False: the file was there but not text goose-ls could keep (binary, too big,
    unreadable, a link), so it cannot be put back."""
    on_disk: bool = False
    """The change is on disk (found by the turn's checkpoint), not only in a buffer."""


@attrs.define
class Checkpoints:
    """Per turn (message id), per file: the change the agent made through goose-ls."""

    turns: dict[str, dict[Path, Change]] = attrs.Factory(dict)
    started: dict[str, int] = attrs.Factory(dict)
    """When each turn wrote first (``time.time_ns``): orders them with the checkpoints."""

    def wrote(
        self, message_id: str, path: Path, before: str | None, after: str, kept: bool = True
    ) -> None:
        self.started.setdefault(message_id, time.time_ns())
        changes = self.turns.setdefault(message_id, {})
        if path in changes:
            changes[path].after = after
        else:
            changes[path] = Change(before, after, kept)

    def last_turn(self) -> str | None:
        return next(reversed(self.turns), None)

    def last_change(self, path: Path) -> tuple[str, Change] | None:
        for message_id in reversed(self.turns):
            if path in self.turns[message_id]:
                return message_id, self.turns[message_id][path]
        return None


NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(old: str, new: str, name: str, created: bool = False) -> str:
    """``old`` to ``new`` as a unified diff of the file ``name`` (3 lines of context).

    A last line without a newline is followed by git's marker: difflib ran it into the
    next line of the diff (``-    return a + b+    return a + b  # edited``). Lines are
    split at newlines only, as an editor splits them."""
    label = "/dev/null" if created else _label("a", name)
    lines = difflib.unified_diff(_lines(old), _lines(new), label, _label("b", name))
    return "".join(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}" for line in lines)


def _label(side: str, name: str) -> str:
    """``a/app.py`` for a path in the workspace; a path outside it stays as it is."""
    return name if Path(name).is_absolute() else f"{side}/{name}"


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [f"{line}\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def in_workspace(path: str, root: str | None) -> str:
    """``path`` relative to the workspace folder ``root`` when it is inside, else whole."""
    if root and Path(path).is_relative_to(root) and Path(path) != Path(root):
        return Path(path).relative_to(root).as_posix()
    return path


def diff(path: Path, change: Change, root: str | None = None) -> str:
    created = change.before is None and change.kept
    name = in_workspace(str(path), root)
    if change.after is None:
        return unified_diff(change.before or "", "", name).replace(
            f"+++ {_label('b', name)}\n", "+++ /dev/null\n", 1
        )
    return unified_diff(change.before or "", change.after, name, created)


def review(message_id: str, changes: dict[Path, Change], root: str | None = None) -> str:
    """A markdown document with one diff per changed file (named from ``root``, the
    chat's workspace folder)."""
    parts = [f"# goose: changes of turn {message_id}\n"]
    for path, change in changes.items():
        state = "created" if change.before is None else "changed"
        if change.after is None:
            state = "removed"
        if not change.kept:
            state = "replaced; its earlier content was not text goose-ls could keep"
        shown = in_workspace(str(path), root)
        body = diff(path, change, root) if change.kept else ""
        fence = "`" * max(3, _longest_backticks(body) + 1)
        parts.append(f"\n## `{shown}` ({state})\n\n{fence}diff\n{body}{fence}\n")
    if not changes:
        parts.append("\n_This turn changed no file._\n")
    return "".join(parts)


def _longest_backticks(text: str) -> int:
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


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
        roots: Callable[[], list[Path]],
        folder: Callable[[], Path],
        options: Callable[[], tuple[bool, list[str], int, int]],
        warn: Callable[[str], None],
        tasks: Tasks,
    ) -> None:
        self._roots = roots
        self._folder = folder
        self._options = options
        """(enabled, exclude, max file bytes, max files) from the settings."""
        self._warn = warn
        self._tasks = tasks
        self._repos: dict[Path, ShadowRepo] = {}
        self._before: dict[tuple[str, str], tuple[int, dict[Path, str]]] = {}
        """Turns running now: (session id, message id) → (start time, tree per root)."""
        self._warned: set[str] = set()
        self._lock = asyncio.Lock()
        self._ending: set[asyncio.Task[None]] = set()

    def _repo(self, root: Path) -> ShadowRepo:
        _, exclude, max_file_bytes, max_files = self._options()
        repo = self._repos.get(root)
        if repo is None:
            repo = self._repos[root] = ShadowRepo(root, self._folder())
        repo.exclude, repo.max_file_bytes, repo.max_files = exclude, max_file_bytes, max_files
        return repo

    async def _snapshot(self) -> dict[Path, str]:
        if not self._options()[0]:
            return {}
        trees: dict[Path, str] = {}
        async with self._lock:
            for root in self._roots():
                repo = self._repo(root)
                try:
                    trees[root] = await asyncio.to_thread(repo.snapshot)
                except SnapshotError as exc:
                    if str(exc) not in self._warned:
                        self._warned.add(str(exc))
                        self._warn(f"no turn checkpoint for {root}: {exc}")
                    log.warning("no snapshot of %s: %s", root, exc)
        return trees

    def warm(self) -> None:
        """Take a first snapshot in the background: the first of a big root hashes every
        file, and the first turn would wait for it."""
        self._tasks.run(self._snapshot(), "first checkpoint of the workspace")

    async def begin(self, session_id: str, message_id: str) -> None:
        """The turn's prompt is about to go out."""
        started = time.time_ns()
        self._before[(session_id, message_id)] = (started, await self._snapshot())

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
        name = f"{key(session_id)}/{started:020d}-{key(message_id)}"
        for root, tree in before.items():
            if root in after:
                repo = self._repo(root)
                try:
                    await asyncio.to_thread(repo.keep, f"{name}/before", tree)
                    await asyncio.to_thread(repo.keep, f"{name}/after", after[root])
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
            for changed in await asyncio.to_thread(repo.changes, before, after):
                path = root / changed.path
                old = await self._text(repo, changed.before) if changed.before else None
                new = await self._text(repo, changed.after) if changed.after else None
                kept = changed.regular and old is not False and new is not False
                changes[path] = Change(
                    old if isinstance(old, str) else None,
                    new if isinstance(new, str) else ("" if changed.after else None),
                    kept,
                    on_disk=True,
                )
        return changes

    @staticmethod
    async def _text(repo: ShadowRepo, blob: str) -> str | bool:
        """The blob as text, or False when it is not text."""
        data = await asyncio.to_thread(repo.read, blob)
        if b"\0" in data[:8192]:
            return False
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return False

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
        self, session_id: str, written: Checkpoints, path: Path | None = None
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
