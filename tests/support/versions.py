"""Each flow once per editor: a test of a real editor runs on one of the editor's versions,
taken in turn, so every version runs and each flow runs once (a few flows that differ most
between versions run on all of them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest


class InTurn:
    """The versions of one editor, as pytest parameters of ``names``."""

    def __init__(self, names: str | Sequence[str], versions: Sequence[Any]) -> None:
        self._names = names
        self._versions = list(versions)
        self._next = 0

    def each(self) -> pytest.MarkDecorator:
        """Every version: for a flow that differs between them."""
        return pytest.mark.parametrize(self._names, self._versions)

    def one(self) -> pytest.MarkDecorator:
        """The next version in turn (by the order the module's tests are written in)."""
        version = self._versions[self._next % len(self._versions)]
        self._next += 1
        return pytest.mark.parametrize(self._names, [version])
