"""``goose-ls demo``: one chat turn through goose-ls, driven the way an editor drives it.

It starts ``goose-ls`` as a child process, speaks LSP to it (initialize, goose/newSession,
goose/prompt with a selection attached) and prints the reply as it streams in. It uses
goose when goose is installed, otherwise the scripted agent, and says which.
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

from goose_ls import settings as settings_model
from goose_ls.agent.discovery import resolve
from goose_ls.errors import AgentUnavailable
from goose_ls.scripted import scripted_agent_command, write_script

DEFAULT_QUESTION = "In two or three sentences, what does this code do?"

DEMO_REPLY = (
    "This is goose-ls's scripted demo agent, streaming its answer in small chunks "
    "as a real agent would. The selection you sent is the entry point of the goose-ls "
    "command: it parses the command line, sets up logging and then serves LSP over stdio "
    "or TCP, runs the doctor, or runs this demo. Install goose (1.16.0 or newer) and run "
    "`goose-ls demo` again to ask goose itself.\n"
)


def _demo_script(directory: Path) -> Path:
    """The scripted agent's one turn. Its chat id is new to this run (``idPrefix``): the
    demo's chat goes into the user's journal, which refuses an id it has already."""
    return write_script(
        directory / "demo-script.json",
        {
            "idPrefix": f"demo-{uuid.uuid4().hex[:8]}-",
            "turns": [
                [
                    {"thought": "Reading the selection.", "chunks": 3},
                    {
                        "toolCall": {
                            "toolCallId": "demo-1",
                            "title": "read · cli.py",
                            "rawInput": {"path": "cli.py"},
                        }
                    },
                    {"toolUpdate": {"toolCallId": "demo-1", "status": "completed"}},
                    {"text": DEMO_REPLY, "chunks": 60, "delay": 0.02},
                ]
            ],
        },
    )


async def _choose_agent(scripted: bool, workdir: Path) -> tuple[dict[str, Any], str]:
    settings, _ = settings_model.load([])
    if not scripted:
        try:
            launch = await resolve(settings.agent, os.environ)
            return {}, f"using {' '.join(launch.argv)} (goose {launch.version or '?'})"
        except AgentUnavailable as exc:
            reason = exc.message
    else:
        reason = "--scripted was given"
    command = scripted_agent_command(_demo_script(workdir))
    return {"agent": {"command": command}}, f"using the scripted demo agent ({reason})"


READABLE = "GOOSE_LS_AGENT_SANDBOX_READABLE"


def _demo_env(workdir: Path) -> dict[str, str]:
    """goose-ls's environment, the demo's own folder (its script) added to what the
    agent's sandbox may read: that setting's variable wins over any other."""
    env = dict(os.environ)
    try:
        readable = json.loads(env.get(READABLE, "[]"))
    except ValueError:
        readable = []
    readable = readable if isinstance(readable, list) else []
    env[READABLE] = json.dumps([*readable, str(workdir)])
    return env


def _selection(path: Path, lines: int = 20) -> dict[str, Any]:
    text = "".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:lines])
    return {
        "type": "selection",
        "uri": path.resolve().as_uri(),
        "text": text,
        "startLine": 1,
        "endLine": min(lines, text.count("\n") or 1),
    }


async def _run(question: str, file: Path, scripted: bool) -> int:
    with tempfile.TemporaryDirectory(prefix="goose-ls-demo-") as tmp:
        init_options, which = await _choose_agent(scripted, Path(tmp))
        print(f"goose-ls demo: {which}", file=sys.stderr, flush=True)
        client = LanguageClient("goose-ls-demo", "1")
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        @client.feature("goose/update")
        def on_update(params: Any) -> None:
            update = params.update
            kind = update.sessionUpdate
            if kind == "agent_message_chunk" and getattr(update.content, "type", "") == "text":
                print(update.content.text, end="", flush=True)
            elif kind == "tool_call":
                print(f"\n[tool] {update.title}", file=sys.stderr, flush=True)

        @client.feature("goose/turnEnd")
        def on_turn_end(params: Any) -> None:
            if not done.done():
                done.set_result(params)

        @client.feature("goose/agentStatus")
        def on_status(params: Any) -> None:
            print(f"[agent {params.state}] {params.message or ''}", file=sys.stderr, flush=True)

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_message(params: types.ShowMessageParams) -> None:
            print(f"[message] {params.message}", file=sys.stderr, flush=True)

        await client.start_io(sys.executable, "-m", "goose_ls", env=_demo_env(Path(tmp)))
        try:
            await client.initialize_async(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(),
                    root_uri=Path.cwd().as_uri(),
                    initialization_options=init_options,
                )
            )
            client.initialized(types.InitializedParams())
            session = await client.protocol.send_request_async("goose/newSession", {})
            print(f"session {session.sessionId}: {question}\n", file=sys.stderr, flush=True)
            await client.protocol.send_request_async(
                "goose/prompt",
                {
                    "sessionId": session.sessionId,
                    "messageId": str(uuid.uuid4()),
                    "prompt": question,
                    "context": [_selection(file)],
                },
            )
            end = await done
            print(flush=True)
            error = getattr(end, "error", None)
            outcome = error or getattr(end, "stopReason", None)
            print(f"turn ended: {outcome}", file=sys.stderr, flush=True)
            return 1 if error else 0
        finally:
            await client.shutdown_async(None)
            client.exit(None)
            await client.stop()


def run_demo(question: str | None, file: str | None, scripted: bool) -> int:
    target = Path(file) if file else Path(__file__).with_name("cli.py")
    return asyncio.run(_run(question or DEFAULT_QUESTION, target, scripted))
