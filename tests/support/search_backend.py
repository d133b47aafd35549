"""The journal search backends a test runs under, as a fixture (import it by name)."""

from __future__ import annotations

from collections.abc import Iterator
from unittest import mock

import pytest

from goose_ls.sessions.journal import search


@pytest.fixture(params=["fts5", "like"])
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """The journal's search as this Python's SQLite gives it (FTS5), then as one without
    FTS5 does (``LIKE``)."""
    if request.param == "like":
        with mock.patch.object(search, "fts_available", lambda: False):
            yield "like"
    else:
        if not search.fts_available():
            pytest.skip("this Python's SQLite has no FTS5")
        yield "fts5"
