"""Signing in to the agent when it says it needs it (ACP ``authMethods``).

An ``env_var`` method can succeed by itself when its variables are set in the agent's
environment; an agent-type method may (goose's is a no-op); anything else needs the
user, who is told the method's name and description. A ``terminal`` method (offered only
to a client that says it takes them, as goose-ls does) is never passed to
``authenticate``: the user runs the agent's own command with the method's arguments and
environment in a terminal, and is given that exact line; a plugin is told of it as a
:class:`SignIn`, and asks for its :class:`TerminalCommand` to run in the editor's terminal.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

import attrs

from goose_ls.agent.status import SignIn
from goose_ls.settings import redact

AUTH_REQUIRED = -32000


def terminal_line(method: dict[str, Any], command: list[str]) -> str:
    """The shell line of a terminal method: its environment, the agent's command, its
    arguments; anything that looks like a credential redacted (it is shown and logged)."""
    env = method.get("env")
    env = env if isinstance(env, dict) else {}
    args = [str(a) for a in method.get("args") or []]
    assignments = [f"{name}={shlex.quote(str(value))}" for name, value in env.items()]
    return redact(" ".join([*assignments, shlex.join([*command, *args])]))


def terminal_sign_ins(methods: list[dict[str, Any]]) -> tuple[SignIn, ...]:
    """The terminal methods, as a plugin offers them to the user."""
    return tuple(
        SignIn(method_id=str(m["id"]), label=str(m.get("name") or m["id"]))
        for m in methods
        if m.get("type") == "terminal"
    )


@attrs.frozen
class TerminalCommand:
    """What a terminal sign-in runs: ``command`` with ``args``, in the editor's
    environment plus ``env``; it succeeded when it exits 0."""

    command: str
    args: tuple[str, ...]
    env: dict[str, str]


def terminal_command(
    method: dict[str, Any], command: list[str], env: Mapping[str, str]
) -> TerminalCommand:
    """A terminal method's command: the agent's command line with the method's arguments,
    in the agent's environment (``agent.env``) plus the method's. Not redacted: the
    editor runs it, with values it gave goose-ls."""
    extra = method.get("env")
    extra = extra if isinstance(extra, dict) else {}
    return TerminalCommand(
        command=command[0],
        args=(*command[1:], *(str(a) for a in method.get("args") or [])),
        env={**env, **{str(k): str(v) for k, v in extra.items()}},
    )


def methods_of(initialize: dict[str, Any]) -> list[dict[str, Any]]:
    methods = initialize.get("authMethods") or []
    return [m for m in methods if isinstance(m, dict) and m.get("id")]


def ready(method: dict[str, Any], environ: Mapping[str, str]) -> bool:
    """Whether this method can be used without the user: env vars set, or an agent method."""
    kind = str(method.get("type", "agent"))
    if kind == "env_var":
        needed = [v.get("name") for v in method.get("vars", []) if not v.get("optional")]
        return all(bool(name and environ.get(name)) for name in needed)
    return kind == "agent"


def instructions(methods: list[dict[str, Any]], command: list[str]) -> str:
    """What the user should do, in the agent's own words; ``command`` is the agent's
    command line (a terminal method's sign-in runs it with the method's arguments), empty
    for an agent at a URL: its environment and sign-in are where it runs."""
    parts = []
    for method in methods:
        text = method.get("name", method["id"])
        if method.get("description"):
            text += f": {method['description']}"
        if method.get("type") == "env_var":
            names = ", ".join(v.get("name", "") for v in method.get("vars", []))
            text += f" (set {names} {'in agent.env' if command else 'where the agent runs'})"
        elif method.get("type") == "terminal" and command:
            text += f" (run in a terminal: {terminal_line(method, command)}; then goose.restart)"
        elif method.get("type") == "terminal":
            text += " (where the agent runs; then goose.restart)"
        parts.append(text)
    return "; or ".join(parts) or "sign in as the agent's documentation says"
