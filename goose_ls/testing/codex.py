"""A real second agent for tests: codex-acp, offline, its model a :class:`FakeModel`.

codex-acp is the pinned npm package that scripts/fetch-agents.sh puts in
``$GOOSE_LS_AGENTS`` (default ``~/.cache/goose-ls/agents``). goose-ls runs it by the
``codex`` preset, which finds ``codex-acp`` on PATH: there, in the test's ``bin``, is a
script that runs the real one behind a :mod:`~goose_ls.testing.wiretap`, so that a test
reads what goose-ls sent it (``editor.received``) and the ACP schema checks it, as with
the scripted agent. Everything codex keeps (its chats, its sign-in) is in the test's
``codex-home``; two goose-ls of one test share it, as two runs on one machine would.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from pathlib import Path
from typing import Any

from goose_ls.testing import wiretap
from goose_ls.testing.fake_model import KEY_VARIABLE, FakeModel
from goose_ls.testing.harness import Editor

AGENTS = Path(os.environ.get("GOOSE_LS_AGENTS", Path.home() / ".cache" / "goose-ls" / "agents"))
CODEX = AGENTS / "bin" / "codex-acp"
MISSING = (
    f"CODEX-ACP IS MISSING: the second-agent tests did not run; it is not in {AGENTS} "
    "(scripts/fetch-agents.sh)"
)


def codex_home(editor: Editor) -> Path:
    return editor.tmp / "codex-home"


async def start_codex(
    editor: Editor, model: FakeModel, settings: dict[str, Any] | None = None, **env: str
) -> None:
    """Start ``editor``'s goose-ls with the ``codex`` preset; ``env`` is added to the
    agent's environment, ``settings`` to goose-ls's."""
    bin_dir = editor.tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    tap = [sys.executable, "-m", "goose_ls.testing.wiretap", str(editor.record), str(CODEX)]
    script = bin_dir / "codex-acp"
    script.write_text(f'#!/bin/sh\nexec {shlex.join(tap)} "$@"\n', encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (editor.tmp / "home").mkdir(exist_ok=True)
    agent_env = {
        "CODEX_HOME": str(model.codex_home(codex_home(editor))),
        "HOME": str(editor.tmp / "home"),
        KEY_VARIABLE: "sk-fake",
        **env,
    }
    agent = {"preset": "codex", "env": agent_env}
    await editor.start(settings={**(settings or {}), "agent": agent})


def answers(editor: Editor, method: str) -> list[dict[str, Any]]:
    """codex's answers to each ``method`` request goose-ls sent it (result or error)."""
    return wiretap.answers(editor.record, method)


def advertised(editor: Editor) -> dict[str, Any]:
    """The ``agentCapabilities`` codex answered goose-ls's first ``initialize`` with: what
    a test presumes of it, checked, so that another codex-acp says why the test fails."""
    (first, *_) = answers(editor, "initialize")
    capabilities: dict[str, Any] = first["result"]["agentCapabilities"]
    return capabilities
