"""The goose/* protocol, version 1: method names and typed params.

pygls would hand custom params over as namedtuples; goose-ls takes them as plain JSON
and structures them into the classes below, so a bad request gets an InvalidParams error
that names the field. ``docs/protocol.md`` is the contract these classes implement.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal, TypeVar

import attrs
from pygls.exceptions import JsonRpcInvalidParams

from goose_ls.lsp.symbols import SEARCH_LIMIT
from goose_ls.sessions import AgentStatus, ContextItem
from goose_ls.wire import WireError, from_wire, to_wire

PROTOCOL_VERSION = 1
MAX_SEARCH_LIMIT = 500


def status_to_wire(status: AgentStatus) -> dict[str, Any]:
    """The agent's state as ``goose/agentStatus`` and ``goose/status`` carry it."""
    data: dict[str, Any] = to_wire(status)
    data["state"] = status.state.value
    return data


NEW_SESSION = "goose/newSession"
PROMPT = "goose/prompt"
CANCEL = "goose/cancel"
STEER = "goose/steer"
STATUS = "goose/status"
PERMISSION = "goose/permission"
ELICITATION = "goose/elicitation"
REPLAY = "goose/replay"
LIST_SESSIONS = "goose/listSessions"
LOAD_SESSION = "goose/loadSession"
FORK_SESSION = "goose/forkSession"
CLOSE_SESSION = "goose/closeSession"
DELETE_SESSION = "goose/deleteSession"
RENAME_SESSION = "goose/renameSession"
SET_MODE = "goose/setMode"
SET_CONFIG_OPTION = "goose/setConfigOption"
RESTART = "goose/restart"
AUTHENTICATE = "goose/authenticate"
SIGN_IN_COMMAND = "goose/signInCommand"
LOGOUT = "goose/logout"
SEARCH_SESSIONS = "goose/searchSessions"
FIND_FILES = "goose/findFiles"

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
class ForkParams:
    session_id: str
    message_id: str
    """The turn the new chat goes on from: its history ends with that turn."""
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
    steer: bool = False
    """Send it into the running turn where the agent can take it, instead of queuing it."""

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
class SteerParams:
    session_id: str
    message_id: str | None = None
    """The waiting prompt to send now; without it, the oldest."""


@attrs.frozen
class PermissionParams:
    request_id: str
    option_id: str | None = None
    """The chosen option; omitted or null answers ``cancelled``."""


@attrs.frozen
class ElicitationParams:
    session_id: str
    request_id: str
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None
    """The form's values when accepting; left out otherwise."""


@attrs.frozen
class RestartParams:
    server: bool = False
    """With ``agent.share``: stop the shared goose serve too, so that every window
    reconnects to a new one (as after ``goose configure``)."""


@attrs.frozen
class AuthenticateParams:
    method_id: str | None = None
    """A terminal sign-in the user ran, which exited 0; without it, the methods that
    can succeed on their own are tried."""


@attrs.frozen
class SignInCommandParams:
    method_id: str


@attrs.frozen
class ReplayParams:
    session_id: str
    after_index: int = 0


@attrs.frozen
class FindFilesParams:
    query: str = ""
    """What the user typed after ``@``: paths holding it are found (case aside)."""


@attrs.frozen
class SearchSessionsParams:
    query: str
    """Words to find in past chats; empty lists the latest chats."""
    limit: int = SEARCH_LIMIT

    def problem(self) -> str | None:
        if not 1 <= self.limit <= MAX_SEARCH_LIMIT:
            return f"limit: must be from 1 to {MAX_SEARCH_LIMIT}"
        return None


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
