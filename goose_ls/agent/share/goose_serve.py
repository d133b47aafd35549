"""The shared ``goose serve`` looked for, started, and stopped when it is broken; always
with the share's lock held (see :mod:`.folder`).

A server is started on a free port of 127.0.0.1 with a new random secret, by its keeper
(:mod:`.keeper`) in a session of its own that goose-ls's exit spares: it outlives the
goose-ls that started it. It is ready when ``/status`` answers; only then is its state
written, so a state always names a server that answered. A state whose process is gone
(or whose pid now names another process) is forgotten; a server that runs but does not
answer ``/status`` is stopped (SIGTERM to its group, then SIGKILL) and replaced.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
from collections.abc import Mapping
from pathlib import Path

from goose_ls.agent.share.folder import RunningServer, SharePlace
from goose_ls.agent.transport.network import ask_status
from goose_ls.agent.transport.process_group import signal_group
from goose_ls.errors import AgentError
from goose_ls.process_identity import process_alive
from goose_ls.settings import AgentSettings, agent_environment
from goose_ls.tasks import within
from goose_ls.workspace import reaper

log = logging.getLogger(__name__)

SECRET_VARIABLE = "GOOSE_SERVER__SECRET_KEY"
LOOPBACK = "127.0.0.1"
STATUS_TIMEOUT = 2.0
"""Seconds a running server has to answer ``/status``."""
START_TRIES = 3
"""Servers started in a row when each ends before it answers (another program may take
the free port first)."""
POLL = 0.05


async def answers(port: int, timeout: float = STATUS_TIMEOUT) -> bool:
    """Whether something on the loopback ``port`` answers ``GET /status`` with 200."""
    try:
        reader, writer = await within(timeout, asyncio.open_connection(LOOPBACK, port))
    except (OSError, asyncio.TimeoutError):
        return False
    try:
        status, _ = await ask_status(reader, writer, f"{LOOPBACK}:{port}", timeout)
    except (OSError, asyncio.TimeoutError):
        return False
    finally:
        writer.close()
    return status.startswith("200")


async def running(place: SharePlace, grace: float) -> RunningServer | None:
    """The share's server if it runs and answers; None after forgetting (or stopping)
    one that does not."""
    state = place.state()
    if state is None:
        return None
    if not process_alive(state.process):
        log.info("the shared server %s (pid %s) is gone", state.url, state.pid)
        place.forget()
        return None
    if await answers(state.port):
        return state
    log.warning("the shared server pid %s does not answer at %s: stopping it", state.pid, state.url)
    await stop(state, grace)
    place.forget()
    return None


async def stop(state: RunningServer, grace: float) -> None:
    """SIGTERM the server's group, wait at most ``grace`` seconds, then SIGKILL it."""
    signal_group(state.pid, signal.SIGTERM)
    for _ in range(max(1, round(grace / POLL))):  # not our child: nothing tells of its end
        if not process_alive(state.process):
            return
        await asyncio.sleep(POLL)
    log.warning(
        "the shared goose serve's keeper (pid %s) did not end within %g s of SIGTERM; "
        "killing its group",
        state.pid,
        grace,
    )
    signal_group(state.pid, signal.SIGKILL)


def serve_command(argv: list[str]) -> list[str]:
    """goose's ``acp`` command line as ``goose serve``'s (the binary, then ``serve``,
    then the other arguments)."""
    binary, *rest = argv
    return [binary, "serve", *(rest[1:] if rest[:1] == ["acp"] else rest)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


async def start(
    place: SharePlace,
    command: list[str],
    environ: Mapping[str, str],
    settings: AgentSettings,
) -> tuple[RunningServer, str]:
    """Start a server (and its keeper), wait for ``/status``, write its state; the state
    and the server's new secret."""
    secret = place.new_secret()
    env = {**agent_environment(environ, settings), SECRET_VARIABLE: secret}
    for attempt in range(1, START_TRIES + 1):
        port = free_port()
        serve = [*command, "--host", LOOPBACK, "--port", str(port)]
        keeper = await _keeper(place, serve, env, settings)
        if await _ready(keeper, port, settings.request_timeout):
            state = RunningServer.of(f"ws://{LOOPBACK}:{port}/acp", keeper.pid)
            place.keep(state)
            log.info("started the shared goose serve at %s (pid %s)", state.url, keeper.pid)
            return state, secret
        if keeper.returncode is None:
            await stop(RunningServer.of("", keeper.pid), settings.shutdown_timeout)
            raise AgentError(
                f"goose serve did not answer at {LOOPBACK}:{port} within "
                f"{settings.request_timeout:g} s{_said(place)}"
            )
        log.warning("goose serve ended before it answered (try %d)%s", attempt, _said(place))
    raise AgentError(f"goose serve ended as it started{_said(place)}")


def _said(place: SharePlace) -> str:
    said = place.last_output()
    return f" (last output: {said})" if said else ""


async def _keeper(
    place: SharePlace, command: list[str], env: dict[str, str], settings: AgentSettings
) -> asyncio.subprocess.Process:
    """The keeper, running the server (see :mod:`.keeper`), its output in the share's log."""
    output = place.open_log()
    try:
        keeper = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "goose_ls.agent.share.keeper",
            str(place.folder),
            f"{settings.share_idle_grace:g}",
            f"{settings.shutdown_timeout:g}",
            "--",
            *command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            env=env,
            cwd=Path.home(),
            start_new_session=True,
        )
    except OSError as exc:
        raise AgentError(f"could not start the shared server's keeper: {exc}") from exc
    finally:
        os.close(output)
    reaper.spare(keeper.pid)
    return keeper


async def _ready(keeper: asyncio.subprocess.Process, port: int, timeout: float) -> bool:
    """Wait until the server answers (True), its keeper ends, or ``timeout`` passes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while keeper.returncode is None and loop.time() < deadline:
        if await answers(port, min(STATUS_TIMEOUT, max(deadline - loop.time(), POLL))):
            return True
        await asyncio.sleep(POLL)
    return False
