"""goose's own status messages ("compacting the conversation"...) reach the chat as notes.

goose sends them only to a client that asks in ``initialize``; goose-ls asks, and each
shows in the transcript and as a ``note`` update, in its place in the turn.
"""

from __future__ import annotations

from goose_ls.testing.harness import Editor


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
