"""The audit log: every permission decision, automatic or by the user, one JSON line each.

Each record is one ``write`` of a whole line to a file opened ``O_APPEND``, so records
never interleave or glue together. A torn last line (a full disk, a kill) is found when
the log is first used, said once, and ended so the next record stands on its own line.
A decision by a rule is recorded before it is acted on: when the record cannot be
written, the rule's "allow" is not used and the user is asked (``sessions/asking/permissions.py``).
"""

from __future__ import annotations

import datetime
import json
import logging
import os
from pathlib import Path

from goose_ls.atomic_files import PRIVATE_FILE, WriteFailed, private_folder, tighten
from goose_ls.inert import inert_json

log = logging.getLogger(__name__)


class AuditLog:
    def __init__(self, path: Path, write_failed: WriteFailed) -> None:
        self.path = path
        self._write_failed = write_failed
        self._torn: bool | None = None
        """Whether the file ends inside a record (None: not looked yet)."""

    def record(self, session: str, tool: str, target: str, outcome: str, by: str) -> bool:
        """Append one record; False when it could not be written (whole)."""
        entry = {
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds"),
            "session": session,
            "tool": tool,
            "target": target,
            "outcome": outcome,
            "by": by,
        }
        line = (inert_json(json.dumps(entry, ensure_ascii=False)) + "\n").encode("utf-8")
        try:
            private_folder(self.path.parent)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
            try:
                if self._torn is None:
                    tighten(fd, PRIVATE_FILE)  # an older goose-ls's may be 0644
                    self._torn = _ends_torn(fd)
                    if self._torn:
                        log.warning("%s ends with a torn record; it is kept as it is", self.path)
                data = b"\n" + line if self._torn else line
                written = os.write(fd, data)
            finally:
                os.close(fd)
            if written != len(data):
                self._torn = True
                raise OSError(f"only {written} of {len(data)} bytes written")
        except OSError as exc:
            log.error("cannot write the audit log %s: %s (%s)", self.path, exc, entry)
            self._write_failed(self.path, exc)
            return False
        self._torn = False
        return True


def _ends_torn(fd: int) -> bool:
    """Whether the open file is non-empty and does not end with a newline."""
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"
