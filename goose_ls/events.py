"""The event vocabulary every layer shares: what happened in a session.

The agent layer turns ACP ``session/update`` notifications into these; the session layer
numbers and stores them; the LSP layer renders and forwards them. Field names follow ACP,
so ``to_wire(event)`` is the ACP update JSON a plugin author already knows, plus the
events goose-ls adds itself (permission requests, questions to the user, their answers,
turn ends, notes).
Content blocks, tool content and locations stay as the agent's JSON: they are MCP-shaped
and clients render them as they are.

The whole vocabulary, one small class per event, read in one place.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

import attrs

from goose_ls.inert import inert_line
from goose_ls.wire import WireError, from_wire, to_wire

Json = dict[str, Any]


@attrs.frozen
class UserMessageChunk:
    KIND: ClassVar[str] = "user_message_chunk"
    content: Json
    message_id: str | None = None


@attrs.frozen
class AgentMessageChunk:
    KIND: ClassVar[str] = "agent_message_chunk"
    content: Json
    message_id: str | None = None


@attrs.frozen
class AgentThoughtChunk:
    KIND: ClassVar[str] = "agent_thought_chunk"
    content: Json
    message_id: str | None = None


@attrs.frozen
class ToolCall:
    """A tool call starts (``tool_call``). goose omits ``kind`` and ``status`` here."""

    KIND: ClassVar[str] = "tool_call"
    tool_call_id: str
    title: str
    kind: str | None = None
    status: str | None = None
    content: list[Json] | None = None
    locations: list[Json] | None = None
    raw_input: Any = None
    raw_output: Any = None
    name: str | None = None
    """The tool's own name (ACP's unstable ``name``, or goose's ``_meta.goose.toolCall``)."""


@attrs.frozen
class ToolCallUpdate:
    """Fields that changed; ``content`` and ``locations`` replace, absent means unchanged."""

    KIND: ClassVar[str] = "tool_call_update"
    tool_call_id: str
    title: str | None = None
    kind: str | None = None
    status: str | None = None
    content: list[Json] | None = None
    locations: list[Json] | None = None
    raw_input: Any = None
    raw_output: Any = None
    name: str | None = None


@attrs.frozen
class Plan:
    KIND: ClassVar[str] = "plan"
    entries: list[Json]


@attrs.frozen
class PlanUpdate:
    """One of several plans, by id (ACP's plan operations): ``plan`` is
    ``{type: "items", planId, entries}``, ``{type: "markdown", planId, content, path?}``
    (``path``: the file it is kept in, absolute) or ``{type: "file", planId, uri}``, or
    one of a kind goose-ls does not know, as the agent sent it; it replaces the whole
    plan of that id."""

    KIND: ClassVar[str] = "plan_update"
    plan: Json


@attrs.frozen
class PlanRemoved:
    KIND: ClassVar[str] = "plan_removed"
    plan_id: str


@attrs.frozen
class Compaction:
    """The agent compacts the conversation (ACP's unstable ``compaction_update``):
    ``in_progress``, then ``completed`` (``summary``: what it kept), ``failed``
    (``error``) or ``cancelled``."""

    KIND: ClassVar[str] = "compaction_update"
    compaction_id: str
    status: str
    summary: list[Json] | None = None
    error: str | None = None


@attrs.frozen
class CompactionSummaryChunk:
    """A piece of a compaction's summary, as it streams."""

    KIND: ClassVar[str] = "compaction_summary_chunk"
    compaction_id: str
    content: Json


SUBAGENT_STATES = ("running", "requires_action", "idle", "unknown")
"""A subagent's states in ACP: ``requires_action`` while it waits on the user; ``idle``
with a ``stop_reason`` once its work is over (the parent agent may give it more)."""


@attrs.frozen
class Subagent:
    """A subagent the agent runs for this session (ACP's ``subagent_update``): a child
    session, announced by its first update. As the agent sends it, a field left None is
    unchanged; as goose-ls records it (journal, ``goose/update``), it is the child's whole
    state, merged: ``state`` always set and ``cancellable`` always a boolean. Its
    ``subagent_id``, ``title`` and ``description`` are agent text."""

    KIND: ClassVar[str] = "subagent_update"
    subagent_id: str
    title: str | None = None
    description: str | None = None
    state: str | None = None
    """One of :data:`SUBAGENT_STATES`, or the agent's own word."""
    stop_reason: str | None = None
    """Why an ``idle`` subagent stopped (``end_turn``, ``cancelled``, ``error``...); None
    for one goose-ls ended with its parent's turn."""
    cancellable: bool | None = None
    """Whether ``session/cancel`` may name it (its ``capabilities.cancel``)."""


