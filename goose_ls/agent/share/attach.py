"""``agent.share``: one ``goose serve`` for all of a user's goose-ls processes.

Each editor window otherwise starts a ``goose acp`` of its own, which starts goose and
its extensions again (minutes, for some users). With ``agent.share`` the first goose-ls
starts ``goose serve`` on a free loopback port with a random secret (see
:mod:`.goose_serve`), later ones attach to it, and its keeper stops it once none has
used it for ``agent.shareIdleGrace`` seconds. Where they meet, and how they agree, is
:mod:`.folder`: a lock so that windows starting together start one server, the
server's state and secret in files only the user can read, and a lease per attached
goose-ls.

Above the connection it is ``agent.url`` (:mod:`~goose_ls.agent.transport.network`): a dropped connection is the
reason ``disconnected``, and recovery reconnects, starting a new server if the old one
is gone. goose serves each connection with an agent of its own over one database and
one active-run registry: windows list each other's chats, and a prompt to a chat whose
turn runs for another window is refused (goose-ls waits for it, see
:mod:`goose_ls.sessions.turns`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from websockets.exceptions import InvalidHandshake, InvalidStatus

from goose_ls import logs
from goose_ls.agent.discovery import Launch, is_goose, parse_version, resolve
from goose_ls.agent.presets import MINIMUM_SERVE_VERSION
from goose_ls.agent.share import goose_serve as share_server
from goose_ls.agent.share.folder import RunningServer, SharePlace
from goose_ls.agent.share.loopback_owner import check_own
from goose_ls.agent.transport.child_process import sandboxed
from goose_ls.agent.transport.network import CONNECT_TIMEOUT, NetworkChannel, unreached
from goose_ls.agent.transport.url_check import Target
from goose_ls.agent.transport.websocket import WebSocketFrames, open_websocket
from goose_ls.errors import AgentError, AgentUnavailable
from goose_ls.process_identity import process_alive
from goose_ls.settings import AgentSettings, agent_environment
from goose_ls.workspace.agent_sandbox import Bounds

log = logging.getLogger(__name__)


class SharedEndpoint:
    """The user's shared goose serve, started if none runs."""

    lost = "disconnected"
    fix = "goose-ls reconnects by itself, starting the shared goose serve again if it is gone."

    def __init__(
        self,
        settings: AgentSettings,
        environ: Mapping[str, str],
        bounds: Callable[[], Awaitable[Bounds]],
    ) -> None:
        self._settings = settings
        self._environ = environ
        self._bounds = bounds
        self._facts: dict[str, Any] = {"shared": True}
        self.command: list[str] = []

    def facts(self) -> dict[str, Any]:
        return dict(self._facts)

    async def open(self) -> SharedChannel:
        settings = self._settings
        if os.name != "posix":
            raise AgentUnavailable(
                "unusable",
                "agent.share works on Linux and macOS only",
                "Set agent.share to false.",
            )
        launch = await resolve(settings, self._environ)
        self._facts.update(binary=launch.binary, version=launch.version)
        self.command = launch.argv  # goose's own: a terminal sign-in runs it here
        _check_goose(launch.binary, launch.version)
        place, command = await self._place(launch)
        try:
            state, secret, lease = await self._server(place, command)
        except OSError as exc:
            raise AgentError(f"cannot share goose serve: {exc}") from exc
        self._facts["url"] = state.url
        logs.hide(secret)
        try:
            frames = await self._connect(state, secret)
        except AgentUnavailable as exc:
            os.close(lease)
            if exc.reason == "insecure":  # not ours: the next start picks another port
                await asyncio.to_thread(_forget, place, state)
            raise
        except BaseException:
            os.close(lease)
            raise
        log.info("attached to the shared goose serve at %s (pid %s)", state.url, state.pid)
        return SharedChannel(frames, state.url, lease, self.facts())

    async def stop_server(self, grace: float) -> bool:
        """Stop the shared goose serve (the windows attached to it reconnect to the next
        one, as after a crash)."""
        place, _ = await self._place(await resolve(self._settings, self._environ))
        async with place.held(self._settings.session_timeout):
            state = place.state()
            if state is None or not process_alive(state.process):
                return False
            log.info("stopping the shared goose serve at %s (pid %s)", state.url, state.pid)
            await share_server.stop(state, grace)
            place.forget(state.pid)
        return True

    async def _place(self, launch: Launch) -> tuple[SharePlace, list[str]]:
        """The share this window belongs to, and the server's command line in its
        sandbox: windows whose sandbox lets the server write the same roots share one."""
        serve = Launch(share_server.serve_command(launch.argv), launch.binary, launch.version)
        env = agent_environment(self._environ, self._settings)
        surveyed: list[Bounds] = []

        async def survey() -> Bounds:
            surveyed.append(await self._bounds())
            return surveyed[-1]

        command, self._facts["sandbox"] = await sandboxed(
            self._settings, serve, env, str(Path.home()), survey
        )
        roots = [str(root) for root in surveyed[-1].roots] if surveyed else []
        scope = "" if command == serve.argv else json.dumps(roots)
        try:
            place = await asyncio.to_thread(SharePlace.of, serve.argv, self._settings.env, scope)
        except OSError as exc:
            raise AgentError(f"cannot share goose serve: {exc}") from exc
        return place, command

    async def _server(
        self, place: SharePlace, command: list[str]
    ) -> tuple[RunningServer, str, int]:
        """The running server (started if need be), its secret, and a lease on it; all
        looked at with the share's lock held."""
        settings = self._settings
        async with place.held(settings.session_timeout):
            lease = await asyncio.to_thread(place.lease)  # before a keeper can look
            try:
                state = await share_server.running(place, settings.shutdown_timeout)
                secret = _secret(place) if state is not None else None
                if state is None or secret is None:
                    if state is not None:  # its secret is gone: nobody can use it
                        await share_server.stop(state, settings.shutdown_timeout)
                    state, secret = await share_server.start(
                        place, command, self._environ, settings
                    )
            except BaseException:
                os.close(lease)
                raise
        return state, secret, lease

    async def _connect(self, state: RunningServer, secret: str) -> WebSocketFrames:
        target = Target(state.url, share_server.LOOPBACK, state.port, False, share_server.LOOPBACK)
        timeout = min(CONNECT_TIMEOUT, self._settings.request_timeout)

        async def ours(transport: asyncio.BaseTransport) -> None:
            await check_own(transport.get_extra_info("socket"), state.url)

        try:
            return await open_websocket(target, secret, None, timeout, ours)
        except InvalidStatus as exc:
            raise AgentError(
                f"the shared goose serve at {state.url} refused its secret "
                f"(HTTP {exc.response.status_code}); its keeper is pid {state.pid}"
            ) from None
        except (OSError, asyncio.TimeoutError) as exc:
            lost = unreached(state.url, share_server.LOOPBACK, exc, timeout)
            raise AgentUnavailable(lost.reason or "unreachable", lost.message, self.fix) from None
        except InvalidHandshake as exc:
            raise AgentError(f"{state.url} did not open a WebSocket: {exc}") from None


