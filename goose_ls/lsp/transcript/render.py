"""Session events rendered as readable markdown, appended to the transcript body.

Each speaker's turn gets a heading; thoughts are a quoted, marked block; a tool call is a
block with its title, kind, status, paths, a short excerpt of its output and the diff of
an edit. A tool call's block is drawn again in place when the call changes, so its header
always tells its latest status, the text after it kept (unless that is long: then a
status line at the end says what changed). How full the context is (``usage_update``)
is a line of its own under the heading, then at each turn's end. Plans and compactions
are drawn in place too.

A subagent's events (a child session of the agent's) are a section of their own inside
the turn: a ``### 🤖 Subagent (state): title`` heading goose-ls draws (agent text that
begins so is escaped), the child's task, words, tool calls and cards under it; its
heading drawn again in place when its state changes, like a tool call's block. When the
session's own agent speaks again its heading comes back; a child that speaks again
after that gets a heading again.
One renderer with one branch per kind of event, read as a whole.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
from collections.abc import Callable, Iterator

import attrs

from goose_ls import events
from goose_ls.inert import inert, inert_line
from goose_ls.lsp import usage
from goose_ls.lsp.transcript import blocks
from goose_ls.lsp.transcript.outputs import OutputFiles
from goose_ls.lsp.transcript.text import TranscriptText
from goose_ls.sessions import KEPT_IMAGE, path_of
from goose_ls.tool_calls import ToolCalls, ToolCallState

REDRAW_LIMIT = 20_000
"""A tool call's block is drawn again in place when at most this much text follows it
(the edit re-sends that text); further up, a change is a status line at the end."""
STATUS_MARK = {"pending": "⏳", "in_progress": "⏳", "completed": "✓", "failed": "✗"}
CHOICES = "> Answer with a code action on this card: "
"""The last line of a card waiting for its answer."""
AGENT = "agent"
"""The agent as a speaker; its heading is its own name (:class:`Renderer`'s ``agent``)."""
USER = "You"
CHILD = "subagent:"
"""A subagent as a speaker: this, then its id."""
SUBAGENT_HEADING = "### 🤖 Subagent"
SUBAGENT_STATES = {
    "running": "⏳ running",
    "requires_action": "✋ waiting for you",
}
SUBAGENT_ENDS = {
    "end_turn": "✓ done",
    "cancelled": "⊘ cancelled",
    "error": "✗ failed",
    "refusal": "✗ failed (refused)",
    None: "■ ended",
}
"""How a subagent's state reads in its heading: while at work, and once ``idle`` by its
stop reason (None: ended with its parent's turn)."""


def permission_marker(request_id: str) -> str:
    """The line that ties a permission card to its request (code actions look for it)."""
    return f"<!-- goose-ls: permission {request_id} -->"


def question_marker(request_id: str) -> str:
    """The line that ties a question's card to its request (code actions look for it)."""
    return f"<!-- goose-ls: question {request_id} -->"


ToolCallLookup = Callable[[], "ToolCalls | None"]


@attrs.frozen
class _Line:
    start: int
    """Where the line begins in the body."""
    head: str | None
    """Its text so far (after ``lead``), up to what decides; None once escaped."""
    lead: str
    """What goose-ls puts before each line of the block (``> `` in a thought)."""


class Renderer:
    """Renders one session's events; tool calls are read from the session's tracker."""

    def __init__(
        self,
        text: TranscriptText,
        tool_calls: ToolCallLookup,
        terminal_output: blocks.TerminalOutput = lambda _: None,
        interactive: bool = True,
        outputs: OutputFiles | None = None,
        root: Callable[[], str | None] = lambda: None,
        agent: Callable[[], str] = lambda: "agent",
    ) -> None:
        """``outputs`` keeps the whole output of a call whose block shows an excerpt;
        ``root`` is the chat's workspace folder, that paths are named from; ``agent`` the
        name the agent gives itself, that heads its messages."""
        self.text = text
        self._root = root
        self._agent = agent
        self._interactive = interactive
        """Whether permission cards carry what answers them (a marker, the choices): not
        in a chat exported as plain markdown."""
        self._tool_calls = tool_calls
        self._terminal_output = terminal_output
        self._outputs = outputs
        self._speaker: str | None = None
        self._block: str | None = None
        """What the last block is: "text", "thought", "tool:<id>", "plan", "card", ..."""
        self._block_start = 0
        self._drawn: set[str] = set()
        """Tool calls that have a block of their own."""
        self._spans: dict[str, tuple[int, int]] = {}
        """Where each block that may be drawn again is in the body (start, end): tool
        calls (``tool:<id>``) and cards (``card:<request id>``), in the body's order; only
        those near enough the end to be drawn again (:meth:`_forget_far_spans`)."""
        self._cards: dict[str, str] = {}
        """Each card still waiting for its answer, as drawn without its last line."""
        self._turns: list[tuple[int, str]] = []
        """Where each turn begins in the body (the offset before its first heading), and
        its ``messageId``: what "Fork chat here" on a line forks at."""
        self._replay_calls: ToolCalls | None = None
        """While drawing history: its tool calls, merged as the session merged them."""
        self._usage: events.Usage | None = None
        """The context usage the agent sent during a turn, drawn when the turn ends."""
        self._compactions: dict[str, tuple[events.Compaction | None, str]] = {}
        """Each compaction's last state and the summary streamed so far."""
        self._line = _Line(0, "", "")
        """The line agent text is being written on, while it may still be taken for one of
        goose-ls's own (see :meth:`_agent_text`)."""
        self._children: dict[str, events.Subagent] = {}
        """Each subagent's last state, as its heading tells it."""
        self._described: set[str] = set()
        """The subagents whose description was drawn (under their first heading)."""

    @contextlib.contextmanager
    def replaying(self) -> Iterator[None]:
        """Render history from the journal: its tool calls are tracked here, apart from
        the live session's (which knows only the calls of this run)."""
        tracker, live = ToolCalls(), self._tool_calls
        self._tool_calls = lambda: tracker
        self._replay_calls = tracker
        try:
            yield
        finally:
            self._tool_calls = live
            self._replay_calls = None

    def restart(self, text: str) -> None:
        """Replace the whole body (after it moved to a previous part) and start afresh."""
        self.text.rewrite_from(0, text)
        self._speaker = None
        self._block = None
        self._block_start = 0
        self._spans.clear()
        self._cards.clear()
        self._turns.clear()

    def turn_at(self, offset: int) -> str | None:
        """The ``messageId`` of the turn that body offset ``offset`` is in, if any."""
        at = bisect.bisect_right(self._turns, offset, key=lambda turn: turn[0])
        return self._turns[at - 1][1] if at else None

    # --- blocks ------------------------------------------------------------------
    def _new_block(self, kind: str, speaker: str | None = None) -> None:
        if self._block in ("text", "thought", "user"):
            self._close_fence()
        if speaker and speaker != self._speaker:
            if speaker.startswith(CHILD) and self._speaker in (None, USER):
                self._new_block(kind, AGENT)  # its section goes under the agent's heading
            self._speaker = speaker
            self._separate()
            if speaker.startswith(CHILD):
                self._child_heading(speaker.removeprefix(CHILD))
            else:
                self.text.append(f"## {self._agent() if speaker == AGENT else speaker}\n\n")
        elif self._block is not None:
            self._separate()
        self._block = kind
        self._block_start = self.text.length

    def _close_fence(self) -> None:
        """Close a code fence the agent's text left open: what goose-ls draws next (a
        card, a heading) would show as code inside it, not as itself."""
        lead = "> " if self._block == "thought" else ""
        fence: str | None = None
        for line in self.text.body_text(self._block_start).split("\n"):
            line = line.removeprefix(lead) if lead else line
            if len(line) - len(line.lstrip(" ")) > 3:
                continue
            line = line.lstrip(" ")
            mark = line[:1]
            if mark not in ("`", "~"):
                continue
            run = len(line) - len(line.lstrip(mark))
            if run < 3:
                continue
            if fence is None:
                if mark == "`" and "`" in line[run:]:
                    continue  # an inline span, not a fence
                fence = mark * run
            elif mark == fence[0] and run >= len(fence) and not line[run:].strip():
                fence = None
        if fence is not None:
            self._separate_line()
            self.text.append(f"{lead}{fence}\n")

    def _separate_line(self) -> None:
        if self.text.length and not self.text.endswith("\n"):
            self.text.append("\n")

    def _separate(self) -> None:
        """End the current line and leave one blank line before what comes next."""
        if not self.text.length or self.text.endswith("\n\n"):
            return
        self.text.append("\n" if self.text.endswith("\n") else "\n\n")

    # --- events ------------------------------------------------------------------
    def render(
        self,
        event: events.SessionEvent,
        message_id: str | None = None,
        subagent: str | None = None,
    ) -> None:
        """Draw ``event`` of the turn ``message_id`` (None: outside a turn, or unknown);
        ``subagent``: of that child session of the session, in its section."""
        if (
            message_id is not None
            and subagent is None
            and isinstance(event, events.UserMessageChunk)
            and (not self._turns or self._turns[-1][1] != message_id)
        ):
            self._turns.append((self.text.length, message_id))
        if self._replay_calls is not None:
            if isinstance(event, (events.ToolCall, events.ToolCallUpdate)):
                self._replay_calls.apply(event)
            elif isinstance(event, events.PermissionRequested):
                self._replay_calls.apply(event.tool_call)
        # Who speaks (the agent, or its subagent), and where a status line goes (on, or
        # into the subagent's section).
        agent = AGENT if subagent is None else CHILD + subagent
        status = None if subagent is None else agent
        if isinstance(event, events.CHUNKS) and event.content.get("type") == "image":
            self._image(event, agent)
        elif isinstance(event, events.Subagent):
            self._subagent(event)
        elif isinstance(event, events.UserMessageChunk):
            if subagent is None:
                self._user(event.content)
            else:
                self._quoted("task", agent, "> 📋 Task: ", event.content)
        elif isinstance(event, events.AgentMessageChunk):
            if self._block != "text" or self._speaker != agent:
                self._new_block("text", agent)
                self._line = _Line(self.text.length, "", "")
            self._agent_text(blocks.content_text(event.content), "")
        elif isinstance(event, events.AgentThoughtChunk):
            self._quoted("thought", agent, "> 💭 ", event.content)
        elif isinstance(event, (events.ToolCall, events.ToolCallUpdate)):
            self._tool(event, agent, status)
        elif isinstance(event, events.Plan):
            self._in_place("plan", blocks.plan("Plan", event.entries))
        elif isinstance(event, events.PlanUpdate):
            plan = blocks.plan_document(event, self._root())
            self._in_place(f"plan:{event.plan.get('planId')}", plan)
        elif isinstance(event, events.PlanRemoved):
            self._new_block("status")
            # Several plans may be side by side: which one (its id, the agent's words).
            self.text.append(f"_Plan {blocks.code_span(inert_line(event.plan_id))} removed._\n")
        elif isinstance(event, (events.Compaction, events.CompactionSummaryChunk)):
            self._compaction(event)
        elif isinstance(event, events.PermissionRequested):
            self._card(event, agent)
        elif isinstance(event, events.PermissionResolved):
            answer = inert_line(event.label or event.option_id or "cancelled")
            self._answered(event.request_id, f"Permission answered: {answer}.", status)
        elif isinstance(event, events.ElicitationRequested):
            self._new_block(f"card:{event.request_id}", agent)
            marker = [question_marker(event.request_id)] if self._interactive else []
            lines = blocks.question(event, self._agent(), self._tool_title(event.tool_call_id))
            self._draw_card(event.request_id, "\n".join(lines) + "\n", marker, "Decline · Cancel")
        elif isinstance(event, events.ElicitationResolved):
            self._answered(event.request_id, f"Question answered: {event.action}.", status)
        elif isinstance(event, events.TurnEnded):
            self._new_block("status")
            if event.error:
                self.text.append(f"> ⚠ **The turn failed:** {inert_line(event.error)}\n")
            elif event.stop_reason != "end_turn":
                self.text.append(f"_Turn ended: {inert_line(str(event.stop_reason))}._\n")
            if event.usage:
                self.text.append(f"_{usage.turn_tokens(event.usage)}_\n")
            self._speaker = None
            self._draw_usage()
        elif isinstance(event, events.Usage):
            self._usage = event
            if self._speaker is None:  # between turns: at once (under the heading at first)
                self._draw_usage()
        elif isinstance(event, events.Note):
            self._new_block("status", status)
            self.text.append(f"> **Note:** {inert_line(event.text)}\n")
        elif isinstance(event, events.DiskChanges):
            self._new_block("status")
            self.text.append(
                blocks.disk_changes(event, self._tool_title(event.tool_call_id), self._root())
            )

    def _quoted(self, kind: str, speaker: str, opener: str, content: events.Json) -> None:
        """Agent text in a quoted block of goose-ls's (a thought, a subagent's task),
        begun with ``opener``."""
        if self._block != kind or self._speaker != speaker:
            self._new_block(kind, speaker)
            self.text.append(opener)
            self._line = _Line(self.text.length, "", "> ")
        self._agent_text(blocks.content_text(content), "> ")

    # --- subagents ---------------------------------------------------------------
    def _subagent(self, event: events.Subagent) -> None:
        """A subagent announced, or its state changed: its heading drawn again where it
        is (near the end), else a new one, the state in it."""
        child = event.subagent_id
        known = child in self._children
        self._children[child] = event
        speaker = CHILD + child
        if known and self._redraw(speaker, self._heading_line(child)):
            return
        if self._speaker == speaker:  # its section goes on, its heading far above
            self._new_block("status")
            self.text.append(f"_🤖 {self._child_name(child)}: {self._child_state(child)}._\n")
            return
        self._new_block("subagent", speaker)

    def _child_heading(self, child: str) -> None:
        """A subagent's heading (the start of a section of its own), and, the first time,
        its description."""
        if CHILD + child in self._spans:  # an earlier section: its state is told below now
            self._redraw(CHILD + child, self._heading_line(child, continued=True))
        start = self.text.length
        self.text.append(self._heading_line(child))
        self._spans.pop(CHILD + child, None)  # its last heading is the one drawn again
        self._spans[CHILD + child] = (start, self.text.length)
        state = self._children.get(child)
        if state is not None and state.description and child not in self._described:
            self._described.add(child)
            self.text.append(f"> _{inert_line(state.description)}_\n")
        self.text.append("\n")

    def _heading_line(self, child: str, continued: bool = False) -> str:
        """``### 🤖 Subagent (state): title``: goose-ls's words first, the agent's title
        after them (on one line, inert). An earlier section of the same subagent says
        ``continued below`` instead of a state that would go stale there."""
        state = self._children.get(child)
        title = f": {inert_line(state.title)}" if state and state.title else ""
        said = "continued below" if continued else self._child_state(child)
        return f"{SUBAGENT_HEADING} ({said}){title}\n"

    def _child_name(self, child: str) -> str:
        state = self._children.get(child)
        return f"Subagent {inert_line(state.title)}" if state and state.title else "Subagent"

    def _child_state(self, child: str) -> str:
        state = self._children.get(child)
        word = state.state if state is not None else "running"
        if word == "idle" and state is not None:
            reason = state.stop_reason
            return SUBAGENT_ENDS.get(reason) or f"■ ended ({inert_line(str(reason))})"
        return SUBAGENT_STATES.get(word or "running") or f"• {inert_line(str(word))}"

    def _agent_text(self, text: str, lead: str) -> None:
        """Append text the agent controls: inert (:mod:`goose_ls.inert`), each line led by
        ``lead``, and a line that begins as goose-ls's own lines do escaped with a
        backslash, so no reply, thought or replayed message can pass for a card, a
        marker or a turn's heading (whatever chunks it comes in)."""
        text = inert(text)
        if lead:
            text = text.replace("\n", "\n" + lead)
        at = self.text.length
        self.text.append(text)
        speakers: tuple[str, str] | None = None  # asked for once a line may imitate one
        for n, piece in enumerate(text.split("\n") if "\n" in text else (text,)):
            if n:  # a newline ended the line before
                self._line = _Line(at, "", lead)
                piece = piece[len(lead) :]
                at += len(lead)
            line = self._line
            if line.head is not None and len(line.head) < blocks.OPENER_LENGTH:
                head = line.head + piece
                speakers = speakers or (USER, self._agent())
                if blocks.imitates(line.lead + head, speakers):
                    start = line.start + len(line.lead)
                    self.text.rewrite_from(start, "\\" + self.text.body_text(start))
                    at += 1
                    self._line = _Line(line.start, None, line.lead)
                else:
                    self._line = _Line(line.start, head, line.lead)
            at += len(piece) + 1

    def _draw_usage(self) -> None:
        """The context line, in place of the one just above it (usage sent twice between
        turns is one line)."""
        if self._usage is None:
            return
        line = f"_{usage.context_line(self._usage)}_\n"
        self._usage = None
        if self._block == "usage":
            self.text.rewrite_from(self._block_start, line)
        else:
            self._new_block("usage")
            self.text.append(line)

    def _image(
        self,
        event: events.UserMessageChunk | events.AgentMessageChunk | events.AgentThoughtChunk,
        speaker: str = AGENT,
    ) -> None:
        """An image in a message: the user's under the file it was read from, each the
        copy goose-ls kept of it, shown (or why it is not). A subagent's (``speaker``), its
        task's too, is in its section: the user sent none of them."""
        content = event.content
        line = blocks.image(content, self._image_target(content.get("uri")))
        if isinstance(event, events.UserMessageChunk) and speaker == AGENT:
            self._new_block("user", USER)
            source = content.get("source")
            named = path_of(source) if isinstance(source, str) else ""
            shown = blocks.code_span(inert_line(blocks.shown_path(named, self._root())))
            shown = shown if named else "an"
            self.text.append(f"> 📎 {shown} image\n{line}")
            return
        self._new_block("image", speaker)
        self.text.append(line)

    def _image_target(self, uri: object) -> str | None:
        """Where a link to a kept image points: beside the transcript, relative to it; in
        an export, the file itself."""
        if not isinstance(uri, str):
            return None
        if self._outputs is not None:
            return self._outputs.image_target(uri)
        name = path_of(uri).rpartition("/")[2]
        return uri if uri.startswith("file:") and KEPT_IMAGE.fullmatch(name) else None

    def _user(self, content: events.Json) -> None:
        kind = content.get("type")
        root = self._root()
        if kind == "text":
            text = content.get("text", "")
            heading, _, rest = text.partition("\n")
            if rest.startswith("```") and ":" in heading:  # a selection sent as a fenced block
                self._new_block("user", USER)
                shown = inert_line(blocks.describe_heading(heading, root))
                self.text.append(f"> 📎 {blocks.code_span(shown)}\n")
                return
            self._new_block("user", USER)
            self._line = _Line(self.text.length, "", "")
            self._agent_text(text.rstrip("\n") + "\n", "")  # replayed by the agent, maybe
        elif kind == "resource":
            self._new_block("user", USER)
            uri = content.get("resource", {}).get("uri", "")
            shown = inert_line(blocks.describe_heading(blocks.describe_uri(uri), root))
            self.text.append(f"> 📎 {blocks.code_span(shown)}\n")
        elif kind == "resource_link":
            self._new_block("user", USER)
            shown = inert_line(blocks.shown_path(path_of(content.get("uri", "")), root))
            self.text.append(f"> 📎 {blocks.code_span(shown)} (file)\n")

    def _tool_title(self, tool_call_id: str | None) -> str | None:
        tracker = self._tool_calls()
        state = tracker.get(tool_call_id) if tracker is not None and tool_call_id else None
        return (state.title or tool_call_id) if state is not None else tool_call_id

    def _state(self, call: events.ToolCall | events.ToolCallUpdate) -> ToolCallState:
        """The call as the session knows it so far (this event merged in)."""
        tracker = self._tool_calls()
        state = tracker.get(call.tool_call_id) if tracker is not None else None
        return state if state is not None else ToolCalls().apply(call)

    def _tool(
        self,
        event: events.ToolCall | events.ToolCallUpdate,
        speaker: str = AGENT,
        status: str | None = None,
    ) -> None:
        state = self._state(event)
        block = f"tool:{event.tool_call_id}"
        if isinstance(event, events.ToolCall) and event.tool_call_id not in self._drawn:
            self._drawn.add(event.tool_call_id)
            self._new_block(block, speaker)
            self.text.append(self._tool_block(state))
            self._spans[block] = (self._block_start, self.text.length)
        elif self._block == block:
            self.text.rewrite_from(self._block_start, self._tool_block(state))
            self._spans[block] = (self._block_start, self.text.length)
        elif not self._redraw(block, self._tool_block(state)):
            self._new_block("status", status)
            mark = STATUS_MARK.get(state.status or "", "•")
            title = inert_line(state.title or state.tool_call_id)
            self.text.append(f"_{mark} {title}: {inert_line(state.status or 'updated')}_\n")

    def _redraw(self, key: str, block: str) -> bool:
        """Draw a block (a tool call's, a card) again where it is, the text after it kept:
        whether it was near enough the end (what follows it is sent to the editor again)."""
        self._forget_far_spans()
        span = self._spans.get(key)
        if span is None or self.text.length - span[1] > REDRAW_LIMIT:
            return False
        start, end = span
        self.text.rewrite_from(start, block + self.text.body_text(end))
        moved = len(block) - (end - start)
        # Only the blocks below it move: the spans are in the body's order.
        below = list(itertools.takewhile(lambda other: other != key, reversed(self._spans)))
        for other in below:
            a, b = self._spans[other]
            self._spans[other] = (a + moved, b + moved)
        for n in range(len(self._turns) - 1, -1, -1):  # the turns below it: the last ones
            at, message_id = self._turns[n]
            if at <= start:
                break
            self._turns[n] = (at + moved, message_id)
        self._spans[key] = (start, start + len(block))
        if self._block_start > start:
            self._block_start += moved
        if self._line.start > start:  # the line agent text is on moved with the rest
            self._line = attrs.evolve(self._line, start=self._line.start + moved)
        return True

    def _forget_far_spans(self) -> None:
        """Forget the blocks more than :data:`REDRAW_LIMIT` above the end: they are never
        drawn again, and what a redraw shifts stays bounded however many calls came."""
        limit = self.text.length - REDRAW_LIMIT
        while self._spans:
            first = next(iter(self._spans))
            if self._spans[first][1] >= limit:
                return
            del self._spans[first]

    def _tool_block(self, state: ToolCallState) -> str:
        status = inert_line(state.status or "pending")
        kind = f" · {inert_line(state.kind)}" if state.kind else ""
        if state.name and state.name != state.title:
            kind += f" · {blocks.code_span(inert_line(state.name))}"
        title = inert_line(state.title or state.tool_call_id)
        lines = [f"**🔧 {title}**{kind} — {STATUS_MARK.get(status, '•')} {status}"]
        target = blocks.target(state.raw_input, state.locations, self._root())
        if target:
            lines.append(target)
        text = "\n".join(lines) + "\n"
        output = blocks.output(state.content, state.raw_output, self._terminal_output)
        excerpt = blocks.excerpt(output)
        if excerpt:
            text += f"\n{blocks.fenced(inert(excerpt))}\n"
        if excerpt != blocks.unwrapped(output).strip() and self._outputs is not None:
            link = self._outputs.link(state.tool_call_id, output)
            text += f"{link}\n" if link else ""
        for image in blocks.images_of(state.content):
            text += "\n" + blocks.image(image, self._image_target(image.get("uri")))
        return text + blocks.diffs(state.content, self._root())

    def _compaction(self, event: events.Compaction | events.CompactionSummaryChunk) -> None:
        """A compaction's line, with its summary as it streams, drawn in place."""
        state, summary = self._compactions.get(event.compaction_id, (None, ""))
        if isinstance(event, events.Compaction):
            state = event
        else:
            summary += blocks.content_text(event.content)
        if state is not None and state.status != "in_progress":
            self._compactions.pop(event.compaction_id, None)  # over: nothing more comes
        else:
            self._compactions[event.compaction_id] = (state, summary)
        now = state or events.Compaction(event.compaction_id, "in_progress")
        if not now.summary and summary:
            now = attrs.evolve(now, summary=[{"type": "text", "text": summary}])
        self._in_place(f"compaction:{event.compaction_id}", blocks.compaction(now))

    def _in_place(self, block: str, rendered: str) -> None:
        """Draw ``block`` again where it is when it is the last one, else anew."""
        if self._block == block:
            self.text.rewrite_from(self._block_start, rendered)
        else:
            self._new_block(block, AGENT)
            self.text.append(rendered)

    def _card(self, event: events.PermissionRequested, speaker: str = AGENT) -> None:
        """The question, with the change it would allow shown once, before the choices."""
        state = self._state(event.tool_call)
        diff = blocks.diffs(state.content, self._root())
        if self._block == f"tool:{state.tool_call_id}" and diff and self.text.endswith(diff):
            diff = ""  # the call's block just above shows it already
        self._new_block(f"card:{event.request_id}", speaker)
        marker = [permission_marker(event.request_id)] if self._interactive else []
        lines = [
            f"> **🔐 Permission needed:** {inert_line(state.title or state.tool_call_id)} "
            f"({inert_line(state.kind or 'other')})"
        ]
        if event.action:
            lines.append(
                f"> Allowing lets this happen: {blocks.code_span(inert_line(event.action))}"
            )
        elif target := blocks.target(state.raw_input, state.locations, self._root()):
            lines.append(f"> {target}")
        if event.warning:
            lines.append(f"> **⚠️ Warning:** {inert_line(event.warning)}")
        card = "\n".join(lines) + "\n" + (diff + "\n" if diff else "")
        choices = " · ".join(inert_line(o.label) for o in event.options)
        self._draw_card(event.request_id, card, marker, choices)

    def _draw_card(self, request_id: str, card: str, marker: list[str], choices: str) -> None:
        """A card, its marker above it and how to answer it below; kept to be drawn again
        with its answer in place of the choices."""
        self._cards[request_id] = card
        head = "".join(f"{line}\n" for line in marker)
        ask = f"{CHOICES}{choices}\n" if self._interactive else ""
        self.text.append(head + card + ask)
        self._spans[f"card:{request_id}"] = (self._block_start, self.text.length)

    def _answered(self, request_id: str, answer: str, status: str | None = None) -> None:
        """A card's answer: in place of its choices (and its marker: nothing is left to
        answer) when the card is near the end, else a line of its own (in the section of
        ``status``, a subagent, when given)."""
        card = self._cards.pop(request_id, None)
        key = f"card:{request_id}"
        if card is not None:
            drawn = f"{card}> _{answer}_\n"
            if self._block == key:
                self.text.rewrite_from(self._block_start, drawn)
                self._spans.pop(key, None)
                return
            if self._redraw(key, drawn):
                self._spans.pop(key, None)
                return
        self._spans.pop(key, None)
        self._new_block("status", status)
        self.text.append(f"_{answer}_\n")
