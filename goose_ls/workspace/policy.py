"""The permission policy: what may happen without asking, what must be asked, what never.

Rules match a tool call by its kind (``read``, ``edit``, ``execute``...), a path glob
and a command prefix; the first matching rule decides, ``deny`` rules first of all.
Project rules (``.goose-ls/policy.json``, committed with the project) come before the
user's (the ``policy.rules`` setting), but only tighten (``deny``, ``ask``) until the user
trusts the file. What no rule decides is asked.

Paths are matched resolved (``..``, ``.``, ``//`` and links undone), commands parsed as
the shell will run them (:mod:`goose_ls.workspace.shell`). Protected paths (files that
run code later: git hooks, editor configs, build files) are never allowed by a broad
rule, only by one naming them.
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Iterable
from pathlib import Path, PurePath
from typing import Literal

import attrs

from goose_ls.tool_calls import ToolCallState
from goose_ls.wire import WireError, from_wire
from goose_ls.workspace import shell, targets
from goose_ls.workspace.agent_files import FileProblem, read_disk
from goose_ls.workspace.confinement import Denied
from goose_ls.workspace.protected import protected_class
from goose_ls.workspace.trust import PolicyTrust, digest

Action = Literal["allow", "ask", "deny"]
PROJECT_FILE = Path(".goose-ls") / "policy.json"
POLICY_BYTES = 1_000_000
DEFAULT_PROTECTED = (
    ".git/hooks/*",
    ".git/config",
    ".gitattributes",
    ".vscode/*.json",
    ".helix/*",
    ".nvim.lua",
    ".nvimrc",
    ".exrc",
    ".envrc",
    ".idea/*",
    "Makefile",
    "makefile",
    "GNUmakefile",
    "*.mk",
    "justfile",
    "Justfile",
    ".pre-commit-config.yaml",
    ".github/workflows/*",
)
"""Files that make something run code later (hooks, editor and build configs)."""
LOOKING = {"read", "search", "think", "fetch"}
"""Kinds that only look: protected paths concern the others."""
GLOB = set("*?[")


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


@attrs.frozen
class ToolTarget:
    """What a tool call would do, as far as the policy is concerned."""

    kind: str
    paths: tuple[str, ...] = ()
    command: str | None = None
    cwd: str | None = None
    """Where the command runs: confined, but matched by no path rule."""
    unseen: str | None = None
    """Why goose-ls cannot see all the call would touch: then no rule allows it."""
    said: str | None = None
    """All an unseen call said, so that it equals only the very same call."""

    @classmethod
    def of(cls, call: ToolCallState, folder: str | None = None) -> ToolTarget:
        """What a tool call says it would do (see :mod:`goose_ls.workspace.targets`);
        relative paths from the session's ``folder``."""
        seen = targets.read(call, folder)
        return cls(seen.kind, seen.paths, seen.command, seen.cwd, seen.unseen, seen.said)

    def describe(self) -> str:
        """The target as the audit log and the notes name it: all that was judged."""
        said = ", ".join(filter(None, [self.command, *self.paths])) or self.kind
        return f"{said} (in {self.cwd})" if self.cwd else said


@attrs.frozen
class PolicyFile:
    """``.goose-ls/policy.json``: ``{"rules": [...]}``."""

    rules: list[Rule] = attrs.Factory(list)


def protected_path(root: str, patterns: Iterable[str], path: str) -> str | None:
    """``path`` relative to ``root`` when it is protected: by its class
    (:mod:`goose_ls.workspace.protected`: under ``.git/``, editor and agent settings,
    build files, wherever they sit) or by one of the user's ``patterns`` (from the
    right: ``.git/hooks/*`` matches in nested repositories too)."""
    resolved = os.path.realpath(os.path.join(root, path.removeprefix("file://")))
    relative = os.path.relpath(resolved, os.path.realpath(root))
    return relative if protected_class(relative, patterns) else None


@attrs.frozen
class Decision:
    action: Action
    reason: str


@attrs.frozen
class Untrusted:
    """A workspace policy file whose loosening rules wait for the user's trust."""

    path: Path
    digest: str
    rules: tuple[Rule, ...]
    """Its ``allow`` rules, ignored until trusted."""


