"""The agents goose-ls knows by name, and what each needs.

``agent.preset`` picks one; ``agent.command`` (when set) replaces its command line.
Only goose has a minimum version; each preset has an install hint for doctor, and the
places it keeps its own state, which its sandbox leaves writable (see :func:`reach_of`).
Only goose has a minimum version; each preset has an install hint for doctor.

A running agent is recognised by the name it gives in ``initialize`` (whatever command
started it): that says which mode of its own asks before it changes anything, and
whether it reads files through goose-ls (so sees unsaved buffers) or the disk itself.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import attrs

from goose_ls.agent.claude_settings import chosen_mode
from goose_ls.settings import AgentSettings
from goose_ls.workspace.agent_sandbox import (
    TOOLCHAINS,
    Reach,
    control_sockets,
    path_folders,
    program_paths,
)


@attrs.frozen
class StatePlace:
    """A folder (or file) where an agent keeps its configuration, sign-in and chats."""

    default: str
    """Relative to the home folder (or to ``base``'s folder when that variable is set)."""
    variable: str | None = None
    """An environment variable naming the place itself instead (``CODEX_HOME``)."""
    base: tuple[str, str] | None = None
    """An XDG variable and its default under home: ``default`` lies under it."""
    file: bool = False
    unless: str | None = None
    """A variable that, when set, moves this place elsewhere (``CLAUDE_CONFIG_DIR``)."""
    guarded: tuple[str, ...] = ()
    """Files in the folder that make the agent run code later (its hooks, its MCP
    servers, its extensions), even run outside goose-ls: read-only in the sandbox."""


MINIMUM_GOOSE_VERSION = (1, 16, 0)
MINIMUM_SERVE_VERSION = (1, 30, 0)
"""The first goose whose ``goose serve`` speaks ACP over a WebSocket (``agent.share``)."""

OwnChoice = Callable[[str, Mapping[str, str]], "str | None"]
"""The mode the user chose in the agent's own settings, for a session in ``cwd`` with the
agent's environment; None when they chose none."""


class ForkPoint(enum.Enum):
    """Where an agent can cut a forked chat, by its own extension of ``session/fork``
    (ACP itself forks only a whole chat)."""

    AGENT_MESSAGE = "message"
    """Up to and with one of its messages, by the id it stamped on its chunks:
    claude-agent-acp's ``_meta.jetbrains.air.fork``."""
    BEFORE_TIME = "time"
    """Before a time (Unix seconds): goose's ``_meta.conversationBefore``."""


@attrs.frozen
class Preset:
    name: str
    command: tuple[str, ...]
    install: str
    minimum_version: tuple[int, int, int] | None = None
    state: tuple[StatePlace, ...] = ()
    agent_name: str | None = None
    """``agentInfo.name`` of its agent's ``initialize`` answer."""
    asking_mode: str | None = None
    """The agent's mode that asks before edits and commands, which new sessions start in
    (``agent.mode``); None: the agent's own default is left alone."""
    own_choice: OwnChoice | None = None
    forgets_mode: bool = False
    """The agent takes a chat back (``session/resume``, ``session/load``) in its own
    default mode, not the one the chat was in."""
    reads_buffers: bool = False
    fork_point: ForkPoint | None = None
    """How its agent forks a chat at a turn that is not the last (see :class:`ForkPoint`);
    None: only a whole chat, if it forks at all."""
    forks_unadvertised: bool = False
    """Its agent answers ``session/fork`` without advertising it (goose)."""
    """The agent reads files with ``fs/read_text_file`` when goose-ls offers it."""


def _xdg(variable: str, under_home: str, name: str, *guarded: str) -> StatePlace:
    return StatePlace(name, base=(variable, under_home), guarded=guarded)


PRESETS = {
    "goose": Preset(
        "goose",
        ("goose", "acp"),
        "Install goose 1.16.0 or newer (its installer puts it in ~/.local/bin), "
        "then run `goose configure`.",
        MINIMUM_GOOSE_VERSION,
        (
            _xdg("XDG_CONFIG_HOME", ".config", "goose", "config.yaml"),
            _xdg("XDG_DATA_HOME", ".local/share", "goose"),
            _xdg("XDG_STATE_HOME", ".local/state", "goose"),
            _xdg("XDG_CACHE_HOME", ".cache", "goose"),
        ),
        agent_name="goose",
        reads_buffers=True,
        fork_point=ForkPoint.BEFORE_TIME,
        forks_unadvertised=True,
    ),
    "claude": Preset(
        "claude",
        ("claude-agent-acp",),
        "Install it with `npm install -g @agentclientprotocol/claude-agent-acp`, then sign in "
        "with `claude /login` or set ANTHROPIC_API_KEY.",
        state=(
            StatePlace(".claude", variable="CLAUDE_CONFIG_DIR", guarded=("settings.json",)),
            StatePlace(".claude.json", file=True, unless="CLAUDE_CONFIG_DIR"),
        ),
        agent_name="@agentclientprotocol/claude-agent-acp",
        asking_mode="default",
        own_choice=chosen_mode,
        fork_point=ForkPoint.AGENT_MESSAGE,
    ),
    "codex": Preset(
        "codex",
        ("codex-acp",),
        "Install it with `npm install -g @zed-industries/codex-acp`, then sign in with `codex login`.",
        # codex writes its config.toml itself (a mode chosen is kept there): not guarded.
        state=(StatePlace(".codex", variable="CODEX_HOME"),),
        agent_name="codex-acp",
        asking_mode="read-only",
        forgets_mode=True,
    ),
    "gemini": Preset(
        "gemini",
        ("gemini", "--experimental-acp"),
        "Install it with `npm install -g @google/gemini-cli`, then run `gemini` once to sign in.",
        state=(StatePlace(".gemini", guarded=("settings.json",)),),
    ),
}


def _home_of(environ: Mapping[str, str]) -> Path | None:
    home = environ.get("HOME")
    return Path(os.path.realpath(home)) if home and os.path.isabs(home) else None


def state_paths(preset: Preset, environ: Mapping[str, str]) -> list[tuple[StatePlace, Path]]:
    """Where ``preset``'s agent keeps its state, given its environment."""
    home = _home_of(environ)
    found: list[tuple[StatePlace, Path]] = []
    for place in preset.state:
        if place.unless and environ.get(place.unless):
            continue
        named = environ.get(place.variable) if place.variable else None
        base = environ.get(place.base[0]) if place.base else None
        if named and os.path.isabs(named):
            found.append((place, Path(named)))
        elif base and os.path.isabs(base):
            found.append((place, Path(base) / place.default))
        elif home is not None:
            under = Path(place.base[1]) if place.base else Path()
            found.append((place, home / under / place.default))
    return found


def _made(path: Path, is_file: bool) -> Path | None:
    """The state place, made (private to the user) if missing; None if it cannot be."""
    try:
        if is_file:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not path.exists():
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                os.write(fd, b"{}")  # the agents that keep a JSON file read an empty one
                os.close(fd)
        else:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except FileExistsError:
        pass
    except OSError:
        return None
    return path


def reach_of(settings: AgentSettings, binary: str, environ: Mapping[str, str]) -> Reach:
    """What the agent's sandbox leaves it: its program, its state, the toolchains and
    what the user added (``agent.sandboxReadable``/``sandboxWritable``)."""
    preset = PRESETS[settings.preset]
    homes = [h for h in (_home_of(os.environ), _home_of(environ)) if h is not None]
    homes = list(dict.fromkeys(homes))
    places = state_paths(preset, environ)
    state = [path for place, path in places if _made(path, place.file) is not None]
    guarded = [path / name for place, path in places for name in place.guarded]
    toolchains = [home / name for home in homes for name in TOOLCHAINS]
    runtime = [os.environ.get("XDG_RUNTIME_DIR"), environ.get("XDG_RUNTIME_DIR")]
    home = homes[-1] if homes else None

    def placed(paths: list[str]) -> list[Path]:
        """Absolute paths, ``~`` being the agent's home folder."""
        return [
            Path(os.path.abspath(str(home) + p[1:] if p.startswith("~") and home else p))
            for p in paths
        ]

    return Reach(
        program=program_paths(binary, environ, homes),
        state=state,
        readable=[*toolchains, *path_folders(environ), *placed(settings.sandbox_readable)],
        guarded=guarded,
        writable=placed(settings.sandbox_writable),
        homes=homes,
        sockets=[
            *(Path(p) for p in dict.fromkeys(runtime) if p and os.path.isabs(p)),
            *control_sockets(),
        ],
        network=settings.sandbox_network,
        tmpdir=environ.get("TMPDIR"),
    )


def of_agent(agent_name: str) -> Preset | None:
    """The preset whose agent calls itself ``agent_name`` in ``initialize``."""
    return next((p for p in PRESETS.values() if p.agent_name == agent_name), None)
