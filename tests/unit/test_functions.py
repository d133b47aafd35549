"""Small pure functions: version parsing, discovery order, prompt context, titles, transcripts."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st

from goose_ls.agent.discovery import expand, find_binary, parse_version, platform_candidates
from goose_ls.sessions.context import ContextItem, to_blocks


@pytest.mark.parametrize(
    ("printed", "expected"),
    [
        (" 1.43.0\n", (1, 43, 0)),  # what goose really prints
        ("goose 1.16.0", (1, 16, 0)),
        ("v1.16.0", (1, 16, 0)),
        ("1.16.0", (1, 16, 0)),
        ("goose version 1.16.0", (1, 16, 0)),
        ("Goose 1.16.0-beta", (1, 16, 0)),
        ("no version here", None),
    ],
)
def test_version_formats(printed: str, expected: tuple[int, int, int] | None) -> None:
    assert parse_version(printed) == expected


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_discovery_prefers_the_setting_then_path_then_platform_paths(tmp_path: Path) -> None:
    home = tmp_path / "home"
    on_path = _executable(tmp_path / "bin" / "goose")
    in_home = _executable(home / ".local" / "bin" / "goose")
    explicit = _executable(tmp_path / "custom" / "goose")
    env = {"PATH": str(tmp_path / "bin"), "HOME": str(home)}

    assert find_binary("goose", str(explicit), env)[0] == str(explicit)
    assert find_binary("goose", "", env)[0] == str(on_path)
    on_path.unlink()
    found, searched = find_binary("goose", "", {"PATH": str(tmp_path / "bin"), "HOME": str(home)})
    assert found == str(in_home)
    assert searched[0] == "PATH (goose)"


def test_a_file_without_the_execute_bit_is_not_a_binary(tmp_path: Path) -> None:
    plain = tmp_path / "goose"
    plain.write_text("#!/bin/sh\n")
    found, searched = find_binary("goose", str(plain), {"PATH": ""})
    assert found is None and searched == [str(plain)]


def test_windows_style_variables_and_home_are_expanded() -> None:
    env = {"LOCALAPPDATA": r"C:\Users\me\AppData\Local"}
    assert (
        expand(r"%LOCALAPPDATA%\Goose\goose.exe", env)
        == r"C:\Users\me\AppData\Local\Goose\goose.exe"
    )
    assert platform_candidates(env, "win32")[0].startswith(r"C:\Users\me")
    assert not platform_candidates({}, "linux")[0].startswith("~")


def test_a_selection_is_embedded_when_the_agent_can_take_it() -> None:
    item = ContextItem(
        type="selection", uri="file:///p/a.py", text="x = 1", start_line=3, end_line=3
    )
    (block,) = to_blocks("", [item], embedded_context=True)
    assert block == {
        "type": "resource",
        "resource": {"uri": "file:///p/a.py#L3-L3", "text": "x = 1", "mimeType": "text/x-python"},
    }
    (fenced,) = to_blocks("", [item], embedded_context=False)
    assert fenced == {"type": "text", "text": "/p/a.py:3-3\n```py\nx = 1\n```"}


def test_a_whole_file_is_a_resource_link_the_agent_reads() -> None:
    item = ContextItem(type="file", uri="file:///p/lib.rs")
    assert to_blocks("look", [item], embedded_context=True) == [
        {"type": "text", "text": "look"},
        {"type": "resource_link", "uri": "file:///p/lib.rs", "name": "lib.rs"},
    ]


def test_titles_are_cut_at_a_word_boundary() -> None:
    from goose_ls.sessions.journal.records import title_from_prompt

    assert title_from_prompt("   ") == "New Session"
    assert title_from_prompt("Fix the test") == "Fix the test"
    long = "word " * 20
    title = title_from_prompt(long)
    assert title.endswith("...") and len(title) <= 53 and not title[:-3].endswith(" ")
    assert title_from_prompt("x" * 80) == "x" * 50 + "..."


def test_replayed_content_of_every_kind_renders() -> None:
    from goose_ls import events
    from goose_ls.lsp.transcript.render import Renderer
    from goose_ls.lsp.transcript.text import TranscriptText

    text = TranscriptText(head="# t\n\n")
    renderer = Renderer(text, lambda: None)
    replayed: list[events.SessionEvent] = [
        events.UserMessageChunk({"type": "text", "text": "Look at this"}),
        events.UserMessageChunk({"type": "resource_link", "uri": "file:///p/a.py", "name": "a.py"}),
        events.UserMessageChunk(
            {"type": "resource", "resource": {"uri": "file:///p/b.py#L1-L2", "text": "b"}}
        ),
        events.AgentThoughtChunk({"type": "text", "text": "hmm\nyes"}),
        events.AgentMessageChunk({"type": "text", "text": "See "}),
        events.AgentMessageChunk(
            {"type": "resource_link", "uri": "file:///p/c.py", "name": "c.py"}
        ),
        events.AgentMessageChunk(
            {"type": "resource", "resource": {"uri": "file:///p/d.py", "text": "d = 4"}}
        ),
        events.ToolCall(
            "t1",
            "edit · a.py",
            kind="edit",
            content=[
                {"type": "diff", "path": "/p/a.py", "oldText": "x = 1\n", "newText": "x = 2\n"}
            ],
        ),
    ]
    for event in replayed:
        renderer.render(event)
    body = text.body
    assert "## You\n\nLook at this\n" in body
    assert "> 📎 `/p/a.py` (file)" in body and "> 📎 `/p/b.py:1-2`" in body
    assert "> 💭 hmm\n> yes" in body
    assert "See [c.py](file:///p/c.py)📎 `/p/d.py`\n```\nd = 4\n```" in body
    assert "**🔧 edit · a.py** · edit — ⏳ pending" in body
    assert "-x = 1\n+x = 2\n" in body


@examples(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("append"), st.text(max_size=8)),
            st.tuples(st.just("rewrite"), st.integers(0, 40), st.text(max_size=8)),
            st.tuples(st.just("flush")),
        ),
        max_size=40,
    ),
    st.sampled_from(["", "\n", "\n\n", "a\n"]),
)
def test_transcript_text_matches_a_plain_string(operations: list[Any], suffix: str) -> None:
    """Appends kept as pieces read back exactly as one string would."""
    from goose_ls.lsp.transcript.text import TranscriptText

    text, model = TranscriptText(head="# t\n\n"), ""
    for operation in operations:
        if operation[0] == "append":
            text.append(operation[1])
            model += operation[1]
        elif operation[0] == "rewrite":
            offset = min(operation[1], len(model))
            text.rewrite_from(offset, operation[2])
            model = model[:offset] + operation[2]
        else:
            text.take_pending()
            assert str(text.shown) == model
        assert text.length == len(model)
        assert text.endswith(suffix) == model.endswith(suffix)
    assert text.body == model


def test_chunk_events_take_the_short_way_to_the_same_json() -> None:
    from acp.schema import SessionNotification

    from goose_ls import events
    from goose_ls.agent.acp.client import to_event
    from goose_ls.wire import to_wire

    for kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
        for extra in ({}, {"messageId": "m-1"}):
            update = SessionNotification.model_validate(
                {
                    "sessionId": "s",
                    "update": {
                        "sessionUpdate": kind,
                        "content": {"type": "text", "text": "héllo ✓"},
                        **extra,
                    },
                }
            ).update
            event = to_event(update)
            assert isinstance(event, events.CHUNKS)
            assert event.content == {"type": "text", "text": "héllo ✓"}
            general = {"sessionUpdate": event.KIND, **to_wire(event)}
            assert events.event_to_wire(event) == general
            if extra:
                assert general["messageId"] == "m-1"


def test_the_sessions_index_says_which_session_another_window_has_open() -> None:
    from goose_ls.lsp.chat.sessions_view import entry_at, render

    text = render(
        [
            {"sessionId": "s1", "title": "Here", "loaded": True, "source": "both"},
            {"sessionId": "s2", "title": "There", "openElsewhere": True, "source": "local"},
        ]
    )
    here, there = text.splitlines()[-2:]
    assert here.endswith("· open") and there.endswith("· open in another window")
    assert entry_at(there) == ("s2", "There")
