"""Confinement and the agent's disk access, without a server: secrets, roots, paths that
change under goose-ls, hard links, streamed reads (issue 13, points 9-16)."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from goose_ls.workspace import opening
from goose_ls.workspace.agent_files import FileProblem, read_disk, write_disk
from goose_ls.workspace.confinement import BadPath, Confinement, Denied, roots_of


@pytest.fixture(params=["openat2", "walk"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each disk test runs with openat2 (where the kernel has it) and with the walk."""
    if request.param == "walk":
        monkeypatch.setattr(opening, "_SYSCALL", None)
    elif not opening.openat2_available():
        pytest.skip("no openat2 here")
    return str(request.param)


@pytest.mark.parametrize(
    "name",
    [
        ".git-credentials",
        ".aws/credentials",
        ".kube/config",
        ".docker/config.json",
        ".config/gh/hosts.yml",
        ".gnupg/private-keys-v1.d",
        ".gnupg/pubring.kbx",
        "signing.p12",
        "cert.pfx",
        "release.keystore",
        ".terraformrc",
        "credentials.json",
        "gcp-credentials.json",
        "service-account-prod.json",
        "client_secret_1234.json",
        ".pgpass",
        ".my.cnf",
    ],
)
def test_the_default_secrets_cover_the_usual_credentials(tmp_path: Path, name: str) -> None:
    with pytest.raises(Denied, match="secret"):
        Confinement([tmp_path]).check(str(tmp_path / "deep" / name))


@pytest.mark.parametrize(
    ("path", "why"),
    [("/w/a\0b", "NUL"), ("/w/" + "a" * 256, "too long"), ("/w" * 2100, "too long")],
)
def test_unusable_paths_are_bad_requests_not_crashes(tmp_path: Path, path: str, why: str) -> None:
    with pytest.raises(BadPath, match=why):
        Confinement([tmp_path]).check(path)


def test_without_a_workspace_nothing_is_allowed(tmp_path: Path) -> None:
    confinement = Confinement(roots_of(None, [str(tmp_path)]))
    with pytest.raises(Denied, match="no workspace folder") as caught:
        confinement.check(str(tmp_path / "a.txt"))
    assert caught.value.outside is None, "never asked about either"


def test_the_disk_and_home_are_never_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    assert roots_of("/", []) == []
    assert roots_of(str(home), []) == []
    assert roots_of(str(tmp_path), []) == [], "a folder holding the home folder"
    project = home / "project"
    assert roots_of(str(project), ["/", "~", "..", "../.."]) == [project]


def test_relative_extra_roots_are_taken_from_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "lib").mkdir()
    roots = roots_of(str(tmp_path / "ws"), ["../lib", ".", "sub"])
    assert roots == [tmp_path / "ws", tmp_path / "lib", tmp_path / "ws", tmp_path / "ws" / "sub"]


def _swap_for_link(folder: Path, target: Path) -> None:
    folder.rename(folder.with_name(folder.name + ".old"))
    folder.symlink_to(target)


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_read(
    tmp_path: Path, way: str
) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "src").mkdir(parents=True)
    outside.mkdir()
    (ws / "src" / "a.txt").write_text("mine")
    (outside / "a.txt").write_text("private")
    confinement = Confinement([ws])
    checked = confinement.check(str(ws / "src" / "a.txt"))
    _swap_for_link(ws / "src", outside)
    with pytest.raises(Denied, match="symlink"):
        read_disk(checked, confinement.root_of(checked))


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_written(
    tmp_path: Path, way: str
) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "src").mkdir(parents=True)
    outside.mkdir()
    confinement = Confinement([ws])
    checked = confinement.check(str(ws / "src" / "new.txt"))
    _swap_for_link(ws / "src", outside)
    with pytest.raises(Denied, match="symlink"):
        write_disk(checked, confinement.root_of(checked), "planted")
    assert list(outside.iterdir()) == []


