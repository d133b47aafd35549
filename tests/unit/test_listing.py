"""The workspace listing without git lists what ``git ls-files --others
--exclude-standard`` lists, and reads ignore files without ever blocking on one."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from goose_ls.workspace import file_list

IGNORES = {
    ".gitignore": "*.log\n!keep.log\nbuild/\n/top-only.txt\ndocs/**/draft-*\n#comment\n\\#hash\n",
    "src/.gitignore": "generated/\n*.tmp\n!important.tmp\n",
    "src/deep/.gitignore": "!*.log\n",
    "vendor/.gitignore": "*\n!.gitignore\n!wanted.c\n",
}
FILES = [
    "a.py",
    "app.log",
    "keep.log",
    "top-only.txt",
    "src/top-only.txt",
    "build/out.o",
    "src/build/out.o",
    "src/x.tmp",
    "src/important.tmp",
    "src/generated/g.py",
    "src/deep/d.log",
    "src/deep/e.py",
    "docs/a/b/draft-1.md",
    "docs/a/final.md",
    "#hash",
    ".github/workflows/ci.yml",
    "vendor/wanted.c",
    "vendor/unwanted.c",
    "name with spaces.txt",
]


def _git_lists(root: Path, *args: str) -> list[str]:
    """What git lists (the test's own repository, with no user configuration)."""
    env = {**os.environ, "HOME": str(root.parent), "XDG_CONFIG_HOME": str(root.parent / "xdg")}
    done = subprocess.run(
        ["git", "ls-files", "-z", "--others", "--exclude-standard", *args],
        cwd=root,
        capture_output=True,
        check=True,
        env=env,
    )
    return sorted(name for name in done.stdout.decode().split("\0") if name)


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("excluded-locally.txt\n")
    for name, text in IGNORES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    for name in [*FILES, "excluded-locally.txt"]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return root


def test_the_walk_lists_what_git_lists(repository: Path) -> None:
    walked = sorted(file_list.files(repository, 1000, 10))
    assert walked == _git_lists(repository)
    assert "vendor/wanted.c" in walked and "app.log" not in walked


def test_from_a_folder_inside_the_repository_the_rules_above_apply(repository: Path) -> None:
    src = repository / "src"
    assert sorted(file_list.files(src, 1000, 10)) == _git_lists(src)


def test_an_ignore_file_that_is_a_fifo_or_a_link_to_a_device_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    os.mkfifo(tmp_path / ".gitignore")  # reading it would block for ever
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").symlink_to("/dev/zero")  # it would never end
    (tmp_path / "sub" / "a.txt").write_text("")
    assert sorted(file_list.files(tmp_path, 100, 10)) == [
        ".gitignore",
        "sub/.gitignore",
        "sub/a.txt",
    ]


def test_the_listing_stops_at_its_limit(tmp_path: Path) -> None:
    for index in range(30):
        (tmp_path / f"f{index:02}.txt").write_text("")
    assert file_list.files(tmp_path, 10, 10) == [f"f{index:02}.txt" for index in range(10)]


def test_a_hostile_ignore_file_of_megabytes_does_not_hold_the_listing(tmp_path: Path) -> None:
    """Every name is matched against every pattern: 60,000 patterns over 2,000 files took
    31 s, the server frozen meanwhile. The walk keeps to its time."""
    (tmp_path / ".git").mkdir()
    patterns = "".join(f"**/dir{index}/**/*.x{index}\n" for index in range(60_000))
    (tmp_path / ".gitignore").write_text(patterns)
    for index in range(2000):
        (tmp_path / f"f{index}.txt").write_text("")
    start = time.monotonic()
    file_list.files(tmp_path, 20_000, 1.0)
    assert time.monotonic() - start < 5.0
