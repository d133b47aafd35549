"""Record one chat turn's goose/* notifications from a real goose-ls, as JSON lines.

    python scripts/record-goose-events.py SCRIPT.json FILE OUT.jsonl [QUESTION]

Starts ``python -m goose_ls`` with the scripted agent playing SCRIPT.json, opens a
session, asks QUESTION about all of FILE (a selection, as an editor sends it; FILE's folder
is the workspace) and writes the agent's last goose/agentStatus while it ran (its name), then every goose/update
and goose/turnEnd of the session in index order, to OUT.jsonl, each as
``{"method": ..., "params": ...}``. Editor plugins' models can be fed with them.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from goose_ls.scripted import scripted_agent_command
from goose_ls.tasks import within

# The goose/* recorder is in the tests' support package, which is not installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.editor import plain


async def record(script: Path, selection: dict[str, Any], question: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    ended = asyncio.Event()
    client = LanguageClient("record-goose-events", "1")

    @client.feature("goose/update")
    def on_update(params: Any) -> None:
        events.append({"method": "goose/update", "params": plain(params)})

    @client.feature("goose/turnEnd")
    def on_turn_end(params: Any) -> None:
        events.append({"method": "goose/turnEnd", "params": plain(params)})
        ended.set()

    statuses: list[dict[str, Any]] = []

    @client.feature("goose/agentStatus")
    def on_status(params: Any) -> None:
        statuses.append({"method": "goose/agentStatus", "params": plain(params)})

    with tempfile.TemporaryDirectory(prefix="goose-events-") as data:
        env = {**os.environ, "GOOSE_LS_LOG_DIR": str(Path(data) / "logs")}
        await client.start_io(sys.executable, "-m", "goose_ls", env=env)
        try:
            await client.initialize_async(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(),
                    root_uri=selection["uri"].rsplit("/", 1)[0],
                    initialization_options={
                        "agent": {"command": scripted_agent_command(script)},
                        "dataDir": data,
                    },
                )
            )
            client.initialized(types.InitializedParams())
            session = plain(await client.protocol.send_request_async("goose/newSession", {}))
            await client.protocol.send_request_async(
                "goose/prompt",
                {
                    "sessionId": session["sessionId"],
                    "messageId": str(uuid.uuid4()),
                    "prompt": question,
                    "context": [selection],
                },
            )
            await within(60, ended.wait())
        finally:
            await client.shutdown_async(None)
            client.exit(None)
            await client.stop()
    mine = [e for e in events if e["params"]["sessionId"] == session["sessionId"]]
    named = [s for s in statuses if "name" in s["params"]][-1:]  # the last, while it ran
    return named + sorted(mine, key=lambda e: int(e["params"]["index"]))


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    script, file, out = (Path(a) for a in argv[:3])
    question = argv[3] if len(argv) == 4 else "What does this function do?"
    lines = file.read_text(encoding="utf-8").count("\n") or 1
    selection = {
        "type": "selection",
        "uri": file.resolve().as_uri(),
        "startLine": 1,
        "endLine": lines,
    }
    events = asyncio.run(record(script, selection, question))
    out.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
