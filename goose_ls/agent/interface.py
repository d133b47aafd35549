"""The agent layer's interface to the layers above, free of the ACP SDK.

The callbacks it needs and the session options it reports (its errors are in
:mod:`goose_ls.errors`). The SDK takes
about a second to import (its pydantic schema); keeping it out of this module lets the
server answer ``initialize`` before loading it (see ``AgentSupervisor``).
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import attrs

from goose_ls import events
from goose_ls.workspace.agent_sandbox import Bounds

CARRIED_CAPABILITIES = "goose-ls/agentCapabilities"
"""The ``_meta`` key of an ``initialize`` answer under which its ``agentCapabilities``
travel whole, past the SDK (which drops what it has no model for; see
:func:`goose_ls.agent.acp.unstable_updates.carry_capabilities`)."""


RENAME = "goose-ls/rename"
"""The ``_meta`` key of an ``initialize`` answer whose agent takes a chat's new title
(goosed, through goose-ls's translation: ``_goose-ls/rename``); ACP has no such request."""


class AgentCallbacks(Protocol):
    """What the upper layers provide to the agent layer."""

    def session_event(self, session_id: str, event: events.SessionEvent) -> None:
        """An update arrived; called in arrival order, before the next one is read."""

    async def request_permission(
        self,
        session_id: str,
        tool_call: events.ToolCallUpdate,
        options: list[events.PermissionOption],
        foreign: tuple[str, ...] = (),
    ) -> str | None:
        """Return the chosen ``optionId``, or None when the turn was cancelled.
        ``foreign``: paths the call names on the agent's side only (``agent.pathMap``
        maps them nowhere): no rule of the user's can judge them, so the user decides."""

    async def elicit(
        self,
        session_id: str,
        message: str,
        schema: dict[str, Any] | None,
        url: str | None,
        tool_call_id: str | None = None,
    ) -> tuple[events.ElicitationAction, dict[str, Any] | None]:
        """Ask the user: a form with ``schema``, or the page at ``url`` (schema None),
        asked by the tool call ``tool_call_id`` when the agent names one (Claude's
        AskUserQuestion). The action, and the form's content when accepted."""

    def warning(self, message: str) -> None:
        """Something about the agent's setup the user should hear (once, however often
        it is said: each start of the agent says it again)."""


class ClientTools(Protocol):
    """Files and terminals the agent may ask goose-ls for (when it offers ``fs``/``terminal``)."""

    def directories(self) -> list[str]:
        """The folders besides a session's ``cwd`` the agent may work in, absolute
        (ACP's ``additionalDirectories``), confined like the workspace."""

    async def sandbox_bounds(self) -> Bounds:
        """What the agent's own process may write, and what it must not see, in the
        workspace and the home folder (surveyed anew at each start)."""

    def refusal(self, session_id: str, action: str, path: str, why: str) -> ClientRefusal:
        """The error for a request refused before it reached these tools (``action``:
        ``read <path>``...), told and recorded as their own refusals are."""

    async def read_text_file(
        self, session_id: str, path: str, line: int | None, limit: int | None
    ) -> str:
        """The file's text (``line`` 1-based, ``limit`` lines); raise :class:`ClientRefusal`."""

    async def write_text_file(self, session_id: str, path: str, content: str) -> None: ...

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str],
        env: dict[str, str],
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> str:
        """Start a terminal and return its id."""

    async def terminal_output(
        self, session_id: str, terminal_id: str
    ) -> tuple[str, bool, tuple[int | None, str | None] | None]:
        """(output, truncated, exit status or None while it runs)."""

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str
    ) -> tuple[int | None, str | None]: ...

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None: ...

    async def release_terminal(self, session_id: str, terminal_id: str) -> None: ...


class ClientRefusal(Exception):
    """goose-ls will not do what the agent asked; becomes a JSON-RPC error to the agent."""

    NOT_FOUND = -32002
    INVALID = -32602
    DENIED = -32003

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@attrs.frozen
class SessionOptions:
    """The modes and config options a session has (either may be absent)."""

    modes: dict[str, Any] | None = None
    config_options: list[dict[str, Any]] | None = None

    @classmethod
    def of(cls, response: Any) -> SessionOptions:
        if response is None:
            return cls()
        modes = getattr(response, "modes", None)
        options = getattr(response, "config_options", None)
        return cls(
            model_json(modes) if modes is not None else None,
            [model_json(o) for o in options] if options is not None else None,
        )


@attrs.frozen
class SystemPrompt:
    """A chat's system prompt (ACP's ``systemPrompt``): its texts, added to the agent's own
    instructions (``append``) or put in their place (``override``)."""

    mode: Literal["append", "override"]
    texts: tuple[str, ...]

    def wire(self) -> dict[str, Any]:
        """As ACP sends it: text blocks only, never none."""
        return {"mode": self.mode, "content": [{"type": "text", "text": t} for t in self.texts]}


def model_json(model: Any) -> dict[str, Any]:
    """An SDK (pydantic) model as the camelCase JSON the agent sent."""
    data: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data
