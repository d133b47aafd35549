"""The floor of one Python hop (bench only): the least a relay between an LSP editor and an
ACP agent must do, and nothing more. It answers ``initialize`` (starting the agent named in
``initializationOptions``), ``goose/newSession`` and ``goose/prompt``; turns each of the
agent's ``session/update`` lines into a ``goose/update`` (decoded, wrapped, LSP-framed),
written to the editor once per loop turn; and ends a turn with ``goose/turnEnd``. No
validation, journal, transcript or recovery: what goose-ls is compared against."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from typing import Any


class Relay:
    def __init__(self) -> None:
        self.out: list[bytes] = []
        self.agent: asyncio.subprocess.Process | None = None
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.index = itertools.count(1)
        self.tasks: set[asyncio.Task[None]] = set()

    def run(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # --- the editor side ----------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        if not self.out:
            asyncio.get_running_loop().call_soon(self.flush)
        self.out.append(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def flush(self) -> None:
        os.write(sys.stdout.fileno(), b"".join(self.out))
        self.out.clear()

    async def serve(self) -> None:
        reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
        loop = asyncio.get_running_loop()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            header = await reader.readuntil(b"\r\n\r\n")
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            message = json.loads(await reader.readexactly(length))
            method = message.get("method")
            if method == "exit":
                return
            if "id" in message and method is not None:
                self.run(self.answer(message))

    async def answer(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params") or {}
        result: Any = None
        if method == "initialize":
            await self.start_agent(params["initializationOptions"]["agent"]["command"])
            result = {"capabilities": {}}
        elif method == "goose/newSession":
            created = await self.ask("session/new", {"cwd": os.getcwd(), "mcpServers": []})
            result = {"sessionId": created["sessionId"]}
        elif method == "goose/prompt":
            self.run(self.turn(params))
            result = {"sessionId": params["sessionId"], "messageId": params["messageId"]}
        self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def turn(self, params: dict[str, Any]) -> None:
        prompt = [{"type": "text", "text": params.get("prompt", "")}]
        ended = await self.ask(
            "session/prompt", {"sessionId": params["sessionId"], "prompt": prompt}
        )
        end = {"sessionId": params["sessionId"], "messageId": params["messageId"]}
        self.send({"jsonrpc": "2.0", "method": "goose/turnEnd", "params": {**end, **ended}})

    # --- the agent side -----------------------------------------------------------
    async def start_agent(self, command: list[str]) -> None:
        self.agent = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024,
        )
        self.run(self.read_agent())
        await self.ask("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

    async def ask(self, method: str, params: dict[str, Any]) -> Any:
        assert self.agent is not None and self.agent.stdin is not None
        request_id = next(self.ids)
        answer = self.waiting[request_id] = asyncio.get_running_loop().create_future()
        line = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.agent.stdin.write(json.dumps(line).encode() + b"\n")
        return await answer

    async def read_agent(self) -> None:
        assert self.agent is not None and self.agent.stdout is not None
        while line := await self.agent.stdout.readline():
            message = json.loads(line)
            if message.get("method") == "session/update":
                params = message["params"]
                update = {
                    "sessionId": params["sessionId"],
                    "messageId": None,
                    "index": next(self.index),
                    "update": params["update"],
                }
                self.send({"jsonrpc": "2.0", "method": "goose/update", "params": update})
            elif "id" in message and message["id"] in self.waiting:
                self.waiting.pop(message["id"]).set_result(message.get("result") or {})


async def main() -> None:
    relay = Relay()
    try:
        await relay.serve()
    finally:
        if relay.agent is not None and relay.agent.returncode is None:
            relay.agent.kill()


if __name__ == "__main__":
    asyncio.run(main())
