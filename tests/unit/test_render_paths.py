"""A selection looks the same in the transcript however it was attached (Explain, Ask)."""

from __future__ import annotations

from goose_ls import events
from goose_ls.lsp.transcript.render import Renderer
from goose_ls.lsp.transcript.text import TranscriptText
from goose_ls.lsp.transcript.transcript import context_line
from goose_ls.sessions import ContextItem
from goose_ls.tool_calls import ToolCalls


def _rendered(content: events.Json) -> str:
    text = TranscriptText("")
    calls = ToolCalls()
    Renderer(text, lambda: calls).render(events.UserMessageChunk(content))
    return text.body


def test_a_selection_is_shown_alike_as_a_fenced_block_a_resource_or_a_context_line() -> None:
    fenced = {"type": "text", "text": "/tmp/uxproj/app.py:16-16\n```python\nx = 1\n```"}
    resource = {
        "type": "resource",
        "resource": {"uri": "file:///tmp/uxproj/app.py#L16-L16", "text": "x = 1"},
    }
    item = ContextItem(
        type="selection", uri="file:///tmp/uxproj/app.py", start_line=16, end_line=16
    )
    shown = "`tmp/uxproj/app.py:16`"
    assert shown in _rendered(fenced)
    assert shown in _rendered(resource)
    assert shown in context_line(item)
    wider = {"type": "text", "text": "/tmp/uxproj/app.py:8-12\n```python\nx = 1\n```"}
    assert "`tmp/uxproj/app.py:8-12`" in _rendered(wider)
