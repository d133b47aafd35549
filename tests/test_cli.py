"""The goose-ls command line: --version, doctor (of a command, and of goose serve at a URL)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

from goose_ls import __version__
from goose_ls.scripted import write_script
from goose_ls.scripted.agent import GOOSE_CAPABILITIES
from goose_ls.scripted.script import scripted_agent_command
from support.fake_goose import write_fake_goose
from support.harness import server_env
from support.served import ServedAgent


def _run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The command, run in a project of its own, as a user runs it in theirs (not in this
    checkout, whose thousands of files the sandbox's survey would walk at every run)."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "goose_ls", *args],
        capture_output=True,
        text=True,
        env=server_env(tmp_path, **env),
        cwd=project,
        timeout=120,
        check=False,
    )


def test_version(tmp_path: Path) -> None:
    result = _run(tmp_path, "--version")
    assert result.returncode == 0 and result.stdout.strip() == f"goose-ls {__version__}"


def test_doctor_reports_a_healthy_goose(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.json", {})
    binary = write_fake_goose(tmp_path / "bin", " 1.43.0", script)
    result = _run(tmp_path, "doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert f"binary       {binary}" in out
    assert "1.43.0 (minimum 1.16.0) ok" in out
    assert "initialize   ok" in out and "protocol 1" in out
    assert "loadSession" in out and "embeddedContext" in out
    assert "goose-provider (Configure Provider)" in out
    assert str(tmp_path / "logs") in out
    assert "All checks passed." in out


def test_doctor_fails_with_a_fix_for_a_missing_binary(tmp_path: Path) -> None:
    settings = {"agent": {"binaryPath": str(tmp_path / "missing" / "goose")}}
    result = _run(tmp_path, "doctor", "--settings", json.dumps(settings))
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert lines[-2].startswith("FAIL: goose was not found")
    assert lines[-1].startswith("fix: ")


def test_doctor_fails_with_a_fix_for_an_old_goose(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.json", {})
    write_fake_goose(tmp_path / "bin", "goose 1.15.9", script)
    result = _run(tmp_path, "doctor")
    assert result.returncode == 1
    assert "older than the minimum 1.16.0" in result.stdout
    assert "fix: Update goose" in result.stdout


def test_doctor_fails_when_the_agent_dies_at_start(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "script.json", {"startup": [{"exit": 2, "message": "no provider"}]}
    )
    write_fake_goose(tmp_path / "bin", " 1.43.0", script)
    result = _run(tmp_path, "doctor")
    assert result.returncode == 1
    assert "FAIL: initialize failed" in result.stdout and "no provider" in result.stdout


async def test_doctor_checks_goose_serve_at_a_url(tmp_path: Path) -> None:
    server = ServedAgent(write_script(tmp_path / "script.json", {}), "s3cret-token")
    url = await server.start()
    try:
        good = await asyncio.to_thread(
            _run, tmp_path, "doctor", "--url", url, GOOSE_LS_AGENT_TOKEN="s3cret-token"
        )
        wrong = await asyncio.to_thread(
            _run, tmp_path, "doctor", "--url", url, GOOSE_LS_AGENT_TOKEN="another"
        )
    finally:
        await server.stop()
    assert good.returncode == 0, good.stdout + good.stderr
    assert f"agent url    {url}" in good.stdout
    assert "token        from GOOSE_LS_AGENT_TOKEN" in good.stdout
    assert "reachable    GET /status: 200 OK 'ok'" in good.stdout
    assert "auth         token accepted" in good.stdout
    assert "initialize   ok" in good.stdout and "All checks passed." in good.stdout
    assert wrong.returncode == 1
    assert "reachable    GET /status: 200 OK" in wrong.stdout, "reached, then refused"
    assert f"FAIL: authentication failed: goose serve at {url} refused the token" in wrong.stdout
    assert "fix: Set GOOSE_LS_AGENT_TOKEN" in wrong.stdout
    assert "s3cret-token" not in good.stdout + wrong.stdout


def test_doctor_names_a_url_where_nothing_answers(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"ws://127.0.0.1:{sock.getsockname()[1]}/acp"  # bound, not listening
        result = _run(tmp_path, "doctor", "--url", url)
    assert result.returncode == 1
    assert f"FAIL: nothing answers at {url}" in result.stdout
    assert "fix: Start goose serve there" in result.stdout


def test_demo_streams_a_reply_from_the_scripted_agent_again_and_again(tmp_path: Path) -> None:
    """Run twice on one data dir (the user's, a person trying it again): each run's chat is
    a chat of its own, never refused as one the journal has."""
    for _ in range(2):
        result = _run(tmp_path, "demo", "--scripted")
        assert result.returncode == 0, result.stderr
        assert "scripted demo agent" in result.stderr
        assert "streaming its answer in small chunks" in result.stdout
        assert "turn ended: end_turn" in result.stderr


def test_doctor_names_the_agent_it_runs_not_goose(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "script.json", {"agentInfo": {"name": "claude-code-acp", "version": "0.9.0"}}
    )
    settings = {"agent": {"command": scripted_agent_command(script)}}
    result = _run(tmp_path, "doctor", "--settings", json.dumps(settings))
    assert result.returncode == 0, result.stdout + result.stderr
    (agent,) = [line for line in result.stdout.splitlines() if line.startswith("  agent ")]
    assert "(agent.command)" in agent and "goose" not in agent.split(":")[0], agent
    assert "initialize   ok" in result.stdout and "claude-code-acp 0.9.0" in result.stdout


def test_doctor_says_whether_the_agent_takes_a_system_prompt(tmp_path: Path) -> None:
    """``sessionCapabilities.systemPrompt``, which the SDK drops from its model: doctor
    reads it as the agent sent it, and says whether agent.systemPrompt would go."""
    takes = {
        **GOOSE_CAPABILITIES,
        "sessionCapabilities": {"systemPrompt": {"mode": {"override": {}}}},
    }
    found = {}
    for name, capabilities in (("takes", takes), ("not", GOOSE_CAPABILITIES)):
        script = write_script(tmp_path / f"{name}.json", {"capabilities": capabilities})
        agent = {"command": scripted_agent_command(script), "systemPrompt": "Be brief."}
        result = _run(tmp_path, "doctor", "--settings", json.dumps({"agent": agent}))
        assert result.returncode == 0, result.stdout + result.stderr
        (line,) = [x for x in result.stdout.splitlines() if x.startswith("  systemPrompt ")]
        found[name] = line.removeprefix("  systemPrompt ")
    assert found == {
        "takes": "taken (append, override)",
        "not": "not taken: agent.systemPrompt is not sent",
    }
