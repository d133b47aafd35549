"""Confinement: the agent reaches files inside the workspace (and extra roots) only, and
secrets nowhere. Paths are resolved first: ``..`` and symlinks cannot lead out."""

from __future__ import annotations

from pathlib import Path

import pytest

from goose_ls.workspace.confinement import Confinement, Denied


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """``tmp/workspace`` with a symlink to ``tmp``, next to ``tmp/workspace-old``."""
    (tmp_path / "workspace" / "src").mkdir(parents=True)
    (tmp_path / "workspace-old").mkdir()
    (tmp_path / "workspace" / "link").symlink_to(tmp_path)
    return tmp_path / "workspace"


def _denied(confinement: Confinement, path: str | Path) -> Denied:
    with pytest.raises(Denied) as info:
        confinement.check(str(path))
    return info.value


def test_paths_inside_the_workspace_are_resolved(workspace: Path) -> None:
    confinement = Confinement([workspace])
    assert confinement.check(str(workspace)) == workspace
    assert confinement.check(str(workspace / "src" / "app.py")) == workspace / "src" / "app.py"
    assert confinement.check(f"{workspace}/src/../app.py") == workspace / "app.py"
    assert confinement.check(str(workspace / "new" / "file.txt")) == workspace / "new" / "file.txt"


@pytest.mark.parametrize(
    "target",
    ["../outside.txt", "/etc/hostname", "link/secret.txt", "../workspace-old/x.txt"],
)
def test_paths_outside_the_workspace_are_denied(workspace: Path, target: str) -> None:
    path = target if target.startswith("/") else f"{workspace}/{target}"
    denied = _denied(Confinement([workspace]), path)
    assert "is outside the workspace" in str(denied) and str(workspace) in str(denied)
    assert denied.outside is not None and workspace not in denied.outside.parents
    assert denied.outside == Path(path).resolve(), "the resolved path, to ask about"


def test_a_sibling_that_shares_the_prefix_is_outside(workspace: Path) -> None:
    """Compared by components, not as strings: workspace-old is not in workspace."""
    denied = _denied(Confinement([workspace]), workspace.parent / "workspace-old" / "x")
    assert denied.outside == workspace.parent / "workspace-old" / "x"


def test_a_relative_path_is_denied(workspace: Path) -> None:
    denied = _denied(Confinement([workspace]), "src/app.py")
    assert str(denied) == "path must be absolute: src/app.py" and denied.outside is None


def test_extra_roots_are_inside(workspace: Path) -> None:
    other = workspace.parent / "workspace-old"
    confinement = Confinement([workspace, other])
    assert confinement.check(str(other / "x.txt")) == other / "x.txt"
    assert confinement.check(str(workspace / "link" / "workspace-old" / "y")) == other / "y"


@pytest.mark.parametrize(
    ("relative", "pattern"),
    [
        (".env", ".env"),
        ("src/.env.local", ".env.*"),
        ("deep/.ssh/id_rsa", "id_rsa*"),
        (".ssh/config", ".ssh/*"),
        ("deep/.ssh/known_hosts", ".ssh/*"),
        ("sub/.git/config", ".git/config"),
        ("certs/server.pem", "*.pem"),
        (".netrc", ".netrc"),
    ],
)
def test_secrets_are_denied_inside_the_workspace(
    workspace: Path, relative: str, pattern: str
) -> None:
    denied = _denied(Confinement([workspace]), workspace / relative)
    assert f"looks like a secret ({pattern})" in str(denied)
    assert denied.outside is None, "a secret is not offered to be asked about"


def test_a_secret_outside_the_workspace_is_denied_as_a_secret(workspace: Path) -> None:
    denied = _denied(Confinement([workspace]), workspace.parent / ".env")
    assert "looks like a secret (.env)" in str(denied) and denied.outside is None


@pytest.mark.parametrize(
    "relative", ["environment.py", "ssh/notes.md", "src/.envrc.md", "git/config"]
)
def test_names_that_only_resemble_secrets_are_allowed(workspace: Path, relative: str) -> None:
    assert Confinement([workspace]).check(str(workspace / relative)) == workspace / relative


def test_the_secret_patterns_are_the_settings(workspace: Path) -> None:
    confinement = Confinement([workspace], secrets=["*.secret"])
    assert confinement.check(str(workspace / ".env")) == workspace / ".env"
    assert "(*.secret)" in str(_denied(confinement, workspace / "db.secret"))
