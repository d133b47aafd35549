"""What turn checkpoints and the disk watch cost, on a workspace of 10,000 files.

``checkpoints``: snapshots taken with :class:`ShadowRepo` directly (the first, cold; then
with nothing, 1 and 100 files changed) against ``git add -A && git write-tree`` in a plain
repository of the same tree, and the first against ``cp -r`` of the tree; the review of
a turn that changed 3 (and 100) files against ``git diff-tree -p``; and, through two
goose-ls processes on the same workspace, checkpoints on against ``checkpoints.enabled:
false``: how long a turn takes to reach the agent and to end, and what a turn of tool
calls costs (goose-ls snapshots after each).

``disk-watch``: what watching the open files' folders costs goose-ls (the watch runs
while a turn runs and 2 s after): the inotify watches it holds, goose-ls's CPU over
10 s of a turn whose agent is idle against 10 s between turns, and the time from a file
written on disk to the ``workspace/applyEdit`` that brings its open buffer along, each
against the same watch run bare.

The workspace: 100 folders of 100 files of about 1 KB, a ``.gitignore``, and an ignored
``node_modules/`` of 5,000 files in 500 folders (250 packages), which should cost nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import watchfiles
from arrivals import Arrivals
from cases import Figure, fresh
from goose_ls_side import GooseLsSide
from paced import cpu_ns, wakeups

from goose_ls.scripted import scripted_agent_command, write_script
from goose_ls.sessions.changes import review
from goose_ls.sessions.checkpoints import TurnCheckpoints, TurnRecord
from goose_ls.tasks import Tasks, within
from goose_ls.workspace.planted import protected_in
from goose_ls.workspace.policy import DEFAULT_PROTECTED
from goose_ls.workspace.snapshots import ShadowRepo
from goose_ls.workspace.watcher import DEBOUNCE_MS, REVIEW_MS, STEP_MS

T = TypeVar("T")

ROUNDS = 5
"""Rounds of each turn and review in one run (their median is the run's figure)."""
SNAPSHOT_ROUNDS = 9
"""Rounds of each snapshot after the first (tens of milliseconds each)."""
COLD_ROUNDS = 3
IDLE_S = 10.0
"""Seconds of CPU measured idle, in a turn and between turns."""
CHANGES = 10
"""Writes of an open file, one at a time, while the watch runs."""
GRACE_S = 2.5
"""Longer than the watch goes on after a turn (``live.GRACE``)."""

FOLDERS = FILES = 100
PACKAGES = 250
LINE = "x" * 63 + "\n"


# --- the workspace ------------------------------------------------------------------
def build(root: Path) -> None:
    """100 folders of 100 files of ~1 KB; ``node_modules/``: 250 packages of 20 files."""
    root.mkdir(parents=True)
    (root / ".gitignore").write_text("node_modules/\n*.log\n")
    for folder in range(FOLDERS):
        here = root / f"src{folder:02d}"
        here.mkdir()
        for index in range(FILES):
            (here / f"file{index:02d}.py").write_text(f"# {folder}/{index}\n" + LINE * 16)
    for package in range(PACKAGES):
        here = root / "node_modules" / f"pkg{package:03d}"
        (here / "lib").mkdir(parents=True)
        (here / "package.json").write_text(f'{{"name": "pkg{package}"}}\n')
        (here / "index.js").write_text(LINE * 16)
        for index in range(18):
            (here / "lib" / f"m{index:02d}.js").write_text(LINE * 16)


def spread(root: Path, count: int, offset: int = 0) -> list[Path]:
    """``count`` files of the workspace, each in another folder where it can be."""
    return [
        root / f"src{(offset + n) % FOLDERS:02d}" / f"file{(offset + n) // FOLDERS % FILES:02d}.py"
        for n in range(count)
    ]


def change(paths: list[Path], mark: str) -> None:
    for path in paths:
        with path.open("a") as file:
            file.write(f"# {mark}\n")


@contextlib.contextmanager
def without_node_modules(root: Path) -> Iterator[None]:
    """The workspace with its ``node_modules/`` moved out beside it for a while."""
    aside = root.with_name(f"{root.name}-node_modules")
    (root / "node_modules").rename(aside)
    try:
        yield
    finally:
        aside.rename(root / "node_modules")


def timed(work: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def ms(seconds: list[float]) -> float:
    return 1000 * statistics.median(seconds)


# --- the baselines: git itself, and copying the tree ----------------------------------
class PlainGit:
    """A plain git repository of the workspace (its ``.git`` beside it, so that both
    sides see the same tree), with no system or global configuration."""

    def __init__(self, root: Path, git_dir: Path) -> None:
        self.root = root
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        self.env.update(
            GIT_DIR=str(git_dir),
            GIT_WORK_TREE=str(root),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
        )

    def run(self, *args: str) -> bytes:
        return subprocess.run(
            ["git", *args], env=self.env, cwd=self.root, capture_output=True, check=True
        ).stdout

    def snapshot(self) -> str:
        """``git add -A && git write-tree``."""
        self.run("add", "-A")
        return self.run("write-tree").decode().strip()

    def first_snapshot(self) -> str:
        self.run("init", "-q")
        return self.snapshot()


def copy_tree(root: Path, into: Path) -> None:
    subprocess.run(["cp", "-r", str(root), str(into)], check=True)


# --- checkpoints: ShadowRepo against git -----------------------------------------------
def _snapshot_figures(root: Path, work: Path) -> tuple[list[Figure], ShadowRepo, PlainGit]:
    cold: dict[str, list[float]] = {"shadow": [], "git": [], "cp": []}
    for round_ in range(COLD_ROUNDS):
        shadow = ShadowRepo(root, work / f"shadow{round_}")
        plain = PlainGit(root, work / f"plain{round_}.git")
        copy = work / f"copy{round_}"
        order: list[tuple[str, Callable[[], object]]] = [
            ("shadow", shadow.snapshot),
            ("git", plain.first_snapshot),
            ("cp", functools.partial(copy_tree, root, copy)),
        ]
        for name, work_ in order[round_ % 3 :] + order[: round_ % 3]:
            cold[name].append(timed(work_)[0])
        shutil.rmtree(copy)
        if round_ < COLD_ROUNDS - 1:
            shutil.rmtree(shadow.git_dir)
            shutil.rmtree(work / f"plain{round_}.git")
    assert shadow.snapshot() == plain.snapshot(), "the shadow and git store the same tree"
    stored = shadow._run("ls-tree", "-r", "--name-only", shadow.snapshot()).splitlines()
    assert len(stored) == FOLDERS * FILES + 1, len(stored)  # and the .gitignore
    assert not any(p.startswith(b"node_modules/") for p in stored)

    def alternated(prepare: Callable[[int], None] | None = None) -> tuple[float, float]:
        ours: list[float] = []
        base: list[float] = []
        for round_ in range(SNAPSHOT_ROUNDS):
            if prepare is not None:
                prepare(round_)
            pair = [(ours, shadow.snapshot), (base, plain.snapshot)]
            for into, work_ in pair if round_ % 2 == 0 else pair[::-1]:
                into.append(timed(work_)[0])
        return ms(ours), ms(base)

    unchanged = alternated()
    with_modules: list[float] = []
    without: list[float] = []
    for _ in range(SNAPSHOT_ROUNDS):  # the same snapshot with node_modules and without
        with_modules.append(timed(shadow.snapshot)[0])
        with without_node_modules(root):
            without.append(timed(shadow.snapshot)[0])
    one = alternated(lambda r: change(spread(root, 1, 37 * r), f"one {r}"))
    hundred = alternated(lambda r: change(spread(root, 100, r), f"hundred {r}"))
    name = "checkpoints"
    figures = [
        Figure(name, "first snapshot, vs git", "ms", ms(cold["shadow"]), ms(cold["git"])),
        Figure(name, "first snapshot, vs cp -r", "ms", ms(cold["shadow"]), ms(cold["cp"])),
        Figure(name, "snapshot, none changed", "ms", *unchanged),
        Figure(name, "  same, vs no node_modules", "ms", ms(with_modules), ms(without)),
        Figure(name, "snapshot, 1 changed", "ms", *one),
        Figure(name, "snapshot, 100 changed", "ms", *hundred),
    ]
    return figures, shadow, plain


async def _review_figure(root: Path, shadow: ShadowRepo, plain: PlainGit, files: int) -> Figure:
    """Review (the turn's changes read back and drawn as diffs) of a turn that changed
    ``files`` files, against ``git diff-tree -p`` of the same trees."""
    before, plain_before = shadow.snapshot(), plain.snapshot()
    change(spread(root, files, 11), f"reviewed {files}")
    after, plain_after = shadow.snapshot(), plain.snapshot()
    checkpoints = TurnCheckpoints(
        None,  # type: ignore[arg-type]  # reading a turn back never looks at the chats
        lambda: [root],
        lambda: shadow.git_dir.parent,
        lambda: (True, [], shadow.max_file_bytes, shadow.max_files),
        lambda _: False,
        lambda _: None,
        Tasks(),
    )
    record = TurnRecord("0-turn", {root: (before, after)})
    ours: list[float] = []
    base: list[float] = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        text = review("turn", await checkpoints.changes(record), str(root))
        ours.append(time.perf_counter() - started)
        seconds, patch = timed(
            lambda: plain.run("diff-tree", "-r", "-p", plain_before, plain_after)
        )
        base.append(seconds)
    assert text.count("\n## ") == files and patch.count(b"\ndiff --git ") == files - 1
    return Figure("checkpoints", f"review, {files} files", "ms", ms(ours), ms(base))


def _planted_figure(root: Path) -> Figure:
    """The look for planted protected paths that starts and ends every turn whatever the
    checkpoints (``goose_ls.workspace.planted``): a walk of the whole tree, node_modules
    too, with the default ``workspace.protected`` patterns against none."""
    ours: list[float] = []
    base: list[float] = []
    for _ in range(ROUNDS):
        ours.append(timed(lambda: protected_in([root], DEFAULT_PROTECTED))[0])
        base.append(timed(lambda: protected_in([root], ()))[0])
    return Figure("turn", "planted-path look", "ms", ms(ours), ms(base))


# --- checkpoints: the turn through goose-ls, on against off ------------------------------
class Timed(GooseLsSide):
    """goose-ls with the time each turn ended."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ended_ns: list[int] = []
        told = self.editor.handlers["goose/turnEnd"]

        def ended(params: dict[str, Any]) -> None:
            self.ended_ns.append(time.monotonic_ns())
            told(params)

        self.editor.handlers["goose/turnEnd"] = ended

    async def timed_turn(self, session_id: str) -> tuple[float, float, float]:
        """One turn: ms from ``goose/prompt`` to the agent's first chunk (written as it
        starts the prompt), and from its last chunk to ``goose/turnEnd``; and the CPU
        goose-ls and the git it ran spent on the turn, in ms."""
        cpu = cpu_with_children(self.editor.pid)
        sent = time.monotonic_ns()
        await within(120, self.prompt(session_id))
        spent = 1000 * (cpu_with_children(self.editor.pid) - cpu)
        first, last = (stamp for stamp, _ in self.arrivals.by_session[session_id][-2:])
        return (first - sent) / 1e6, (self.ended_ns[-1] - last) / 1e6, spent


def cpu_with_children(pid: int) -> float:
    """Seconds of CPU of ``pid`` and of its children it waited for (git, here: the agent
    runs on), from ``/proc/<pid>/stat`` in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


TOOL_CALLS = 10


def _turn_script(root: Path) -> dict[str, Any]:
    """Turns that start and end with a stamped chunk: one changing 3 files with one
    command, then one of ``TOOL_CALLS`` tool calls each changing a file (goose-ls
    snapshots after each), in turn; the first is the warm-up."""
    touched = " ".join(shlex.quote(str(p)) for p in spread(root, 3, 53))
    plain = [
        {"stamped": 1},
        {"shell": f"for f in {touched}; do echo '# turn' >> \"$f\"; done"},
        {"stamped": 1},
    ]

    def calls(round_: int) -> list[dict[str, Any]]:
        steps: list[dict[str, Any]] = [{"stamped": 1}]
        for n, path in enumerate(spread(root, TOOL_CALLS, 61)):
            call = f"r{round_}-{n}"
            steps += [
                {"toolCall": {"toolCallId": call, "title": "Edit", "status": "in_progress"}},
                {"shell": f"echo '# call' >> {shlex.quote(str(path))}"},
                {"toolUpdate": {"toolCallId": call, "status": "completed"}},
            ]
        return [*steps, {"stamped": 1}]

    return {"turns": [plain] + [t for r in range(ROUNDS) for t in (plain, calls(r))]}


async def _turn_figures(root: Path) -> list[Figure]:
    # Beside the workspace: the agent's sandbox shows it the workspace's folder.
    command = scripted_agent_command(write_script(root.with_name("turns.json"), _turn_script(root)))
    # No workspace.protected patterns on either side: with the default ones, the look for
    # planted paths that starts and ends every turn (the "planted-path look" figure) costs
    # a second a look here, and its noise would hide what the checkpoints cost.
    unplanted: dict[str, Any] = {"workspace": {"protected": []}}
    sides = {
        on: Timed(
            command,
            root,
            Arrivals(1 << 30),
            data_dir=root.with_name(f"data-{on}"),
            options={**unplanted, **({} if on else {"checkpoints": {"enabled": False}})},
        )
        for on in (True, False)
    }
    first: dict[bool, float] = {}
    sessions: dict[bool, str] = {}
    for on, side in sides.items():
        await side.start()
        sessions[on] = await side.new_session()
        # Right after start: the agent starts, and the first checkpoint is being taken.
        first[on], _, _ = await side.timed_turn(sessions[on])
    plain: dict[bool, list[tuple[float, float, float]]] = {True: [], False: []}
    calls: dict[bool, list[tuple[float, float, float]]] = {True: [], False: []}
    for round_ in range(ROUNDS):
        await asyncio.sleep(GRACE_S)  # each side's watch ended: it starts with the turn
        for on in (True, False) if round_ % 2 == 0 else (False, True):
            plain[on].append(await sides[on].timed_turn(sessions[on]))
            calls[on].append(await sides[on].timed_turn(sessions[on]))
    for side in sides.values():
        await side.stop()

    def median(turns: dict[bool, list[tuple[float, float, float]]], at: int) -> tuple[float, float]:
        return statistics.median(t[at] for t in turns[True]), statistics.median(
            t[at] for t in turns[False]
        )

    name = "turn, on vs off"
    return [
        Figure(name, "first, prompt->agent", "ms", first[True], first[False]),
        Figure(name, "prompt->agent", "ms", *median(plain, 0)),
        Figure(name, "agent->turnEnd, 3 changed", "ms", *median(plain, 1)),
        Figure(name, f"agent->turnEnd, {TOOL_CALLS} calls", "ms", *median(calls, 1)),
        Figure(name, f"CPU, {TOOL_CALLS} calls (+git)", "ms", *median(calls, 2)),
    ]


async def checkpoints(tmp: Path) -> list[Figure]:
    """Snapshots and review against git and ``cp -r``; turns with checkpoints on against
    off (the goose-ls column is on, the baseline off)."""
    work = fresh(tmp)
    root = work / "workspace"
    await asyncio.to_thread(build, root)
    figures, shadow, plain = await asyncio.to_thread(_snapshot_figures, root, work)
    for files in (3, 100):
        figures.append(await _review_figure(root, shadow, plain, files))
    figures.append(await asyncio.to_thread(_planted_figure, root))
    return figures + await _turn_figures(root)


# --- the disk watch ------------------------------------------------------------------------
OPEN = 10
"""Files open in the editor, each in a folder of its own: the watch is of their folders."""


def inotify_watches(pid: int) -> int:
    """The inotify watches process ``pid`` holds (one ``inotify wd:`` line each)."""
    count = 0
    for info in Path(f"/proc/{pid}/fdinfo").iterdir():
        with contextlib.suppress(OSError):
            count += info.read_text().count("inotify wd:")
    return count


IDLER = """
import asyncio, sys
async def main():
    if sys.argv[1] == "watch":
        import watchfiles
        async for _ in watchfiles.awatch(
            *sys.argv[2:], debounce={debounce}, step={step}, recursive=False,
            rust_timeout={review}, yield_on_timeout=True, watch_filter=None,
        ):
            pass
    else:
        await asyncio.sleep(3600)
asyncio.run(main())
"""
"""A bare watch of the folders, as goose-ls's (``goose_ls.workspace.watcher``), or none."""


async def _idle_processes(
    watched: list[Path],
) -> tuple[list[asyncio.subprocess.Process], int, int]:
    """A process watching ``watched`` as goose-ls does and one that only sleeps; with
    their CPU so far (ns)."""
    code = IDLER.format(debounce=DEBOUNCE_MS, step=STEP_MS, review=REVIEW_MS)
    found = [
        await asyncio.create_subprocess_exec(sys.executable, "-c", code, kind, *map(str, watched))
        for kind in ("watch", "sleep")
    ]
    await asyncio.sleep(1.5)  # started, and the watch set up
    return found, cpu_ns(found[0].pid), cpu_ns(found[1].pid)


async def _bare_latency(path: Path) -> list[float]:
    """ms from a write of ``path`` to a bare watch's batch naming it (the watch as
    goose-ls's, of the file's folder)."""
    stop = asyncio.Event()
    seen: asyncio.Queue[int] = asyncio.Queue()

    async def watch() -> None:
        async for batch in watchfiles.awatch(
            path.parent,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=stop,
            recursive=False,
            rust_timeout=REVIEW_MS,
            yield_on_timeout=True,
            watch_filter=None,
        ):
            if any(Path(p) == path for _, p in batch):
                seen.put_nowait(time.monotonic_ns())

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.5)
    found = []
    for n in range(CHANGES):
        written = await asyncio.to_thread(_rewrite, path, n, "bare")
        found.append((await within(10, seen.get()) - written) / 1e6)
        await asyncio.sleep(_spacing(n))
    stop.set()
    await task
    return found


