"""goose-ls talking to goose serve over a WebSocket (``agent.url``) against goose-ls
talking to the same scripted agent over stdio: the same turn, both in this run.

The served agent is the scripted agent played as goose serve (``goose_ls.scripted.serve``),
in a process of its own; its chunks carry the same stamps, so the figures compare the
whole relay, agent to editor, through each transport.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tests_on_path  # noqa: F401  (puts tests/ on sys.path for `support`)
from arrivals import Arrivals, percentile
from cases import Figure, fresh
from goose_ls_side import GooseLsSide

from goose_ls.scripted import scripted_agent_command, write_script
from goose_ls.tasks import within
from support.served import ServedAgent

TOKEN = "bench-token-not-secret"


async def _turn(side: GooseLsSide, arrivals: Arrivals) -> None:
    await side.start()
    await side.prompt(await side.new_session())
    await within(120, arrivals.done.wait())
    await side.stop()


async def _both(tmp: Path, steps: list[dict[str, Any]], expected: int) -> tuple[Arrivals, Arrivals]:
    """The turn over stdio, then over a WebSocket: (stdio, websocket)."""
    script = write_script(fresh(tmp) / "script.json", {"turns": [steps]})
    stdio = Arrivals(expected)
    await _turn(GooseLsSide(scripted_agent_command(script), fresh(tmp), stdio), stdio)
    server = ServedAgent(script, TOKEN)
    url = await server.start()
    websocket = Arrivals(expected)
    try:
        agent = {"url": url, "token": TOKEN, "start": "lazy"}
        side = GooseLsSide([], fresh(tmp), websocket, options={"agent": agent})
        await _turn(side, websocket)
    finally:
        await server.stop()
    return stdio, websocket


async def over_websocket(tmp: Path) -> list[Figure]:
    name = "websocket vs stdio"
    spaced_stdio, spaced_ws = await _both(tmp, [{"stamped": 2000, "rate": 500}], 2000)
    chunks = 10_000
    flood_stdio, flood_ws = await _both(tmp, [{"stamped": chunks, "size": 20}], chunks)
    return [
        Figure(
            name,
            "latency p50 (500/s)",
            "ms",
            percentile(spaced_ws.latencies_ms(), 0.5),
            percentile(spaced_stdio.latencies_ms(), 0.5),
            ratio=True,
        ),
        Figure(
            name,
            "latency p99 (500/s)",
            "ms",
            percentile(spaced_ws.latencies_ms(), 0.99),
            percentile(spaced_stdio.latencies_ms(), 0.99),
            ratio=True,
        ),
        Figure(
            name,
            f"chunks/s ({chunks}x20B)",
            "/s",
            chunks / flood_ws.span_s(),
            chunks / flood_stdio.span_s(),
        ),
    ]
