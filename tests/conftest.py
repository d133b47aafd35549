"""Fixtures: a real goose-ls process per test, spoken to over LSP by a pytest-lsp client.

Each test gets its own workspace, data dir and log file, and writes the script the
scripted agent plays.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from goose_ls.testing import GooseRecorder, scripted_agent_command, write_script


class Editor:
    """One editor session against one goose-ls process."""

    def __init__(self, client: LanguageClient, tmp_path: Path) -> None:
        self.client = client
        self.goose = GooseRecorder(client)
        self.tmp = tmp_path
        self.workspace = tmp_path / "workspace"
        self.workspace.mkdir(exist_ok=True)
        self.record = tmp_path / "agent-received.jsonl"

    def script(self, script: dict[str, Any]) -> list[str]:
        """Write ``script`` (recording what the agent receives) and return its command."""
        defaults = {"record": str(self.record), "sessionsFile": str(self.tmp / "agent-sessions")}
        path = write_script(self.tmp / "script.json", {**defaults, **script})
        return scripted_agent_command(path)

    async def start(
        self,
        script: dict[str, Any] | None = None,
        settings: dict[str, Any] | None = None,
        editor: str | types.ClientCapabilities = "neovim@v0.11.0",
    ) -> None:
        options: dict[str, Any] = {"dataDir": str(self.tmp / "data")}
        if script is not None:
            options["agent"] = {"command": self.script(script)}
        for key, value in (settings or {}).items():
            if isinstance(value, dict) and isinstance(options.get(key), dict):
                options[key] = {**options[key], **value}
            else:
                options[key] = value
        await self.client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities(editor) if isinstance(editor, str) else editor,
                root_uri=self.workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=self.workspace.as_uri(), name="ws")],
                initialization_options=options,
            )
        )

    async def new_session(self) -> str:
        result = await self.goose.request("goose/newSession", {})
        return str(result["sessionId"])

    async def prompt(self, session_id: str, text: str = "hello", **extra: Any) -> str:
        message_id = str(uuid.uuid4())
        await self.goose.request(
            "goose/prompt",
            {"sessionId": session_id, "messageId": message_id, "prompt": text, **extra},
        )
        return message_id

    async def shown(self, text: str) -> str:
        """Wait for a window/showMessage containing ``text``; return the message."""
        found = await self.goose.wait_for(
            lambda: [m.message for m in self.client.messages if text in m.message],
            what=f"a message saying {text!r}",
        )
        return str(found[0])

    def received(self, method: str) -> list[dict[str, Any]]:
        """Messages with ``method`` that the scripted agent received."""
        import json

        if not self.record.exists():
            return []
        lines = self.record.read_text(encoding="utf-8").splitlines()
        return [m for m in map(json.loads, lines) if m.get("method") == method]


def server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "GOOSE_LS_LOG_DIR": str(tmp_path / "logs"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        # Tests that need a goose on PATH put a fake one here.
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.update(extra)
    return env


SERVER_COMMAND = [sys.executable, "-m", "goose_ls", "--log-level", "info"]


async def start_editor(tmp_path: Path, server_command: list[str] = SERVER_COMMAND) -> Editor:
    """A goose-ls process started by ``server_command`` and an LSP client speaking to it."""
    config = ClientServerConfig(server_command=server_command, server_env=server_env(tmp_path))
    client = await config.start()
    assert isinstance(client, LanguageClient)
    return Editor(client, tmp_path)


async def stop_editor(editor: Editor) -> None:
    """Shut the server down the way an editor does, unless it has already stopped."""
    client = editor.client
    if client._server is not None and client._server.returncode is None:
        try:
            await client.shutdown_session()
        except Exception:
            await client.stop()


@pytest_asyncio.fixture
async def editor(tmp_path: Path) -> AsyncIterator[Editor]:
    session = await start_editor(tmp_path)
    yield session
    await stop_editor(session)


def process_alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def gone(pid: int) -> bool:
    """Wait (up to 10 s) for ``pid`` to stop running."""
    for _ in range(200):
        if not process_alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False
