"""Start-up: ``initialize`` is answered before goose-ls loads its features, and the ACP
SDK only once an agent starts (docs/architecture.md, "Start-up").

The real goose-ls runs with ``-X importtime`` and its stderr on the pipe of its stdout:
each module imported is a line written before or after the ``initialize`` answer, in the
order they happened.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from goose_ls.scripted import scripted_agent_command, write_script
from support.harness import SERVER_COMMAND, server_env

LOADED_LATER = (
    "acp",  # the ACP SDK
    "pydantic",  # its models
    "goose_ls.sessions",  # chats, the agent's supervisor
    "goose_ls.sessions.journal",
    "sqlite3",  # the journal's database
    "goose_ls.settings",
    "goose_ls.workspace.watcher",
    "goose_ls.lsp.lifecycle",  # the features
    "goose_ls.lsp.commands",
)


@contextlib.contextmanager
def _goose_ls(tmp_path: Path, *python: str) -> Iterator[tuple[subprocess.Popen[bytes], Wire]]:
    """The real goose-ls (``python``: the interpreter's own options), its stderr on the
    pipe of its stdout; killed if the test left it running."""
    process = subprocess.Popen(
        [*SERVER_COMMAND[:1], *python, *SERVER_COMMAND[1:]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=server_env(tmp_path),
    )
    try:
        yield process, Wire(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


class Wire:
    """goose-ls's stdout and stderr, on one pipe: LSP messages, import lines between."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._in: IO[bytes] = process.stdin
        self._out: IO[bytes] = process.stdout
        self.imported: list[str] = []

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self._in.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self._in.flush()

    def next_message(self) -> dict[str, Any]:
        """The next LSP message; the modules imported before it go to ``imported``."""
        length = None
        while True:
            line = self._out.readline()
            assert line, f"goose-ls ended; it had imported {self.imported[-5:]}"
            if line.startswith(b"import time:"):
                name = line.decode().rsplit("|", 1)[1].strip()
                if name != "imported package":  # the header line
                    self.imported.append(name)
            elif line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
            elif line == b"\r\n" and length is not None:
                message: dict[str, Any] = json.loads(self._out.read(length))
                return message

    def stop(self, process: subprocess.Popen[bytes]) -> None:
        """Shut goose-ls down as an editor does; it exits with 0."""
        self.send({"id": "bye", "method": "shutdown"})
        assert self.until(lambda m: m.get("id") == "bye")["result"] is None
        self.send({"method": "exit"})
        assert process.wait(timeout=30) == 0

    def until(self, wanted: Any) -> dict[str, Any]:
        """Read to the first message ``wanted`` accepts; goose-ls's requests get null."""
        while True:
            message = self.next_message()
            if wanted(message):
                return message
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})


def test_initialize_is_answered_before_the_features_and_the_agent_sdk_load(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    script = write_script(tmp_path / "script.json", {"turns": [[{"text": "ok"}]]})
    with _goose_ls(tmp_path, "-X", "importtime") as (process, wire):
        wire.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": workspace.as_uri(),
                    "capabilities": {},
                    "initializationOptions": {
                        "dataDir": str(tmp_path / "data"),
                        "agent": {"command": scripted_agent_command(script)},
                    },
                },
            }
        )
        answer = wire.until(lambda m: m.get("id") == 1)
        before = set(wire.imported)
        assert "pygls.lsp.server" in before, "the import lines are read"
        assert "goose.ask" in answer["result"]["capabilities"]["executeCommandProvider"]["commands"]
        loaded = sorted(set(LOADED_LATER) & before)
        assert not loaded, f"imported before initialize was answered: {loaded}"

        wire.send({"method": "initialized", "params": {}})
        wire.send({"id": 2, "method": "goose/status", "params": {}})
        status = wire.until(lambda m: m.get("id") == 2)
        assert status["result"]["protocolVersion"] == 1
        assert "goose_ls.sessions" in wire.imported, "the features were loaded after it"
        assert "acp" not in wire.imported, "no agent has started yet"

        wire.until(
            lambda m: m.get("method") == "goose/agentStatus" and m["params"]["state"] == "running"
        )
        assert "acp" in wire.imported, "the SDK, once the agent started"
        wire.stop(process)


def test_a_request_before_initialize_is_refused_as_lsp_says(tmp_path: Path) -> None:
    """The features are not loaded before ``initialize``: a request then gets
    ServerNotInitialized (docs/protocol.md), not MethodNotFound."""
    with _goose_ls(tmp_path) as (process, wire):
        for n, method in enumerate(["goose/status", "workspace/executeCommand"], 1):
            wire.send({"id": n, "method": method, "params": {}})
            error = wire.until(lambda m, n=n: m.get("id") == n)["error"]
            assert error == {"code": -32002, "message": "goose-ls has not been initialized yet"}
        wire.stop(process)
