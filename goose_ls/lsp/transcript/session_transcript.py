"""One session's transcript: its text, how it is drawn and streamed, its prompt's context."""

from __future__ import annotations

from pathlib import Path

import attrs

from goose_ls.inert import inert_line
from goose_ls.lsp.transcript.blocks import code_span, line_range, shown_path
from goose_ls.lsp.transcript.editor_copy import TranscriptDocument
from goose_ls.lsp.transcript.render import Renderer
from goose_ls.lsp.transcript.streamer import TranscriptStreamer
from goose_ls.lsp.transcript.text import TranscriptText
from goose_ls.sessions import ContextItem, is_pasted, path_of


def context_line(item: ContextItem, root: str | None) -> str:
    """A context item as the prompt section lists it (paths from ``root``, the chat's
    workspace folder)."""
    # The file's name is the repository's: on one line, inert (a line break in it forged
    # a second prompt section heading, which Send read the draft from).
    path = inert_line(shown_path(path_of(item.uri or ""), root))
    if item.type == "selection":
        lines = line_range(item.start_line or 0, item.end_line or 0)
        return f"> 📎 {code_span(f'{path}:{lines}')}"
    if item.type == "file":
        return f"> 📎 {code_span(path)} (file)"
    if item.type == "image":
        return f"> 📎 {'a pasted image' if is_pasted(item.uri or '') else code_span(path)} (image)"
    return f"> 📎 {inert_line((item.text or '').splitlines()[0][:60]) if item.text else 'text'}"


@attrs.define(eq=False)
class Transcript:
    session_id: str
    path: Path
    text: TranscriptText
    renderer: Renderer
    streamer: TranscriptStreamer
    context: list[ContextItem] = attrs.Factory(list)
    chips_shown: int = 0
    """How many context lines the prompt section shows now."""
    drawn_through: int = 0
    """The last event index drawn from the journal when the transcript was made."""
    parts: int = 0
    """How many earlier parts (``<session>.partN.md``) the conversation has moved to."""
    answered: str | None = None
    """The last turn (message id) whose reply has started to show."""
    root: str | None = None
    """The chat's workspace folder, that paths are named from."""
    sent_draft: str | None = None
    """A draft sent whose clearing the editor has not reported yet (it batches its
    changes): no longer the user's draft, to send again or to save as one."""
    document: TranscriptDocument | None = None
    """The editor's copy while the editor has the transcript open (goose-ls follows it
    itself, not pygls' workspace)."""

    @property
    def uri(self) -> str:
        return self.path.as_uri()

    @property
    def context_lines(self) -> list[str]:
        return [context_line(item, self.root) for item in self.context]
