"""A scripted ACP agent that behaves on the wire as goose does, for tests and demos.

It is never used as a silent fallback: goose-ls runs it only when its command is set to
``python -m goose_ls.testing SCRIPT.json`` (which :func:`scripted_agent_command` builds).
The test harness (a goose-ls process and an editor speaking LSP to it) is
:mod:`goose_ls.testing.harness`, which needs pytest-lsp.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from goose_ls.testing.script import (
    GOOSE_PERMISSION_OPTIONS,
    scripted_agent_command,
    write_fake_goose,
    write_script,
)

if TYPE_CHECKING:
    from goose_ls.testing.editor import GooseRecorder, plain

__all__ = [
    "GOOSE_PERMISSION_OPTIONS",
    "GooseRecorder",
    "plain",
    "scripted_agent_command",
    "write_fake_goose",
    "write_script",
]


def __getattr__(name: str) -> Any:
    # The editor side loads pygls and lsprotocol (0.4 s); the scripted agent, started by
    # ``python -m goose_ls.testing`` once or more in every test, has no use for them.
    if name in ("GooseRecorder", "plain"):
        from goose_ls.testing import editor

        return getattr(editor, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