class Policy:
    def __init__(
        self,
        root: str,
        rules: Iterable[Rule],
        protected: Iterable[str] = DEFAULT_PROTECTED,
        untrusted: Untrusted | None = None,
    ) -> None:
        self.root = os.path.realpath(root)
        self.rules = list(rules)
        self.protected = list(protected)
        self.untrusted = untrusted

    @classmethod
    def load(
        cls,
        root: str,
        user_rules: Iterable[Rule],
        protected: Iterable[str] = DEFAULT_PROTECTED,
        trust: PolicyTrust | None = None,
    ) -> tuple[Policy, str | None]:
        """Project rules, then the user's; returns a problem with the project file, if any."""
        project: list[Rule] = []
        problem = None
        untrusted = None
        path = Path(os.path.realpath(root)) / PROJECT_FILE
        if path.exists():
            try:  # read as the agent's files are: a FIFO or a symlink must not hang or lead out
                text = read_disk(path, path.parent.parent, cap=POLICY_BYTES)
                raw = text.encode("utf-8")
                project = from_wire(json.loads(text), PolicyFile).rules
            except (FileProblem, Denied, OSError, ValueError, WireError) as exc:
                problem = f"{path} was ignored: {exc}"
            else:
                loosening = tuple(rule for rule in project if rule.action == "allow")
                if loosening and not (trust and trust.trusted(path, digest(raw))):
                    untrusted = Untrusted(path, digest(raw), loosening)
                    project = [rule for rule in project if rule.action != "allow"]
        return cls(root, [*project, *user_rules], protected, untrusted), problem

    def decide(self, target: ToolTarget) -> Decision:
        parsed = shell.parse(target.command) if target.command is not None else None
        matching = [rule for rule in self.rules if self._matches(rule, target, parsed)]
        for rule in matching:
            if rule.action == "deny":
                return Decision("deny", f"policy rule {rule.describe()}")
        if target.command is not None and parsed is None:
            return Decision("ask", "the command could not be parsed")
        if parsed is not None and parsed.opaque is not None:
            return Decision("ask", f"no rule can tell what it runs: {parsed.opaque}")
        if target.unseen is not None:
            return Decision("ask", f"goose-ls cannot see all the call would touch: {target.unseen}")
        if not matching:
            return Decision("ask", "no policy rule")
        rule = matching[0]
        protected = self.protected_path(target)
        if rule.action == "allow" and protected and not self._names(rule, protected):
            return Decision("ask", f"{protected} is protected; only a rule naming it allows it")
        return Decision(rule.action, f"policy rule {rule.describe()}")

    def would_allow_if_trusted(self, target: ToolTarget) -> bool:
        """Whether an ignored rule of the untrusted workspace policy matches ``target``."""
        if self.untrusted is None or target.unseen is not None:
            return False
        parsed = shell.parse(target.command) if target.command is not None else None
        return any(self._matches(rule, target, parsed) for rule in self.untrusted.rules)

    def protected_path(self, target: ToolTarget) -> str | None:
        """The first protected path ``target`` would change, relative to the root."""
        if target.kind in LOOKING:
            return None
        found = (protected_path(self.root, self.protected, p) for p in target.paths)
        return next((relative for relative in found if relative), None)

    def resolve(self, path: str) -> str:
        """``path`` as the file system will see it: absolute, normalised, links undone."""
        return os.path.realpath(os.path.join(self.root, path.removeprefix("file://")))

    def _names(self, rule: Rule, relative: str) -> bool:
        """A rule naming the file exactly, or by the very protected pattern it matches."""
        if not rule.path:
            return False
        pattern = os.path.relpath(self._pattern(rule.path), self.root)
        if not GLOB & set(pattern):
            return pattern == relative
        return pattern in self.protected and PurePath(relative).match(pattern)

    def _pattern(self, glob: str) -> str:
        return os.path.normpath(glob if os.path.isabs(glob) else os.path.join(self.root, glob))

    def _matches(self, rule: Rule, target: ToolTarget, parsed: shell.Parsed | None) -> bool:
        """Allow rules must hold for all of a call; deny and ask rules for any part of it."""
        if rule.kind and rule.kind != target.kind:
            return False
        if rule.command and not self._command_matches(rule, parsed):
            return False
        if rule.path:
            pattern = self._pattern(rule.path)
            hits = [self._path_matches(self.resolve(p), pattern) for p in target.paths]
            if not hits or not (all(hits) if rule.action == "allow" else any(hits)):
                return False
        return True

    @staticmethod
    def _path_matches(path: str, pattern: str) -> bool:
        if pattern.endswith("/**") and path == pattern[:-3]:
            return True
        return fnmatch.fnmatchcase(path, pattern)

    def _command_matches(self, rule: Rule, parsed: shell.Parsed | None) -> bool:
        words = shell.rule_words(rule.command or "")
        if parsed is None or words is None:
            return False
        if rule.action == "allow":
            inside = all(self._inside(self.resolve(t)) for t in parsed.redirect_targets)
            return parsed.simple and inside and parsed.commands[0][: len(words)] == words
        wanted = shell.program(words)
        return any(
            shell.covers(run, wanted)
            for command in parsed.commands
            for run in shell.programs(command)
        )

    def _inside(self, path: str) -> bool:
        return path == self.root or path.startswith(self.root + os.sep)
