"""goose-ls benchmarks, each figure side by side with a direct ACP client on the SDK.

    .venv/bin/python bench/run.py [--repeat N] [CASE ...]

prints a table and writes bench/results/<time>.json. Each case runs N times (3 unless
told) and every figure is the median of its runs.

Both sides talk to the same scripted agent in the same run. The agent stamps every chunk
with ``time.monotonic_ns()`` (one clock for every process on the machine), so latency is
the time from the agent writing a chunk to the client receiving it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import attrs
import checkpoint_cost
import journal_cases
import paced
import websocket_case
from cases import RELAY_CASES, Figure
from transcript_cost import transcript_size

CASES = {
    **RELAY_CASES,
    "memory": journal_cases.memory,
    "memory-flat": journal_cases.memory_flat,
    "journal": journal_cases.journal_overhead,
    "replay": journal_cases.replay_after_restart,
    "kill": journal_cases.kill_mid_reply,
    "transcript-size": transcript_size,
    "paced": paced.paced,
    "many": paced.many_sessions,
    "websocket": websocket_case.over_websocket,
    "checkpoints": checkpoint_cost.checkpoints,
    "disk-watch": checkpoint_cost.disk_watch,
}


def table(figures: list[Figure]) -> str:
    lines = [
        f"{'case':<26}{'figure':<26}{'goose-ls':>12}{'baseline':>12}{'compared':>13}  target",
    ]
    for f in figures:
        base = f"{f.baseline:>12.2f}" if f.baseline is not None else f"{'':>12}"
        verdict = {True: " ok", False: " MISSED", None: ""}[f.met]
        lines.append(
            f"{f.case:<26}{f.name:<26}{f.goose_ls:>9.2f} {f.unit:<2}{base}{f.compared:>13}"
            f"  {f.target}{verdict}"
        )
    return "\n".join(lines)


def median_of(runs: list[list[Figure]]) -> list[Figure]:
    """Each figure's median over the runs (figures come in the same order every run)."""
    merged = []
    for same in zip(*runs, strict=True):
        bases = [f.baseline for f in same if f.baseline is not None]
        merged.append(
            attrs.evolve(
                same[0],
                goose_ls=statistics.median(f.goose_ls for f in same),
                baseline=statistics.median(bases) if bases else None,
            )
        )
    return merged


async def main(args: argparse.Namespace) -> int:
    unknown = [n for n in args.cases if n not in CASES]
    if unknown:
        print(f"unknown case(s): {', '.join(unknown)}; cases: {', '.join(CASES)}")
        return 2
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="goose-ls-bench-") as tmp:
        for name in args.cases or list(CASES):
            runs = []
            for run in range(args.repeat):
                print(f"running {name} ({run + 1}/{args.repeat})", file=sys.stderr, flush=True)
                runs.append(await CASES[name](Path(tmp)))
            figures += median_of(runs)
    print(table(figures))
    out = Path(__file__).parent / "results" / f"{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    rows = [
        {**attrs.asdict(f, filter=lambda a, _: a.name != "check"), "met": f.met} for f in figures
    ]
    out.write_text(json.dumps(rows, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="goose-ls against a direct ACP client")
    parser.add_argument("cases", nargs="*", help=f"cases to run (default all): {', '.join(CASES)}")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; figures are medians")
    raise SystemExit(asyncio.run(main(parser.parse_args())))
