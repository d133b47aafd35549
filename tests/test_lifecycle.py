"""Shutting down: no agent process may outlive goose-ls, however the editor leaves."""

from __future__ import annotations

import asyncio

from support.harness import Editor, gone, process_alive
from support.logs import read_log


async def _agent_pid(editor: Editor) -> int:
    await editor.goose.agent_state("running")
    status = await editor.goose.request("goose/status", {})
    pid = status["agent"]["pid"]
    assert isinstance(pid, int) and process_alive(pid)
    return pid


async def test_no_orphan_when_the_editor_closes_its_pipe_mid_turn(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "x" * 500, "chunks": 500, "delay": 0.05}]]})
    pid = await _agent_pid(editor)
    session_id = await editor.new_session()
    await editor.prompt(session_id)
    server = editor.client._server
    assert server is not None and server.stdin is not None
    server.stdin.close()
    assert await asyncio.wait_for(server.wait(), 30) == 0
    assert await gone(pid), "the agent outlived goose-ls"


async def test_no_orphan_on_exit_without_shutdown(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "ok"}]]})
    pid = await _agent_pid(editor)
    server = editor.client._server
    assert server is not None
    editor.client.exit(None)
    assert await asyncio.wait_for(server.wait(), 30) == 1, "exit without shutdown exits 1"
    assert await gone(pid)


async def test_shutdown_stops_the_agent_gracefully(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "ok"}]]})
    pid = await _agent_pid(editor)
    await editor.client.shutdown_async(None)
    assert not process_alive(pid), "the agent is gone once shutdown has answered"
    stopped = await editor.goose.agent_state("stopped")
    assert stopped["state"] == "stopped"
    editor.client.exit(None)
    server = editor.client._server
    assert server is not None
    assert await asyncio.wait_for(server.wait(), 30) == 0


async def test_no_background_task_outlives_shutdown_and_exit(editor: Editor) -> None:
    """A turn streaming into its transcript when the editor quits: every background task
    is cancelled and waited for by its owner before the event loop ends, none left to
    asyncio's last sweep."""
    await editor.start({"turns": [[{"text": "x" * 500, "chunks": 500, "delay": 0.05}]]})
    session_id = await editor.new_session()
    await editor.prompt(session_id)
    await editor.goose.wait_for(lambda: editor.goose.updates, 30, "the turn streaming")
    await editor.client.shutdown_async(None)
    editor.client.exit(None)
    server = editor.client._server
    assert server is not None
    assert await asyncio.wait_for(server.wait(), 30) == 0
    lines = [line for line in read_log(editor.log.log_dir).splitlines() if "at shutdown:" in line]
    assert len(lines) == 1, "goose-ls says what it drained"
    assert "background tasks cancelled" in lines[0]
    assert lines[0].endswith("0 tasks still running ()"), lines[0]


async def test_lazy_start_waits_for_the_first_request(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "ok"}]]}, settings={"agent": {"start": "lazy"}})
    status = await editor.goose.request("goose/status", {})
    assert status["agent"]["state"] == "stopped"
    await editor.new_session()
    status = await editor.goose.request("goose/status", {})
    assert status["agent"]["state"] == "running"


async def test_settings_from_workspace_configuration_are_used(editor: Editor) -> None:
    command = editor.script({"turns": [[{"text": "from the configured agent"}]]})
    editor.client.set_configuration({"agent": {"command": command}}, section="goose")
    await editor.start(settings={"agent": {"command": ["no-such-agent-binary"], "start": "lazy"}})
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id)
    await editor.goose.turn_end(message_id)
    assert editor.goose.text(message_id) == "from the configured agent"


async def test_bad_settings_are_named_in_a_warning_and_do_not_stop_the_server(
    editor: Editor,
) -> None:
    await editor.start(
        {"turns": [[{"text": "still fine"}]]},
        settings={"agent": {"checkVersion": "yes", "colour": "blue"}, "dataDir": 42},
    )
    text = await editor.shown("goose-ls settings")
    assert "agent.checkVersion" in text and "expected bool" in text
    assert "agent.colour" in text and "unknown" in text
    assert "dataDir" in text
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id)
    await editor.goose.turn_end(message_id)
    assert editor.goose.text(message_id) == "still fine"
