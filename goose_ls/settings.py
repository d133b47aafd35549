"""The settings model: typed, fully defaulted, camelCase on the wire.

Settings arrive from three places, applied in this order (later wins):
``initializationOptions``, ``workspace/configuration`` (section ``goose``) and
``GOOSE_LS_*`` environment variables. A bad value never stops the server: it is
skipped with a warning that names the key, and the default (or earlier value) stays.

Every setting, its type and its default, in one place.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal, get_origin

import attrs

from goose_ls import logs
from goose_ls.mcp_servers import REDACTED, McpServer
from goose_ls.wire import camel, converter, describe_error, to_wire
from goose_ls.workspace.confinement import DEFAULT_SECRETS
from goose_ls.workspace.path_map import PathMap
from goose_ls.workspace.policy import DEFAULT_PROTECTED, Rule

ENV_PREFIX = "GOOSE_LS_"
SECTION = "goose"


@attrs.define
class AgentSettings:
    """How to find, check and run the ACP agent."""

    preset: Literal["goose", "claude", "codex", "gemini"] = "goose"
    """A known agent: goose (``goose acp``), claude (``claude-agent-acp``), codex
    (``codex-acp``) or gemini (``gemini --experimental-acp``)."""
    command: list[str] = attrs.field(factory=list, metadata={"shell_words": True})
    """The agent command line, replacing the preset's; a string is split like a shell would."""
    binary_path: str = ""
    """Absolute path of the agent binary; replaces discovery of the command's first word."""
    args: list[str] = attrs.Factory(list)
    """Extra arguments appended to the command."""
    env: dict[str, str] = attrs.field(factory=dict, metadata={"secret": True})
    """Extra environment variables for the agent (the editor's environment is inherited).
    Secret: its values (API keys) are never repeated in a warning."""
    check_version: bool = True
    """Check that goose is at least the minimum version before starting it."""
    start: Literal["eager", "lazy"] = "eager"
    """``eager`` starts the agent right after ``initialize``; ``lazy`` on first use."""
    mode: str = ""
    """The mode new sessions start in: a mode id the agent offers; empty for the
    preset's mode that asks before edits and commands (unless the user chose a mode in
    the agent's own settings); ``agent`` for the agent's own default."""
    request_timeout: float = 60.0
    """Seconds to wait for the agent's answer to ``initialize``, ``authenticate``, each
    ``session/list`` page, ``session/close``, ``session/set_mode`` and
    ``session/set_config_option``. Turns never time out; ``session/new`` and
    ``session/load`` have ``sessionTimeout``."""
    session_timeout: float = 330.0
    """Seconds to wait for ``session/new`` and ``session/load`` (goose starts extensions)."""
    shutdown_timeout: float = 5.0
    """Seconds between SIGTERM and SIGKILL when stopping the agent."""
    client_fs: bool = True
    """Offer the agent file reads and writes through goose-ls (unsaved buffers, edits
    with undo, confinement). Off: the agent uses the disk directly, unchecked."""
    client_terminal: bool = True
    """Offer the agent terminals run by goose-ls (confined cwd, output in the chat)."""
    path_map: PathMap = attrs.Factory(PathMap)
    """Folders the agent sees under other paths (a container, a remote host), local to
    agent: ``{"/home/me/proj": "/workspace"}``. Every path between goose-ls and the agent
    is mapped; an agent path in no mapped folder is refused."""
    stall_timeout: float = 300.0
    """Seconds without a word from the agent before a running turn is flagged as stalled
    (0: never)."""
    cancel_timeout: float = 10.0
    """Seconds a cancelled turn waits for the agent to confirm before goose-ls ends it
    itself, taking the agent to be stuck (0: wait for ever)."""
    restart_delay: float = 1.0
    """Seconds before goose-ls restarts a crashed agent by itself; doubled after each
    further failure within ``restartWindow``."""
    restart_limit: int = 5
    """Failures (crashes, and restarts that fail) within ``restartWindow`` after which
    goose-ls gives up: no agent starts until ``goose.restart``."""
    restart_window: float = 300.0
    """Seconds over which failures are counted; older ones are forgotten."""
    url: str = ""
    """A running ``goose serve`` to connect to instead of starting the command:
    ``ws://127.0.0.1:3284/acp``, or ``wss://`` for one with TLS."""
    goosed: str = ""
    """Goose Desktop's own server (goosed, goose 1.16 to 1.40: REST and server-sent
    events, not ACP) to use instead of an ACP agent: ``https://127.0.0.1:PORT``. Its
    secret is read as the token is (``GOOSE_LS_AGENT_TOKEN``, ``tokenFile``, ``token``),
    its certificate pinned with ``tlsFingerprint``. Set, it wins over ``url`` and ``share``."""
    token: str = attrs.field(default="", metadata={"secret": True})
    """The server's token (its ``GOOSE_SERVER__SECRET_KEY``). The least safe place for
    it: ``GOOSE_LS_AGENT_TOKEN`` or ``tokenFile`` come first."""
    token_file: str = ""
    """A file holding the server's token (readable by you alone)."""
    tls_fingerprint: str = ""
    """The SHA-256 fingerprint of a ``wss://`` server's certificate, trusted instead of
    the system's authorities (goose prints it as ``GOOSED_CERT_FINGERPRINT``)."""
    allow_insecure: bool = False
    """Let ``ws://`` (no TLS) reach a server on another machine: the token and the chat
    cross the network in clear text."""
    share: bool = False
    """Run one ``goose serve`` for all of this user's goose-ls (the first starts it, the
    others attach to it) instead of a ``goose acp`` per editor window."""
    share_idle_grace: float = 30.0
    """Seconds a shared server waits, once no goose-ls uses it, before it stops."""
    mcp_servers: list[McpServer] = attrs.field(
        factory=list, metadata={"each": True, "secret": True}
    )
    """MCP servers offered to the agent with each session (see :mod:`goose_ls.mcp_servers`)."""
    sandbox: Literal["workspace", "off"] = "workspace"
    """``workspace``: the agent's own process runs in a bubblewrap sandbox (Linux) that
    lets it write only the workspace roots and its own state, hides the home folder, the
    secrets and goose-ls's files, and gives it a private /tmp; without bubblewrap it runs
    unsandboxed, and status and doctor say so. ``off``: unsandboxed, on purpose."""
    sandbox_readable: list[str] = attrs.Factory(list)
    """More files and folders the sandboxed agent may read (``~`` is its home folder):
    a toolchain or a cache its commands need."""
    sandbox_writable: list[str] = attrs.Factory(list)
    """More files and folders the sandboxed agent may write."""
    sandbox_network: bool = True
    """Whether the sandboxed agent reaches the network (its model's API needs it); off
    cuts it off entirely, loopback included."""
    system_prompt: str = ""
    """Your instructions for the agent, sent with every chat it opens (ACP's
    ``systemPrompt``) to an agent that takes one; added after its own instructions."""
    system_prompt_mode: Literal["append", "override"] = "append"
    """``append``: the system prompt is added to the agent's own instructions.
    ``override``: it replaces them, for an agent that offers that (else nothing is sent)."""
    project_instructions: bool = False
    """Also send the project's instruction file (``projectInstructionsFile``) in the system
    prompt: the repository's text, so off unless you turn it on."""
    project_instructions_file: str = "AGENTS.md"
    """The project's instruction file, relative to the workspace folder."""


