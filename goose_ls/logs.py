"""Logging: everything to a rotating file, warnings and worse to stderr, nothing to stdout.

stdout carries the LSP stream; a stray print there would corrupt it. No secret reaches
either: the agent's token (:func:`hide`) and any ``"token": "..."`` in a message (pygls
logs whole LSP messages at debug level, settings included) are replaced. The log file and
its folder are the user's alone (0600 in 0700): they hold what was said in every chat.
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import re
from pathlib import Path

from goose_ls.files import PRIVATE_FILE, private_folder, tighten
from goose_ls.paths import log_dir

LEVELS = ("debug", "info", "warning", "error")


class ShortSchemaErrors(logging.Filter):
    """The ACP SDK logs a whole traceback at ERROR for every agent message that does not
    fit its schema (and skips it); one WARNING line naming the problem says the same."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        while error is not None and type(error).__name__ != "ValidationError":
            error = error.__cause__ or error.__context__
        if error is None:
            return True
        lines = [line.strip()[:300] for line in str(error).splitlines()]
        record.args = (record.getMessage(), " | ".join(lines[:3]))
        record.msg = "%s: skipped, it does not fit the ACP schema: %s"
        record.exc_info = record.exc_text = None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


_TOKEN_FIELD = re.compile(r"""(['"]token['"]\s*:\s*)(['"])(?:\\.|(?!\2).)+\2""")
_hidden: set[str] = set()


def hide(secret: str) -> None:
    """Never log ``secret`` (the agent's token, once it is read)."""
    if secret:
        _hidden.add(secret)


class Secrets(logging.Filter):
    """Takes secrets out of every record before a handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = _TOKEN_FIELD.sub(r"\1\2<redacted>\2", message)
        for secret in _hidden:
            cleaned = cleaned.replace(secret, "<redacted>")
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


class PrivateRotatingFile(logging.handlers.RotatingFileHandler):
    """Each log file made 0600 whatever the umask (an older one tightened)."""

    def _open(self) -> io.TextIOWrapper:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.baseFilename, flags, PRIVATE_FILE)
        tighten(fd, PRIVATE_FILE)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


def setup(level: str = "info", log_file: str | None = None) -> Path | None:
    """Configure the root logger; returns the log file used (None if it could not be opened)."""
    root = logging.getLogger()
    root.setLevel(logging.DEBUG)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addFilter(ShortSchemaErrors())
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")

    stderr = logging.StreamHandler()
    stderr.setLevel(logging.WARNING)
    stderr.setFormatter(fmt)
    stderr.addFilter(Secrets())
    root.addHandler(stderr)

    path = Path(log_file) if log_file else log_dir() / "goose-ls.log"
    try:
        if log_file:  # a file the user named: its folder is theirs to set
            path.parent.mkdir(parents=True, exist_ok=True)
        else:
            private_folder(path.parent)
        to_file = PrivateRotatingFile(path, maxBytes=5_000_000, backupCount=3, encoding="utf-8")
    except OSError as exc:
        logging.getLogger(__name__).warning("cannot write the log file %s: %s", path, exc)
        return None
    to_file.setLevel(getattr(logging, level.upper()))
    to_file.setFormatter(fmt)
    to_file.addFilter(Secrets())
    root.addHandler(to_file)
    # pygls logs every message body at INFO; keep that for debug level only.
    logging.getLogger("pygls").setLevel(logging.DEBUG if level == "debug" else logging.WARNING)
    return path
