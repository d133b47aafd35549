"""A whole turn end to end: real goose-ls process, scripted goose-like agent."""

from __future__ import annotations

import asyncio

import pytest

from support.harness import Editor, shared_agent

pytestmark = shared_agent(__name__)

REPLY = "Here is a long answer, streamed in many small pieces: " + "lorem ipsum " * 40


async def test_a_turn_streams_every_chunk_in_order(shared: Editor) -> None:
    await shared.start(
        {
            "turns": [
                [
                    {"thought": "thinking it over", "chunks": 4},
                    {
                        "toolCall": {
                            "toolCallId": "call_1",
                            "title": "shell · ls",
                            "rawInput": {"command": "ls"},
                        }
                    },
                    {"toolUpdate": {"toolCallId": "call_1", "status": "completed"}},
                    {"toolUpdate": {"toolCallId": "call_1", "title": "listing the files"}},
                    {"text": REPLY, "chunks": 200},
                ]
            ]
        }
    )
    session_id = await shared.new_session()
    message_id = await shared.prompt(session_id, "explain")
    end = await shared.goose.turn_end(message_id)

    assert end["stopReason"] == "end_turn"
    assert shared.goose.text(message_id) == REPLY
    assert shared.goose.text(message_id, "agent_thought_chunk") == "thinking it over"
    chunks = [
        u for u in shared.goose.updates if u["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    # Chunks read in a row come joined into one update: all 200, whole, in order.
    assert 1 <= len(chunks) <= 200
    indices = [u["index"] for u in shared.goose.updates] + [end["index"]]
    assert indices == list(range(1, len(indices) + 1)), "indices must increase by one, from 1"
    tool_call = shared.goose.of_kind("tool_call")[0]
    assert tool_call == {
        "sessionUpdate": "tool_call",
        "toolCallId": "call_1",
        "title": "shell · ls",
        "rawInput": {"command": "ls"},
    }
    # The user's own prompt is part of the session's history too.
    assert shared.goose.text(message_id, "user_message_chunk") == "explain"


async def test_chunks_read_in_a_row_reach_the_editor_joined_each_character_once(
    shared: Editor,
) -> None:
    """A burst of chunks read at once is handled, journaled and sent as one event, not
    one per token; what comes between (a thought) keeps its place."""
    first = "".join(f"{n:04d}," for n in range(300))
    second = "tail " * 50
    await shared.start(
        {
            "turns": [
                [
                    {"burst": first, "chunks": 300},
                    {"thought": "hm"},
                    {"burst": second, "chunks": 50},
                ]
            ]
        }
    )
    session_id = await shared.new_session()
    message_id = await shared.prompt(session_id, "go")
    end = await shared.goose.turn_end(message_id)

    turn = [u for u in shared.goose.updates if u.get("messageId") == message_id]
    kinds = [u["update"]["sessionUpdate"] for u in turn]
    texts = [u["update"]["content"]["text"] for u in turn]
    thought = kinds.index("agent_thought_chunk")
    before = "".join(
        t for k, t in zip(kinds[:thought], texts, strict=False) if k == "agent_message_chunk"
    )
    after = "".join(
        t
        for k, t in zip(kinds[thought:], texts[thought:], strict=True)
        if k == "agent_message_chunk"
    )
    assert (before, after) == (first, second), "every character once, in order, around the thought"
    assert kinds.count("agent_message_chunk") < 350 / 10, "read in a row, sent joined"
    assert [u["index"] for u in turn] + [end["index"]] == list(
        range(turn[0]["index"], end["index"] + 1)
    ), "one index an event"
    transcript = await shared.transcript_text(second.strip(), session_id)
    assert first in transcript and transcript.index(first) < transcript.index("hm")


async def test_updates_sent_before_the_session_new_answer_are_kept(shared: Editor) -> None:
    await shared.start({"turns": [[{"text": "ok"}]]})
    session_id = await shared.new_session()
    await shared.goose.wait_for(lambda: len(shared.goose.updates) >= 2, what="setup updates")
    setup = shared.goose.updates[:2]
    assert [u["update"]["sessionUpdate"] for u in setup] == [
        "usage_update",
        "available_commands_update",
    ]
    assert all(u["sessionId"] == session_id and u["messageId"] is None for u in setup)


@pytest.mark.asyncio(loop_scope="function")  # what the agent is sent at its start
async def test_the_agent_is_started_and_used_as_acp_requires(editor: Editor) -> None:
    await editor.start({"turns": [[{"text": "ok"}]]})
    session_id = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(session_id, "hi"))

    (init,) = editor.received("initialize")
    assert init["params"]["protocolVersion"] == 1
    assert init["params"]["clientInfo"]["name"] == "goose-ls"
    (new,) = editor.received("session/new")
    assert new["params"] == {
        "cwd": str(editor.workspace),
        "mcpServers": [],
        "_meta": {"client": "goose-ls"},
    }
    (prompt,) = editor.received("session/prompt")
    assert prompt["params"]["prompt"] == [{"type": "text", "text": "hi"}]


async def test_all_eleven_update_kinds_arrive_typed(shared: Editor) -> None:
    await shared.start(
        {
            "turns": [
                [
                    {"userText": "replayed question"},
                    {"text": "answer"},
                    {"thought": "hmm"},
                    {"toolCall": {"toolCallId": "t", "title": "read · a.py"}},
                    {"toolUpdate": {"toolCallId": "t", "status": "completed", "kind": "read"}},
                    {"plan": [{"content": "step", "priority": "high", "status": "pending"}]},
                    {"commands": [{"name": "compact", "description": "Compact"}]},
                    {"mode": "approve"},
                    {
                        "configOptions": [
                            {
                                "id": "mode",
                                "name": "Mode",
                                "type": "select",
                                "currentValue": "auto",
                                "options": [{"value": "auto", "name": "auto"}],
                            }
                        ]
                    },
                    {"sessionInfo": {"title": "A title"}},
                    {
                        "usage": {
                            "used": 10,
                            "size": 100,
                            "cost": {"amount": 0.1, "currency": "USD"},
                        }
                    },
                    {"update": {"sessionUpdate": "something_new", "x": 1}},
                    {"text": "done"},
                ]
            ]
        }
    )
    session_id = await shared.new_session()
    message_id = await shared.prompt(session_id)
    await shared.goose.turn_end(message_id)
    kinds = {
        u["update"]["sessionUpdate"] for u in shared.goose.updates if u["messageId"] == message_id
    }
    assert kinds == {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
        "available_commands_update",
        "current_mode_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
    }
    assert shared.goose.of_kind("current_mode_update")[-1]["currentModeId"] == "approve"
    assert shared.goose.of_kind("session_info_update")[-1]["title"] == "A title"
    assert shared.goose.text(message_id).endswith("done"), (
        "an unknown kind must not stop the stream"
    )


async def test_cancel_mid_stream_reports_cancelled_even_when_the_agent_says_end_turn(
    shared: Editor,
) -> None:
    await shared.start(
        {
            "turns": [
                [{"text": "x" * 2000, "chunks": 2000, "delay": 0.005, "cancelledAs": "end_turn"}]
            ]
        }
    )
    session_id = await shared.new_session()
    message_id = await shared.prompt(session_id)
    await shared.goose.wait_for(lambda: len(shared.goose.text(message_id)) >= 10, what="some text")
    result = await shared.goose.request("goose/cancel", {"sessionId": session_id})
    assert result == {"cancelled": True}
    end = await shared.goose.turn_end(message_id)
    assert end["stopReason"] == "cancelled"
    assert len(shared.goose.text(message_id)) < 2000
    (cancel,) = shared.received("session/cancel")
    assert "id" not in cancel, "session/cancel must be a notification"


async def test_cancel_answers_a_pending_permission_request_with_cancelled(shared: Editor) -> None:
    await shared.start(
        {
            "turns": [
                [
                    {"toolCall": {"toolCallId": "t1", "title": "shell · rm -rf build"}},
                    {"permission": {"toolCallId": "t1", "title": "shell"}},
                    {"waitForCancel": True},
                ]
            ]
        }
    )
    session_id = await shared.new_session()
    message_id = await shared.prompt(session_id)
    (request,) = await shared.goose.wait_for(
        lambda: shared.goose.of_kind("permission_request"), what="a permission request"
    )
    assert [o["optionId"] for o in request["options"]] == [
        "allow_always",
        "allow_once",
        "reject_once",
        "reject_always",
        "goose-ls:allow_session",
    ]
    await shared.goose.request("goose/cancel", {"sessionId": session_id})
    end = await shared.goose.turn_end(message_id)
    assert end["stopReason"] == "cancelled"
    (resolved,) = shared.goose.of_kind("permission_resolved")
    assert resolved["outcome"] == "cancelled"
    answers = await shared.goose.wait_for(
        lambda: [
            m for m in _responses(shared) if m.get("result", {}).get("outcome", {}).get("outcome")
        ],
        what="the agent to receive the answer",
    )
    assert answers[0]["result"]["outcome"] == {"outcome": "cancelled"}


async def test_a_permission_answer_reaches_the_agent(shared: Editor) -> None:
    await shared.start(
        {"turns": [[{"permission": {"toolCallId": "t1", "title": "edit"}}, {"text": " done"}]]}
    )
    session_id = await shared.new_session()
    message_id = await shared.prompt(session_id)
    (request,) = await shared.goose.wait_for(lambda: shared.goose.of_kind("permission_request"))
    bad = shared.goose.request(
        "goose/permission", {"requestId": request["requestId"], "optionId": "yes_please"}
    )
    try:
        await bad
    except Exception as exc:
        assert "optionId" in str(exc) and "allow_once" in str(exc)
    else:
        raise AssertionError("an option that was not offered must be refused")
    await shared.goose.request(
        "goose/permission", {"requestId": request["requestId"], "optionId": "allow_once"}
    )
    await shared.goose.turn_end(message_id)
    assert shared.goose.text(message_id) == "[permission: allow_once] done"


async def test_prompts_to_a_busy_session_wait_their_turn(shared: Editor) -> None:
    await shared.start(
        {"turns": [[{"text": "first", "chunks": 5, "delay": 0.05}], [{"text": "second"}]]}
    )
    session_id = await shared.new_session()
    first = await shared.prompt(session_id)
    second_id = await shared.prompt(session_id)
    ends = await asyncio.gather(shared.goose.turn_end(first), shared.goose.turn_end(second_id))
    assert [e["stopReason"] for e in ends] == ["end_turn", "end_turn"]
    assert ends[0]["index"] < ends[1]["index"]
    assert shared.goose.text(first) == "first" and shared.goose.text(second_id) == "second"


def _responses(editor: Editor) -> list[dict]:
    return [m for m in editor.agent_messages() if "method" not in m]


async def test_a_plugin_s_at_mention_is_found_then_sent_as_the_file(shared: Editor) -> None:
    await shared.start({"turns": [[{"text": "Read it."}]]})
    (shared.workspace / "src").mkdir()
    (shared.workspace / "src" / "app.py").write_text("a = 1\n")
    found = await shared.goose.request("goose/findFiles", {"query": "APP"})
    assert found == {"files": ["src/app.py"]}
    session_id = await shared.new_session()
    app = (shared.workspace / "src" / "app.py").resolve().as_uri()
    attached = {"type": "file", "uri": app}
    await shared.goose.turn_end(
        await shared.prompt(session_id, "Why @src/app.py and @gone.py?", context=[attached])
    )
    (prompt,) = shared.received("session/prompt")
    links = [b["uri"] for b in prompt["params"]["prompt"] if b["type"] == "resource_link"]
    assert links == [app], "attached once, a missing file left as text"
