"""Property-based: consent the agent cannot forge, whatever it sends.

Permission requests with random options (known and unknown kinds, labels that are other
kinds' words, duplicate ids and names, unicode, controls, bidi), titles, ``rawInput``
shapes and tool kinds go through the real :class:`~goose_ls.sessions.Permissions`, each
offered choice answered in turn: the prompt states the action from the request's own
data (or says goose-ls cannot tell), a choice that does not read "Allow" never sends the
agent an option it declared an allow, no two choices read the same, and the audit log
records what the user was shown. Random agent text (goose-ls's own line openers,
markers with the real request ids, controls, ``\\r``, bidi, zero-width), cut into chunks
anywhere, goes through the real renderer beside its *twin*: the same events with every
character of agent text that could spell something replaced by ``x``. goose-ls's own
lines are the same in both; a line the agent wrote begins, in the twin, with no opener
of goose-ls's, so in the real transcript it must not either; and a code action finds a
card only where the twin has one. The in-process examples are cheap (about 200 each,
``GOOSE_LS_FUZZ_EXAMPLES=2000`` for more); one test runs a few through a real goose-ls
and the scripted agent.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as examples
from hypothesis import strategies as st
from lsprotocol import types

from goose_ls import events
from goose_ls.inert import inert_line
from goose_ls.lsp.chat.permission_prompts import popup_message
from goose_ls.lsp.code_actions import cards_at
from goose_ls.lsp.transcript import blocks
from goose_ls.lsp.transcript.render import (
    CHOICES,
    Renderer,
    permission_marker,
    question_marker,
)
from goose_ls.lsp.transcript.text import TranscriptText
from goose_ls.sessions import IndexedEvent
from goose_ls.sessions.asking.permissions import Permissions
from goose_ls.sessions.journal.library import SessionLibrary
from goose_ls.sessions.registry import Registry
from goose_ls.sessions.session import Turn
from goose_ls.tool_calls import ToolCalls
from goose_ls.workspace.audit import AuditLog
from goose_ls.workspace.confinement import Confinement
from goose_ls.workspace.policy import Policy
from support.buffers import EDITORS, EditorBuffers
from support.harness import Editor, start_editor, stop_editor

EXAMPLES = int(os.environ.get("GOOSE_LS_FUZZ_EXAMPLES", "200"))
"""Examples per in-process property; more with ``GOOSE_LS_FUZZ_EXAMPLES=2000``."""
FUZZ = examples(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False
)
AGENT_NAME = "Claude Agent"
CANNOT_TELL = "goose-ls cannot tell what this does"
REQUEST_IDS = ["0123456789ab", "feedfacecafe"]
"""The ids of the cards drawn: goose-ls's own random ones, which the agent never sees."""
GUESSED_IDS = ["000000000000", "0123456789ac"]
"""The ids the agent's forged markers carry."""

# --- what a hostile agent types ---------------------------------------------------------

NASTY = [
    "\x1b", "\x1b[2J", "\x1b]52;c;cm0gLXJmIH4=\x07", "\x9b31m", "\x00", "\x7f", "\r", "\r\n",
    "\n", "\t", "\u202e", "\u2066", "\u061c", "\u200b", "\u200d", "\ufeff", "\u00ad",
    "\u2028", "\u00a0", "\u3000", "👩\u200d💻", "é", "e\u0301", "ﬁ",
]  # fmt: skip
OPENERS = [
    *blocks.OWN_OPENERS, "## You", f"## {AGENT_NAME}", "## ", "# goose chat", "```", "~~~",
    "> ", ">", "\\", "> **🔐 Permission needed:** Read README.md (read)",
    "> Allowing lets this happen: `ls`", "> Answer with a code action on this card: ",
    "_Permission answered: Allow once._", "> Open: <https://example.com>",
    *[permission_marker(r) for r in GUESSED_IDS], *[question_marker(r) for r in GUESSED_IDS],
]  # fmt: skip
WORDS = [
    "Allow once", "Allow always", "Allow", "allow", "Reject", "Reject always", "reject",
    "Allow for this session", "Unknown choice", "yes", "no", "ok", "Cancel", "  ", "(", ")",
    "rm -rf ~/projects", "README.md", "echo pwned > t1.txt", "-lc",
]  # fmt: skip

