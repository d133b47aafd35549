"""Past chats as workspace symbols: the editor's symbol search finds any conversation.

``workspace/symbol`` (Helix's ``space S``, Neovim's ``vim.lsp.buf.workspace_symbol()``)
and ``goose/searchSessions`` ask the journal (:mod:`goose_ls.sessions.journal.search`), then
place each hit in its chat's transcript, so choosing one opens the transcript at that
turn. An empty query lists the latest chats.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types
from pygls.lsp.server import LanguageServer

from goose_ls.lsp.services import Services, ServicesSlot
from goose_ls.sessions import Hit

WHO = {
    "user": "you",
    "agent": "{agent}",
    "thought": "{agent}, thinking",
    "tool": "tool call",
    "subagent": "{agent}'s subagent",
}
"""Who said what a hit found; ``{agent}`` is the chat's agent by the name it gave itself."""
KINDS = {"chat": types.SymbolKind.File, "tool": types.SymbolKind.Function}

SEARCH_LIMIT = 50
"""Results a search returns when not told how many (``workspace/symbol`` always)."""


@attrs.frozen
class Found:
    hit: Hit
    uri: str
    """The transcript (or the part of it) that shows the hit."""
    line: int
    """0-based."""


def find(s: Services, query: str, limit: int = SEARCH_LIMIT) -> list[Found]:
    """The chats and turns that match ``query``, each placed in its transcript."""
    read: dict[Path, str | None] = {}

    def text_of(path: Path) -> str | None:
        if path not in read:
            read[path] = _text(s, path)
        return read[path]

    return [_place(s, hit, text_of) for hit in s.sessions.search(query, limit)]


def _text(s: Services, path: Path) -> str | None:
    """The transcript as the editor shows it when open (it may be ahead of the file)."""
    if (open_text := s.editor.buffer_text(path.as_uri())) is not None:
        return open_text
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _place(s: Services, hit: Hit, text_of: Callable[[Path], str | None]) -> Found:
    """The line of the transcript that shows the hit.

    The line is found by looking for the matched text (the hit's excerpt: a piece of the
    match's line, which a transcript shows verbatim) in the transcript, then in its
    earlier parts; the first line that holds it wins, so a phrase said twice in one chat
    leads to its first place. When no file holds it (the transcript was deleted, or the
    turn came before the transcript was started) the hit is line 0 of the transcript.
    """
    path = Path(hit.transcript) if hit.transcript else s.transcripts.path_for(hit.session_id)
    if hit.excerpt:
        for candidate in [path, *s.transcripts.parts_of(hit.session_id)]:
            text = text_of(candidate)
            if text is not None and (at := text.find(hit.excerpt)) >= 0:
                return Found(hit, candidate.as_uri(), text.count("\n", 0, at))
    return Found(hit, path.as_uri(), 0)


def to_symbol(found: Found, agent: str) -> types.SymbolInformation:
    """The hit as the editor lists it: the chat's title and the words around the match,
    and who said them (``agent``: the chat's agent)."""
    hit = found.hit
    who = WHO.get(hit.kind, "").replace("{agent}", agent)
    at = types.Position(line=found.line, character=0)
    return types.SymbolInformation(
        name=f"{hit.title} · {hit.snippet}" if hit.snippet else hit.title,
        kind=KINDS.get(hit.kind, types.SymbolKind.String),
        location=types.Location(uri=found.uri, range=types.Range(start=at, end=at)),
        container_name=" · ".join(filter(None, [who, hit.at[:10]])),
    )


def to_wire(found: Found) -> dict[str, Any]:
    """One result of ``goose/searchSessions`` (docs/protocol.md)."""
    hit = found.hit
    result = {
        "sessionId": hit.session_id,
        "title": hit.title,
        "index": hit.index,
        "messageId": hit.message_id,
        "kind": hit.kind,
        "snippet": hit.snippet,
        "at": hit.at,
        "transcript": found.uri,
        "line": found.line,
    }
    return {key: value for key, value in result.items() if value is not None}


def register(server: LanguageServer, services: ServicesSlot) -> None:
    @server.feature(types.WORKSPACE_SYMBOL)
    def workspace_symbol(
        _: LanguageServer, params: types.WorkspaceSymbolParams
    ) -> list[types.SymbolInformation]:
        s = services()
        return [
            to_symbol(found, s.transcripts.agent_of(found.hit.session_id))
            for found in find(s, params.query)
        ]
