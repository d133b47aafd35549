"""Whole tool outputs, saved beside the transcript when it shows only an excerpt.

A transcript shows the first lines of a tool call's output; the rest is a click away:
the whole output is written to ``<dataDir>/outputs/<session>/<tool call>.txt`` and
linked under the excerpt. It is written again only when it changed (agents re-send a
call's whole output with each update), and goes when the chat is deleted or pruned.
The chat's images are kept in the same folder (:mod:`goose_ls.sessions.images` writes
them); the transcript links those it finds there.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from goose_ls.atomic_files import WriteFailed, atomic_write
from goose_ls.sessions import KEPT_IMAGE, path_of


class OutputFiles:
    def __init__(self, folder: Path, transcripts: Path, write_failed: WriteFailed) -> None:
        """``folder`` holds one session's outputs; links are relative to ``transcripts``,
        the transcript's folder (its ``.partN.md`` parts are there too)."""
        self._folder = folder
        self._transcripts = transcripts
        self._write_failed = write_failed
        self._written: dict[str, bytes] = {}
        """Each tool call's file, by the digest of what it holds."""

    def link(self, tool_call_id: str, output: str) -> str | None:
        """A markdown link to the whole ``output``, written first if need be; None when
        it cannot be written (the user is told once)."""
        name = re.sub(r"[^\w.-]", "_", tool_call_id)[:100]
        path = self._folder / f"{name}.txt"
        data = output.encode("utf-8", "surrogatepass")
        digest = hashlib.sha256(data).digest()
        if self._written.get(tool_call_id) != digest:
            try:
                atomic_write(path, output)
            except (OSError, UnicodeError) as exc:
                self._write_failed(path, OSError(str(exc)))
                return None
            self._written[tool_call_id] = digest
        target = os.path.relpath(path, self._transcripts).replace(os.sep, "/")
        return f"[whole output: {len(data) / 1e6:.1f} MB]({target})"

    def image_target(self, uri: str) -> str | None:
        """Where a markdown link to a kept image of this chat points (relative to the
        transcript); None for anything else (a path goose-ls did not write)."""
        if not uri.startswith("file:"):
            return None
        path = Path(path_of(uri))
        if path.parent != self._folder or not KEPT_IMAGE.fullmatch(path.name):
            return None
        return os.path.relpath(path, self._transcripts).replace(os.sep, "/")
