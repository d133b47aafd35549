"""What the scripted agent remembers of each chat, as goose keeps it in its database.

With ``conversations`` (a folder) in the script, each session's conversation is kept in
``<folder>/<session>.jsonl``, one update a line: the user's prompt, each text message
whole once all its chunks went out (goose saves a message when it is complete, so a
reply cut short by a kill is not kept), and tool calls as they were sent. With
``"saveChunks": true`` every chunk is kept as it goes (an agent that saves while it
streams, and may so keep more than its client saw). ``session/load`` replays it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

TEXT_KINDS = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")
KEPT_KINDS = (*TEXT_KINDS, "tool_call", "tool_call_update")


class Memory:
    def __init__(self, folder: str | None, every_chunk: bool) -> None:
        self._folder = Path(folder) if folder else None
        self._every_chunk = every_chunk

    def sent(self, session_id: str, update: dict[str, Any]) -> None:
        """An update went out; kept now unless it is a chunk of a message kept whole."""
        kind = update.get("sessionUpdate")
        if kind in KEPT_KINDS and (kind not in TEXT_KINDS or self._every_chunk):
            self._keep(session_id, update)

    def message(self, session_id: str, kind: str, text: str) -> None:
        """All chunks of a text message went out: keep it whole."""
        if not self._every_chunk:
            self._keep(
                session_id, {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
            )

    def said(self, session_id: str, blocks: list[Any]) -> None:
        """The user's prompt, as the agent keeps it."""
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "text":
                self._keep(session_id, {"sessionUpdate": "user_message_chunk", "content": block})

    def conversation(self, session_id: str) -> list[dict[str, Any]]:
        path = self._path(session_id)
        if path is None or not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def _keep(self, session_id: str, update: dict[str, Any]) -> None:
        path = self._path(session_id)
        if path is not None:
            with path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(update) + "\n")

    def _path(self, session_id: str) -> Path | None:
        if self._folder is None:
            return None
        self._folder.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^\w.-]", "_", session_id)
        return self._folder / f"{safe}.jsonl"
