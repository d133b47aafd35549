"""How much an agent may put before the user at once: every cap on prompts, in one place.

The agent chooses how many options a permission request offers, how many fields and
choices a question has, how long its text is and how many of them wait at once. A hostile
one could offer a hundred thousand buttons, send megabytes as a popup's message or open
dozens of popups. Each cap below sits far above what agents send (goose offers four
permission options, Claude Code three, codex two or three; an MCP question is a
sentence with a few fields), so a normal agent never meets one. Past a cap the request
is refused: the agent gets a JSON-RPC error naming the cap (a permission request is
never allowed by it), and the user one short note in the chat.
"""

from __future__ import annotations

MAX_PERMISSION_OPTIONS = 20
"""Options one permission request may offer. Agents offer two to four; more is no choice
a person can make, and each option is a button, a card line and a picker entry."""

MAX_FORM_FIELDS = 20
"""Properties one question's form may have: a form is filled in by hand, on a card or in
a plugin's dialog; MCP's forms are flat and small."""

MAX_CHOICES = 50
"""Choices (``enum``, ``oneOf``, ``anyOf``) one field of a question may offer: a popup
shows each as a button."""

MAX_FORM_CHARS = 20_000
"""Characters of a question's whole schema, as JSON: titles, descriptions and choices
together. The form goes into the card, the journal and every plugin's notification."""

MAX_MESSAGE_CHARS = 2_000
"""Characters of a question's message. It is shown in a popup and on the card; a
question is a sentence or two."""

MAX_PENDING = 16
"""Prompts (permission requests and questions together) that may wait for the user at
once in one session. An agent that runs tools in parallel asks a few at a time."""

MAX_SHOWN_CHARS = 2_000
"""Characters of any message goose-ls shows in ``window/showMessage`` or a popup; a
longer one is cut, ending with an ellipsis (its whole is on the card or in the log)."""

MAX_BUTTON_CHARS = 200
"""Characters of a popup button's title."""

ELLIPSIS = "…"


def cut(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """``text`` if it has at most ``limit`` characters, else its start and an ellipsis
    (``limit`` characters in all)."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + ELLIPSIS