@attrs.frozen
class SessionMessage:
    """A message between sessions (ACP's ``session_message``, or with ``append`` its
    ``session_message_chunk``): a subagent's task, sent by its parent agent. Never
    recorded as it is: the registry turns a task into its subagent's
    ``user_message_chunk`` events."""

    KIND: ClassVar[str] = "session_message"
    message_id: str
    content: list[Json]
    sender_session_id: str | None = None
    recipient_session_id: str | None = None
    append: bool = False


@attrs.frozen
class AvailableCommands:
    KIND: ClassVar[str] = "available_commands_update"
    available_commands: list[Json]


@attrs.frozen
class CurrentMode:
    KIND: ClassVar[str] = "current_mode_update"
    current_mode_id: str


@attrs.frozen
class ConfigOptions:
    KIND: ClassVar[str] = "config_option_update"
    config_options: list[Json]


@attrs.frozen
class SessionInfo:
    KIND: ClassVar[str] = "session_info_update"
    title: str | None = None
    updated_at: str | None = None
    run_id: str | None = None
    """goose's name for the turn it has begun (``_meta.goose.activeRunId``), which
    steering it needs; the session layer keeps it and does not pass it on."""


@attrs.frozen
class Usage:
    KIND: ClassVar[str] = "usage_update"
    used: int
    size: int
    cost: Json | None = None


KIND_LABELS = {
    "allow_once": "Allow once",
    "allow_always": "Allow always",
    "reject_once": "Reject",
    "reject_always": "Reject always",
}


_SAYS_NOTHING_MORE = {"yes", "no", "ok", "allow", "deny", "reject", "cancel", "always", "once"}
"""Words of an option's name that add nothing to its kind's wording ("Always Allow")."""


def _label(option: PermissionOption) -> str:
    """goose-ls's wording for the option's kind, which alone says what choosing it does;
    the agent's own name after it when that says more ("Allow always (Yes, allow all
    edits during this session)"). An agent cannot make "Reject" mean allow."""
    said = KIND_LABELS.get(option.kind, "Unknown choice")
    name = option.name.strip()
    words = set(re.findall(r"\w+", name.lower()))
    if words <= _SAYS_NOTHING_MORE or name == option.kind:
        return said
    return f"{said} ({inert_line(name[:80])})"


@attrs.frozen
class PermissionOption:
    option_id: str
    name: str
    kind: str
    label: str = attrs.field(default=attrs.Factory(_label, takes_self=True))
    """What every editor shows for this option (one wording on the card, in popups and
    in the plugins)."""


@attrs.frozen
class PermissionRequested:
    """The agent asks before running a tool; answered with one of ``options`` or cancelled."""

    KIND: ClassVar[str] = "permission_request"
    request_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]
    warning: str | None = None
    """What the user must know before allowing (a protected path), shown on the card."""
    action: str | None = None
    """What answering yes lets happen, read from the request's own data (its command,
    paths, URL), not from its title; says so when goose-ls cannot tell."""


@attrs.frozen
class PermissionResolved:
    KIND: ClassVar[str] = "permission_resolved"
    request_id: str
    outcome: Literal["selected", "cancelled"]
    option_id: str | None = None
    label: str | None = None
    """The chosen option's label."""


ElicitationAction = Literal["accept", "decline", "cancel"]


@attrs.frozen
class ElicitationRequested:
    """The agent asks the user for input: a flat form (``requestedSchema``) or a page to
    open (``url``); answered with an action, and the form's content when accepted."""

    KIND: ClassVar[str] = "elicitation_request"
    request_id: str
    message: str
    mode: Literal["form", "url"] = "form"
    requested_schema: Json | None = None
    url: str | None = None
    tool_call_id: str | None = None
    """The tool call that asks (Claude's AskUserQuestion), when the agent names one."""


@attrs.frozen
class ElicitationResolved:
    KIND: ClassVar[str] = "elicitation_resolved"
    request_id: str
    action: ElicitationAction
    content: Json | None = None


