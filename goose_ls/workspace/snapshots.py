"""Snapshots of a workspace root, kept in a git repository of goose-ls's own.

Before and after each turn goose-ls records the root's files as a git tree in a shadow
repository under its data dir, so a turn's changes can be shown and put back whoever
made them: the agent's own tools, its commands, goose-ls's writes. git does the work it
is made for (hashing only what changed since the last snapshot, storing each content
once, honouring ``.gitignore``), but the repository's own configuration never runs:

- git is pointed at the shadow repository (``GIT_DIR``), so the project's ``.git/config``,
  its hooks, ``core.fsmonitor`` and filters are not read; system and global
  configuration are off, and every ``GIT_*`` variable of the environment is dropped;
- ``info/attributes`` unsets every attribute for every path (it outranks the project's
  ``.gitattributes``), so no end-of-line conversion or filter changes what is stored;
- files over ``max_file_bytes`` and the exclude list are left out; a root with more
  than ``max_files`` files is not snapshotted at all (:class:`TooBig`).

All of it is blocking: callers run it in a thread.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import attrs

from goose_ls.atomic_files import private_folder

ATTRIBUTES = "* -text !eol -filter -ident !working-tree-encoding !diff !merge\n"
"""Every path, every attribute unset: the project's ``.gitattributes`` cannot convert,
filter or reinterpret what a snapshot stores."""

DEFAULT_EXCLUDE = [
    ".git/",
    "node_modules/",
    ".venv/",
    "venv/",
    "__pycache__/",
    "*.pyc",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".tox/",
    "target/",
    "dist/",
    "build/",
    ".gradle/",
    ".next/",
    ".cache/",
    "*.log",
]
"""Left out of snapshots besides what ``.gitignore`` ignores: built or downloaded, big,
and put back by the tools that made it."""

FORCED = [
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.untrackedCache", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("protocol.allow", "never"),
    ("core.sshCommand", "false"),
    ("core.askPass", "false"),
]
"""Settings every git goose-ls runs, and every git that one starts, takes before any
file's: nothing of a repository's configuration runs."""

ADD_ATTEMPTS = 20
"""Tries of ``git add`` in a folder whose files come and go (a build watcher): it stops
at a file that vanished between its listing and its look."""

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
GIT_TIMEOUT = 120.0
"""Seconds one git command may take (the first snapshot of a big root hashes it all)."""


class SnapshotError(Exception):
    """git failed, or is missing: the root has no snapshot."""


class TooBig(SnapshotError):
    """The root holds more files than a snapshot takes."""


@attrs.frozen
class Changed:
    """One path that differs between two snapshots."""

    path: str
    """Relative to the root, with ``/``."""
    before: str | None
    """The blob id before (None: the path did not exist)."""
    after: str | None
    """The blob id after (None: the path was removed)."""
    mode_before: str
    mode_after: str

    @property
    def regular(self) -> bool:
        """Whether both sides are plain files (or absent): links and nested
        repositories are shown, never put back."""
        return {self.mode_before, self.mode_after} <= {"000000", "100644", "100755"}


def git_binary() -> str | None:
    return shutil.which("git")


def key(text: str) -> str:
    """A name safe in a ref and a file name for any text (session and message ids come
    from the agent and the editor)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class ShadowRepo:
    """The shadow repository of one root."""

    def __init__(
        self,
        root: Path,
        folder: Path,
        exclude: Sequence[str] = (),
        max_file_bytes: int = 1 << 20,
        max_files: int = 100_000,
    ) -> None:
        self.root = root
        self.git_dir = folder / f"{key(str(root))}.git"
        self.exclude = list(exclude)
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self._git = git_binary()

    # --- running git --------------------------------------------------------------
    def _env(self, work_tree: bool) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        if work_tree:
            env["GIT_WORK_TREE"] = str(self.root)
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
            GIT_AUTHOR_NAME="goose-ls",
            GIT_AUTHOR_EMAIL="goose-ls@localhost",
            GIT_COMMITTER_NAME="goose-ls",
            GIT_COMMITTER_EMAIL="goose-ls@localhost",
            LC_ALL="C",
        )
        # Configuration given this way outranks every file's and reaches the git
        # processes git starts itself (in a nested repository, whose own .git/config
        # would otherwise name an fsmonitor or hooks that run).
        for n, (name, value) in enumerate(FORCED):
            env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"] = name, value
        env["GIT_CONFIG_COUNT"] = str(len(FORCED))
        # And no git command of its own: a nested repository would have git start one
        # in it (``git status``), reading that repository's configuration.
        env["GIT_EXEC_PATH"] = str(self.git_dir / "no-commands")
        return env

    def _run(
        self,
        *args: str,
        stdin: bytes | None = None,
        check: bool = True,
        work_tree: bool = True,
        ok: tuple[int, ...] = (0,),
    ) -> bytes:
        if self._git is None:
            raise SnapshotError("git is not installed (turn checkpoints need it)")
        try:
            done = subprocess.run(
                [self._git, *args],
                input=stdin if stdin is not None else b"",  # never the editor's stdin
                capture_output=True,
                env=self._env(work_tree),
                cwd=self.root,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SnapshotError(f"git {args[0]}: {exc}") from None
        if check and done.returncode not in ok:
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SnapshotError(f"git {args[0]}: {why[-1] if why else done.returncode}")
        return done.stdout

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """One snapshot at a time in the repository, across goose-ls processes."""
        try:
            self._create()
            lock = open(self.git_dir / "goose-ls.lock", "a+b")  # noqa: SIM115
            os.chmod(lock.fileno(), 0o600)
        except OSError as exc:  # a data dir that cannot be written
            raise SnapshotError(f"cannot make {self.git_dir}: {exc.strerror or exc}") from None
        with lock:
            _wait_for_lock(lock.fileno(), self.git_dir)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _create(self) -> None:
        private_folder(self.git_dir.parent)
        if not (self.git_dir / "HEAD").exists():
            # No template (no sample hooks); files 0600 and folders 0700, as all of the
            # data dir: the snapshots hold the workspace's files.
            self._run(
                "init",
                "-q",
                "--bare",
                "--template=",
                "--shared=0600",
                str(self.git_dir),
                work_tree=False,
            )
            for name, value in [
                ("core.bare", "false"),
                ("core.fsmonitor", "false"),
                ("core.hooksPath", os.devnull),
                ("core.untrackedCache", "false"),
                ("core.autocrlf", "false"),
                ("core.safecrlf", "false"),
                ("core.symlinks", "true"),
                ("core.quotePath", "false"),
                ("gc.auto", "0"),
                ("advice.addEmbeddedRepo", "false"),
            ]:
                self._run("config", name, value, work_tree=False)
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text(ATTRIBUTES)
        (info / "exclude").write_text("".join(f"{p}\n" for p in [*DEFAULT_EXCLUDE, *self.exclude]))
        for own in (info, info / "attributes", info / "exclude"):
            own.chmod(0o700 if own.is_dir() else 0o600)

    # --- snapshots ------------------------------------------------------------------
    def snapshot(self) -> str:
        """The root's files now, as a tree id."""
        with self._locked():
            self._check_ignore_files()
            tracked = self._tracked()
            new = [
                p for p in self._run("ls-files", "-z", "-o", "--exclude-standard").split(b"\0") if p
            ]
            nested = [p.rstrip(b"/") for p in new if p.endswith(b"/")]
            if tracked + len(new) > self.max_files:
                raise TooBig(
                    f"{self.root} holds more than {self.max_files} files "
                    "(checkpoints.maxFiles); its turns have no checkpoint"
                )
            # A nested repository stays out: git would look into it with a git of its
            # own (GIT_EXEC_PATH refuses that), and its files are its own history's.
            left_out = [p for p in new if self._too_big(p)] + nested
            pathspecs = [b"."] + [b":(exclude,literal)" + p for p in left_out]
            for attempt in range(ADD_ATTEMPTS):
                try:
                    self._run(
                        "add",
                        "-A",
                        "--ignore-errors",
                        "--pathspec-from-file=-",
                        "--pathspec-file-nul",
                        stdin=b"\0".join(pathspecs),
                        ok=(0, 1),  # 1: some files were not added (a FIFO, unreadable)
                    )
                    break
                except SnapshotError:  # a file gone between git's listing and its look
                    if attempt == ADD_ATTEMPTS - 1:
                        raise
            return self._run("write-tree").decode().strip()

    def _check_ignore_files(self) -> None:
        """Refuse a root whose ignore files git would block on or follow out: a FIFO, a
        device or a link named ``.gitignore`` (git opens each as it walks)."""
        excluded = {p.rstrip("/") for p in DEFAULT_EXCLUDE if p.endswith("/")}
        stack, seen = [self.root], 0
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > self.max_files * 4:
                    return  # git's own count refuses a root this big
                if entry.name == ".gitignore" and not entry.is_file(follow_symlinks=False):
                    raise SnapshotError(
                        f"{entry.path} is not a plain file: git would wait on it or follow it"
                    )
                if entry.is_dir(follow_symlinks=False) and entry.name not in excluded:
                    stack.append(Path(entry.path))

    def _tracked(self) -> int:
        """The files of the last snapshot: the index's header counts them (listing them
        with ``git ls-files`` took 6 ms of a 45 ms snapshot of 10,000 files)."""
        try:
            with open(self.git_dir / "index", "rb") as index:
                head = index.read(12)
        except FileNotFoundError:
            return 0  # no snapshot yet
        except OSError as exc:
            raise SnapshotError(f"cannot read the index: {exc}") from None
        if len(head) < 12 or head[:4] != b"DIRC":
            return self._run("ls-files", "-z").count(b"\0")
        return int.from_bytes(head[8:12], "big")

    def _too_big(self, relative: bytes) -> bool:
        try:
            return os.lstat(self.root / os.fsdecode(relative)).st_size > self.max_file_bytes
        except OSError:
            return False

    def keep(self, ref: str, tree: str, *more: tuple[str, str]) -> None:
        """Name ``tree`` so that it outlives pruning (``ref`` below ``refs/goose-ls/``),
        and each of ``more`` (ref, tree) likewise, with one git."""
        lines = "".join(f"update refs/goose-ls/{r} {t}\n" for r, t in [(ref, tree), *more])
        self._run("update-ref", "--stdin", stdin=lines.encode())

    def kept(self, prefix: str) -> list[tuple[str, str]]:
        """The (ref below ``refs/goose-ls/``, tree) pairs under ``prefix``, in name order."""
        if not (self.git_dir / "HEAD").exists():
            return []
        out = self._run(
            "for-each-ref", "--format=%(refname) %(objectname)", f"refs/goose-ls/{prefix}"
        )
        pairs = [line.split(" ", 1) for line in out.decode().splitlines()]
        return sorted((name.removeprefix("refs/goose-ls/"), tree) for name, tree in pairs)

    def drop(self, refs: Sequence[str]) -> None:
        if refs:
            lines = "".join(f"delete refs/goose-ls/{ref}\n" for ref in refs)
            self._run("update-ref", "--stdin", stdin=lines.encode())

    def prune(self) -> None:
        """Forget the contents no kept snapshot holds (an hour's grace for a snapshot
        another window is taking)."""
        if (self.git_dir / "HEAD").exists():
            with self._locked():
                self._run("prune", "--expire=1.hour.ago")

    def changes(self, before: str, after: str) -> list[Changed]:
        out = self._run("diff-tree", "-r", "-z", "--no-renames", before, after)
        fields = out.split(b"\0")
        found: list[Changed] = []
        for head, name in zip(fields[0::2], fields[1::2], strict=False):
            if not head.startswith(b":"):
                continue
            mode_a, mode_b, blob_a, blob_b, _ = head[1:].decode().split(" ")
            zero = "0" * len(blob_a)
            found.append(
                Changed(
                    os.fsdecode(name),
                    None if blob_a == zero else blob_a,
                    None if blob_b == zero else blob_b,
                    mode_a,
                    mode_b,
                )
            )
        return found

    def read(self, blob: str) -> bytes:
        return self._run("cat-file", "blob", blob)

    def read_all(self, changed: Sequence[Changed]) -> dict[str, bytes]:
        """The content of each side of the plain files among ``changed``, all in one git
        process (one per blob took a review of 100 files 200). A link or a nested
        repository is not read: the second is a commit this repository does not hold."""
        wanted = list(
            dict.fromkeys(b for c in changed if c.regular for b in (c.before, c.after) if b)
        )
        if not wanted:
            return {}
        out = self._run("cat-file", "--batch", stdin="".join(f"{b}\n" for b in wanted).encode())
        found: dict[str, bytes] = {}
        at = 0
        for blob in wanted:  # "<id> blob <size>\n<content>\n" each, in the order asked
            end = out.index(b"\n", at)
            head = out[at:end].split()
            if len(head) != 3:  # "<id> missing": someone pruned it meanwhile
                at = end + 1
                continue
            size = int(head[2])
            found[blob] = out[end + 1 : end + 1 + size]
            at = end + 1 + size + 1
        return found


def _wait_for_lock(fd: int, git_dir: Path) -> None:
    """Take the repository's lock, waiting as long as one git command may run: another
    goose-ls that holds it longer is stuck, and this one must not wait with it (its
    turn goes on without a checkpoint; its shutdown is not held)."""
    deadline = time.monotonic() + GIT_TIMEOUT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise SnapshotError(
                    f"{git_dir} stayed locked by another process for {GIT_TIMEOUT:g} s"
                ) from None
            time.sleep(0.05)
