"""``goose-ls doctor``: is the agent there, recent enough, and does it shake hands? With
``--url`` (or ``agent.url``): is goose serve reachable, does it take the token? With
``agent.share``: which shared goose serve it attached to (starting one if none runs).
With ``--goosed`` (or ``agent.goosed``): is Goose Desktop's goosed reachable, does it take
the secret, which version and way of streaming, and what it cannot do; ``--find-goosed``
finds the user's running one first (:mod:`goose_ls.agent.goosed.discover`).

Prints one line per check and, on the first failure, a one-line fix; exits 1 then.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

from goose_ls import __version__, atomic_files
from goose_ls import settings as settings_model
from goose_ls.agent.acp.client import RefuseAll
from goose_ls.agent.discovery import format_version, resolve
from goose_ls.agent.goosed import discover
from goose_ls.agent.goosed.server import open_goosed
from goose_ls.agent.presets import MINIMUM_GOOSE_VERSION, PRESETS
from goose_ls.agent.profile import AgentProfile
from goose_ls.agent.supervisor import AgentSupervisor
from goose_ls.agent.transport.network import health
from goose_ls.agent.transport.url_check import read_token
from goose_ls.errors import AgentError, AgentUnavailable
from goose_ls.paths import config_dir, data_dir, log_dir, own_folders
from goose_ls.tasks import Tasks
from goose_ls.workspace import sandbox
from goose_ls.workspace.agent_sandbox import Bounds, bounds_for
from goose_ls.workspace.confinement import Confinement, roots_of
from goose_ls.workspace.snapshots import git_binary


class HereTools(RefuseAll):
    """No session, but the agent's sandbox as goose-ls opened on this folder makes it."""

    def __init__(self, settings: settings_model.Settings) -> None:
        self._settings = settings

    async def sandbox_bounds(self) -> Bounds:
        workspace = self._settings.workspace
        confinement = Confinement(roots_of(os.getcwd(), workspace.extra_roots), workspace.secrets)
        own = own_folders(self._settings.data_dir)
        protected = self._settings.protected_paths()
        return await asyncio.to_thread(bounds_for, confinement, protected, own)


def _line(label: str, value: str) -> None:
    print(f"  {label:<13}{value}", flush=True)


def _fail(message: str, fix: str) -> int:
    print(f"FAIL: {message}")
    print(f"fix: {fix}")
    return 1


def capabilities_summary(profile: AgentProfile) -> str:
    data = profile.describe().get("agentCapabilities", {})
    parts = ["loadSession"] if data.get("loadSession") else []
    prompt = data.get("promptCapabilities", {})
    parts += [name for name in ("embeddedContext", "image", "audio") if prompt.get(name)]
    sessions = sorted(data.get("sessionCapabilities") or {})
    if sessions:
        parts.append("session " + "/".join(sessions))
    return ", ".join(parts) or "none"


def system_prompt_summary(profile: AgentProfile, agent: settings_model.AgentSettings) -> str:
    """Whether the agent takes a system prompt (``agent.systemPrompt``), in which modes,
    and whether the one the settings ask for goes."""
    modes = profile.system_prompt_modes
    asked = bool(agent.system_prompt.strip() or agent.project_instructions)
    if not modes:
        return "not taken" + (": agent.systemPrompt is not sent" if asked else "")
    taken = "taken (" + ", ".join(sorted(modes)) + ")"
    if asked and agent.system_prompt_mode not in modes:
        return f"{taken}: agent.systemPromptMode {agent.system_prompt_mode} is not sent"
    return taken


GOOSED_CANNOT = (
    "goosed does its own file reads, writes and commands (goose-ls's unsaved buffers, "
    "confinement of the agent's fs/terminal requests and its sandbox do not apply; "
    "permission rules, cards and checkpoints do); it has no ACP modes or config options "
    "(goose's mode is Desktop's setting), and its tools' questions (MCP elicitation) are not "
    "carried: a tool that asks gets no answer from goose-ls"
)
"""What a goosed cannot do that an ACP agent can: said once, here and in the docs."""


