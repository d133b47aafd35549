"""Settings changed while goose-ls runs (issue 31 follow-up): an editor that says only
"changed" (``workspace/didChangeConfiguration`` with null settings, as VS Code does) is
asked for the new ones, and the agent's apply when it next starts, a restart included."""

from __future__ import annotations

import stat
from pathlib import Path

from lsprotocol import types

from goose_ls.scripted.script import scripted_agent_command, write_script
from support.fake_goose import write_fake_goose
from support.harness import Editor


def _fake_claude(directory: Path, script: Path) -> Path:
    """An executable named ``claude-agent-acp`` (the claude preset's command) that runs
    the scripted agent, naming itself as claude-agent-acp does."""
    directory.mkdir(parents=True, exist_ok=True)
    binary = directory / "claude-agent-acp"
    command = " ".join(f"'{part}'" for part in scripted_agent_command(script))
    binary.write_text(f'#!/bin/sh\nexec {command} "$@"\n', encoding="utf-8")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary


async def test_a_preset_changed_on_disk_applies_at_restart(editor: Editor) -> None:
    """The user starts with the default agent (goose), sets ``agent.preset`` to
    ``claude`` in their settings file, and the editor says only that settings changed;
    **Restart the agent** then runs claude-agent-acp, not goose again."""
    turn = {"record": str(editor.record), "sessionsFile": str(editor.tmp / "agent-sessions")}
    for made in (editor.record, editor.tmp / "agent-sessions"):
        made.touch()
    goose = write_script(editor.tmp / "goose.json", {**turn, "turns": [[{"text": "goose"}]]})
    claude = write_script(
        editor.tmp / "claude.json",
        {
            **turn,
            "agentInfo": {
                "name": "@agentclientprotocol/claude-agent-acp",
                "title": "Claude Agent",
                "version": "0.101.0",
            },
            "turns": [[{"text": "claude"}]],
        },
    )
    write_fake_goose(editor.tmp / "bin", " 1.43.0", goose)
    _fake_claude(editor.tmp / "bin", claude)
    editor.client.set_configuration({}, section="goose")
    await editor.start(editor="visual_studio_code", name="code-server")
    await editor.goose.agent_state("running")
    session_id = await editor.new_session()
    await editor.goose.turn_end(message := await editor.prompt(session_id))
    assert editor.goose.text(message) == "goose"

    editor.client.set_configuration({"agent": {"preset": "claude"}}, section="goose")
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=None)
    )
    await editor.goose.wait_for(
        lambda: [m for m in editor.client.messages if "agent settings changed" in m.message],
        what="the change to be noticed",
    )
    restarted = await editor.goose.request("goose/restart", {})
    assert restarted["agent"]["name"] == "Claude Agent", restarted
    await editor.goose.turn_end(message := await editor.prompt(session_id))
    assert editor.goose.text(message) == "claude"
