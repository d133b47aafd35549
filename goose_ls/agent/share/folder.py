"""Where one user's goose-ls processes meet to share one ``goose serve``: a folder only
that user can enter, holding what they need to agree on.

The folder is ``<runtime dir>/share/<key>`` (``$XDG_RUNTIME_DIR/goose-ls`` on Linux; a
folder in the user's cache dir where there is no runtime dir), one per goose command line
and ``agent.env`` (the key): setups that differ never share a server. In it:

- ``lock``: held (an exclusive flock) while a server is looked for, started or stopped,
  so that goose-ls processes starting together start one;
- ``state.json``: the running server, ``{url, pid, started, process}`` (``pid`` leads its
  process group; ``process`` names it as no later process with that pid is named);
- ``secret``: the server's ``GOOSE_SERVER__SECRET_KEY``, new for each server;
- ``leases``: every goose-ls attached to the server holds a shared flock on it, which the
  system drops when it detaches or dies: "nobody uses it" is one try of an exclusive lock;
- ``server.log``: what the server and its keeper printed.

Folders are 0700 and files 0600. One that is not the user's own, or that others may
open, is refused and nothing in it is used: fail closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import fcntl
import hashlib
import json
import os
import secrets
import stat
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path

import attrs

from goose_ls import paths
from goose_ls.atomic_files import atomic_write
from goose_ls.errors import AgentError, AgentUnavailable
from goose_ls.process_identity import process_named
from goose_ls.tasks import within

_OPEN = os.O_NOFOLLOW | os.O_CLOEXEC


@attrs.frozen
class RunningServer:
    """The shared server that runs, as ``state.json`` says."""

    url: str
    pid: int
    started: str
    """When it started (ISO 8601, UTC), for people."""
    process: str
    """Its process, named as no other will be (see :mod:`goose_ls.process_identity`)."""

    @classmethod
    def of(cls, url: str, pid: int) -> RunningServer:
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        return cls(url, pid, now, process_named(pid))

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/", 1)[0])


def refused(path: Path, why: str) -> AgentUnavailable:
    return AgentUnavailable(
        "insecure",
        f"goose-ls will not use {path} to share goose serve: {why}",
        f"Remove {path} (goose-ls makes it again, readable by you alone), or set "
        "agent.share to false.",
    )


def _check(path: Path, info: os.stat_result, kind: int) -> None:
    """``info`` is of the user's own ``kind`` of file, closed to everyone else."""
    if stat.S_IFMT(info.st_mode) != kind:
        raise refused(path, "it is not a plain file or folder")
    if info.st_uid != os.geteuid():
        raise refused(path, f"it belongs to user {info.st_uid}, not to you")
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise refused(path, f"others may open it (mode {stat.filemode(info.st_mode)})")


def _folder(path: Path) -> Path:
    """``path`` made (0700) if need be, and checked."""
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700, parents=False)
    _check(path, path.lstat(), stat.S_IFDIR)
    return path


def share_root() -> Path:
    """The folder every share lives in, made and checked."""
    base = paths.runtime_dir() or paths.cache_dir()
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    return _folder(base / "share")


def share_key(argv: list[str], env: Mapping[str, str], sandbox: str = "") -> str:
    """One key per goose command line, extra environment and sandbox (the roots a
    sandboxed server may write: one server per project then)."""
    text = json.dumps({"argv": argv, "env": sorted(env.items())})
    text += f"\0{sandbox}" if sandbox else ""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class SharePlace:
    """One share's folder and what is in it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def of(cls, argv: list[str], env: Mapping[str, str], sandbox: str = "") -> SharePlace:
        return cls(_folder(share_root() / share_key(argv, env, sandbox)))

    @property
    def log(self) -> Path:
        return self.folder / "server.log"

    def _open(self, name: str, flags: int) -> int:
        """A file of the share, opened only if it is the user's alone (never a link)."""
        path = self.folder / name
        fd = os.open(path, flags | _OPEN, 0o600)
        try:
            _check(path, os.fstat(fd), stat.S_IFREG)
        except BaseException:
            os.close(fd)
            raise
        return fd

    # --- the lock ------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the share's lock (blocking: for the keeper)."""
        fd = self._open("lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # the lock goes with the descriptor

    @contextlib.asynccontextmanager
    async def held(self, timeout: float) -> AsyncIterator[None]:
        """Hold the share's lock, waiting at most ``timeout`` seconds for it."""
        fd = self._open("lock", os.O_RDWR | os.O_CREAT)
        taking = asyncio.get_running_loop().run_in_executor(None, fcntl.flock, fd, fcntl.LOCK_EX)
        try:
            await within(timeout, asyncio.shield(taking))
        except BaseException as exc:
            # Given up: the lock, if it comes after all, is released at once.
            taking.add_done_callback(lambda _: os.close(fd))
            if isinstance(exc, asyncio.TimeoutError):
                raise AgentError(
                    f"another goose-ls has held {self.folder / 'lock'} for {timeout:g} s "
                    "(starting the shared goose serve)"
                ) from None
            raise
        try:
            yield
        finally:
            os.close(fd)

    # --- leases --------------------------------------------------------------------
    def lease(self) -> int:
        """Take a lease (blocking: run it in a thread); closing the descriptor returns it."""
        fd = self._open("leases", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def in_use(self) -> bool:
        """Whether any goose-ls holds a lease."""
        fd = self._open("leases", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    # --- the state -----------------------------------------------------------------
    def state(self) -> RunningServer | None:
        """The server ``state.json`` names, or None (none, or not readable as one)."""
        try:
            fd = self._open("state.json", os.O_RDONLY)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, encoding="utf-8") as source:
            text = source.read()
        try:
            data = json.loads(text)
            state = RunningServer(
                str(data["url"]), int(data["pid"]), str(data["started"]), str(data["process"])
            )
            state.port  # noqa: B018  # a URL without a port is no state
        except (ValueError, KeyError, TypeError, IndexError):
            return None
        return state

    def keep(self, state: RunningServer) -> None:
        atomic_write(self.folder / "state.json", json.dumps(attrs.asdict(state)))

    def forget(self, pid: int | None = None) -> None:
        """Remove the state (only if it names ``pid``, when given)."""
        state = self.state()
        if state is not None and pid not in (None, state.pid):
            return
        with contextlib.suppress(FileNotFoundError):
            (self.folder / "state.json").unlink()

    # --- the secret ----------------------------------------------------------------
    def new_secret(self) -> str:
        secret = "goose-ls-" + secrets.token_urlsafe(32)
        atomic_write(self.folder / "secret", secret)  # made 0600, as mkstemp makes files
        return secret

    def secret(self) -> str:
        """The server's secret; :class:`AgentUnavailable` when the file is not the
        user's alone. FileNotFoundError when there is none."""
        with os.fdopen(self._open("secret", os.O_RDONLY), encoding="utf-8") as source:
            return source.read().strip()

    # --- the server's output -------------------------------------------------------
    def open_log(self) -> int:
        """``server.log``, emptied, for a new server to write to."""
        return self._open("server.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)

    def last_output(self) -> str:
        """The last line the server printed, or ""."""
        with (
            contextlib.suppress(OSError, AgentUnavailable),
            os.fdopen(self._open("server.log", os.O_RDONLY)) as log,
        ):
            lines = [line.strip() for line in log.read()[-4000:].splitlines() if line.strip()]
            return lines[-1][:300] if lines else ""
        return ""
