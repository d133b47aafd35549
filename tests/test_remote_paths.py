"""``agent.pathMap``: an agent whose files are elsewhere (a container, a remote host) is
told its own paths, and every path it names comes back as the local file, confined as
ever; what lies in no mapped folder is refused."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from goose_ls.scripted import GOOSE_PERMISSION_OPTIONS
from goose_ls.scripted.agent import GOOSE_CAPABILITIES
from support.harness import Editor

AGENT_ROOT = "/workspace"
"""Where the agent sees the editor's workspace (no such folder here)."""
RUN = {"rules": [{"action": "allow", "kind": "execute"}]}


def _script(**more: Any) -> dict[str, Any]:
    return {"agentFolders": [AGENT_ROOT], **more}


def _mapped(editor: Editor, **folders: str) -> dict[str, Any]:
    return {"agent": {"pathMap": {str(editor.workspace): AGENT_ROOT, **folders}}}


def _said(text: str, kind: str) -> list[Any]:
    return [json.loads(m) for m in re.findall(rf"\[{kind} (.*?)\](?=\[|$)", text)]


def _source(editor: Editor) -> Path:
    (editor.workspace / "src").mkdir()
    source = editor.workspace / "src" / "my app.py"
    source.write_text("a = 1\nb = 2\n")
    return source


@pytest.mark.parametrize("embedded", [True, False])
async def test_the_agent_is_told_its_own_paths(editor: Editor, embedded: bool) -> None:
    source = _source(editor)
    lib, extra = editor.tmp / "lib", editor.tmp / "extra"
    for folder in (lib, extra):
        folder.mkdir()
    capabilities = {
        **GOOSE_CAPABILITIES,
        "promptCapabilities": {"embeddedContext": embedded},
        "sessionCapabilities": {"list": {}, "additionalDirectories": {}},
    }
    settings = {
        **_mapped(editor, **{str(lib): "/opt/lib"}),
        "workspace": {"extraRoots": [str(lib), str(extra)]},
    }
    await editor.start(_script(capabilities=capabilities), settings)
    session_id = await editor.new_session()
    (new,) = editor.received("session/new")
    assert new["params"]["cwd"] == AGENT_ROOT
    assert new["params"]["additionalDirectories"] == ["/opt/lib"], "extra is not the agent's"
    context = [
        {"type": "file", "uri": source.as_uri()},
        {
            "type": "selection",
            "uri": source.as_uri(),
            "text": "a = 1\n",
            "startLine": 1,
            "endLine": 1,
        },
    ]
    await editor.goose.turn_end(await editor.prompt(session_id, "look", context=context))
    (prompt,) = editor.received("session/prompt")
    link, selection = prompt["params"]["prompt"][1:]
    assert link["uri"] == "file:///workspace/src/my%20app.py"
    if embedded:
        assert selection["resource"]["uri"] == "file:///workspace/src/my%20app.py#L1-L1"
    else:
        assert selection["text"].startswith("/workspace/src/my app.py:1-1\n")
    listed = await editor.goose.request("goose/listSessions", {})
    (asked,) = editor.received("session/list")
    assert asked["params"]["cwd"] == AGENT_ROOT
    assert {s["cwd"] for s in listed["sessions"]} == {str(editor.workspace)}
    await editor.goose.request("goose/restart", {})
    (load,) = editor.received("session/load")
    assert load["params"]["cwd"] == AGENT_ROOT


async def test_the_agent_works_on_the_local_files_through_its_paths(editor: Editor) -> None:
    source = _source(editor)
    agent_source = f"{AGENT_ROOT}/src/my app.py"
    location = {"path": agent_source, "line": 2}
    steps = [
        {"readFile": {"path": agent_source}},
        {"writeFile": {"path": f"{AGENT_ROOT}/src/new.py", "content": "new\n"}},
        {"terminal": {"command": 'printf %s "$PWD"', "cwd": f"{AGENT_ROOT}/src"}},
        {
            "toolCall": {
                "toolCallId": "t1",
                "title": "read my app",
                "kind": "read",
                "locations": [location],
                "rawInput": {"path": agent_source},
            }
        },
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {
                    "type": "resource_link",
                    "name": "my app.py",
                    "uri": "file:///workspace/src/my%20app.py",
                },
            }
        },
    ]
    await editor.start(_script(turns=[steps]), {**_mapped(editor), "policy": RUN})
    session_id = await editor.new_session()
    message_id = await editor.prompt(session_id, "go")
    await editor.goose.turn_end(message_id)
    text = editor.goose.text(message_id)
    assert _said(text, "read") == ["a = 1\nb = 2\n"]
    assert "[written]" in text and (editor.workspace / "src" / "new.py").read_text() == "new\n"
    (ran,) = _said(text, "terminal")
    assert ran["output"] == str(editor.workspace / "src")
    (call,) = editor.goose.of_kind("tool_call")
    assert call["locations"] == [{"path": str(source), "line": 2}]
    assert call["rawInput"] == {"path": str(source)}
    (link,) = [
        c["content"] for c in editor.goose.of_kind("agent_message_chunk") if "uri" in c["content"]
    ]
    assert link["uri"] == source.as_uri()
    transcript = editor.tmp / "data" / "transcripts" / f"{session_id}.md"
    shown = source.relative_to(editor.workspace).as_posix()  # named from the workspace
    await editor.goose.wait_for(
        lambda: f"`{shown}`" in transcript.read_text(encoding="utf-8"),
        what="the tool call's local path in the transcript",
    )


