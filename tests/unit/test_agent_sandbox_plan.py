"""The agent sandbox's plan: which mounts, in which order, and where its program is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from goose_ls.workspace import landlock
from goose_ls.workspace import sandbox as sandbox_module
from goose_ls.workspace.agent_sandbox import (
    Bounds,
    Reach,
    Unsafe,
    bounds_for,
    confine,
    describe,
    install_folder,
    mounts,
    program_paths,
)
from goose_ls.workspace.confinement import Confinement
from goose_ls.workspace.sandbox import Sandbox, Survey, survey


def _layout(tmp: Path) -> tuple[Bounds, Reach]:
    home = tmp / "home"
    root = home / "proj"
    for folder in (root / ".git" / "hooks", home / ".claude", home / ".local" / "share" / "gl"):
        folder.mkdir(parents=True)
    (root / ".env").write_text("X=1\n")
    covered = Survey(hidden=[root / ".env"], read_only=[root / ".git" / "hooks"])
    bounds = Bounds([root], covered, own=[home / ".local" / "share" / "gl"])
    reach = Reach(program=[], state=[home / ".claude"], readable=[], writable=[], homes=[home])
    return bounds, reach


def test_parents_are_mounted_before_what_they_hold(tmp_path: Path) -> None:
    bounds, reach = _layout(tmp_path)
    order = [path for _, path in mounts(bounds, reach)]
    for i, path in enumerate(order):
        for later in order[i + 1 :]:
            assert later not in path.parents, f"{later} would cover {path}, made before it"


def test_the_home_is_covered_but_the_root_state_and_hooks_show_through(tmp_path: Path) -> None:
    bounds, reach = _layout(tmp_path)
    planned = dict((path, kind) for kind, path in mounts(bounds, reach))
    home = tmp_path / "home"
    assert planned[home] == "cover"
    assert planned[home / "proj"] == "write"
    assert planned[home / ".claude"] == "write"
    assert planned[home / "proj" / ".git" / "hooks"] == "read"
    assert planned[home / "proj" / ".env"] == "hide"
    assert planned[home / ".local" / "share" / "gl"] == "hide"


def test_a_user_addition_shows_a_covered_place_but_never_goose_ls_s_own(tmp_path: Path) -> None:
    bounds, reach = _layout(tmp_path)
    own = bounds.own[0]
    widened = Reach([], [], [], writable=[tmp_path / "home", own], homes=reach.homes)
    last: dict[Path, str] = {}
    for kind, path in mounts(bounds, widened):
        last[path] = kind  # at one path, the last mount wins
    assert last[tmp_path / "home"] == "write"
    assert last[own] == "hide"


def test_a_program_is_found_through_links_and_its_interpreter(tmp_path: Path) -> None:
    package = tmp_path / "agents" / "pkg-1.0"
    script = package / "node_modules" / "agent" / "dist" / "index.js"
    script.parent.mkdir(parents=True)
    script.write_text("#!/usr/bin/env sh\n")
    link = tmp_path / "agents" / "bin" / "agent"
    link.parent.mkdir()
    link.symlink_to(script)
    found = program_paths(str(link), {"PATH": os.environ.get("PATH", "")}, [tmp_path / "h"])
    assert package in found, "the package holding node_modules"
    assert tmp_path / "agents" in found or link.parent in found, "the link's own folder"
    assert any(p.name in ("sh", "bin", "usr") or "bin" in p.parts for p in found[2:])


def test_a_program_in_the_home_folder_alone_is_never_the_home_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert install_folder(home / "agent", [home]) == home / "agent"
    assert install_folder(home / ".local" / "bin" / "goose", [home]) == home / ".local" / "bin"


def test_landlock_s_split_shows_all_but_the_hidden_place_and_follows_no_link(
    tmp_path: Path,
) -> None:
    (tmp_path / "home" / "me" / ".ssh").mkdir(parents=True)
    (tmp_path / "home" / "other").mkdir()
    (tmp_path / "usr").mkdir()
    (tmp_path / "lib").symlink_to(tmp_path / "home" / "me")
    shown = landlock.split_around([tmp_path / "home" / "me"], tmp_path)
    assert set(shown) == {tmp_path / "home" / "other", tmp_path / "usr"}


def test_without_a_workspace_folder_the_agent_sees_where_it_starts_and_writes_nothing(
    tmp_path: Path,
) -> None:
    """An editor that opens no folder (Neovim's bare config): the agent must see the
    folder its sessions start in, or it cannot start one; it may write none of it."""
    start = tmp_path / "proj"
    start.mkdir()
    bounds = bounds_for(Confinement([]), [], [], str(start))
    assert bounds.roots == [] and bounds.unrooted == start
    reach = Reach([], [], [], [], homes=[])
    planned = dict((path, kind) for kind, path in mounts(bounds, reach))
    assert planned[start] == "read", planned
    said = describe(Sandbox("workspace", "/usr/bin/bwrap"), bounds, reach)
    assert f"no folder (the editor opened none: open a project folder; it may read {start})" in said
    home = Path.home()
    assert bounds_for(Confinement([]), [], [], str(home)).unrooted is None, "never the home"


def test_a_hard_link_in_a_root_to_a_secret_in_the_home_folder_is_hidden(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "home" / "proj"
    root.mkdir(parents=True)
    (home / ".npmrc").write_text("//registry/:_authToken=npm_secret\n")
    os.link(home / ".npmrc", root / "npm-copy")
    (root / "plain").write_text("x")
    os.link(root / "plain", root / "plain-too")  # both names inside: nothing to hide
    found = survey(Confinement([root]), home, [], [])
    assert root / "npm-copy" in found.hidden
    assert root / "plain" not in found.hidden and root / "plain-too" not in found.hidden


def test_a_root_too_big_to_look_at_whole_is_said_not_to_hide_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "proj"
    (root / "deep" / "er").mkdir(parents=True)
    for n in range(10):
        (root / f"f{n}").write_text("x")
    (root / "deep" / "er" / ".env").write_text("X=1")
    monkeypatch.setattr(sandbox_module, "WALK_LIMIT", 5)
    found = survey(Confinement([root]), None, [], [])
    assert found.cut == root
    bounds = Bounds([root], found, [])
    said = describe(Sandbox("workspace", "/usr/bin/bwrap"), bounds, Reach([], [], [], [], []))
    assert f"{root} is too big to look at whole" in said and "NOT hidden" in said


def test_goose_ls_s_files_inside_a_root_refuse_the_sandbox(tmp_path: Path) -> None:
    """The agent could rename the folder around them and write its own (a policy and the
    trust in it): no sandbox is made then, so the agent does not start."""
    root = tmp_path / "proj"
    (root / "tools" / "data").mkdir(parents=True)
    bounds = Bounds([root], Survey([], []), own=[root / "tools" / "data"])
    with pytest.raises(Unsafe, match="inside the workspace"):
        confine(Sandbox("workspace", "/usr/bin/bwrap"), ["agent"], str(root), bounds, _reach())


def _reach() -> Reach:
    return Reach([], [], [], [], homes=[])
