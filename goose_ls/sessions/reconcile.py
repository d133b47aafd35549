"""The agent's replay of a chat, matched against what the journal already holds.

A session goose-ls has journaled is shown from the journal the moment it is loaded; the
agent's ``session/load`` then replays the same conversation again, from its own copy.
That copy may hold less than the journal (a reply cut short by a kill was never saved)
or more (messages the agent saved after goose-ls was killed, before it could journal
them), and it is split differently (goose replays a whole message as one chunk where it
streamed hundreds). Each replayed event is matched, in order, against the journal's
messages: what the journal holds is dropped, what it lacks is kept, and of a message
the journal holds only the start of, only the rest is kept. So the user sees each
message once.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from goose_ls import events

LOOKAHEAD = 64
"""Journal messages searched past the cursor for a replayed one: the agent may leave
some out (thoughts, goose-ls's own notes), but a match far ahead is a coincidence."""


@attrs.define
class _Message:
    """Consecutive chunks of one kind in the journal, as one text."""

    kind: str
    text: str


class Reconciler:
    def __init__(self, history: Iterable[events.SessionEvent]) -> None:
        self._messages: list[_Message] = []
        self._tool_calls: set[str] = set()
        self._others: list[events.SessionEvent] = []
        """Non-text content and plans the journal holds (each matches one replay)."""
        last_was_chunk = False
        for event in history:
            text = _text_of(event)
            if text is not None:
                assert isinstance(event, events.CHUNKS)
                if last_was_chunk and self._messages[-1].kind == event.KIND:
                    self._messages[-1].text += text
                else:
                    self._messages.append(_Message(event.KIND, text))
                last_was_chunk = True
                continue
            last_was_chunk = False
            if isinstance(event, (events.ToolCall, events.ToolCallUpdate)):
                self._tool_calls.add(event.tool_call_id)
            elif isinstance(event, (*events.CHUNKS, events.Plan)):
                self._others.append(event)
        self._cursor = 0
        self._used = 0
        """Characters of ``_messages[_cursor]`` the replay has matched already."""

    def take(self, event: events.SessionEvent) -> events.SessionEvent | None:
        """What of a replayed event the user has not seen: the event, its rest, or None."""
        text = _text_of(event)
        if text is not None:
            assert isinstance(event, events.CHUNKS)
            rest = self._match(event.KIND, text)
            if rest is None:
                return event
            if not rest:
                return None
            return attrs.evolve(event, content={**event.content, "text": rest})
        if isinstance(event, (events.ToolCall, events.ToolCallUpdate)):
            return None if event.tool_call_id in self._tool_calls else event
        if isinstance(event, (*events.CHUNKS, events.Plan)):
            key = _key(event)
            same = next((held for held in self._others if _key(held) == key), None)
            if same is not None:
                self._others.remove(same)
                return None
        return event

    def _match(self, kind: str, text: str) -> str | None:
        """The part of ``text`` past what the journal holds; None when nothing matches.

        A replayed text may span several of the journal's messages: the agent may keep
        the texts of one reply as one message where the chat had a tool call between
        them (goosed does). What is left after one message is matched on against the
        next ones, so that only what none of them holds is new."""
        matched = False
        while text:
            found = self._match_one(kind, text, next_only=matched)
            if found is None:
                return text if matched else None
            matched, text = True, found
        return text

    def _match_one(self, kind: str, text: str, next_only: bool) -> str | None:
        """What of ``text`` is past the journal's message that holds its start; with
        ``next_only``, only the next message of ``kind`` may (the rest of a text that
        spans messages: a short rest would match some later one by chance)."""
        for at in range(self._cursor, min(len(self._messages), self._cursor + LOOKAHEAD)):
            message = self._messages[at]
            if message.kind != kind:
                continue
            left = message.text[self._used if at == self._cursor else 0 :]
            if not left:
                continue
            if left.startswith(text):
                self._cursor, self._used = at, len(message.text) - len(left) + len(text)
                return ""
            if text.startswith(left):  # the journal has the start of it (a cut reply?)
                self._cursor, self._used = at + 1, 0
                return text[len(left) :]
            if next_only:
                return None
        return None


def _key(event: events.SessionEvent) -> object:
    """What identifies a non-text chunk across copies: a context item by its kind, URI
    and text (an agent may keep a selection without its ``mimeType``, or a file link
    without its ``name``); anything else whole."""
    if isinstance(event, events.CHUNKS):
        content = event.content
        kind = content.get("type")
        if kind == "resource_link":
            return (event.KIND, kind, content.get("uri"))
        resource = content.get("resource")
        if kind == "resource" and isinstance(resource, dict):
            return (event.KIND, kind, resource.get("uri"), resource.get("text"))
    return event


def _text_of(event: events.SessionEvent) -> str | None:
    if isinstance(event, events.CHUNKS) and event.content.get("type") == "text":
        return str(event.content.get("text", ""))
    return None
