"""Settings: initializationOptions, then workspace/configuration, then GOOSE_LS_*
variables, each later one winning; a bad value is named in a warning and changes nothing."""

from __future__ import annotations

from goose_ls import settings
from goose_ls.agent.presets import PRESETS
from goose_ls.workspace.policy import Rule


def test_settings_are_layered_and_the_environment_wins() -> None:
    loaded, warnings = settings.load(
        [
            (
                "initializationOptions",
                {"goose": {"agent": {"command": "goose acp", "start": "lazy"}}},
            ),
            ("workspace/configuration", {"agent": {"args": ["--with-builtin", "developer"]}}),
        ],
        {"GOOSE_LS_AGENT_START": "eager", "GOOSE_LS_AGENT_ENV": '{"GOOSE_MODE": "approve"}'},
    )
    assert warnings == []
    assert loaded.agent.command == ["goose", "acp"]
    assert loaded.agent.args == ["--with-builtin", "developer"]
    assert loaded.agent.start == "eager"
    assert loaded.agent.env == {"GOOSE_MODE": "approve"}


def test_mistyped_settings_keep_their_defaults_and_say_why() -> None:
    loaded, warnings = settings.load(
        [("x", {"agent": {"start": "later", "requestTimeout": "soon", "env": {"A": 1}}})],
        {"GOOSE_LS_AGENT_CHECK_VERSION": "maybe"},
    )
    assert loaded.agent == settings.AgentSettings()
    joined = "\n".join(warnings)
    assert "'agent.start' expected one of 'eager', 'lazy', got 'later'" in joined
    assert "'agent.requestTimeout' expected float, got str" in joined
    assert "agent.env" in joined
    assert "GOOSE_LS_AGENT_CHECK_VERSION" in joined


def test_settings_that_are_not_an_object_are_refused() -> None:
    loaded, warnings = settings.load([("initializationOptions", ["goose"])], {})
    assert loaded == settings.Settings()
    assert "must be an object" in warnings[0]


def test_a_string_where_a_list_belongs_is_refused_not_split_into_characters() -> None:
    loaded, warnings = settings.load([("x", {"agent": {"args": "--with-builtin"}})], {})
    assert loaded.agent.args == []
    assert "'agent.args' expected a list, got str" in warnings[0]


def test_a_broken_json_command_in_the_environment_is_a_warning() -> None:
    loaded, warnings = settings.load([], {"GOOSE_LS_AGENT_COMMAND": '["goose", '})
    assert loaded.agent.command == [], "still the preset's command"
    assert "GOOSE_LS_AGENT_COMMAND" in warnings[0]


def test_the_goose_section_is_taken_from_a_payload_with_other_sections() -> None:
    payload = {"python": {"x": 1}, "goose": {"agent": {"start": "lazy"}}}
    loaded, warnings = settings.load([("didChangeConfiguration", payload)], {})
    assert loaded.agent.start == "lazy" and warnings == []


def test_an_empty_lua_table_is_an_empty_section() -> None:
    loaded, warnings = settings.load([("didChangeConfiguration", {"goose": []})], {})
    assert loaded == settings.Settings() and warnings == []


def test_presets_name_their_command_and_a_string_picks_one() -> None:
    loaded, warnings = settings.load([("initializationOptions", {"agent": "claude"})], {})
    assert warnings == [] and loaded.agent.preset == "claude" and loaded.agent.command == []
    assert PRESETS["claude"].command == ("claude-agent-acp",)
    assert PRESETS["gemini"].command == ("gemini", "--experimental-acp")
    assert PRESETS["goose"].minimum_version == (1, 16, 0)
    assert all(p.minimum_version is None for name, p in PRESETS.items() if name != "goose")


def test_a_later_source_wins_and_a_bad_later_value_keeps_the_earlier_one() -> None:
    loaded, warnings = settings.load(
        [
            ("initializationOptions", {"agent": {"start": "lazy", "requestTimeout": 5}}),
            ("workspace/configuration", {"agent": {"requestTimeout": 7, "start": "later"}}),
        ],
        {},
    )
    assert loaded.agent.request_timeout == 7.0
    assert loaded.agent.start == "lazy"
    assert warnings == [
        "workspace/configuration: 'agent.start' expected one of 'eager', 'lazy', "
        "got 'later'; keeping \"lazy\""
    ]


def test_a_later_list_or_object_replaces_the_earlier_one_whole() -> None:
    loaded, _ = settings.load(
        [
            ("initializationOptions", {"agent": {"env": {"A": "1"}, "args": ["-x"]}}),
            ("workspace/configuration", {"agent": {"env": {"B": "2"}, "args": ["-y"]}}),
        ],
        {},
    )
    assert loaded.agent.env == {"B": "2"} and loaded.agent.args == ["-y"]


def test_a_command_string_is_split_as_a_shell_would() -> None:
    loaded, _ = settings.load([("x", {"agent": {"command": "my-agent --name 'a b'"}})], {})
    assert loaded.agent.command == ["my-agent", "--name", "a b"]


