"""A selection looks the same in the transcript however it was attached (Explain, Ask),
named from the chat's workspace folder; a tool's output and diffs stay one block each."""

from __future__ import annotations

from pathlib import Path

from goose_ls import events
from goose_ls.lsp.transcript import blocks
from goose_ls.lsp.transcript.render import Renderer
from goose_ls.lsp.transcript.session_transcript import context_line
from goose_ls.lsp.transcript.text import TranscriptText
from goose_ls.sessions import ContextItem
from goose_ls.tool_calls import ToolCalls

ROOT = "/tmp/uxproj"


def _rendered(*evs: events.SessionEvent, root: str | None = ROOT) -> str:
    text = TranscriptText("")
    calls = ToolCalls()
    renderer = Renderer(text, lambda: calls, root=lambda: root, agent=lambda: "Claude Agent")
    for event in evs:
        if isinstance(event, (events.ToolCall, events.ToolCallUpdate)):
            calls.apply(event)
        renderer.render(event)
    return text.body


def _user(content: events.Json) -> events.UserMessageChunk:
    return events.UserMessageChunk(content)


def test_a_selection_is_shown_alike_as_a_fenced_block_a_resource_or_a_context_line() -> None:
    fenced = {"type": "text", "text": "/tmp/uxproj/src/app.py:16-16\n```python\nx = 1\n```"}
    resource = {
        "type": "resource",
        "resource": {"uri": "file:///tmp/uxproj/src/app.py#L16-L16", "text": "x = 1"},
    }
    item = ContextItem(
        type="selection", uri="file:///tmp/uxproj/src/app.py", start_line=16, end_line=16
    )
    shown = "`src/app.py:16`"
    assert shown in _rendered(_user(fenced))
    assert shown in _rendered(_user(resource))
    assert shown in context_line(item, ROOT)
    wider = {"type": "text", "text": "/tmp/uxproj/src/app.py:8-12\n```python\nx = 1\n```"}
    assert "`src/app.py:8-12`" in _rendered(_user(wider))


def test_a_path_outside_the_workspace_is_shown_whole() -> None:
    outside = {"type": "resource_link", "uri": "file:///etc/a/b/c/passwd", "name": "passwd"}
    assert "`/etc/a/b/c/passwd` (file)" in _rendered(_user(outside))
    home = Path.home() / "notes" / "todo.md"
    item = ContextItem(type="file", uri=home.as_uri())
    assert "`~/notes/todo.md` (file)" in context_line(item, ROOT)


def test_the_agent_s_messages_are_headed_with_its_own_name_once_per_turn() -> None:
    call = events.ToolCall(
        "t1", title="Read app.py", kind="read", raw_input={"path": f"{ROOT}/app.py"}
    )
    body = _rendered(
        _user({"type": "text", "text": "go"}),
        events.AgentMessageChunk({"type": "text", "text": "Looking."}),
        call,
        events.ToolCallUpdate("t1", status="completed"),
        events.AgentMessageChunk({"type": "text", "text": "Done."}),
    )
    assert body.count("## Claude Agent") == 1 and "## goose" not in body
    assert "`app.py`" in body, "the tool's path from the workspace"


def test_an_output_the_agent_fenced_itself_is_one_block_that_its_lines_cannot_close() -> None:
    output = "```console\n```\nx\n```\n```"
    update = events.ToolCallUpdate(
        "t1",
        status="completed",
        content=[{"type": "content", "content": {"type": "text", "text": output}}],
    )
    body = _rendered(events.ToolCall("t1", title="Run", kind="execute"), update)
    assert "````\n```\nx\n```\n````" in body, body
    assert body.count("```console") == 0


def test_a_diff_of_a_markdown_fence_is_not_closed_by_it() -> None:
    diff = {
        "type": "diff",
        "path": f"{ROOT}/README.md",
        "oldText": "```\na\n```\n",
        "newText": "```\nb\n```\n",
    }
    update = events.ToolCallUpdate("t1", status="completed", content=[diff])
    body = _rendered(events.ToolCall("t1", title="Edit", kind="edit"), update)
    assert "````diff\n--- a/README.md\n+++ b/README.md\n" in body, body
    assert body.rstrip().endswith("````")


def test_a_code_span_holds_any_backticks() -> None:
    assert blocks.code_span("a`b") == "``a`b``"
    assert blocks.code_span("`x`") == "`` `x` ``"


def _card(request_id: str) -> events.PermissionRequested:
    return events.PermissionRequested(
        request_id,
        events.ToolCallUpdate(f"call-{request_id}", title=f"Edit {request_id}", kind="edit"),
        [
            events.PermissionOption("a", "Allow", "allow_once"),
            events.PermissionOption("r", "Reject", "reject_once"),
        ],
    )


def test_an_answered_card_says_its_answer_where_its_choices_were() -> None:
    body = _rendered(_card("p1"), events.PermissionResolved("p1", "selected", "a", "Allow once"))
    assert "Answer with a code action" not in body and "goose-ls: permission p1" not in body
    assert body.rstrip().endswith("> _Permission answered: Allow once._"), body


def test_a_card_answered_after_others_is_answered_in_place() -> None:
    body = _rendered(
        _card("p1"),
        _card("p2"),
        events.PermissionResolved("p1", "selected", "r", "Reject"),
    )
    first, second = body.split("Permission needed:** Edit p2")
    assert "> _Permission answered: Reject._" in first and "Answer with" not in first
    assert "Answer with a code action on this card" in second, "p2 still waits"
    assert "goose-ls: permission p2" in first, "its marker is just above it"
