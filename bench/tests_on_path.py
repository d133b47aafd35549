"""Put tests/ on ``sys.path``: the benchmarks reuse the tests' support package
(tests/support, not installed). Import this module before any ``support`` module."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = str(Path(__file__).resolve().parent.parent / "tests")
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