@attrs.frozen
class TurnEnded:
    """A turn is over: ``stop_reason`` from ACP (or ``cancelled``), or ``error`` when it failed."""

    KIND: ClassVar[str] = "turn_end"
    stop_reason: str | None = None
    error: str | None = None
    usage: Json | None = None
    """The tokens the turn used, if the agent said (ACP's unstable ``usage``:
    ``totalTokens``, ``inputTokens``, ``outputTokens``, ...)."""


@attrs.frozen
class Note:
    """Something goose-ls itself tells the user about a session (a restart, a lost agent)."""

    KIND: ClassVar[str] = "note"
    severity: Literal["info", "warning", "error"]
    text: str


@attrs.frozen
class DiskChanges:
    """What changed on disk while a tool call ran (goose-ls's own event, from the turn's
    checkpoints, whatever the agent said): each file's ``path``, ``state`` (``changed``,
    ``created``, ``removed``), ``added`` and ``removed`` line counts and ``diff`` (a
    unified diff, cut to a few dozen lines; "" where the content is not
    shown: not text, or a secret). ``tool_call_id`` is None for changes no tool call
    was running for (found at the turn's end)."""

    KIND: ClassVar[str] = "disk_changes"
    tool_call_id: str | None
    files: list[Json]


SessionEvent = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCall
    | ToolCallUpdate
    | Plan
    | PlanUpdate
    | PlanRemoved
    | Compaction
    | CompactionSummaryChunk
    | Subagent
    | SessionMessage
    | AvailableCommands
    | CurrentMode
    | ConfigOptions
    | SessionInfo
    | Usage
    | PermissionRequested
    | PermissionResolved
    | ElicitationRequested
    | ElicitationResolved
    | TurnEnded
    | Note
    | DiskChanges
)


CHUNKS = (UserMessageChunk, AgentMessageChunk, AgentThoughtChunk)
"""The events that come once per token: they take a shorter way through goose-ls."""

IN_SUBAGENT = (UserMessageChunk, AgentMessageChunk, AgentThoughtChunk, ToolCall, ToolCallUpdate)
"""What a subagent's own session shows inside its parent's (its task, its words, its tool
calls; its permission requests and questions come as requests). Its plans, modes,
options, commands, usage and title stay its own."""

SUBAGENT_KEY = "subagentId"
"""The key, in an event's JSON, of the subagent it belongs to (absent: the session's own)."""


def event_to_wire(event: SessionEvent, subagent: str | None = None) -> Json:
    """The event as JSON, discriminated by ``sessionUpdate`` like ACP updates are; with
    ``subagentId`` when it happened in that subagent of the session."""
    if isinstance(event, CHUNKS):  # what to_wire gives, without its generic walk
        data: Json = {"sessionUpdate": event.KIND, "content": event.content}
        if event.message_id is not None:
            data["messageId"] = event.message_id
    else:
        data = {"sessionUpdate": event.KIND, **to_wire(event)}
    if subagent is not None:
        data[SUBAGENT_KEY] = subagent
    return data


def subagent_of(data: Json) -> str | None:
    """The subagent an event's JSON (:func:`event_to_wire`'s) belongs to, if any."""
    subagent = data.get(SUBAGENT_KEY)
    return subagent if isinstance(subagent, str) else None


KINDS: dict[str, type[SessionEvent]] = {
    kind.KIND: kind
    for kind in (
        UserMessageChunk,
        AgentMessageChunk,
        AgentThoughtChunk,
        ToolCall,
        ToolCallUpdate,
        Plan,
        PlanUpdate,
        PlanRemoved,
        Compaction,
        CompactionSummaryChunk,
        Subagent,
        AvailableCommands,
        CurrentMode,
        ConfigOptions,
        SessionInfo,
        Usage,
        PermissionRequested,
        PermissionResolved,
        ElicitationRequested,
        ElicitationResolved,
        TurnEnded,
        Note,
        DiskChanges,
    )
}


def event_from_wire(data: Json) -> SessionEvent:
    """An event back from :func:`event_to_wire`'s JSON (as the journal keeps it).

    Raises ``WireError`` for JSON that is no event goose-ls sent."""
    kind = KINDS.get(str(data.get("sessionUpdate")))
    if kind is None:
        raise WireError(f"sessionUpdate: unknown kind {data.get('sessionUpdate')!r}")
    if kind in CHUNKS:  # once per token: no generic walk
        return kind(data.get("content") or {}, data.get("messageId"))
    return from_wire({k: v for k, v in data.items() if k != "sessionUpdate"}, kind)
