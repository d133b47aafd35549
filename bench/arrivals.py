"""When stamped chunks arrive, per session, and the figures drawn from that."""

from __future__ import annotations

import asyncio
import re
import time
from collections import defaultdict

_STAMP = re.compile(r"\d{20}")


class Arrivals:
    """(sent ns, received ns) of every stamped chunk, by session."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.by_session: defaultdict[str, list[tuple[int, int]]] = defaultdict(list)
        self.count = 0
        self.done = asyncio.Event()

    def add(self, session_id: str, text: str) -> None:
        """One update's text: a chunk, or chunks read in a row and joined (each begins
        with its 20-digit stamp)."""
        now = time.monotonic_ns()
        stamps = [int(stamp) for stamp in _STAMP.findall(text)]
        self.by_session[session_id] += [(stamp, now) for stamp in stamps]
        self.count += len(stamps)
        if self.count >= self.expected:
            self.done.set()

    @property
    def pairs(self) -> list[tuple[int, int]]:
        return [pair for pairs in self.by_session.values() for pair in pairs]

    def latencies_ms(self) -> list[float]:
        return [(received - sent) / 1e6 for sent, received in self.pairs]

    def first_sent_ns(self) -> int:
        return min(sent for sent, _ in self.pairs)

    def span_s(self, session_id: str | None = None) -> float:
        """From the first chunk written to the last one received."""
        pairs = self.by_session[session_id] if session_id else self.pairs
        return (max(r for _, r in pairs) - min(s for s, _ in pairs)) / 1e9


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]