@attrs.define
class TranscriptSettings:
    """The chat documents of the plugin-free chat."""

    edit_interval: float = 0.25
    """Seconds between two edits streamed into an open transcript (at most 1/interval a second)."""
    save_interval: float = 2.0
    """Seconds between two saves of a transcript's file while the editor shows it and a
    reply streams in (and at every turn's end): quitting without saving loses nothing."""
    apply_edit_timeout: float = 10.0
    """Seconds to wait for the editor to apply an edit before writing the file instead."""
    max_bytes: int = 1_000_000
    """A transcript longer than this moves to a ``.partN.md`` file at the end of a turn,
    leaving a link to it; editors stay fast on long chats."""


@attrs.define
class JournalSettings:
    """How much of the past the journal keeps (whole chats are pruned, oldest first)."""

    max_age_days: float = 90
    """Chats not used for this many days are pruned (0: kept whatever their age)."""
    max_bytes: int = 1 << 30
    """The journal's size above which the chats used longest ago are pruned (0: no limit)."""


@attrs.define
class CheckpointSettings:
    """The snapshots of the workspace taken before and after each turn (review, revert)."""

    enabled: bool = True
    """Snapshot the workspace roots around each turn (needs git)."""
    exclude: list[str] = attrs.Factory(list)
    """More ``.gitignore`` patterns left out of the snapshots, besides the built-in list
    and the project's ignore files."""
    max_file_bytes: int = 1 << 20
    """Files bigger than this are left out of the snapshots."""
    max_files: int = 100_000
    """A root with more files than this is not snapshotted."""


