"""A chat's system prompt: the user's ``agent.systemPrompt`` and, when the user turned
it on, the project's instruction file (``agent.projectInstructionsFile``); and what each
chat is told of it, once.

Both settings are the user's alone (a folder's value is screened out:
:mod:`goose_ls.provenance`). The file is the repository's text, so it is read only when
the user asks for it, and only for an agent that takes a system prompt, as the agent's
own reads are (inside the workspace, no link out of it, no secret, UTF-8) and at most
:data:`INSTRUCTIONS_LIMIT` bytes. It is sent again, read again, with every set-up request
(new, fork, load, resume), as ACP asks.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import attrs

from goose_ls import events
from goose_ls.agent.interface import SystemPrompt
from goose_ls.sessions.registry import Registry
from goose_ls.sessions.session import Session
from goose_ls.settings import AgentSettings
from goose_ls.workspace.agent_files import FileProblem
from goose_ls.workspace.confinement import BadPath, Denied

if TYPE_CHECKING:
    from goose_ls.agent.acp.connection import AgentConnection

INSTRUCTIONS_LIMIT = 64 * 1024
"""The largest project instruction file sent (bytes); a bigger one is not sent at all."""


@attrs.frozen
class Prepared:
    """What goes with a chat's set-up request, and what the chat is told of it."""

    prompt: SystemPrompt | None = None
    told: events.Note | None = None


NOTHING = Prepared()


class SystemPrompts:
    """Each chat's system prompt, made from the settings at the time it is set up."""

    def __init__(
        self,
        settings: Callable[[], AgentSettings],
        read: Callable[[str, int], Awaitable[bytes]],
        registry: Registry,
    ) -> None:
        """``read`` reads a project file confined (:meth:`AgentTools.read_for_user`)."""
        self._settings = settings
        self._read = read
        self._registry = registry
        self._told: set[str] = set()
        """The chats told of their system prompt in this run."""

    async def prepare(self, conn: AgentConnection, cwd: str) -> Prepared:
        """The system prompt for a chat that runs in ``cwd``, for the agent of ``conn``:
        nothing when the user set none, or the agent does not take it (then the chat is
        told why)."""
        settings = self._settings()
        own = settings.system_prompt if settings.system_prompt.strip() else ""
        named = _named(own, settings)
        if not named:
            return NOTHING
        agent = conn.profile.title
        modes = conn.profile.system_prompt_modes
        if not modes:
            return Prepared(
                told=events.Note(
                    "warning",
                    f"{agent} takes no system prompt (it does not advertise "
                    f"sessionCapabilities.systemPrompt): {named} not sent.",
                )
            )
        if settings.system_prompt_mode not in modes:
            return Prepared(
                told=events.Note(
                    "warning",
                    f"{agent} takes a system prompt added to its own instructions, not one "
                    f"in their place (agent.systemPromptMode is override): {named} not sent.",
                )
            )
        texts = [own] if own else []
        sent = [f"your agent.systemPrompt ({len(own)} characters)"] if own else []
        problem = ""
        if settings.project_instructions:
            name = settings.project_instructions_file
            try:
                text = _text(await self._read(os.path.join(cwd, name), INSTRUCTIONS_LIMIT))
            except FileProblem as exc:
                why = f"it is over {INSTRUCTIONS_LIMIT} bytes" if exc.too_big else str(exc)
                problem = f"{name} was not sent: {why}"
            except (Denied, BadPath) as exc:
                problem = f"{name} was not sent: {exc}"
            else:
                if text.strip():
                    texts.append(f"The project's instructions, from {name}:\n\n{text}")
                    sent.append(f"{name} ({len(text.encode('utf-8'))} bytes)")
                else:
                    problem = f"{name} was not sent: it is empty"
        where = "in place of" if settings.system_prompt_mode == "override" else "after"
        told = f"System prompt sent to {agent}, {where} its own instructions: " + " and ".join(sent)
        if not sent:
            return Prepared(told=events.Note("warning", f"{problem}; no system prompt sent."))
        if problem:
            return Prepared(
                SystemPrompt(settings.system_prompt_mode, tuple(texts)),
                events.Note("warning", f"{told}. {problem}."),
            )
        return Prepared(
            SystemPrompt(settings.system_prompt_mode, tuple(texts)),
            events.Note("info", f"{told}."),
        )

    def tell(self, session: Session, prepared: Prepared) -> None:
        """Say in the chat, once, what its system prompt was made of, or why none went."""
        if prepared.told is None or session.session_id in self._told:
            return
        self._told.add(session.session_id)
        self._registry.record(session, prepared.told)


def _named(own: str, settings: AgentSettings) -> str:
    """What the user asked to send, in words; empty when nothing."""
    parts = ["your agent.systemPrompt"] if own else []
    if settings.project_instructions:
        parts.append(f"the project's {settings.project_instructions_file}")
    return " and ".join(parts)


def _text(data: bytes) -> str:
    """A project file's bytes as the text sent: UTF-8, no NUL (that is no instruction)."""
    if b"\0" in data:
        raise FileProblem("it is a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileProblem("it is not UTF-8 text") from None