def test_a_file_swapped_for_a_symlink_is_not_followed(tmp_path: Path, way: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret.txt").write_text("private")
    (ws / "a.txt").write_text("mine")
    checked = Confinement([ws]).check(str(ws / "a.txt"))
    (ws / "a.txt").unlink()
    (ws / "a.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(Denied, match="symlink"):
        read_disk(checked, ws)
    with pytest.raises(Denied, match="symlink"):
        write_disk(checked, ws, "replaced")
    assert (tmp_path / "secret.txt").read_text() == "private"


def test_writes_go_through_the_folder_keep_the_mode_and_make_folders(
    tmp_path: Path, way: str
) -> None:
    script = tmp_path / "run.sh"
    script.write_text("old")
    script.chmod(0o751)
    write_disk(script, tmp_path, "new\r\n")
    assert script.read_bytes() == b"new\r\n" and script.stat().st_mode & 0o777 == 0o751
    write_disk(tmp_path / "a" / "b" / "c.txt", tmp_path, "deep")
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "deep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "run.sh"], "no temporary left"


def test_fifos_are_refused_at_once(tmp_path: Path, way: str) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(FileProblem, match="not a regular file"):
        read_disk(tmp_path / "pipe", tmp_path)
    with pytest.raises(FileProblem, match="not a regular file"):
        write_disk(tmp_path / "pipe", tmp_path, "x")


def test_a_part_of_a_big_file_is_streamed(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as out:
        out.write(b"first\nsecond\nthird\n")
        out.write(b"x" * 40_000_000 + b"\n")
    tracemalloc.start()
    try:
        part = read_disk(big, tmp_path, line=2, limit=2, cap=1000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert part == "second\nthird\n"
    assert peak < 1_000_000, f"{peak} bytes held for two lines"


def test_lines_past_the_part_asked_for_are_not_decoded(tmp_path: Path) -> None:
    (tmp_path / "mixed.txt").write_bytes(b"1\n2\n3\n\xff\xfe not utf-8\n")
    assert read_disk(tmp_path / "mixed.txt", tmp_path, line=1, limit=3) == "1\n2\n3\n"


def test_over_the_cap_whole_or_in_part_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a" * 50 + "\n" + "b" * 50 + "\n")
    with pytest.raises(FileProblem, match="line and limit"):
        read_disk(tmp_path / "f.txt", tmp_path, cap=60)
    assert read_disk(tmp_path / "f.txt", tmp_path, line=2, limit=1, cap=60) == "b" * 50 + "\n"
    with pytest.raises(FileProblem, match="over 60 bytes"):
        read_disk(tmp_path / "f.txt", tmp_path, line=1, limit=2, cap=60)


def test_a_hard_link_to_a_secret_is_refused_by_inode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".aws").mkdir(parents=True)
    ws.mkdir()
    monkeypatch.setenv("HOME", str(home))
    (home / ".aws" / "credentials").write_text("aws_secret_access_key=x")
    os.link(home / ".aws" / "credentials", ws / "notes.txt")
    (ws / "plain.txt").write_text("ok")
    os.link(ws / "plain.txt", ws / "plain2.txt")
    confinement = Confinement([ws])
    with pytest.raises(Denied, match=r"hard link to a secret \(\.aws/credentials\)"):
        read_disk(ws / "notes.txt", ws, check_links=confinement.check_links)
    assert read_disk(ws / "plain2.txt", ws, check_links=confinement.check_links) == "ok"


def test_a_hard_linked_file_is_written_only_when_allowed(tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("private")
    (tmp_path / "ws").mkdir()
    os.link(tmp_path / "outside.txt", tmp_path / "ws" / "x.txt")
    with pytest.raises(Denied, match="2 hard links"):
        write_disk(tmp_path / "ws" / "x.txt", tmp_path / "ws", "changed")
    write_disk(tmp_path / "ws" / "x.txt", tmp_path / "ws", "changed", hard_links=True)
    assert (tmp_path / "outside.txt").read_text() == "private"
    assert (tmp_path / "ws" / "x.txt").read_text() == "changed"
