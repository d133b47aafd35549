"""The permission policy: what may happen without asking, what must be asked, what never.

Rules match a tool call by its kind (``read``, ``edit``, ``execute``...), a path glob
and a command prefix; the first matching rule decides, ``deny`` rules first of all.
Project rules (``.goose-ls/policy.json``, committed with the project) come before the
user's (the ``policy.rules`` setting). What no rule decides is asked.
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import attrs

from goose_ls.tool_calls import ToolCallState
from goose_ls.wire import WireError, from_wire

Action = Literal["allow", "ask", "deny"]
PROJECT_FILE = Path(".goose-ls") / "policy.json"


@attrs.frozen
class Rule:
    action: Action
    kind: str | None = None
    """Tool kind to match (``read``, ``edit``, ``delete``, ``move``, ``search``, ``execute``,
    ``think``, ``fetch``, ``other``); any kind when absent."""
    path: str | None = None
    """Glob for the paths the call touches, relative to the workspace unless absolute."""
    command: str | None = None
    """Prefix of the shell command the call runs."""

    def describe(self) -> str:
        parts = [
            f"{k}={v!r}"
            for k, v in (("kind", self.kind), ("path", self.path), ("command", self.command))
            if v
        ]
        return f"{self.action} ({', '.join(parts) or 'everything'})"


GOOSE_TOOL_KINDS = {"shell": "execute", "edit": "edit", "write": "edit", "read": "read"}
"""goose asks with kind "other"; its developer tools are named in the title."""


@attrs.frozen
class ToolTarget:
    """What a tool call would do, as far as the policy is concerned."""

    kind: str
    paths: tuple[str, ...] = ()
    command: str | None = None

    @classmethod
    def of(cls, call: ToolCallState) -> ToolTarget:
        """What a tool call says it would do: its kind, paths and command."""
        title = call.title or ""
        kind = call.kind or "other"
        if kind == "other":
            kind = GOOSE_TOOL_KINDS.get(title.split(" ", 1)[0].split(":", 1)[0], "other")
        raw = call.raw_input if isinstance(call.raw_input, dict) else {}
        paths = [str(loc.get("path")) for loc in call.locations or [] if loc.get("path")]
        for key in ("path", "file"):
            if isinstance(raw.get(key), str) and raw[key] not in paths:
                paths.append(raw[key])
        command = raw.get("command") if isinstance(raw.get("command"), str) else None
        return cls(kind, tuple(paths), command)

    def describe(self) -> str:
        return self.command or ", ".join(self.paths) or self.kind


@attrs.frozen
class Decision:
    action: Action
    reason: str


class Policy:
    def __init__(self, root: str, rules: Iterable[Rule]) -> None:
        self.root = root
        self.rules = list(rules)

    @classmethod
    def load(cls, root: str, user_rules: Iterable[Rule]) -> tuple[Policy, str | None]:
        """Project rules, then the user's; returns a problem with the project file, if any."""
        project: list[Rule] = []
        problem = None
        path = Path(root) / PROJECT_FILE
        if path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                project = [from_wire(item, Rule) for item in data.get("rules", [])]
            except (OSError, ValueError, AttributeError, WireError) as exc:
                problem = f"{path} was ignored: {exc}"
        return cls(root, [*project, *user_rules]), problem

    def decide(self, target: ToolTarget) -> Decision:
        matching = [rule for rule in self.rules if self._matches(rule, target)]
        for rule in matching:
            if rule.action == "deny":
                return Decision("deny", f"policy rule {rule.describe()}")
        if matching:
            return Decision(matching[0].action, f"policy rule {matching[0].describe()}")
        return Decision("ask", "no policy rule")

    def _matches(self, rule: Rule, target: ToolTarget) -> bool:
        if rule.kind and rule.kind != target.kind:
            return False
        if rule.command and not (target.command or "").strip().startswith(rule.command):
            return False
        if rule.path:
            pattern = rule.path if os.path.isabs(rule.path) else os.path.join(self.root, rule.path)
            if not target.paths or not all(fnmatch.fnmatch(p, pattern) for p in target.paths):
                return False
        return True
