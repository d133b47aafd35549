"""Updates from ACP's unstable schema that the SDK (0.12.1) has no model for.

The SDK refuses a ``session/update`` whose kind it does not know, so these are read from
the message's JSON in the transport, checked by hand, and handed on as events: a
``notice`` (an advisory: ``{severity, title, description?}``) becomes a note in the chat.
"""

from __future__ import annotations

from typing import Any, Literal

from goose_ls import events

_SEVERITIES: dict[object, Literal["info", "warning", "error"]] = {
    "info": "info",
    "warning": "warning",
    "error": "error",
}


def unstable_update(message: dict[str, Any]) -> tuple[str, events.SessionEvent] | None:
    """The session and event of an update only the unstable schema has; None otherwise."""
    if message.get("method") != "session/update" or "id" in message:
        return None
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(session_id := params.get("sessionId"), str):
        return None
    update = params.get("update")
    if not isinstance(update, dict) or update.get("sessionUpdate") != "notice":
        return None
    title, description = update.get("title"), update.get("description")
    if not isinstance(title, str) or not title.strip():
        return None
    text = title.strip()
    if isinstance(description, str) and description.strip():
        text += f": {description.strip()}"
    severity = _SEVERITIES.get(update.get("severity"), "info")
    return session_id, events.Note(severity, text)
