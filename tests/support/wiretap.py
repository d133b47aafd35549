"""A tap on the wire between goose-ls and a real agent, for tests: what goose-ls sent it.

``python tests/support/wiretap.py RECORD AGENT [ARGS...]`` runs the agent with its
stdio piped through this process, line by line and unchanged, and keeps what the
scripted agent keeps (see :mod:`goose_ls.scripted.peer`): every message goose-ls sent, in ``RECORD``, and
each request the agent sent (id and method) beside it, in ``RECORD.sent.jsonl``, so that
:func:`~support.conformance.schema_errors` checks them as it checks the scripted
agent's. Both ways, in order, are kept in ``RECORD.wire.jsonl``, ``{"from": "goose-ls" or
"agent", "message": ...}``: the agent's answers paired with what they answer. The agent's stderr is left as it is. The tap is in the agent's process group, so goose-ls's
signals reach both; it exits with the agent's code.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Literal

Keep = Callable[[dict[str, Any]], None]
"""What is done with each JSON-RPC message that goes by."""
Side = Literal["goose-ls", "agent"]


def sent_path(record: Path) -> Path:
    return record.with_suffix(".sent.jsonl")


def wire_path(record: Path) -> Path:
    return record.with_suffix(".wire.jsonl")


class Tap:
    """The files of one ``RECORD``, appended to from both directions' threads."""

    def __init__(self, record: Path) -> None:
        self.record = record
        self._lock = threading.Lock()

    def from_goose_ls(self, message: dict[str, Any]) -> None:
        with self._lock:
            _append(self.record, message)
            _append(wire_path(self.record), {"from": "goose-ls", "message": message})

    def from_agent(self, message: dict[str, Any]) -> None:
        with self._lock:
            _append(wire_path(self.record), {"from": "agent", "message": message})
            if "method" in message and "id" in message:
                _append(sent_path(self.record), {"id": message["id"], "method": message["method"]})


def _append(path: Path, entry: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")


def _pipe(source: IO[bytes], sink: IO[bytes], keep: Keep) -> None:
    """Copy ``source`` to ``sink`` line by line, each JSON object kept before it goes on
    (so that whatever it causes, a test that sees that finds it kept); then close ``sink``."""
    for line in iter(source.readline, b""):
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict):
            keep(message)
        try:
            sink.write(line)
            sink.flush()
        except OSError:  # the other end has gone: so has the conversation
            break
    with contextlib.suppress(OSError):
        sink.close()


def main(argv: list[str]) -> int:
    record, *command = argv
    tap = Tap(Path(record))
    agent = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    to_agent = (sys.stdin.buffer, agent.stdin, tap.from_goose_ls)
    threading.Thread(target=_pipe, args=to_agent, daemon=True).start()
    _pipe(agent.stdout, sys.stdout.buffer, tap.from_agent)
    return agent.wait()


def answers(record: Path, method: str, asker: Side = "goose-ls") -> list[dict[str, Any]]:
    """The answers (result or error) to each ``method`` request ``asker`` sent, in order:
    the agent's to goose-ls's, or goose-ls's to the agent's. An agent restarted numbers
    its requests again, hence the wire's order."""
    if not wire_path(record).exists():
        return []
    waiting: set[Any] = set()
    found = []
    for line in wire_path(record).read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        message = entry["message"]
        if entry["from"] == asker and message.get("method") == method and "id" in message:
            waiting.add(message["id"])
        elif entry["from"] != asker and "method" not in message and message.get("id") in waiting:
            waiting.discard(message["id"])
            found.append(message)
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
