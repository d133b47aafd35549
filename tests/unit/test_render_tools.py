"""A tool call's block tells its latest status: drawn again where it is, the text after
it kept, while that text is short; further up, a status line at the end."""

from __future__ import annotations

from goose_ls import events
from goose_ls.lsp.transcript.render import REDRAW_LIMIT, Renderer
from goose_ls.lsp.transcript.text import TranscriptText
from goose_ls.tool_calls import ToolCalls


class _Chat:
    """A transcript rendered as a session renders it: tool calls tracked first."""

    def __init__(self) -> None:
        self.text, self.calls = TranscriptText(""), ToolCalls()
        self.renderer = Renderer(self.text, lambda: self.calls)

    def show(self, event: events.SessionEvent) -> None:
        if isinstance(event, (events.ToolCall, events.ToolCallUpdate)):
            self.calls.apply(event)
        self.renderer.render(event)


def _say(text: str) -> events.AgentMessageChunk:
    return events.AgentMessageChunk({"type": "text", "text": text})


def test_two_blocks_redrawn_out_of_order_keep_everything_around_them() -> None:
    chat = _Chat()
    chat.show(events.ToolCall("t1", "read · a.py", status="pending"))
    chat.show(_say("between"))
    chat.show(events.ToolCall("t2", "read · b.py", status="pending"))
    chat.show(_say("after"))
    chat.show(events.ToolCallUpdate("t2", status="completed"))
    chat.show(events.ToolCallUpdate("t1", status="failed", title="read · a.py again"))
    chat.show(events.ToolCallUpdate("t2", title="read · b.py, 2 lines"))
    body = chat.text.body
    assert "⏳" not in body
    order = ["**🔧 read · a.py again** — ✗ failed", "between", "**🔧 read · b.py, 2 lines** — ✓"]
    assert [body.index(part) for part in order] == sorted(body.index(p) for p in order)
    assert body.rstrip().endswith("after"), body


def test_a_block_far_up_gets_a_status_line_at_the_end() -> None:
    chat = _Chat()
    chat.show(events.ToolCall("t1", "shell · make", status="in_progress"))
    chat.show(_say("x" * (REDRAW_LIMIT + 1)))
    chat.show(events.ToolCallUpdate("t1", status="completed"))
    body = chat.text.body
    assert body.rstrip().endswith("_✓ shell · make: completed_"), body[-80:]


def test_the_blocks_a_redraw_may_shift_stay_bounded_however_many_calls_came() -> None:
    """Agent-driven cost stays linear: 5,000 calls started, then the one before the last
    drawn again and again; each redraw shifts only the blocks near the end (it used to
    shift all 5,000, so each update cost more the more calls the turn had)."""
    chat = _Chat()
    for n in range(5_000):
        chat.show(events.ToolCall(f"c{n}", "r", status="pending"))
    for n in range(100):
        chat.show(events.ToolCallUpdate("c4998", status=("in_progress", "pending")[n % 2]))
    spans = chat.renderer._spans
    assert len(spans) <= REDRAW_LIMIT // 20, len(spans)
    assert "c4998" in "".join(spans) and "c4999" in "".join(spans)
    body = chat.text.body
    assert body.count("**🔧 r** — ⏳ pending") == 5_000  # redrawn in place, no status lines
    assert list(spans.values()) == sorted(spans.values())
