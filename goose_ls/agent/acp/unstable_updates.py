"""What ACP's unstable schema adds that the SDK (0.12.1) has no model for.

The SDK refuses a ``session/update`` whose kind it does not know, so these are read from
the message's JSON in the transport, checked by hand, and handed on as events:

- a ``notice`` (an advisory: ``{severity, title, description?}``) becomes a note;
- ``compaction_update`` and ``compaction_summary_chunk`` (the agent compacts the
  conversation) become :class:`~goose_ls.events.Compaction` events and their chunks;
- ``subagent_update`` (a child session the agent runs, announced on its parent) becomes
  a :class:`~goose_ls.events.Subagent`, its texts cut to a length a heading can show;
- ``session_message`` and ``session_message_chunk`` (a subagent's task, as its parent
  and the subagent see it) become :class:`~goose_ls.events.SessionMessage`.

A field the SDK's models drop is carried past them in ``_meta`` (:func:`carry_fields`):
a tool call's ``name``. An agent sends notices and compaction updates only to a client
that offers them (``clientCapabilities.session.notices`` and ``.compaction``), which the
SDK cannot say either: :func:`offer_unstable` adds them to the ``initialize`` request,
with ``clientCapabilities.subagents`` (subagents reported as child sessions).

What a child session sends is read here like any session's: which session it belongs
to is the sessions layer's to decide (:mod:`goose_ls.sessions.registry`).
"""

from __future__ import annotations

from typing import Any, Literal

from goose_ls import events
from goose_ls.agent.acp.goose_notices import ask_for_notices
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
    """Put a tool call's ``name`` (unstable) in its ``_meta``, which the SDK keeps."""
    params = message.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    if not isinstance(update, dict) or not isinstance(name := update.get("name"), str):
        return
    if update.get("sessionUpdate") not in ("tool_call", "tool_call_update"):
        return
    meta = update.setdefault("_meta", {})
    if isinstance(meta, dict):
        meta[CARRIED_NAME] = name


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
