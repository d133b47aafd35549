"""``agent.pathMap``'s spelling rules: whole folders, the deepest first, ``..`` undone
before anything is matched, URIs decoded and encoded again; a bad map is refused whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from goose_ls.workspace.path_map import PathMap, map_uri

CONTAINER = PathMap.parse({"/home/me/proj/": "/workspace/"})


@pytest.mark.parametrize(
    ("agent", "local"),
    [
        ("/workspace", "/home/me/proj"),
        ("/workspace/", "/home/me/proj"),
        ("/workspace/src/x.py", "/home/me/proj/src/x.py"),
        ("//workspace//src/./x.py", "/home/me/proj/src/x.py"),
        ("/workspace/a/../src/x.py", "/home/me/proj/src/x.py"),
        ("/workspace2/x", None),
        ("/work", None),
        ("/workspace/../etc/passwd", None),
        ("/workspace/..", None),
        ("/etc/passwd", None),
        ("workspace/x", None),
        ("", None),
        ("/workspace/x\0", None),
    ],
)
def test_an_agent_path_maps_by_whole_folders_after_dot_dot_is_undone(
    agent: str, local: str | None
) -> None:
    assert CONTAINER.to_local(agent) == local


def test_a_local_path_maps_to_the_agent_s_and_back() -> None:
    assert CONTAINER.to_agent("/home/me/proj/src/x.py") == "/workspace/src/x.py"
    assert CONTAINER.to_agent("/home/me/proj") == "/workspace"
    assert CONTAINER.to_agent("/home/me/project/x") is None
    assert CONTAINER.to_agent("/home/me/proj/../other") is None


def test_a_root_may_be_mapped_on_either_side() -> None:
    chroot = PathMap.parse({"/srv/root": "/"})
    assert chroot.to_local("/etc/passwd") == "/srv/root/etc/passwd"
    assert chroot.to_local("/") == "/srv/root"
    assert chroot.to_agent("/srv/root/etc/passwd") == "/etc/passwd"
    assert chroot.to_agent("/srv/root") == "/"
    assert chroot.to_agent("/srv/other") is None
    mounted = PathMap.parse({"/": "/mnt/laptop"})
    assert mounted.to_local("/mnt/laptop/home/me") == "/home/me"
    assert mounted.to_local("/mnt/laptop2") is None
    assert mounted.to_agent("/home/me") == "/mnt/laptop/home/me"


def test_nested_folders_are_nested_mounts_the_deeper_one_wins() -> None:
    """``docker run -v /p:/w -v /lib:/w/lib``: the agent's /w/lib is /lib, and the
    project's own lib folder is hidden from it."""
    paths = PathMap.parse({"/p": "/w", "/lib": "/w/lib"})
    assert paths.to_local("/w/lib/x") == "/lib/x"
    assert paths.to_local("/w/libx") == "/p/libx"
    assert paths.to_agent("/lib/x") == "/w/lib/x"
    assert paths.to_agent("/p/src") == "/w/src"
    assert paths.to_agent("/p/lib/x") is None, "hidden under the deeper mount"
    inner = PathMap.parse({"/p": "/w", "/p/lib": "/lib"})
    assert inner.to_agent("/p/lib/x") == "/lib/x"
    assert inner.to_local("/w/lib/x") == "/p/lib/x", "the same file by either name"
    shadowed = PathMap.parse({"/p": "/w", "/p/lib": "/x/y", "/q": "/x/y/z"})
    assert shadowed.to_agent("/p/lib/z/a") == "/w/lib/z/a", "the one name that reaches it"


def test_a_local_path_through_a_symlink_maps_by_its_real_path(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    paths = PathMap.parse({str(tmp_path / "real"): "/w"})
    assert paths.to_agent(str(tmp_path / "link" / "x.py")) == "/w/x.py"


@pytest.mark.parametrize(
    ("uri", "local"),
    [
        ("file:///workspace/my%20app.py", "file:///home/me/proj/my%20app.py"),
        ("file:///workspace/my%20app.py#L3-L5", "file:///home/me/proj/my%20app.py#L3-L5"),
        ("file://localhost/workspace/a.py", "file:///home/me/proj/a.py"),
        ("file:///workspace/%C3%A9t%C3%A9.py", "file:///home/me/proj/%C3%A9t%C3%A9.py"),
        ("file:///workspace/a%2F..%2F..%2Fetc%2Fpasswd", None),
        ("file:///workspace2/a.py", None),
        ("file://host/workspace/a.py", None),
        ("https://example.com/workspace/a.py", None),
    ],
)
def test_file_uris_are_decoded_mapped_and_encoded_again(uri: str, local: str | None) -> None:
    assert map_uri(uri, CONTAINER.to_local) == local


def test_an_empty_map_is_no_map() -> None:
    assert not PathMap.parse({})
    assert PathMap().to_local("/workspace") is None


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (["/p", "/w"], "expected an object, got list"),
        ({"/p": 1}, "'/p': expected str, got int"),
        ({"p": "/w"}, "'p' -> '/w': both folders must be absolute paths"),
        ({"/p": "~/w"}, "'/p' -> '~/w': both folders must be absolute paths"),
        ({"/p": "/w", "/p/": "/v"}, "the local folder /p is mapped twice"),
        ({"/p": "/w", "/q": "/w/"}, "the agent's folder /w is mapped from /p too"),
    ],
)
def test_a_map_that_is_not_absolute_or_is_ambiguous_is_refused(value: object, problem: str) -> None:
    with pytest.raises((TypeError, ValueError)) as info:
        PathMap.parse(value)
    assert problem in str(info.value)
