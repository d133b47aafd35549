"""Images in a chat (issue 31, point 3): an ``@`` mention of an image file sends an ACP
image block, read as any read of the user's prompt is and checked by its bytes; an agent
without ``promptCapabilities.image`` is sent nothing, and the user is told why; images the
agent sends (goose's tool call content, message chunks) are kept beside the transcript by
their digest, linked, journaled as links, and checked by their bytes whatever type the
agent declares.
"""

from __future__ import annotations

import base64
import hashlib
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from goose_ls.scripted.script import prompts
from goose_ls.sessions import path_of
from support.claude import CLAUDE, start_claude
from support.claude import MISSING as CLAUDE_MISSING
from support.fake_anthropic import FakeAnthropic, Reply
from support.harness import Editor, start_editor, stop_editor
from support.images import DRAWING, JPEG, SHOT, b64, image_update, png, tool_image

NO_IMAGES = {"loadSession": True, "promptCapabilities": {"image": False, "embeddedContext": True}}


def _images(editor: Editor, kind: str) -> list[dict[str, Any]]:
    """The image blocks of the ``goose/update``s of ``kind``, as plugins got them."""
    found = []
    for update in editor.goose.of_kind(kind):
        if isinstance(update.get("content"), dict):
            found += [update["content"]] if update["content"].get("type") == "image" else []
        for item in update.get("content") or [] if isinstance(update.get("content"), list) else []:
            if item.get("type") == "content" and item["content"].get("type") == "image":
                found.append(item["content"])
    return found


def _kept(content: dict[str, Any], data: bytes, suffix: str = "png") -> Path:
    """The file a kept image links to: ``data``, named by its digest, the user's alone."""
    assert "data" not in content, "the bytes are on disk, not in the update"
    path = Path(path_of(content["uri"]))
    digest = hashlib.sha256(data).hexdigest()
    assert path.name == f"{digest}.{suffix}" and content["sha256"] == digest
    assert path.read_bytes() == data and content["size"] == len(data)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, "never executable, never shared"
    return path


def _largest_payload(editor: Editor) -> int:
    with sqlite3.connect(editor.tmp / "data" / "journal.sqlite3") as db:
        return int(db.execute("SELECT max(length(payload)) FROM events").fetchone()[0])


async def test_an_image_mentioned_in_a_prompt_goes_as_an_image_block_and_is_kept(
    editor: Editor,
) -> None:
    (editor.workspace / "docs").mkdir()
    (editor.workspace / "docs" / "shot.png").write_bytes(SHOT)
    await editor.start({"turns": [[{"text": "A red dot."}]]})
    sid = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(sid, "What is in @docs/shot.png?"))

    (blocks,) = prompts(editor.record)
    assert blocks == [
        {"type": "text", "text": "What is in @docs/shot.png?"},
        {"type": "image", "mimeType": "image/png", "data": b64(SHOT)},
    ], "the bytes, base64, not a path nor a text resource"
    (sent,) = _images(editor, "user_message_chunk")
    assert sent["source"] == (editor.workspace / "docs" / "shot.png").as_uri()
    kept = _kept(sent, SHOT)
    text = await editor.transcript_text("A red dot.")
    link = f"../outputs/{sid}/{kept.name}"
    assert f"> 📎 `docs/shot.png` image\n![PNG image, {len(SHOT)} bytes]({link})\n" in text


async def test_goose_s_image_results_are_kept_beside_the_transcript_linked_and_shown_again(
    tmp_path: Path,
) -> None:
    """A tool's image in goose's shape (re-sent with each update) and an image in the
    reply: each kept once, linked from the transcript and in ``goose/update``, journaled
    as a link; a goose-ls started again shows them from the journal."""
    script = {
        "turns": [
            [
                {"toolCall": {"toolCallId": "c1", "title": "screenshot"}},
                {**tool_image("c1", b64(SHOT)), "repeat": 3},
                image_update(b64(DRAWING)),
                {"text": "Done."},
            ]
        ],
        "byPrompt": {"again": [{"text": "Again."}]},
    }
    first = await start_editor(tmp_path)
    await first.start(script)
    sid = await first.new_session()
    await first.goose.turn_end(await first.prompt(sid, "Take a screenshot"))
    results = _images(first, "tool_call_update")
    assert len(results) == 3 and all(r == results[0] for r in results)
    shot = _kept(results[0], SHOT)
    (drawing,) = _images(first, "agent_message_chunk")
    drawn = _kept(drawing, DRAWING)
    text = await first.transcript_text("Done.")
    assert f"![PNG image, {len(SHOT)} bytes](../outputs/{sid}/{shot.name})" in text
    assert f"\n![PNG image, {len(DRAWING)} bytes](../outputs/{sid}/{drawn.name})\n" in text
    assert text.index("screenshot") < text.index(shot.name) < text.index(drawn.name)
    assert _largest_payload(first) < 1000, "the journal holds links, not the bytes"
    await stop_editor(first)
    transcript = tmp_path / "data" / "transcripts" / f"{sid}.md"
    transcript.unlink()  # drawn again from the journal alone

    again = await start_editor(tmp_path)
    try:
        await again.start(script)
        await again.goose.request("goose/loadSession", {"sessionId": sid})
        await again.goose.request("goose/replay", {"sessionId": sid, "afterIndex": 0})
        await again.goose.wait_for(lambda: _images(again, "agent_message_chunk"))
        assert _images(again, "tool_call_update")[0] == results[0]
        assert _images(again, "agent_message_chunk") == [drawing]
        await again.goose.turn_end(await again.prompt(sid, "again"))
        text = await again.transcript_text("Again.", path=transcript)
        assert text.count(drawn.name) == 1 and text.count(shot.name) == 1, "drawn again, once"
        assert text.index(shot.name) < text.index(drawn.name) < text.index("Again.")
    finally:
        await stop_editor(again)


