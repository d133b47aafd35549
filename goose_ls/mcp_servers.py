"""The MCP servers a user lists in ``agent.mcpServers``, in ACP's shapes.

A stdio server is ``{"name", "command", "args", "env"}``; an http or sse one is
``{"type", "name", "url", "headers"}``. ``env`` may also be written as an object
(``{"KEY": "value"}``), the way editors' settings usually hold environments. Each entry is
checked on its own (a bad one is skipped, the others kept) and its values never reach a
log: env values and headers are where tokens live.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs
from cattrs.gen import make_dict_structure_fn

from goose_ls.wire import converter

REDACTED = "<redacted>"


@attrs.frozen
class NameValue:
    """One environment variable or HTTP header."""

    name: str
    value: str


@attrs.frozen
class McpServer:
    """One MCP server the agent is asked to start (stdio) or connect to (http, sse)."""

    name: str
    type: Literal["stdio", "http", "sse"] = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[NameValue, ...] = ()
    url: str = ""
    headers: tuple[NameValue, ...] = ()

    def to_acp(self) -> dict[str, Any]:
        """The ``McpServer`` of ACP v1 (whose stdio servers have no ``type``)."""
        if self.type == "stdio":
            return {
                "name": self.name,
                "command": self.command,
                "args": list(self.args),
                "env": _pairs(self.env),
            }
        return {
            "type": self.type,
            "name": self.name,
            "url": self.url,
            "headers": _pairs(self.headers),
        }

    def redacted(self) -> dict[str, Any]:
        """Its ACP shape with every env value and header value hidden, for logs."""
        acp = self.to_acp()
        for key in ("env", "headers"):
            for pair in acp.get(key, []):
                pair["value"] = REDACTED
        return acp


def _pairs(pairs: tuple[NameValue, ...]) -> list[dict[str, str]]:
    return [{"name": pair.name, "value": pair.value} for pair in pairs]


_fields = make_dict_structure_fn(McpServer, converter)
_KEYS = [field.name for field in attrs.fields(McpServer)]


def _structure(value: Any, _: type) -> McpServer:
    """Check one entry: the shape of its kind, with ``env`` accepted as an object."""
    if not isinstance(value, Mapping):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    if unknown := [key for key in value if key not in _KEYS]:
        raise ValueError(f"{unknown[0]}: unknown key (known: {', '.join(_KEYS)})")
    data = dict(value)
    if isinstance(env := data.get("env"), Mapping):
        for key, item in env.items():
            if not isinstance(item, str):
                raise ValueError(f"env.{key}: expected str, got {type(item).__name__}")
        data["env"] = [{"name": key, "value": item} for key, item in env.items()]
    server = _fields(data, McpServer)
    if not server.name.strip():
        raise ValueError("name: must not be empty")
    if server.type == "stdio" and not server.command:
        raise ValueError("command: a stdio server needs one")
    if server.type != "stdio" and not server.url:
        raise ValueError(f"url: an {server.type} server needs one")
    return server


converter.register_structure_hook(McpServer, _structure)