@attrs.define
class WorkspaceSettings:
    """What the agent may touch through goose-ls."""

    extra_roots: list[str] = attrs.Factory(list)
    """Folders outside the workspace the agent may read, write and run in (relative ones
    against the workspace; ``/``, your home folder and folders holding it are ignored)."""
    outside: Literal["deny", "ask"] = "deny"
    """Other paths: refused, or asked about (the policy's rules apply to the question)."""
    secrets: list[str] = attrs.Factory(lambda: list(DEFAULT_SECRETS))
    """File name patterns refused wherever they are (``.ssh/*`` style for a folder)."""
    allow_hard_links: bool = False
    """Let the agent read and write files that have a hard link outside the workspace
    roots (made to reach a file from elsewhere). A link to a secret is refused either way."""
    max_read_bytes: int = 10_000_000
    """The largest file the agent may read whole; bigger ones are read in parts
    (``line`` and ``limit``, streamed), each part at most this size."""
    protected: list[str] = attrs.Factory(lambda: list(DEFAULT_PROTECTED))
    """Files that run code later (git hooks, editor configs, build files): writing one
    is always asked, unless a policy rule names it (``.ssh/*`` style for a folder)."""
    watch_after_turn: float = 2.0
    """Seconds goose-ls goes on following open files on disk after the last turn ends:
    an agent's process may still be writing what its turn started (a formatter it ran)."""


@attrs.define
class ImageSettings:
    """Images in a chat: those the user attaches to a prompt, those the agent sends."""

    max_bytes: int = 10_000_000
    """The largest image goose-ls reads for a prompt or keeps from the agent, in bytes
    (decoded); a bigger one is refused, with a word in the chat."""


@attrs.define
class TerminalSettings:
    """How the agent's commands run (``agent.clientTerminal``)."""

    sandbox: Literal["workspace", "strict", "off"] = "workspace"
    """``workspace``: in a bubblewrap sandbox (Linux) where only the workspace, the extra
    roots and a private /tmp are writable and the secrets list's files are empty;
    without bubblewrap, unsandboxed (the permission card says so). ``strict``: the same
    and no network; without bubblewrap, terminals are refused. ``off``: unsandboxed."""
    allowed_env: list[str] = attrs.Factory(list)
    """Variables the agent may set although they can inject code (``LD_PRELOAD``,
    ``PATH``, ``PYTHONSTARTUP``...); the others of that list are dropped."""


@attrs.define
class PolicySettings:
    """Your permission rules (after the project's ``.goose-ls/policy.json``)."""

    rules: list[Rule] = attrs.Factory(list)


@attrs.define
class Settings:
    """Everything a user can configure."""

    agent: AgentSettings = attrs.field(factory=AgentSettings, metadata={"shorthand": "preset"})
    """Also accepts just a preset name: ``"agent": "claude"``."""
    transcript: TranscriptSettings = attrs.Factory(TranscriptSettings)
    journal: JournalSettings = attrs.Factory(JournalSettings)
    workspace: WorkspaceSettings = attrs.Factory(WorkspaceSettings)
    checkpoints: CheckpointSettings = attrs.Factory(CheckpointSettings)
    terminal: TerminalSettings = attrs.Factory(TerminalSettings)
    images: ImageSettings = attrs.Factory(ImageSettings)
    policy: PolicySettings = attrs.Factory(PolicySettings)
    data_dir: str = ""
    """Where sessions and transcripts live; empty means the platform's user data dir."""

    def protected_paths(self) -> list[str]:
        """Paths protected besides their classes: ``workspace.protected``, and the project's
        instruction file while ``agent.projectInstructions`` sends it before every chat (an
        agent that wrote to it would tell every later chat what to do)."""
        told = [self.agent.project_instructions_file] if self.agent.project_instructions else []
        return [*self.workspace.protected, *told]


