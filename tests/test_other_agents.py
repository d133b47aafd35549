"""Agents other than goose: presets, sign-in, and the ways agents differ on the wire."""

from __future__ import annotations

import json
import os
import shlex

import anyio
import pytest
from pygls.exceptions import JsonRpcException

from goose_ls.scripted.script import scripted_agent_command
from support.harness import Editor
from support.turns import CLAUDE_PERMISSION_OPTIONS


async def test_a_missing_preset_binary_says_how_to_install_it(editor: Editor) -> None:
    await editor.start(settings={"agent": {"preset": "codex", "start": "eager"}})
    status = await editor.goose.agent_state("error")
    assert status["reason"] == "missing" and "codex-acp was not found" in status["message"]
    assert "npm install -g @zed-industries/codex-acp" in status["fix"]


async def test_sign_in_with_an_env_var_method_then_retry(editor: Editor) -> None:
    methods = [
        {"id": "login", "name": "Log in", "description": "Run `claude /login` in a terminal"},
        {"id": "api-key", "name": "API key", "type": "env_var", "vars": [{"name": "FAKE_API_KEY"}]},
    ]
    await editor.start(
        {"authMethods": methods, "requireAuth": True, "acceptAuth": ["api-key"]},
        settings={"agent": {"env": {"FAKE_API_KEY": "sk-test"}}},
    )
    sid = await editor.new_session()
    assert sid
    calls = [m["params"]["methodId"] for m in editor.received("authenticate")]
    assert calls == ["login", "api-key"], "the agent method is tried, then the env_var one"


async def test_without_a_usable_method_the_user_is_told_and_can_retry(editor: Editor) -> None:
    methods = [
        {"id": "login", "name": "Log in", "description": "Run `claude /login` in a terminal"}
    ]
    await editor.start({"authMethods": methods, "requireAuth": True, "acceptAuth": ["nothing"]})
    try:
        await editor.new_session()
    except Exception as exc:
        assert "claude /login" in str(exc)
    else:
        raise AssertionError("the session needs a sign-in")
    status = await editor.goose.agent_state("error")
    assert (
        status["reason"] == "auth_required" and "Log in: Run `claude /login`" in status["message"]
    )
    assert "goose.authenticate" in await editor.shown("claude /login")


async def test_goose_s_no_op_authenticate_keeps_working(editor: Editor) -> None:
    await editor.start({"requireAuth": True})
    assert await editor.new_session()
    assert [m["params"]["methodId"] for m in editor.received("authenticate")] == ["goose-provider"]


async def test_claude_style_permission_options_echo_the_exact_option_id(editor: Editor) -> None:
    await editor.start(
        {
            "turns": [
                [
                    {
                        "toolCall": {
                            "toolCallId": "e1",
                            "title": "Edit app.py",
                            "kind": "edit",
                            "status": "pending",
                        }
                    },
                    {
                        "permission": {
                            "toolCall": {"toolCallId": "e1", "title": "Edit app.py"},
                            "options": CLAUDE_PERMISSION_OPTIONS,
                        }
                    },
                ]
            ]
        }
    )
    sid = await editor.new_session()
    mid = await editor.prompt(sid)
    (asked,) = await editor.goose.wait_for(lambda: editor.goose.of_kind("permission_request"))
    assert [o["optionId"] for o in asked["options"]] == [
        "allow_always",
        "allow",
        "reject",
        "goose-ls:allow_session",
    ]
    await editor.goose.request(
        "goose/permission", {"requestId": asked["requestId"], "optionId": "allow"}
    )
    await editor.goose.turn_end(mid)
    assert editor.goose.text(mid) == "[permission: allow]"


async def test_a_second_tool_call_with_the_same_id_refines_the_first(editor: Editor) -> None:
    await editor.start(
        {
            "turns": [
                [
                    {"toolCall": {"toolCallId": "t1", "title": "Read"}},
                    {
                        "toolCall": {
                            "toolCallId": "t1",
                            "title": "Read app.py",
                            "kind": "read",
                            "locations": [{"path": "/w/app.py"}],
                        }
                    },
                    {
                        "toolUpdate": {
                            "toolCallId": "t1",
                            "status": "completed",
                            "content": [
                                {"type": "diff", "path": "/w/app.py", "newText": "x = 1\n"}
                            ],
                        }
                    },
                ]
            ]
        }
    )
    sid = await editor.new_session()
    await editor.goose.turn_end(await editor.prompt(sid))
    status = await editor.goose.request("goose/status", {})
    from pathlib import Path

    transcript = Path(status["sessions"][0]["transcript"].removeprefix("file://"))
    await editor.goose.wait_for(lambda: "completed" in transcript.read_text(encoding="utf-8"))
    text = transcript.read_text(encoding="utf-8")
    assert text.count("🔧") == 1, "one block for one tool call"
    assert "**🔧 Read app.py** · read — ✓ completed" in text and "`/w/app.py`" in text
    assert "+x = 1" in text, "a diff without oldText renders as a new file"


