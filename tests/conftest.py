"""Fixtures. The harness they use (a real goose-ls process, an LSP client speaking to it
and the scripted agent) is ``goose_ls.testing.harness``.

``editor`` is a goose-ls of a test's own, with its own workspace, data dir and log file;
tests that change anything use it.

``SERVER_COMMAND`` and ``server_env`` are here only because test_nvim.py and
test_emacs.py still import them from conftest; they belong to the harness.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from goose_ls.testing.harness import SERVER_COMMAND as SERVER_COMMAND
from goose_ls.testing.harness import Editor, start_editor, stop_editor
from goose_ls.testing.harness import server_env as server_env


@pytest_asyncio.fixture
async def editor(tmp_path: Path) -> AsyncIterator[Editor]:
    session = await start_editor(tmp_path)
    yield session
    await stop_editor(session)
