"""agent.mcpServers: each entry checked on its own, its secrets kept out of every log
line, and the servers an agent cannot take (or goose 1.41-1.46's replace) explained."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from goose_ls import settings
from goose_ls.agent.mcp import offer
from goose_ls.mcp_servers import REDACTED, McpServer
from goose_ls.wire import converter

SECRET = "hunter2-token-value"
STDIO = {"name": "github", "command": "/usr/bin/gh-mcp", "args": ["--stdio"]}
HTTP = {"type": "http", "name": "docs", "url": "https://mcp.example/docs"}


def _servers(*entries: object) -> list[McpServer]:
    loaded, warnings = settings.load([("x", {"agent": {"mcpServers": list(entries)}})])
    assert warnings == []
    return loaded.agent.mcp_servers


def test_an_env_object_becomes_acp_name_value_pairs() -> None:
    (server,) = _servers({**STDIO, "env": {"GITHUB_TOKEN": SECRET}})
    assert server.to_acp() == {
        "name": "github",
        "command": "/usr/bin/gh-mcp",
        "args": ["--stdio"],
        "env": [{"name": "GITHUB_TOKEN", "value": SECRET}],
    }


def test_acp_shapes_are_taken_as_they_are() -> None:
    stdio = {**STDIO, "env": [{"name": "A", "value": "1"}]}
    http = {**HTTP, "headers": [{"name": "Authorization", "value": "Bearer x"}]}
    assert [s.to_acp() for s in _servers(stdio, http)] == [stdio, http]


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"name": "a"}, "command: a stdio server needs one"),
        ({"type": "http", "name": "a"}, "url: an http server needs one"),
        ({"type": "ws", "name": "a", "url": "u"}, "type: expected one of"),
        ({**STDIO, "argz": []}, "argz: unknown key"),
        ({**STDIO, "env": {"A": 1}}, "env.A: expected str, got int"),
        ({**STDIO, "name": " "}, "name: must not be empty"),
        ("gh", "expected an object, got str"),
    ],
)
def test_a_bad_entry_is_named_and_skipped_and_the_others_kept(entry: object, problem: str) -> None:
    loaded, warnings = settings.load([("x", {"agent": {"mcpServers": [STDIO, entry, HTTP]}})])
    assert [s.name for s in loaded.agent.mcp_servers] == ["github", "docs"]
    (warning,) = warnings
    assert warning.startswith("x: 'agent.mcpServers[1]' ") and problem in warning


def test_env_and_header_values_never_reach_a_log_line() -> None:
    stdio = {**STDIO, "env": {"GITHUB_TOKEN": SECRET}}
    http = {**HTTP, "headers": [{"name": "Authorization", "value": SECRET}]}
    loaded, _ = settings.load([("x", {"agent": {"mcpServers": [stdio, http]}})])
    described = settings.describe(loaded)
    assert SECRET not in json.dumps(described)
    assert described["agent"]["mcpServers"][0]["env"] == [
        {"name": "GITHUB_TOKEN", "value": REDACTED}
    ]
    _, warnings = settings.load(
        [("x", {"agent": {"mcpServers": [stdio]}}), ("y", {"agent": {"mcpServers": "gh"}})],
        {"GOOSE_LS_AGENT_MCP_SERVERS": f'[{{"env": {{"T": "{SECRET}"'},
    )
    assert len(warnings) == 2 and SECRET not in "\n".join(warnings)


def test_servers_come_from_the_environment_as_json() -> None:
    loaded, warnings = settings.load([], {"GOOSE_LS_AGENT_MCP_SERVERS": json.dumps([STDIO])})
    assert warnings == [] and [s.name for s in loaded.agent.mcp_servers] == ["github"]


def _server(entry: Mapping[str, object]) -> McpServer:
    return converter.structure(entry, McpServer)


def test_http_goes_only_to_an_agent_that_takes_it_and_the_user_hears_why() -> None:
    servers = [_server(STDIO), _server(HTTP)]
    taken = offer(servers, {"stdio", "http"}, "goose", "1.48.0", [])
    assert [s["name"] for s in taken.servers] == ["github", "docs"] and taken.warnings == []
    refused = offer(servers, {"stdio"}, "claude", None, [])
    assert [s["name"] for s in refused.servers] == ["github"]
    (warning,) = refused.warnings
    assert "'docs'" in warning and "mcpCapabilities.http" in warning


@pytest.mark.parametrize(
    ("version", "argv", "warned"),
    [
        ("1.40.2", [], False),
        ("1.41.0", [], True),
        ("1.46.3", [], True),
        ("1.47.0", [], False),
        ("1.43.0", ["--with-builtin", "developer"], False),
        ("1.43.0", ["--with-builtin=memory,developer"], False),
        ("1.43.0", ["--with-builtin", "memory"], True),
    ],
)
def test_goose_that_replaces_its_extensions_is_warned_about(
    version: str, argv: list[str], warned: bool
) -> None:
    warnings = offer([_server(STDIO)], {"stdio"}, "goose", version, argv).warnings
    assert bool(warnings) is warned
    assert all("--with-builtin" in w and "1.47" in w for w in warnings)


def test_no_server_no_replace_warning() -> None:
    assert offer([], {"stdio"}, "goose", "1.43.0", []).warnings == []
    assert offer([_server(STDIO)], {"stdio"}, "other", "1.43.0", []).warnings == []
