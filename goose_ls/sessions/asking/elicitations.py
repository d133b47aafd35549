"""The agent asks the user for input (ACP elicitation): a small form, or a page to open.

Like a permission request, the question is recorded as an ``elicitation_request`` event
and waits for the editor's answer; its outcome is recorded as ``elicitation_resolved``.
A form's answer is checked against the schema the agent sent before it goes on: a bad
one is refused, naming the field, and the question stays open. Questions fail closed:
a question outside a running turn, a cancelled turn, a stopped agent or a withdrawn
request is answered ``cancel``, never with content goose-ls made up. A question past a
cap of :mod:`goose_ls.prompt_limits` (its message, fields, choices, size, or too many
prompts waiting) is never put to the user: the agent gets an error naming the cap.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Protocol

from goose_ls import events
from goose_ls.prompt_limits import (
    MAX_CHOICES,
    MAX_FORM_CHARS,
    MAX_FORM_FIELDS,
    MAX_MESSAGE_CHARS,
)
from goose_ls.sessions.asking.waiting import Asking, WaitingLimit, over_cap
from goose_ls.sessions.registry import Registry
from goose_ls.workspace.audit import AuditLog
from goose_ls.workspace.pages import page_problem, without_credentials

Json = dict[str, Any]
Answer = tuple[events.ElicitationAction, Json | None]
"""The action taken, and the form's content when it was accepted."""

CANCEL: Answer = ("cancel", None)

_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "string": ((str,), "a string"),
    "number": ((int, float), "a number"),
    "integer": ((int,), "an integer"),
    "boolean": ((bool,), "a boolean"),
    "array": ((list,), "a list of strings"),
}


def choices(prop: Json) -> list[str] | None:
    """The values a single- or multi-select property allows (None: any value)."""
    source = prop.get("items", prop) if prop.get("type") == "array" else prop
    if isinstance(source.get("enum"), list):
        return [str(value) for value in source["enum"]]
    titled = source.get("oneOf") or source.get("anyOf")
    if isinstance(titled, list):
        return [str(item.get("const")) for item in titled if isinstance(item, dict)]
    return None


def _choice_count(prop: Json) -> int:
    """How many choices a property offers (its ``enum``, ``oneOf`` or ``anyOf``)."""
    source = prop.get("items", prop) if isinstance(prop.get("items"), dict) else prop
    return max(
        (
            len(found)
            for key in ("enum", "oneOf", "anyOf")
            if isinstance(found := source.get(key), list)
        ),
        default=0,
    )


def over_limits(message: str, schema: Json | None) -> tuple[str, str] | None:
    """The cap a question goes past, and how (None: it fits every cap)."""
    if len(message) > MAX_MESSAGE_CHARS:
        return "message", (
            f"a question's message of {len(message):,} characters (goose-ls's cap, "
            f"{MAX_MESSAGE_CHARS:,})"
        )
    if schema is None:
        return None
    properties = schema.get("properties")
    fields = properties if isinstance(properties, dict) else {}
    if len(fields) > MAX_FORM_FIELDS:
        return "fields", (
            f"a question of {len(fields)} fields (goose-ls's cap on fields, {MAX_FORM_FIELDS})"
        )
    for name, prop in fields.items():
        count = _choice_count(prop) if isinstance(prop, dict) else 0
        if count > MAX_CHOICES:
            return "choices", (
                f"a question whose field {str(name)[:40]!r} offers {count:,} choices "
                f"(goose-ls's cap on choices, {MAX_CHOICES})"
            )
    size = len(json.dumps(schema, ensure_ascii=False))
    if size > MAX_FORM_CHARS:
        return "form size", (
            f"a question's form of {size:,} characters (goose-ls's cap, {MAX_FORM_CHARS:,})"
        )
    return None


def _value_problem(prop: Json, value: Any) -> str | None:
    kind = str(prop.get("type"))
    expected = _TYPES.get(kind)
    if expected is None:
        return None  # a kind ACP added later: the agent checks it
    types, wording = expected
    if isinstance(value, bool) != (kind == "boolean") or not isinstance(value, types):
        return f"must be {wording}"
    allowed = choices(prop)
    picked = value if isinstance(value, list) else [value]
    if kind == "array" and not all(isinstance(item, str) for item in picked):
        return f"must be {wording}"
    if allowed is not None and (wrong := [v for v in picked if v not in allowed]):
        return f"{wrong[0]!r} is not one of {', '.join(allowed)}"
    return None


def content_problem(schema: Json, content: Json | None) -> str | None:
    """What is wrong with a form's ``content`` (``field: problem``), or None."""
    if content is None:
        return "content: is required to accept"
    properties = schema.get("properties") or {}
    for name in schema.get("required") or []:
        if name not in content:
            return f"content.{name}: is required"
    for name, value in content.items():
        prop = properties.get(name)
        if not isinstance(prop, dict):
            return f"content.{name}: is not in the form"
        if problem := _value_problem(prop, value):
            return f"content.{name}: {problem}"
    return None