def test_environment_variables_are_json_or_plain_strings() -> None:
    loaded, warnings = settings.load(
        [],
        {
            "GOOSE_LS_TRANSCRIPT_EDIT_INTERVAL": "0.5",
            "GOOSE_LS_AGENT_CHECK_VERSION": "false",
            "GOOSE_LS_AGENT_ARGS": '["--a"]',
            "GOOSE_LS_AGENT_PRESET": "claude",
            "GOOSE_LS_AGENT_BINARY_PATH": "/opt/goose",
            "GOOSE_LS_AGENT_COMMAND": "my agent --x",
            "GOOSE_LS_DATA_DIR": "/data",
        },
    )
    assert warnings == []
    assert loaded.transcript.edit_interval == 0.5
    assert loaded.agent.check_version is False
    assert loaded.agent.args == ["--a"]
    assert loaded.agent.preset == "claude" and loaded.agent.binary_path == "/opt/goose"
    assert loaded.agent.command == ["my", "agent", "--x"]
    assert loaded.data_dir == "/data"


def test_an_environment_variable_that_is_not_json_is_a_warning() -> None:
    loaded, warnings = settings.load([], {"GOOSE_LS_AGENT_ENV": "OPENAI_API_KEY=sk-1"})
    assert loaded.agent.env == {}
    assert warnings == ["environment: GOOSE_LS_AGENT_ENV=<redacted> is not valid JSON; ignored"], (
        "agent.env holds secrets: the value is not repeated"
    )


def test_unknown_settings_and_sections_that_are_not_objects_are_named() -> None:
    loaded, warnings = settings.load(
        [("initializationOptions", {"agent": {"colour": "blue"}, "transcript": 5, "x": 1})], {}
    )
    assert loaded == settings.Settings()
    assert warnings == [
        "initializationOptions: unknown setting 'agent.colour' ignored",
        "initializationOptions: 'transcript' must be an object; ignored",
        "initializationOptions: unknown setting 'x' ignored",
    ]


def test_policy_rules_are_read_and_a_bad_one_is_named() -> None:
    rules = [{"action": "allow", "kind": "read"}, {"action": "deny", "command": "rm -rf"}]
    loaded, warnings = settings.load([("x", {"policy": {"rules": rules}})], {})
    assert warnings == []
    assert loaded.policy.rules == [Rule("allow", kind="read"), Rule("deny", command="rm -rf")]
    loaded, warnings = settings.load([("x", {"policy": {"rules": [{"action": "x"}]}})], {})
    assert loaded.policy.rules == []
    assert warnings == [
        "x: 'policy.rules' [0].action: expected one of 'allow', 'ask', 'deny', got 'x'; keeping []"
    ]


def test_a_bad_rule_after_good_ones_keeps_the_good_ones() -> None:
    good = [{"action": "allow", "kind": "read"}]
    loaded, warnings = settings.load(
        [("x", {"policy": {"rules": good}}), ("y", {"policy": {"rules": [{"action": "x"}]}})],
        {},
    )
    assert loaded.policy.rules == [Rule("allow", kind="read")]
    assert "'policy.rules' [0].action" in warnings[0]


def test_the_effective_settings_are_described_in_camel_case() -> None:
    described = settings.describe(settings.Settings())
    assert list(described) == [
        "agent",
        "transcript",
        "journal",
        "workspace",
        "checkpoints",
        "terminal",
        "images",
        "policy",
        "dataDir",
    ]
    assert described["journal"] == {"maxAgeDays": 90, "maxBytes": 1 << 30}
    assert described["agent"]["checkVersion"] is True
    assert described["transcript"]["editInterval"] == 0.25
    assert ".env" in described["workspace"]["secrets"]


def test_a_bad_agent_env_never_repeats_the_values_it_keeps_or_was_given() -> None:
    """agent.env holds API keys: a warning about it names the problem, not the values."""
    first = ("init", {"agent": {"env": {"OPENAI_API_KEY": "sk-live-123"}}})
    for bad in ({"OPENAI_API_KEY": 5}, "sk-new-456"):
        loaded, warnings = settings.load(
            [first, ("cfg", {"agent": {"env": bad}})], {"GOOSE_LS_AGENT_ENV": "{sk-env-789"}
        )
        assert loaded.agent.env == {"OPENAI_API_KEY": "sk-live-123"}
        assert len(warnings) == 2
        assert not [w for w in warnings if "sk-" in w], warnings


def test_a_path_map_is_checked_whole_and_a_bad_one_keeps_the_earlier() -> None:
    good = {"agent": {"pathMap": {"/home/me/proj/": "/workspace"}}}
    loaded, warnings = settings.load(
        [("initializationOptions", good), ("x", {"agent": {"pathMap": {"/a": "/w", "/b": "/w"}}})],
        {"GOOSE_LS_AGENT_PATH_MAP": '{"srv": "/srv"}'},
    )
    assert loaded.agent.path_map.to_local("/workspace/x") == "/home/me/proj/x"
    assert warnings == [
        "x: 'agent.pathMap' '/b': the agent's folder /w is mapped from /a too: its paths "
        'would have two local meanings; keeping {"/home/me/proj": "/workspace"}',
        "environment: 'agent.pathMap' 'srv' -> '/srv': both folders must be absolute "
        'paths; keeping {"/home/me/proj": "/workspace"}',
    ]
    assert settings.describe(loaded)["agent"]["pathMap"] == {"/home/me/proj": "/workspace"}
