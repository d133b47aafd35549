"""What an agent tells the user besides its reply reaches the chat as notes: goose's own
status messages ("compacting the conversation"...), which goose sends only to a client
that asks in ``initialize`` (goose-ls asks), and ACP's unstable ``notice`` update.
"""

from __future__ import annotations

from support.harness import Editor


async def test_goose_status_messages_are_asked_for_and_shown_as_notes(editor: Editor) -> None:
    compacting = {"type": "progress", "message": "Compacting the conversation..."}
    script = {"turns": [[{"gooseStatus": compacting}, {"text": "Here is the answer."}]]}
    await editor.start(script)
    session_id = await editor.new_session()
    (initialize,) = editor.received("initialize")
    meta = initialize["params"]["clientCapabilities"]["_meta"]
    assert meta == {"goose": {"customNotifications": True}}
    message_id = await editor.prompt(session_id, "go on")
    await editor.goose.turn_end(message_id)
    kinds = [u["update"]["sessionUpdate"] for u in editor.goose.updates if u["messageId"]]
    notes = editor.goose.of_kind("note", session_id)
    assert notes == [
        {
            "sessionUpdate": "note",
            "severity": "info",
            "text": "goose: Compacting the conversation...",
        }
    ]
    assert kinds.index("note") < kinds.index("agent_message_chunk"), "in its place in the turn"
    transcript = editor.tmp / "data" / "transcripts" / f"{session_id}.md"
    await editor.goose.wait_for(
        lambda: transcript.exists() and "Compacting the conversation" in transcript.read_text(),
        what="the note in the transcript",
    )


async def test_an_agents_notice_is_a_note_in_its_severity(editor: Editor) -> None:
    """ACP's unstable ``notice`` update, which the SDK has no model for."""
    notice = {
        "sessionUpdate": "notice",
        "severity": "warning",
        "title": "Rate limited",
        "description": "retrying in 20 s",
    }
    untitled = {"sessionUpdate": "notice", "severity": "info"}
    script = {"turns": [[{"update": notice}, {"update": untitled}, {"text": "done"}]]}
    await editor.start(script)
    session_id = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(session_id, "go"))
    assert editor.goose.of_kind("note", session_id) == [
        {"sessionUpdate": "note", "severity": "warning", "text": "Rate limited: retrying in 20 s"}
    ], "a notice without a title says nothing"
