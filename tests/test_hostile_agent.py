"""An agent process that breaks the connection, hides its death, crash-loops or floods.

Issue 13, points 20 to 23: a reader that dies is a dead agent; the agent's own exit is
seen even while a child of it holds its pipes; a crash loop backs off and gives up; and
updates for sessions nobody opened are kept within a bound.
"""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path

import pytest

from goose_ls import events
from goose_ls.sessions import registry as early
from goose_ls.sessions.journal.library import SessionLibrary
from support.harness import Editor, gone
from support.journal import journaled

FAST_RESTARTS = {"agent": {"restartDelay": 0.05, "restartLimit": 3, "restartWindow": 60}}
UNSANDBOXED = {"agent": {**FAST_RESTARTS["agent"], "sandbox": "off"}}
"""For what goose-ls must see of the agent's process itself: in its sandbox the agent's
pids are its own namespace's, and bubblewrap keeps the pipes open (there, a wedged agent
is flagged by agent.stallTimeout, and its processes die with the namespace:
test_agent_sandbox.py)."""


async def test_a_1000_deep_json_line_is_skipped_and_the_turn_goes_on(editor: Editor) -> None:
    deep = "[" * 1000 + "]" * 1000
    await editor.start({"turns": [[{"text": "before "}, {"raw": deep}, {"text": "after"}]]})
    sid = await editor.new_session()
    mid = await editor.prompt(sid)
    end = await editor.goose.turn_end(mid, timeout=10)
    assert end.get("stopReason") == "end_turn", end
    assert editor.goose.text(mid) == "before after"
    log = (editor.tmp / "logs" / "goose-ls.log").read_text()
    assert "skipped a message from the agent (nested too deeply)" in log
    status = await editor.goose.request("goose/status", {})
    assert status["agent"]["state"] == "running"


async def test_an_agent_that_closes_its_stdout_but_lives_is_killed_and_restarted(
    editor: Editor,
) -> None:
    await editor.start(
        {
            "turns": [[{"text": "bye"}, {"closeStdout": True}]],
            "byPrompt": {"again?": [{"text": "back"}]},
        },
        settings=UNSANDBOXED,
    )
    sid = await editor.new_session()
    first_pid = (await editor.goose.request("goose/status", {}))["agent"]["pid"]
    mid = await editor.prompt(sid)
    end = await editor.goose.turn_end(mid, timeout=10)
    assert "closed its output" in end["error"], end
    status = await editor.goose.agent_state("error", timeout=10)
    assert status["reason"] == "crashed" and "closed its output" in status["message"]
    assert await gone(first_pid), "the wedged agent is killed, not left running"
    # Restarted with the usual backoff; the chat goes on in the new agent.
    await editor.goose.wait_for(
        lambda: [s for s in editor.goose.statuses[-1:] if s["state"] == "running"],
        timeout=10,
        what="the agent running again",
    )
    again = await editor.prompt(sid, "again?")
    end = await editor.goose.turn_end(again, timeout=10)
    assert end.get("stopReason") == "end_turn", end
    assert editor.goose.text(again) == "back"


async def test_a_crash_is_seen_while_a_child_of_the_agent_holds_its_pipes(
    editor: Editor,
) -> None:
    await editor.start(
        {"turns": [[{"orphanCrash": {"code": 7, "childSleeps": 60}}]]}, settings=UNSANDBOXED
    )
    sid = await editor.new_session()
    mid = await editor.prompt(sid)
    end = await editor.goose.turn_end(mid, timeout=10)
    assert "exited with code 7" in end["error"], end
    status = await editor.goose.agent_state("error", timeout=10)
    assert status["reason"] == "crashed"
    match = re.search(r"\[child (\d+)\]", editor.goose.text(mid))
    assert match, editor.goose.text(mid)
    assert await gone(int(match.group(1))), "the dead agent's group is killed, child included"


