"""End to end: the MCP servers of ``agent.mcpServers`` and ``_meta.client`` reach the agent
as ACP says, what it cannot take is explained once, and no secret reaches the log."""

from __future__ import annotations

from typing import Any

from goose_ls.scripted.agent import GOOSE_CAPABILITIES
from support.harness import Editor
from support.logs import read_log

SECRET = "tok-7f3a9c1e5b2d4f60"
GITHUB = {"name": "github", "command": "/usr/bin/gh-mcp", "args": ["--stdio"]}
GITHUB_ACP = {**GITHUB, "env": [{"name": "GITHUB_TOKEN", "value": SECRET}]}
DOCS = {
    "type": "http",
    "name": "docs",
    "url": "https://mcp.example/docs",
    "headers": [{"name": "Authorization", "value": f"Bearer {SECRET}"}],
}
CURRENT_GOOSE = {"name": "goose", "version": "1.48.0"}
"""A goose that merges the client's servers with its own extensions (no warning)."""


def _settings(*servers: object) -> dict[str, Any]:
    return {"agent": {"mcpServers": list(servers)}}


def _warnings(editor: Editor, text: str) -> list[str]:
    return [m.message for m in editor.client.messages if text in m.message]


async def test_servers_and_client_meta_arrive_on_new_and_load(editor: Editor) -> None:
    github = {**GITHUB, "env": {"GITHUB_TOKEN": SECRET}}
    await editor.start({"agentInfo": CURRENT_GOOSE}, _settings(github, DOCS))
    session_id = await editor.new_session()
    (new,) = editor.received("session/new")
    assert new["params"]["_meta"] == {"client": "goose-ls"}
    assert new["params"]["mcpServers"] == [GITHUB_ACP, DOCS]
    await editor.goose.request("goose/restart", {})
    (load,) = editor.received("session/load")
    assert load["params"]["sessionId"] == session_id
    assert load["params"]["mcpServers"] == [GITHUB_ACP, DOCS]
    assert _warnings(editor, "MCP") == []
    log = read_log(editor.tmp / "logs")
    assert "mcpServers" in log and "GITHUB_TOKEN" in log, "the settings line lists them"
    assert SECRET not in log


async def test_http_servers_wait_for_the_agents_capability(editor: Editor) -> None:
    capabilities = {**GOOSE_CAPABILITIES, "mcpCapabilities": {"http": False, "sse": False}}
    script = {"agentInfo": CURRENT_GOOSE, "capabilities": capabilities}
    await editor.start(script, _settings(GITHUB, DOCS))
    await editor.new_session()
    (new,) = editor.received("session/new")
    assert new["params"]["mcpServers"] == [{**GITHUB, "env": []}]
    warning = await editor.shown("MCP server 'docs'")
    assert "mcpCapabilities.http" in warning
    await editor.goose.request("goose/restart", {})
    await editor.new_session()
    assert len(editor.received("session/new")) == 2
    assert _warnings(editor, "MCP server 'docs'") == [warning], "said once, not per start"


async def test_a_bad_entry_is_a_settings_warning_and_the_rest_works(editor: Editor) -> None:
    await editor.start({"agentInfo": CURRENT_GOOSE}, _settings({"name": "broken"}, GITHUB))
    warning = await editor.shown("agent.mcpServers[0]")
    assert "command: a stdio server needs one" in warning
    session_id = await editor.new_session()
    (new,) = editor.received("session/new")
    assert new["params"]["mcpServers"] == [{**GITHUB, "env": []}]
    end = await editor.goose.turn_end(await editor.prompt(session_id))
    assert end["stopReason"] == "end_turn"


async def test_goose_that_drops_its_extensions_for_the_list_is_explained(editor: Editor) -> None:
    await editor.start({"agentInfo": {"name": "goose", "version": "1.43.0"}}, _settings(GITHUB))
    warning = await editor.shown("replaces its own extensions")
    assert "goose 1.43.0" in warning and '"--with-builtin", "developer"' in warning