attrs.resolve_types(AgentSettings)
attrs.resolve_types(TranscriptSettings)
attrs.resolve_types(JournalSettings)
attrs.resolve_types(WorkspaceSettings)
attrs.resolve_types(CheckpointSettings)
attrs.resolve_types(TerminalSettings)
attrs.resolve_types(ImageSettings)
attrs.resolve_types(PolicySettings)
attrs.resolve_types(Settings)


def apply(settings: Settings, data: Any, source: str) -> list[str]:
    """Merge ``data`` (camelCase JSON) into ``settings`` in place; return warnings."""
    warnings: list[str] = []
    if data is None:
        return warnings
    if not isinstance(data, Mapping):
        return [f"{source}: settings must be an object, got {type(data).__name__}; ignored"]
    _apply(settings, data, "", source, warnings)  # keys as the docs name them
    return warnings


def unwrap_section(data: Any) -> Any:
    """Accept both ``{...}`` and ``{"goose": {...}, ...}``: Helix reuses one table for
    initializationOptions and configuration, VS Code pushes every extension's section."""
    if isinstance(data, Mapping) and SECTION in data:
        section = data[SECTION]
        # An empty Lua table ({}) reaches us as [], so an empty list is an empty section.
        return {} if section == [] else section
    return data


def _apply(target: Any, data: Mapping[str, Any], path: str, source: str, out: list[str]) -> None:
    fields = {camel(f.name): f for f in attrs.fields(type(target))}
    for key, value in data.items():
        key_path = f"{path}.{key}" if path else key
        field = fields.get(key)
        if field is None:
            out.append(f"{source}: unknown setting '{key_path}' ignored")
            continue
        current = getattr(target, field.name)
        if isinstance(value, str) and field.metadata.get("shorthand"):
            value = {field.metadata["shorthand"]: value}
        if attrs.has(type(current)):
            if isinstance(value, Mapping):
                _apply(current, value, key_path, source, out)
            else:
                out.append(f"{source}: '{key_path}' must be an object; ignored")
            continue
        if field.metadata.get("shell_words") and isinstance(value, str):
            value = shlex.split(value)
        kept = "the earlier value" if field.metadata.get("secret") else json.dumps(to_wire(current))
        if container := _container_problem(field.type, value):
            out.append(f"{source}: '{key_path}' {container}; keeping {kept}")
            continue
        if field.metadata.get("each"):
            setattr(target, field.name, _each(value, field.type, key_path, source, out))
            continue
        try:
            setattr(target, field.name, converter.structure(value, field.type))
        except Exception as exc:
            out.append(f"{source}: '{key_path}' {describe_error(exc)}; keeping {kept}")


def _each(items: list[Any], kind: Any, key_path: str, source: str, out: list[str]) -> list[Any]:
    """A list whose entries stand alone (MCP servers): a bad one is skipped, not the list."""
    (item_kind,) = kind.__args__
    good = []
    for index, item in enumerate(items):
        try:
            good.append(converter.structure(item, item_kind))
        except Exception as exc:
            out.append(f"{source}: '{key_path}[{index}]' {describe_error(exc)}; skipped")
    return good


def _container_problem(kind: Any, value: Any) -> str | None:
    """cattrs would happily read a string as a list of characters; say no instead."""
    origin = get_origin(kind)
    if origin is list and not isinstance(value, list):
        return f"expected a list, got {type(value).__name__}"
    if origin is dict and not isinstance(value, Mapping):
        return f"expected an object, got {type(value).__name__}"
    return None