async def _check(
    raw_settings: Any, url: str | None, goosed: str | None = None, find: int | None = None
) -> int:
    settings, warnings = settings_model.load([("--settings", raw_settings)])
    if url is not None:
        settings.agent.url = url
    if goosed is not None:
        settings.agent.goosed = goosed
    if find is not None and (problem := _find_goosed(settings.agent, find)) is not None:
        return _fail(*problem)
    print(f"goose-ls {__version__}")
    _line("config dir", str(config_dir()))
    _line("log dir", str(log_dir()))
    _line("data dir", str(data_dir(settings.data_dir)))
    if settings.agent.goosed.strip():  # goosed runs its commands itself
        _line("terminals", "not used: goosed runs its own commands")
    else:
        _line("terminals", sandbox.choose(settings.terminal.sandbox).describe())
    _line("checkpoints", _checkpoints(settings.checkpoints.enabled))
    for warning in warnings:
        _line("warning", warning)
    agent = settings.agent
    check = _goosed if agent.goosed.strip() else _server if agent.url.strip() else _binary
    problem = await check(agent)
    if problem is not None:
        return _fail(*problem)
    return await _handshake(settings)


def _checkpoints(enabled: bool) -> str:
    """Whether turns get checkpoints (review and revert of what any agent changed)."""
    if not enabled:
        return "off (checkpoints.enabled): review and revert see goose-ls's own writes only"
    git = git_binary()
    if git is None:
        return "git not found: review and revert see goose-ls's own writes only; install git"
    return f"{git} (a shadow repository per root in the data dir)"


async def _binary(agent: settings_model.AgentSettings) -> tuple[str, str] | None:
    """The agent's command: found, and recent enough."""
    command = agent.command or list(PRESETS[agent.preset].command)
    # A command of one's own is no preset: name it by its program, not "goose".
    name = f"{Path(command[0]).name} (agent.command)" if agent.command else agent.preset
    _line("agent", f"{name}: {' '.join(command + agent.args)}")
    try:
        launch = await resolve(agent, os.environ)
    except AgentUnavailable as exc:
        return exc.message, exc.fix or ""
    _line("binary", launch.binary)
    if launch.version:
        _line("version", f"{launch.version} (minimum {format_version(MINIMUM_GOOSE_VERSION)}) ok")
    else:
        _line("version", "not checked (not goose, or agent.checkVersion is false)")
    return None


async def _server(agent: settings_model.AgentSettings) -> tuple[str, str] | None:
    """goose serve at ``agent.url``: the address allowed, a token, and something there."""
    _line("agent url", agent.url)
    try:
        _, source = read_token(agent, os.environ)
        _line("token", f"from {source}" if source != "none" else "none set")
        _line("reachable", await health(agent))
    except AgentUnavailable as exc:
        return exc.message, exc.fix or ""
    return None


async def _goosed(agent: settings_model.AgentSettings) -> tuple[str, str] | None:
    """Goose Desktop's goosed at ``agent.goosed``: reachable, the secret taken, its version."""
    _line("goosed url", agent.goosed)
    try:
        _, source = read_token(agent, os.environ)
        _line("secret", f"from {source}" if source != "none" else "none set")
        goosed = await open_goosed(agent, os.environ)
    except AgentUnavailable as exc:
        return exc.message, exc.fix or ""
    facts = goosed.facts
    await goosed.aclose()
    _line("reachable", "GET /status: ok")
    _line("auth", "secret accepted")
    _line("version", facts.describe())
    listed = "GET /sessions" if facts.lists_sessions else "not by goosed (1.40 on): the journal's"
    _line("sessions", f"listed {listed}")
    _line("cannot", GOOSED_CANNOT)
    return None


