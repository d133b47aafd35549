"""The transcript streamer's timing, against a clock that starts where a new machine's does."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from goose_ls.lsp.positions import Position
from goose_ls.lsp.transcript import streamer as streamer_module
from goose_ls.lsp.transcript.streamer import TranscriptStreamer
from goose_ls.lsp.transcript.text import TranscriptText
from goose_ls.tasks import Tasks


def _streamer(
    tmp_path: Path, sent: list[str], is_open: Callable[[], bool]
) -> tuple[TranscriptText, TranscriptStreamer]:
    """A transcript and its streamer, edits and saves an hour apart, each edit it sends
    kept in ``sent``."""

    async def apply_edit(uri: str, start: Position, end: Position, new_text: str) -> bool:
        sent.append(new_text)
        return True

    text = TranscriptText(head="# t\n\n")
    streamer = TranscriptStreamer(
        "file:///t.md",
        tmp_path / "t.md",
        text,
        is_open=is_open,
        apply_edit=apply_edit,
        interval=3600.0,
        save_interval=3600.0,
        context_lines=list,
        editor_section=lambda: None,
        write_failed=lambda path, error: None,
        tasks=Tasks(),
    )
    return text, streamer


async def test_the_first_edit_goes_out_at_once_on_a_machine_just_booted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # monotonic() counts from boot on Linux: two seconds after boot, with an edit
    # interval of an hour, the first edit must still not wait.
    monkeypatch.setattr(streamer_module, "time", types.SimpleNamespace(monotonic=lambda: 2.0))
    sent: list[str] = []
    text, streamer = _streamer(tmp_path, sent, lambda: True)
    text.append("hello")
    streamer.changed()
    await asyncio.wait_for(streamer.settled(), 5.0)
    assert sent == ["hello"]
    await streamer.close()


async def test_what_was_drawn_while_the_editor_opened_the_chat_reaches_it(tmp_path: Path) -> None:
    """A card drawn into a chat no editor shows waits for the file's next save; the
    editor opens the file before that save: the card goes to the editor at once."""
    sent: list[str] = []
    shown = False
    text, streamer = _streamer(tmp_path, sent, lambda: shown)
    text.append("## You\n")
    streamer.changed(urgent=True)
    await asyncio.wait_for(streamer.settled(), 5.0)
    on_disk = (tmp_path / "t.md").read_text()
    assert "## You" in on_disk
    text.append("> Permission needed\n")
    streamer.changed(urgent=True)
    # The streamer's own turn: the file's save is an hour away, nothing is written.
    await asyncio.wait_for(streamer._idle.wait(), 5.0)
    assert (tmp_path / "t.md").read_text() == on_disk
    shown = True  # the editor opened the file as it was (its didOpen says so)
    streamer.opened()
    await asyncio.wait_for(streamer.settled(), 5.0)
    assert sent == ["> Permission needed\n"]
    await streamer.close()
