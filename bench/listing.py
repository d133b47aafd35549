"""The workspace listing without git (``goose_ls.workspace.file_list``) against
``git ls-files``, on a tree of 10,000 files that are listed and 2,000 that are ignored.

    .venv/bin/python bench/listing.py [--repeat N]

Both run warm (the tree in the page cache), each timed on its own, alternated; the
figures are medians. git is timed twice: with the files untracked (``--others``, what a
new checkout of generated files looks like) and committed (``--cached``, read from the
index). The listing must give the same files as git.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from goose_ls.workspace import file_list

GIT = ["git", "-c", "core.fsmonitor=false"]  # the bench's own tree: nothing hostile
LISTED = 10_000


def build(root: Path) -> None:
    """100 folders of 100 files in 10 groups; ignored: logs, build output, node_modules."""
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("*.log\nbuild/\nnode_modules/\n")
    for group in range(10):
        for folder in range(10):
            here = root / f"pkg{group}" / f"mod{folder}"
            here.mkdir(parents=True)
            for index in range(100):
                (here / f"file{index}.py").write_text("")
            (here / "run.log").write_text("")
        (root / f"pkg{group}" / ".gitignore").write_text("*.tmp\n!keep.tmp\n")
        (root / f"pkg{group}" / "build").mkdir()
        for index in range(100):
            (root / f"pkg{group}" / "build" / f"out{index}.o").write_text("")
    for index in range(800):
        (root / "node_modules" / f"dep{index // 100}").mkdir(parents=True, exist_ok=True)
        (root / "node_modules" / f"dep{index // 100}" / f"i{index}.js").write_text("")


def git_files(root: Path, *args: str) -> list[str]:
    done = subprocess.run(
        [*GIT, "ls-files", "-z", *args, "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    )
    return [name for name in done.stdout.decode().split("\0") if name]


def timed(run: Callable[[], list[str]]) -> tuple[float, list[str]]:
    start = time.perf_counter()
    found = run()
    return time.perf_counter() - start, found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    repeat = parser.parse_args().repeat
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tree"
        build(root)
        os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "xdg")  # no user ignore file

        def walk() -> list[str]:
            return file_list.files(root, 20_000, 60)

        def untracked() -> list[str]:
            return git_files(root, "--others")

        times: dict[str, list[float]] = {"walk": [], "git --others": [], "git --cached": []}
        for _ in range(repeat):
            for name, run in (("walk", walk), ("git --others", untracked)):
                seconds, found = timed(run)
                times[name].append(seconds)
                assert sorted(found) == sorted(untracked()), name
        subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
        walked = sorted(walk())
        assert len(walked) == LISTED + 11, len(walked)  # and the 11 .gitignore files
        for _ in range(repeat):
            seconds, found = timed(lambda: git_files(root, "--cached"))
            times["git --cached"].append(seconds)
            assert sorted(found) == walked
    print(f"{LISTED:,} files listed, 1,800 ignored; median of {repeat} (ms):")
    for name, values in times.items():
        print(f"  {name:14} {statistics.median(values) * 1000:7.1f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
