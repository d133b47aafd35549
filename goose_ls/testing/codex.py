"""A real second agent for tests: codex-acp, offline, its model a :class:`FakeModel`.

goose-ls runs it by the ``codex`` preset, behind a wiretap (see
:mod:`goose_ls.testing.real_agent`). Everything codex keeps (its chats, its sign-in) is in
the test's ``codex-home``; two goose-ls of one test share it, as two runs on one machine
would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from goose_ls.testing.fake_model import KEY_VARIABLE, FakeModel
from goose_ls.testing.harness import Editor
from goose_ls.testing.real_agent import installed, missing, tap

CODEX = installed("codex-acp")
MISSING = missing("codex-acp")


def codex_home(editor: Editor) -> Path:
    return editor.tmp / "codex-home"


def codex_temp(editor: Editor) -> Path:
    return editor.tmp / "codex-temp"


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
    (editor.tmp / "home").mkdir(exist_ok=True)
    codex_temp(editor).mkdir(exist_ok=True)
    agent_env = {
        "CODEX_HOME": str(
            model.codex_home(codex_home(editor), editor.workspace if trusted else None)
        ),
        "HOME": str(editor.tmp / "home"),
        # codex makes its sandbox helper in CODEX_HOME, but not in the temporary folder,
        # where a test's CODEX_HOME is: a TMPDIR of its own lets it.
        "TMPDIR": str(codex_temp(editor)),
        KEY_VARIABLE: "sk-fake",
        **env,
    }
    agent = {"preset": "codex", "env": agent_env}
    await editor.start(settings={**(settings or {}), "agent": agent})
