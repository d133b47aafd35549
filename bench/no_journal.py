"""goose-ls with its journal's event writing taken out: the floor the journal is measured
against (bench only). Session records are still kept; each event is neither encoded for
the journal, nor indexed for search, nor written."""

from __future__ import annotations

import sys

from goose_ls import cli
from goose_ls.sessions.journal import library


def _nothing(*_: object) -> None:
    return None


library._payload = lambda event, subagent: ("", {})
library.piece_of_event = _nothing  # type: ignore[attr-defined,assignment]
library.SessionLibrary._keep = _nothing  # type: ignore[assignment,method-assign]
library.SessionLibrary._keep_text = _nothing  # type: ignore[assignment,method-assign]
_observe = library.SessionLibrary.observe


def _observe_only(self: library.SessionLibrary, session_id: str, indexed: object) -> None:
    """No JSON of the journal's for the editor to reuse: it encodes its own."""
    _observe(self, session_id, indexed)  # type: ignore[arg-type]


library.SessionLibrary.observe = _observe_only  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(cli.main())
