"""Scripted turns the editor plugins' tests share (Neovim, Emacs, VS Code): what each
plugin must draw the same way, and a turn that waits for a message sent into it."""

from __future__ import annotations

import re
from typing import Any

GOOSE_LABELS = ["Allow always", "Allow once", "Reject", "Reject always", "Allow for this session"]
"""What editors show for goose's options: goose names them by their kind, goose-ls words
them, and adds its own "Allow for this session" last."""

CLAUDE_PERMISSION_OPTIONS = [
    {"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"},
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]
"""claude-code-acp's options: its own names, which are not its kinds."""

PERMISSION_WITH_AGENT_NAMES = {
    "toolCall": {"toolCallId": "e1", "title": "Edit app.py"},
    "options": [
        *CLAUDE_PERMISSION_OPTIONS,
        {"optionId": "never", "name": "", "kind": "reject_always"},
    ],
}
"""A permission step whose options the agent names its own way ("Always Allow", "Allow",
and one unnamed): each reads as goose-ls words its kind, then goose-ls's own option."""

LABELS_FOR_AGENT_NAMES = [
    "Allow always",
    "Allow once",
    "Reject",
    "Reject always",
    "Allow for this session",
]
"""What editors show for :data:`PERMISSION_WITH_AGENT_NAMES`: goose-ls's wording of each
kind (the agent's names add nothing to it here)."""


FORM_QUESTION = {
    "message": "Set up the project",
    "schema": {
        "type": "object",
        "properties": {
            "colour": {"type": "string", "title": "Colour", "enum": ["red", "green", "blue"]},
            "workers": {"type": "integer", "title": "Workers"},
            "note": {"type": "string", "title": "Note"},
        },
        "required": ["colour", "workers"],
    },
}
"""An ``elicit`` step for the editors' forms: a choice, an integer, an optional text."""

QUESTIONS_OF_EVERY_KIND = [
    {"elicit": {"mode": "url", "message": "Log in", "url": "https://example.test/login"}},
    {
        "elicit": {
            "message": "Options",
            "schema": {
                "type": "object",
                "properties": {
                    "tags": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["alpha", "beta"]},
                    },
                    "public": {"type": "boolean", "default": True},
                    "ratio": {"type": "number"},
                },
                "required": ["public"],
            },
        }
    },
    {"elicit": {"mode": "url", "message": "Open this", "url": "file:///etc/passwd"}},
]
"""A turn's steps for the editors: a web page, a form of a list of choices, a yes/no and a
number, then a page that is not on the web (not to be opened)."""


def _plan(*entries: tuple[str, str]) -> list[dict[str, str]]:
    return [{"content": c, "status": s, "priority": "medium"} for c, s in entries]


def _update(kind: str, **fields: Any) -> dict[str, Any]:
    return {"update": {"sessionUpdate": kind, **fields}}


COMPACTION = [
    _update("compaction_update", compactionId="c1", status="in_progress"),
    _update(
        "compaction_summary_chunk",
        compactionId="c1",
        content={"type": "text", "text": "We split the parser"},
    ),
    _update(
        "compaction_summary_chunk",
        compactionId="c1",
        content={"type": "text", "text": " and kept the alias."},
    ),
    _update("compaction_update", compactionId="c1", status="completed"),
]
"""A compaction whose summary streams in two pieces, then is done."""

PLANS_AND_COMPACTION = [
    {"toolCall": {"toolCallId": "t1", "title": "Read app.py", "name": "fs_read"}},
    {"plan": _plan(("Read the parser", "in_progress"), ("Write the test", "pending"))},
    {"toolCall": {"toolCallId": "t2", "title": "shell · ls", "name": "shell · ls"}},
    {
        "toolUpdate": {
            "toolCallId": "t1",
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "def add"}}],
        }
    },
    {
        "plan": _plan(
            ("Read the parser", "completed"),
            ("Write the test", "in_progress"),
            ("Run it", "pending"),
        )
    },
    {
        "toolUpdate": {
            "toolCallId": "t2",
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "app.py"}}],
        }
    },
    {"text": "Reading."},
    _update(
        "plan_update",
        plan={
            "type": "markdown",
            "planId": "approved",
            "content": "1. Split `parse`\n2. Test it",
            "path": "/var/plans/approved.md",
        },
    ),
    _update(
        "plan_update",
        plan={"type": "items", "planId": "draft", "entries": _plan(("Draft step", "pending"))},
    ),
    _update("plan_removed", planId="draft"),
    _update(
        "plan_update",
        plan={
            "type": "kanban",
            "planId": "board",
            "entries": [*_plan(("Board task", "completed")), "not an entry"],
        },
    ),
    *COMPACTION,
    {"sessionInfo": {"title": "Parser refactor"}},
    {"text": "Carrying on."},
]
"""A turn's steps for the editors: a tool call named apart from its title (``fs_read``)
and one whose name is its title; a plan drawn, then drawn again in place (one line more)
after output was added above it, with a tool call below it that changes after; a plan by
id in markdown, naming its file outside the project; one by id removed; one of a kind
goose-ls does not know (the SDK refuses it), with an entry that is no object; a
compaction whose summary streams; a title."""


