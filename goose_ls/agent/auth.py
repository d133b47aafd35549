"""Signing in to the agent when it says it needs it (ACP ``authMethods``).

An ``env_var`` method can succeed by itself when its variables are set in the agent's
environment; an agent-type method may (goose's is a no-op); anything else needs the
user, who is told the method's name and description.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

AUTH_REQUIRED = -32000


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


def instructions(methods: list[dict[str, Any]]) -> str:
    """What the user should do, in the agent's own words."""
    parts = []
    for method in methods:
        text = method.get("name", method["id"])
        if method.get("description"):
            text += f": {method['description']}"
        if method.get("type") == "env_var":
            names = ", ".join(v.get("name", "") for v in method.get("vars", []))
            text += f" (set {names} in goose.agent.env)"
        parts.append(text)
    return "; or ".join(parts) or "sign in as the agent's documentation says"
