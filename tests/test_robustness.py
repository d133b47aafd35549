"""What the agent throws at goose-ls: crashes, garbage on stdout, huge lines."""

from __future__ import annotations

import time

from support.harness import Editor


async def test_a_crash_mid_turn_fails_the_turn_at_once_and_a_later_turn_works(
    editor: Editor,
) -> None:
    await editor.start(
        {
            "turns": [
                [
                    {"text": "partial answer", "chunks": 3},
                    {"stderr": "panic: out of cheese"},
                    {"crash": 9},
                ],
            ],
            "byPrompt": {"are you there?": [{"text": "back again"}]},
            "load": [{"userText": "hello"}, {"text": "partial answer"}],
        },
        settings={"agent": {"requestTimeout": 3600}},
    )
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id)
    await editor.goose.wait_for(lambda: editor.goose.text(message_id) == "partial answer")
    crashed_at = time.monotonic()
    end = await editor.goose.turn_end(message_id)
    print(f"crash reported {time.monotonic() - crashed_at:.3f} s after the last chunk")

    assert "exited with code 9" in end["error"]
    assert "out of cheese" in end["error"], "the agent's last words help the user"
    status = await editor.goose.agent_state("error")
    assert status["reason"] == "crashed"
    assert "goose-ls doctor" in await editor.shown("exited with code 9")

    # The next request restarts the agent; the chat is loaded into it and goes on.
    again = await editor.prompt(session_id, "are you there?")
    end = await editor.goose.turn_end(again)
    assert end["stopReason"] == "end_turn"
    assert editor.goose.text(again) == "back again"
    (load,) = editor.received("session/load")
    assert load["params"] == {
        "sessionId": session_id,
        "cwd": str(editor.workspace),
        "mcpServers": [],
    }
    # The history goose replays on load is already on screen: it is not sent again.
    assert editor.goose.text(message_id) == "partial answer"
    assert [
        u["update"]["content"]["text"]
        for u in editor.goose.updates
        if u["update"]["sessionUpdate"] == "user_message_chunk"
    ] == ["hello", "are you there?"]
    notes = [n["text"] for n in editor.goose.of_kind("note")]
    assert any("restarted" in n for n in notes)


async def test_malformed_lines_and_a_10_mb_line_do_not_break_the_connection(editor: Editor) -> None:
    big = 10 * 1024 * 1024
    await editor.start(
        {
            "turns": [
                [
                    {"text": "before "},
                    {"raw": "goose is starting... (log text on stdout)"},
                    {"rawHex": "7b226a736f6e727063223a22ff227d"},
                    {"raw": "[1, 2, 3]"},
                    {"raw": '{"jsonrpc": "2.0", "id": [1], "result": {}}'},
                    {"raw": '{"jsonrpc": "2.0", "id": 987654, "result": {}}'},
                    {"raw": '{"hello": "world"}'},
                    {"bigRaw": 3 * 1024 * 1024},
                    {"bigText": big},
                    {"text": "after"},
                ]
            ]
        }
    )
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id)
    end = await editor.goose.turn_end(message_id, timeout=120)
    assert end["stopReason"] == "end_turn"
    text = editor.goose.text(message_id)
    assert text.startswith("before ") and text.endswith("after")
    assert len(text) == len("before ") + big + len("after")
    log = (editor.tmp / "logs" / "goose-ls.log").read_text()
    assert "skipped a message from the agent (not JSON)" in log
    assert "skipped a message from the agent (invalid UTF-8)" in log


async def test_an_agent_that_exits_at_start_is_reported_and_retried(editor: Editor) -> None:
    await editor.start({"startup": [{"exit": 3, "message": "no provider configured"}]})
    status = await editor.goose.agent_state("error")
    assert status["reason"] in ("failed", "crashed")
    assert "no provider configured" in status["message"]
    error = None
    try:
        await editor.new_session()
    except Exception as exc:  # the request fails clearly instead of hanging
        error = str(exc)
    assert error and "no provider configured" in error
