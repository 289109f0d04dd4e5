"""Scoring a finished deal: each player's penalty points are the cards left in his hand."""

from __future__ import annotations

from collections.abc import Sequence

from .rules import MayIRules
from .state import DealState


def hand_value(rules: MayIRules, faces: Sequence[int]) -> int:
    """Ace 15, ten to king 10, two to nine their face value (by default)."""
    return sum(rules.card_value(f) for f in faces)


def deal_scores(state: DealState) -> list[int]:
    """Every seat's penalty points for the deal (any state can be scored, e.g. to show progress);
    the player who went out holds no cards and scores 0."""
    return [hand_value(state.rules, state.hand_faces(seat)) for seat in range(state.players)]