def env_overrides(environ: Mapping[str, str] | None = None) -> tuple[dict[str, Any], list[str]]:
    """Read ``GOOSE_LS_AGENT_BINARY_PATH``-style variables into a settings dict."""
    environ = os.environ if environ is None else environ
    result: dict[str, Any] = {}
    warnings: list[str] = []
    for dotted, field in _leaf_fields(Settings):
        name = ENV_PREFIX + "_".join(part.upper() for part in dotted)
        raw = environ.get(name)
        if raw is None:
            continue
        value: Any = raw
        shown = f"{name}={REDACTED}" if field.metadata.get("secret") else f"{name}={raw!r}"
        if field.type is not str and not field.metadata.get("shell_words"):
            try:
                value = json.loads(raw)
            except ValueError:
                if _wants_string(field.type):
                    value = raw
                else:
                    warnings.append(f"environment: {shown} is not valid JSON; ignored")
                    continue
        elif field.metadata.get("shell_words") and raw.lstrip().startswith("["):
            try:
                value = json.loads(raw)
            except ValueError:
                warnings.append(f"environment: {shown} is not a valid JSON list; ignored")
                continue
        node = result
        for part in dotted[:-1]:
            node = node.setdefault(camel(part), {})
        node[camel(dotted[-1])] = value
    return result, warnings


def agent_environment(environ: Mapping[str, str], agent: AgentSettings) -> dict[str, str]:
    """What the agent runs with: the editor's environment without goose-ls's own
    variables (a ``GOOSE_LS_AGENT_TOKEN`` is goose-ls's, not the agent's), and
    ``agent.env``."""
    kept = {name: value for name, value in environ.items() if not name.startswith(ENV_PREFIX)}
    return {**kept, **agent.env}


def _wants_string(kind: Any) -> bool:
    return kind is str or getattr(kind, "__origin__", None) is Literal


def _leaf_fields(cls: type, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for field in attrs.fields(cls):
        if isinstance(field.type, type) and attrs.has(field.type):
            yield from _leaf_fields(field.type, (*prefix, field.name))
        else:
            yield (*prefix, field.name), field


def load(
    sources: Iterable[tuple[str, Any]], environ: Mapping[str, str] | None = None
) -> tuple[Settings, list[str]]:
    """Build settings from ``(source name, data)`` pairs, then the environment."""
    settings = Settings()
    warnings: list[str] = []
    for source, data in sources:
        warnings += apply(settings, unwrap_section(data), source)
    env_data, env_warnings = env_overrides(environ)
    warnings += env_warnings
    warnings += apply(settings, env_data, "environment")
    for secret in secret_values(settings):
        logs.hide(secret)
    return settings, warnings


def secret_values(settings: Settings) -> Iterator[str]:
    """The values no log may hold: ``agent.env``'s, the MCP servers' env and header
    values, the agent's token."""
    agent = settings.agent
    yield from agent.env.values()
    for server in agent.mcp_servers:
        yield from (pair.value for pair in (*server.env, *server.headers))
    yield agent.token


TOKEN_LIKE = re.compile(
    r"(?i)((?:--?|\b)[\w-]*(?:token|secret|password|passwd|api[_-]?key|auth)[\w-]*[=:])\S+"
    r"|\b(?:sk|pk|rk|ghp|gho|ghs|ghu|github_pat|xox[abpr]|glpat|AKIA|AIza)[\w-]{8,}"
    r"|\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{32,}\b"
)
"""``--api-key=…``, ``TOKEN:…``, well-known key prefixes, and long random-looking words."""


def redact(text: str) -> str:
    """``text`` with anything that looks like a credential replaced."""
    return TOKEN_LIKE.sub(lambda m: (m.group(1) or "") + REDACTED, text)


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    return value


def describe(settings: Settings) -> dict[str, Any]:
    """The effective settings as camelCase JSON (for logs, ``goose/status`` and doctor),
    with ``agent.env`` values, MCP servers' env and header values and anything token-like
    redacted: logs get shared."""
    result: dict[str, Any] = _redacted(to_wire(settings))
    result["agent"]["env"] = {name: REDACTED for name in settings.agent.env}
    result["agent"]["token"] = REDACTED if settings.agent.token else ""
    result["agent"]["mcpServers"] = [
        _redacted(server.redacted()) for server in settings.agent.mcp_servers
    ]
    return result