async def test_an_edit_s_diff_is_against_the_local_file(editor: Editor) -> None:
    source = _source(editor)
    diff = {"type": "diff", "path": f"{AGENT_ROOT}/src/my app.py", "newText": "a = 2\nb = 2\n"}
    ask = {"toolCallId": "e1", "title": "Edit my app", "kind": "edit", "content": [diff]}
    await editor.start(_script(turns=[[{"permission": ask}]]), _mapped(editor))
    message_id = await editor.prompt(await editor.new_session(), "go")
    (asked,) = await editor.goose.wait_for(lambda: editor.goose.of_kind("permission_request"))
    (shown,) = asked["toolCall"]["content"]
    assert shown["path"] == str(source)
    assert shown["oldText"] == "a = 1\nb = 2\n", "the file as the user sees it"
    await editor.goose.request(
        "goose/permission", {"requestId": asked["requestId"], "optionId": "reject_once"}
    )
    await editor.goose.turn_end(message_id)


async def test_agent_paths_the_map_does_not_lead_to_inside_the_workspace_are_refused(
    editor: Editor,
) -> None:
    """``..`` out of the folder, a sibling sharing its prefix (here an extra root, so a
    match of the prefix or of ``..`` after mapping would be served), a symlink leading
    out, a path in no mapped folder, and the workspace's local path itself, which the
    agent cannot see: all refused."""
    source = _source(editor)
    sibling = editor.tmp / "workspace2"
    sibling.mkdir()
    (sibling / "x").write_text("sibling")
    (editor.tmp / "outside.txt").write_text("private")
    (editor.workspace / "link").symlink_to(editor.tmp)
    refused = [
        f"{AGENT_ROOT}/../etc/passwd",
        f"{AGENT_ROOT}/../workspace2/x",
        f"{AGENT_ROOT}2/x",
        f"{AGENT_ROOT}/link/outside.txt",
        "/etc/passwd",
        str(source),
    ]
    steps = [
        {"readFile": {"path": f"{AGENT_ROOT}/src/my app.py"}},
        *({"readFile": {"path": path}} for path in refused),
        *({"writeFile": {"path": path, "content": "x"}} for path in refused),
        {"terminal": {"command": "true", "cwd": "/srv"}},
    ]
    settings = {**_mapped(editor), "workspace": {"extraRoots": [str(sibling)]}, "policy": RUN}
    await editor.start(_script(turns=[steps]), settings)
    message_id = await editor.prompt(await editor.new_session(), "go")
    await editor.goose.turn_end(message_id)
    text = editor.goose.text(message_id)
    assert text.startswith('[read "a = 1\\nb = 2\\n"]'), "the mapped path is served"
    assert text.count("permission denied") == 2 * len(refused) + 1, text
    assert (sibling / "x").read_text() == "sibling" and source.read_text() == "a = 1\nb = 2\n"
    assert (editor.tmp / "outside.txt").read_text() == "private"
    notes = [n["text"] for n in editor.goose.of_kind("note")]
    assert any("/srv is in no folder agent.pathMap maps (/workspace)" in n for n in notes)


async def test_a_workspace_outside_the_map_is_an_error_not_a_local_path(editor: Editor) -> None:
    await editor.start(_script(), {"agent": {"pathMap": {str(editor.tmp / "other"): "/w"}}})
    with pytest.raises(JsonRpcException, match=r"workspace is in no folder agent\.pathMap maps"):
        await editor.new_session()
    assert editor.received("session/new") == []


