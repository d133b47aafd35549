"""The scripted agent: an ACP agent that plays a JSON script and behaves on the wire as
goose does, for ``goose-ls demo`` and for testing an editor plugin without a model.

Run it as ``python -m goose_ls.scripted SCRIPT.json`` (the ``agent.command`` that
:func:`scripted_agent_command` builds); the script's format is in :mod:`.script`. goose-ls
never falls back to it on its own. It needs nothing beyond goose-ls's own dependencies;
the project's test harness, fake model APIs and editor drivers live beside its tests and
are not installed.
"""

from __future__ import annotations

from goose_ls.scripted.script import (
    GOOSE_PERMISSION_OPTIONS,
    load_script,
    scripted_agent_command,
    scripted_server_command,
    write_script,
)

__all__ = [
    "GOOSE_PERMISSION_OPTIONS",
    "load_script",
    "scripted_agent_command",
    "scripted_server_command",
    "write_script",
]
