"""The "Goose: Sessions" view: a generated markdown index with one line per session.

Code actions on a line open (resume) that session, rename it to the title written on the
line, or delete it. It is how editors without a plugin browse their chats, including
those started in goose CLI, goose Desktop or Zed (listed by the agent's session/list).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from goose_ls.files import atomic_write
from goose_ls.paths import data_dir

if TYPE_CHECKING:
    from goose_ls.lsp.server import GooseLanguageServer

HEAD = (
    "# goose sessions\n\n"
    "<!-- goose-ls: sessions. Code actions on a line: open, rename (edit the title first), "
    "delete. -->\n\n"
)
_ENTRY = re.compile(r"^- \*\*(?P<title>.*)\*\* · `(?P<id>[^`]+)`")


def index_path(server: GooseLanguageServer) -> Path:
    return (data_dir(server.settings.data_dir) / "sessions.md").resolve()


def render(entries: list[dict[str, Any]]) -> str:
    lines = [HEAD]
    for entry in entries:
        title = str(entry.get("title", "")).replace("**", "")
        where = entry.get("cwd") or ""
        when = entry.get("updatedAt") or ""
        state = "open" if entry.get("loaded") else entry.get("source", "")
        parts = [f"**{title}**", f"`{entry['sessionId']}`", where, when, state]
        lines.append("- " + " · ".join(p for p in parts if p) + "\n")
    if not entries:
        lines.append("_No sessions yet._\n")
    return "".join(lines)


def entry_at(line: str) -> tuple[str, str] | None:
    """(session id, title) of an index line, or None."""
    match = _ENTRY.match(line)
    return (match["id"], match["title"]) if match else None


async def show_index(server: GooseLanguageServer) -> None:
    """Regenerate the index and show it (once; later runs refresh it where it is)."""
    path = index_path(server)
    text = render(await server.sessions.list_sessions())
    uri = path.as_uri()
    if uri in server.workspace.text_documents:
        document = server.workspace.get_text_document(uri)
        end = types.Position(line=len(document.lines), character=0)
        await server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(
                edit=types.WorkspaceEdit(
                    changes={
                        uri: [
                            types.TextEdit(
                                range=types.Range(types.Position(0, 0), end), new_text=text
                            )
                        ]
                    }
                )
            )
        )
        return
    atomic_write(path, text)
    await server.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=False))
