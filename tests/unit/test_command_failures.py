"""What the user sees when a goose.* command fails: its reason, or where to look."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest
from lsprotocol import types

from goose_ls.errors import Refused
from goose_ls.lsp import commands
from goose_ls.lsp.command_args import NoArguments


class _Editor:
    def __init__(self) -> None:
        self.shown: list[tuple[types.MessageType, str]] = []

    def show(self, kind: types.MessageType, text: str) -> None:
        self.shown.append((kind, text))


async def _fail_with(error: Exception) -> _Editor:
    async def handler(_: Any, __: Any) -> None:
        raise error

    editor = _Editor()
    command = commands.Command("goose.example", "Goose: Example", NoArguments, handler)
    await commands._run(SimpleNamespace(editor=editor), command, NoArguments())  # type: ignore[arg-type]
    return editor


async def test_a_known_problem_is_shown_as_it_is() -> None:
    editor = await _fail_with(Refused("not now", "try later"))
    assert editor.shown == [(types.MessageType.Warning, "goose: goose.example: not now. try later")]


async def test_a_bug_says_the_command_failed_and_the_log_has_the_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR):
        editor = await _fail_with(KeyError("oops"))
    assert editor.shown == [
        (types.MessageType.Error, "goose: goose.example failed; see the goose-ls log")
    ]
    assert caplog.records[0].exc_info is not None
