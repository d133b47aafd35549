"""pygls' LSP protocol, with what goose-ls needs of the wire on top.

- Messages are structured once, at the top: pygls reads with a ``json`` object hook that
  sees every nested object as a possible message, so a request whose params hold an object
  with a ``"jsonrpc"`` key was dropped, and its editor waited for ever.
- goose/* params are kept as plain JSON (the handlers structure them with field names in
  their errors); a standard request pygls cannot read is answered with InvalidParams at
  once instead of being dropped.
- After ``shutdown``, a request gets InvalidRequest, as LSP says, not silence; so does a
  request whose method is not a string.
- goose/* notifications are written as plain JSON, and every write of one event-loop turn
  goes out together, every byte of it (``writer.py``).
- ``initialize`` is answered from the declared capabilities (:mod:`goose_ls.lsp.capabilities`)
  before goose-ls's features are loaded: they are assembled once the answer is out and
  before the next message is read, and checked against what the answer said. A request
  before ``initialize`` gets ServerNotInitialized, as LSP says.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Generator
from typing import Any

import attrs
from cattrs import transform_error
from cattrs.errors import ClassValidationError
from lsprotocol.types import (
    EXIT,
    INITIALIZE,
    SHUTDOWN,
    TEXT_DOCUMENT_DID_CHANGE,
    TEXT_DOCUMENT_DID_CLOSE,
    TEXT_DOCUMENT_DID_OPEN,
    WINDOW_SHOW_MESSAGE,
    DidChangeTextDocumentParams,
    ErrorCodes,
    InitializeParams,
    InitializeResult,
    MessageType,
    ResponseError,
    ServerCapabilities,
    ShowMessageParams,
    TextDocumentContentChangeWholeDocument,
    VersionedTextDocumentIdentifier,
)
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol, lsp_method

from goose_ls.lsp import capabilities
from goose_ls.lsp.wire.versions import VersionGate
from goose_ls.lsp.wire.writer import GatheringWriter, PipeWriter, Through

log = logging.getLogger(__name__)


@attrs.define
class _RawRequest:
    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class _RawNotification:
    method: str
    jsonrpc: str
    params: Any = None


def _describe(error: BaseException | None) -> str:
    """The first few problems cattrs found, with where they are."""
    if isinstance(error, ClassValidationError):
        return "; ".join(transform_error(error, path="message")[:3])
    return str(error) if error else "unreadable"


class GooseProtocol(LanguageServerProtocol):
    """LSP plus goose/* methods whose params arrive as plain JSON; document changes
    applied in version order (:mod:`goose_ls.lsp.wire.versions`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.versions = VersionGate(self._changed)
        self.assemble: Callable[[InitializeParams], None] | None = None
        """Loads and registers goose-ls's features, given ``initialize``'s params."""
        self._initialized = False
        self._to_assemble: InitializeParams | None = None
        self.send_through: Through = lambda send, size: False
        """Sees each write to the editor first: the journal's (see
        :class:`~goose_ls.lsp.wire.writer.GatheringWriter`)."""
        super().__init__(*args, **kwargs)

    @lsp_method(INITIALIZE)
    def lsp_initialize(self, params: InitializeParams) -> Generator[Any, Any, InitializeResult]:
        """pygls' answer, with the declared capabilities: the features are not loaded yet."""
        result: InitializeResult = yield from super().lsp_initialize(params)
        declared = self._capabilities(
            set(capabilities.FEATURES),
            {k: v for k, v in capabilities.FEATURES.items() if v is not None},
            list(capabilities.COMMANDS),
        )
        self.server_capabilities = result.capabilities = declared
        if not self._initialized:
            self._initialized = True
            self._to_assemble = params
        return result

    def _capabilities(
        self, features: set[str], options: dict[str, Any], commands: list[str]
    ) -> ServerCapabilities:
        built: ServerCapabilities = ServerCapabilitiesBuilder(
            self.client_capabilities,
            features | set(self.fm.builtin_features),
            options,
            commands,
            self._server._text_document_sync_kind,  # noqa: SLF001 (what pygls' answer reads)
            self._server._notebook_document_sync,  # noqa: SLF001
            ServerCapabilitiesBuilder.choose_position_encoding(self.client_capabilities),
        ).build()  # type: ignore[no-untyped-call]
        return built

    def _assemble(self) -> None:
        """The features, once ``initialize`` is answered (or before the next message,
        should that come first): registered, then checked against the answer. What goes
        wrong is told: the editor has its answer already, and would hear nothing more."""
        params, self._to_assemble = self._to_assemble, None
        if params is None or self.assemble is None:
            return
        try:
            self.assemble(params)
            served = self._capabilities(
                set(self.fm.features), self.fm.feature_options, list(self.fm.commands)
            )
            if served != self.server_capabilities:
                differ = [
                    f"{field.name}: {getattr(served, field.name)}"
                    for field in attrs.fields(ServerCapabilities)
                    if getattr(served, field.name) != getattr(self.server_capabilities, field.name)
                ]
                raise RuntimeError(
                    "the features registered are not those goose_ls/lsp/capabilities.py "
                    f"declares; registered: {'; '.join(differ)}"
                )
        except Exception:
            log.exception("goose-ls could not start")
            self.notify(
                WINDOW_SHOW_MESSAGE,
                ShowMessageParams(MessageType.Error, "goose-ls could not start; see its log"),
            )

    def _handle_notification(self, method_name: str, params: Any) -> None:
        """Document changes go on in version order, before any handler sees them."""
        if method_name == TEXT_DOCUMENT_DID_CHANGE:
            self.versions.arrived(params)
            return
        if method_name == TEXT_DOCUMENT_DID_OPEN:
            self.versions.opened(params.text_document.uri, params.text_document.version)
        elif method_name == TEXT_DOCUMENT_DID_CLOSE:
            self.versions.closed(params.text_document.uri)
        super()._handle_notification(method_name, params)

    def _changed(self, params: DidChangeTextDocumentParams) -> None:
        super()._handle_notification(TEXT_DOCUMENT_DID_CHANGE, params)

    def resync(self, uri: str, text: str) -> None:
        """Take ``text`` as the whole of an open document (read back from its file), past
        the version gate: the changes it stands for will never come."""
        change = DidChangeTextDocumentParams(
            text_document=VersionedTextDocumentIdentifier(uri=uri, version=0),
            content_changes=[TextDocumentContentChangeWholeDocument(text=text)],
        )
        super()._handle_notification(TEXT_DOCUMENT_DID_CHANGE, change)

    def _run_generator(self, future: Any, *, gen: Any, result_future: Any) -> None:
        """A builtin handler's next step, unless the handler it waited on was cancelled.

        That happens when the editor leaves without waiting for the answer to
        ``shutdown`` (Neovim at ``:qa!``): the event loop ends and cancels the handler
        still stopping the agent, and pygls would raise the cancellation into the loop's
        exception handler, a traceback in the log. The exit hooks stop the agent then;
        no answer is written to a pipe nobody reads."""
        if future is not None and future.cancelled():
            log.info("the editor left before a request was answered")
            gen.close()
            return
        super()._run_generator(future, gen=gen, result_future=result_future)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """The ``json`` object hook: every object stays JSON; the message is read whole."""
        return data

    def handle_message(self, message: Any) -> None:
        self._assemble()  # a message right behind initialize's answer waits for it
        if isinstance(message, dict):
            message = self._read(message)
            if message is None:
                return
        super().handle_message(message)
        if self._to_assemble is not None:
            # After the answer: the writer sends what this message wrote at the end of
            # this loop turn (``writer.py``), and the reader has not yet handed on the
            # next message.
            try:
                asyncio.get_running_loop().call_soon(self._assemble)
            except RuntimeError:  # no loop (a test driving the protocol): now
                self._assemble()

    def _read(self, data: dict[str, Any]) -> Any:
        method = data.get("method")
        if "method" in data and not isinstance(method, str):
            # pygls would look for its handler and fail inside (a TypeError as the answer).
            if "id" in data:
                self._send_response(
                    data["id"],
                    error=ResponseError(
                        ErrorCodes.InvalidRequest,
                        f"the method must be a string, not {json.dumps(method)[:40]}",
                    ),
                )
            else:
                log.warning("dropped a notification whose method is not a string")
            return None
        if "id" in data and not self._initialized and method not in (INITIALIZE, SHUTDOWN):
            self._send_response(
                data["id"],
                error=ResponseError(
                    ErrorCodes.ServerNotInitialized, "goose-ls has not been initialized yet"
                ),
            )
            return None
        if "id" in data and isinstance(method, str) and self._shutdown and method != EXIT:
            self._send_response(
                data["id"],
                error=ResponseError(
                    ErrorCodes.InvalidRequest, f"{method}: goose-ls is shutting down"
                ),
            )
            return None
        if isinstance(method, str) and method.startswith("goose/") and "jsonrpc" in data:
            params = data.get("params")
            if "id" in data:
                return _RawRequest(data["id"], method, data["jsonrpc"], params)
            return _RawNotification(method, data["jsonrpc"], params)
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and method is None and "result" in data:
                # An answer that does not fit its request's type (eglot 1.9 answers
                # window/showDocument with null) goes to the request as it is, rather
                # than leaving it waiting for ever.
                self._handle_response(data["id"], data["result"])
                return None
            if "id" not in data or not isinstance(method, str):
                log.warning("dropped an unreadable message: %s", _describe(exc.__cause__))
                return None
            # pygls would drop a request it cannot read, leaving the editor waiting for
            # ever; answer it with the error now.
            problem = _describe(exc.__cause__)
            self._send_response(
                data["id"], error=ResponseError(exc.code, f"{method}: invalid params: {problem}")
            )
            return None

    def set_writer(self, writer: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(writer, StdoutWriter):
            # pygls' StdoutWriter keeps the stream it was given as ``_stdout``.
            pipe = PipeWriter(writer._stdout.fileno())  # noqa: SLF001 (contract-tested)
            writer = GatheringWriter(pipe, lambda send, size: self.send_through(send, size))
        super().set_writer(writer, *args, **kwargs)

    def notify_json(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification whose params are plain JSON already, as they are.

        goose/* notifications take this way, once per chunk; pygls' ``notify`` walks the
        params with cattrs first.
        """
        if self.writer is None:
            return
        body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params})
        self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body.encode()))

    def notify_encoded(self, method: str, *params: str) -> None:
        """The same, for params that are JSON text already (the journal's, replayed),
        given in pieces: joined once, with the message around them."""
        if self.writer is None:
            return
        head = f'{{"jsonrpc":"2.0","method":{json.dumps(method)},"params":'
        text = "".join((head, *params, "}"))
        try:
            body = text.encode()
        except UnicodeEncodeError:  # a lone surrogate an agent sent: escaped, as JSON allows
            body = json.dumps(json.loads(text)).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
