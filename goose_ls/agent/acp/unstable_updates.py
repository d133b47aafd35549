"""What ACP's unstable schema adds that the SDK (0.12.1) has no model for.

The SDK refuses a ``session/update`` whose kind it does not know, so these are read from
the message's JSON in the transport, checked by hand, and handed on as events:

- a ``notice`` (an advisory: ``{severity, title, description?}``) becomes a note;
- ``compaction_update`` and ``compaction_summary_chunk`` (the agent compacts the
  conversation) become :class:`~goose_ls.events.Compaction` events and their chunks;
- ``subagent_update`` (a child session the agent runs, announced on its parent) becomes
  a :class:`~goose_ls.events.Subagent`, its texts cut to a length a heading can show;
- ``session_message`` and ``session_message_chunk`` (a subagent's task, as its parent
  and the subagent see it) become :class:`~goose_ls.events.SessionMessage`;
- a ``plan_update`` of a kind the SDK does not know (plan operations, stabilised after
  SDK 0.12.1, may bring more than ``items``, ``markdown`` and ``file``) becomes a
  :class:`~goose_ls.events.PlanUpdate` as it came.

A field the SDK's models drop is carried past them in ``_meta`` (:func:`carry_fields`):
a tool call's ``name``, a markdown plan's ``path``, and the agent's capabilities as it sent them in its ``initialize``
answer (:func:`carry_capabilities`: ``sessionCapabilities.systemPrompt``). An agent sends
notices and compaction updates only to a client that offers them
(``clientCapabilities.session.notices`` and ``.compaction``), which the SDK cannot say
either: :func:`offer_unstable` adds them to the ``initialize`` request, with
``clientCapabilities.subagents`` (subagents reported as child sessions). The way out is
the same: a session's ``systemPrompt`` goes through the SDK in ``_meta`` and
:func:`lift_system_prompt` puts it where ACP has it, beside ``cwd``.

What a child session sends is read here like any session's: which session it belongs
to is the sessions layer's to decide (:mod:`goose_ls.sessions.registry`).
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from goose_ls import events
from goose_ls.agent.acp.goose_notices import ask_for_notices
from goose_ls.agent.interface import CARRIED_CAPABILITIES
from goose_ls.prompt_limits import cut
from goose_ls.wire import WireError, from_wire

SUBAGENT_ID_CHARS = 200
"""The longest child session id taken (Claude's are 17 characters, or 40 after a resume):
the id is kept for the session's life and sent with each of its updates."""
SUBAGENT_TITLE_CHARS = 120
SUBAGENT_DESCRIPTION_CHARS = 300
"""How much of a subagent's title and description its heading shows."""
STATE_CHARS = 40
"""The longest state or stop reason word taken (ACP's are one word)."""

_SEVERITIES: dict[str, Literal["info", "warning", "error"]] = {
    "info": "info",
    "warning": "warning",
    "error": "error",
}

CARRIED_NAME = "goose-ls/name"
"""The ``_meta`` key a tool call's ``name`` travels under, past the SDK."""

CARRIED_PATH = "goose-ls/path"
"""The ``_meta`` key a markdown plan's ``path`` travels under, past the SDK."""

PLAN_KINDS = frozenset({"items", "markdown", "file"})
"""The plans the SDK has a model for; a ``plan_update`` of another is read here."""

CARRIED_SYSTEM_PROMPT = "goose-ls/systemPrompt"
"""The ``_meta`` key a session set-up request's ``systemPrompt`` travels under, through
the SDK, to the transport (:func:`lift_system_prompt`)."""

SET_UP = frozenset({"session/new", "session/load", "session/resume", "session/fork"})
"""The requests that carry a ``systemPrompt`` (ACP sends it again with each)."""

_COMPACTION: dict[str, type[events.Compaction | events.CompactionSummaryChunk]] = {
    cls.KIND: cls for cls in (events.Compaction, events.CompactionSummaryChunk)
}


def unstable_update(message: dict[str, Any]) -> tuple[str, events.SessionEvent] | None:
    """The session and event of an update only the unstable schema has; None otherwise."""
    if message.get("method") != "session/update" or "id" in message:
        return None
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(session_id := params.get("sessionId"), str):
        return None
    update = params.get("update")
    if not isinstance(update, dict):
        return None
    kind = update.get("sessionUpdate")
    if not isinstance(kind, str):
        return None  # the SDK's path refuses it, with a log line
    if kind == "notice":
        note = _note(update)
        return None if note is None else (session_id, note)
    if kind == "subagent_update":
        subagent = _subagent(update)
        return None if subagent is None else (session_id, subagent)
    if kind in ("session_message", "session_message_chunk"):
        said = _session_message(update, append=kind == "session_message_chunk")
        return None if said is None else (session_id, said)
    if kind == "plan_update":
        plan = _unknown_plan(update.get("plan"))
        return None if plan is None else (session_id, events.PlanUpdate(plan))
    if (cls := _COMPACTION.get(kind)) is not None:
        fields = {k: v for k, v in update.items() if k not in ("sessionUpdate", "_meta")}
        try:
            return session_id, from_wire(fields, cls)
        except WireError:
            return None  # malformed: the SDK's path logs and drops it
    return None


def _subagent(update: dict[str, Any]) -> events.Subagent | None:
    """A ``subagent_update`` checked by hand: a usable child id, texts cut, the state's
    word; None (dropped, with the SDK's log line) for one that names no child."""
    child = update.get("sessionId")
    if not isinstance(child, str) or not child.strip() or len(child) > SUBAGENT_ID_CHARS:
        return None
    state = update.get("state")
    word = state.get("state") if isinstance(state, dict) else None
    reason = state.get("stopReason") if isinstance(state, dict) else None
    capabilities = update.get("capabilities", ...)
    cancellable = None
    if capabilities is None or isinstance(capabilities, dict):
        cancellable = isinstance(capabilities, dict) and isinstance(
            capabilities.get("cancel"), dict
        )
    return events.Subagent(
        child,
        title=_text(update.get("title"), SUBAGENT_TITLE_CHARS),
        description=_text(update.get("description"), SUBAGENT_DESCRIPTION_CHARS),
        state=_text(word, STATE_CHARS),
        stop_reason=_text(reason, STATE_CHARS) if word == "idle" else None,
        cancellable=cancellable,
    )


def _text(value: object, limit: int) -> str | None:
    """Agent text for a heading: a string with something in it, cut to ``limit``."""
    return cut(value.strip(), limit) if isinstance(value, str) and value.strip() else None


def _session_message(update: dict[str, Any], append: bool) -> events.SessionMessage | None:
    """A message between sessions, its text blocks only (a task is words)."""
    message_id = update.get("messageId")
    if not isinstance(message_id, str) or not message_id:
        return None
    content = update.get("content")
    blocks = [content] if append else content
    if not isinstance(blocks, list):
        return None
    texts = [
        {"type": "text", "text": block["text"]}
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    sender, recipient = update.get("senderSessionId"), update.get("recipientSessionId")
    return events.SessionMessage(
        message_id,
        texts,
        sender if isinstance(sender, str) else None,
        recipient if isinstance(recipient, str) else None,
        append,
    )


def _unknown_plan(plan: Any) -> dict[str, Any] | None:
    """A plan of a kind the SDK has no model for (its validation of the whole update
    would fail): kept as sent, to be shown by what it carries; None for the SDK's own
    kinds, and for one without its ``planId`` and ``type`` (the SDK's path drops it)."""
    if not isinstance(plan, dict) or not isinstance(plan.get("planId"), str):
        return None
    kind = plan.get("type")
    if not isinstance(kind, str) or kind in PLAN_KINDS:
        return None
    return plan


def _note(update: dict[str, Any]) -> events.Note | None:
    title, description = update.get("title"), update.get("description")
    if not isinstance(title, str) or not title.strip():
        return None
    text = title.strip()
    if isinstance(description, str) and description.strip():
        text += f": {description.strip()}"
    severity = update.get("severity")
    return events.Note(
        _SEVERITIES.get(severity, "info") if isinstance(severity, str) else "info", text
    )


def carry_fields(message: dict[str, Any]) -> None:
    """Put a tool call's ``name`` (unstable) in its ``_meta``, and a markdown plan's
    ``path`` (stable since plan operations were) in the plan's: the SDK keeps ``_meta``."""
    params = message.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    if not isinstance(update, dict):
        return
    kind = update.get("sessionUpdate")
    if kind == "plan_update" and isinstance(plan := update.get("plan"), dict):
        if plan.get("type") == "markdown" and isinstance(path := plan.get("path"), str):
            _carry(plan, CARRIED_PATH, path)
        return
    if kind in ("tool_call", "tool_call_update") and isinstance(name := update.get("name"), str):
        _carry(update, CARRIED_NAME, name)


def _carry(target: dict[str, Any], key: str, value: str) -> None:
    if target.get("_meta") is None:
        target["_meta"] = {}
    meta = target["_meta"]
    if isinstance(meta, dict):
        meta[key] = value


def offer_unstable(message: dict[str, Any]) -> None:
    """Offer notices, compaction updates and subagents (and goose's notices), if
    ``message`` is the ``initialize`` request."""
    if message.get("method") != "initialize" or not isinstance(message.get("params"), dict):
        return
    ask_for_notices(message)
    capabilities = message["params"].setdefault("clientCapabilities", {})
    if isinstance(capabilities, dict):
        capabilities.setdefault("subagents", {})
    session = capabilities.setdefault("session", {})
    if isinstance(session, dict):
        session.setdefault("notices", {})
        session.setdefault("compaction", {})


def carry_capabilities(message: dict[str, Any]) -> None:
    """Keep a copy of an ``initialize`` answer's ``agentCapabilities`` as the agent sent
    them, in its ``_meta`` (see :data:`CARRIED_CAPABILITIES`)."""
    result = message.get("result")
    if not isinstance(result, dict) or "protocolVersion" not in result:
        return
    capabilities = result.get("agentCapabilities")
    if not isinstance(capabilities, dict):
        return
    if result.get("_meta") is None:
        result["_meta"] = {}
    meta = result["_meta"]
    if isinstance(meta, dict):
        meta[CARRIED_CAPABILITIES] = copy.deepcopy(capabilities)


def lift_system_prompt(message: dict[str, Any]) -> None:
    """Move a session set-up request's ``systemPrompt`` from ``_meta``, where it went
    through the SDK (0.12.1 has no field for it), to its params, where ACP has it."""
    if message.get("method") not in SET_UP or not isinstance(params := message.get("params"), dict):
        return
    meta = params.get("_meta")
    if not isinstance(meta, dict) or CARRIED_SYSTEM_PROMPT not in meta:
        return
    params["systemPrompt"] = meta.pop(CARRIED_SYSTEM_PROMPT)
    if not meta:
        del params["_meta"]


def amend(message: dict[str, Any]) -> None:
    """What goose-ls adds to a message on its way out that the SDK cannot say."""
    offer_unstable(message)
    lift_system_prompt(message)
