"""How full a chat's context is, in words every editor UI shows alike.

The agent tells it with ``usage_update`` (tokens in the context, the window's size, the
cost so far); the transcript, the turn's progress and the warning all word it here.
"""

from __future__ import annotations

from goose_ls import events

WARN_AT = 0.8
"""The share of its context past which a chat is worth a warning (once)."""


def cost_text(cost: events.Json | None) -> str | None:
    """``$0.42`` for dollars, ``0.42 EUR`` for another currency; None without an amount."""
    amount = (cost or {}).get("amount")
    if not isinstance(amount, (int, float)) or isinstance(amount, bool):
        return None
    number = f"{amount:,.2f}" if amount == 0 or abs(amount) >= 0.01 else f"{amount:.2g}"
    currency = str((cost or {}).get("currency") or "")
    if currency.upper() == "USD":
        return f"${number}"
    return f"{number} {currency}".rstrip()


def context_line(usage: events.Usage) -> str:
    """``context 12,345 / 200,000 · $0.42`` (the cost when the agent gave one)."""
    line = f"context {usage.used:,} / {usage.size:,}"
    cost = cost_text(usage.cost)
    return f"{line} · {cost}" if cost else line


def share(usage: events.Usage) -> float:
    """How much of its context the chat uses (0 when the agent gave no size)."""
    return usage.used / usage.size if usage.size > 0 else 0.0


def nearly_full(usage: events.Usage) -> bool:
    return share(usage) >= WARN_AT


def full_warning(usage: events.Usage) -> str:
    """What the user reads when a chat passes :data:`WARN_AT` of its context."""
    return (
        f"goose: this chat has used {round(share(usage) * 100)} % of its context "
        f"({usage.used:,} / {usage.size:,} tokens); start a new chat (Goose: New chat "
        "from selection, or your plugin's new chat) to go on with room to spare."
    )


def turn_tokens(used: events.Json) -> str:
    """``this turn: 1,234 tokens in · 567 out`` (ACP's unstable per-turn ``usage``)."""
    words = [f"{used.get('inputTokens', 0):,} tokens in", f"{used.get('outputTokens', 0):,} out"]
    if used.get("thoughtTokens"):
        words.append(f"{used['thoughtTokens']:,} thinking")
    return "this turn: " + " · ".join(words)