pieces = st.one_of(
    st.sampled_from(NASTY), st.sampled_from(OPENERS), st.sampled_from(WORDS), st.text(max_size=6)
)
agent_text = st.lists(pieces, max_size=8).map("".join)


def chunked(text: str) -> st.SearchStrategy[list[str]]:
    """``text`` cut at random places (a chunk may end inside any opener)."""
    return st.lists(st.integers(0, len(text)), max_size=6).map(
        lambda cuts: [
            text[a:b]
            for a, b in zip([0, *sorted(cuts)], [*sorted(cuts), len(text)], strict=True)
            if b > a
        ]
    )


# --- permission requests ---------------------------------------------------------------

KINDS = [*events.KIND_LABELS, "allow", "reject", "Allow_once", "allow_once ", "", "other"]
option_ids = st.one_of(
    st.sampled_from(["a", "b", "allow_once", "reject_once", "goose-ls:allow_session", ""]),
    st.text(max_size=4),
)
options = st.lists(
    st.builds(
        events.PermissionOption,
        option_id=option_ids,
        name=agent_text,
        kind=st.one_of(st.sampled_from(KINDS), st.text(max_size=4)),
    ),
    max_size=6,
)
PATHS = ["README.md", "src/app.py", ".git/config", ".vscode/settings.json", "../outside.txt", ""]
paths = st.one_of(st.sampled_from(PATHS), agent_text)
junk: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | agent_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(agent_text, inner, max_size=3),
    max_leaves=6,
)
raw_inputs = st.one_of(
    st.none(),
    junk,
    st.fixed_dictionaries({"command": agent_text}),
    st.fixed_dictionaries({"command": st.lists(agent_text, min_size=1, max_size=4)}),
    st.fixed_dictionaries({"command": st.tuples(st.just("bash"), st.just("-lc"), agent_text)}),
    st.fixed_dictionaries({"path": paths}, optional={"command": agent_text, "junk": junk}),
    st.fixed_dictionaries({"file_path": paths, "content": agent_text}),
    st.fixed_dictionaries({"url": agent_text}),
    st.dictionaries(st.sampled_from(["command", "path", "cwd", "changes", "url"]), junk),
)
tool_kinds = st.one_of(
    st.none(), st.sampled_from(["read", "edit", "execute", "fetch", "other", "delete"]), agent_text
)


@st.composite
def tool_calls(draw: st.DrawFn) -> events.ToolCallUpdate:
    raw = draw(raw_inputs)
    if isinstance(raw, dict) and isinstance(raw.get("command"), tuple):
        raw = {**raw, "command": list(raw["command"])}
    return events.ToolCallUpdate(
        tool_call_id=draw(st.sampled_from(["t1", "t2"])),
        title=draw(st.one_of(st.none(), agent_text, st.just("Read README.md" * 40))),
        kind=draw(tool_kinds),
        raw_input=raw,
        locations=draw(
            st.one_of(st.none(), st.lists(paths.map(lambda p: {"path": p}), max_size=2))
        ),
    )


