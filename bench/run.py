"""goose-ls benchmarks, each figure side by side with a direct ACP client on the SDK.

    .venv/bin/python bench/run.py [CASE ...]   # prints a table, writes bench/results/<time>.json

Both sides talk to the same scripted agent in the same run. The agent stamps every chunk
with ``time.monotonic_ns()`` (one clock for every process on the machine), so latency is
the time from the agent writing a chunk to the client receiving it.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import attrs
from cases import CASES, Figure


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


async def main(names: list[str]) -> int:
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"unknown case(s): {', '.join(unknown)}; cases: {', '.join(CASES)}")
        return 2
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="goose-ls-bench-") as tmp:
        for name in names or list(CASES):
            print(f"running {name} ...", file=sys.stderr, flush=True)
            figures += await CASES[name](Path(tmp))
    print(table(figures))
    out = Path(__file__).parent / "results" / f"{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps([attrs.asdict(f) for f in figures], indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(sys.argv[1:])))
