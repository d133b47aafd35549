"""What goose-ls relies on in its dependencies' private parts, checked against them.

goose-ls overrides or patches a few private methods and attributes of pygls, the ACP SDK
and pydantic (docs/architecture.md, "Reaching into dependencies"). pyproject pins those
dependencies to the versions tested; these tests say, by name, which reach-in an upgrade
breaks, instead of a language server that drops messages or an editor that waits for
ever. Each failure message starts with the goose-ls code that depends on the contract.
"""

from __future__ import annotations

import asyncio
import inspect
import io
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from goose_ls.lsp import capabilities
from goose_ls.lsp.wire.jsonrpc import GooseProtocol


class _Collect:
    """A pygls writer that keeps what is written."""

    def __init__(self) -> None:
        self.data: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.data.append(data)

    def close(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        bodies = (chunk.split(b"\r\n\r\n", 1)[-1] for chunk in self.data)
        return [json.loads(body) for body in bodies]


def _server(protocol: type[LanguageServerProtocol] = LanguageServerProtocol) -> LanguageServer:
    return LanguageServer("contracts", "0", protocol_cls=protocol)


def _arrive(protocol: LanguageServerProtocol, message: dict[str, Any]) -> None:
    """``message`` read from the editor's pipe as pygls reads it."""
    protocol.handle_message(json.loads(json.dumps(message), object_hook=protocol.structure_message))


def _did_open(uri: str = "file:///a.txt") -> dict[str, Any]:
    document = {"uri": uri, "languageId": "text", "version": 1, "text": "hi"}
    return {
        "jsonrpc": "2.0",
        "method": types.TEXT_DOCUMENT_DID_OPEN,
        "params": {"textDocument": document},
    }


def _parameters(function: Any) -> list[str]:
    return list(inspect.signature(function).parameters)


def _private(owner: Any, name: str, where: str) -> Any:
    """``owner``'s ``name``, or a failure that says who needs it."""
    assert hasattr(owner, name), f"{where}: {name} is gone"
    return getattr(owner, name)


# --- pygls: goose_ls/lsp/wire/jsonrpc.py ----------------------------------------------------


def test_handle_notification_sees_every_notification_with_its_method_and_params() -> None:
    seen: list[tuple[str, Any]] = []

    class Spy(LanguageServerProtocol):
        def _handle_notification(self, method_name: str, params: Any) -> None:
            seen.append((method_name, params))

    where = "GooseProtocol._handle_notification (goose_ls/lsp/wire/jsonrpc.py, the version gate)"
    assert _parameters(_private(LanguageServerProtocol, "_handle_notification", where)) == [
        "self",
        "method_name",
        "params",
    ], f"{where}: pygls changed the signature of JsonRPCProtocol._handle_notification"
    _arrive(_server(Spy).protocol, _did_open())
    assert len(seen) == 1, f"{where}: pygls no longer routes notifications through it"
    method, params = seen[0]
    assert method == types.TEXT_DOCUMENT_DID_OPEN, where
    assert isinstance(params, types.DidOpenTextDocumentParams), (
        f"{where}: pygls no longer hands it structured params"
    )


def test_send_response_writes_an_answer_or_an_error_for_an_id() -> None:
    where = "GooseProtocol._read (goose_ls/lsp/wire/jsonrpc.py) answers through _send_response"
    assert _parameters(_private(LanguageServerProtocol, "_send_response", where)) == [
        "self",
        "msg_id",
        "result",
        "error",
    ], f"{where}: pygls changed its signature"
    protocol = _server().protocol
    writer = _Collect()
    protocol.set_writer(writer)
    protocol._send_response(7, error=types.ResponseError(types.ErrorCodes.InvalidRequest, "no"))
    protocol._send_response(8, result=None)
    first, second = writer.messages()
    assert first["id"] == 7 and first["error"]["code"] == types.ErrorCodes.InvalidRequest, where
    assert second == {"jsonrpc": "2.0", "id": 8, "result": None}, where


async def test_handle_response_settles_the_request_it_answers() -> None:
    where = (
        "GooseProtocol._read (goose_ls/lsp/wire/jsonrpc.py) hands an answer pygls cannot read "
        "to _handle_response"
    )
    assert _parameters(_private(LanguageServerProtocol, "_handle_response", where)) == [
        "self",
        "msg_id",
        "result",
        "error",
    ], f"{where}: pygls changed its signature"
    protocol = _server().protocol
    writer = _Collect()
    protocol.set_writer(writer)
    params = types.ShowDocumentParams(uri="file:///a.txt")
    answer = protocol.send_request(types.WINDOW_SHOW_DOCUMENT, params)
    (request,) = writer.messages()
    protocol._handle_response(request["id"], None)  # eglot 1.9's answer
    assert answer.done() and answer.result() is None, f"{where}: the request still waits"


def test_shutdown_flag_is_false_until_shutdown_then_true() -> None:
    where = "GooseProtocol._read (goose_ls/lsp/wire/jsonrpc.py) reads pygls' _shutdown flag"
    protocol = _server().protocol
    assert _private(protocol, "_shutdown", where) is False, f"{where}: the flag is not a bool"
    protocol.set_writer(_Collect())
    _arrive(protocol, {"jsonrpc": "2.0", "id": 1, "method": types.SHUTDOWN})
    assert protocol._shutdown is True, f"{where}: shutdown no longer sets it"


async def test_run_generator_is_the_callback_of_the_handler_a_builtin_waits_on() -> None:
    where = (
        "GooseProtocol._run_generator (goose_ls/lsp/wire/jsonrpc.py, an editor leaving "
        "before shutdown is answered)"
    )
    assert _parameters(_private(LanguageServerProtocol, "_run_generator", where)) == [
        "self",
        "future",
        "gen",
        "result_future",
    ], f"{where}: pygls changed its signature"
    waited_on: list[asyncio.Future[Any]] = []
    called = asyncio.Event()

    class Spy(LanguageServerProtocol):
        def _run_generator(self, future: Any, *, gen: Any, result_future: Any) -> None:
            if future is not None:
                waited_on.append(future)
                called.set()
            super()._run_generator(future, gen=gen, result_future=result_future)

    server = _server(Spy)

    @server.feature(types.SHUTDOWN)
    async def shutdown(*_: Any) -> None:
        return None

    server.protocol.set_writer(_Collect())
    _arrive(server.protocol, {"jsonrpc": "2.0", "id": 1, "method": types.SHUTDOWN})
    await asyncio.wait_for(called.wait(), 5)
    assert isinstance(waited_on[0], asyncio.Future), (
        f"{where}: pygls no longer calls it with the future of the user's handler"
    )


def test_stdout_writer_keeps_its_stream_as_stdout() -> None:
    where = "GooseProtocol.set_writer (goose_ls/lsp/wire/jsonrpc.py) reads StdoutWriter._stdout"
    stream = io.BytesIO()
    assert _private(StdoutWriter(stream), "_stdout", where) is stream, where


def test_start_io_hands_the_protocol_a_stdout_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    where = (
        "GooseProtocol.set_writer (goose_ls/lsp/wire/jsonrpc.py) replaces pygls' StdoutWriter "
        "with goose-ls's whole-write pipe writer"
    )
    given: list[Any] = []

    class Spy(LanguageServerProtocol):
        def set_writer(self, writer: Any, *args: Any, **kwargs: Any) -> None:
            given.append(writer)
            super().set_writer(writer, *args, **kwargs)

    def run(main: Any) -> None:
        main.close()  # the server is not run: only how it was set up is looked at

    monkeypatch.setattr("pygls.server.asyncio.run", run)
    _server(Spy).start_io(io.BytesIO(), io.BytesIO())
    assert len(given) == 1 and isinstance(given[0], StdoutWriter), (
        f"{where}: start_io no longer hands it a StdoutWriter, so stdout is pygls' again"
    )


def test_shutdown_sets_the_stop_event_the_reading_loop_watches() -> None:
    where = (
        "GooseLanguageServer.start_io (goose_ls/lsp/server.py) sets pygls' "
        "LanguageServer._stop_event and runs pygls.io_.run_async with a reader of its own"
    )
    server = _server()
    _private(server, "_stop_event", where)
    server._stop_event = threading.Event()
    server.shutdown()  # type: ignore[no-untyped-call]
    assert server._stop_event.is_set(), f"{where}: shutdown no longer sets it"
    parameters = set(inspect.signature(run_async).parameters)
    assert {"stop_event", "reader", "protocol", "logger", "error_handler"} <= parameters, (
        f"{where}: run_async takes {sorted(parameters)}"
    )


def test_initialize_is_a_builtin_generator_answered_within_the_message() -> None:
    """The answer is pygls' own, its capabilities replaced by the declared ones; it is
    written while the message is handled, so the features can be assembled right behind it."""
    where = "GooseProtocol.lsp_initialize (goose_ls/lsp/wire/jsonrpc.py)"
    assert inspect.isgeneratorfunction(_private(LanguageServerProtocol, "lsp_initialize", where)), (
        f"{where}: pygls' initialize is no longer a generator it can yield from"
    )
    assert _parameters(ServerCapabilitiesBuilder) == [
        "client_capabilities",
        "features",
        "feature_options",
        "commands",
        "text_document_sync_kind",
        "notebook_document_sync",
        "position_encoding",
    ], f"{where}: pygls changed ServerCapabilitiesBuilder"
    server = _server()
    for name in ("_text_document_sync_kind", "_notebook_document_sync"):
        _private(server, name, where)
    written = _Collect()
    protocol = _server(GooseProtocol).protocol
    protocol.set_writer(written)
    params: dict[str, Any] = {"processId": None, "capabilities": {}}
    _arrive(protocol, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    (answer,) = written.messages()
    commands = answer["result"]["capabilities"]["executeCommandProvider"]["commands"]
    assert commands == list(capabilities.COMMANDS), f"{where}: not the declared capabilities"


# --- pygls: goose_ls/lsp/documents.py --------------------------------------------------


@pytest.mark.parametrize(
    "method",
    [types.TEXT_DOCUMENT_DID_OPEN, types.TEXT_DOCUMENT_DID_CHANGE, types.TEXT_DOCUMENT_DID_CLOSE],
)
def test_document_handlers_are_builtin_generators_that_can_be_replaced(method: str) -> None:
    where = (
        f"documents.register (goose_ls/lsp/documents.py) wraps pygls' builtin {method} "
        "handler (transcripts are not kept by pygls)"
    )
    protocol = _server().protocol
    theirs = protocol.fm.builtin_features.get(method)
    assert theirs is not None, f"{where}: pygls has no builtin handler for it"
    assert inspect.isgeneratorfunction(theirs), (
        f"{where}: the builtin is no longer a generator to ``yield from``"
    )
    reached: list[Any] = []

    def ours(params: Any) -> Iterator[Any]:
        reached.append(params)
        yield from ()

    protocol.fm.add_builtin_feature(method, ours)
    document: dict[str, Any] = {"uri": "file:///a.txt"}
    params: dict[str, Any] = {"textDocument": document}
    if method == types.TEXT_DOCUMENT_DID_OPEN:
        document |= {"languageId": "text", "version": 1, "text": "hi"}
    elif method == types.TEXT_DOCUMENT_DID_CHANGE:
        document["version"] = 2
        params["contentChanges"] = [{"text": "hello"}]
    _arrive(protocol, {"jsonrpc": "2.0", "method": method, "params": params})
    assert len(reached) == 1, f"{where}: pygls no longer calls the replaced builtin handler"


# --- the ACP SDK: goose_ls/agent/acp/connection.py ------------------------------------------


class _Silent:
    """An ACP message transport on which nothing arrives."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        pass

    async def receive(self) -> dict[str, Any] | None:
        await self.closed.wait()
        return None

    async def close(self) -> None:
        self.closed.set()


async def test_the_sdk_connection_keeps_its_json_rpc_connection_as_conn() -> None:
    from acp import connect_to_agent
    from acp.connection import Connection
    from acp.meta import AGENT_METHODS
    from acp.utils import request_model_from_dict

    where = (
        "AgentConnection._raw (goose_ls/agent/acp/connection.py: session/delete, logout) "
        "sends on ClientSideConnection._conn"
    )
    conn = connect_to_agent(object(), _Silent(), use_unstable_protocol=True)  # type: ignore[arg-type]
    try:
        rpc = _private(conn, "_conn", where)
        assert isinstance(rpc, Connection), f"{where}: the attribute is gone or changed"
        assert callable(getattr(rpc, "send_request", None)), where
        assert _parameters(request_model_from_dict) == [
            "conn",
            "method",
            "params",
            "response_model",
        ], f"{where}: acp.utils.request_model_from_dict changed"
        assert {"session_delete", "logout"} <= AGENT_METHODS.keys(), where
    finally:
        await conn.close()


# --- pydantic: goose_ls/agent/acp/sdk.py ----------------------------------------------------


def test_pydantic_reads_field_docstrings_in_the_step_goose_ls_skips() -> None:
    import pydantic
    from pydantic._internal import _fields

    from goose_ls.agent.acp import sdk

    where = f"import_sdk (goose_ls/agent/acp/sdk.py) skips pydantic._internal._fields.{sdk.STEP}"
    step = _private(_fields, sdk.STEP, f"{where} (the SDK import is slow again)")
    assert _parameters(step)[:2] == ["cls", "fields"], f"{where}: its signature changed"

    def model() -> type[pydantic.BaseModel]:
        class Model(pydantic.BaseModel):
            model_config = pydantic.ConfigDict(use_attribute_docstrings=True)
            name: str
            """the docstring"""

        return Model

    assert model().model_fields["name"].description == "the docstring", where
    setattr(_fields, sdk.STEP, sdk._skip)
    try:
        skipped = model()
    finally:
        setattr(_fields, sdk.STEP, step)
    assert skipped.model_fields["name"].description is None, (
        f"{where}: pydantic no longer calls it through its module, so skipping does nothing"
    )
    assert skipped.model_validate({"name": "x"}).model_dump() == {"name": "x"}, (
        f"{where}: the models no longer validate without it"
    )
