"""Finding the agent binary and checking its version, through the real server."""

from __future__ import annotations

from pathlib import Path

from goose_ls.scripted import write_script
from support.fake_goose import write_fake_goose
from support.harness import Editor


def _fake_goose(editor: Editor, version: str) -> Path:
    """A fake goose outside PATH, for the binaryPath setting."""
    script = write_script(editor.tmp / "script.json", {"turns": [[{"text": "hi from goose"}]]})
    return write_fake_goose(editor.tmp / f"bin-{version.strip()}", version, script)


async def test_a_missing_binary_is_reported_with_a_fix(editor: Editor) -> None:
    await editor.start(settings={"agent": {"binaryPath": str(editor.tmp / "nowhere" / "goose")}})
    status = await editor.goose.agent_state("error")
    assert status["reason"] == "missing"
    assert "was not found" in status["message"] and "binaryPath" in status["fix"]
    assert "binaryPath" in await editor.shown("was not found")
    try:
        await editor.new_session()
    except Exception as exc:
        assert "was not found" in str(exc)
    else:
        raise AssertionError("a session cannot start without an agent")


async def test_an_outdated_goose_is_reported_differently(editor: Editor) -> None:
    binary = _fake_goose(editor, " 1.10.2")
    await editor.start(settings={"agent": {"binaryPath": str(binary)}})
    status = await editor.goose.agent_state("error")
    assert status["reason"] == "outdated"
    assert "1.10.2" in status["message"] and "1.16.0" in status["message"]
    assert "goose update" in status["fix"]
    assert "goose update" in await editor.shown("older than the minimum")


async def test_goose_is_found_on_path_and_its_real_version_output_accepted(editor: Editor) -> None:
    # editor.tmp/bin is at the front of the server's PATH; goose prints " 1.43.0" there.
    script = write_script(editor.tmp / "script.json", {"turns": [[{"text": "hi from goose"}]]})
    binary = write_fake_goose(editor.tmp / "bin", " 1.43.0", script)
    await editor.start()
    running = await editor.goose.agent_state("running")
    assert running["version"] == "1.43.0" and running["binary"] == str(binary)
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id)
    await editor.goose.turn_end(message_id)
    assert editor.goose.text(message_id) == "hi from goose"


V2_ONLY = {"code": -32022, "message": "Unsupported protocol version"}


async def test_an_agent_of_a_later_acp_version_is_named_not_a_broken_chat(editor: Editor) -> None:
    """goose-ls asks for ACP 1; an agent that answers 2, or refuses 1 (-32022, as
    claude-agent-acp with CLAUDE_AGENT_ACP_PROTOCOL=v2 does), is unusable, and says why."""
    await editor.start({"protocolVersion": 2, "turns": [[{"text": "never shown"}]]})
    try:
        await editor.new_session()
    except Exception as exc:
        assert "answered ACP version 2; goose-ls speaks ACP version 1" in str(exc)
    else:
        raise AssertionError("no chat with an agent of another ACP version")
    status = await editor.goose.agent_state("error")
    assert status["reason"] == "unusable" and "CLAUDE_AGENT_ACP_PROTOCOL" in status["fix"]
    (initialize, *_) = editor.received("initialize")
    assert initialize["params"]["protocolVersion"] == 1


async def test_an_agent_that_refuses_acp_1_is_named(editor: Editor) -> None:
    await editor.start({"initializeError": {**V2_ONLY, "data": {"requested": 1, "supported": [2]}}})
    try:
        await editor.new_session()
    except Exception as exc:
        assert "refused ACP version 1 (it speaks a later one only)" in str(exc)
    else:
        raise AssertionError("no chat with an agent of another ACP version")
    status = await editor.goose.agent_state("error")
    assert status["reason"] == "unusable"
