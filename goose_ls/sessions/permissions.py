"""The agent asks before it acts: the policy decides what it can, the user the rest.

A request the policy settles is answered at once, with a note saying so. Any other is
recorded as a ``permission_request`` event and waits for the editor's answer; goose-ls
adds its own "Allow for this session" choice when the agent offers an "allow once". Every
decision is audited. Requests fail closed: a cancelled turn, a stopped agent or an
unknown session answers ``cancelled``, never "allow".
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

import attrs

from goose_ls import events
from goose_ls.sessions.registry import Registry
from goose_ls.workspace.audit import AuditLog
from goose_ls.workspace.policy import Decision, Policy, ToolTarget

ALLOW_FOR_SESSION = events.PermissionOption(
    option_id="goose-ls:allow_session", name="Allow for this session", kind="allow_always"
)
"""goose-ls's own choice: allow once now, and the same call again without asking."""

PolicySource = Callable[[], "tuple[Policy, str | None]"]
"""The policy in force now, and a problem with the project's policy file, if any."""


def _option(options: list[events.PermissionOption], kind: str) -> str | None:
    return next((o.option_id for o in options if o.kind == kind), None)


@attrs.define
class _Pending:
    session_id: str
    options: list[events.PermissionOption]
    answer: asyncio.Future[str | None]


class Permissions:
    def __init__(self, registry: Registry, policy: PolicySource, audit: AuditLog) -> None:
        self._registry = registry
        self._policy = policy
        self.audit = audit
        self._pending: dict[str, _Pending] = {}

    async def request(
        self,
        session_id: str,
        tool_call: events.ToolCallUpdate,
        options: list[events.PermissionOption],
    ) -> str | None:
        """The chosen ``optionId``, or None (cancelled)."""
        session = self._registry.find(session_id)
        if session is None or session.active is None or session.active.cancelled:
            return None
        target = ToolTarget.of(session.tool_calls.apply(tool_call))
        tool = tool_call.title or target.kind
        policy, problem = self._policy()
        if problem:
            self._registry.note(session, "warning", problem)
        decision = policy.decide(target)
        if decision.action == "ask" and target in session.allowed:
            decision = Decision("allow", "allowed for this session")
        if decision.action != "ask":
            kind = "allow_once" if decision.action == "allow" else "reject_once"
            chosen = _option(options, kind) or _option(options, kind.replace("once", "always"))
            verb = "Allowed" if decision.action == "allow" else "Refused"
            self._registry.note(
                session,
                "info",
                f"{verb} without asking ({decision.reason}): {tool} {target.describe()}",
            )
            self.audit.record(
                session_id, tool, target.describe(), chosen or "cancelled", decision.reason
            )
            return chosen
        request_id = uuid.uuid4().hex[:12]
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        offered = [*options, ALLOW_FOR_SESSION] if _option(options, "allow_once") else options
        self._pending[request_id] = _Pending(session_id, offered, answer)
        self._registry.record(session, events.PermissionRequested(request_id, tool_call, offered))
        try:
            answered = await answer
        finally:
            del self._pending[request_id]
        chosen = answered
        if answered == ALLOW_FOR_SESSION.option_id:
            session.allowed.add(target)
            chosen = _option(options, "allow_once")
        self.audit.record(session_id, tool, target.describe(), chosen or "cancelled", "user")
        label = next((o.label for o in offered if o.option_id == answered), None)
        self._registry.record(
            session,
            events.PermissionResolved(
                request_id, "selected" if chosen else "cancelled", option_id=chosen, label=label
            ),
        )
        return chosen

    # --- the editor's side -------------------------------------------------------------
    def is_pending(self, request_id: str) -> bool:
        pending = self._pending.get(request_id)
        return pending is not None and not pending.answer.done()

    def pending_requests(self, session_id: str | None = None) -> list[str]:
        """Ids of the requests still waiting, oldest first."""
        return [
            request_id
            for request_id, pending in self._pending.items()
            if not pending.answer.done() and session_id in (None, pending.session_id)
        ]

    def offered(self, request_id: str) -> list[events.PermissionOption]:
        """The choices of a waiting request (the agent's, plus goose-ls's own)."""
        pending = self._pending.get(request_id)
        return list(pending.options) if pending else []

    def option_for_kind(self, request_id: str, kind: str) -> str | None:
        """The optionId of the offered option of ``kind`` (``allow_once``...), if any."""
        for option in self.offered(request_id):
            if kind in (option.kind, option.option_id):
                return option.option_id
        return None

    def answer(self, request_id: str, option_id: str | None) -> None:
        """Answer a waiting request; ``None`` means cancelled."""
        pending = self._pending.get(request_id)
        if pending is None or pending.answer.done():
            raise KeyError(request_id)
        if option_id is not None and option_id not in {o.option_id for o in pending.options}:
            offered = ", ".join(o.option_id for o in pending.options)
            raise ValueError(f"{option_id!r} was not offered (offered: {offered})")
        pending.answer.set_result(option_id)

    def cancel(self, session_id: str | None = None) -> None:
        """Answer ``cancelled`` to the waiting requests of a session (of all, with None)."""
        for pending in self._pending.values():
            if session_id in (None, pending.session_id) and not pending.answer.done():
                pending.answer.set_result(None)
