"""A hostile agent's chat ids against the files a chat keeps (its transcript, its
images), and a hostile plugin's context items against the files goose-ls reads: found by
an attack on pasted images and forks' images (issue 31), through a real goose-ls."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from goose_ls.scripted.script import prompts
from support.harness import Editor
from support.images import DRAWING, b64, image_update


async def test_a_fork_whose_id_names_another_chat_s_files_is_refused(editor: Editor) -> None:
    """The agent names its chat ``p/q`` and answers the fork ``p_q``: both are the file
    name ``p_q``, so the fork's history was written into the chat's transcript, the copies
    of its images were the chat's own files, and deleting the chat deleted the fork's
    transcript and every image of it. A chat the agent says it made whose files would be
    another's is refused, as one under another's id is; a new chat too."""
    turn = [image_update(b64(DRAWING)), {"text": "A drawing."}]
    await editor.start({"sessionIds": ["p/q", "p_q", "p?q"], "turns": [turn]})
    parent = await editor.new_session()
    message_id = await editor.prompt(parent, "draw")
    await editor.goose.turn_end(message_id)
    transcript = editor.tmp / "data" / "transcripts" / "p_q.md"
    kept = transcript.read_text(encoding="utf-8")
    image = editor.tmp / "data" / "outputs" / "p_q" / f"{hashlib.sha256(DRAWING).hexdigest()}.png"
    assert image.read_bytes() == DRAWING

    with pytest.raises(JsonRpcException, match="whose files would be those of a chat goose-ls has") as fork:
        await editor.goose.request(
            "goose/forkSession", {"sessionId": parent, "messageId": message_id}
        )
    assert "answered session/fork" in str(fork.value) and "(p/q)" in str(fork.value)
    with pytest.raises(JsonRpcException, match="answered session/new with an id whose files"):
        await editor.new_session()
    assert [s["sessionId"] for s in (await editor.goose.request("goose/status", {}))["sessions"]] == [
        parent
    ], "no other chat was made"
    assert transcript.read_text(encoding="utf-8") == kept, "the chat's transcript is its own"
    assert image.read_bytes() == DRAWING
