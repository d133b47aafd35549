"""What a tool call would touch, read from its shape: its kind, its paths, its shell line.

claude-agent-acp and codex-acp never send ``fs/*`` or ``terminal/*``: they ask with
``session/request_permission`` and then act in their own process. What the request says
(``locations``, a diff's ``path``, ``rawInput``) is all goose-ls sees of what the call
would do, so the rules judge that. ``rawInput`` is read in the shapes below. Any other
shape may name a target goose-ls cannot see, and the call is *unseen*: a deny rule still
judges what was seen, but nothing allows it without asking.

- Claude Code's tools, known by ``name``: Read, Edit, MultiEdit (``file_path``), Write
  (``file_path`` or ``path``), NotebookEdit (``notebook_path``), Glob and Grep (``path``
  or ``file_path``; neither: the session's folder), Bash (``command``, a shell line).
- codex's: a command (``command``, an argv list) run in ``cwd``; a patch (``changes``,
  keyed by path, a renamed file's new name in ``move_path``).
- goose's and any other agent's: ``path``, ``file``, ``file_path``, ``notebook_path``,
  ``cwd``, and ``command`` as a line or an argv.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import attrs

from goose_ls.tool_calls import ToolCallState
from goose_ls.workspace import shell

PATH_KEYS = ("path", "file", "file_path", "notebook_path")
"""The ``rawInput`` keys that name the one file a call touches, in any agent's shape."""
MAPPED_KEYS = (*PATH_KEYS, "cwd")
"""The ``rawInput`` keys that hold a path: those, and where a command runs."""

CLAUDE_TOOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "Read": ("read", ("file_path",)),
    "Edit": ("edit", ("file_path",)),
    "MultiEdit": ("edit", ("file_path",)),
    "Write": ("edit", ("file_path", "path")),
    "NotebookEdit": ("edit", ("notebook_path",)),
    "Glob": ("search", ("path", "file_path")),
    "Grep": ("search", ("path", "file_path")),
    "Bash": ("execute", ()),
}
"""Claude Code's tools: the kind of each (whatever kind the agent reports: it calls
NotebookEdit ``other``) and where its input names the file (Claude Code takes either
spelling where two are listed, so both are judged)."""
SEARCHES_HERE = {"Glob", "Grep"}
"""Claude Code's tools that search the session's folder when given no path."""

GOOSE_TOOL_KINDS = {"shell": "execute", "edit": "edit", "write": "edit", "read": "read"}
"""goose asks with kind "other"; its developer tools are named in the title."""

UNKNOWN_SHAPE = "its input is of a shape goose-ls does not know"
NOTHING_NAMED = "it names no file and no command"


@attrs.frozen
class Seen:
    """What a tool call says it would touch."""

    kind: str
    paths: tuple[str, ...] = ()
    command: str | None = None
    """The shell line it runs (an argv made one line, see :func:`shell.argv_line`)."""
    cwd: str | None = None
    """Where it runs its command: confined like a terminal's, not matched by path rules
    (a command in ``src`` may touch anything)."""
    unseen: str | None = None
    """Why goose-ls cannot see all it would touch (None: it can)."""
    said: str | None = None
    """All an unseen call said (its name, title, kind and input): two unseen calls are
    the same call only when they said the same (a grant "for this session" is for that
    very call)."""


@attrs.frozen
class _Input:
    paths: tuple[str, ...] = ()
    command: str | None = None
    cwd: str | None = None
    unseen: str | None = None
    runs: bool = False
    """It certainly runs its command (Claude's Bash, codex's argv): kind ``execute``."""


def read(call: ToolCallState, folder: str | None = None) -> Seen:
    """What ``call`` would touch; relative paths are taken from the session's ``folder``
    when given, ``~`` is the home folder (as the agent's own tools take them)."""
    reported = [loc.get("path") for loc in call.locations or [] if isinstance(loc, dict)]
    reported += [
        item.get("path")
        for item in call.content or []
        if isinstance(item, dict) and item.get("type") == "diff"
    ]
    claude = CLAUDE_TOOLS.get(call.name or "")
    found = _claude(call.name or "", call.raw_input, folder) if claude else _any(call.raw_input)
    paths = [str(p) for p in reported if isinstance(p, str) and p] + list(found.paths)
    spelt = tuple(dict.fromkeys(_spelt(path, folder) for path in paths))
    unseen = found.unseen
    if unseen is None and not spelt and found.command is None:
        unseen = NOTHING_NAMED
    cwd = _spelt(found.cwd, folder) if found.cwd is not None else None
    said = None if unseen is None else _said(call)
    return Seen(_kind(call, claude, found.runs), spelt, found.command, cwd, unseen, said)


def _said(call: ToolCallState) -> str:
    fields = [call.raw_input, call.name, call.kind, call.title]  # its input first: shown cut
    return json.dumps(fields, sort_keys=True, default=repr)


def raw_paths(raw: Any) -> list[str]:
    """Every path a ``rawInput`` names, in the keys of any shape above (for the paths an
    agent reports that lie in no mapped folder)."""
    found: list[str] = []

    def keep(path: str) -> str:
        found.append(path)
        return path

    map_raw_paths(raw, keep)
    return found


