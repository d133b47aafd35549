"""For tests and benchmarks: the scripted agent served over WebSocket (as ``goose serve``
serves goose, see :mod:`goose_ls.scripted.serve`) in a process of its own, killed and started again on
the same port as a restarted server is."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from goose_ls.scripted.script import scripted_server_command
from goose_ls.scripted.serve import SECRET_VARIABLE
from goose_ls.tasks import within

START_WITHIN = 30.0


class ServedAgent:
    """``goose serve`` played by the scripted agent on 127.0.0.1."""

    def __init__(
        self,
        script: Path,
        token: str,
        cert: Path | None = None,
        key: Path | None = None,
    ) -> None:
        self.script = script
        self.token = token
        self.cert = cert
        self.key = key
        self.url = ""
        self.port = 0
        self.fingerprint = ""
        """What it printed as ``GOOSED_CERT_FINGERPRINT`` (TLS only)."""
        self._process: asyncio.subprocess.Process | None = None

    async def start(self, port: int = 0) -> str:
        """Start it (on ``port``, any free one when 0) and return its ``/acp`` URL."""
        command = scripted_server_command(self.script, port or self.port, self.cert, self.key)
        with self.script.with_suffix(".server.log").open("ab") as errors:
            process = self._process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=errors,
                env={**os.environ, SECRET_VARIABLE: self.token},
            )
        assert process.stdout is not None
        self.url = ""
        while not self.url:
            line = (await within(START_WITHIN, process.stdout.readline())).decode()
            if not line:
                raise RuntimeError(f"the served agent did not start: {command}")
            key, _, value = line.strip().partition("=")
            if key == "GOOSED_CERT_FINGERPRINT":
                self.fingerprint = value
            elif line.startswith("listening on "):
                self.url = line.split()[-1]
                self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])
        return self.url

    async def kill(self) -> None:
        """Kill it at once, as a crash or a restart of the server does."""
        process = self._process
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()

    async def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            await self.kill()
