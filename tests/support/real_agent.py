"""Real agents for tests, run offline by goose-ls's presets behind a wiretap.

They are the pinned npm packages that scripts/fetch-agents.sh puts in
``$GOOSE_LS_AGENTS`` (default ``~/.cache/goose-ls/agents``). goose-ls runs one by its
preset, which finds the agent's command on PATH: there, in the test's ``bin``, is a
script that runs the real one behind a :mod:`~support.wiretap`, so that a test
reads what goose-ls sent it (``editor.received``) and the ACP schema checks it, as with
the scripted agent.
"""

from __future__ import annotations

import asyncio
import shlex
import stat
import sys
from pathlib import Path
from typing import Any

from support import wiretap
from support.harness import AGENTS, Editor


def installed(command: str) -> Path:
    """Where the fetched agent whose command is ``command`` is linked."""
    return AGENTS / "bin" / command


def missing(command: str) -> str:
    """Why the tests of ``command`` are skipped: loud, as a lost test should be."""
    return (
        f"{command.upper()} IS MISSING: its tests did not run; it is not in {AGENTS} "
        "(scripts/fetch-agents.sh)"
    )


def tap(editor: Editor, command: str) -> None:
    """Put ``command`` on ``editor``'s PATH: the fetched agent, behind the wiretap."""
    tap_in(editor.tmp, editor.record, command)


def tap_in(tmp: Path, record: Path, command: str) -> None:
    """Put ``command`` in ``tmp / "bin"`` (on the PATH of a goose-ls started with
    :func:`~support.harness.server_env`), recording to ``record``: for a goose-ls
    a real editor starts."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    # Run by its path: it imports only the standard library, and the agent's environment
    # need not know where the tests' support package is.
    line = [sys.executable, wiretap.__file__, str(record)]
    script = bin_dir / command
    script.write_text(
        f'#!/bin/sh\nexec {shlex.join([*line, str(installed(command))])} "$@"\n', encoding="utf-8"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def answers(editor: Editor, method: str) -> list[dict[str, Any]]:
    """The agent's answers to each ``method`` request goose-ls sent it (result or error)."""
    return wiretap.answers(editor.record, method)


def answered(editor: Editor, method: str) -> list[dict[str, Any]]:
    """goose-ls's answers to each ``method`` request the agent sent (result or error)."""
    return wiretap.answers(editor.record, method, asker="agent")


def advertised(editor: Editor) -> dict[str, Any]:
    """The ``agentCapabilities`` the agent answered goose-ls's first ``initialize`` with:
    what a test presumes of it, checked, so that another version says why the test fails."""
    (first, *_) = answers(editor, "initialize")
    capabilities: dict[str, Any] = first["result"]["agentCapabilities"]
    return capabilities


async def approving(editor: Editor) -> list[dict[str, Any]]:
    """Answer every permission card with its allow (a user who says yes to all); the
    cards answered, once the caller cancels."""
    answered: list[dict[str, Any]] = []
    try:
        while True:
            for card in editor.goose.of_kind("permission_request"):
                if card in answered:
                    continue
                answered.append(card)
                kinds = {o["kind"]: o["optionId"] for o in card["options"]}
                allow = kinds.get("allow_once") or kinds["allow_always"]
                await editor.goose.request(
                    "goose/permission", {"requestId": card["requestId"], "optionId": allow}
                )
            await asyncio.sleep(0.1)
    except asyncio.CancelledError:
        return answered
