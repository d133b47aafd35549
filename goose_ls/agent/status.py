"""The agent's state as the editor is told it (``goose/agentStatus``)."""

from __future__ import annotations

from enum import Enum
from typing import Any

import attrs


class AgentState(str, Enum):
    STOPPED = "stopped"
    STARTING = "starting"
    RUNNING = "running"
    ERROR = "error"


LOST = ("crashed", "disconnected")
"""The reasons of an agent that ended without being asked to (its process, or the
connection to its server): recovery starts it again and reattaches the chats."""


@attrs.frozen
class SignIn:
    """A terminal sign-in a plugin can run for the user (its command is asked for with
    ``goose/signInCommand``: the status, shown and shared, carries no values)."""

    method_id: str
    label: str


@attrs.frozen
class AgentStatus:
    """What the editor is told about the agent (``goose/agentStatus``)."""

    state: AgentState
    message: str | None = None
    fix: str | None = None
    reason: str | None = None
    binary: str | None = None
    version: str | None = None
    pid: int | None = None
    url: str | None = None
    shared: bool | None = None
    """``agent.share``: the server at ``url`` is the one all of the user's goose-ls share."""
    agent: dict[str, Any] | None = None
    name: str | None = None
    """The agent's name for people (``agentInfo.title``, else its name), once it runs."""
    sandbox: str | None = None
    """What the agent's own process may reach (``agent.sandbox``), when goose-ls starts it."""
    sign_in: tuple[SignIn, ...] | None = None
    """With reason ``auth_required``: the agent's terminal sign-ins, ready to run."""