def _check_goose(binary: str, version: str | None) -> None:
    """Only goose serves (``goose serve``, since goose 1.30)."""
    if not is_goose(binary):
        raise AgentUnavailable(
            "unusable",
            f"agent.share runs goose serve, and {binary} is not goose",
            "Set agent.command to goose, or agent.share to false.",
        )
    found = parse_version(version) if version else None
    if found is not None and found < MINIMUM_SERVE_VERSION:
        minimum = ".".join(map(str, MINIMUM_SERVE_VERSION))
        raise AgentUnavailable(
            "outdated",
            f"goose {version} cannot serve (goose serve came with {minimum})",
            f"Update goose to {minimum} or newer (run `goose update`), or set "
            "agent.share to false.",
        )


def _forget(place: SharePlace, state: RunningServer) -> None:
    """Forget ``state`` (if the share still names it): its port is another's."""
    with place.locked():
        place.forget(state.pid)


def _secret(place: SharePlace) -> str | None:
    """The running server's secret; None when its file is gone."""
    try:
        return place.secret() or None
    except FileNotFoundError:
        return None


class SharedChannel(NetworkChannel):
    """A connection to the shared server, holding a lease on it while it lasts."""

    def __init__(
        self, frames: WebSocketFrames, url: str, lease: int, facts: dict[str, Any]
    ) -> None:
        super().__init__(frames, url)
        self._lease: int | None = lease
        self._facts = facts

    def facts(self) -> dict[str, Any]:
        return dict(self._facts)

    async def ended(
        self, output_ended: asyncio.Future[str], stopping: Callable[[], bool]
    ) -> tuple[str, bool]:
        try:
            return await super().ended(output_ended, stopping)
        finally:
            self._give_back_lease()

    async def close(self, grace: float) -> None:
        try:
            await super().close(grace)
        finally:
            self._give_back_lease()

    def close_now(self, grace: float) -> None:
        super().close_now(grace)
        self._give_back_lease()

    def _give_back_lease(self) -> None:
        """Give the lease back: the server may stop once no goose-ls holds one."""
        lease, self._lease = self._lease, None
        if lease is not None:
            with contextlib.suppress(OSError):
                os.close(lease)
