"""The agent asks before it acts: the policy decides what it can, the user the rest.

One set of rules for every request: an agent that acts in its own process (Claude Code,
codex) is judged by what its request names (:mod:`goose_ls.workspace.targets`) as an
agent's ``fs/*`` and ``terminal/*`` requests are. A secret, or a path outside the roots
with ``workspace.outside: deny``, is refused without asking; a path outside with ``ask``
and a protected path are asked, the card saying why, with no choice that would let the
agent stop asking. A request whose target goose-ls cannot see is asked, never allowed
by a rule (the user's "for this session" then covers only the very same call).

A request the policy settles is answered at once, with a note saying so. Any other is
recorded as a ``permission_request`` event and waits for the editor's answer; goose-ls
adds its own "Allow for this session" choice when the agent offers an "allow once". Every
decision is audited. Requests fail closed: a cancelled turn, a stopped agent or an
unknown session answers ``cancelled``, never "allow"; a rule's "allow" is recorded
before it is used, and asked instead when the audit log cannot be written.

goose-ls's own choices are kept apart from the agent's: a request holds the two
separately, and the id the editor sees for goose-ls's choice is picked so that no agent
option has it. An agent cannot offer an option that the user takes for goose-ls's.
"""

from __future__ import annotations

import asyncio
import unicodedata
from collections.abc import Callable
from typing import NoReturn, Protocol

import attrs

from goose_ls import events
from goose_ls.prompt_limits import MAX_PERMISSION_OPTIONS, cut
from goose_ls.sessions.asking.grants import Grants
from goose_ls.sessions.asking.waiting import Asking, WaitingLimit, over_cap
from goose_ls.sessions.registry import Registry
from goose_ls.sessions.session import Session
from goose_ls.workspace.audit import AuditLog
from goose_ls.workspace.confinement import Confinement, Verdict
from goose_ls.workspace.policy import Decision, Policy, ToolTarget
from goose_ls.workspace.protected import protected_class

ALLOW_FOR_SESSION = events.PermissionOption(
    option_id="goose-ls:allow_session",
    name="Allow for this session",
    kind="allow_always",
    label="Allow for this session",
)
"""goose-ls's own choice: allow once now, and the same call again without asking. Its
id is the one the editor sees unless an agent option has it (then one that none has)."""

COMMAND_OPTIONS = [
    events.PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    events.PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
]
"""The choices when goose-ls itself asks (a terminal the agent did not ask about)."""
ALLOWING = ("allow_once", "allow_always")

PolicySource = Callable[[], "tuple[Policy, str | None]"]
"""The policy in force now, and a problem with the project's policy file, if any."""
ConfinementSource = Callable[[], "tuple[Confinement, str]"]
"""The roots and secrets in force now, and ``workspace.outside`` ("deny" or "ask")."""


def _option(options: list[events.PermissionOption], kind: str) -> str | None:
    return next((o.option_id for o in options if o.kind == kind), None)


def _find(options: list[events.PermissionOption], option_id: str) -> events.PermissionOption:
    return next(o for o in options if o.option_id == option_id)


def _warning(path: str | None) -> str | None:
    """What the card must say before the user allows a protected path."""
    if path is None:
        return None
    return (
        f"{path} is a protected path ({protected_class(path) or 'your protected paths'}): "
        "it makes your tools run code or decide later (git, editor, agent or build "
        "settings). Check what the agent writes before you allow it."
    )


def _outside_warning(outside: tuple[str, ...]) -> str | None:
    if not outside:
        return None
    return (
        f"{', '.join(outside)} is outside the workspace and its extra roots "
        "(workspace.outside is ask): allow it only if you meant the agent to go there."
    )


