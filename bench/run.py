"""goose-ls benchmarks, each side by side with a direct ACP client on the SDK.

    .venv/bin/python bench/run.py            # prints a table, writes bench/results/<time>.json

Both sides talk to the same scripted agent. The agent stamps every chunk with
``time.monotonic_ns()`` (one clock for every process on the machine), so the relay
latency is the time from the agent writing a chunk to the client receiving it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from acp import connect_to_agent
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from goose_ls.testing import scripted_agent_command, write_script

LIMIT = 64 * 1024 * 1024


class Arrivals:
    """Receive times of stamped chunks: (sent ns, received ns)."""

    def __init__(self, expected: int) -> None:
        self.pairs: list[tuple[int, int]] = []
        self.expected = expected
        self.done = asyncio.Event()

    def add(self, text: str) -> None:
        now = time.monotonic_ns()
        if text[:20].isdigit():
            self.pairs.append((int(text[:20]), now))
        if len(self.pairs) >= self.expected:
            self.done.set()


class DirectClient:
    """The floor: the SDK's client side, doing nothing but noting arrivals."""

    def __init__(self, arrivals: Arrivals) -> None:
        self.arrivals = arrivals

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        content = getattr(update, "content", None)
        if content is not None and getattr(content, "type", "") == "text":
            self.arrivals.add(content.text)

    async def request_permission(self, *_: Any, **__: Any) -> Any:
        raise RuntimeError("not used")


async def direct(command: list[str], workdir: Path, arrivals: Arrivals) -> dict[str, float]:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=LIMIT
    )
    assert process.stdin and process.stdout
    conn = connect_to_agent(DirectClient(arrivals), process.stdin, process.stdout)  # type: ignore[arg-type]
    await conn.initialize(protocol_version=1)
    initialized = time.perf_counter() - started
    session = await conn.new_session(cwd=str(workdir), mcp_servers=[])
    turn_started = time.perf_counter()
    await conn.prompt(session_id=session.session_id, prompt=[{"type": "text", "text": "go"}])  # type: ignore[list-item]
    elapsed = time.perf_counter() - turn_started
    process.kill()
    await process.wait()
    return {"initialize_s": initialized, "turn_s": elapsed}


async def via_goose_ls(command: list[str], workdir: Path, arrivals: Arrivals) -> dict[str, float]:
    client = LanguageClient("bench", "1")
    ended = asyncio.Event()

    @client.feature("goose/update")
    def on_update(params: Any) -> None:
        update = params.update
        if update.sessionUpdate == "agent_message_chunk":
            arrivals.add(update.content.text)

    @client.feature("goose/turnEnd")
    def on_end(_: Any) -> None:
        ended.set()

    env = {**os.environ, "GOOSE_LS_LOG_DIR": str(workdir / "logs"), "XDG_DATA_HOME": str(workdir)}
    started = time.perf_counter()
    await client.start_io(sys.executable, "-m", "goose_ls", "--log-level", "warning", env=env)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=workdir.as_uri(),
            initialization_options={
                "agent": {"command": command, "start": "lazy"},
                "dataDir": str(workdir / "data"),
            },
        )
    )
    initialized = time.perf_counter() - started
    client.initialized(types.InitializedParams())
    session = await client.protocol.send_request_async("goose/newSession", {})
    turn_started = time.perf_counter()
    await client.protocol.send_request_async(
        "goose/prompt",
        {"sessionId": session.sessionId, "messageId": str(uuid.uuid4()), "prompt": "go"},
    )
    await ended.wait()
    elapsed = time.perf_counter() - turn_started
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {"initialize_s": initialized, "turn_s": elapsed}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def case(name: str, chunks: int, size: int, tmp: Path) -> dict[str, Any]:
    script = write_script(tmp / f"{name}.json", {"turns": [[{"stamped": chunks, "size": size}]]})
    command = scripted_agent_command(script)
    row: dict[str, Any] = {"case": name, "chunks": chunks, "size": size}
    for side, run in (("direct", direct), ("goose-ls", via_goose_ls)):
        arrivals = Arrivals(chunks)
        timing = await run(command, tmp, arrivals)
        latencies_ms = [(received - sent) / 1e6 for sent, received in arrivals.pairs]
        row[side] = {
            **timing,
            "received": len(arrivals.pairs),
            "latency_p50_ms": percentile(latencies_ms, 0.50),
            "latency_p99_ms": percentile(latencies_ms, 0.99),
            "chunks_per_s": len(arrivals.pairs) / timing["turn_s"],
        }
    row["overhead_p50_ms"] = row["goose-ls"]["latency_p50_ms"] - row["direct"]["latency_p50_ms"]
    row["overhead_p99_ms"] = row["goose-ls"]["latency_p99_ms"] - row["direct"]["latency_p99_ms"]
    row["throughput_ratio"] = row["goose-ls"]["chunks_per_s"] / row["direct"]["chunks_per_s"]
    return row


async def main() -> int:
    cases = [
        ("small-10k", 10_000, 20),
        ("large-100x100KB", 100, 100_000),
        ("paced-latency", 2_000, 20),
    ]
    rows = []
    with tempfile.TemporaryDirectory(prefix="goose-ls-bench-") as tmp:
        for name, chunks, size in cases:
            rows.append(await case(name, chunks, size, Path(tmp)))
    print(f"{'case':<18}{'side':<10}{'p50 ms':>9}{'p99 ms':>9}{'chunks/s':>11}{'init s':>8}")
    for row in rows:
        for side in ("direct", "goose-ls"):
            r = row[side]
            print(
                f"{row['case']:<18}{side:<10}{r['latency_p50_ms']:>9.2f}{r['latency_p99_ms']:>9.2f}"
                f"{r['chunks_per_s']:>11.0f}{r['initialize_s']:>8.2f}"
            )
        print(
            f"{'':<18}{'overhead':<10}{row['overhead_p50_ms']:>9.2f}{row['overhead_p99_ms']:>9.2f}"
            f"{row['throughput_ratio']:>10.2f}x"
        )
    out = Path(__file__).parent / "results" / f"{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
