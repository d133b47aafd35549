"""The agent's file reads and writes on disk: lines as on disk, removal without links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from goose_ls.workspace.agent_files import FileProblem, read_disk, remove_disk, select_lines
from goose_ls.workspace.confinement import Denied


def test_lines_of_a_buffer_end_where_lines_of_its_file_end(tmp_path: Path) -> None:
    text = "one\rstill one\x0cand\u2028one\ntwo\r\nthree"
    source = tmp_path / "a.txt"
    source.write_bytes(text.encode())
    for line, limit in [(1, 1), (2, 1), (2, 2), (3, None), (None, 2)]:
        from_disk = read_disk(source, tmp_path, line, limit)
        assert select_lines(text, line, limit) == from_disk, (line, limit)
    assert select_lines(text, 2, 1) == "two\r\n"


def test_a_removal_never_follows_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    (workspace / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "keep.txt").write_text("not the agent's\n")
    (workspace / "sub").rmdir()
    os.symlink(outside, workspace / "sub")  # after the path was checked
    with pytest.raises(Denied, match="link"):
        remove_disk(workspace / "sub" / "keep.txt", workspace)
    assert (outside / "keep.txt").read_text() == "not the agent's\n"


def test_a_removal_takes_a_regular_file_only(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(FileProblem, match="not a regular file"):
        remove_disk(tmp_path / "pipe", tmp_path)
    (tmp_path / "made.txt").write_text("x")
    remove_disk(tmp_path / "made.txt", tmp_path)
    remove_disk(tmp_path / "made.txt", tmp_path)  # gone already: nothing to do
    assert not (tmp_path / "made.txt").exists()
