"""Session events rendered as readable markdown, appended to the transcript body.

Each speaker's turn gets a heading; thoughts are a quoted, marked block; a tool call is a
block with its title, kind, status, paths, a short excerpt of its output and the diff of
an edit. A tool call's block is drawn again in place when the call changes, so its header
always tells its latest status, the text after it kept (unless that is long: then a
status line at the end says what changed). How full the context is (``usage_update``)
is a line of its own under the heading, then at each turn's end. Plans and compactions
are drawn in place too.
Over 300 lines: one renderer with one branch per kind of event, read as a whole.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import attrs

from goose_ls import events
from goose_ls.lsp import usage
from goose_ls.lsp.transcript import blocks
from goose_ls.lsp.transcript.outputs import OutputFiles
from goose_ls.lsp.transcript.text import TranscriptText
from goose_ls.sessions import path_of
from goose_ls.tool_calls import ToolCalls, ToolCallState

REDRAW_LIMIT = 20_000
"""A tool call's block is drawn again in place when at most this much text follows it
(the edit re-sends that text); further up, a change is a status line at the end."""
STATUS_MARK = {"pending": "⏳", "in_progress": "⏳", "completed": "✓", "failed": "✗"}


def permission_marker(request_id: str) -> str:
    """The line that ties a permission card to its request (code actions look for it)."""
    return f"<!-- goose-ls: permission {request_id} -->"


def question_marker(request_id: str) -> str:
    """The line that ties a question's card to its request (code actions look for it)."""
    return f"<!-- goose-ls: question {request_id} -->"


