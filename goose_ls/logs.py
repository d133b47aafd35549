"""Logging: everything to a rotating file, warnings and worse to stderr, nothing to stdout.

stdout carries the LSP stream; a stray print there would corrupt it. No secret reaches
either, at any level: pygls logs whole LSP messages at debug level, settings included,
so the values under an ``env``, ``headers`` or ``token`` key of whatever a record carries
(``agent.env``, MCP servers' env and headers, the agent's token) are replaced before it
is written, as is every secret named to :func:`hide`. The log file and its folder are
the user's alone (0600 in 0700): they hold what was said in every chat.
"""

from __future__ import annotations

import io
import json
import logging
import logging.handlers
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from goose_ls.atomic_files import PRIVATE_FILE, private_folder, tighten
from goose_ls.inert import inert, inert_line
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
REDACTED = "<redacted>"
SECRET_HOLDERS = frozenset({"env", "headers"})
"""Keys whose every value is a secret (``name`` entries aside: ``{"name", "value"}``)."""
SECRET_KEYS = frozenset({"token"})
"""Keys whose value is a secret."""
_LOOKS_SECRET = re.compile(r'"(?:env|headers|token)"')
"""A JSON text that may hold one (pygls logs the bodies it sends as text)."""
MIN_HIDDEN = 6
"""Shorter values are not hidden by value (a ``"1"`` would blank every 1 in the log);
where they sit in a message still hides them."""


def hide(secret: str) -> None:
    """Never log ``secret`` (the agent's token once it is read, a setting's secret value
    once the settings are), wherever it appears."""
    if len(secret) >= MIN_HIDDEN:
        _hidden.add(secret)


def scrubbed(value: Any, depth: int = 0) -> Any:
    """``value`` with what :data:`SECRET_HOLDERS` and :data:`SECRET_KEYS` hold replaced:
    in mappings, sequences, attrs objects (lsprotocol's) and JSON texts, as deep as 40."""
    if depth > 40:
        return value
    if isinstance(value, str):
        if value[:1] in "{[" and _LOOKS_SECRET.search(value):
            try:
                return json.dumps(scrubbed(json.loads(value), depth + 1), ensure_ascii=False)
            except ValueError:
                return value
        return value
    if isinstance(value, Mapping):
        return {key: _under(key, item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        items = [scrubbed(item, depth + 1) for item in value]
        return tuple(items) if isinstance(value, tuple) else items
    if attrs.has(type(value)):
        changed = {}
        for field in attrs.fields(type(value)):
            item = getattr(value, field.name)
            new = _under(field.name, item, depth + 1)
            if new is not item:
                changed[field.alias or field.name] = new
        try:
            return attrs.evolve(value, **changed) if changed else value
        except (TypeError, ValueError):
            return REDACTED  # cannot be rebuilt: said without it
    return value


def _under(key: object, item: Any, depth: int) -> Any:
    if key in SECRET_HOLDERS:
        return _values_hidden(item)
    if key in SECRET_KEYS and isinstance(item, str) and item:
        return REDACTED
    return scrubbed(item, depth)


def _values_hidden(value: Any) -> Any:
    """Every string ``value`` holds replaced, but for keys and ``name`` entries."""
    if isinstance(value, str):
        return REDACTED
    if isinstance(value, Mapping):
        return {
            key: item if key == "name" and isinstance(item, str) else _values_hidden(item)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_values_hidden(item) for item in value]
    return value


class Secrets(logging.Filter):
    """Takes secrets out of every record before a handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            record.args = scrubbed(record.args)
        message = record.getMessage()
        cleaned = _TOKEN_FIELD.sub(r"\1\2<redacted>\2", message)
        for secret in _hidden:
            cleaned = cleaned.replace(secret, "<redacted>")
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


class OneLine(logging.Formatter):
    """Each record on one line, what would act in a terminal shown escaped (a message
    may carry the agent's text: ``tail -f`` must not run its escape sequences, nor a
    ``\r`` or newline in it forge a record). A traceback keeps its lines, made inert."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = inert_line(record.message)
        return super().formatMessage(record)

    def formatException(self, ei: Any) -> str:
        return inert(super().formatException(ei))


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
    fmt = OneLine("%(asctime)s %(levelname)s %(name)s: %(message)s")

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
