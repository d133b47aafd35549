"""The permission mode a user chose in Claude Code's own settings files.

Claude Code starts a session in ``permissions.defaultMode`` when some settings file sets
it, and in its ``auto`` mode otherwise. goose-ls starts Claude's sessions in its asking
mode unless the user chose one; this reads their choice the way Claude does, cheaply:
the user's ``settings.json`` (in ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``), the
project's ``.claude/settings.local.json`` and ``.claude/settings.json``, and the managed
settings file, the first of them that sets it deciding. An escalating mode in the
project's committed ``settings.json`` is dropped by Claude (the repository is not the
user), which then starts as if none were set. Managed settings that come by MDM or from a
server are not read.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

ESCALATING = frozenset({"acceptEdits", "auto", "bypassPermissions"})
"""Modes Claude Code does not take from a project's committed settings."""
MAX_BYTES = 1 << 20
"""A settings file bigger than this is not read (no one writes such a file by hand)."""


def managed_path() -> Path:
    if sys.platform == "darwin":
        return Path("/Library/Application Support/ClaudeCode/managed-settings.json")
    if sys.platform == "win32":
        return Path("C:/Program Files/ClaudeCode/managed-settings.json")
    return Path("/etc/claude-code/managed-settings.json")


def config_dir(environ: Mapping[str, str]) -> Path | None:
    """Claude Code's own folder, as the agent's environment names it."""
    if folder := environ.get("CLAUDE_CONFIG_DIR"):
        return Path(folder).expanduser()
    home = environ.get("HOME") or environ.get("USERPROFILE")
    return Path(home) / ".claude" if home else None


def chosen_mode(cwd: str, environ: Mapping[str, str]) -> str | None:
    """The ``permissions.defaultMode`` Claude would start a session in ``cwd`` with;
    None when no settings file sets one it honours."""
    project = Path(cwd) / ".claude"
    user = config_dir(environ)
    sources = [
        (managed_path(), True),
        (project / "settings.local.json", True),
        (project / "settings.json", False),
        *([(user / "settings.json", True)] if user else []),
    ]
    for path, may_loosen in sources:
        mode = _default_mode(path)
        if mode is not None:
            return mode if may_loosen or mode not in ESCALATING else None
    return None


def _default_mode(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    permissions = data.get("permissions") if isinstance(data, dict) else None
    mode = permissions.get("defaultMode") if isinstance(permissions, dict) else None
    return mode if isinstance(mode, str) and mode else None