class QuestionAnswers(Protocol):
    """What the LSP layer does with the agent's questions: show them and answer them."""

    def waiting(self, request_id: str, session_id: str | None = None) -> bool: ...

    def pending_requests(self, session_id: str | None = None) -> list[str]: ...

    def answer(
        self, request_id: str, action: events.ElicitationAction, content: Json | None = None
    ) -> None: ...

    def page_of(self, request_id: str) -> str | None: ...


class Elicitations:
    """The questions waiting for the user, by goose-ls's request id."""

    def __init__(
        self, registry: Registry, waiting: WaitingLimit | None = None, audit: AuditLog | None = None
    ) -> None:
        """``waiting`` counts the prompts of a session, the permission requests' too;
        ``audit`` records what became of each question (a page's address, a form's
        message; never a form's content)."""
        self._registry = registry
        self._audit = audit
        self._asking: Asking[Json | str, Answer] = Asking(waiting)
        """Each question's form schema, or the page it asks to open."""

    async def request(
        self,
        session_id: str,
        message: str,
        schema: Json | None,
        url: str | None,
        tool_call_id: str | None = None,
        subagent: str | None = None,
    ) -> Answer:
        """Ask the user (a form with ``schema``, else the page at ``url``; asked by the
        tool call ``tool_call_id``, if the agent named one; by the session's ``subagent``,
        if one asks); the answer.
        Raises :class:`ClientRefusal` past a cap (the agent is told which)."""
        session = self._registry.find(session_id)
        if session is None or session.active is None or session.active.cancelled:
            return CANCEL
        if over := over_limits(message, schema):
            raise over_cap(self._registry, self._asking.waiting_count, session, *over)
        if problem := self._asking.waiting_count.full(session_id):
            raise over_cap(self._registry, self._asking.waiting_count, session, "pending", problem)
        if schema is None and (problem := page_problem(url or "")):
            # Never put before the user: the agent hears "decline", the user why.
            note = f"The agent asked you to open a page; goose-ls refused it: {problem}."
            self._registry.record(session, events.Note("warning", note), subagent=subagent)
            self._audited(session_id, message, url or "", "refused", f"goose-ls: {problem}")
            return ("decline", None)
        page = (url or "") if schema is None else None
        with self._asking.ask(session_id, schema if schema is not None else url or "") as (
            request_id,
            asked,
        ):
            if schema is None:
                request = events.ElicitationRequested(
                    request_id, message, "url", url=url, tool_call_id=tool_call_id
                )
            else:
                request = events.ElicitationRequested(
                    request_id, message, requested_schema=schema, tool_call_id=tool_call_id
                )
            self._registry.record(session, request, subagent=subagent)
            try:
                action, content = await asked.answer
            except asyncio.CancelledError:  # the agent withdrew its question
                cancelled = events.ElicitationResolved(request_id, "cancel")
                self._registry.record(session, cancelled, subagent=subagent)
                self._audited(session_id, message, page, "cancel", "agent")
                raise
        resolved = events.ElicitationResolved(request_id, action, content)
        self._registry.record(session, resolved, subagent=subagent)
        by = "user" if action in ("accept", "decline") else "cancelled (not answered)"
        self._audited(session_id, message, page, action, by)
        return action, content

    def _audited(
        self, session_id: str, message: str, url: str | None, outcome: str, by: str
    ) -> None:
        if self._audit is not None:
            page = url is not None
            tool, target = (
                ("page", without_credentials(url or "")) if page else ("question", message[:200])
            )
            self._audit.record(session_id, tool, target, outcome, by)

    def waiting(self, request_id: str, session_id: str | None = None) -> bool:
        """Whether the question still waits (in ``session_id``, when given)."""
        return self._asking.waiting(request_id, session_id) is not None

    def pending_requests(self, session_id: str | None = None) -> list[str]:
        """Ids of the questions still waiting, oldest first."""
        return self._asking.pending_requests(session_id)

    def answer(
        self, request_id: str, action: events.ElicitationAction, content: Json | None = None
    ) -> None:
        """Answer a waiting question. Raises KeyError for one that does not wait, and
        ValueError (``field: problem``) for content that does not fit: it waits on."""
        asked = self._asking.waiting(request_id)
        if asked is None:
            raise KeyError(request_id)
        schema = asked.question
        if action != "accept" and content is not None:
            raise ValueError(f"content: only an accepted question has content ({action})")
        form = schema if isinstance(schema, dict) else None
        if action == "accept" and form is not None and (problem := content_problem(form, content)):
            raise ValueError(problem)
        asked.answer.set_result((action, content if form is not None else None))

    def page_of(self, request_id: str) -> str | None:
        """The page a waiting URL question asks to open (None: no such question)."""
        asked = self._asking.waiting(request_id)
        return asked.question if asked is not None and isinstance(asked.question, str) else None

    def cancel(self, session_id: str | None = None) -> None:
        """Answer ``cancel`` to the waiting questions of a session (of all, with None)."""
        self._asking.answer_all(CANCEL, session_id)