async def test_an_agent_without_session_capabilities_still_chats(editor: Editor) -> None:
    await editor.start(
        {
            "capabilities": {"loadSession": False, "promptCapabilities": {}},
            "turns": [[{"text": "Notice: using a default model.\n\nThe answer."}]],
        }
    )
    sid = await editor.new_session()
    listed = await editor.goose.request("goose/listSessions", {})
    assert [e["sessionId"] for e in listed["sessions"]] == [sid], "no session/list: local only"
    assert not editor.received("session/list")
    mid = await editor.prompt(sid, "hi")
    await editor.goose.turn_end(mid)
    assert editor.goose.text(mid) == "Notice: using a default model.\n\nThe answer."
    await editor.goose.request("goose/closeSession", {"sessionId": sid})
    assert not editor.received("session/close"), "no close capability: not sent"


async def test_a_terminal_sign_in_is_offered_and_told_as_the_exact_command(editor: Editor) -> None:
    """ACP's terminal auth: the agent lists it only to a client that takes it; the user runs
    the agent's own command with the method's arguments and environment."""
    methods = [
        {
            "id": "login",
            "name": "Log in",
            "type": "terminal",
            "args": ["--login", "--provider", "anthropic"],
            "env": {"LOGIN_MODE": "device code"},
        }
    ]
    await editor.start({"authMethods": methods, "requireAuth": True, "acceptAuth": ["nothing"]})
    try:
        await editor.new_session()
    except Exception as exc:
        told = str(exc)
    else:
        raise AssertionError("the session needs a sign-in")
    (initialize,) = editor.received("initialize")
    assert initialize["params"]["clientCapabilities"]["auth"] == {"terminal": True}
    assert editor.received("authenticate") == [], "a terminal method is never authenticate's"
    agent = scripted_agent_command(editor.tmp / "script.json")  # as goose-ls starts it
    line = "LOGIN_MODE='device code' " + shlex.join([*agent, "--login", "--provider", "anthropic"])
    assert f"run in a terminal: {line}" in told


async def test_a_terminal_sign_in_is_given_to_plugins_to_run_then_taken_up(
    editor: Editor,
) -> None:
    """The status names the terminal method; its command, asked for, is the agent's command
    and the method's arguments, in agent.env and the method's env, which a plugin runs as
    it stands; once it exited 0, goose/authenticate with its id connects to the agent anew,
    signed in. agent.env's values stay out of the status."""
    methods = [
        {"id": "key", "name": "API key", "type": "env_var", "vars": [{"name": "UNSET_KEY"}]},
        {
            "id": "login",
            "name": "Log in",
            "type": "terminal",
            "args": ["--login"],
            "env": {"LOGIN_MODE": "device code"},
        },
    ]
    kept = editor.tmp / "signed-in.json"
    secret = "sk-ant-api03-Zx9Qw8Er7Ty6Ui5Op4"
    script = {"authMethods": methods, "requireAuth": True, "terminalSignIn": str(kept)}
    await editor.start(script, settings={"agent": {"env": {"ANTHROPIC_API_KEY": secret}}})
    with pytest.raises(JsonRpcException, match="needs you to sign in"):
        await editor.new_session()
    status = (await editor.goose.request("goose/status", {}))["agent"]
    assert status["reason"] == "auth_required"
    assert status["signIn"] == [{"methodId": "login", "label": "Log in"}]
    assert secret not in json.dumps(editor.goose.statuses) + json.dumps(status)
    for wrong in ("goose/signInCommand", "goose/authenticate"):
        with pytest.raises(JsonRpcException, match="methodId: 'key' is not a terminal sign-in"):
            await editor.goose.request(wrong, {"methodId": "key"})
    sign_in = await editor.goose.request("goose/signInCommand", {"methodId": "login"})
    agent = scripted_agent_command(editor.tmp / "script.json")
    assert sign_in == {
        "command": agent[0],
        "args": [*agent[1:], "--login"],
        "env": {"ANTHROPIC_API_KEY": secret, "LOGIN_MODE": "device code"},
    }
    command = [sign_in["command"], *sign_in["args"]]
    env = {**os.environ, **sign_in["env"]}
    given_up = await anyio.run_process(command, input=b"\n", env=env, check=False)
    assert given_up.returncode == 1 and not kept.exists(), "no code typed: not signed in"
    ran = await anyio.run_process(command, input=b"4711\n", env=env, check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert json.loads(kept.read_text())["env"] == {"LOGIN_MODE": "device code"}
    first = status["pid"]
    answer = await editor.goose.request("goose/authenticate", {"methodId": "login"})
    assert answer["signedIn"] is True and answer["agent"]["state"] == "running"
    assert answer["agent"]["pid"] != first, "a new connection to the agent, as ACP v1 asks"
    assert "signIn" not in answer["agent"]
    assert await editor.new_session()
    assert editor.received("authenticate") == [], "a terminal method is never authenticate's"
