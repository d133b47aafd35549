"""The editor's side of documents, for tests: buffers that apply ``workspace/applyEdit``
in the negotiated position encoding and report changes back, as an editor does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Union
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.client import JsonRPCClient
from pytest_lsp import client_capabilities

# Helix 25.07 as it starts a server (pytest-lsp has no Helix capabilities).
HELIX = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(
        apply_edit=True,
        configuration=True,
        workspace_folders=True,
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
        execute_command=types.ExecuteCommandClientCapabilities(),
    ),
    window=types.WindowClientCapabilities(work_done_progress=True),
    general=types.GeneralClientCapabilities(
        position_encodings=[
            types.PositionEncodingKind.Utf8,
            types.PositionEncodingKind.Utf32,
            types.PositionEncodingKind.Utf16,
        ]
    ),
)

EDITORS: dict[str, tuple[Any, str]] = {
    # name: (the capabilities it sends, the position encoding it settles on)
    "neovim": (client_capabilities("neovim@v0.11.0"), "utf-8"),
    "emacs": (client_capabilities("emacs"), "utf-32"),
    "vscode": (client_capabilities("visual_studio_code"), "utf-16"),
    "helix": (HELIX, "utf-8"),
}


def _units(char: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(char.encode("utf-8"))
    if encoding == "utf-16":
        return len(char.encode("utf-16-le")) // 2
    return 1


def offset_of(text: str, line: int, character: int, encoding: str) -> int:
    """The string index of an LSP position counted in ``encoding`` units."""
    start = 0
    for _ in range(line):
        newline = text.find("\n", start)
        if newline < 0:
            return len(text)
        start = newline + 1
    index, counted = start, 0
    while index < len(text) and text[index] != "\n" and counted < character:
        counted += _units(text[index], encoding)
        index += 1
    if counted != character and index < len(text) and text[index] != "\n":
        raise ValueError(f"position {line}:{character} is inside a character ({encoding})")
    return index


def position_of(text: str, offset: int, encoding: str) -> types.Position:
    """The LSP position of a string index, counted in ``encoding`` units."""
    line_start = text.rfind("\n", 0, offset) + 1
    units = sum(_units(char, encoding) for char in text[line_start:offset])
    return types.Position(line=text.count("\n", 0, offset), character=units)


def read_code_actions_correctly(client: JsonRPCClient) -> None:
    """lsprotocol 2025.0.0 reads every code action that carries a command as a bare
    ``Command``; tell the test client's converter how to tell them apart."""

    def structure(obj: Any, _: Any) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            command: types.Command = client.protocol._converter.structure(obj, types.Command)
            return command
        action: types.CodeAction = client.protocol._converter.structure(obj, types.CodeAction)
        return action

    client.protocol._converter.register_structure_hook(
        Union[types.Command, types.CodeAction],  # noqa: UP007 (the key lsprotocol uses)
        structure,
    )


class EditorBuffers:
    """Open documents of a test editor, kept in step with the server."""

    def __init__(
        self,
        client: JsonRPCClient,
        encoding: str,
        apply_edits: bool = True,
        incremental: bool = False,
    ) -> None:
        """``incremental``: report each change with its range, as Helix does, rather
        than the whole text."""
        self.client = client
        self.encoding = encoding
        self.incremental = incremental
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.edits: list[tuple[str, types.TextEdit]] = []
        read_code_actions_correctly(client)
        if apply_edits:
            client.feature(types.WORKSPACE_APPLY_EDIT)(lambda params: self.apply(params))

    def open(self, uri: str, text: str | None = None, language: str = "markdown") -> None:
        if text is None:
            text = Path(unquote(urlparse(uri).path)).read_text(encoding="utf-8")
        self.texts[uri] = text
        self.versions[uri] = 1
        self.client.protocol.notify(
            types.TEXT_DOCUMENT_DID_OPEN,
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id=language, version=1, text=text
                )
            ),
        )

    def replace_all(self, uri: str, text: str) -> None:
        """The user changes the buffer (a full-text didChange)."""
        self.texts[uri] = text
        self._report(uri, [types.TextDocumentContentChangeWholeDocument(text=text)])

    def replace(self, uri: str, start: int, end: int, new_text: str) -> None:
        """Replace ``start``-``end`` (string indices), reported as the editor syncs."""
        old = self.texts[uri]
        self.texts[uri] = old[:start] + new_text + old[end:]
        if not self.incremental:
            self.replace_all(uri, self.texts[uri])
            return
        change = types.TextDocumentContentChangePartial(
            range=types.Range(
                start=position_of(old, start, self.encoding),
                end=position_of(old, end, self.encoding),
            ),
            text=new_text,
        )
        self._report(uri, [change])

    def type_at_end(self, uri: str, text: str) -> None:
        end = len(self.texts[uri])
        self.replace(uri, end, end, text)

    def _report(self, uri: str, changes: list[Any]) -> None:
        self.versions[uri] += 1
        self.client.protocol.notify(
            types.TEXT_DOCUMENT_DID_CHANGE,
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=changes,
            ),
        )

    def type_in_pieces(
        self, uri: str, pieces: list[str], order: list[int], skip: int = 0
    ) -> list[types.DidChangeTextDocumentParams]:
        """The user types ``pieces`` at the end, an incremental change each, and the editor
        sends the changes in ``order`` (Helix 25.01 does, typing fast), numbering them
        ``skip`` versions apart (Neovim numbers its batches so). Those left out of ``order``
        are returned, for :meth:`send` later."""
        changes = []
        for piece in pieces:
            old = self.texts[uri]
            end = position_of(old, len(old), self.encoding)
            self.versions[uri] += 1 + skip
            self.texts[uri] = old + piece
            changes.append(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(
                        uri=uri, version=self.versions[uri]
                    ),
                    content_changes=[
                        types.TextDocumentContentChangePartial(
                            range=types.Range(start=end, end=end), text=piece
                        )
                    ],
                )
            )
        for n in order:
            self.send(changes[n])
        return [change for n, change in enumerate(changes) if n not in order]

    def send(self, change: types.DidChangeTextDocumentParams) -> None:
        self.client.protocol.notify(types.TEXT_DOCUMENT_DID_CHANGE, change)

    def save(self, uri: str) -> None:
        """The user writes the buffer to its file (``:w``)."""
        Path(unquote(urlparse(uri).path)).write_text(self.texts[uri], encoding="utf-8")
        self.client.protocol.notify(
            types.TEXT_DOCUMENT_DID_SAVE,
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)),
        )

    def apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        """Apply an edit as the editor does (a test's own handler may call it late)."""
        changes: list[tuple[str, list[Any]]] = []
        for change in params.edit.document_changes or []:
            if isinstance(change, types.TextDocumentEdit):
                changes.append((change.text_document.uri, list(change.edits)))
        for uri, edits in (params.edit.changes or {}).items():
            changes.append((uri, list(edits)))
        for uri, edits in changes:
            if uri not in self.texts:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="not open")
            for edit in sorted(
                edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
            ):
                text = self.texts[uri]
                start = offset_of(
                    text, edit.range.start.line, edit.range.start.character, self.encoding
                )
                end = offset_of(text, edit.range.end.line, edit.range.end.character, self.encoding)
                self.replace(uri, start, end, edit.new_text)
                self.edits.append((uri, edit))
        return types.ApplyWorkspaceEditResult(applied=True)
