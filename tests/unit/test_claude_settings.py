"""Claude Code's own ``permissions.defaultMode``, read as Claude reads it: the first
settings file that sets it decides, and a project's committed file cannot loosen it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goose_ls.agent import claude_settings
from goose_ls.agent.claude_settings import chosen_mode


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    managed = tmp_path / "etc" / "managed-settings.json"
    monkeypatch.setattr(claude_settings, "managed_path", lambda: managed)
    project = tmp_path / "project"
    return {
        "managed": managed,
        "local": project / ".claude" / "settings.local.json",
        "project": project / ".claude" / "settings.json",
        "user": tmp_path / "claude-home" / "settings.json",
        "home": tmp_path / "home" / ".claude" / "settings.json",
    }


def _set(path: Path, mode: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": {"defaultMode": mode}}), encoding="utf-8")


def _chosen(tmp_path: Path, with_config_dir: bool = True) -> str | None:
    environ = {"HOME": str(tmp_path / "home")}
    if with_config_dir:
        environ["CLAUDE_CONFIG_DIR"] = str(tmp_path / "claude-home")
    return chosen_mode(str(tmp_path / "project"), environ)


def test_no_file_sets_it(tmp_path: Path, places: dict[str, Path]) -> None:
    places["user"].parent.mkdir(parents=True)
    places["user"].write_text('{"permissions": {"allow": ["Read"]}}', encoding="utf-8")
    assert _chosen(tmp_path) is None


def test_the_user_s_file_in_claude_config_dir_else_in_home(
    tmp_path: Path, places: dict[str, Path]
) -> None:
    _set(places["home"], "acceptEdits")
    assert _chosen(tmp_path, with_config_dir=False) == "acceptEdits"
    assert _chosen(tmp_path) is None, "CLAUDE_CONFIG_DIR replaces ~/.claude"
    _set(places["user"], "plan")
    assert _chosen(tmp_path) == "plan"


def test_the_first_file_that_sets_it_decides(tmp_path: Path, places: dict[str, Path]) -> None:
    _set(places["user"], "plan")
    _set(places["project"], "default")
    assert _chosen(tmp_path) == "default"
    _set(places["local"], "acceptEdits")
    assert _chosen(tmp_path) == "acceptEdits"
    _set(places["managed"], "dontAsk")
    assert _chosen(tmp_path) == "dontAsk"


def test_a_committed_project_file_cannot_loosen_it(tmp_path: Path, places: dict[str, Path]) -> None:
    """Claude drops it, and then starts as if none were set (not in the user's)."""
    _set(places["user"], "plan")
    _set(places["project"], "bypassPermissions")
    assert _chosen(tmp_path) is None


def test_an_unreadable_file_is_no_choice(tmp_path: Path, places: dict[str, Path]) -> None:
    places["user"].parent.mkdir(parents=True)
    places["user"].write_text("{not json", encoding="utf-8")
    _set(places["home"], "plan")
    assert _chosen(tmp_path) is None
    places["user"].write_text('{"permissions": {"defaultMode": 3}}', encoding="utf-8")
    assert _chosen(tmp_path) is None
