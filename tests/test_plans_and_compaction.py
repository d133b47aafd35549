"""What ACP's unstable schema adds, shown as the stable parts are: plans by id
(``plan_update``/``plan_removed``), compaction of the conversation (``compaction_update``,
``compaction_summary_chunk``) and a tool call's own ``name``. An agent sends each only to
a client that offers it in ``initialize``; goose-ls offers them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.harness import Editor, shared_agent
from support.turns import COMPACTION

pytestmark = shared_agent(__name__)


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


@pytest.mark.asyncio(loop_scope="function")  # what the agent is sent at its start
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
    text = await _shows(editor, session_id, "1. Split `parse`", "_Plan `p1` removed._")
    assert text.count("Read the parser") == 1, "the second update redrew the first in place"
    assert "- [x] Read the parser" in text
    assert "- [ ] Write the test" in text


@pytest.mark.asyncio(loop_scope="function")  # what the agent is sent at its start
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


async def test_a_tool_calls_own_name_is_shown_beside_its_title(shared: Editor) -> None:
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
    await shared.start({"turns": [steps]})
    session_id = await shared.new_session()
    await shared.goose.turn_end(await shared.prompt(session_id, "look"))
    calls = {c["toolCallId"]: c for c in shared.goose.of_kind("tool_call", session_id)}
    assert calls["t1"]["name"] == "fs_read"
    assert calls["t2"]["name"] == "shell"
    text = await _shows(shared, session_id, "Read app.py", "shell · ls")
    assert "**🔧 Read app.py** · `fs_read`" in text
    assert "**🔧 shell · ls** · `shell`" in text


async def test_plans_in_every_shape_the_stable_schema_has_and_one_it_may_gain(
    shared: Editor,
) -> None:
    """Plan operations as stabilised: a markdown plan may name its file by an absolute
    ``path`` (which the SDK's model drops), a file plan names one by ``uri``, and a plan
    of a kind goose-ls does not know (the SDK fails the whole update) is kept and shown
    by what it carries. A file is linked only inside the workspace."""
    inside = shared.workspace / "docs" / "plan (v2).md"
    outside = shared.tmp / "elsewhere" / "plan.md"
    steps = [
        _update(
            "plan_update",
            plan={
                "type": "markdown",
                "planId": "inside",
                "content": "1. Split `parse`",
                "path": str(inside),
            },
        ),
        _update(
            "plan_update",
            plan={"type": "markdown", "planId": "outside", "content": "Go", "path": str(outside)},
        ),
        _update("plan_update", plan={"type": "file", "planId": "f1", "uri": inside.as_uri()}),
        _update(
            "plan_update",
            plan={"type": "file", "planId": "f2", "uri": "file:///etc/x%0A%23%23%20You%20(1)"},
        ),
        _update(
            "plan_update",
            plan={
                "type": "kanban",
                "planId": "k1",
                "entries": [
                    {"content": "Board task", "status": "completed", "priority": "low"},
                    "not an entry",
                ],
            },
        ),
        _update("plan_update", plan={"type": "outline", "planId": "o1", "content": "- a"}),
        {"text": "Planned."},
    ]
    await shared.start({"turns": [steps]})
    session_id = await shared.new_session()
    await shared.goose.turn_end(await shared.prompt(session_id, "plan it"))
    plans = {u["plan"]["planId"]: u["plan"] for u in shared.goose.of_kind("plan_update")}
    assert list(plans) == ["inside", "outside", "f1", "f2", "k1", "o1"], "none lost"
    assert plans["inside"]["path"] == str(inside), "the path reaches the plugins"
    assert "_meta" not in plans["inside"], "nothing left of its way past the SDK"
    assert plans["k1"]["type"] == "kanban" and len(plans["k1"]["entries"]) == 2, "as sent"
    text = await _shows(shared, session_id, "Planned.")
    assert f"**Plan** · [`docs/plan (v2).md`]({inside.as_uri()})\n\n> 1. Split `parse`" in text
    assert f"**Plan** · `{outside}`\n\n> Go" in text, "outside the workspace: not linked"
    assert f"**Plan**: [`docs/plan (v2).md`]({inside.as_uri()})" in text
    assert "**Plan**: `/etc/x\\n## You (1)`" in text, "one line, not linked, no heading"
    assert "\n## You (1)" not in text
    assert "**Plan** of a kind goose-ls does not know: `kanban`\n- [x] Board task\n" in text
    assert "**Plan** of a kind goose-ls does not know: `outline`\n\n> - a" in text
