"""``@path`` mentions: which words are mentions, and only files in the workspace count."""

from __future__ import annotations

import subprocess
from pathlib import Path

from goose_ls.lsp.mentions import candidates, mentioned, typed


def test_only_workspace_files_named_after_an_at_become_context(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    draft = (
        "See @src/a.py. Mail me@src/a.py, @../secret.txt, @link.txt, @src, @nothing.py"
        " and @src/a.py again"
    )
    items = mentioned(draft, root)
    assert [item.uri for item in items] == [(root / "src" / "a.py").resolve().as_uri()]


def test_the_mention_being_typed_is_the_one_the_cursor_ends() -> None:
    assert typed("look at @sr") == "sr"
    assert typed("look at @") == ""
    assert typed("mail me@sr") is None
    assert typed("@done then more") is None


def test_open_buffers_come_first_and_git_ignored_files_not_at_all(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("*.log\n")
    for name in ("b_app.py", "a_app.py", "app.log"):
        (tmp_path / name).write_text("")
    found = candidates(tmp_path, [tmp_path / "b_app.py", tmp_path.parent / "x_app.py"], "APP")
    assert found == ["b_app.py", "a_app.py"]


def test_outside_git_hidden_and_build_folders_are_not_walked(tmp_path: Path) -> None:
    for folder in ("node_modules", ".cache", "src"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "app.js").write_text("")
    assert candidates(tmp_path, [], "app") == ["src/app.js"]