def _foreign_warning(foreign: tuple[str, ...]) -> str | None:
    """What the card must say of paths that are the agent's files, not the user's."""
    if not foreign:
        return None
    named = ", ".join(foreign)
    return (
        f"{named} lies in no folder agent.pathMap maps: it names a file on the agent's "
        "side, not yours, even if a file of yours has that name. No rule of yours can "
        "judge it; goose-ls shows no diff."
    )


def _unambiguous(options: list[events.PermissionOption]) -> list[events.PermissionOption]:
    """The agent's options whose id no option of another kind has: an id it calls both an
    allow and a reject lets it read either answer as it likes, so neither is used."""
    kinds: dict[str, set[str]] = {}
    for option in options:
        kinds.setdefault(option.option_id, set()).add(option.kind)
    return [option for option in options if len(kinds[option.option_id]) == 1]


def _reading(label: str) -> str:
    """A label as a person reads it: compatibility forms and case alike (``é`` written
    as one character or two, ``ﬁ``), any run of spaces one space."""
    return " ".join(unicodedata.normalize("NFKC", label).casefold().split())


def _offerable(options: list[events.PermissionOption]) -> list[events.PermissionOption]:
    """The agent's options the user may be offered: those of a kind goose-ls knows (what
    choosing one does is its kind, whatever it is called), each reading differently."""
    offered: dict[str, events.PermissionOption] = {}
    for option in options:
        if option.kind in events.KIND_LABELS:
            offered.setdefault(_reading(option.label), option)
    return list(offered.values())


ACTION_CHARS = 400
"""The most of an unclear call's own data a prompt repeats."""


def action_of(target: ToolTarget) -> str:
    """What allowing the call lets happen, from its own data (never its title alone)."""
    if target.unseen is None:
        return target.describe()
    said = target.said or ""
    if len(said) > ACTION_CHARS:
        said = said[:ACTION_CHARS] + "…"
    return f"goose-ls cannot tell what this does ({target.unseen}); the request says: {said}"


def _own_option(agent_options: list[events.PermissionOption]) -> events.PermissionOption:
    """goose-ls's choice, with an id no agent option has."""
    taken = {o.option_id for o in agent_options}
    option_id, n = ALLOW_FOR_SESSION.option_id, 1
    while option_id in taken:
        n += 1
        option_id = f"{ALLOW_FOR_SESSION.option_id}-{n}"
    return attrs.evolve(ALLOW_FOR_SESSION, option_id=option_id)


class PermissionAnswers(Protocol):
    """What the LSP layer does with the permission requests: show them and answer them."""

    def is_pending(self, request_id: str) -> bool: ...

    def pending_requests(self, session_id: str | None = None) -> list[str]: ...

    def session_of(self, request_id: str) -> str | None: ...

    def offered(self, request_id: str) -> list[events.PermissionOption]: ...

    def action_of(self, request_id: str) -> str: ...

    def option_for(self, request_id: str, choice: str, by_kind: bool) -> str | None: ...

    def answer(self, request_id: str, option_id: str | None) -> None: ...

    def replaced(self, session_id: str) -> bool: ...


@attrs.frozen
class _Offer:
    agent: list[events.PermissionOption]
    own: events.PermissionOption | None
    """goose-ls's own choice, as the editor sees it (never one of ``agent``'s ids)."""
    action: str = ""
    """What allowing lets happen (:func:`action_of`)."""

    @property
    def options(self) -> list[events.PermissionOption]:
        return [*self.agent, self.own] if self.own else list(self.agent)


@attrs.frozen
class Chosen:
    """The user's answer to a card: an option id, and whether it is goose-ls's own
    choice (then the id is the one the editor saw, never one of the agent's)."""

    option_id: str
    own: bool = False


