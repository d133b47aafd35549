"""The docs tell the truth: every command with its title, every setting, every env variable."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from goose_ls import settings
from goose_ls.lsp import capabilities
from goose_ls.lsp.commands import COMMANDS
from goose_ls.wire import camel

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _leaf_keys(cls: type, prefix: str = "") -> list[str]:
    keys = []
    for field in attrs.fields(cls):
        key = f"{prefix}{camel(field.name)}"
        if isinstance(field.type, type) and attrs.has(field.type):
            keys += _leaf_keys(field.type, f"{key}.")
        else:
            keys.append(key)
    return keys


def test_the_command_table_is_the_one_goose_ls_serves() -> None:
    text = (DOCS / "protocol.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(goose\.\w+)` \| ([^|]+) \|", text, re.MULTILINE)
    assert dict((name, title.strip()) for name, title in rows) == {
        name: command.title for name, command in COMMANDS.items()
    }
    assert tuple(COMMANDS) == capabilities.COMMANDS, "initialize declares the table's commands"


def test_the_helix_page_lists_every_command() -> None:
    """Helix has no plugin: its page's table is how a user learns the commands."""
    text = (DOCS / "editors" / "helix.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(goose\.\w+)` \|", text, re.MULTILINE))
    assert listed == set(COMMANDS)


def test_every_setting_and_its_variable_is_documented() -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    table = set(re.findall(r"^\| `([\w.]+)` \|", text, re.MULTILINE))
    keys = _leaf_keys(settings.Settings)
    assert set(keys) <= table, f"undocumented: {sorted(set(keys) - table)}"
    for key in keys:
        variable = settings.ENV_PREFIX + "_".join(
            re.sub(r"([A-Z])", r"_\1", part).upper() for part in key.split(".")
        )
        assert f"`{variable}`" in text, f"{variable} is not documented"