async def test_a_crash_loop_backs_off_gives_up_once_and_restart_tries_again(
    editor: Editor,
) -> None:
    await editor.start({"startup": [{"exitLater": 1.0}]}, settings=FAST_RESTARTS)
    gave_up = await editor.goose.wait_for(
        lambda: [s for s in editor.goose.statuses if s.get("reason") == "gave_up"],
        timeout=30,
        what="goose-ls giving up on the crash loop",
    )
    assert "3" in gave_up[0]["message"] and "goose.restart" in gave_up[0]["fix"]
    await asyncio.sleep(1.5)  # longer than any backoff here: nothing starts by itself
    states = [s["state"] for s in editor.goose.statuses]
    # Three tries; under load one may die before its handshake ends, so count starts.
    assert states.count("starting") == 3, states
    assert states[-1] == "error" and editor.goose.statuses[-1]["reason"] == "gave_up"
    popups = [m.message for m in editor.client.messages if "unexpectedly" in m.message]
    assert len(popups) == 1, "one popup for the first crash, not one per crash"
    assert len([m for m in editor.client.messages if "gave up" in m.message]) == 1
    # Requests fail at once until the user restarts the agent.
    with pytest.raises(Exception, match="gave up"):
        await editor.new_session()
    assert [s["state"] for s in editor.goose.statuses] == states
    editor.script({})  # the agent is fixed
    result = await editor.goose.request("goose/restart", {})
    assert result["agent"]["state"] == "running"
    await editor.new_session()


async def test_updates_for_unknown_sessions_are_bounded_and_dropped_with_one_log_line(
    editor: Editor,
) -> None:
    count = 1000  # more ids than are kept
    await editor.start({"turns": [[{"unknownSessions": count}, {"text": "done"}]]})
    sid = await editor.new_session()
    mid = await editor.prompt(sid)
    end = await editor.goose.turn_end(mid, timeout=30)
    assert end.get("stopReason") == "end_turn"
    log = (editor.tmp / "logs" / "goose-ls.log").read_text()
    assert log.count("dropping updates for sessions goose-ls does not know") == 1


def test_the_early_updates_of_a_million_unknown_sessions_stay_bounded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    registry = early.Registry(SessionLibrary(tmp_path, lambda *_: None), print)
    event = events.Plan(entries=[])
    with caplog.at_level(logging.WARNING, logger="goose_ls.sessions.registry"):
        for number in range(1_000_000):
            registry.session_event(f"unknown-{number}", event)
    kept = registry._early
    assert len(kept) <= early.EARLY_SESSIONS_LIMIT < 1000
    assert sum(len(v) for v in kept.values()) <= early.EARLY_EVENTS_TOTAL
    assert len([r for r in caplog.records if "dropping updates" in r.getMessage()]) == 1


async def test_a_message_sent_once_goose_ls_gave_up_on_the_agent_is_kept(
    editor: Editor,
) -> None:
    """The agent cannot be reached: what the user typed stays in the chat and the journal,
    above the note that says why the turn failed (it was lost before)."""
    await editor.start({"turns": [[{"crash": 3}]]}, settings=FAST_RESTARTS)
    sid = await editor.new_session()
    editor.script({"startup": [{"exit": 3}]})  # every restart dies at once
    await editor.goose.turn_end(await editor.prompt(sid, "the crash"))
    await editor.goose.wait_for(
        lambda: [s for s in editor.goose.statuses if s.get("reason") == "gave_up"],
        timeout=30,
        what="goose-ls giving up on the agent",
    )
    draft = await editor.prompt(sid, "Draft C: keep me")
    end = await editor.goose.turn_end(draft)
    assert "gave up" in end["error"], end
    assert editor.goose.text(draft, "user_message_chunk") == "Draft C: keep me"
    text = await editor.transcript_text("The turn failed")
    assert text.index("Draft C: keep me") < text.rindex("The turn failed"), text
    rows = journaled(editor.tmp / "data" / "journal.sqlite3", sid)
    kept = [r for r in rows if r.message_id == draft and r.kind == "user_message_chunk"]
    assert len(kept) == 1 and "Draft C: keep me" in kept[0].payload, rows
