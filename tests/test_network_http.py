"""goose serve reached over ACP's streamable HTTP (``agent.url`` ``http://``): a turn with
the agent's own requests, the token, a server restarted mid-turn.

The server is the scripted agent served as goose serve serves it over HTTP
(``goose_ls.scripted.serve_http``), in a process of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.harness import Editor
from test_network import Started, refused
from test_network import served as served  # the fixture

HTTP: dict[str, Any] = {"serveOver": "http"}


async def test_a_turn_over_http_with_the_agents_requests(served: Started, tmp_path: Path) -> None:
    """Streamed chunks come on the initialize stream; the agent's fs/* requests come there
    too and their answers go back as POSTs (202)."""
    notes = tmp_path / "workspace" / "notes.txt"
    steps = [{"text": "reading "}, {"readFile": {"path": str(notes)}}, {"text": " done"}]
    editor, server = await served({**HTTP, "turns": [steps]})
    assert server.url.startswith("http://127.0.0.1:")
    notes.write_text("in the workspace\n")
    status = await editor.goose.agent_state("running")
    assert status["url"] == server.url
    session_id = await editor.new_session()
    end = await editor.goose.turn_end(await editor.prompt(session_id))
    assert end["stopReason"] == "end_turn"
    said = editor.goose.text(end["messageId"])
    assert said.startswith("reading ") and said.endswith(" done")
    assert '[read "in the workspace\\n"]' in said
    assert [m["method"] for m in editor.received("initialize")] == ["initialize"]


async def test_a_wrong_token_over_http_is_an_authentication_error(served: Started) -> None:
    editor, server = await served(HTTP, token="not-the-token")
    error, data = await refused(editor)
    assert "authentication failed" in error and server.url in error
    assert data["reason"] == "unauthorized"
    assert editor.agent_messages() == [], "nothing reached the agent"


async def test_a_server_restarted_mid_turn_over_http_reconnects(served: Started) -> None:
    editor, server = await served(
        {**HTTP, "byPrompt": {"long": [{"text": "working"}, {"hang": True}]}}
    )
    session_id = await editor.new_session()
    long_turn = await editor.prompt(session_id, "long")
    await editor.goose.wait_for(lambda: "working" in editor.goose.text(long_turn))
    await server.kill()
    end = await editor.goose.turn_end(long_turn)
    assert server.url in end["error"] and "connection" in end["error"]
    status = await editor.goose.agent_state("error")
    assert status["reason"] == "disconnected"
    await server.start()  # the same port, as a restarted goose serve
    again = await editor.goose.turn_end(await editor.prompt(session_id, "again"))
    assert again["stopReason"] == "end_turn", again
    assert "You said: again" in editor.goose.text(again["messageId"])
    assert len(editor.received("initialize")) == 2


async def test_plain_http_to_another_machine_is_refused(editor: Editor) -> None:
    await editor.start(settings={"agent": {"url": "http://192.0.2.1:3284/acp"}})
    error, data = await refused(editor)
    assert data["reason"] == "insecure" and "192.0.2.1 over http://" in error
