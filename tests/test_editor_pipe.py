"""The editor's pipe as goose-ls reads it (on its event loop, see ``GooseLanguageServer.
start_io``): messages cut anywhere, several in one write, a large one, and a pipe closed
mid-message. The real goose-ls, written to byte by byte where it matters."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from goose_ls.scripted import scripted_agent_command, write_script
from support.harness import SERVER_COMMAND, server_env


def _framed(message: dict[str, Any]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


@contextmanager
def _goose_ls(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        SERVER_COMMAND,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=server_env(tmp_path),
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _write(process: subprocess.Popen[bytes], data: bytes) -> None:
    assert process.stdin is not None
    process.stdin.write(data)
    process.stdin.flush()


def _answer(out: IO[bytes], wanted: object) -> dict[str, Any]:
    """Read goose-ls's messages up to the answer to request ``wanted``."""
    while True:
        length = None
        while (line := out.readline()) != b"\r\n":
            assert line, f"goose-ls ended before answering {wanted}"
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        assert length is not None
        message: dict[str, Any] = json.loads(out.read(length))
        if message.get("id") == wanted and "method" not in message:
            return message


def _initialize(tmp_path: Path) -> dict[str, Any]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    script = write_script(tmp_path / "script.json", {"turns": [[{"text": "ok"}]]})
    return {
        "id": 1,
        "method": "initialize",
        "params": {
            "processId": None,
            "rootUri": workspace.as_uri(),
            "capabilities": {},
            "initializationOptions": {
                "dataDir": str(tmp_path / "data"),
                "agent": {"command": scripted_agent_command(script), "start": "lazy"},
            },
        },
    }


def test_messages_cut_anywhere_run_together_or_large_are_each_answered(tmp_path: Path) -> None:
    with _goose_ls(tmp_path) as process:
        assert process.stdout is not None
        initialize = _framed(_initialize(tmp_path))
        header_end = initialize.index(b"\r\n\r\n") + 4
        for at in range(header_end):  # the header a byte at a time, each read alone
            _write(process, initialize[at : at + 1])
            time.sleep(0.002)
        body = initialize[header_end:]
        _write(process, body[:7])
        time.sleep(0.05)
        _write(process, body[7:])
        assert "capabilities" in _answer(process.stdout, 1)["result"]

        together = b"".join(
            [
                _framed({"method": "initialized", "params": {}}),
                _framed({"id": 2, "method": "goose/status", "params": {}}),
                _framed({"id": 3, "method": "goose/status", "params": {}}),
            ]
        )
        _write(process, together)
        assert "sessions" in _answer(process.stdout, 2)["result"]
        assert "sessions" in _answer(process.stdout, 3)["result"]

        text = "x" * 3_000_000 + "\n"
        document = {"uri": (tmp_path / "big.txt").as_uri(), "languageId": "text"}
        opened = {"textDocument": {**document, "version": 1, "text": text}}
        _write(process, _framed({"method": "textDocument/didOpen", "params": opened}))
        _write(process, _framed({"id": 4, "method": "goose/status", "params": {}}))
        assert "sessions" in _answer(process.stdout, 4)["result"]

        _write(process, _framed({"id": 5, "method": "shutdown"}))
        assert _answer(process.stdout, 5)["result"] is None
        _write(process, _framed({"method": "exit"}))
        assert process.wait(timeout=30) == 0


def test_a_pipe_closed_mid_message_ends_goose_ls(tmp_path: Path) -> None:
    with _goose_ls(tmp_path) as process:
        assert process.stdout is not None and process.stdin is not None
        _write(process, _framed(_initialize(tmp_path)))
        _answer(process.stdout, 1)
        status = _framed({"id": 2, "method": "goose/status", "params": {}})
        _write(process, status[: len(status) - 10])
        process.stdin.close()
        process.wait(timeout=30)  # gone, not waiting for the rest for ever


def test_a_request_right_behind_a_notification_sees_its_effect(tmp_path: Path) -> None:
    """Both in one write, so both are read from the buffer at once: the settings the
    notification pushes are applied (by a task of pygls's) before the request is answered."""
    with _goose_ls(tmp_path) as process:
        assert process.stdout is not None
        _write(process, _framed(_initialize(tmp_path)))
        _answer(process.stdout, 1)
        mine = "Answer in one short paragraph."
        pushed = {"settings": {"goose": {"agent": {"systemPrompt": mine}}}}
        together = b"".join(
            [
                _framed({"method": "initialized", "params": {}}),
                _framed({"method": "workspace/didChangeConfiguration", "params": pushed}),
                _framed({"id": 2, "method": "goose/status", "params": {}}),
            ]
        )
        _write(process, together)
        assert _answer(process.stdout, 2)["result"]["settings"]["agent"]["systemPrompt"] == mine