class Asked:
    """A goose-ls's session side with no agent and no editor: the real
    :class:`Permissions`, a real registry, the audit log in a folder of its own."""

    def __init__(self, folder: Path) -> None:
        self.workspace = folder / "workspace"
        self.workspace.mkdir(exist_ok=True)
        self.published: list[events.SessionEvent] = []
        self.registry = Registry(
            SessionLibrary(folder / "data", lambda *_: None),
            self._published,
        )
        self._asked = asyncio.Event()
        root = str(self.workspace)
        self.audit = AuditLog(folder / "data" / "audit.log", lambda *_: None)
        self.permissions = Permissions(
            self.registry,
            lambda: (Policy(root, []), None),
            self.audit,
            lambda: (Confinement([self.workspace]), "ask"),
        )
        self._sessions = 0

    async def ask(
        self, call: events.ToolCallUpdate, offered: list[events.PermissionOption], pick: int
    ) -> tuple[events.PermissionRequested | None, str | None, str | None]:
        """Ask in a fresh session; answer with the ``pick``-th choice shown. The request
        shown (None: settled without asking), the label picked and the id sent."""
        self._sessions += 1
        session = self.registry.open(f"s{self._sessions}", str(self.workspace), 1)
        session.active = Turn("m", "go", [])
        self.published.clear()
        self._asked = asyncio.Event()
        asking = asyncio.ensure_future(self.permissions.request(session.session_id, call, offered))
        await asyncio.wait(
            [asking, asyncio.ensure_future(self._asked.wait())], return_when="FIRST_COMPLETED"
        )
        request = self._request()
        label = None
        if request is not None:
            choice = request.options[pick % len(request.options)]
            label = choice.label
            self.permissions.answer(request.request_id, choice.option_id)
        return request, label, await asking

    def _published(self, indexed: IndexedEvent) -> None:
        self.published.append(indexed.event)
        if isinstance(indexed.event, events.PermissionRequested):
            self._asked.set()

    def _request(self) -> events.PermissionRequested | None:
        found = [e for e in self.published if isinstance(e, events.PermissionRequested)]
        return found[0] if found else None

    def last_audit(self) -> dict[str, Any]:
        lines = self.audit.path.read_text(encoding="utf-8").splitlines()
        record: dict[str, Any] = json.loads(lines[-1])
        return record


@pytest.fixture(scope="module")
def asked(tmp_path_factory: pytest.TempPathFactory) -> Asked:
    return Asked(tmp_path_factory.mktemp("consent"))


def _reads_the_same(label: str) -> str:
    """A label as a person reads it: spaces of any width alike, runs of them one, case
    and compatibility forms ignored."""
    import unicodedata

    folded = unicodedata.normalize("NFKC", label).casefold()
    return re.sub(r"\s+", " ", folded).strip()


def _strings(value: Any) -> list[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for item in value for s in _strings(item)] if isinstance(value, list) else []


def _check_action(call: events.ToolCallUpdate, action: str) -> None:
    """The action comes from the request's own data, or says goose-ls cannot tell (and
    then shows that data, never the title alone)."""
    raw = call.raw_input
    assert inert_line(action).strip(), "the prompt states an action"
    if action.startswith(CANNOT_TELL):
        shown = json.dumps(raw, sort_keys=True, default=repr)[:40]
        assert shown in action, f"the request's data is shown: {shown!r} in {action!r}"
        return
    assert isinstance(raw, dict) or call.locations, action
    if isinstance(raw, dict):
        command = raw.get("command")
        if isinstance(command, str) and command:
            assert command in action, (command, action)
        elif isinstance(command, list) and command:
            last = command[-1]
            assert last in action or shlex.quote(last) in action, (command, action)
        for key in ("path", "file", "file_path", "notebook_path"):
            value = raw.get(key)
            if isinstance(value, str) and value:
                assert os.path.basename(value.removeprefix("file://")) in action, (value, action)
    for location in call.locations or []:
        path = location.get("path")
        if isinstance(path, str) and path:
            assert os.path.basename(path) in action, (path, action)
    title = call.title or ""
    if title.strip() and action.strip() == title.strip():
        assert any(title.strip() in said for said in _strings(raw)), "the title alone is no action"


@FUZZ
@given(call=tool_calls(), offered=options, pick=st.integers(0, 10))
def test_a_permission_prompt_states_the_action_and_no_choice_allows_unless_it_says_so(
    asked: Asked, call: events.ToolCallUpdate, offered: list[events.PermissionOption], pick: int
) -> None:
    request, label, sent = asyncio.run(asked.ask(call, offered, pick))
    sent_kinds = {o.kind for o in offered if o.option_id == sent}
    allows = bool(sent_kinds & {"allow_once", "allow_always"})
    if request is None:  # settled without asking (a secret, nothing known to offer)
        assert not allows, (offered, sent)
        return
    assert label is not None
    shown = [_reads_the_same(o.label) for o in request.options]
    assert len(set(shown)) == len(shown), f"two choices read the same: {shown}"
    if allows:
        assert label.startswith("Allow"), f"{label!r} sent {sent!r}, an allow ({offered})"
    if label.startswith("Allow"):
        assert sent_kinds <= {"allow_once", "allow_always"}, (label, sent, offered)
    else:
        assert sent_kinds <= {"reject_once", "reject_always"}, (label, sent, offered)
    action = request.action or ""
    _check_action(call, action)
    assert inert_line(action) in popup_message(request)
    body = _rendered([request])
    assert inert_line(action) in body, body
    audit = asked.last_audit()
    assert audit["outcome"] == (sent or "cancelled")
    assert audit["target"] == action, "the audit log records what the user was shown"


