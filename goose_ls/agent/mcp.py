"""Which of the user's MCP servers go to the agent, and what the user must hear about it.

Every ACP agent takes stdio servers; http and sse ones only go to an agent whose
``initialize`` advertised ``mcpCapabilities.http`` / ``.sse`` (ACP lets others refuse
them, and goose refuses the whole ``session/new`` over an sse one). goose 1.41 to 1.46 dropped its own extensions, developer tools
included, as soon as the list was not empty; goose 1.47 merges the two.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import attrs

from goose_ls.agent.discovery import parse_version
from goose_ls.mcp_servers import McpServer

REPLACING_GOOSE = ((1, 41), (1, 46))
"""The goose versions (major, minor) whose non-empty ``mcpServers`` replaced its extensions."""


@attrs.frozen
class McpOffer:
    """The servers sent in ``session/new`` and ``session/load``, and the warnings to show."""

    servers: list[dict[str, Any]]
    warnings: list[str]


def offer(
    servers: Sequence[McpServer],
    transports: Collection[str],
    agent: str,
    version: str | None,
    argv: Sequence[str],
) -> McpOffer:
    """``transports``: the kinds the agent takes (stdio and what it advertised);
    ``argv``: its command line, where goose's ``--with-builtin developer`` would be."""
    sent = [server for server in servers if server.type in transports]
    warnings = [
        f"the MCP server '{server.name}' is not offered to {agent}: it is an "
        f"{server.type} server and {agent} does not take {server.type} MCP servers "
        f"(its initialize answer has no mcpCapabilities.{server.type}). "
        "Use a stdio server, or an agent that takes this kind."
        for server in servers
        if server.type not in transports
    ]
    if sent and _replaces_extensions(agent, version) and not _with_developer(argv):
        warnings.append(
            f"goose {version} replaces its own extensions, developer tools included, with "
            "the servers of agent.mcpServers. Upgrade goose to 1.47 or newer, or add "
            '"--with-builtin", "developer" to agent.args to keep its developer tools.'
        )
    return McpOffer([server.to_acp() for server in sent], warnings)


def _replaces_extensions(agent: str, version: str | None) -> bool:
    parsed = parse_version(version) if agent == "goose" and version else None
    low, high = REPLACING_GOOSE
    return parsed is not None and low <= parsed[:2] <= high


def _with_developer(argv: Sequence[str]) -> bool:
    """Whether ``--with-builtin`` already names ``developer`` (as one word or ``=``)."""
    for index, word in enumerate(argv):
        if word == "--with-builtin" and index + 1 < len(argv):
            names = argv[index + 1]
        elif word.startswith("--with-builtin="):
            names = word.partition("=")[2]
        else:
            continue
        if "developer" in names.split(","):
            return True
    return False
