"""goose-ls with a second, real agent: codex-acp, offline, against a fake model API.

The scripted agent behaves as goose does; codex-acp is another program with its own ideas
(its own modes as a config option, its own usage updates, its own cancel). It is the
pinned npm package that scripts/fetch-agents.sh puts in ~/.cache/goose-ls/agents, run by
the ``codex`` preset, with a CODEX_HOME of the test's own whose model provider is a
:class:`~support.fake_model.FakeModel` on 127.0.0.1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.codex import CODEX, MISSING, start_codex
from support.fake_model import MODEL, TOTAL_TOKENS, Call, FakeModel, Reply
from support.harness import Editor
from support.real_agent import answers

pytestmark = pytest.mark.skipif(not CODEX.exists(), reason=MISSING)

HELLO = ("Hello from ", "the fake ", "model.")


def mode_option(summary: dict[str, Any]) -> dict[str, Any]:
    options: list[dict[str, Any]] = summary["configOptions"]
    (option,) = [o for o in options if o.get("category") == "mode"]
    return option


async def test_a_turn_streams_the_model_s_text(editor: Editor) -> None:
    with FakeModel([Reply(HELLO)]) as model:
        await start_codex(editor, model)
        session = await editor.goose.request("goose/newSession", {})
        mid = await editor.prompt(session["sessionId"], "Say hello")
        end = await editor.goose.turn_end(mid)

        assert end["stopReason"] == "end_turn"
        assert editor.goose.text(mid) == "Hello from the fake model."
        (summary,) = (await editor.goose.request("goose/status", {}))["sessions"]
        assert summary["usage"]["used"] == TOTAL_TOKENS, "codex's usage_update, from the model's"
        transcript = Path(summary["transcript"].removeprefix("file://"))
        await editor.goose.wait_for(
            lambda: "Hello from the fake model." in transcript.read_text(encoding="utf-8"),
            what="the answer in the transcript",
        )
        (asked,) = model.turns()
        assert asked.body["model"] == MODEL and asked.body["stream"] is True
        assert "Say hello" in str(asked.body["input"]), "the prompt reached the model"
        assert asked.headers["authorization"] == "Bearer sk-fake"


async def test_codex_s_mode_option_then_a_cancelled_turn_then_another(editor: Editor) -> None:
    with FakeModel([Reply(HELLO, hangs=True), Reply(("Still here.",))]) as model:
        await start_codex(editor, model)
        session = await editor.goose.request("goose/newSession", {})
        sid = session["sessionId"]
        assert mode_option(session)["currentValue"] == "read-only"
        changed = await editor.goose.request(
            "goose/setConfigOption", {"sessionId": sid, "configId": "mode", "value": "auto"}
        )
        assert mode_option(changed)["currentValue"] == "auto"

        mid = await editor.prompt(sid, "Take your time")
        await editor.goose.wait_for(
            lambda: editor.goose.text(mid) == "Hello from the fake model.",
            what="the streamed text, the model still answering",
        )
        await editor.goose.request("goose/cancel", {"sessionId": sid})
        assert (await editor.goose.turn_end(mid))["stopReason"] == "cancelled"

        again = await editor.prompt(sid, "Are you there?")
        assert (await editor.goose.turn_end(again))["stopReason"] == "end_turn"
        assert editor.goose.text(again) == "Still here."
        assert len(model.turns()) == 2


async def test_a_new_codex_chat_starts_read_only_and_asks_before_it_writes(
    editor: Editor,
) -> None:
    """In a project the user trusts, codex starts in its ``auto`` preset (it writes the
    workspace and runs commands in its sandbox without asking); goose-ls starts each new
    chat in ``read-only``, where an edit waits for the user's answer."""
    made = editor.workspace / "made.txt"
    patch = "*** Begin Patch\n*** Add File: made.txt\n+x\n*** End Patch\n"
    with FakeModel([Reply(("Writing.",), call=Call("apply_patch", patch))]) as model:
        await start_codex(editor, model, trusted=True)
        session = await editor.goose.request("goose/newSession", {})
        sid = session["sessionId"]

        assert mode_option(session)["currentValue"] == "read-only"
        (sent,) = editor.received("session/set_config_option")
        assert sent["params"] == {"sessionId": sid, "configId": "mode", "value": "read-only"}
        (answer,) = answers(editor, "session/set_config_option")
        assert mode_option(answer["result"])["currentValue"] == "read-only", "codex says so"

        message_id = await editor.prompt(sid, "Write made.txt")
        (asked,) = await editor.goose.wait_for(
            lambda: editor.goose.of_kind("permission_request"), what="codex asking to write"
        )
        assert asked["toolCall"]["kind"] == "edit"
        assert "without sandbox" not in json.dumps(asked), "asked first, not after a failure"
        assert not made.exists(), "nothing is written before the user answers"
        reject = next(o for o in asked["options"] if o["kind"] == "reject_once")
        await editor.goose.request(
            "goose/permission", {"requestId": asked["requestId"], "optionId": reject["optionId"]}
        )
        end = await editor.goose.turn_end(message_id)
        assert end["stopReason"] == "cancelled", "codex's No (to give feedback) ends the turn"
        assert not made.exists()


async def test_codex_takes_a_chat_back_in_its_own_mode_and_goose_ls_puts_it_back(
    editor: Editor,
) -> None:
    """codex resumes every chat in its default preset (``auto`` in a trusted project):
    after an agent restart, and when the chat is opened again, goose-ls sets it back to
    the mode that asks."""
    with FakeModel([Reply(("One.",)), Reply(("Two.",))]) as model:
        await start_codex(editor, model, trusted=True)
        sid = (await editor.goose.request("goose/newSession", {}))["sessionId"]
        await editor.goose.turn_end(await editor.prompt(sid, "One"))

        await editor.goose.request("goose/restart", {})
        await editor.goose.turn_end(await editor.prompt(sid, "Two"))
        (resumed,) = answers(editor, "session/resume")
        assert mode_option(resumed["result"])["currentValue"] == "auto", "codex's own"
        (summary,) = (await editor.goose.request("goose/status", {}))["sessions"]
        assert mode_option(summary)["currentValue"] == "read-only"

        await editor.goose.request("goose/closeSession", {"sessionId": sid})
        reopened = await editor.goose.request("goose/loadSession", {"sessionId": sid})
        assert mode_option(reopened)["currentValue"] == "read-only"

        sent = [m["params"]["value"] for m in editor.received("session/set_config_option")]
        assert sent == ["read-only"] * 3, "at the start, after the restart, when reopened"
        said = [
            mode_option(a["result"])["currentValue"]
            for a in answers(editor, "session/set_config_option")
        ]
        assert said == ["read-only"] * 3