def _find_goosed(agent: settings_model.AgentSettings, pid: int) -> tuple[str, str] | None:
    """Point ``agent`` at the user's running goosed (the newest, or ``pid``; Desktop runs
    one per window, all on the same chats), its secret kept in a file of theirs."""
    found = discover.running()
    if len(found) > 1:
        _line("running", ", ".join(f"goosed pid {g.pid} (port {g.port})" for g in found))
    if pid:
        found = [g for g in found if g.pid == pid]
    if not found and pid:
        return (
            f"process {pid} is no goosed of yours with a secret",
            "Run `goose-ls doctor --find-goosed` without a process id to list them.",
        )
    if not found:
        return (
            "no goosed of yours is running (Goose Desktop 1.16 to 1.40 starts one; found "
            "on Linux only)",
            "Start Goose Desktop, or start goosed yourself and set agent.goosed (see the "
            "configuration docs, Goose Desktop's goosed).",
        )
    goosed = found[-1]  # the newest (highest start time)
    fingerprint = discover.served_fingerprint(goosed.port) if goosed.tls is not False else None
    if goosed.tls and fingerprint is None:
        return (
            f"goosed (pid {goosed.pid}) serves TLS with a certificate goose-ls cannot find "
            "in goose's tls folder",
            "Set agent.tlsFingerprint to the GOOSED_CERT_FINGERPRINT it printed.",
        )
    token_file = config_dir() / "goosed-token"
    atomic_files.atomic_write(token_file, goosed.secret + "\n")
    agent.goosed = goosed.url(tls=fingerprint is not None)
    agent.token_file = str(token_file)
    agent.tls_fingerprint = fingerprint or ""
    _line("found", f"goosed pid {goosed.pid} at {agent.goosed}")
    _line("secret", f"written to {token_file} (yours alone; it changes when Desktop restarts)")
    settings = {"goosed": agent.goosed, "tokenFile": str(token_file)}
    if fingerprint:
        settings["tlsFingerprint"] = fingerprint
    _line("settings", json.dumps({"agent": settings}))
    return None


async def _handshake(settings: settings_model.Settings) -> int:
    """Start (or reach) the agent and shake hands, as goose-ls does."""
    agent = settings.agent
    supervisor = AgentSupervisor(
        agent, RefuseAll(), HereTools(settings), os.getcwd(), lambda _: None, Tasks()
    )
    started = time.monotonic()
    try:
        conn = await supervisor.connection()
    except AgentUnavailable as exc:
        await supervisor.stop()
        return _fail(exc.message, exc.fix or "")
    except AgentError as exc:
        await supervisor.stop()
        return _fail(
            f"initialize failed: {exc.message}",
            "Run the agent command in a terminal to see its error; check its provider setup "
            "(for goose: `goose configure`).",
        )
    elapsed = time.monotonic() - started
    if agent.url.strip() and not agent.goosed.strip():
        _line("auth", "token accepted")
    if supervisor.status.sandbox:
        # As goose-ls makes it when the editor opens this folder as the workspace.
        _line("sandbox", f"{supervisor.status.sandbox} (with {os.getcwd()} opened)")
    if supervisor.status.shared:
        _line("shared", f"goose serve at {supervisor.status.url} (agent.share)")
    profile = conn.profile
    _line(
        "initialize",
        f"ok in {elapsed:.2f} s: {profile.name} {profile.version or ''} "
        f"(protocol {profile.response.protocol_version})".replace("  ", " "),
    )
    _line("capabilities", capabilities_summary(profile))
    _line("systemPrompt", system_prompt_summary(profile, agent))
    methods = profile.describe().get("authMethods", [])
    _line("auth methods", ", ".join(f"{m['id']} ({m['name']})" for m in methods) or "none")
    await supervisor.stop()
    print("All checks passed.")
    return 0


def run_doctor(
    raw_settings: str | None,
    url: str | None = None,
    goosed: str | None = None,
    find_goosed: int | None = None,
) -> int:
    data: Any = None
    if raw_settings:
        try:
            data = json.loads(raw_settings)
        except ValueError as exc:
            return _fail(
                f"--settings is not valid JSON ({exc})",
                'Pass a JSON object, e.g. \'{"agent": {"command": "goose acp"}}\'.',
            )
    return asyncio.run(_check(data, url, goosed, find_goosed))
