"""Where a forked chat is cut, read from the journal, and the summary that starts a new
chat where the agent cannot fork.

ACP's ``session/fork`` copies a whole chat and replays nothing. A fork at an earlier turn
goes through the agent's own extension (:class:`~goose_ls.agent.presets.ForkPoint`): the
id of the agent's last message of that turn (claude-agent-acp), or the time the next
turn began (goose). The new chat's history up to the turn is goose-ls's journal's.
"""

from __future__ import annotations

import datetime

import attrs

from goose_ls import events
from goose_ls.errors import Refused
from goose_ls.inert import agent_name, inert_line
from goose_ls.sessions.journal.records import EventRow, events_of

SEED_TURNS = 8
"""The last turns a summary keeps."""
SEED_MESSAGE = 600
"""Characters kept of each message in a summary."""


class ForkUnavailable(Refused):
    """The agent cannot fork this chat at this turn: a new chat seeded with a summary is
    what goose-ls offers instead."""


@attrs.frozen
class Cut:
    """A chat's history up to the end of one of its turns."""

    rows: list[EventRow]
    """The journal's rows up to and with the turn's end."""
    last_turn: bool
    """Whether no turn came after it (a fork of the whole chat)."""
    agent_message: str | None
    """The id the agent stamped on its last message of the turn, if any."""
    next_turn_at: int | None
    """When the turn after it began, in Unix seconds (rounded down)."""


def cut(rows: list[EventRow], message_id: str) -> Cut:
    """The history of a chat up to the end of its turn ``message_id``."""
    end = next(
        (row.idx for row in rows if row.kind == "turn_end" and row.message_id == message_id), None
    )
    if end is None:
        raise Refused(f"the chat has no ended turn {message_id!r} to fork at")
    kept = [row for row in rows if row.idx <= end]
    later = [row for row in rows if row.idx > end and row.message_id not in (None, message_id)]
    agent_message = None
    for _, event, subagent in events_of(row for row in kept if row.message_id == message_id):
        if subagent is None and isinstance(event, events.AgentMessageChunk) and event.message_id:
            agent_message = event.message_id
    next_at = _seconds(later[0].at) if later else None
    return Cut(kept, not later, agent_message, next_at)


def _seconds(at: str) -> int | None:
    try:
        return int(datetime.datetime.fromisoformat(at).timestamp())
    except ValueError:
        return None


def seed(rows: list[EventRow], title: str, agent: str) -> str:
    """A new chat's first message, for the user to edit and send: what was said in the
    last :data:`SEED_TURNS` turns of ``rows``, each message shortened."""
    turns: list[tuple[str, list[str], list[str]]] = []
    # The turns something other than the user's message came in: goose-ls journals the
    # user's message first, so a user message chunk after that is the agent's own.
    answered: set[str] = set()
    for row, event, subagent in events_of(rows):
        if row.message_id is None or subagent is not None:  # a subagent's: not the chat's words
            continue
        if not turns or turns[-1][0] != row.message_id:
            turns.append((row.message_id, [], []))
        if isinstance(event, events.UserMessageChunk) and row.message_id not in answered:
            turns[-1][1].append(_text(event.content))
            continue
        answered.add(row.message_id)
        if isinstance(event, (events.AgentMessageChunk, events.UserMessageChunk)):
            turns[-1][2].append(_text(event.content))
    lines = [f"We go on from an earlier chat, “{_short(title)}”. What was said in it:", ""]
    speaker = _speaker(agent)
    for _, said, replied in turns[-SEED_TURNS:]:
        lines += [
            f"Me: {_short(''.join(said))}",
            f"{speaker}: {_short(''.join(replied))}",
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


def _speaker(agent: str) -> str:
    """The agent's name at the head of its lines: short, never the user's ``Me``, and
    beginning with a letter or digit, so no line of the summary begins as goose-ls's own
    do (the prompt section's heading, a context line)."""
    name = agent_name(agent)
    return name if name[:1].isalnum() else "agent"


def _text(content: events.Json) -> str:
    if content.get("type") == "text":
        return str(content.get("text", ""))
    if content.get("type") == "resource":
        return f"[{content.get('resource', {}).get('uri', 'a file')}]"
    return ""


def _short(text: str) -> str:
    """One line, inert (the agent wrote most of it, and the user sends it), shortened."""
    text = inert_line(" ".join(text.split()))
    return text if len(text) <= SEED_MESSAGE else text[: SEED_MESSAGE - 1] + "…"
