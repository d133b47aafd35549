"""Fixtures. The harness they use (a real goose-ls process, an LSP client speaking to it
and the scripted agent) is ``support.harness``.

``editor`` is a goose-ls of a test's own, with its own workspace, data dir and log file;
tests that change anything use it. ``shared_editor`` is one goose-ls for the tests of a
module that only read, as esbonio's tests share one server: they are marked
``@shared_server``, to run in the module's event loop.
"""

from __future__ import annotations

import compileall
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

import goose_ls
from support.harness import (
    Editor,
    SharedEditor,
    SharedGroup,
    SharedPool,
    start_editor,
    stop_editor,
)

pytest_plugins = ["support.search_backend"]  # the journal search backends, as a fixture


@pytest_asyncio.fixture
async def editor(tmp_path: Path) -> AsyncIterator[Editor]:
    session = await start_editor(tmp_path)
    yield session
    await stop_editor(session)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_editor(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Editor]:
    """A goose-ls started (as Neovim 0.11 starts it) for every test of a module that asks
    and is answered but changes nothing another test could notice. Its agent answers
    every prompt with "ok"; when the module is done, it must still serve a turn."""
    session = await start_editor(tmp_path_factory.mktemp("shared"))
    await session.start({"turns": [[{"text": "ok"}]]})
    yield session
    session_id = await session.new_session()
    end = await session.goose.turn_end(await session.prompt(session_id, "still there?"))
    assert end["stopReason"] == "end_turn", "after all that, the server still works"
    await stop_editor(session)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_goose(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SharedPool]:
    """The goose-ls and agent of each group of a module's ``shared`` tests (one without
    a ``shared_with`` mark); when the module is done, each must still serve a turn."""
    pool = SharedPool(tmp_path_factory)
    yield pool
    await pool.close()


@pytest_asyncio.fixture(loop_scope="module")
async def shared(
    shared_goose: SharedPool, request: pytest.FixtureRequest
) -> AsyncIterator[SharedEditor]:
    """The goose-ls and agent of the test's group (its ``shared_with`` mark), as this test
    sees them: only what came since it began, of the chats it made; its chats and
    documents are closed when it is done."""
    mark = request.node.get_closest_marker("shared_with")
    session = await shared_goose.get(mark.args[0] if mark else SharedGroup())
    await session.begin()
    yield session
    await session.end()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "shared_with(group): the settings, editor and agent a `shared` test's goose-ls has",
    )


SLOW_FIRST = (
    "test_vscode_browser",
    "test_fuzz",
    "test_vscode",
    "test_load",
    "test_emacs",
    "test_nvim",
    "test_helix",
    "test_editor_face",
    "test_hostile_terminals",
)
"""Modules whose tests take 5 to 20 s (the browser's, 50), and sharing modules that one
worker runs as a block of 40 to 80 s: run first, so that no worker is left with one at
the end while the others idle."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def slowness(item: pytest.Item) -> int:
        module = item.path.stem
        return SLOW_FIRST.index(module) if module in SLOW_FIRST else len(SLOW_FIRST)

    items.sort(key=slowness)  # stable: the rest keep their order


SHARING = "pytestmark = shared_agent(__name__)"
"""How a module whose tests share a goose-ls (the ``shared`` fixture) says so."""


@pytest.hookimpl(optionalhook=True)  # xdist's hook: absent with -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Each test goes to whichever worker is free, in the order above, but the tests of
    a module that shares a goose-ls all go to one worker, which starts it once.

    (``--dist loadgroup`` would do it with ``xdist_group`` marks, but pytest 9.2's node
    ids no longer carry the group to the scheduler: pytest-xdist issue 1386.)"""
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    tests = Path(__file__).parent
    sharing = {
        path.relative_to(tests.parent).as_posix()
        for path in tests.glob("test_*.py")
        if SHARING in path.read_text(encoding="utf-8")
    }

    class SharedModulesTogether(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in sharing else nodeid

    config.option.loadscopereorder = False  # keep the slow-first order
    return SharedModulesTogether(config, log)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile goose-ls's modules once, before the workers start.

    An editable install has no bytecode, and with ``PYTHONDONTWRITEBYTECODE`` set (as on
    CI machines) every goose-ls process of every test compiles them again: 0.08 s of the
    0.9 s a start costs. Bytecode is read whatever that variable says."""
    if not hasattr(session.config, "workerinput"):  # the controller, or a run without xdist
        compileall.compile_dir(Path(goose_ls.__file__).parent, quiet=1)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Two workers a core for ``-n auto``: a test spends about half its time waiting on
    the goose-ls, agent and editor processes it starts. Measured on 2 cores, 506 tests:
    202 s with 2 workers, 186 s with 4."""
    return 2 * (os.cpu_count() or 1)