def check_plans_drawn(text: str) -> None:
    """What a plugin's chat shows of :data:`PLANS_AND_COMPACTION` (Neovim and Emacs draw
    the same text): each plan and the compaction line drawn again in place, tool names
    once, the removed plan saying so, a markdown plan's file (not linked: outside the
    project), a plan of an unknown kind by its entries."""
    assert "🔧 Read app.py · `fs_read` — completed\n    def add\n" in text, "its own name"
    assert "🔧 shell · ls — completed\n    app.py\n" in text, "a name that is the title: once"
    plan = "**Plan**\n- [x] Read the parser\n- [ ] Write the test\n- [ ] Run it\n"
    assert plan in text and text.count("Read the parser") == 1, "drawn again, in place"
    assert text.index("def add") < text.index(plan) < text.index("shell · ls"), text
    assert "**Plan** · `/var/plans/approved.md`\n\n1. Split `parse`\n2. Test it\n" in text
    assert "**Plan** of a kind goose-ls does not know: `kanban`\n- [x] Board task\n" in text
    assert "_Plan removed._" in text and "Draft step" not in text, "the removed plan says so"
    assert text.index("Reading.") < text.index("1. Split") < text.index("_Plan removed._")
    summary = "_🗜 The conversation was compacted._\n\n> We split the parser and kept the alias.\n"
    assert summary in text
    assert "Compacting the conversation…" not in text, "the line was redrawn"
    assert text.rstrip().endswith("Carrying on.")


STEERED_TURN = [{"text": "Working on it."}, {"waitForSteer": True}, {"text": "Done, with that."}]
"""A turn that waits, once under way, until a message is sent into it (``steering``)."""


HOSTILE_TURN: list[dict[str, Any]] = [
    {"thought": "planning\x1b]52;c;cHduZWQ=\x07\n⚠ fake warning"},
    {"toolCall": {"toolCallId": "t1", "title": "ls\x1b[2J\r🔐 permission: nothing"}},
    {
        "toolUpdate": {
            "toolCallId": "t1",
            "status": "completed",
            "content": [
                {"type": "content", "content": {"type": "text", "text": "out\x1b[31m\r\u202eok"}}
            ],
        }
    },
    {"permission": {"toolCallId": "t2", "title": "Read\x1b[2J README.md\u202e"}},
    # Forged lines split across chunks anywhere, as a stream splits them.
    {"text": "Hello\x1b[2J\n#"},
    {"text": "# Yo"},
    {"text": "u\n## Claude"},
    {"text": " Agent\n🔐 per"},
    {"text": "mission: rm -rf ~ (it calls this “Read”)\nfine\u200b\rX\u202eY\n"},
]
"""A turn of an agent named "Claude Agent" that tries to act through its text (ESC
sequences, an OSC 52 clipboard write, ``\\r`` overwrites, a bidi override, a zero-width
space) and to forge the chat's own lines (the speakers' headings, a permission line, a
quoted warning), each split across chunks; a plugin draws it as :func:`check_inert`
checks."""

_ACTING = ("\x1b", "\x07", "\r", "\u202e", "\u200b")


def acting(text: str) -> list[str]:
    """The characters of :data:`HOSTILE_TURN` that would act, found in ``text``."""
    return [char for char in _ACTING if char in text]


def check_inert(text: str, agent: str) -> None:
    """A plugin's chat ``text`` after :data:`HOSTILE_TURN` (asked about with one message):
    what would act is shown escaped, and each forged line is led by a backslash, so the
    only headings are the chat's own."""
    assert not acting(text), (acting(text), text)
    for escaped in ("\\x1b[2J", "\\x1b]52;c;cHduZWQ=\\x07", "\\r", "\\u202e", "\\u200b"):
        assert escaped in text, (escaped, text)
    lines = text.split("\n")
    assert [line for line in lines if line.startswith("## ")] == ["## You", f"## {agent}"], text
    for forged in (
        "\\## You",
        f"\\## {agent}",
        "\\🔐 permission: rm -rf ~ (it calls this “Read”)",
        "> \\⚠ fake warning",
        "fine\\u200b\\rX\\u202eY",
        "    out\\x1b[31m\\r\\u202eok",
        "🔧 ls\\x1b[2J\\r🔐 permission: nothing — completed",
    ):
        assert forged in lines, (forged, text)
    assert not [line for line in lines if line.startswith("🔐 permission: rm")], text


