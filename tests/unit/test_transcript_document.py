"""The transcript's body, what is shown of it, and the editor's copy, against plain strings."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st
from lsprotocol import types

from goose_ls.lsp.positions import Position, units_of
from goose_ls.lsp.transcript.editor_copy import TranscriptDocument
from goose_ls.lsp.transcript.rope import PIECE, Rope
from goose_ls.lsp.transcript.text import SENTINEL, Edit, TranscriptText, prompt_section
from support.buffers import offset_of

ENCODINGS = ["utf-8", "utf-16", "utf-32"]
MIXED = "Ça 👍🏽 你好，世界 𝔁\n"  # noqa: RUF001 (1 to 4 bytes, 1 or 2 UTF-16 units)
HEAD = "# goose chat · t\n\n"


def naive_position(text: str, offset: int, encoding: str) -> Position:
    before = text[:offset]
    line_start = before.rfind("\n") + 1
    return Position(before.count("\n"), units_of(encoding)(before[line_start:]))


def apply(text: str, edit: Edit, encoding: str) -> str:
    """What an editor does with an edit (positions in ``encoding``)."""
    start = offset_of(text, edit.start.line, edit.start.character, encoding)
    end = offset_of(text, edit.end.line, edit.end.character, encoding)
    return text[:start] + edit.new_text + text[end:]


def change(start: Position, end: Position, text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(start.line, start.character),
            end=types.Position(end.line, end.character),
        ),
        text=text,
    )


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_positions_follow_appends_and_cuts_in_every_encoding(encoding: str) -> None:
    rope, model = Rope(units_of(encoding)), ""
    for i in range(3 * PIECE // len(MIXED)):
        piece = MIXED if i % 3 else MIXED.rstrip("\n") + "long line " * 40
        rope.append(piece)
        model += piece
    rope.cut(len(model) - 500)
    model = model[:-500]
    rope.append("tail 👍")
    model += "tail 👍"
    assert str(rope) == model and rope.length == len(model)
    assert rope.end == naive_position(model, len(model), encoding)
    for offset in range(0, len(model), 97):
        position = rope.position(offset)
        assert position == naive_position(model, offset, encoding)
        assert rope.offset(position) == offset
        assert rope.text(offset, offset + 50) == model[offset : offset + 50]


@examples(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("append"), st.text(alphabet="ab\n👍你", max_size=12)),
            st.tuples(st.just("rewrite"), st.integers(0, 60), st.text("c\n🦆", max_size=8)),
            st.tuples(st.just("flush"), st.booleans()),
        ),
        max_size=40,
    ),
    st.sampled_from(ENCODINGS),
)
def test_edits_bring_the_editor_to_the_body(operations: list[Any], encoding: str) -> None:
    """Appends and tail rewrites, sent as edits (some refused), keep the editor right."""
    text = TranscriptText(HEAD, units_of(encoding))
    section = "\n" + prompt_section([])
    editor = HEAD + section
    for operation in operations:
        if operation[0] == "append":
            text.append(operation[1])
        elif operation[0] == "rewrite":
            text.rewrite_from(min(operation[1], text.length), operation[2])
        elif (edit := text.take_pending()) is not None:
            if operation[1]:
                editor = apply(editor, edit, encoding)
            else:
                text.retry(edit)  # refused: the editor keeps what it had
        assert editor == HEAD + str(text.shown) + section
    if (edit := text.take_pending()) is not None:
        editor = apply(editor, edit, encoding)
    assert editor == text.document(prompt_section([]))


def opened(encoding: str, body: str = MIXED * 3) -> tuple[TranscriptText, TranscriptDocument]:
    text = TranscriptText(HEAD, units_of(encoding))
    text.append(body)
    text.mark_shown()
    document = TranscriptDocument(text, text.document(prompt_section([])), 1)
    assert not document.follow_editor()
    return text, document


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_typing_in_the_prompt_section_changes_only_the_draft(encoding: str) -> None:
    text, document = opened(encoding)
    end = document.end
    assert not document.change([change(end, end, "Und 你好 👍")], 2)
    assert document.prompt is not None and document.prompt.endswith("\nUnd 你好 👍")
    assert document.source == text.document(prompt_section([], "Und 你好 👍"))
    assert not text.dirty


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_editor_applying_goose_ls_edits_is_not_a_difference(encoding: str) -> None:
    text, document = opened(encoding)
    text.append("more 🦆 text\nand a tool call ⏳")
    first = text.take_pending()
    assert first is not None
    assert not document.change([change(first.start, first.end, first.new_text)], 2)
    text.rewrite_from(text.length - len("and a tool call ⏳"), "and a tool call ✓ done\n")
    second = text.take_pending()
    assert second is not None
    # Applied as a smaller change, as editors that diff report it.
    at = len("and a tool call ")
    start = Position(
        second.start.line, second.start.character + units_of(encoding)("and a tool call ")
    )
    assert not document.change([change(start, second.end, second.new_text[at:])], 3)
    assert document.source == text.document(prompt_section([]))
    assert not text.dirty


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_change_above_the_prompt_section_is_sent_again(encoding: str) -> None:
    text, document = opened(encoding)
    second_line = Position(text.head_lines + 1, 0)
    assert document.change([change(second_line, second_line, "my note ")], 2)
    assert text.dirty, "what the editor shows is not the body"
    edit = text.take_pending()
    assert edit is not None
    assert apply(document.source, edit, encoding) == text.document(prompt_section([]))


def test_a_broken_sentinel_is_read_whole_and_then_again() -> None:
    text, document = opened("utf-16")
    line = document.sentinel_line
    assert line is not None
    cut = change(Position(line, 0), Position(line, 4), "")
    document.change([cut], 2)
    assert document.sentinel_line is None and document.prompt is None
    assert document.source == text.document(prompt_section([])).replace(SENTINEL, SENTINEL[4:])
    document.change([change(Position(line, 0), Position(line, 0), SENTINEL[:4])], 3)
    assert document.sentinel_line == line and document.prompt == prompt_section([])