ToolCallLookup = Callable[[], "ToolCalls | None"]


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
    ) -> None:
        """``outputs`` keeps the whole output of a call whose block shows an excerpt;
        ``root`` is the chat's workspace folder, that diffs name files from."""
        self.text = text
        self._root = root
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
        self._tool_spans: dict[str, tuple[int, int]] = {}
        """Where each tool call's block is in the body (start, end), while it may be
        drawn again."""
        self._replay_calls: ToolCalls | None = None
        """While drawing history: its tool calls, merged as the session merged them."""
        self._usage: events.Usage | None = None
        """The context usage the agent sent during a turn, drawn when the turn ends."""
        self._compactions: dict[str, tuple[events.Compaction | None, str]] = {}
        """Each compaction's last state and the summary streamed so far."""

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
        self._tool_spans.clear()

    # --- blocks ------------------------------------------------------------------
    def _new_block(self, kind: str, speaker: str | None = None) -> None:
        if speaker and speaker != self._speaker:
            self._speaker = speaker
            self._separate()
            self.text.append(f"## {speaker}\n\n")
        elif self._block is not None:
            self._separate()
        self._block = kind
        self._block_start = self.text.length

    def _separate(self) -> None:
        """End the current line and leave one blank line before what comes next."""
        if not self.text.length or self.text.endswith("\n\n"):
            return
        self.text.append("\n" if self.text.endswith("\n") else "\n\n")

    # --- events ------------------------------------------------------------------
    def render(self, event: events.SessionEvent) -> None:
        if self._replay_calls is not None:
            if isinstance(event, (events.ToolCall, events.ToolCallUpdate)):
                self._replay_calls.apply(event)
            elif isinstance(event, events.PermissionRequested):
                self._replay_calls.apply(event.tool_call)
        if isinstance(event, events.UserMessageChunk):
            self._user(event.content)
        elif isinstance(event, events.AgentMessageChunk):
            if self._block != "text" or self._speaker != "goose":
                self._new_block("text", "goose")
            self.text.append(blocks.content_text(event.content))
        elif isinstance(event, events.AgentThoughtChunk):
            if self._block != "thought":
                self._new_block("thought", "goose")
                self.text.append("> 💭 ")
            self.text.append(blocks.content_text(event.content).replace("\n", "\n> "))
        elif isinstance(event, (events.ToolCall, events.ToolCallUpdate)):
            self._tool(event)
        elif isinstance(event, events.Plan):
            self._in_place("plan", blocks.plan("Plan", event.entries))
        elif isinstance(event, events.PlanUpdate):
            self._in_place(f"plan:{event.plan.get('planId')}", blocks.plan_document(event))
        elif isinstance(event, events.PlanRemoved):
            self._new_block("status")
            self.text.append("_Plan removed._\n")
        elif isinstance(event, (events.Compaction, events.CompactionSummaryChunk)):
            self._compaction(event)
        elif isinstance(event, events.PermissionRequested):
            self._card(event)
        elif isinstance(event, events.PermissionResolved):
            self._new_block("status")
            answer = event.label or event.option_id or "cancelled"
            self.text.append(f"_Permission answered: {answer}._\n")
        elif isinstance(event, events.ElicitationRequested):
            self._new_block("card", "goose")
            marker = [question_marker(event.request_id)] if self._interactive else []
            self.text.append("\n".join([*marker, *blocks.question(event)]) + "\n")
            if self._interactive:
                self.text.append("> Answer with a code action on this card: Decline · Cancel\n")
        elif isinstance(event, events.ElicitationResolved):
            self._new_block("status")
            self.text.append(f"_Question answered: {event.action}._\n")
        elif isinstance(event, events.TurnEnded):
            self._new_block("status")
            if event.error:
                self.text.append(f"> ⚠ **The turn failed:** {event.error}\n")
            elif event.stop_reason != "end_turn":
                self.text.append(f"_Turn ended: {event.stop_reason}._\n")
            if event.usage:
                self.text.append(f"_{usage.turn_tokens(event.usage)}_\n")
            self._speaker = None
            self._draw_usage()
        elif isinstance(event, events.Usage):
            self._usage = event
            if self._speaker is None:  # between turns: at once (under the heading at first)
                self._draw_usage()
        elif isinstance(event, events.Note):
            self._new_block("status")
            self.text.append(f"> **Note:** {event.text}\n")

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

    def _user(self, content: events.Json) -> None:
        kind = content.get("type")
        if kind == "text":
            text = content.get("text", "")
            heading, _, rest = text.partition("\n")
            if rest.startswith("```") and ":" in heading:  # a selection sent as a fenced block
                self._new_block("user", "You")
                self.text.append(f"> 📎 `{blocks.describe_heading(heading)}`\n")
                return
            self._new_block("user", "You")
            self.text.append(text.rstrip("\n") + "\n")
        elif kind == "resource":
            self._new_block("user", "You")
            uri = content.get("resource", {}).get("uri", "")
            self.text.append(f"> 📎 `{blocks.short_path(blocks.describe_uri(uri))}`\n")
        elif kind == "resource_link":
            self._new_block("user", "You")
            self.text.append(
                f"> 📎 `{blocks.short_path(path_of(content.get('uri', '')))}` (file)\n"
            )

    def _state(self, call: events.ToolCall | events.ToolCallUpdate) -> ToolCallState:
        """The call as the session knows it so far (this event merged in)."""
        tracker = self._tool_calls()
        state = tracker.get(call.tool_call_id) if tracker is not None else None
        return state if state is not None else ToolCalls().apply(call)

    def _tool(self, event: events.ToolCall | events.ToolCallUpdate) -> None:
        state = self._state(event)
        block = f"tool:{event.tool_call_id}"
        if isinstance(event, events.ToolCall) and event.tool_call_id not in self._drawn:
            self._drawn.add(event.tool_call_id)
            self._new_block(block, "goose")
            self.text.append(self._tool_block(state))
            self._tool_spans[event.tool_call_id] = (self._block_start, self.text.length)
        elif self._block == block:
            self.text.rewrite_from(self._block_start, self._tool_block(state))
            self._tool_spans[event.tool_call_id] = (self._block_start, self.text.length)
        elif not self._redraw(event.tool_call_id, self._tool_block(state)):
            self._new_block("status")
            mark = STATUS_MARK.get(state.status or "", "•")
            title = state.title or state.tool_call_id
            self.text.append(f"_{mark} {title}: {state.status or 'updated'}_\n")

    def _redraw(self, tool_call_id: str, block: str) -> bool:
        """Draw a tool call's block again where it is, the text after it kept: whether it
        was near enough the end (what follows it is sent to the editor again)."""
        span = self._tool_spans.get(tool_call_id)
        if span is None or self.text.length - span[1] > REDRAW_LIMIT:
            return False
        start, end = span
        self.text.rewrite_from(start, block + self.text.body_text(end))
        moved = len(block) - (end - start)
        self._tool_spans = {
            call: (a + moved, b + moved) if a > start else (a, b)
            for call, (a, b) in self._tool_spans.items()
        }
        self._tool_spans[tool_call_id] = (start, start + len(block))
        if self._block_start > start:
            self._block_start += moved
        return True

    def _tool_block(self, state: ToolCallState) -> str:
        status = state.status or "pending"
        kind = f" · {state.kind}" if state.kind else ""
        if state.name and state.name != state.title:
            kind += f" · `{state.name}`"
        title = state.title or state.tool_call_id
        lines = [f"**🔧 {title}**{kind} — {STATUS_MARK.get(status, '•')} {status}"]
        target = blocks.target(state.raw_input, state.locations)
        if target:
            lines.append(target)
        text = "\n".join(lines) + "\n"
        output = blocks.output(state.content, state.raw_output, self._terminal_output)
        excerpt = blocks.excerpt(output)
        if excerpt:
            text += f"\n```\n{excerpt}\n```\n"
        if excerpt != output.strip() and self._outputs is not None:
            link = self._outputs.link(state.tool_call_id, output)
            text += f"{link}\n" if link else ""
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
            self._new_block(block, "goose")
            self.text.append(rendered)

    def _card(self, event: events.PermissionRequested) -> None:
        """The question, with the change it would allow shown once, before the choices."""
        state = self._state(event.tool_call)
        diff = blocks.diffs(state.content, self._root())
        if self._block == f"tool:{state.tool_call_id}" and diff and self.text.endswith(diff):
            diff = ""  # the call's block just above shows it already
        self._new_block("card", "goose")
        lines = [permission_marker(event.request_id)] if self._interactive else []
        lines.append(
            f"> **🔐 Permission needed:** {state.title or state.tool_call_id} "
            f"({state.kind or 'other'})"
        )
        target = blocks.target(state.raw_input, state.locations)
        if target:
            lines.append(f"> {target}")
        if event.warning:
            lines.append(f"> **⚠️ Warning:** {event.warning}")
        self.text.append("\n".join(lines) + "\n")
        if diff:
            self.text.append(diff + "\n")
        if self._interactive:
            choices = " · ".join(o.label for o in event.options)
            self.text.append(f"> Answer with a code action on this card: {choices}\n")
