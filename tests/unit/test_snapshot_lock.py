"""A checkpoint repository another process keeps locked: the snapshot gives up with a
clear error after the time one git command may take, instead of waiting for ever (and
holding goose-ls's shutdown, which waits for its thread)."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

from goose_ls.workspace import snapshots
from goose_ls.workspace.snapshots import ShadowRepo, SnapshotError


def test_a_repository_locked_elsewhere_fails_the_snapshot_in_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "app.py").write_text("a = 1\n")
    repo = ShadowRepo(root, tmp_path / "checkpoints")
    assert repo.snapshot()  # made, and the lock file with it
    monkeypatch.setattr(snapshots, "GIT_TIMEOUT", 0.3)
    (lock_file,) = tmp_path.glob("checkpoints/*.git/goose-ls.lock")
    with lock_file.open("a+b") as held:  # another process's open file: flock is per file
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(SnapshotError, match="stayed locked by another process"):
            repo.snapshot()
    monkeypatch.undo()  # git's own time limit back for the next one
    assert repo.snapshot(), "free again once the other lets go"
