"""What ACP's unstable schema adds, shown as the stable parts are: plans by id
(``plan_update``/``plan_removed``), compaction of the conversation (``compaction_update``,
``compaction_summary_chunk``) and a tool call's own ``name``. An agent sends each only to
a client that offers it in ``initialize``; goose-ls offers them.
"""

from __future__ import annotations

from pathlib import Path

from support.harness import Editor
from support.turns import COMPACTION


def _transcript(editor: Editor, session_id: str) -> Path:
    return editor.tmp / "data" / "transcripts" / f"{session_id}.md"


async def _shows(editor: Editor, session_id: str, *pieces: str) -> str:
    path = _transcript(editor, session_id)
    await editor.goose.wait_for(
        lambda: path.exists() and all(p in path.read_text() for p in pieces),
        what=f"the transcript showing {pieces}",
    )
    return path.read_text()


def _update(kind: str, **fields: object) -> dict:
    return {"update": {"sessionUpdate": kind, **fields}}


async def test_plans_by_id_are_drawn_in_place_and_removed(editor: Editor) -> None:
    steps = [
        _update(
            "plan_update",
            plan={
                "type": "items",
                "planId": "p1",
                "entries": [
                    {"content": "Read the parser", "status": "in_progress", "priority": "high"},
                    {"content": "Write the test", "status": "pending", "priority": "medium"},
                ],
            },
        ),
        _update(
            "plan_update",
            plan={
                "type": "items",
                "planId": "p1",
                "entries": [
                    {"content": "Read the parser", "status": "completed", "priority": "high"},
                    {"content": "Write the test", "status": "pending", "priority": "medium"},
                ],
            },
        ),
        {"text": "Now the approved plan:"},
        _update(
            "plan_update",
            plan={"type": "markdown", "planId": "mode", "content": "1. Split `parse`\n2. Test"},
        ),
        _update("plan_removed", planId="p1"),
    ]
    await editor.start({"turns": [steps]})
    session_id = await editor.new_session()
    (initialize,) = editor.received("initialize")
    assert initialize["params"]["clientCapabilities"]["plan"] == {}
    await editor.goose.turn_end(await editor.prompt(session_id, "plan it"))
    kinds = [u["sessionUpdate"] for u in editor.goose.of_kind("plan_update", session_id)]
    assert kinds == ["plan_update"] * 3
    assert editor.goose.of_kind("plan_removed", session_id) == [
        {"sessionUpdate": "plan_removed", "planId": "p1"}
    ]
    text = await _shows(editor, session_id, "1. Split `parse`", "_Plan removed._")
    assert text.count("Read the parser") == 1, "the second update redrew the first in place"
    assert "- [x] Read the parser" in text
    assert "- [ ] Write the test" in text


async def test_a_compaction_streams_its_summary_and_says_when_it_is_done(editor: Editor) -> None:
    steps = [
        *COMPACTION,
        _update("compaction_update", compactionId="c2", status="failed", error="too long"),
        {"text": "Carrying on."},
    ]
    await editor.start({"turns": [steps]})
    session_id = await editor.new_session()
    (initialize,) = editor.received("initialize")
    session_caps = initialize["params"]["clientCapabilities"]["session"]
    assert session_caps["compaction"] == {} and session_caps["notices"] == {}
    await editor.goose.turn_end(await editor.prompt(session_id, "/compact"))
    statuses = [u["status"] for u in editor.goose.of_kind("compaction_update", session_id)]
    assert statuses == ["in_progress", "completed", "failed"]
    chunks = editor.goose.of_kind("compaction_summary_chunk", session_id)
    assert [c["content"]["text"] for c in chunks] == ["We split the parser", " and kept the alias."]
    text = await _shows(editor, session_id, "Carrying on.")
    assert "The conversation was compacted." in text
    assert "> We split the parser and kept the alias." in text
    assert "Compacting the conversation…" not in text, "the in-progress line was redrawn"
    assert "Compacting the conversation failed:** too long" in text


async def test_a_tool_calls_own_name_is_shown_beside_its_title(editor: Editor) -> None:
    """ACP's unstable ``name`` (which the SDK's model drops), or goose's
    ``_meta.goose.toolCall.toolName``."""
    steps = [
        {"toolCall": {"toolCallId": "t1", "title": "Read app.py", "name": "fs_read"}},
        {
            "toolCall": {
                "toolCallId": "t2",
                "title": "shell · ls",
                "_meta": {"goose": {"toolCall": {"toolName": "shell", "extensionName": "dev"}}},
            }
        },
        {"toolUpdate": {"toolCallId": "t1", "status": "completed"}},
        {"toolUpdate": {"toolCallId": "t2", "status": "completed"}},
    ]
    await editor.start({"turns": [steps]})
    session_id = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(session_id, "look"))
    calls = {c["toolCallId"]: c for c in editor.goose.of_kind("tool_call", session_id)}
    assert calls["t1"]["name"] == "fs_read"
    assert calls["t2"]["name"] == "shell"
    text = await _shows(editor, session_id, "Read app.py")
    assert "**🔧 Read app.py** · `fs_read`" in text
    assert "**🔧 shell · ls** · `shell`" in text
