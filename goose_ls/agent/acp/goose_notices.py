"""goose's own status messages, which it sends only to a client that asks for them.

goose tells what it does between replies ("Compacting the conversation", a provider's
notice) only as ``_goose/unstable/session/update`` ``status_message`` notifications, and
only to a client whose ``initialize`` set ``clientCapabilities._meta.goose.
customNotifications``. goose-ls asks, and shows each message in the chat as a note.

The SDK (0.12.1) has no ``_meta`` on ``ClientCapabilities``, so :func:`ask_for_notices`
adds it to the ``initialize`` request's JSON on its way to the agent. Agents other than
goose ignore a ``_meta`` key they do not know, as ACP asks them to.
"""

from __future__ import annotations

from typing import Any

from goose_ls import events

SESSION_UPDATE = "goose/unstable/session/update"
"""The notification's name as the SDK hands extension notifications over (its leading
underscore taken off)."""


def ask_for_notices(message: dict[str, Any]) -> None:
    """Opt in to goose's custom notifications, if ``message`` is the ``initialize`` request."""
    if message.get("method") != "initialize" or not isinstance(message.get("params"), dict):
        return
    capabilities = message["params"].setdefault("clientCapabilities", {})
    meta = capabilities.setdefault("_meta", {})
    meta.setdefault("goose", {})["customNotifications"] = True


def status_note(params: Any) -> tuple[str, events.Note] | None:
    """The session and note of a ``status_message`` update; None for anything else (goose's
    own usage and per-message usage updates repeat what standard updates say)."""
    if not isinstance(params, dict) or not isinstance(session_id := params.get("sessionId"), str):
        return None
    update = params.get("update")
    if not isinstance(update, dict) or update.get("sessionUpdate") != "status_message":
        return None
    status = update.get("status")
    message = status.get("message") if isinstance(status, dict) else None
    if not isinstance(message, str) or not message.strip():
        return None
    return session_id, events.Note("info", f"goose: {message.strip()}")
