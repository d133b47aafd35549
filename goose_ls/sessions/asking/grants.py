"""What the user allowed and refused on a turn's permission cards, kept for that turn.

Held by :class:`~goose_ls.sessions.asking.permissions.Permissions` (its one writer, with the
agent's file tools telling it what goose-ls wrote), keyed by the turn and gone with it:

- a shell line allowed on the agent's card lets one ``terminal/create`` of that line run
  without asking again;
- a protected file allowed lets one write of it run without asking again;
- files allowed (by the user or a rule) or written by goose-ls after its checks are no
  planted paths;
- files and shell lines refused (or left unanswered) may not be written or run anyway.
"""

from __future__ import annotations

import weakref

import attrs

from goose_ls.sessions.session import Turn


@attrs.define
class TurnGrants:
    commands: list[str] = attrs.Factory(list)
    """Shell lines allowed on a card, each good for one terminal."""
    paths: list[str] = attrs.Factory(list)
    """Protected files (resolved) allowed on a card, each good for one write."""
    approved: set[str] = attrs.Factory(set)
    """Files (resolved) allowed, or written by goose-ls after its checks."""
    refused: set[str] = attrs.Factory(set)
    """Files (resolved) and shell lines refused on a card."""


class Grants:
    """Each turn's grants, for as long as the turn is about."""

    def __init__(self) -> None:
        self._of: weakref.WeakKeyDictionary[Turn, TurnGrants] = weakref.WeakKeyDictionary()

    def of(self, turn: Turn) -> TurnGrants:
        grants = self._of.get(turn)
        if grants is None:
            grants = self._of[turn] = TurnGrants()
        return grants

    def approved(self, turn: Turn) -> frozenset[str]:
        """What the turn may have created without its being planted."""
        grants = self._of.get(turn)
        return frozenset(grants.approved) if grants is not None else frozenset()

    def refused(self, turn: Turn, what: str) -> bool:
        grants = self._of.get(turn)
        return grants is not None and what in grants.refused
