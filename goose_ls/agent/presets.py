"""The agents goose-ls knows by name, and what each needs.

``agent.preset`` picks one; ``agent.command`` (when set) replaces its command line.
Only goose has a minimum version; each preset has an install hint for doctor.

A running agent is recognised by the name it gives in ``initialize`` (whatever command
started it): that says which mode of its own asks before it changes anything, and
whether it reads files through goose-ls (so sees unsaved buffers) or the disk itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from goose_ls.agent.claude_settings import chosen_mode

MINIMUM_GOOSE_VERSION = (1, 16, 0)
MINIMUM_SERVE_VERSION = (1, 30, 0)
"""The first goose whose ``goose serve`` speaks ACP over a WebSocket (``agent.share``)."""

OwnChoice = Callable[[str, Mapping[str, str]], "str | None"]
"""The mode the user chose in the agent's own settings, for a session in ``cwd`` with the
agent's environment; None when they chose none."""


@attrs.frozen
class Preset:
    name: str
    command: tuple[str, ...]
    install: str
    minimum_version: tuple[int, int, int] | None = None
    agent_name: str | None = None
    """``agentInfo.name`` of its agent's ``initialize`` answer."""
    asking_mode: str | None = None
    """The agent's mode that asks before edits and commands, which new sessions start in
    (``agent.mode``); None: the agent's own default is left alone."""
    own_choice: OwnChoice | None = None
    forgets_mode: bool = False
    """The agent takes a chat back (``session/resume``, ``session/load``) in its own
    default mode, not the one the chat was in."""
    reads_buffers: bool = False
    """The agent reads files with ``fs/read_text_file`` when goose-ls offers it."""


PRESETS = {
    "goose": Preset(
        "goose",
        ("goose", "acp"),
        "Install goose 1.16.0 or newer (its installer puts it in ~/.local/bin), "
        "then run `goose configure`.",
        MINIMUM_GOOSE_VERSION,
        agent_name="goose",
        reads_buffers=True,
    ),
    "claude": Preset(
        "claude",
        ("claude-agent-acp",),
        "Install it with `npm install -g @agentclientprotocol/claude-agent-acp`, then sign in "
        "with `claude /login` or set ANTHROPIC_API_KEY.",
        agent_name="@agentclientprotocol/claude-agent-acp",
        asking_mode="default",
        own_choice=chosen_mode,
    ),
    "codex": Preset(
        "codex",
        ("codex-acp",),
        "Install it with `npm install -g @zed-industries/codex-acp`, then sign in with `codex login`.",
        agent_name="codex-acp",
        asking_mode="read-only",
        forgets_mode=True,
    ),
    "gemini": Preset(
        "gemini",
        ("gemini", "--experimental-acp"),
        "Install it with `npm install -g @google/gemini-cli`, then run `gemini` once to sign in.",
    ),
}


def of_agent(agent_name: str) -> Preset | None:
    """The preset whose agent calls itself ``agent_name`` in ``initialize``."""
    return next((p for p in PRESETS.values() if p.agent_name == agent_name), None)