def _rendered(requests: list[events.SessionEvent]) -> str:
    text = TranscriptText("")
    calls = ToolCalls()
    renderer = Renderer(text, lambda: calls, agent=lambda: AGENT_NAME)
    for event in requests:
        if isinstance(event, events.PermissionRequested):
            calls.apply(event.tool_call)
        renderer.render(event)
    return text.body


# --- agent text in the transcript -------------------------------------------------------

KEEP = "`~:"
"""What the twin keeps of agent text besides spaces and what is not printable: what
shapes goose-ls's own blocks (fences, a selection's heading) and where lines end."""


def twin(text: str) -> str:
    """Agent text that can spell nothing: what could, an ``x``."""
    return "".join(c if c in KEEP or c.isspace() or not c.isprintable() else "x" for c in text)


def same(text: str) -> str:
    return text


Build = Callable[[Callable[[str], str]], list[events.SessionEvent]]


def _content(text: str) -> events.Json:
    return {"type": "text", "text": text}


@st.composite
def step(draw: st.DrawFn) -> Build:
    """One or a few events, built with agent text as given or as its twin."""
    kind = draw(
        st.sampled_from(
            [
                *("say", "think", "user", "tool", "update", "plan", "markdown", "ask"),
                *("answered", "question", "end", "note", "compaction", "planfile", "plankind"),
            ]
        )
    )
    text = draw(agent_text)
    cuts = draw(chunked(text))
    other = draw(agent_text)
    call_id = draw(st.sampled_from(["t1", "t2"]))
    request_id = draw(st.sampled_from(REQUEST_IDS))
    label = draw(st.one_of(st.none(), agent_text))

    def build(f: Callable[[str], str]) -> list[events.SessionEvent]:
        if kind in ("say", "think", "user"):
            chunk: Callable[[events.Json], Any] = {
                "say": events.AgentMessageChunk,
                "think": events.AgentThoughtChunk,
                "user": events.UserMessageChunk,
            }[kind]
            return [chunk(_content(f(piece))) for piece in cuts]
        if kind == "tool":
            raw = {"command": f(other)}
            output = [{"type": "content", "content": _content(f(text))}]
            return [events.ToolCall(call_id, f(text), f(other), "pending", output, None, raw)]
        if kind == "update":
            return [events.ToolCallUpdate(call_id, title=f(text), status=f(other))]
        if kind == "plan":
            return [events.Plan([{"content": f(text), "status": "pending"}])]
        if kind == "markdown":
            path = f"/{f(other)}"
            return [
                events.PlanUpdate(
                    {"type": "markdown", "planId": "p", "content": f(text), "path": path}
                )
            ]
        if kind == "planfile":
            return [events.PlanUpdate({"type": "file", "planId": "f", "uri": f"file:///{f(text)}"})]
        if kind == "plankind":
            entries: list[events.Json] = [{"content": f(text), "status": "pending"}]
            kanban: events.Json = {"type": f(other), "planId": "k", "entries": entries}
            return [events.PlanUpdate({**kanban, "uri": f(text)})]
        if kind == "ask":
            call = events.ToolCallUpdate(call_id, title=f(text), kind=f(other))
            offered = [
                events.PermissionOption("y", f(other), "allow_once"),
                events.PermissionOption("n", f(text), "reject_once"),
            ]
            return [events.PermissionRequested(request_id, call, offered, None, f(other))]
        if kind == "answered":
            return [events.PermissionResolved(request_id, "selected", "y", f(label or ""))]
        if kind == "question":
            return [events.ElicitationRequested(request_id, f(text), "url", None, f(other))]
        if kind == "end":
            return [events.TurnEnded("end_turn", f(text) or None)]
        if kind == "note":
            return [events.Note("warning", f(text))]
        return [
            events.Compaction("c", "in_progress"),
            events.CompactionSummaryChunk("c", _content(f(text))),
            events.Compaction("c", "failed", None, f(other) or None),
        ]

    return build


