"""The "Goose: Sessions" view: a generated markdown index with one line per session.

Code actions on a line open (resume) that session, rename it to the title written on the
line, or delete it. It is how editors without a plugin browse their chats, including
those started in goose CLI, goose Desktop or Zed (listed by the agent's session/list).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from goose_ls.atomic_files import atomic_write
from goose_ls.lsp.editor import EditorConnection
from goose_ls.lsp.positions import Position
from goose_ls.paths import data_dir
from goose_ls.sessions import SessionManager

EDIT_TIMEOUT = 10.0
"""Seconds to wait for the editor to apply the refreshed index."""

HEAD = (
    "# goose sessions\n\n"
    "<!-- goose-ls: sessions. Code actions on a line: open, rename (edit the title first), "
    "delete. -->\n\n"
)
_ENTRY = re.compile(r"^- \*\*(?P<title>.*)\*\* · `(?P<id>[^`]+)`")


def index_path(data_dir_setting: str) -> Path:
    return (data_dir(data_dir_setting) / "sessions.md").resolve()


def render(entries: list[dict[str, Any]]) -> str:
    lines = [HEAD]
    for entry in entries:
        title = str(entry.get("title", "")).replace("**", "")
        where = entry.get("cwd") or ""
        when = entry.get("updatedAt") or ""
        state = "open" if entry.get("loaded") else entry.get("source", "")
        if entry.get("openElsewhere"):
            state = "open in another window"
        parts = [f"**{title}**", f"`{entry['sessionId']}`", where, when, state]
        lines.append("- " + " · ".join(p for p in parts if p) + "\n")
    if not entries:
        lines.append("_No sessions yet._\n")
    return "".join(lines)


def entry_at(line: str) -> tuple[str, str] | None:
    """(session id, title) of an index line, or None."""
    match = _ENTRY.match(line)
    return (match["id"], match["title"]) if match else None


async def show_index(editor: EditorConnection, sessions: SessionManager) -> None:
    """Regenerate the index and show it (once; later runs refresh it where it is)."""
    path = index_path(sessions.settings.data_dir)
    text = render(await sessions.list_sessions())
    uri = path.as_uri()
    if editor.is_open(uri):
        await editor.apply_edit(uri, Position(0, 0), editor.end_of(uri), text, EDIT_TIMEOUT)
        return
    atomic_write(path, text)
    await editor.show_document(path)
