"""The agents goose-ls knows by name, and what each needs.

``agent.preset`` picks one; ``agent.command`` (when set) replaces its command line.
Only goose has a minimum version; each preset has an install hint for doctor.
"""

from __future__ import annotations

import attrs

MINIMUM_GOOSE_VERSION = (1, 16, 0)
MINIMUM_SERVE_VERSION = (1, 30, 0)
"""The first goose whose ``goose serve`` speaks ACP over a WebSocket (``agent.share``)."""


@attrs.frozen
class Preset:
    name: str
    command: tuple[str, ...]
    install: str
    minimum_version: tuple[int, int, int] | None = None


PRESETS = {
    "goose": Preset(
        "goose",
        ("goose", "acp"),
        "Install goose 1.16.0 or newer (its installer puts it in ~/.local/bin), "
        "then run `goose configure`.",
        MINIMUM_GOOSE_VERSION,
    ),
    "claude": Preset(
        "claude",
        ("claude-agent-acp",),
        "Install it with `npm install -g @agentclientprotocol/claude-agent-acp`, then sign in "
        "with `claude /login` or set ANTHROPIC_API_KEY.",
    ),
    "codex": Preset(
        "codex",
        ("codex-acp",),
        "Install it with `npm install -g @zed-industries/codex-acp`, then sign in with `codex login`.",
    ),
    "gemini": Preset(
        "gemini",
        ("gemini", "--experimental-acp"),
        "Install it with `npm install -g @google/gemini-cli`, then run `gemini` once to sign in.",
    ),
}
