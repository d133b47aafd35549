"""Which workspace policy files the user trusted to loosen the rules, by content hash.

A repository's ``.goose-ls/policy.json`` is written by whoever committed it, so it may
only tighten (``deny``, ``ask``) until the user trusts it once, as direnv's ``allow``
does. Trust is for the exact bytes: any change asks again.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from goose_ls.atomic_files import WriteFailed, atomic_write

log = logging.getLogger(__name__)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class PolicyTrust:
    def __init__(self, path: Path, write_failed: WriteFailed) -> None:
        self.path = path
        self._write_failed = write_failed

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("%s unreadable, no workspace policy is trusted: %s", self.path, exc)
            return {}
        return (
            {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}
        )

    def trusted(self, policy_file: Path, file_digest: str) -> bool:
        return self._read().get(str(policy_file)) == file_digest

    def trust(self, policy_file: Path, file_digest: str) -> None:
        entries = {**self._read(), str(policy_file): file_digest}
        try:
            atomic_write(self.path, json.dumps(entries, indent=2) + "\n")
        except OSError as exc:
            self._write_failed(self.path, exc)
