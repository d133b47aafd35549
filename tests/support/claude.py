"""A real agent for tests that asks the user questions: claude-agent-acp, offline, the
Claude Code it runs talking to a :class:`FakeAnthropic`.

goose-ls runs it by the ``claude`` preset, behind a wiretap (see
:mod:`support.real_agent`). Everything Claude Code keeps (its settings, its
chats) is in the test's ``claude-home``; it reaches nothing but the fake API.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from support.fake_anthropic import FakeAnthropic
from support.harness import Editor
from support.real_agent import installed, missing, tap

CLAUDE = installed("claude-agent-acp")
MISSING = missing("claude-agent-acp")

API_KEY = "sk-ant-fake"

QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION": "false",
}
"""No traffic but the chat: no telemetry, error reports or update checks, and no guess at
the user's next prompt after each turn (a request of its own, with tools, like a turn)."""


def claude_home(editor: Editor) -> Path:
    """Claude Code's ``CLAUDE_CONFIG_DIR``: its settings and its chats."""
    return editor.tmp / "claude-home"


def _config(home: Path) -> None:
    """Claude Code's own state, as after a first run: the notice it shows once a day to
    anyone whose API is not Anthropic's (about auto mode's billing) already seen."""
    home.mkdir(exist_ok=True)
    state = home / ".claude.json"
    if not state.exists():
        seen = {"autoModeClassifierBillingNoticeAcknowledgedAt": int(time.time() * 1000)}
        state.write_text(json.dumps(seen), encoding="utf-8")


async def start_claude(
    editor: Editor, api: FakeAnthropic, settings: dict[str, Any] | None = None, **env: str
) -> None:
    """Start ``editor``'s goose-ls with the ``claude`` preset; ``env`` is added to the
    agent's environment, ``settings`` to goose-ls's (its ``agent`` ones too)."""
    tap(editor, "claude-agent-acp")
    settings = settings or {}
    agent = {**settings.get("agent", {}), **claude_agent(editor.tmp, api, **env)}
    await editor.start(settings={**settings, "agent": agent})


def claude_agent(tmp: Path, api: FakeAnthropic, **env: str) -> dict[str, Any]:
    """The ``agent`` settings that run claude-agent-acp on ``api``, its state (and
    ``claude_home``) under ``tmp``; ``env`` is added to its environment. The command
    itself must be on goose-ls's PATH (:func:`~support.real_agent.tap_in`)."""
    home = tmp / "claude-home"
    _config(home)
    (tmp / "home").mkdir(exist_ok=True)
    agent_env = {
        "ANTHROPIC_BASE_URL": api.origin,
        "ANTHROPIC_API_KEY": API_KEY,
        "CLAUDE_CONFIG_DIR": str(home),
        "HOME": str(tmp / "home"),
        **QUIET,
        **env,
    }
    if os.geteuid() == 0:
        # Claude Code refuses to run as root unless told it is in a sandbox (CI is root).
        agent_env["IS_SANDBOX"] = "1"
    return {"preset": "claude", "env": agent_env}
