"""The one family of problems goose-ls reports to a person: what went wrong, and the fix.

Every layer raises these; the LSP layer shows ``str(error)`` ("problem. fix") in a
message, a note or a JSON-RPC error, so nobody formats them by hand.
"""

from __future__ import annotations


class GooseLsError(Exception):
    """A problem the user reads: ``message``, and ``fix`` when there is something to do."""

    def __init__(self, message: str, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        if not self.fix:
            return self.message
        return f"{self.message.rstrip('.')}. {self.fix}"


class AgentError(GooseLsError):
    """An agent request failed, or the agent cannot be had.

    ``code`` is the agent's JSON-RPC error code when it answered with one; ``reason``
    names why the agent is unavailable (``missing``, ``outdated``, ``unusable``...).
    """

    def __init__(
        self,
        message: str,
        code: int | None = None,
        *,
        fix: str | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(message, fix)
        self.code = code
        self.reason = reason


class AgentGone(AgentError):
    """The agent process stopped while a request was waiting for it."""


class AgentBusy(AgentError):
    """The agent will not start a turn in this session now: one runs there already, for
    another client of the same agent (another window on a shared goose serve)."""


class AgentUnavailable(AgentError):
    """The agent cannot be started (not found, too old, or not an ACP agent)."""

    def __init__(self, reason: str, message: str, fix: str) -> None:
        super().__init__(message, fix=fix, reason=reason)


class UnknownSession(GooseLsError):
    """No open (or stored) session has this id."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"unknown session {session_id!r}")
        self.session_id = session_id


class Refused(GooseLsError):
    """goose-ls will not do what was asked (a bad prompt, nothing to send, ...)."""
