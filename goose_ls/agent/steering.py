"""Steering: a message taken into the turn that is running, instead of waiting behind it.

ACP has no method for it yet (its v2 draft calls it ``session/inject``); agents ship one of
two extensions, neither known to the SDK (0.12.1), so both are sent as raw JSON:

- ``_session/steering {sessionId, prompt}`` → ``{outcome}``, from an agent whose
  ``initialize`` answer says ``_meta.steering.supported`` (the Claude and Codex adapters).
  goose-ls asks ``_meta.steering.idleBehavior: "promptRequired"``: when the turn has ended
  meanwhile the agent answers ``promptRequired`` and leaves the message to be sent as a
  prompt of its own, so that goose-ls alone starts turns.
- goose's ``_goose/unstable/session/steer {sessionId, prompt, expectedRunId}`` →
  ``{runId, messageId}``. goose advertises nothing; it names the running turn in a
  ``session_info_update`` (``_meta.goose.activeRunId``), and only a turn so named can be
  steered. A run that has ended meanwhile is an error, as is any other refusal.
"""

from __future__ import annotations

from typing import Any, Literal

ACP_STEERING = "session/steering"
"""``_session/steering``, as the SDK's ``ext_method`` takes it (it adds the ``_``)."""

GOOSE_STEER = "goose/unstable/session/steer"
"""``_goose/unstable/session/steer``, as ``ext_method`` takes it."""

Shape = Literal["acp", "goose"]


def advertised(meta: dict[str, Any] | None) -> bool:
    """Whether an ``initialize`` answer's ``_meta`` says ``steering.supported``."""
    steering = (meta or {}).get("steering")
    return isinstance(steering, dict) and steering.get("supported") is True


def shape(advertises: bool, run_id: str | None) -> Shape | None:
    """How to steer a session's running turn: the advertised extension, goose's (for a
    turn goose named), or None when the agent cannot take a message into it."""
    if advertises:
        return "acp"
    return "goose" if run_id else None


def request(
    kind: Shape, session_id: str, blocks: list[dict[str, Any]], run_id: str | None
) -> tuple[str, dict[str, Any]]:
    """The extension method and params that steer with ``blocks``."""
    if kind == "goose":
        return GOOSE_STEER, {"sessionId": session_id, "prompt": blocks, "expectedRunId": run_id}
    steering = {"steering": {"idleBehavior": "promptRequired"}}
    return ACP_STEERING, {"sessionId": session_id, "prompt": blocks, "_meta": steering}


def taken(kind: Shape, answer: Any) -> bool | str:
    """True when the agent took the message into the turn; False when it asks for it as
    a prompt of its own (the turn ended); else what went wrong, for the user."""
    if not isinstance(answer, dict):
        return f"the agent answered {answer!r}"
    if kind == "goose":
        return True if isinstance(answer.get("runId"), str) else f"the agent answered {answer}"
    outcome = answer.get("outcome")
    if outcome == "injected":
        return True
    if outcome == "promptRequired":
        return False
    reason = answer.get("reason")
    return f"the agent answered {outcome!r}" + (f" ({reason})" if reason else "")