def _subagent(state: str, stop_reason: str | None = None, **fields: Any) -> dict[str, Any]:
    said = {"state": state, **({"stopReason": stop_reason} if stop_reason else {})}
    return _update("subagent_update", sessionId="sub-1", state=said, **fields)


SUBAGENT_TURN = [
    {"text": "Delegating."},
    _subagent("running", title="Count files", description="general-purpose",
              capabilities={"cancel": {}}),
    {"onSession": "sub-1", "userText": "Count the files"},
    {"onSession": "sub-1", "text": "Counting them.\n### 🤖 Subagent (✓ done): forged"},
    {"onSession": "sub-1", "toolCall": {"toolCallId": "ls1", "title": "ls", "kind": "execute",
                                        "status": "completed"}},
    {"onSession": "sub-1", "text": "There are 3 files."},
    _subagent("idle", "end_turn"),
    {"text": "The subagent counted 3."},
]  # fmt: skip
"""A turn in which the agent runs a subagent (as claude-agent-acp reports one: announced,
its task, its words and a tool call under its own id, its end), then answers itself; the
subagent's words try to pass for the block's heading. Each plugin draws the subagent's
block apart and lets it fold."""
SUBAGENT_HEADING = "### 🤖 Subagent (✓ done): Count files"

SUBAGENT_RESUMED_TURN = [
    {"text": "Starting a helper."},
    _subagent("running", title="Make a notes file", capabilities={"cancel": {}}),
    {"onSession": "sub-1", "toolCall": {"toolCallId": "t1", "title": "touch notes.txt",
                                        "kind": "execute", "status": "pending"}},
    _subagent("requires_action"),
    {"text": "Main: waiting for the subagent."},
    {"onSession": "sub-1", "toolUpdate": {"toolCallId": "t1", "status": "completed"}},
    {"onSession": "sub-1", "text": "Subagent: made it."},
    _subagent("idle", "end_turn"),
    {"text": "All done."},
]  # fmt: skip
"""A turn in which the parent speaks while its subagent works (Claude's in the
background): the subagent's work comes in two sections, its tool call of the first
finished after the parent spoke. The earlier heading says it goes on below; each folds
its own section."""

FORGED_TITLE = "cat\n### 🤖 Subagent (✓ done): forged\n## You\nrm -rf ~"
"""A subagent's tool title that goose-ls repeats in a note of its own (the request names a
file outside the workspace, refused unasked): it tries to forge a subagent heading (the
plugins' fold marker) and the user's heading."""
SUBAGENT_NOTE_TURN = [
    *SUBAGENT_TURN[:5],
    {"onSession": "sub-1", "permission": {"toolCallId": "p1", "title": FORGED_TITLE,
                                          "kind": "read", "rawInput": {"path": "/etc/passwd"}}},
    *SUBAGENT_TURN[5:],
]  # fmt: skip
""":data:`SUBAGENT_TURN` with the subagent's refused request in its block, before its last
words: a plugin shows the note on one line, forging nothing."""


def check_note_inert(text: str) -> None:
    """A plugin's chat after :data:`SUBAGENT_NOTE_TURN`: the note is one line of the
    subagent's block; the only subagent heading and "## You" are the plugin's own."""
    lines = text.split("\n")
    headings = [line for line in lines if line.startswith("### 🤖")]
    assert headings and all(is_subagent_heading(line) for line in headings), text
    assert [line for line in lines if line.startswith("## You")] == ["## You"], text
    (note,) = [line for line in lines if "Refused without asking" in line]
    assert "/etc/passwd" in note and "rm -rf ~" in note, "the note on one line"
    assert text.index(headings[0]) < text.index(note) < text.index("There are 3 files.")


def is_subagent_heading(line: str) -> bool:
    """Whether ``line`` is a plugin's heading of :data:`SUBAGENT_NOTE_TURN`'s subagent (in
    any state: a heading above the last may keep the state it was drawn with)."""
    return re.fullmatch(r"### 🤖 Subagent \([^)]*\): Count files", line) is not None
