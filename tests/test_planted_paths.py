"""A command the user allowed, or the agent's own process, cannot plant a protected path
that did not exist yet (issue: consent bound to the action, point 10): what it created is
set aside in the data dir, unread, and the user told; what a card allowed stays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goose_ls.workspace import sandbox
from support.harness import Editor

PLANTED = [".vscode/settings.json", ".envrc", "sub/.nvim.lua", ".git/hooks/pre-commit"]
SCRIPT = " && ".join(
    ["mkdir -p .vscode sub .git/hooks build"]
    + [f"echo planted > {target}" for target in PLANTED]
    + ["echo built > build/out.txt"]
)


def _audit(editor: Editor) -> list[dict[str, str]]:
    path = editor.tmp / "data" / "audit.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _set_aside(editor: Editor) -> dict[str, str]:
    """What was set aside, by its path relative to the workspace."""
    folder = editor.tmp / "data" / "set-aside"
    found = {}
    for path in folder.rglob("*"):
        if path.is_file():
            stamp_root = path.relative_to(folder).parts
            found["/".join(stamp_root[2:])] = path.read_text()
    return found


async def _turn(editor: Editor, steps: list[dict[str, Any]], **settings: Any) -> str:
    await editor.start({"turns": [[*steps, {"text": "[done]"}]]}, settings=settings or None)
    sid = await editor.new_session()
    mid = await editor.prompt(sid, "build it")
    await editor.goose.turn_end(mid)
    return mid


async def test_a_command_run_through_goose_ls_cannot_plant_editor_or_shell_settings(
    editor: Editor,
) -> None:
    (editor.workspace / "build.sh").write_text(SCRIPT + "\n")
    step = {"terminal": {"command": "sh", "args": ["build.sh"], "cwd": str(editor.workspace)}}
    await _turn(editor, [step], policy={"rules": [{"action": "allow", "command": "sh build.sh"}]})
    await editor.goose.wait_for(lambda: editor.goose.of_kind("note"), what="the note")
    for target in PLANTED:
        assert not (editor.workspace / target).exists(), target
    assert not (editor.workspace / ".vscode").exists(), "the folder made to hold it goes too"
    assert (editor.workspace / "sub").is_dir() and (editor.workspace / ".git" / "hooks").is_dir()
    assert (editor.workspace / "build" / "out.txt").read_text() == "built\n", "the rest stays"
    assert _set_aside(editor) == {target: "planted\n" for target in PLANTED}
    (note,) = [n["text"] for n in editor.goose.of_kind("note")]
    assert ".vscode/settings.json" in note and "moved them, unread" in note, note
    assert "set-aside/" in note and "/workspace/" in note, "where to find them, whole"
    audited = {e["target"] for e in _audit(editor) if e["outcome"] == "set aside"}
    assert audited == {str(editor.workspace / target) for target in PLANTED}


async def test_the_agent_s_own_process_cannot_plant_them_either(editor: Editor) -> None:
    await _turn(editor, [{"shell": f"cd {editor.workspace} && {SCRIPT}"}])
    await editor.goose.wait_for(lambda: editor.goose.of_kind("note"), what="the note")
    for target in PLANTED:
        assert not (editor.workspace / target).exists(), target
    assert set(_set_aside(editor)) == set(PLANTED)


async def test_a_protected_file_a_card_allowed_stays(editor: Editor) -> None:
    settings = editor.workspace / ".vscode" / "settings.json"
    call = {"toolCallId": "w1", "title": "Edit settings", "kind": "edit"}
    card = {"toolCall": {**call, "locations": [{"path": str(settings)}]}}
    write = {"writeFile": {"path": str(settings), "content": "{}\n"}}
    await editor.start({"turns": [[{"permission": card}, write, {"text": "[done]"}]]})
    sid = await editor.new_session()
    mid = await editor.prompt(sid, "go")
    asked = await editor.goose.wait_for(
        lambda: editor.goose.of_kind("permission_request"), what="the card"
    )
    await editor.goose.request(
        "goose/permission", {"requestId": asked[0]["requestId"], "optionId": "allow_once"}
    )
    await editor.goose.turn_end(mid)
    await editor.goose.request("goose/status", {})
    assert editor.goose.text(mid) == "[permission: allow_once][written][done]"
    assert settings.read_text() == "{}\n"
    assert not _set_aside(editor) and not editor.goose.of_kind("note")


def test_set_aside_keeps_a_link_as_a_link(tmp_path: Path) -> None:
    from goose_ls.workspace.planted import protected_in, set_aside

    root = tmp_path / "root"
    (root / ".vscode").mkdir(parents=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("never read")
    (root / ".envrc").symlink_to(secret)
    (root / ".vscode" / "settings.json").write_text("{}")
    (root / "ok.txt").write_text("ok")
    found = protected_in([root])
    assert found == {root / ".envrc", root / ".vscode" / "settings.json"}
    moved = dict(set_aside(found, [root], tmp_path / "aside"))
    assert sorted(moved) == sorted(found)
    assert moved[root / ".envrc"].is_symlink() and secret.read_text() == "never read"
    settings = moved[root / ".vscode" / "settings.json"]
    assert settings.stat().st_mode & 0o777 == 0o600
    for folder in [settings.parent, *settings.parents][
        : len(settings.parts) - len(tmp_path.parts) - 1
    ]:
        assert folder.stat().st_mode & 0o777 == 0o700, folder
    assert not (root / ".envrc").exists() and (root / "ok.txt").exists()


def test_git_s_own_churn_is_not_protected_but_what_makes_it_run_something_is(
    tmp_path: Path,
) -> None:
    from goose_ls.workspace.planted import protected_in

    for name in [
        ".git/objects/ab/cdef",
        ".git/ORIG_HEAD",
        ".git/COMMIT_EDITMSG",
        ".git/refs/heads/main",
        ".git/hooks/pre-commit.sample",
        ".git/hooks/pre-commit",
        ".git/config",
        ".git/info/attributes",
        "vendor/.git",
        "src/main.py",
        "src/rules.mk",
        ".github/workflows/ci.yml",
    ]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    found = {path.relative_to(tmp_path).as_posix() for path in protected_in([tmp_path])}
    assert found == {
        ".git/hooks/pre-commit",
        ".git/config",
        ".git/info/attributes",
        "vendor/.git",
        "src/rules.mk",
        ".github/workflows/ci.yml",
    }


EXISTING = [".mcp.json", ".claude/settings.json", "docs/.dir-locals.el", ".git/commondir"]


@pytest.mark.skipif(
    not sandbox.choose("workspace").active, reason="BUBBLEWRAP IS MISSING: not tried"
)
async def test_the_agent_s_own_process_changes_no_protected_file_of_any_class(
    editor: Editor,
) -> None:
    """In the sandbox, existing protected files of every class are read-only (agents'
    settings and `.git/commondir` were writable)."""
    for target in EXISTING:
        (editor.workspace / target).parent.mkdir(parents=True, exist_ok=True)
        (editor.workspace / target).write_text("mine\n")
    writes = " ; ".join(f"echo evil > {target}" for target in EXISTING)
    mid = await _turn(editor, [{"shell": f"cd {editor.workspace} && {writes}; echo tried"}])
    assert "tried" in editor.goose.text(mid)
    for target in EXISTING:
        assert (editor.workspace / target).read_text() == "mine\n", target
