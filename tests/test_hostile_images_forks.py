"""A hostile agent's chat ids against the files a chat keeps (its transcript, its
images), and a hostile plugin's context items against the files goose-ls reads: found by
an attack on pasted images and forks' images (issue 31), through a real goose-ls."""

from __future__ import annotations

import asyncio
import hashlib
import os

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
    # The turn's end reaches the file after goose/turnEnd the editor: its last save.
    kept = await editor.transcript_text("A drawing.\n\n\n## You", path=transcript)
    image = editor.tmp / "data" / "outputs" / "p_q" / f"{hashlib.sha256(DRAWING).hexdigest()}.png"
    assert image.read_bytes() == DRAWING

    with pytest.raises(
        JsonRpcException, match="whose files would be those of a chat goose-ls has"
    ) as fork:
        await editor.goose.request(
            "goose/forkSession", {"sessionId": parent, "messageId": message_id}
        )
    assert "answered session/fork" in str(fork.value) and "(p/q)" in str(fork.value)
    with pytest.raises(JsonRpcException, match="answered session/new with an id whose files"):
        await editor.new_session()
    assert [
        s["sessionId"] for s in (await editor.goose.request("goose/status", {}))["sessions"]
    ] == [parent], "no other chat was made"
    assert transcript.read_text(encoding="utf-8") == kept, "the chat's transcript is its own"
    assert image.read_bytes() == DRAWING


async def test_a_selection_goose_ls_reads_is_of_a_file_and_never_blocks_it(editor: Editor) -> None:
    """A plugin's selection without its text is read from the editor's buffer, else the
    disk. A URI that is not a file's (a pasted image's ``data:``, a notebook cell's) was
    read as the path it holds: ``data:/etc/passwd`` sent the password file to the agent as
    the user's selection; a FIFO held goose-ls (and every chat) until someone wrote to it.
    Each is refused, saying why, and goose-ls goes on; a file's lines still go."""
    outside = editor.tmp / "private.txt"
    outside.write_text("top secret line\n")
    fifo = editor.workspace / "pipe.py"
    os.mkfifo(fifo)
    (editor.workspace / "app.py").write_text("def main():\n    return 42\n")
    huge = editor.workspace / "huge.log"
    with huge.open("wb") as sparse:
        sparse.truncate(10_000_001)  # read whole, on the loop: capped
    await editor.start({"turns": [[{"text": "ok"}]]})
    sid = await editor.new_session()
    for uri, why in {
        f"data:{outside}": "not open in the editor, and not a file",
        f"vscode-notebook-cell:{outside}#W0": "not open in the editor, and not a file",
        f"data:image/png;base64,{b64(DRAWING)}": "not open in the editor, and not a file",
        fifo.as_uri(): "is not a regular file",
        huge.as_uri(): "over 10,000,000 bytes, and not open in the editor",
    }.items():
        item = {"type": "selection", "uri": uri, "startLine": 1, "endLine": 1}
        with pytest.raises(JsonRpcException) as refused:
            await asyncio.wait_for(editor.prompt(sid, "What?", context=[item]), 10)
        assert "cannot read" in str(refused.value) and why in str(refused.value), uri
    assert prompts(editor.record) == [], "nothing was sent"

    item = {
        "type": "selection",
        "uri": (editor.workspace / "app.py").as_uri(),
        "startLine": 2,
        "endLine": 2,
    }
    await editor.goose.turn_end(await editor.prompt(sid, "What?", context=[item]))
    ((_, sent),) = prompts(editor.record)
    assert "    return 42" in str(sent) and "top secret" not in str(sent)
