"""The session store: what goose-ls remembers of each chat across restarts.

One JSON file with a schema version, written atomically (temporary file, fsync,
rename). A file that cannot be read, or has a version this goose-ls does not know, is
moved aside as a backup and reported; it is never silently replaced.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import os
from pathlib import Path

import attrs

from goose_ls.files import WriteFailed, atomic_write
from goose_ls.wire import WireError, from_wire, to_wire

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
TITLE_LENGTH = 50
NEW_SESSION_TITLE = "New Session"


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def title_from_prompt(text: str) -> str:
    """The first user message as a title: 50 characters, cut at a word boundary."""
    words = " ".join(text.split())
    if not words:
        return NEW_SESSION_TITLE
    if len(words) <= TITLE_LENGTH:
        return words
    cut = words[:TITLE_LENGTH]
    if " " in cut and words[TITLE_LENGTH] != " ":
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip() + "..."


@attrs.define
class SessionRecord:
    session_id: str
    cwd: str
    title: str = NEW_SESSION_TITLE
    title_from_agent: bool = False
    created_at: str = attrs.Factory(now)
    updated_at: str = attrs.Factory(now)
    agent: str = ""
    transcript_path: str = ""
    last_index: int = 0


@attrs.define
class StoreData:
    schema_version: int = SCHEMA_VERSION
    sessions: list[SessionRecord] = attrs.Factory(list)
    last_active: dict[str, str] = attrs.Factory(dict)
    """Workspace folder -> the session last used there."""


class SessionStore:
    def __init__(self, path: Path, write_failed: WriteFailed) -> None:
        self.path = path
        self._write_failed = write_failed
        self.data = StoreData()
        self.problem: str | None = None
        """Why the file on disk could not be used (it was backed up), if it could not."""
        self._writable = True
        self._by_id: dict[str, SessionRecord] = {}
        """``data.sessions`` by id: the library looks a record up for every event."""

    def load(self) -> None:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        except OSError as exc:
            self.problem = (
                f"cannot read the session store {self.path} ({exc.strerror}); "
                "sessions are not saved until it can be read"
            )
            self._writable = False
            return
        try:
            data = json.loads(raw)
            version = data.get("schemaVersion") if isinstance(data, dict) else None
            if version != SCHEMA_VERSION:
                raise WireError(f"schema version {version!r}, expected {SCHEMA_VERSION}")
            self.data = from_wire(data, StoreData)
        except (ValueError, WireError) as exc:
            backup = self.path.with_name(f"{self.path.name}.{now().replace(':', '')}.bak")
            with contextlib.suppress(OSError):
                os.replace(self.path, backup)
            self.problem = (
                f"the session store {self.path} could not be used ({exc}); "
                f"it was kept as {backup.name} and a new one started"
            )
            log.error("%s", self.problem)

    def save(self) -> None:
        if not self._writable:
            return
        try:
            atomic_write(self.path, json.dumps(to_wire(self.data), indent=1, ensure_ascii=False))
        except OSError as exc:
            log.error("cannot save the session store %s: %s", self.path, exc)
            self._write_failed(self.path, exc)

    def get(self, session_id: str) -> SessionRecord | None:
        if len(self._by_id) != len(self.data.sessions):
            self._by_id = {r.session_id: r for r in self.data.sessions}
        return self._by_id.get(session_id)

    def put(self, record: SessionRecord) -> None:
        if self.get(record.session_id) is None:
            self.data.sessions.append(record)
            self._by_id[record.session_id] = record
        record.updated_at = now()
        self.save()

    def remove(self, session_id: str) -> SessionRecord | None:
        record = self.get(session_id)
        if record is not None:
            self.data.sessions.remove(record)
            del self._by_id[session_id]
            self.data.last_active = {
                k: v for k, v in self.data.last_active.items() if v != session_id
            }
            self.save()
        return record
