"""A session's mode: switched when the user asks, chosen for a new chat, kept across
an agent restart.

A switch goes through the agent's config option of category ``mode`` when it has one
(ACP prefers it), else through ``session/set_mode``. A new chat starts in ``agent.mode``:
empty means the agent's mode that asks before edits and commands (Claude's ``default``,
codex's ``read-only``: see :mod:`goose_ls.agent.presets`), unless the user chose a mode
in the agent's own settings; ``agent`` leaves the agent's own default. A mode the agent
does not offer is said once, and the chat goes on in the agent's.

An agent restarted under an open chat may take it back in another mode than it had
(codex always comes back in its own default): the chat is put back in its mode, or the
user is told which it is in now. A chat opened again is left in the mode the agent
brings it back in, unless the agent is one that forgets it (codex): then it starts
again as a new chat does.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from goose_ls import events
from goose_ls.agent import presets
from goose_ls.agent.interface import SessionOptions
from goose_ls.errors import AgentError
from goose_ls.sessions.registry import Registry
from goose_ls.sessions.session import Session
from goose_ls.settings import AgentSettings

if TYPE_CHECKING:
    from goose_ls.agent.acp.connection import AgentConnection

log = logging.getLogger(__name__)

AGENT_DEFAULT = "agent"
"""``agent.mode`` for: leave the mode the agent starts in."""


class Modes:
    def __init__(self, registry: Registry, settings: Callable[[], AgentSettings]) -> None:
        self._registry = registry
        self._settings = settings
        self._told: set[tuple[str, str]] = set()
        """(agent, mode) pairs already said to be missing: said once, then only logged."""

    async def switch(self, session: Session, conn: AgentConnection, mode_id: str) -> None:
        """Switch mode: through the ``mode`` config option when there is one (preferred)."""
        option = mode_option(session.options)
        if option is not None:
            await self.set_option(session, conn, str(option["id"]), mode_id)
        else:
            await conn.set_mode(session.session_id, mode_id)

    async def set_option(
        self, session: Session, conn: AgentConnection, config_id: str, value: str | bool
    ) -> None:
        options = await conn.set_config_option(session.session_id, config_id, value)
        if options != session.options.config_options:  # the agent did not send the update
            self._registry.record(session, events.ConfigOptions(config_options=options))

    async def start(self, session: Session, conn: AgentConnection) -> None:
        """Put a new chat in the mode it starts in. A failure is told in the chat, not
        raised: the chat itself was made."""
        agent = conn.profile.name
        wanted = await self._wanted(agent, session.cwd)
        now = current(session.options)
        if wanted is None or wanted == now:
            return
        if wanted not in offered(session.options):
            self._not_offered(session, agent, wanted, now)
            return
        try:
            await self.switch(session, conn, wanted)
        except AgentError as exc:
            log.warning("%s could not start %s in %s: %s", agent, session.session_id, wanted, exc)
            self._registry.note(
                session,
                "warning",
                f"This chat could not start in the mode {wanted} ({exc}); it is in the "
                f"agent's mode {now}.",
            )
            return
        log.info("%s started in mode %s (the agent's was %s)", session.session_id, wanted, now)

    async def reopened(self, session: Session, conn: AgentConnection) -> None:
        """A chat opened again: an agent that forgets its mode gets it as a new chat."""
        preset = presets.of_agent(conn.profile.name)
        if preset is not None and preset.forgets_mode:
            await self.start(session, conn)

    async def taken_back(
        self, session: Session, conn: AgentConnection, options: SessionOptions
    ) -> None:
        """A restarted agent took the chat back with ``options``: put it back in the mode
        it had; else show the one it is in now."""
        was, now = current(session.options), current(options)
        if was is None or now is None or now == was:
            return
        session.options = options
        why = f"{conn.profile.name} does not offer it any more"
        if was in offered(options):
            try:
                await self.switch(session, conn, was)
                log.info("%s back in mode %s after the restart", session.session_id, was)
                return
            except AgentError as exc:
                why = str(exc)
        if options.config_options is not None:
            self._registry.record(
                session, events.ConfigOptions(config_options=options.config_options)
            )
        elif options.modes is not None:
            self._registry.record(session, events.CurrentMode(current_mode_id=now))
        self._registry.note(
            session,
            "warning",
            f"The restarted agent took this chat back in its mode {now}, not {was}, and it "
            f"could not be switched back ({why}).",
        )

    async def _wanted(self, agent: str, cwd: str) -> str | None:
        """The mode a new chat of ``agent`` in ``cwd`` starts in; None: the agent's."""
        settings = self._settings()
        chosen = settings.mode.strip()
        if chosen:
            return None if chosen == AGENT_DEFAULT else chosen
        preset = presets.of_agent(agent)
        if preset is None or preset.asking_mode is None:
            return None
        if preset.own_choice is not None:
            environ = {**os.environ, **settings.env}
            own = await asyncio.to_thread(preset.own_choice, cwd, environ)
            if own is not None:
                log.info("%s starts in %s, the mode chosen in its own settings", agent, own)
                return None
        return preset.asking_mode

    def _not_offered(self, session: Session, agent: str, wanted: str, now: str | None) -> None:
        log.warning("%s offers no mode %r; %s stays in %s", agent, wanted, session.session_id, now)
        if (agent, wanted) in self._told:
            return
        self._told.add((agent, wanted))
        modes = ", ".join(offered(session.options))
        why = "agent.mode" if self._settings().mode.strip() else "its mode that asks"
        self._registry.note(
            session,
            "warning",
            f"{agent} offers no mode {wanted} ({why}), so new chats start in its own "
            f"mode {now}. Its modes: {modes}."
            if modes
            else f"{agent} has no modes, so new chats cannot start in {wanted} ({why}).",
        )


def mode_option(options: SessionOptions) -> dict[str, Any] | None:
    """The config option of category ``mode``, if the agent has one."""
    return next((o for o in options.config_options or [] if o.get("category") == "mode"), None)


def current(options: SessionOptions) -> str | None:
    """The mode the session is in, as the agent last said."""
    option = mode_option(options)
    if option is not None:
        value = option.get("currentValue")
        return value if isinstance(value, str) else None
    value = (options.modes or {}).get("currentModeId")
    return value if isinstance(value, str) else None


def offered(options: SessionOptions) -> list[str]:
    """The modes the session can switch to: the mode option's values, else its modes."""
    option = mode_option(options)
    if option is not None:
        values = []
        for entry in option.get("options", []):
            group = entry.get("options") if isinstance(entry, dict) else None
            for value in group if isinstance(group, list) else [entry]:
                if isinstance(value, dict) and isinstance(value.get("value"), str):
                    values.append(value["value"])
        return values
    modes = (options.modes or {}).get("availableModes") or []
    return [m["id"] for m in modes if isinstance(m, dict) and isinstance(m.get("id"), str)]