async def test_an_agent_that_takes_no_images_is_sent_nothing_and_the_user_is_told(
    editor: Editor,
) -> None:
    """A plugin gets an error naming why; the plugin-free chat says it in the transcript
    and keeps the draft; the agent gets no prompt at all (no path, no bytes as text)."""
    (editor.workspace / "shot.png").write_bytes(SHOT)
    await editor.start({"capabilities": NO_IMAGES, "turns": [[{"text": "ok"}]]})
    sid = await editor.new_session()
    with pytest.raises(JsonRpcException, match="does not take images") as refused:
        await editor.prompt(sid, "Look at @shot.png")
    assert "goose/prompt: goose does not take images" in str(refused.value)
    plugin = {"type": "image", "uri": (editor.workspace / "shot.png").as_uri()}
    with pytest.raises(JsonRpcException, match="does not take images"):
        await editor.prompt(sid, "And this", context=[plugin])
    assert editor.received("session/prompt") == []

    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openChat", arguments=[])
    )
    shown = await editor.goose.wait_for(lambda: editor.client.shown_documents)
    transcript = Path(shown[-1].uri.removeprefix("file://"))
    draft = "What is wrong in @shot.png?"
    transcript.write_text(transcript.read_text(encoding="utf-8") + draft, encoding="utf-8")
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.send", arguments=[])
    )
    said = await editor.shown("does not take images")
    assert said.startswith("goose: goose.send: goose does not take images")
    note = "> **Note:** Not sent: goose does not take images"
    text = await editor.transcript_text(note, path=transcript)
    assert text.rstrip("\n").endswith(draft), "the draft stays"
    assert editor.received("session/prompt") == []


async def test_an_image_the_prompt_may_not_read_is_refused_saying_why(editor: Editor) -> None:
    """Each is refused before anything is sent: a .png that is no PNG, one whose bytes
    are another kind's, one over images.maxBytes, a secret, goose-ls's own files, and a
    link that leads out of the workspace."""
    ws = editor.workspace
    (ws / "notes.png").write_text("not an image")
    (ws / "photo.png").write_bytes(JPEG)
    (ws / "big.png").write_bytes(SHOT + bytes(2000))
    (ws / ".env.png").write_bytes(SHOT)
    (ws / ".goose-ls").mkdir()
    (ws / ".goose-ls" / "x.png").write_bytes(SHOT)
    outside = editor.tmp / "outside.png"
    outside.write_bytes(SHOT)
    (ws / "link.png").symlink_to(outside)
    await editor.start({"turns": [[{"text": "ok"}]]}, settings={"images": {"maxBytes": 1000}})
    sid = await editor.new_session()
    expected = {
        "notes.png": "notes.png is not a PNG image: its bytes are not those of a PNG, JPEG, "
        "GIF or WebP image",
        "photo.png": "photo.png is not a PNG image: its bytes are a JPEG's. Rename it to .jpg",
        "big.png": f"the image big.png ({len(SHOT) + 2000:,} bytes) is over images.maxBytes, "
        "1,000 bytes. Make "
        "it smaller, or raise images.maxBytes",
        ".env.png": "looks like a secret (.env.*)",
        ".goose-ls/x.png": "one of goose-ls's own files",
        "link.png": "is outside the workspace",
    }
    for name, why in expected.items():
        with pytest.raises(JsonRpcException) as refused:
            await editor.prompt(sid, f"Look at @{name}")
        assert why in str(refused.value), (name, str(refused.value))
    assert editor.received("session/prompt") == []
    assert not (editor.tmp / "data" / "outputs").exists(), "nothing kept"


