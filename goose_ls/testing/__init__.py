"""A scripted ACP agent that behaves on the wire as goose does, for tests and demos.

It is never used as a silent fallback: goose-ls runs it only when its command is set to
``python -m goose_ls.testing SCRIPT.json`` (which :func:`scripted_agent_command` builds).
"""

from goose_ls.testing.editor import GooseRecorder, plain
from goose_ls.testing.script import (
    GOOSE_PERMISSION_OPTIONS,
    scripted_agent_command,
    write_fake_goose,
    write_script,
)

__all__ = [
    "GOOSE_PERMISSION_OPTIONS",
    "GooseRecorder",
    "plain",
    "scripted_agent_command",
    "write_fake_goose",
    "write_script",
]
