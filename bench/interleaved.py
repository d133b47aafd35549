"""What each tool call update costs goose-ls when the agent interleaves many tool calls.

    .venv/bin/python bench/interleaved.py [--sizes 50,100,200,400] [--repeat N]

One turn of N tool calls whose updates interleave, as an agent running calls in parallel
sends them: every call starts (call 1 start, call 2 start, ...), then each gets an
``in_progress`` update, then its output, then its ``completed``, one call after the other
in each round. In-process, through the real code: each update is merged into the
session's tool calls and drawn into the transcript by its renderer, and the edit that
brings the editor up to date is worked out after every update (as when updates come at a
model's pace, each in an edit of its own). The figure is the CPU time per update
(``time.process_time``), and the characters each edit carries, at each N; the ratio is
each size's time per update over the first size's, in the same run: 1 when the work per
update is bounded, growing with N when it is not.

Two shapes: ``parallel``, the tool calls of a coding agent (a title, a path, a few lines
of output); and ``small``, the least a tool call's block can be (a one-letter title, no
output), which puts the most blocks near the end of the transcript; and ``latest``, the
small calls started, then the one before the last updated again and again (the same
number of updates), each drawn again in place above the last.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from goose_ls import events
from goose_ls.lsp.transcript.render import Renderer
from goose_ls.lsp.transcript.text import TranscriptText
from goose_ls.tool_calls import ToolCalls

UPDATES_PER_CALL = 4
"""start, in_progress, output, completed."""
SHAPES = ("parallel", "small", "latest")


def interleaved(calls: int, shape: str) -> list[events.ToolCall | events.ToolCallUpdate]:
    """The updates of a turn of ``calls`` tool calls, interleaved."""
    small = shape != "parallel"
    ids = [f"c{n}" for n in range(calls)]
    sent: list[events.ToolCall | events.ToolCallUpdate] = [
        events.ToolCall(
            call,
            "r" if small else f"Read src/module_{n}.py",
            kind=None if small else "read",
            status="pending",
            raw_input=None if small else {"path": f"src/module_{n}.py"},
        )
        for n, call in enumerate(ids)
    ]
    if shape == "latest":  # the call before the last one, over and over
        updates = (calls * UPDATES_PER_CALL) - calls
        statuses = ("in_progress", "pending")
        return sent + [
            events.ToolCallUpdate(ids[-2], status=statuses[n % 2]) for n in range(updates)
        ]
    sent += [events.ToolCallUpdate(call, status="in_progress") for call in ids]
    for n, call in enumerate(ids):
        text = "" if small else f"def f{n}():\n    return {n}\n"
        output: list[dict[str, Any]] = [
            {"type": "content", "content": {"type": "text", "text": text}}
        ]
        sent.append(events.ToolCallUpdate(call, content=[] if small else output))
    sent += [events.ToolCallUpdate(call, status="completed") for call in ids]
    return sent


def per_update(calls: int, shape: str) -> tuple[float, float]:
    """CPU microseconds per update, and characters per edit, over one turn."""
    tracker = ToolCalls()
    text = TranscriptText("# chat\n\n")
    renderer = Renderer(text, lambda: tracker)
    renderer.render(events.UserMessageChunk({"type": "text", "text": "go"}))
    updates = interleaved(calls, shape)
    carried = 0
    started = time.process_time()
    for update in updates:
        tracker.apply(update)
        renderer.render(update)
        edit = text.take_pending()
        carried += len(edit.new_text) if edit is not None else 0
    spent = time.process_time() - started
    return spent * 1e6 / len(updates), carried / len(updates)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="50,100,200,400,3200", help="numbers of tool calls")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    for shape in SHAPES:
        times: dict[int, list[float]] = {size: [] for size in sizes}
        chars: dict[int, float] = {}
        for _ in range(args.repeat):
            for size in sizes:  # alternated: a busy moment falls on every size
                spent, chars[size] = per_update(size, shape)
                times[size].append(spent)
        medians = {size: statistics.median(found) for size, found in times.items()}
        base = medians[sizes[0]]
        print(f"shape {shape}")
        print(f"{'calls':>6} {'updates':>8} {'µs/update':>10} {'chars/edit':>11} {'ratio':>6}")
        for size, median in medians.items():
            updates = size * UPDATES_PER_CALL
            print(
                f"{size:>6} {updates:>8} {median:>10.1f} {chars[size]:>11.0f} {median / base:>6.2f}"
            )


if __name__ == "__main__":
    main()
