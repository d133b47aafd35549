"""The audit log: every permission decision, automatic or by the user, one JSON line each."""

from __future__ import annotations

import datetime
import json
import logging
from pathlib import Path

from goose_ls.files import WriteFailed

log = logging.getLogger(__name__)


class AuditLog:
    def __init__(self, path: Path, write_failed: WriteFailed) -> None:
        self.path = path
        self._write_failed = write_failed

    def record(self, session: str, tool: str, target: str, outcome: str, by: str) -> None:
        entry = {
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds"),
            "session": session,
            "tool": tool,
            "target": target,
            "outcome": outcome,
            "by": by,
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")
        except OSError as exc:
            log.error("cannot write the audit log %s: %s (%s)", self.path, exc, entry)
            self._write_failed(self.path, exc)