async def test_a_path_on_the_agent_s_side_only_is_asked_even_when_spelt_as_a_local_file(
    editor: Editor,
) -> None:
    """The agent's ``/home/me/proj/src/x`` (in no mapped folder: a file of its own) may
    be spelt as the user's local file; the user's rule allowing edits in ``src`` judges
    local files, so it allows the mapped edit and asks about that one, saying why, with
    no diff against the namesake and no "for this session". A tool call once foreign
    stays so when a later request names only mapped paths."""
    source = _source(editor)
    mapped = {"path": f"{AGENT_ROOT}/src/my app.py"}
    local_spelling = {"path": str(source)}
    diff = {"type": "diff", "path": str(source), "newText": "pwned\n"}
    steps = [
        {
            "permission": {
                "toolCallId": "m1",
                "title": "Edit",
                "kind": "edit",
                "locations": [mapped],
            }
        },
        {
            "permission": {
                "toolCallId": "f1",
                "title": "Edit",
                "kind": "edit",
                "locations": [local_spelling],
                "content": [diff],
            }
        },
        {
            "toolCall": {
                "toolCallId": "f2",
                "title": "Edit",
                "kind": "edit",
                "locations": [local_spelling],
            }
        },
        {
            "permission": {
                "toolCallId": "f2",
                "title": "Edit",
                "kind": "edit",
                "locations": [mapped],
            }
        },
    ]
    policy = {"rules": [{"action": "allow", "kind": "edit", "path": "src/**"}]}
    await editor.start(_script(turns=[steps]), {**_mapped(editor), "policy": policy})
    message_id = await editor.prompt(await editor.new_session(), "go")

    def cards(tool_call_id: str) -> list[dict[str, Any]]:
        requests = editor.goose.of_kind("permission_request")
        return [e for e in requests if e["toolCall"]["toolCallId"] == tool_call_id]

    for tool_call_id in ("f1", "f2"):
        (card,) = await editor.goose.wait_for(functools.partial(cards, tool_call_id))
        assert str(source) in card["warning"] and "agent.pathMap" in card["warning"], card
        offered = [o["optionId"] for o in card["options"]]
        assert offered == [o["optionId"] for o in GOOSE_PERMISSION_OPTIONS], "no session grant"
        assert all("oldText" not in c for c in card["toolCall"].get("content") or []), card
        await editor.goose.request(
            "goose/permission", {"requestId": card["requestId"], "optionId": "allow_once"}
        )
    await editor.goose.turn_end(message_id)
    assert editor.goose.text(message_id).count("[permission: allow_once]") == 3
    assert cards("m1") == [], "the mapped edit was allowed by the rule, not asked"
    assert source.read_text() == "a = 1\nb = 2\n"


async def test_a_tool_call_once_foreign_stays_so_after_the_agent_is_reconnected(
    editor: Editor,
) -> None:
    """The agent names a path on its side only, reconnects (resumed: nothing replayed),
    and then asks about that tool call naming nothing: the card is still asked, and
    still says why, whatever the rules."""
    source = _source(editor)
    capabilities = {
        **GOOSE_CAPABILITIES,
        "sessionCapabilities": {"list": {}, "resume": {}},
    }
    named = {
        "toolCallId": "r1",
        "title": "Edit",
        "kind": "edit",
        "locations": [{"path": str(source)}],
    }
    by_prompt = {  # a restarted agent counts its turns anew: each prompt names its steps
        "name it": [{"toolCall": named}],
        "ask about it": [{"permission": {"toolCallId": "r1", "title": "Edit", "kind": "edit"}}],
    }
    policy = {"rules": [{"action": "allow", "kind": "edit", "path": "src/**"}]}
    script = _script(
        byPrompt=by_prompt, capabilities=capabilities, sessionsFile=str(editor.tmp / "s")
    )
    await editor.start(script, {**_mapped(editor), "policy": policy})
    session_id = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(session_id, "name it"))
    await editor.goose.request("goose/restart", {})
    assert editor.received("session/resume"), "resumed, so nothing was replayed"
    message_id = await editor.prompt(session_id, "ask about it")
    (card,) = await editor.goose.wait_for(lambda: editor.goose.of_kind("permission_request"))
    assert str(source) in card["warning"] and "agent.pathMap" in card["warning"], card
    await editor.goose.request(
        "goose/permission", {"requestId": card["requestId"], "optionId": "reject_once"}
    )
    await editor.goose.turn_end(message_id)
