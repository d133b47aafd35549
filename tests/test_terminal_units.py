"""The terminal's output ring buffer and its environment filter, without a server."""

from __future__ import annotations

import time

from goose_ls.workspace.terminals import (
    DEFAULT_OUTPUT_LIMIT,
    MAX_OUTPUT_LIMIT,
    OutputBuffer,
    filter_env,
)


def test_the_buffer_keeps_the_last_bytes_from_a_character() -> None:
    buffer = OutputBuffer(6)
    for chunk in (b"\xc3\xa9" * 3, b"\xc3\xa9\xc3", b"\xa9end"):
        buffer.append(chunk)
    assert len(buffer) == 6 and buffer.truncated
    assert buffer.text() == "éend"


def test_the_limit_is_defaulted_and_capped() -> None:
    assert OutputBuffer(None).limit == DEFAULT_OUTPUT_LIMIT
    assert OutputBuffer(10**15).limit == MAX_OUTPUT_LIMIT


def test_appends_cost_their_chunk_not_the_whole_buffer() -> None:
    buffer = OutputBuffer(MAX_OUTPUT_LIMIT)
    chunk = b"x" * 4096
    started = time.perf_counter()
    for _ in range(20_000):  # 80 MB through an 8 MiB buffer: O(n^2) copies 100+ GB
        buffer.append(chunk)
    assert time.perf_counter() - started < 2.0
    assert len(buffer) == MAX_OUTPUT_LIMIT and buffer.truncated


def test_code_injecting_variables_are_dropped_unless_allowed() -> None:
    env = {"LD_PRELOAD": "a", "PATH": "/evil", "NODE_OPTIONS": "-r x", "FOO": "1"}
    kept, dropped = filter_env(env, ["NODE_OPTIONS"])
    assert kept == {"NODE_OPTIONS": "-r x", "FOO": "1"}
    assert dropped == ["LD_PRELOAD", "PATH"]