def _spacing(n: int) -> float:
    """Seconds between two writes: half a second, give or take a step of the watch, so
    that the writes fall at different points of its 50 ms loop."""
    return 0.5 + STEP_MS / 1000 * (n % 5) / 5


def _rewrite(path: Path, line: int, mark: str) -> int:
    """Change line ``line`` of ``path`` in place; the clock once it is written."""
    lines = path.read_text().splitlines(keepends=True)
    lines[line] = f"# {mark} {line}\n"
    with path.open("w") as file:
        file.write("".join(lines))
    return time.monotonic_ns()


async def disk_watch(tmp: Path) -> list[Figure]:
    """The watch's CPU and per-change latency, through goose-ls and bare."""
    work = fresh(tmp)
    root = work / "workspace"
    await asyncio.to_thread(build, root)
    opened = spread(root, OPEN, 0)
    idle = [{"stamped": 1}, {"sleep": IDLE_S + 2}, {"stamped": 1}]
    edits = [{"stamped": 1}, {"sleep": CHANGES * 0.6 + 2}, {"stamped": 1}]
    script = {"turns": [[{"stamped": 1}], idle, edits]}
    command = scripted_agent_command(write_script(work / "script.json", script))
    side = GooseLsSide(command, root, Arrivals(1 << 30), apply_edits=True, did_change=True)
    await side.start()
    for path in opened:
        side.editor.open(path.as_uri(), path.read_text())
    session = await side.new_session()
    await within(120, side.prompt(session))  # the agent started, the first checkpoint taken
    pid = side.editor.pid

    # Between turns: goose-ls idle, and beside it a bare watch and a bare sleeper.
    await asyncio.sleep(GRACE_S)
    idlers, watch_cpu, sleep_cpu = await _idle_processes([p.parent for p in opened])
    cpu, woken = cpu_ns(pid), wakeups(pid)
    watch_woken, sleep_woken = wakeups(idlers[0].pid), wakeups(idlers[1].pid)
    await asyncio.sleep(IDLE_S)
    between = (cpu_ns(pid) - cpu) / 1e6, wakeups(pid) - woken
    bare = (cpu_ns(idlers[0].pid) - watch_cpu) / 1e6, wakeups(idlers[0].pid) - watch_woken
    sleeper = (cpu_ns(idlers[1].pid) - sleep_cpu) / 1e6, wakeups(idlers[1].pid) - sleep_woken
    for idler in idlers:
        idler.terminate()
        await idler.wait()

    # A turn whose agent is idle: the watch runs.
    turn = asyncio.create_task(side.prompt(session))
    await _stamps(side, 2)
    await asyncio.sleep(1.0)  # the watch set up
    watched = inotify_watches(pid)
    cpu, woken = cpu_ns(pid), wakeups(pid)
    await asyncio.sleep(IDLE_S)
    in_turn = (cpu_ns(pid) - cpu) / 1e6, wakeups(pid) - woken
    await within(60, turn)

    # A turn during which an open file changes on disk, one change at a time.
    turn = asyncio.create_task(side.prompt(session))
    await _stamps(side, 4)
    await asyncio.sleep(0.5)
    synced = asyncio.Event()  # told after the edit was applied: the edit's time is kept
    side.editor.handlers["goose/diskSynced"] = lambda _: synced.set()
    latencies = []
    for n in range(CHANGES):
        before = len(side.editor.edits)
        synced.clear()
        written = await asyncio.to_thread(_rewrite, opened[0], n, "agent")
        await within(10, synced.wait())
        latencies.append((side.editor.edits[before][0] - written) / 1e6)
        await asyncio.sleep(_spacing(n))
    await within(60, turn)
    await side.stop()
    floor = await _bare_latency(opened[0])

    name = "disk watch"
    per = f"in {IDLE_S:g} s"
    return [
        Figure(name, "inotify watches in a turn", "", watched, len({p.parent for p in opened})),
        Figure(name, f"CPU {per}: turn vs idle", "ms", in_turn[0], between[0]),
        Figure(name, f"wakeups {per}: same", "", in_turn[1], between[1]),
        Figure(name, f"bare watch CPU {per}", "ms", bare[0], sleeper[0]),
        Figure(name, f"bare watch wakeups {per}", "", bare[1], sleeper[1]),
        Figure(
            name,
            "write->applyEdit p50",
            "ms",
            statistics.median(latencies),
            statistics.median(floor),
        ),
        Figure(name, "write->applyEdit max", "ms", max(latencies), max(floor)),
    ]


async def _stamps(side: GooseLsSide, count: int) -> None:
    """Until ``count`` stamped chunks came in all (a turn's first: the agent has it)."""
    side.arrivals.expected = count
    if side.arrivals.count < count:
        side.arrivals.done.clear()
        await within(60, side.arrivals.done.wait())
