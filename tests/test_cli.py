"""The goose-ls command line: --version, doctor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from goose_ls import __version__
from goose_ls.testing import write_fake_goose, write_script
from goose_ls.testing.harness import server_env
from goose_ls.testing.script import scripted_agent_command


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "goose_ls", *args],
        capture_output=True,
        text=True,
        env=server_env(tmp_path),
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


def test_demo_streams_a_reply_from_the_scripted_agent(tmp_path: Path) -> None:
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