OWN = sorted(
    {
        *blocks.OWN_OPENERS,
        "## ",
        "> Allowing lets this happen:",
        "> Open: <",
        "> Answer with",
        "> **Note:**",
        "**Plan**",
    },
    key=len,
    reverse=True,
)
"""How goose-ls's own lines begin (``## `` only before a speaker's name)."""


def opener(line: str) -> str | None:
    if line.startswith("## "):
        return line if line in ("## You", f"## {AGENT_NAME}") else None
    return next((own for own in OWN if line.startswith(own)), None)


def _fenced(lines: list[str]) -> set[int]:
    """Lines inside a fenced block: goose-ls fences what a tool printed."""
    inside: set[int] = set()
    fence: str | None = None
    for n, line in enumerate(lines):
        if fence is None:
            # CommonMark: up to 3 spaces before a fence, and no ` after ```
            match = re.match(r" {0,3}(?:(`{3,})[^`]*$|(~{3,}))", line)
            if match:
                fence = match.group(1) or match.group(2)
        elif re.fullmatch(f" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*", line):
            fence = None
        else:
            inside.add(n)
    return inside


def _render(events_: list[events.SessionEvent]) -> list[str]:
    text = TranscriptText("")
    calls = ToolCalls()
    renderer = Renderer(text, lambda: calls, agent=lambda: AGENT_NAME)
    for event in events_:
        if isinstance(event, (events.ToolCall, events.ToolCallUpdate)):
            calls.apply(event)
        elif isinstance(event, events.PermissionRequested):
            calls.apply(event.tool_call)
        renderer.render(event)
    return text.body.split("\n")


@FUZZ
@given(steps=st.lists(step(), min_size=1, max_size=8))
def test_agent_text_never_begins_a_line_as_goose_ls_s_own_and_answers_no_card(
    steps: list[Build],
) -> None:
    real = _render([e for build in steps for e in build(same)])
    model = _render([e for build in steps for e in build(twin)])
    assert len(real) == len(model), "\n".join(real)
    fenced = _fenced(model)
    shown = "\n".join(real)
    for n, (line, own) in enumerate(zip(real, model, strict=True)):
        if n not in fenced:
            assert opener(line) == opener(own), f"line {n} {line!r} is agent text:\n{shown}"
        acting = re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b]", line)
        assert not acting, f"line {n} {line!r} is not inert"
    for markers in (permission_marker, question_marker):
        for n in range(len(real)):
            found = cards_at(real, REQUEST_IDS, markers, n, n)
            assert set(found) <= set(cards_at(model, REQUEST_IDS, markers, n, n)), (n, shown)
    choices = [n for n, line in enumerate(real) if line.startswith(CHOICES) and n not in fenced]
    assert choices == [n for n, line in enumerate(model) if line.startswith(CHOICES)], shown


# --- end to end -------------------------------------------------------------------------


