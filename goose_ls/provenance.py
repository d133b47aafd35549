"""Who may set what: the settings only the user chooses, and what a folder may add.

A folder's settings (VS Code's ``.vscode/settings.json``, the answer to a
``workspace/configuration`` item with a ``scopeUri``) come with the repository, so
whoever wrote them is not the user. A folder may set what only tightens or does no
harm; what chooses the agent, where it connects, its sandbox and what it may reach comes
from the user alone: ``initializationOptions``, an unscoped ``workspace/configuration``
answer, ``workspace/didChangeConfiguration`` and ``GOOSE_LS_*`` variables. The table in
docs/configuration.md ("Who may set what") is this module in words; a test holds them
together.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from goose_ls import settings as settings_model
from goose_ls.settings import Settings
from goose_ls.wire import camel, converter
from goose_ls.workspace.policy import Rule

USER_ONLY: frozenset[str] = frozenset(
    {
        # What runs as the agent, with what, in which of its modes.
        "agent.preset",
        "agent.command",
        "agent.binaryPath",
        "agent.args",
        "agent.env",
        "agent.checkVersion",
        "agent.mode",
        "agent.clientFs",
        "agent.clientTerminal",
        "agent.pathMap",
        "agent.mcpServers",
        # What it is told before every chat, and from which file of the project.
        "agent.systemPrompt",
        "agent.systemPromptMode",
        "agent.projectInstructions",
        "agent.projectInstructionsFile",
        # Where it connects, and with which token.
        "agent.url",
        "agent.goosed",
        "agent.token",
        "agent.tokenFile",
        "agent.tlsFingerprint",
        "agent.allowInsecure",
        "agent.share",
        # Its sandbox and its commands'.
        "agent.sandbox",
        "agent.sandboxReadable",
        "agent.sandboxWritable",
        "agent.sandboxNetwork",
        "terminal.sandbox",
        "terminal.allowedEnv",
        # What it may reach.
        "workspace.extraRoots",
        "workspace.outside",
        "workspace.allowHardLinks",
        # goose-ls's own files: the journal of every project, the trusted policies.
        "dataDir",
        "journal.maxAgeDays",
        "journal.maxBytes",
        # What review and revert can see of a turn.
        "checkpoints.enabled",
        "checkpoints.exclude",
        "checkpoints.maxFileBytes",
        "checkpoints.maxFiles",
        # Whether an open file the agent's process writes just after a turn is followed.
        "workspace.watchAfterTurn",
        # How big an image the agent may make goose-ls keep.
        "images.maxBytes",
    }
)
"""Settings a folder never sets: each could loosen what holds the agent, or reach the
user's other projects and secrets."""

FOLDER_ADDS: frozenset[str] = frozenset(
    {"workspace.secrets", "workspace.protected", "policy.rules"}
)
"""Lists a folder may add to but never shorten: its secrets and protected patterns are
added to the user's, its ``deny`` and ``ask`` rules go before the user's rules, its
``allow`` rules are ignored."""

WHY = (
    "only your own settings choose the agent, its server and token, its sandbox, what it "
    "may reach, what it is told before every chat and what is allowed without asking"
)


def leaf_keys(cls: type = Settings, prefix: str = "") -> list[str]:
    """Every setting's dotted camelCase key."""
    keys = []
    for field in attrs.fields(cls):
        key = f"{prefix}{camel(field.name)}"
        if isinstance(field.type, type) and attrs.has(field.type):
            keys += leaf_keys(field.type, f"{key}.")
        else:
            keys.append(key)
    return keys


def load(
    sources: Sequence[tuple[str, Any]],
    folders: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> tuple[Settings, list[str]]:
    """Settings from ``sources`` in order, those named in ``folders`` screened first:
    what they set of :data:`USER_ONLY` is dropped (and named in a warning when it would
    have changed the user's value), and :data:`FOLDER_ADDS` only added to."""
    folder_names = set(folders)
    user_sources = [s for s in sources if s[0] not in folder_names]
    user, _ = settings_model.load(user_sources, environ)
    # A folder's values come after the user's (as VS Code's folder settings override the
    # user's), whenever each arrived: a later push of the user's keeps what it added.
    screened: list[tuple[str, Any]] = list(user_sources)
    notes: list[str] = []
    for name, data in sources:
        if name not in folder_names:
            continue
        kept, ignored = screen(user, settings_model.unwrap_section(data))
        screened.append((name, kept))
        if ignored:
            keys = ", ".join(f"'{key}'" for key in ignored)
            notes.append(f"{name}: {keys} set by the folder, ignored ({WHY}); yours kept")
    loaded, warnings = settings_model.load(screened, environ)
    return loaded, notes + warnings


def screen(user: Settings, data: Any) -> tuple[Any, list[str]]:
    """``data`` (a folder's settings) less what a folder may not set, and the keys that
    were dropped although they differ from ``user``'s."""
    if not isinstance(data, Mapping):
        return data, []
    if isinstance(data.get("agent"), str):  # the shorthand: "agent": "claude"
        data = {**data, "agent": {"preset": data["agent"]}}
    ignored: list[str] = []
    return _screen(user, data, "", ignored), ignored


def _screen(user: Settings, data: Mapping[str, Any], prefix: str, ignored: list[str]) -> Any:
    kept: dict[str, Any] = {}
    for key, value in data.items():
        path = f"{prefix}{key}"
        if path in USER_ONLY:
            if _changes(user, path, value):
                ignored.append(path)
        elif path in FOLDER_ADDS:
            if isinstance(value, list):
                kept[key] = _added(user, path, value, ignored)
            else:
                kept[key] = value  # refused by settings.apply, with its warning
        elif isinstance(value, Mapping) and any(k.startswith(f"{path}.") for k in _SCREENED):
            kept[key] = _screen(user, value, f"{path}.", ignored)
        else:
            kept[key] = value
    return kept


_SCREENED = USER_ONLY | FOLDER_ADDS


def _current(settings: Settings, path: str) -> Any:
    value: Any = settings
    for part in path.split("."):
        value = getattr(value, _snake(part))
    return value


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _changes(user: Settings, path: str, value: Any) -> bool:
    """Whether setting ``path`` to ``value`` over ``user``'s settings changes anything (a
    folder answer that repeats the user's own, as Neovim's and Helix's do, is no attempt)."""
    trial = copy.deepcopy(user)
    nested: Any = value
    for part in reversed(path.split(".")):
        nested = {part: nested}
    settings_model.apply(trial, nested, "folder")
    return bool(_current(trial, path) != _current(user, path))


def _added(user: Settings, path: str, value: list[Any], ignored: list[str]) -> list[Any]:
    """The user's list with the folder's new entries added (for rules: its new ``deny``
    and ``ask`` rules first, its new ``allow`` rules dropped)."""
    mine = list(_current(user, path))
    if path != "policy.rules":
        return [*mine, *(item for item in value if item not in mine)]
    tighter: list[Any] = []
    for item in value:
        try:
            rule = converter.structure(item, Rule)
        except Exception:
            tighter.append(item)  # refused by settings.apply, with its warning
            continue
        if rule in mine:
            continue
        if rule.action == "allow":
            if f"{path} (allow rules)" not in ignored:
                ignored.append(f"{path} (allow rules)")
            continue
        tighter.append(item)
    return [*tighter, *(converter.unstructure(rule) for rule in mine)]
