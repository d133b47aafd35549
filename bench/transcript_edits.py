"""What one transcript edit costs goose-ls, at 0 MB and at 10 MB of transcript.

```sh
.venv/bin/python bench/transcript_edits.py
```

In-process, through the real code: events are rendered into a session's transcript by
``Transcripts``, the streamer turns them into ``workspace/applyEdit``, and an editor that
applies each edit answers it, as Helix does, with an incremental ``textDocument/didChange``
carrying the same range and text, handled by goose-ls's protocol. The editor's own work is
not counted; what is measured is goose-ls's CPU time (this process's) per edit: rendering
the event, working out the edit, and taking in the editor's change. Most edits append a
line of about 100 characters; every tenth is a tool call whose block is rewritten in
place. Saves to disk (every few seconds while streaming) are left out: their cost is the
file's size, by nature. The transcript before the edits is a journaled history of lines
of about 100 characters. Prints the median of a few rounds and the ratio 10 MB / 0 MB.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import attrs
from lsprotocol import types

from goose_ls import events
from goose_ls.lsp import documents
from goose_ls.lsp.chat.transcript_documents import Transcripts
from goose_ls.lsp.editor import EditorConnection
from goose_ls.lsp.server import GooseLanguageServer
from goose_ls.lsp.services import ServicesSlot
from goose_ls.sessions.journal.records import EventRow
from goose_ls.settings import Settings
from goose_ls.tasks import Tasks

if TYPE_CHECKING:
    from goose_ls.lsp.positions import Position

LINE = "The quick brown fox jumps over the lazy dog; 你好 👍 then it does it again and again."
EDITS = 300
ROUNDS = 3
SIZES_MB = (0, 10)


class EchoingEditor(EditorConnection):
    """An editor that applies every edit and answers with the same change (as Helix)."""

    async def apply_edit(
        self,
        uri: str,
        start: Position,
        end: Position,
        new_text: str,
        timeout: float,
        label: str | None = None,
    ) -> str | None:
        self.version = getattr(self, "version", 1) + 1
        change = types.TextDocumentContentChangePartial(
            range=types.Range(
                start=types.Position(start.line, start.character),
                end=types.Position(end.line, end.character),
            ),
            text=new_text,
        )
        self._server.protocol.handle_message(
            types.DidChangeTextDocumentNotification(
                params=types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(
                        version=self.version, uri=uri
                    ),
                    content_changes=[change],
                )
            )
        )
        return None


def _history(megabytes: int) -> list[EventRow]:
    """A journaled reply of ``megabytes`` in lines of about 100 characters."""
    line = json.dumps(events.event_to_wire(events.AgentMessageChunk(_text(LINE + "\n"))))
    count = megabytes * 1_000_000 // len(LINE.encode())
    first = json.dumps(events.event_to_wire(events.UserMessageChunk(_text("hello"))))
    rows = [EventRow("bench", 1, "m", "user_message_chunk", first, "")]
    rows += [EventRow("bench", 2 + i, "m", "agent_message_chunk", line, "") for i in range(count)]
    return rows


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _server(root: Path) -> tuple[GooseLanguageServer, EchoingEditor]:
    server = GooseLanguageServer()
    capabilities = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(apply_edit=True),
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf8]
        ),
    )
    params = types.InitializeParams(capabilities=capabilities, root_uri=root.as_uri())
    for _ in server.protocol.lsp_initialize(params):
        pass
    return server, EchoingEditor(server)


async def _round(megabytes: int) -> float:
    """CPU seconds per edit, one round on a fresh server."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        server, editor = _server(root)
        settings = _settings(root / "data")
        sessions = SimpleNamespace(
            # Built when drawn, then dropped, as the journal's rows are.
            library=SimpleNamespace(
                history=lambda _: _history(megabytes), set_transcript=lambda *_: None
            ),
            tools=SimpleNamespace(terminals=SimpleNamespace(output_of=lambda _: None)),
            registry=SimpleNamespace(find=lambda _: None),
        )
        transcripts = Transcripts(editor, sessions, lambda: settings, Tasks())  # type: ignore[arg-type]
        slot = ServicesSlot()
        slot.fill(SimpleNamespace(transcripts=transcripts))  # type: ignore[arg-type]
        documents.register(server, slot)
        transcript = transcripts.for_session("bench")
        uri = transcript.uri
        server.protocol.handle_message(
            types.DidOpenTextDocumentNotification(
                params=types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(
                        uri=uri,
                        language_id="markdown",
                        version=1,
                        text=transcript.path.read_text(encoding="utf-8"),
                    )
                )
            )
        )
        streamer = transcript.streamer
        transcript.renderer.render(events.AgentMessageChunk(_text(LINE + "\n")))
        await streamer.flush()  # the first edit saves the file too; later ones do not
        started = time.process_time()
        for i in range(EDITS):
            event: events.SessionEvent
            if i % 10 == 5:
                event = events.ToolCall(f"t{i}", "run tests", kind="execute", status="pending")
            elif i % 10 == 6:
                event = events.ToolCallUpdate(f"t{i - 1}", status="completed")
            else:
                event = events.AgentMessageChunk(_text(LINE + "\n"))
            transcript.renderer.render(event)
            await streamer.flush()
        spent = time.process_time() - started
        shown = editor.buffer_text(uri) or ""
        assert shown.startswith(transcript.text.head) and transcript.text.body in shown, "in step"
        return spent / EDITS


def _settings(data: Path) -> Settings:
    """No part files, no saves: only the edits are measured."""
    settings = Settings(data_dir=str(data))
    transcript = attrs.evolve(
        settings.transcript, max_bytes=1 << 40, save_interval=3600.0, edit_interval=0.0
    )
    return attrs.evolve(settings, transcript=transcript)


async def main() -> None:
    figures: dict[int, float] = {}
    for megabytes in SIZES_MB:
        rounds = [await _round(megabytes) for _ in range(ROUNDS)]
        figures[megabytes] = statistics.median(rounds)
        print(f"{megabytes:>3} MB: {figures[megabytes] * 1e6:10.1f} µs CPU per edit")
    ratio = figures[SIZES_MB[-1]] / figures[SIZES_MB[0]]
    print(f"ratio {SIZES_MB[-1]} MB / {SIZES_MB[0]} MB: {ratio:.2f} times (target: at most 1.5)")


if __name__ == "__main__":
    asyncio.run(main())