ACP_KINDS = ["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
e2e_calls = st.builds(
    lambda call, kind: {
        "toolCallId": call.tool_call_id,
        "kind": kind,
        "rawInput": call.raw_input,
        **({"title": call.title} if call.title is not None else {}),
        **({"locations": call.locations} if call.locations else {}),
    },
    tool_calls(),
    st.sampled_from(ACP_KINDS),
)
e2e_options = options.map(
    lambda offered: [
        {"optionId": o.option_id, "name": o.name, "kind": o.kind}
        for o in offered
        if o.kind in events.KIND_LABELS
    ]
).filter(bool)
CASES = 3


@examples(
    max_examples=1, deadline=None, suppress_health_check=list(HealthCheck), phases=[Phase.generate]
)
@given(
    cases=st.lists(
        st.tuples(agent_text, e2e_calls, e2e_options, st.integers(0, 10)),
        min_size=CASES,
        max_size=CASES,
    )
)
def test_generated_requests_through_a_real_goose_ls(
    tmp_path_factory: pytest.TempPathFactory, cases: list[tuple[str, Any, Any, int]]
) -> None:
    """A few generated cases end to end, as Helix sees them (no popup: the card and its
    code actions): the card states the action, no line of agent text offers an answer,
    and the answer the agent gets allows only when the choice read "Allow"."""
    asyncio.run(_end_to_end(tmp_path_factory.mktemp("consent-e2e"), cases))


async def _end_to_end(tmp: Path, cases: list[tuple[str, Any, Any, int]]) -> None:
    editor = await start_editor(tmp)
    try:
        turn: list[dict[str, Any]] = []
        for n, (text, call, offered, _) in enumerate(cases):
            call = {**call, "toolCallId": f"t{n}"}
            turn += [
                {"text": f"{text}\n"},
                {"toolCall": call},
                {"permission": {"toolCall": call, "options": offered}},
            ]
        capabilities, encoding = EDITORS["helix"]
        settings = {"workspace": {"outside": "ask"}}
        await editor.start({"turns": [[*turn, {"text": "done"}]]}, settings, capabilities)
        buffers = EditorBuffers(editor.client, encoding)
        uri = await editor.explain_and_open(buffers)
        for n, (_, call, offered, pick) in enumerate(cases):
            await _answer_one(editor, buffers, uri, n, call, offered, pick)
        await editor.goose.wait_for(lambda: editor.goose.turn_ends, what="the turn's end")
    finally:
        await stop_editor(editor)


async def _answer_one(
    editor: Editor,
    buffers: EditorBuffers,
    uri: str,
    n: int,
    call: dict[str, Any],
    offered: list[dict[str, Any]],
    pick: int,
) -> None:
    def outcomes() -> list[Any]:
        answered = [m.get("result", {}) for m in editor.agent_messages()]
        return [a["outcome"] for a in answered if isinstance(a, dict) and "outcome" in a]

    def asked_or_settled() -> list[Any]:
        asked: list[Any] = [
            r
            for r in editor.goose.of_kind("permission_request")
            if r["toolCall"]["toolCallId"] == f"t{n}"
        ]
        return asked or (["settled"] if len(outcomes()) > n else [])

    (request,) = await editor.goose.wait_for(asked_or_settled, what=f"request {n}")
    if request == "settled":  # refused without asking (a path no file can have, a secret)
        sent = outcomes()[n].get("optionId")
        assert not {o["kind"] for o in offered if o["optionId"] == sent} & {
            "allow_once",
            "allow_always",
        }
        return
    marker = permission_marker(request["requestId"])
    await editor.goose.wait_for(lambda: marker in buffers.texts[uri].split("\n"), what=f"card {n}")
    lines = buffers.texts[uri].split("\n")
    first = lines.index(marker)
    last = next(i for i in range(first, len(lines)) if lines[i].startswith(CHOICES))
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", buffers.texts[uri])
    action = request["action"]
    update = events.ToolCallUpdate(
        call["toolCallId"],
        call.get("title"),
        raw_input=call["rawInput"],
        locations=call.get("locations"),
    )
    _check_action(update, action)
    assert inert_line(action) in lines[first + 2], lines[first : last + 1]
    labels = [option["label"] for option in request["options"]]
    for line in range(len(lines)):
        titles = await editor.code_actions(uri, line)
        answers = [t for t in titles if any(t.startswith(f"Goose: {label}:") for label in labels)]
        if first <= line <= last:
            assert len(answers) == len(labels), (line, titles)
        else:
            assert not answers, (line, lines[line], answers)
    titles = await editor.code_actions(uri, first + 1)
    label = labels[pick % len(labels)]
    chosen = next(a for t, a in titles.items() if t.startswith(f"Goose: {label}: "))
    assert chosen.title.removeprefix(f"Goose: {label}: ").rstrip("…") in inert_line(action)
    assert chosen.command is not None
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=chosen.command.command, arguments=chosen.command.arguments
        )
    )
    answers = await editor.goose.wait_for(lambda: outcomes()[n:], what=f"answer {n}")
    outcome: Any = answers[0]
    sent = outcome.get("optionId")
    kinds = {o["kind"] for o in offered if o["optionId"] == sent}
    if label.startswith("Allow"):
        assert kinds <= {"allow_once", "allow_always"}, (label, sent, offered)
    else:
        assert kinds <= {"reject_once", "reject_always"}, (label, sent, offered)
