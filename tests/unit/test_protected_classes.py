"""Protected paths by class: what makes something run or decide later, wherever it sits."""

from __future__ import annotations

import pytest

from goose_ls.workspace.protected import protected_class


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        (".git/commondir", "git's own files"),
        ("vendor/x/.git/hooks/post-checkout", "git's own files"),
        (".vscode/settings.json", "editor settings"),
        (".helix/languages.toml", "editor settings"),
        ("a/.nvim.lua", "editor settings"),
        (".dir-locals.el", "editor settings"),
        (".claude/settings.json", "an agent's settings"),
        (".mcp.json", "an agent's settings"),
        (".gemini/settings.json", "an agent's settings"),
        (".goose-ls/policy.json", "goose-ls's settings"),
        ("tools/rules.mk", "build files"),
        (".github/workflows/ci.yml", "build files"),
        ("GNUmakefile", "build files"),
    ],
)
def test_each_class_is_protected_wherever_it_sits(path: str, kind: str) -> None:
    assert protected_class(path) == kind


def test_the_rest_is_not_and_the_user_s_patterns_only_add() -> None:
    for path in ("src/app.py", "README.md", "git/notes.txt", "docs/vscode.md", "../.git/x"):
        assert protected_class(path) is None, path
    assert protected_class("deploy/run.sh", ["deploy/*.sh"]) is not None
    assert protected_class(".git/config", []) == "git's own files", "patterns never remove"
