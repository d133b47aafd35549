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
    heads = list(_RECORD.finditer(log))
    ends = [m.start() for m in heads[1:]] + [len(log)]
    return [
        log[head.start() : end]
        for head, end in zip(heads, ends, strict=True)
        if _TRACEBACK in log[head.start() : end]
        and not _pygls_on_purpose(head.group(1), head.group(2), log[head.start() : end])
    ]


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
