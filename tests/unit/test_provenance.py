"""Who may set what: the module, the docs' table and the VS Code extension's manifest
agree, and a folder's answer that repeats the user's own is no attempt."""

from __future__ import annotations

import json
import re
from pathlib import Path

from goose_ls import provenance
from goose_ls.workspace.policy import Rule

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_table_is_the_module() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    section = text.split("### Who may set what", 1)[1].split("\n### ", 1)[0]
    rows = dict(re.findall(r"^\| `([\w.]+)` \| ([^|]+?) \|", section, re.MULTILINE))
    assert set(rows) == set(provenance.leaf_keys()), "every setting, once"
    assert {k for k, who in rows.items() if who == "you only"} == provenance.USER_ONLY
    assert {k for k, who in rows.items() if who == "a folder adds"} == provenance.FOLDER_ADDS


def test_the_vscode_extension_declares_every_setting_and_scopes_the_user_s() -> None:
    manifest = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    properties = manifest["contributes"]["configuration"]["properties"]
    declared = {key.removeprefix("goose."): p for key, p in properties.items()}
    assert set(declared) == {*provenance.leaf_keys(), "serverPath"}
    machine = {key for key, p in declared.items() if p.get("scope") == "machine"}
    assert machine == {*provenance.USER_ONLY, "serverPath"}
    restricted = manifest["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"]
    assert set(restricted) == {f"goose.{key}" for key in machine}


def test_a_folder_answer_that_repeats_the_user_s_is_no_attempt() -> None:
    """Neovim and Helix answer an item with a scopeUri as one without."""
    mine = {
        "agent": {"command": "goose acp", "sandbox": "off"},
        "policy": {"rules": [{"action": "allow", "kind": "read"}]},
        "workspace": {"secrets": [".env"]},
    }
    loaded, warnings = provenance.load([("yours", mine), ("folder", mine)], ["folder"], {})
    assert warnings == []
    assert loaded.agent.command == ["goose", "acp"] and loaded.agent.sandbox == "off"
    assert loaded.policy.rules == [Rule(action="allow", kind="read")]
    assert loaded.workspace.secrets == [".env"]


def test_a_folder_cannot_pick_a_preset_by_the_shorthand_nor_shorten_a_list() -> None:
    loaded, warnings = provenance.load(
        [("yours", {}), ("folder", {"agent": "claude", "workspace": {"secrets": []}})],
        ["folder"],
        {},
    )
    assert loaded.agent.preset == "goose"
    assert ".env" in loaded.workspace.secrets, "the defaults stay"
    assert len(warnings) == 1 and "'agent.preset' set by the folder, ignored" in warnings[0]
