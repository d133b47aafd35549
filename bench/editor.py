"""A lean LSP client for benchmarks: JSON in, JSON out, nothing else.

A real editor parses a message with its native JSON reader; a Python client that turns
every notification into typed objects would measure itself, not goose-ls. This one
frames messages, answers the server's requests the way an editor does (applies nothing,
but opens a transcript when asked to show it) and hands notifications to callbacks.
With ``did_change``, it answers each applied edit with ``textDocument/didChange`` first,
as Helix does: the edit's ranges as incremental changes, with the next version.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

Handler = Callable[[dict[str, Any]], None]


SERVER = ("-m", "goose_ls")
"""How goose-ls is run (after the interpreter)."""


class BenchEditor:
    def __init__(
        self, workdir: Path, *, apply_edits: bool = False, did_change: bool = False
    ) -> None:
        self.workdir = workdir
        self.apply_edits = apply_edits
        self.did_change = did_change
        self.versions: dict[str, int] = {}
        """The version of each document this editor opened."""
        self.handlers: dict[str, Handler] = {}
        self.edits: list[tuple[int, str]] = []
        """(monotonic ns when received, new text) of every ``workspace/applyEdit`` edit."""
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self.pid = 0

    async def start(
        self, *args: str, env: dict[str, str] | None = None, server: Sequence[str] = SERVER
    ) -> None:
        """Start goose-ls (``server``: what follows the Python interpreter to run it)."""
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            *server,
            "--log-level",
            "warning",
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, **(env or {})},
            limit=64 * 1024 * 1024,
        )
        self.pid = self._process.pid
        self._reader = asyncio.create_task(self._read())

    async def initialize(self, options: dict[str, Any]) -> dict[str, Any]:
        capabilities: dict[str, Any] = {"general": {"positionEncodings": ["utf-8", "utf-16"]}}
        if self.apply_edits:
            capabilities["workspace"] = {"applyEdit": True}
            capabilities["window"] = {"showDocument": {"support": True}}
        result = await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                # Named, as editors are: goose-ls takes a client without a name for an
                # eglot that questions edits of a file changed on disk.
                "clientInfo": {"name": "goose-ls bench"},
                "rootUri": self.workdir.as_uri(),
                "capabilities": capabilities,
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})
        return dict(result)

    async def request(self, method: str, params: Any) -> Any:
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return await future

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def open(self, uri: str, text: str) -> None:
        self.versions[uri] = 1
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}},
        )

    async def stop(self) -> None:
        if self._process is None:
            return
        await self.request("shutdown", None)
        self.notify("exit", None)
        await self._process.wait()
        if self._reader is not None:
            await self._reader

    async def killed(self) -> None:
        """Wait for the server killed under it to be gone, and read what it wrote first."""
        if self._process is None:
            return
        await self._process.wait()
        if self._reader is not None:
            with contextlib.suppress(asyncio.IncompleteReadError):  # a message cut short
                await self._reader

    def _send(self, message: dict[str, Any]) -> None:
        assert self._process is not None and self._process.stdin is not None
        body = json.dumps(message).encode()
        self._process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        stream = self._process.stdout
        while True:
            length = 0
            while True:
                line = await stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            self._dispatch(json.loads(await stream.readexactly(length)))

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            future = self._waiting.pop(message["id"], None)
            if future is not None and not future.done():
                if "error" in message:
                    future.set_exception(RuntimeError(message["error"].get("message")))
                else:
                    future.set_result(message.get("result"))
            return
        if "id" in message:
            self._answer(message["id"], method, message.get("params") or {})
            return
        handler = self.handlers.get(method)
        if handler is not None:
            handler(message.get("params") or {})

    def _answer(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        result: Any = None
        if method == "workspace/configuration":
            result = [None for _ in params.get("items", [])]
        elif method == "workspace/applyEdit":
            now = time.monotonic_ns()
            edit = params["edit"]
            by_uri = {c["textDocument"]["uri"]: c["edits"] for c in edit.get("documentChanges", [])}
            by_uri.update(edit.get("changes", {}))
            for uri, edits in by_uri.items():
                self.edits += [(now, e["newText"]) for e in edits]
                if self.did_change:
                    self._changed(uri, edits)
            result = {"applied": True}
        elif method == "window/showDocument":
            uri = params["uri"]
            self.open(uri, Path(uri.removeprefix("file://")).read_text(encoding="utf-8"))
            result = {"success": True}
        self._send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _changed(self, uri: str, edits: list[dict[str, Any]]) -> None:
        """The document changed by ``edits`` (ranges of the document before them): the
        last first, so each change's range is still right when it is applied."""
        if uri not in self.versions:
            return
        self.versions[uri] += 1
        ordered = sorted(
            edits,
            key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
            reverse=True,
        )
        self.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self.versions[uri]},
                "contentChanges": [{"range": e["range"], "text": e["newText"]} for e in ordered],
            },
        )
