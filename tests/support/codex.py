"""A real second agent for tests: codex-acp, offline, its model a :class:`FakeModel`.

goose-ls runs it by the ``codex`` preset, behind a wiretap (see
:mod:`support.real_agent`). Everything codex keeps (its chats, its sign-in) is in
the test's ``codex-home``; two goose-ls of one test share it, as two runs on one machine
would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.fake_model import KEY_VARIABLE, FakeModel
from support.harness import Editor
from support.real_agent import installed, missing, tap

CODEX = installed("codex-acp")
MISSING = missing("codex-acp")


def codex_home(editor: Editor) -> Path:
    return editor.tmp / "codex-home"


def codex_temp(editor: Editor) -> Path:
    return editor.tmp / "codex-temp"


def codex_agent(
    tmp: Path, model: FakeModel, trusted: Path | None = None, **env: str
) -> dict[str, Any]:
    """The ``agent`` settings that run codex-acp on ``model``, its state under ``tmp``;
    ``env`` is added to its environment. ``trusted``: a project the user told codex to
    trust, as most are. The command itself must be on goose-ls's PATH
    (:func:`~support.real_agent.tap_in`)."""
    (tmp / "home").mkdir(exist_ok=True)
    (tmp / "codex-temp").mkdir(exist_ok=True)
    agent_env = {
        "CODEX_HOME": str(model.codex_home(tmp / "codex-home", trusted)),
        "HOME": str(tmp / "home"),
        # codex makes its sandbox helper in CODEX_HOME, but not in the temporary folder,
        # where a test's CODEX_HOME is: a TMPDIR of its own lets it.
        "TMPDIR": str(tmp / "codex-temp"),
        KEY_VARIABLE: "sk-fake",
        **env,
    }
    return {"preset": "codex", "env": agent_env}


async def start_codex(
    editor: Editor,
    model: FakeModel,
    settings: dict[str, Any] | None = None,
    trusted: bool = False,
    **env: str,
) -> None:
    """Start ``editor``'s goose-ls with the ``codex`` preset; ``env`` is added to the
    agent's environment, ``settings`` to goose-ls's. ``trusted``: the workspace is a
    project the user told codex to trust, as most are."""
    tap(editor, "codex-acp")
    agent = codex_agent(editor.tmp, model, editor.workspace if trusted else None, **env)
    await editor.start(settings={**(settings or {}), "agent": agent})
