"""What goes with a prompt, the same whichever side sends it (a goose.* command, the
plugin-free chat, a plugin's goose/prompt): a selection's lines as the editor's buffer
has them (else the disk), and a file for each ``@path`` the prompt mentions."""

from __future__ import annotations

from pathlib import Path

from goose_ls.errors import Refused
from goose_ls.lsp.editor import EditorConnection
from goose_ls.lsp.mentions import mentioned
from goose_ls.sessions import ContextItem


def selected_lines(
    editor: EditorConnection, uri: str, first: int, last: int, where: str = ""
) -> str:
    """Lines ``first`` to ``last`` (1-based, inclusive) of the buffer at ``uri``;
    ``where`` names the argument in the error."""
    try:
        lines = editor.document(uri).lines
    except OSError as exc:
        raise Refused(f"{where}cannot read {uri} ({exc.strerror})") from None
    return "".join(lines[first - 1 : last])


def selection(editor: EditorConnection, uri: str, first: int, last: int) -> ContextItem:
    text = selected_lines(editor, uri, first, last)
    return ContextItem(type="selection", uri=uri, text=text, start_line=first, end_line=last)


def with_mentions(prompt: str, items: list[ContextItem], root: Path) -> list[ContextItem]:
    """``items`` and a file (or image) item for each workspace file ``prompt``
    @-mentions that is not attached already."""
    attached = {item.uri for item in items if item.type in ("file", "image")}
    return items + [m for m in mentioned(prompt, root) if m.uri not in attached]
