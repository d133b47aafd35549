"""The editor's other workspace folders and ``workspace.extraRoots``: the agent is told of
them (ACP's ``additionalDirectories``, to an agent that takes them) and may work in them,
confined there as in the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from goose_ls.scripted.agent import GOOSE_CAPABILITIES
from support.harness import Editor

TAKES_DIRECTORIES = {
    **GOOSE_CAPABILITIES,
    "sessionCapabilities": {"list": {}, "close": {}, "additionalDirectories": {}},
}


def _folders(editor: Editor) -> tuple[Path, Path]:
    other, extra = editor.tmp / "other", editor.tmp / "extra"
    for folder in (other, extra):
        folder.mkdir()
    (other / "notes.md").write_text("from the other folder\n")
    return other, extra


async def test_other_folders_and_extra_roots_reach_the_agent_and_may_be_read(
    editor: Editor,
) -> None:
    other, extra = _folders(editor)
    script = {
        "capabilities": TAKES_DIRECTORIES,
        "turns": [[{"readFile": {"path": str(other / "notes.md")}}]],
    }
    settings = {"workspace": {"extraRoots": [str(extra)]}}
    await editor.start(script, settings, folders=[other])
    session_id = await editor.new_session()
    expected = [str(extra.resolve()), str(other.resolve())]
    (new,) = editor.received("session/new")
    assert new["params"]["additionalDirectories"] == expected
    message_id = await editor.prompt(session_id, "read my notes")
    await editor.goose.turn_end(message_id)
    assert '[read "from the other folder\\n"]' in editor.goose.text(message_id)
    assert editor.goose.of_kind("permission_request") == [], "inside a root: nothing asked"
    await editor.goose.request("goose/restart", {})
    (load,) = editor.received("session/load")
    assert load["params"]["additionalDirectories"] == expected


@pytest.mark.parametrize("why", ["the agent does not take them", "there are none"])
async def test_no_additional_directories_when_the_agent_cannot_take_them_or_there_are_none(
    editor: Editor, why: str
) -> None:
    other, _ = _folders(editor)
    if why == "there are none":
        await editor.start({"capabilities": TAKES_DIRECTORIES})
    else:
        await editor.start({}, folders=[other])
    await editor.new_session()
    (new,) = editor.received("session/new")
    assert "additionalDirectories" not in new["params"]


async def test_a_folder_too_broad_to_confine_to_is_neither_a_root_nor_told(
    editor: Editor,
) -> None:
    """An editor with ``/`` open as a folder does not open the whole disk to the agent."""
    other, _ = _folders(editor)
    script = {
        "capabilities": TAKES_DIRECTORIES,
        "turns": [[{"readFile": {"path": "/etc/hostname"}}]],
    }
    await editor.start(script, folders=[Path("/"), other])
    session_id = await editor.new_session()
    (new,) = editor.received("session/new")
    assert new["params"]["additionalDirectories"] == [str(other.resolve())]
    message_id = await editor.prompt(session_id, "read the host name")
    await editor.goose.turn_end(message_id)
    assert "[read error" in editor.goose.text(message_id), "outside every root: refused"
