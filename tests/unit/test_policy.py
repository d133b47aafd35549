"""The permission policy: which rule decides a tool call, and where rules come from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goose_ls.workspace.policy import Decision, Policy, Rule, ToolTarget


def _decide(rules: list[Rule], target: ToolTarget, root: str = "/w") -> str:
    return Policy(root, rules).decide(target).action


def test_what_no_rule_decides_is_asked() -> None:
    assert Policy("/w", []).decide(ToolTarget("execute", command="make")) == Decision(
        "ask", "no policy rule"
    )


def test_the_first_matching_rule_decides_and_says_so() -> None:
    rules = [Rule("ask", kind="edit", path="src/*.py"), Rule("allow", kind="edit")]
    policy = Policy("/w", rules)
    assert policy.decide(ToolTarget("edit", ("/w/src/a.py",))) == Decision(
        "ask", "policy rule ask (kind='edit', path='src/*.py')"
    )
    assert policy.decide(ToolTarget("edit", ("/w/b.py",))).action == "allow"


def test_deny_wins_over_an_earlier_allow() -> None:
    rules = [Rule("allow", kind="execute"), Rule("deny", kind="execute", command="rm -rf")]
    assert _decide(rules, ToolTarget("execute", command="rm -rf /")) == "deny"
    assert _decide(rules, ToolTarget("execute", command="ls")) == "allow"


@pytest.mark.parametrize(
    "line",
    [
        "rm -fr /",
        "rm -r -f /",
        "rm -v -rf /",
        "/bin/rm -fr --one-file-system /",
        'bash -c "rm -rf /"',
        "sh -lc 'cd / && rm -r -f .'",
        """bash -c "sh -c 'rm -fr ~'" """,
        "eval rm -rf /",
        "find . -exec rm -rf {} +",
        'busybox sh -c "rm -rf /"',
        "sudo -u root env X=1 rm -fr /",
    ],
)
def test_a_deny_rule_catches_its_command_however_spelled_or_wrapped(line: str) -> None:
    rules = [Rule("allow", kind="execute"), Rule("deny", kind="execute", command="rm -rf")]
    assert _decide(rules, ToolTarget("execute", command=line)) == "deny"


def test_a_deny_rule_needs_every_option_it_names() -> None:
    rules = [Rule("allow", kind="execute"), Rule("deny", kind="execute", command="rm -rf")]
    assert _decide(rules, ToolTarget("execute", command="rm -r build")) == "allow"
    assert _decide(rules, ToolTarget("execute", command="rmdir -rf")) == "allow"


def test_a_line_handed_to_a_shell_that_cannot_be_read_is_asked() -> None:
    rules = [Rule("allow", kind="execute")]
    assert _decide(rules, ToolTarget("execute", command="bash -c 'echo $('")) == "ask"


def test_a_command_rule_matches_a_prefix_of_the_command() -> None:
    rules = [Rule("allow", kind="execute", command="cargo ")]
    assert _decide(rules, ToolTarget("execute", command="cargo test")) == "allow"
    assert _decide(rules, ToolTarget("execute", command="  cargo build")) == "allow"
    assert _decide(rules, ToolTarget("execute", command="cargotest")) == "ask"
    assert _decide(rules, ToolTarget("execute")) == "ask", "no command, no match"


def test_a_kind_rule_matches_that_kind_only() -> None:
    rules = [Rule("allow", kind="read")]
    assert _decide(rules, ToolTarget("read", ("/w/a",))) == "allow"
    assert _decide(rules, ToolTarget("edit", ("/w/a",))) == "ask"


def test_a_path_rule_is_relative_to_the_workspace_and_needs_every_path_to_match() -> None:
    rules = [Rule("allow", path="docs/*"), Rule("deny", path="/etc/*")]
    assert _decide(rules, ToolTarget("edit", ("/w/docs/a.md",))) == "allow"
    assert _decide(rules, ToolTarget("edit", ("/w/docs/a.md", "/w/src/b.py"))) == "ask"
    assert _decide(rules, ToolTarget("read", ("/etc/passwd",))) == "deny"
    assert _decide(rules, ToolTarget("edit", ())) == "ask", "no paths, no match"


def test_a_rule_without_conditions_matches_everything() -> None:
    assert Rule("allow").describe() == "allow (everything)"
    assert _decide([Rule("allow")], ToolTarget("other")) == "allow"


def test_targets_describe_themselves_by_command_then_paths_then_kind() -> None:
    assert ToolTarget("execute", ("/w/a",), "make").describe() == "make, /w/a", "all it judged"
    assert ToolTarget("execute", (), "make", "/w").describe() == "make (in /w)"
    assert ToolTarget("edit", ("/w/a", "/w/b")).describe() == "/w/a, /w/b"
    assert ToolTarget("think").describe() == "think"


def _project(root: Path, content: str) -> None:
    (root / ".goose-ls").mkdir(exist_ok=True)
    (root / ".goose-ls" / "policy.json").write_text(content, encoding="utf-8")


def test_project_rules_come_before_the_user_s(tmp_path: Path) -> None:
    # A project rule that tightens (an untrusted one may only tighten).
    _project(tmp_path, json.dumps({"rules": [{"action": "ask", "kind": "read"}]}))
    policy, problem = Policy.load(str(tmp_path), [Rule("allow", kind="read"), Rule("deny")])
    assert problem is None
    assert policy.rules == [Rule("ask", kind="read"), Rule("allow", kind="read"), Rule("deny")]


def test_without_a_project_file_the_user_s_rules_apply(tmp_path: Path) -> None:
    policy, problem = Policy.load(str(tmp_path), [Rule("ask")])
    assert problem is None and policy.rules == [Rule("ask")]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('{"rules": [{"action": "maybe"}]}', "action: expected one of 'allow', 'ask', 'deny'"),
        ('{"rules": [', "Expecting"),
        ("[]", "expected an object, got list"),
        ('{"rules": {"action": "allow"}}', "rules: expected an array, got dict"),
        ('{"rules": ["allow"]}', "rules[0]: expected an object, got str"),
    ],
)
def test_a_bad_project_file_is_ignored_and_said_to_be(
    tmp_path: Path, content: str, why: str
) -> None:
    _project(tmp_path, content)
    policy, problem = Policy.load(str(tmp_path), [Rule("ask")])
    assert policy.rules == [Rule("ask")], "the user's rules still apply"
    assert problem is not None
    assert problem.startswith(f"{tmp_path / '.goose-ls' / 'policy.json'} was ignored: ")
    assert why in problem
