"""A chat with the agent: its event numbering, its active turn and its waiting prompts.

Every event gets the next index of its session (strictly increasing, from 1), and the
``messageId`` of the turn it belongs to (the UUID the client chose; None outside a turn).
A client that saw up to index N asks for the events after N and never sees one twice.
The events themselves live in the journal, not here: memory holds what a running chat
needs (its turns, tool calls, options), whatever the length of its history.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections import deque
from pathlib import Path

import attrs

from goose_ls.agent.interface import SessionOptions
from goose_ls.events import (
    AvailableCommands,
    ConfigOptions,
    CurrentMode,
    SessionEvent,
    ToolCall,
    ToolCallUpdate,
    TurnEnded,
    Usage,
)
from goose_ls.sessions.changes import OwnWrites
from goose_ls.sessions.context import ContextItem, PromptImage
from goose_ls.sessions.reconcile import Reconciler
from goose_ls.tool_calls import ToolCalls
from goose_ls.workspace.policy import ToolTarget


@attrs.frozen
class IndexedEvent:
    session_id: str
    index: int
    message_id: str | None
    event: SessionEvent
    replay: bool = False
    """History the agent replayed while the session was loaded."""
    subagent: str | None = None
    """The child session (a subagent of the session's agent) it happened in; None for
    the session's own events."""
    encoded: str | None = attrs.field(default=None, eq=False)
    """Its ``goose/update`` payload as JSON text, when the journal wrote it so: the
    editor is sent that same text, not an encoding of its own."""


class Stage(enum.Enum):
    """Where a turn is. It moves forward only, but for SENT back to STARTED when the
    agent answers busy (the prompt is sent again later)."""

    WAITING = "waiting"
    """Behind the session's running turn."""
    STARTED = "started"
    """The session's turn; its prompt not with the agent (yet, or again)."""
    SENT = "sent"
    """The agent has the prompt."""
    ENDED = "ended"


@attrs.define(eq=False)
class Turn:
    """One prompt and the agent's answer to it.

    Its stage, its cancellation and how it ended change only through the methods below,
    which :mod:`goose_ls.sessions.turns` calls (and :mod:`~goose_ls.sessions.send_now`
    for a prompt sent into the running turn); every other module reads them. What the
    user allowed in the turn is kept by the permissions (:mod:`.asking.grants`)."""

    message_id: str
    prompt: str
    context: list[ContextItem]
    images: dict[str, PromptImage] = attrs.Factory(dict)
    """The bytes of its image items, by URI, as read when it was accepted (dropped once
    they are sent)."""
    task: asyncio.Task[None] | None = None
    watchdog: asyncio.Task[None] | None = None
    """Watches the turn for silence; stopped when the turn ends."""
    cancel_deadline: asyncio.TimerHandle | None = None
    """Ends a cancelled turn the agent does not end; stopped when the turn ends."""
    _stage: Stage = Stage.WAITING
    _cancelled: bool = False
    _ended: TurnEnded | None = None
    _steering: asyncio.Future[bool] | None = None
    _joined: list[str] = attrs.Factory(list)

    # --- what the turn is ---------------------------------------------------------------
    @property
    def stage(self) -> Stage:
        return self._stage

    @property
    def sent(self) -> bool:
        """Whether the agent has the prompt (a cancel then goes to the agent)."""
        return self._stage is Stage.SENT

    @property
    def cancelled(self) -> bool:
        """Whether the user cancelled it (it ends as cancelled, whatever the agent says)."""
        return self._cancelled

    @property
    def ended(self) -> TurnEnded | None:
        """How the turn ended, once it has."""
        return self._ended

    @property
    def steering(self) -> asyncio.Future[bool] | None:
        """While this waiting prompt is being sent into the running turn: True once the
        agent took it (then it is no turn of its own), False when it is to run as one."""
        return self._steering

    @property
    def steered(self) -> bool:
        """Whether the agent took this prompt into the turn that was running."""
        return self._steering is not None and self._steering.done() and self._steering.result()

    @property
    def joined(self) -> tuple[str, ...]:
        """The messages steered into this running turn: each ends when this turn ends."""
        return tuple(self._joined)

    # --- its transitions ----------------------------------------------------------------
    def start(self) -> None:
        """The session's turn comes: it leaves the queue."""
        assert self._stage is Stage.WAITING, self._stage
        self._stage = Stage.STARTED

    def to_agent(self) -> None:
        """The prompt goes out to the agent."""
        assert self._stage is Stage.STARTED, self._stage
        self._stage = Stage.SENT

    def agent_busy(self) -> None:
        """The agent refused the prompt as busy: it waits to go out again."""
        assert self._stage is Stage.SENT, self._stage
        self._stage = Stage.STARTED

    def cancel(self) -> bool:
        """The user cancels it; False when it was cancelled or over already."""
        if self._cancelled or self._stage is Stage.ENDED:
            return False
        self._cancelled = True
        return True

    def end(self, how: TurnEnded) -> None:
        self._stage = Stage.ENDED
        self._ended = how

    def steer(self) -> asyncio.Future[bool]:
        """This waiting prompt is being sent into the running turn: the future says
        whether the agent took it."""
        assert self._stage is Stage.WAITING and self._steering is None
        self._steering = asyncio.get_running_loop().create_future()
        return self._steering

    def not_steered(self) -> None:
        """The agent did not take it (or the sending failed): it may be sent again."""
        self._steering = None

    def join(self, message_id: str) -> None:
        """A prompt the agent took into this running turn ends with it."""
        self._joined.append(message_id)


class Session:
    def __init__(
        self,
        session_id: str,
        cwd: str,
        generation: int,
        first_index: int = 0,
        tab_id: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.tab_id = tab_id
        """The client's id for the tab showing this session, if it gave one."""
        self.generation = generation
        """The agent generation that knows this session; a restarted agent must load it."""
        self.last_index = first_index
        """The index of the last event (above every index handed out before, when loaded)."""
        self.active: Turn | None = None
        self.waiting: deque[Turn] = deque()
        self.turn_lock = asyncio.Lock()
        self.attach_lock = asyncio.Lock()
        self.replaying = False
        """A restarted agent is loading the session: its replay is history we hold."""
        self.loading = False
        """The session is being loaded here: its replay is new to this process."""
        self.history: Reconciler | None = None
        """While loading a journaled session: what of the agent's replay the journal has."""
        self.forgotten: str | None = None
        """Why the agent cannot go on with this chat (it could not load it); its history
        is shown from the journal, and prompts are refused with this reason."""
        self.message_ids: set[str] = set()
        self.options = SessionOptions()
        self.commands: list[dict[str, object]] = []
        """The agent's slash commands (its last ``available_commands_update``)."""
        self.tool_calls = ToolCalls()
        """What each tool call said so far, merged."""
        self.own_writes = OwnWrites()
        """The files each turn changed, for review and revert."""
        self.allowed: set[ToolTarget] = set()
        """Tool calls the user allowed "for this session"."""
        self.usage: Usage | None = None
        """How full the context is (the agent's last ``usage_update``)."""
        self.agent_run: str | None = None
        """The agent's name for the running turn, if it gave one (goose does): steering
        needs it."""
        self.left_running = False
        """goose-ls ended a cancelled turn the agent did not end (``agent.cancelTimeout``):
        the agent may still run it, and refuse the next prompt while it does."""
        self.last_event_at = time.monotonic()
        self.unsaved_told: frozenset[Path] = frozenset()
        """The open files with unsaved changes at the last turn's start (see
        :mod:`.unsaved`): the others are named again only when they change."""

    def number(
        self,
        event: SessionEvent,
        replay: bool = False,
        message_id: str | None = None,
        subagent: str | None = None,
    ) -> IndexedEvent:
        """Give ``event`` the next index and keep what it says of the session's state
        (only the registry calls this: it also journals and publishes the event)."""
        if message_id is None and self.active is not None and not replay:
            message_id = self.active.message_id
        self.last_index += 1
        indexed = IndexedEvent(
            self.session_id, self.last_index, message_id, event, replay, subagent
        )
        self.last_event_at = time.monotonic()
        if isinstance(event, CurrentMode) and self.options.modes is not None:
            modes = {**self.options.modes, "currentModeId": event.current_mode_id}
            self.options = attrs.evolve(self.options, modes=modes)
        elif isinstance(event, (ToolCall, ToolCallUpdate)):
            self.tool_calls.apply(event)
        elif isinstance(event, AvailableCommands):
            self.commands = event.available_commands
        elif isinstance(event, ConfigOptions):
            self.options = attrs.evolve(self.options, config_options=event.config_options)
        elif isinstance(event, Usage):
            self.usage = event
        return indexed
