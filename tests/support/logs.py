"""Reading goose-ls's log in tests: which tracebacks in it are failures."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from pygls.exceptions import JsonRpcException, JsonRpcInternalError

_RECORD = re.compile(r"^\d{4}-\d\d-\d\d [\d:,]+ [A-Z]+ (\S+): (.*)$", re.MULTILINE)
_TRACEBACK = "Traceback (most recent call last):"
_RAISED = re.compile(r"([\w.]+)\.(\w+)(?::|$)")


def unexpected_tracebacks(log: str) -> list[str]:
    """The records of goose-ls's ``log`` with a traceback that goose-ls did not mean.

    pygls logs a traceback for two things goose-ls does on purpose, and those are left
    out: answering a request with a JSON-RPC error (a ``JsonRpcException`` such as an
    InvalidParams that names the bad field; not an internal error, which is an exception
    nobody caught), and reading a message that does not fit the LSP schema (which goose-ls
    answers with InvalidParams). Any other traceback, such as an exception in a background
    task, is returned.
    """
    return _judge(log, 0, len(log))


def _judge(log: str, start: int, end: int) -> list[str]:
    """The unexpected tracebacks among the records of ``log[start:end]`` (``start`` is
    where a record begins)."""
    heads = list(_RECORD.finditer(log, start, end))
    ends = [m.start() for m in heads[1:]] + [end][: len(heads)]
    return [
        log[head.start() : stop]
        for head, stop in zip(heads, ends, strict=True)
        if _TRACEBACK in log[head.start() : stop]
        and not _pygls_on_purpose(head.group(1), head.group(2), log[head.start() : stop])
    ]


class LogWatch:
    """goose-ls's log in ``log_dir``, read as it grows: each record is judged once it is
    whole, so checking after every fuzz example does not read megabytes each time."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self._judged: list[str] = []
        self._settled = 0
        """Where the last record read begins; every record before it is judged."""

    def unexpected_tracebacks(self) -> list[str]:
        """Every unexpected traceback in the log so far (see ``unexpected_tracebacks``)."""
        log = read_log(self.log_dir)
        if len(log) < self._settled:  # rotated past what is kept: judge it all again
            self._judged, self._settled = [], 0
        heads = list(_RECORD.finditer(log, self._settled))
        if not heads:
            return list(self._judged)
        last = heads[-1].start()  # the last record may still be growing
        self._judged += _judge(log, self._settled, last)
        self._settled = last
        # A record is written whole, at once: one that does not end a line is being written.
        return self._judged + (_judge(log, last, len(log)) if log.endswith("\n") else [])

    def says(self, text: str) -> bool:
        """Whether a record of the log holds ``text`` (what a test waits for when what
        goose-ls did is seen nowhere else)."""
        return text in read_log(self.log_dir)


def _pygls_on_purpose(logger: str, message: str, record: str) -> bool:
    if not logger.startswith("pygls."):
        return False
    if message.startswith("Unable to deserialize message"):
        return True
    final = record.rsplit(_TRACEBACK, 1)[1].splitlines()
    raised = next((line for line in final[1:] if line and not line.startswith(" ")), "")
    return _is_an_answer(raised)


def _is_an_answer(raised: str) -> bool:
    """Whether ``raised`` (``module.Class: message``) is a JSON-RPC error other than an
    internal error: one goose-ls answers with on purpose."""
    named = _RAISED.match(raised)
    if named is None:
        return False
    try:
        cls = getattr(importlib.import_module(named.group(1)), named.group(2))
    except (ImportError, AttributeError):
        return False
    return (
        isinstance(cls, type)
        and issubclass(cls, JsonRpcException)
        and not issubclass(cls, JsonRpcInternalError)
    )


def read_log(log_dir: Path) -> str:
    """The whole log in ``log_dir`` (``goose-ls.log`` and its rotated parts, oldest first)."""
    parts = sorted(log_dir.glob("goose-ls.log.*"), key=lambda p: -int(p.suffix[1:]))
    return "".join(p.read_text(encoding="utf-8") for p in [*parts, log_dir / "goose-ls.log"])
