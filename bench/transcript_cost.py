"""What one edit into an open transcript costs goose-ls, at ~0 MB and at ~10 MB.

The editor answers each ``workspace/applyEdit`` with ``textDocument/didChange`` first,
as Helix does (the edit's range as an incremental change, the next version). Each side
is a new goose-ls whose session had one turn: a line, or ~10 MB of 100-character lines
streamed in chunks of 100 KB while the transcript was closed (``transcript.maxBytes`` is
raised so that it stays in one file). The transcript is then opened and a second turn
streams 200 chunks of 50 characters (a line break every second chunk) at 20 a second,
with the default edit and save intervals. The figure is goose-ls's CPU time
(``/proc/<pid>/stat``, user and system) over that turn divided by the edits it sent:
the same chunks and about the same edits on both sides, so what differs is the size.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import attrs
from arrivals import Arrivals
from cases import Figure, agent_command, fresh, until
from goose_ls_side import GooseLsSide

LINE = 100
"""Characters in a line of the history, its line break included."""
CHUNKS, CHUNK_DELAY = 200, 0.05
BIG = 10 * 1024 * 1024


def _lines(size: int, tag: str) -> str:
    """About ``size`` characters of numbered lines of :data:`LINE` characters."""
    filler = "lorem ipsum dolor sit amet " * (LINE // 20)
    return "".join(f"{tag} {n:07d} {filler}"[: LINE - 1] + "\n" for n in range(size // LINE))


@attrs.frozen
class EditCost:
    cpu_ms_per_edit: float
    edits: int
    cpu_share: float
    """goose-ls's CPU time over the turn's wall time."""
    document_mb: float


async def _edit_cost(tmp: Path, history: str) -> EditCost:
    reply = _lines(CHUNKS * 50, "reply")
    turns: list[list[dict[str, Any]]] = [
        [{"text": history, "chunks": max(1, len(history) // 100_000)}],
        [{"text": reply, "chunks": CHUNKS, "delay": CHUNK_DELAY}],
    ]
    side = GooseLsSide(
        agent_command(tmp, {"turns": turns}),
        fresh(tmp),
        Arrivals(0),
        apply_edits=True,
        did_change=True,
        options={"transcript": {"maxBytes": 4 * BIG}},
    )
    await side.start()
    session = await side.new_session()
    await side.prompt(session)
    path = side.transcript(session)
    await until(lambda: path.exists() and path.stat().st_size > len(history))
    await asyncio.sleep(0.5)  # the turn's last write
    side.open_transcript(session)
    await side.editor.request("goose/status", None)  # the document is open
    await asyncio.sleep(0.5)
    edits, cpu, started = len(side.editor.edits), side.cpu_s(), asyncio.get_running_loop().time()
    await side.prompt(session)
    await asyncio.sleep(0.5)  # the last edit, an interval after the turn's end
    cpu = side.cpu_s() - cpu
    wall = asyncio.get_running_loop().time() - started
    edits = len(side.editor.edits) - edits
    size = path.stat().st_size / 1024 / 1024
    await side.stop()
    return EditCost(cpu * 1000 / max(edits, 1), edits, cpu / wall, size)


async def transcript_size(tmp: Path) -> list[Figure]:
    """The same turn into an open transcript of ~0 MB, then of ~10 MB."""
    small = await _edit_cost(tmp, "a short first answer\n")
    large = await _edit_cost(tmp, _lines(BIG, "history"))
    name = f"transcript {large.document_mb:.0f} MB vs 0 MB"
    return [
        Figure(
            name,
            "CPU per edit",
            "ms",
            large.cpu_ms_per_edit,
            small.cpu_ms_per_edit,
            "<= 1.5x",
            lambda ours, base: base is not None and ours <= 1.5 * base,
            ratio=True,
        ),
        Figure(name, "edits in the turn", "", large.edits, small.edits),
        Figure(
            name, "CPU share while streaming", "%", large.cpu_share * 100, small.cpu_share * 100
        ),
    ]
