"""The goose/* protocol, version 1: method names and typed params.

pygls would hand custom params over as namedtuples; goose-ls takes them as plain JSON
and structures them into the classes below, so a bad request gets an InvalidParams error
that names the field. ``docs/protocol.md`` is the contract these classes implement.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, TypeVar

import attrs
from cattrs import transform_error
from cattrs.errors import ClassValidationError
from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol

from goose_ls.lsp.writer import GatheringWriter
from goose_ls.sessions.context import ContextItem
from goose_ls.wire import WireError, from_wire

PROTOCOL_VERSION = 1

NEW_SESSION = "goose/newSession"
PROMPT = "goose/prompt"
CANCEL = "goose/cancel"
STATUS = "goose/status"
PERMISSION = "goose/permission"
REPLAY = "goose/replay"
LIST_SESSIONS = "goose/listSessions"
LOAD_SESSION = "goose/loadSession"
CLOSE_SESSION = "goose/closeSession"
DELETE_SESSION = "goose/deleteSession"
RENAME_SESSION = "goose/renameSession"
SET_MODE = "goose/setMode"
SET_CONFIG_OPTION = "goose/setConfigOption"
RESTART = "goose/restart"
AUTHENTICATE = "goose/authenticate"

UPDATE = "goose/update"
TURN_END = "goose/turnEnd"
AGENT_STATUS = "goose/agentStatus"

T = TypeVar("T")


@attrs.frozen
class NewSessionParams:
    cwd: str | None = None
    tab_id: str | None = None


@attrs.frozen
class LoadSessionParams:
    session_id: str
    tab_id: str | None = None


@attrs.frozen
class RenameParams:
    session_id: str
    title: str


@attrs.frozen
class SetModeParams:
    session_id: str
    mode_id: str


@attrs.frozen
class SetConfigOptionParams:
    session_id: str
    config_id: str
    value: str | bool


@attrs.frozen
class PromptParams:
    session_id: str
    message_id: str
    prompt: str = ""
    context: list[ContextItem] = attrs.Factory(list)

    def problem(self) -> str | None:
        try:
            uuid.UUID(self.message_id)
        except ValueError:
            return "messageId: must be a UUID"
        for i, item in enumerate(self.context):
            if trouble := item.problem():
                return f"context[{i}]: {trouble}"
        return None


@attrs.frozen
class SessionParams:
    session_id: str


@attrs.frozen
class CancelParams:
    session_id: str
    message_id: str | None = None
    """A waiting prompt to take out of the queue; without it, the running turn."""


@attrs.frozen
class PermissionParams:
    request_id: str
    option_id: str | None = None
    """The chosen option; omitted or null answers ``cancelled``."""


@attrs.frozen
class ReplayParams:
    session_id: str
    after_index: int = 0


def parse(method: str, params: Any, cls: type[T]) -> T:
    """Structure ``params`` or raise InvalidParams naming the method and the field."""
    try:
        value = from_wire({} if params is None else params, cls)
    except (WireError, ValueError) as exc:
        raise JsonRpcInvalidParams(f"{method}: {exc}") from None
    check = getattr(value, "problem", None)
    if check is not None and (problem := check()):
        raise JsonRpcInvalidParams(f"{method}: {problem}")
    return value


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


UNREADABLE = "$/goose-ls/unreadableRequest"
"""Stands in for a request already answered with an error (a ``$/`` method: ignored)."""


def _describe(error: BaseException | None) -> str:
    """The first few problems cattrs found, with where they are."""
    if isinstance(error, ClassValidationError):
        return "; ".join(transform_error(error, path="message")[:3])
    return str(error) if error else "unreadable"


class GooseProtocol(LanguageServerProtocol):
    """LSP plus goose/* methods whose params arrive as plain JSON."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        method = data.get("method")
        if isinstance(method, str) and method.startswith("goose/") and "jsonrpc" in data:
            params = data.get("params")
            if "id" in data:
                return _RawRequest(data["id"], method, data["jsonrpc"], params)
            return _RawNotification(method, data["jsonrpc"], params)
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" not in data or not isinstance(method, str):
                raise  # a malformed notification or response: pygls logs and drops it
            # pygls would drop a request it cannot read, leaving the editor waiting for
            # ever; answer it with the error now.
            problem = _describe(exc.__cause__)
            self._send_response(
                data["id"], error=ResponseError(exc.code, f"{method}: invalid params: {problem}")
            )
            return _RawNotification(UNREADABLE, data["jsonrpc"], None)

    def set_writer(self, writer: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(writer, StdoutWriter):
            writer = GatheringWriter(writer)
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
