"""The chats a window can list: its journal's records and the agent's ``session/list``,
one entry each, with which are open here and which in another window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from goose_ls.sessions.journal.records import NEW_SESSION_TITLE
from goose_ls.sessions.journal.store import SessionStore


def merged(
    store: SessionStore, agent_sessions: list[dict[str, Any]], loaded: set[str]
) -> list[dict[str, Any]]:
    """Local records and the agent's ``session/list``, one entry per session, newest first."""
    entries: dict[str, dict[str, Any]] = {}
    for record in store.all():
        entries[record.session_id] = {
            "sessionId": record.session_id,
            "title": record.title,
            "cwd": record.cwd,
            "createdAt": record.created_at,
            "updatedAt": record.updated_at,
            "transcript": Path(record.transcript_path).as_uri() if record.transcript_path else None,
            "source": "local",
        }
    for info in agent_sessions:
        session_id = str(info.get("sessionId", ""))
        if not session_id:
            continue
        entry = entries.setdefault(
            session_id,
            {
                "sessionId": session_id,
                "title": info.get("title") or NEW_SESSION_TITLE,
                "cwd": info.get("cwd") or None,
                "updatedAt": info.get("updatedAt") or None,
                "source": "agent",
            },
        )
        meta = info.get("_meta")
        if isinstance(meta, dict) and isinstance(meta.get("goosed"), dict):
            entry["desktop"] = True  # Goose Desktop's chat, from its goosed
        if entry["source"] == "local":
            entry["source"] = "both"
            if info.get("title") and entry["title"] == NEW_SESSION_TITLE:
                entry["title"] = info["title"]
    elsewhere = store.held_elsewhere()
    for entry in entries.values():
        entry["loaded"] = entry["sessionId"] in loaded
        if entry["sessionId"] in elsewhere:
            entry["openElsewhere"] = True
    ordered = sorted(entries.values(), key=lambda e: e.get("updatedAt") or "", reverse=True)
    return [{k: v for k, v in e.items() if v is not None} for e in ordered]