@attrs.frozen
class _Request:
    """One permission request, as goose-ls judges it."""

    session: Session
    tool_call: events.ToolCallUpdate
    options: list[events.PermissionOption]
    """The agent's options (no id it gives two kinds)."""
    own: bool
    """goose-ls asks itself (a terminal the agent did not ask about): it grants nothing."""
    foreign: tuple[str, ...]
    """Paths that name the agent's files, not the user's: no rule allows them."""
    target: ToolTarget
    tool: str
    policy: Policy
    verdict: Verdict
    protected: str | None
    decision: Decision
    subagent: str | None = None
    """The session's child that asks (its card, notes and answer shown in its block)."""

    @property
    def audited(self) -> tuple[str, str, str]:
        return self.session.session_id, self.tool, action_of(self.target)


class Permissions:
    def __init__(
        self,
        registry: Registry,
        policy: PolicySource,
        audit: AuditLog,
        confinement: ConfinementSource,
        waiting: WaitingLimit | None = None,
    ) -> None:
        """``waiting`` counts the prompts of a session, the questions' too."""
        self._registry = registry
        self._policy = policy
        self._confinement = confinement
        self.audit = audit
        self.grants = Grants()
        """What the user allowed and refused on each turn's cards (written here only)."""
        self._asking: Asking[_Offer, Chosen | None] = Asking(waiting)
        self._withdrawn: set[str] = set()
        """Sessions whose agent withdrew a request since the user last answered one: an
        answer naming no request may be meant for the card that went away."""

    async def request(
        self,
        session_id: str,
        tool_call: events.ToolCallUpdate,
        options: list[events.PermissionOption],
        own: bool = False,
        foreign: tuple[str, ...] = (),
        subagent: str | None = None,
    ) -> str | None:
        """The chosen ``optionId``, or None (cancelled). ``subagent``: the child session
        of ``session_id`` that asks (judged as the session's own requests are, by the
        same rules, its grants the session's; its card and notes shown in its block).
        A shell line the user allows in
        the agent's call may then run once in a terminal without asking again; goose-ls's
        ``own`` calls grant nothing and join the session's tool calls only when asked.
        A call naming ``foreign`` paths (the agent's files, spelt perhaps as local ones)
        is never allowed by a rule, nor for the session, and grants no path.

        Past a cap of :mod:`goose_ls.prompt_limits` (too many options, too many prompts
        waiting) it raises :class:`ClientRefusal`: the agent gets an error, never an
        allow, and the user a note."""
        session = self._registry.find(session_id)
        if session is None or session.active is None or session.active.cancelled:
            return None
        if len(options) > MAX_PERMISSION_OPTIONS:
            self._over_cap(
                session,
                tool_call,
                "options",
                f"a permission request offered {len(options)} options (goose-ls's cap on "
                f"options, {MAX_PERMISSION_OPTIONS})",
            )
        request = await self._judge(
            session, tool_call, _unambiguous(options), own, foreign, subagent
        )
        if request.decision.action != "ask":
            settled, chosen = self._settle(request)
            if settled:
                return chosen
        if own:
            session.tool_calls.apply(tool_call)
        offer = self._offer(request)
        if offer is None:
            return None
        request_id, answer = await self._ask(request, offer)
        chosen = self._chosen(request, answer)
        self._grant(request, chosen)
        self._resolve(request, request_id, offer, answer, chosen)
        return chosen

    async def _judge(
        self,
        session: Session,
        tool_call: events.ToolCallUpdate,
        options: list[events.PermissionOption],
        own: bool,
        foreign: tuple[str, ...],
        subagent: str | None = None,
    ) -> _Request:
        """What the call names, and what the confinement and the policy say of it."""
        merged = tool_call if own else session.tool_calls.apply(tool_call)
        target = ToolTarget.of(merged, None if own else session.cwd)
        policy, problem = self._policy()
        if problem:
            self._registry.note(session, "warning", problem, subagent)
        # goose-ls's own calls name paths it has confined already
        verdict = Verdict() if own else await self._confined(target, foreign)
        # a path no file can have (a NUL byte) is refused before it is resolved
        protected = None if verdict.refused is not None else policy.protected_path(target)
        if verdict.refused is not None:
            decision = Decision("deny", "confinement")
        else:
            decision = self._decide(session, policy, target, foreign, protected, subagent)
        tool = tool_call.title or target.kind
        return _Request(
            session, tool_call, options, own, foreign, target, tool, policy, verdict,
            protected, decision, subagent,
        )  # fmt: skip

    def _settle(self, request: _Request) -> tuple[bool, str | None]:
        """Answer a call the confinement or a rule decides, audited first: whether it is
        settled so (not when the audit log cannot be written for an allow: then the user
        is asked), and the option chosen."""
        session, decision, target = request.session, request.decision, request.target
        kind = "allow_once" if decision.action == "allow" else "reject_once"
        options = request.options
        chosen = _option(options, kind) or _option(options, kind.replace("once", "always"))
        written = self.audit.record(*request.audited, chosen or "cancelled", decision.reason)
        if not (written or decision.action == "deny"):
            self._registry.note(
                session,
                "warning",
                f"Not allowed without asking ({decision.reason}): the audit log cannot be "
                "written, so you are asked instead.",
                request.subagent,
            )
            return False, None
        turn = session.active
        if decision.action == "allow" and not (request.own or request.foreign) and turn:
            # A rule allowed it: what it changes is not planted.
            approved = self.grants.of(turn).approved
            approved.update(request.policy.resolve(p) for p in target.paths)
        verb = "Allowed" if decision.action == "allow" else "Refused"
        why = request.verdict.refused or decision.reason
        if not (request.own and decision.action == "allow"):  # an allowed command shows itself
            self._registry.note(
                session,
                "warning" if request.verdict.refused else "info",
                f"{verb} without asking ({why}): {request.tool} {target.describe()}",
                request.subagent,
            )
        return True, chosen

    def _offer(self, request: _Request) -> _Offer | None:
        """The choices the card shows: the agent's that goose-ls knows, but none that would
        let the agent stop asking where goose-ls must see every such call, and goose-ls's
        own "for this session" where it grants. None (refused, told) when none is left."""
        lasting = bool(request.protected or request.verdict.outside)
        offerable = _offerable(request.options)
        agent = [o for o in offerable if not (lasting and o.kind == "allow_always")]
        if not agent:  # fail closed: nothing the user could be shown means anything
            self.audit.record(*request.audited, "cancelled", "no known choice")
            kinds = ", ".join(sorted({o.kind for o in request.options})) or "none"
            self._registry.note(
                request.session,
                "warning",
                f"Refused: the agent asked about {request.tool} with no choice goose-ls "
                f"knows ({kinds}).",
                request.subagent,
            )
            return None
        grants = not (request.foreign or request.protected)
        offers_own = _option(agent, "allow_once") and grants
        own = _own_option(agent) if offers_own else None
        return _Offer(agent, own, action_of(request.target))

    async def _ask(self, request: _Request, offer: _Offer) -> tuple[str, Chosen | None]:
        """Put the card to the user and wait for the answer (None: nobody answered); the
        card's request id with it."""
        session = request.session
        warnings = (
            _foreign_warning(request.foreign),
            _outside_warning(request.verdict.outside),
            _warning(request.protected),
        )
        warning = " ".join(w for w in warnings if w) or None
        if problem := self._asking.waiting_count.full(session.session_id):
            self._over_cap(session, request.tool_call, "pending", problem)
        with self._asking.ask(session.session_id, offer) as (request_id, asked):
            self._registry.record(
                session,
                events.PermissionRequested(
                    request_id, request.tool_call, offer.options, warning, offer.action
                ),
                subagent=request.subagent,
            )
            try:
                return request_id, await asked.answer
            except asyncio.CancelledError:  # the agent withdrew its request: the card says so
                self._withdrawn.add(session.session_id)
                self.audit.record(*request.audited, "cancelled", "agent")
                withdrawn = events.PermissionResolved(request_id, "cancelled")
                self._registry.record(session, withdrawn, subagent=request.subagent)
                raise

    def _chosen(self, request: _Request, answer: Chosen | None) -> str | None:
        """The agent's option the answer means: goose-ls's own "for this session" is the
        agent's "allow once", with the call remembered as allowed for the session."""
        if answer is None:
            return None
        if answer.own:
            request.session.allowed.add(request.target)
            return _option(request.options, "allow_once")
        return answer.option_id

    def _grant(self, request: _Request, chosen: str | None) -> None:
        """What an allow lets through later in the turn, or a refusal keeps out."""
        session = request.session
        if request.own or session.active is None:
            return
        given = self.grants.of(session.active)
        target, policy = request.target, request.policy
        if next((o.kind for o in request.options if o.option_id == chosen), None) in ALLOWING:
            if target.command:
                given.commands.append(target.command.strip())
            if not request.foreign:
                resolved = [policy.resolve(path) for path in target.paths]
                given.paths += resolved
                given.approved.update(resolved)
        else:
            given.refused.update(policy.resolve(path) for path in target.paths)
            if target.command:
                given.refused.add(target.command.strip())

    def _resolve(
        self,
        request: _Request,
        request_id: str,
        offer: _Offer,
        answer: Chosen | None,
        chosen: str | None,
    ) -> None:
        """Audit the answer and close the card, naming the choice as the user saw it."""
        # Unanswered (the turn was cancelled, the editor quit): nobody chose.
        by = "user" if answer else "nobody (not answered)"
        self.audit.record(*request.audited, chosen or "cancelled", by)
        label = None
        if answer is not None:
            shown = (
                offer.own if answer.own and offer.own else _find(offer.options, answer.option_id)
            )
            label = shown.label
        self._registry.record(
            request.session,
            events.PermissionResolved(
                request_id, "selected" if chosen else "cancelled", option_id=chosen, label=label
            ),
            subagent=request.subagent,
        )

    def _over_cap(
        self, session: Session, tool_call: events.ToolCallUpdate, cap: str, problem: str
    ) -> NoReturn:
        """Refuse a request past a cap: audited as cancelled, the agent told which cap."""
        tool = cut(tool_call.title or tool_call.tool_call_id, ACTION_CHARS)
        self.audit.record(session.session_id, tool, "", "cancelled", f"over a cap: {cap}")
        raise over_cap(self._registry, self._asking.waiting_count, session, cap, problem)

    async def authorize_command(self, session_id: str, call: events.ToolCallUpdate) -> str | None:
        """May the shell line of ``call`` run in a terminal? None if so, else why not.

        The policy first (deny wins); then a permission the user already gave for a
        tool call of this turn with the same line (used once); then the user is asked.
        """
        session = self._registry.find(session_id)
        if session is None or session.active is None or session.active.cancelled:
            return "no turn of this session is running"
        raw = call.raw_input if isinstance(call.raw_input, dict) else {}
        command = str(raw.get("command", "")).strip()
        policy, _ = self._policy()
        decision = policy.decide(ToolTarget("execute", (), command))
        granted = self.grants.of(session.active).commands
        if decision.action == "ask" and command in granted:
            granted.remove(command)
            self.audit.record(
                session_id, "terminal", command, "allow_once", "user, for its tool call"
            )
            return None
        chosen = await self.request(session_id, call, COMMAND_OPTIONS, own=True)
        if chosen == "allow_once":
            return None
        if decision.action == "deny":
            return f"refused by {decision.reason}"
        return "refused by the user" if chosen else "the request was cancelled"

    async def _confined(self, target: ToolTarget, foreign: tuple[str, ...]) -> Verdict:
        """What the confinement says of the paths an agent's call names: judged as its
        ``fs/*`` requests are, except the agent's own files (``foreign``), which goose-ls
        cannot resolve: those are judged by their names as secrets, and always asked."""
        confinement, outside = self._confinement()
        for path in foreign:
            if pattern := confinement.secret(path):
                return Verdict(refused=f"{path} looks like a secret ({pattern})")
        named = [*target.paths, *filter(None, [target.cwd])]
        local = [path for path in named if path not in foreign]
        return await asyncio.to_thread(confinement.judge, local, outside)

    def _decide(
        self,
        session: Session,
        policy: Policy,
        target: ToolTarget,
        foreign: tuple[str, ...],
        protected: str | None,
        subagent: str | None = None,
    ) -> Decision:
        decision = policy.decide(target)
        if foreign:  # a rule's paths are local ones: it may refuse, never allow
            return decision if decision.action == "deny" else Decision("ask", "foreign path")
        granted = not protected and target in session.allowed
        if decision.action == "ask" and granted:
            decision = Decision("allow", "allowed for this session")
        if decision.action == "ask" and policy.would_allow_if_trusted(target):
            self._registry.note(
                session,
                "warning",
                f"{policy.untrusted.path if policy.untrusted else 'The workspace policy'} "
                "would allow this, but it is not trusted: a workspace policy only tightens "
                'your rules until you trust it (code action "Goose: Trust this workspace '
                'policy").',
                subagent,
            )
        return decision

    # --- the editor's side -------------------------------------------------------------
    def is_pending(self, request_id: str) -> bool:
        return self._asking.waiting(request_id) is not None

    def pending_requests(self, session_id: str | None = None) -> list[str]:
        """Ids of the requests still waiting, oldest first."""
        return self._asking.pending_requests(session_id)

    def session_of(self, request_id: str) -> str | None:
        """The session whose request ``request_id`` waits (None: none waits)."""
        asked = self._asking.waiting(request_id)
        return asked.session_id if asked else None

    def offered(self, request_id: str) -> list[events.PermissionOption]:
        """The choices of a waiting request (the agent's, plus goose-ls's own)."""
        asked = self._asking.waiting(request_id)
        return asked.question.options if asked else []

    def action_of(self, request_id: str) -> str:
        """What allowing a waiting request lets happen ("" when it waits no more)."""
        asked = self._asking.waiting(request_id)
        return asked.question.action if asked else ""

    def option_for(self, request_id: str, choice: str, by_kind: bool) -> str | None:
        """The optionId of the offered option with id ``choice``, else of kind ``choice``
        (kind first with ``by_kind``): an agent cannot name an option by another's kind."""
        offered = self.offered(request_id)
        by_id = [o.option_id for o in offered if o.option_id == choice]
        of_kind = [o.option_id for o in offered if o.kind == choice]
        found = [*of_kind, *by_id] if by_kind else [*by_id, *of_kind]
        return found[0] if found else None

    def answer(self, request_id: str, option_id: str | None) -> None:
        """Answer a waiting request; ``None`` means cancelled."""
        asked = self._asking.waiting(request_id)
        if asked is None:
            raise KeyError(request_id)
        offer = asked.question
        if option_id is not None and option_id not in {o.option_id for o in offer.options}:
            offered = ", ".join(o.option_id for o in offer.options)
            raise ValueError(f"{option_id!r} was not offered (offered: {offered})")
        own = offer.own is not None and option_id == offer.own.option_id
        self._withdrawn.discard(asked.session_id)
        asked.answer.set_result(None if option_id is None else Chosen(option_id, own))

    def replaced(self, session_id: str) -> bool:
        """Whether the agent withdrew a request of ``session_id`` since the user last
        answered one; asking forgets it (the user is told once, then answers again)."""
        withdrawn = session_id in self._withdrawn
        self._withdrawn.discard(session_id)
        return withdrawn

    def cancel(self, session_id: str | None = None) -> None:
        """Answer ``cancelled`` to the waiting requests of a session (of all, with None)."""
        self._asking.answer_all(None, session_id)