async def test_an_image_pasted_in_a_plugin_goes_as_its_bytes_checked_as_a_file_s(
    editor: Editor,
) -> None:
    """A plugin sends a pasted image as a ``data:`` URI: no file to read, so it is judged
    by its bytes and the cap alone; the journal keeps a link to the copy, never the URI."""
    await editor.start(
        {"turns": [[{"text": "A red dot."}]]}, settings={"images": {"maxBytes": 1000}}
    )
    sid = await editor.new_session()
    refused = {
        f"data:image/jpeg;base64,{b64(SHOT)}": "it says it is image/jpeg but its bytes are a PNG's",
        f"data:image/png,{b64(SHOT)}": "its data: URI is not data:<type>;base64,<data>",
        "data:image/png;base64,@@@@": "its data is not base64",
        f"data:image/png;base64,{b64(b'GIF89a' + bytes(20))}": "it says it is image/png",
        f"data:image/png;base64,{b64(b'plain text')}": "its bytes are not a PNG, JPEG",
        f"data:image/png;base64,{b64(SHOT + bytes(2000))}": "it is over 1,000 bytes "
        "(images.maxBytes). Make it smaller, or raise images.maxBytes",
    }
    for uri, why in refused.items():
        with pytest.raises(JsonRpcException) as caught:
            await editor.prompt(sid, "What is this?", context=[{"type": "image", "uri": uri}])
        assert f"the pasted image cannot be attached: {why}" in str(caught.value), why
    assert editor.received("session/prompt") == []

    pasted = f"data:image/png;base64,{b64(SHOT)}"
    context = [{"type": "image", "uri": pasted}]
    await editor.goose.turn_end(await editor.prompt(sid, "What is this?", context=context))
    (blocks,) = prompts(editor.record)
    assert blocks[1] == {"type": "image", "mimeType": "image/png", "data": b64(SHOT)}
    (sent,) = _images(editor, "user_message_chunk")
    assert "source" not in sent, "no file it came from, and not the data again"
    kept = _kept(sent, SHOT)
    text = await editor.transcript_text("A red dot.")
    assert f"![PNG image, {len(SHOT)} bytes](../outputs/{sid}/{kept.name})" in text
    assert "base64" not in text
    assert _largest_payload(editor) < 1000, "the journal holds the link, not the bytes"


async def test_a_hostile_agent_s_images_are_judged_by_their_bytes_and_capped(
    editor: Editor,
) -> None:
    """Declared PNG, bytes text: refused. Declared PNG, bytes a JPEG's: kept as the JPEG
    it is. Over images.maxBytes: refused without being decoded, and nothing of it in the
    journal. Not base64, or no data at all: refused. The turn goes on."""
    huge = b64(png(400, 400) + bytes(200_000))
    script = {
        "turns": [
            [
                image_update(b64(b"#!/bin/sh\nrm -rf ~\n")),
                image_update(b64(JPEG)),
                image_update(huge),
                image_update("%%% not base64 %%%"),
                {"toolCall": {"toolCallId": "t1", "title": "render"}},
                tool_image("t1", huge),
                {"text": "still here"},
            ]
        ]
    }
    await editor.start(script, settings={"images": {"maxBytes": 100_000}})
    sid = await editor.new_session()
    end = await editor.goose.turn_end(await editor.prompt(sid, "Draw"))
    assert end["stopReason"] == "end_turn" and editor.goose.text(end["messageId"]) == "still here"
    script_, jpeg, big, garbled = _images(editor, "agent_message_chunk")
    assert script_ == {
        "type": "image",
        "refused": "its bytes are not a PNG, JPEG, GIF or WebP image, whatever its type says",
    }
    assert jpeg["mimeType"] == "image/jpeg"
    _kept(jpeg, JPEG, "jpg")
    assert big == {"type": "image", "refused": "it is over 100,000 bytes (images.maxBytes)"}
    assert garbled == {"type": "image", "refused": "its data is not base64"}
    (result,) = _images(editor, "tool_call_update")
    assert result == big
    kept = list((editor.tmp / "data" / "outputs" / sid).iterdir())
    assert [p.suffix for p in kept] == [".jpg"], "only the real image is on disk"
    assert _largest_payload(editor) < 1000, "the journal holds nothing of the images"
    text = await editor.transcript_text("still here")
    assert "> ⚠ Image not shown: its bytes are not a PNG, JPEG, GIF or WebP image" in text
    assert "> ⚠ Image not shown: it is over 100,000 bytes (images.maxBytes)." in text
    assert f"![JPEG image, {len(JPEG)} bytes](../outputs/{sid}/{kept[0].name})" in text


@pytest.mark.skipif(not CLAUDE.exists(), reason=CLAUDE_MISSING)
async def test_claude_s_model_receives_the_mentioned_image_as_an_image_block_exactly(
    editor: Editor,
) -> None:
    """The real claude-agent-acp, offline: the image a prompt mentions reaches the model's
    API as an Anthropic image block holding exactly the file's bytes."""
    shot = png(16, 16, red=200)
    (editor.workspace / "shot.png").write_bytes(shot)
    with FakeAnthropic([Reply(("A red square.",))]) as api:
        await start_claude(editor, api)
        sid = await editor.new_session()
        end = await editor.goose.turn_end(await editor.prompt(sid, "What is in @shot.png?"))
        assert end["stopReason"] == "end_turn", end
        assert editor.goose.text(end["messageId"]) == "A red square."
        (turn,) = api.turns()
    blocks = [
        block
        for message in turn.body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
    ]
    images = [block for block in blocks if block.get("type") == "image"]
    assert images == [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": b64(shot)},
        }
    ], blocks
    assert base64.b64decode(images[0]["source"]["data"]) == shot
    assert any("What is in @shot.png?" in str(block.get("text")) for block in blocks)
