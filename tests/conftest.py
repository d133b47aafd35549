"""Fixtures. The harness they use (a real goose-ls process, an LSP client speaking to it
and the scripted agent) is ``goose_ls.testing.harness``.

``editor`` is a goose-ls of a test's own, with its own workspace, data dir and log file;
tests that change anything use it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from goose_ls.testing.harness import Editor, start_editor, stop_editor


@pytest_asyncio.fixture
async def editor(tmp_path: Path) -> AsyncIterator[Editor]:
    session = await start_editor(tmp_path)
    yield session
    await stop_editor(session)