def map_raw_paths(raw: Any, convert: Callable[[str], str]) -> Any:
    """``raw`` with every path it names (in the keys of any shape above) converted."""
    if not isinstance(raw, dict):
        return raw
    mapped = {
        key: convert(value) if key in MAPPED_KEYS and isinstance(value, str) else value
        for key, value in raw.items()
    }
    changes = raw.get("changes")
    if isinstance(changes, dict):
        mapped["changes"] = {
            (convert(path) if isinstance(path, str) else path): _moved(change, convert)
            for path, change in changes.items()
        }
    return mapped


CHANGE_TAGS = ("add", "delete", "update")
CHANGE_KEYS = {"type", "content", "unified_diff", "move_path"}
"""A codex patch's change, tagged inside (``{"type": "update", …}``) or outside
(``{"update": {…}}``): anything else in it is a shape goose-ls does not read."""


def _change_body(change: Any) -> dict[str, Any] | None:
    """A change's fields, whichever way it is tagged; None when not a shape read here."""
    if not isinstance(change, dict):
        return None
    if len(change) == 1 and next(iter(change)) in CHANGE_TAGS:
        change = next(iter(change.values()))
        if not isinstance(change, dict):
            return None
    if not set(change) <= CHANGE_KEYS:
        return None
    move = change.get("move_path")
    return change if move is None or isinstance(move, str) else None


def _moved(change: Any, convert: Callable[[str], str]) -> Any:
    body = _change_body(change)
    if body is None or not isinstance(body.get("move_path"), str):
        return change
    moved = {**body, "move_path": convert(body["move_path"])}
    if isinstance(change, dict) and len(change) == 1 and next(iter(change)) in CHANGE_TAGS:
        return {next(iter(change)): moved}
    return moved


def _kind(call: ToolCallState, claude: tuple[str, tuple[str, ...]] | None, runs: bool) -> str:
    if claude is not None:
        return claude[0]
    if runs:  # codex calls `cat x` a read: a rule on execute must still see it
        return "execute"
    kind = call.kind or "other"
    if kind == "other":
        title = call.title or ""
        kind = GOOSE_TOOL_KINDS.get(title.split(" ", 1)[0].split(":", 1)[0], "other")
    return kind


def _claude(name: str, raw: Any, folder: str | None) -> _Input:
    """A Claude Code tool's input, read as its CLI reads it."""
    if not isinstance(raw, dict):
        return _Input(unseen=f"Claude's {name} came with no input goose-ls can read")
    if name == "Bash":
        command = raw.get("command")
        if not isinstance(command, str):
            return _Input(unseen="Claude's Bash names no command", runs=True)
        return _Input(command=command, runs=True)
    keys = CLAUDE_TOOLS[name][1]
    if any(raw.get(key) is not None and not isinstance(raw[key], str) for key in keys):
        return _Input(unseen=f"Claude's {name} names its file in a way goose-ls cannot read")
    paths = tuple(raw[key] for key in keys if isinstance(raw.get(key), str) and raw[key])
    if not paths and name in SEARCHES_HERE and folder is not None:
        paths = (folder,)
    return _Input(paths) if paths else _Input(unseen=f"Claude's {name} names no file")


def _any(raw: Any) -> _Input:
    """Any other agent's input: the path keys, a command, codex's patch ``changes``."""
    if raw is None or raw == {}:
        return _Input()
    if not isinstance(raw, dict):
        return _Input(unseen=UNKNOWN_SHAPE)
    unreadable = [k for k in MAPPED_KEYS if raw.get(k) is not None and not isinstance(raw[k], str)]
    paths = [raw[key] for key in PATH_KEYS if isinstance(raw.get(key), str) and raw[key]]
    cwd = raw.get("cwd") if isinstance(raw.get("cwd"), str) and raw["cwd"] else None
    command, runs = raw.get("command"), False
    if isinstance(command, list) and command and all(isinstance(w, str) for w in command):
        command, runs = shell.argv_line(command), True
    elif command is not None and not isinstance(command, str):
        unreadable.append("command")
        command = None
    changes = raw.get("changes")
    if (
        isinstance(changes, dict)
        and all(isinstance(path, str) for path in changes)
        and all(_change_body(change) is not None for change in changes.values())
    ):
        paths += raw_paths({"changes": changes})  # its keys, and where a file moves
    elif changes is not None:
        unreadable.append("changes")
    if unreadable:
        return _Input(unseen=f"goose-ls cannot read its {', '.join(unreadable)}")
    if not paths and command is None:
        return _Input(unseen=UNKNOWN_SHAPE)
    return _Input(tuple(paths), command, cwd, runs=runs)


def _spelt(path: str, folder: str | None) -> str:
    """``path`` as the agent's tool takes it: no ``file://``, ``~`` expanded, relative to
    the session's ``folder`` (when known)."""
    path = path.removeprefix("file://")
    if path == "~" or path.startswith("~/"):
        path = os.path.expanduser(path)
    return os.path.join(folder, path) if folder is not None else path
