"""A hostile repository: its own configuration must never run code as the user.

The invariant: goose-ls runs no repository code. It lists the workspace's files for
``@`` completion and ``goose/findFiles`` (issue 28, point 8); a repository whose
``core.fsmonitor``, hooks, aliases, filters or ``core.sshCommand`` would run a command
(from ``.git/config``, from a config it includes, or from the one a ``.git/commondir``
points at) gets the files listed and nothing run.
"""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from lsprotocol import types

from support.buffers import EditorBuffers
from support.harness import Editor

HOOKS = ("post-index-change", "pre-commit", "post-checkout", "reference-transaction", "pre-push")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _plant(config_dir: Path, marker: Path) -> None:
    """Every way a git config names a command, each creating ``marker``."""
    touch = f"touch '{marker}'"
    for key, value in {
        "core.fsmonitor": f"{touch}; false",
        "core.sshCommand": touch,
        "core.pager": touch,
        "alias.ls-files": f"!{touch}",
        "alias.ls": f"!{touch}",
        "filter.evil.clean": touch,
        "filter.evil.smudge": touch,
        "filter.evil.process": touch,
        "diff.external": touch,
        "core.hooksPath": str(config_dir / "hooks"),
    }.items():
        _git("--git-dir", str(config_dir), "config", key, value, cwd=config_dir)
    (config_dir / "hooks").mkdir(exist_ok=True)
    for name in HOOKS:
        hook = config_dir / "hooks" / name
        hook.write_text(f"#!/bin/sh\n{touch}\n")
        hook.chmod(hook.stat().st_mode | stat.S_IXUSR)


def _hostile(workspace: Path, how: str) -> Path:
    """A repository in ``workspace`` whose configuration (found ``how``) would run a
    command; the file that command would create."""
    marker = workspace.parent / f"ran-{how}"
    _git("init", "-q", str(workspace), cwd=workspace.parent)
    dot_git = workspace / ".git"
    if how == "config":
        _plant(dot_git, marker)
    elif how == "include":
        elsewhere = workspace.parent / "included"
        _git("init", "-q", "--bare", str(elsewhere), cwd=workspace.parent)
        _plant(elsewhere, marker)
        _git("config", "include.path", str(elsewhere / "config"), cwd=workspace)
    else:  # the agent wrote .git/commondir, pointing at a git dir (and config) it made
        planted = workspace.parent / "planted"
        _git("init", "-q", "--bare", str(planted), cwd=workspace.parent)
        _plant(planted, marker)
        (dot_git / "commondir").write_text(f"{planted}\n")
    (workspace / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("a = 1\n")
    (workspace / "debug.log").write_text("ignored\n")
    return marker


def _git_would_run_it(workspace: Path, marker: Path) -> bool:
    """The arrangement is hostile: git itself, asked what goose-ls used to ask, runs it."""
    subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=workspace,
        capture_output=True,
        check=False,
    )
    ran = marker.exists()
    if ran:
        marker.unlink()
    return ran


def _watch_git(tmp: Path) -> None:
    """A ``git`` first on goose-ls's PATH that notes each time it runs."""
    real = shutil.which("git")
    (tmp / "bin").mkdir(exist_ok=True)
    spy = tmp / "bin" / "git"
    spy.write_text(f"#!/bin/sh\ntouch '{tmp / 'git-ran'}'\nexec '{real}' \"$@\"\n")
    spy.chmod(0o755)


@pytest.mark.parametrize("how", ["config", "include", "commondir"])
async def test_listing_files_runs_nothing_the_repository_configures(
    editor: Editor, how: str
) -> None:
    marker = _hostile(editor.workspace, how)
    assert _git_would_run_it(editor.workspace, marker), "git runs the planted fsmonitor"
    _watch_git(editor.tmp)
    # Listing runs no git at all; turn checkpoints (off here) run it on goose-ls's own
    # repository (tests/test_hostile_checkpoints.py holds that nothing of this one runs).
    await editor.start({"turns": [[{"text": "hi"}]]}, {"checkpoints": {"enabled": False}})

    found = await editor.goose.request("goose/findFiles", {"query": ""})
    assert found["files"] == [".gitattributes", ".gitignore", "src/app.py"]

    buffers = EditorBuffers(editor.client, "utf-8")
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="goose.openChat", arguments=[])
    )
    (shown,) = await editor.goose.wait_for(lambda: editor.client.shown_documents)
    buffers.open(shown.uri)
    buffers.type_at_end(shown.uri, "see @ap")
    lines = buffers.texts[shown.uri].split("\n")
    result = await editor.client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=shown.uri),
            position=types.Position(line=len(lines) - 1, character=len(lines[-1])),
        )
    )
    assert isinstance(result, types.CompletionList)
    assert [item.label for item in result.items] == ["@src/app.py"]

    await editor.goose.turn_end(await editor.prompt(await editor.new_session(), "@src/app.py"))
    assert not marker.exists(), "goose-ls ran a command the repository configured"
    assert not (editor.tmp / "git-ran").exists(), "goose-ls ran git"


@pytest.mark.parametrize("how", ["config", "include", "commondir"])
async def test_turn_checkpoints_run_nothing_the_repository_configures(
    editor: Editor, how: str
) -> None:
    marker = _hostile(editor.workspace, how)
    await editor.start({"turns": [[{"text": "hi"}]]})
    session_id = await editor.new_session()
    for text in ("one", "two"):  # snapshots before and after each turn
        await editor.goose.turn_end(await editor.prompt(session_id, text))
    assert not marker.exists(), "goose-ls's git ran a command the repository configured"
