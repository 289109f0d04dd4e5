"""A May I? bot that plays for the deal's contract: the searching bot's rollout policy.

The greedy bot values a card by how it goes with the hand in general. This one weighs that by
what the contract asks: cards of one rank count for a contract of sets, neighbours in a suit for
a contract of sequences, both where it asks for both. Once its contract is down it only lays
off, buys nothing more (a bought card is a penalty card it may not get rid of), and discards its
most expensive card that cannot be laid off.

It reads the seat's hand, the contract, and whether the seat is down: nothing hidden
(``tests/test_bot_information.py``). From a remote prompt (:meth:`HeuristicMayIBot.choose`) it
knows only the hand and the legal list, and plays as if the contract asked for both.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..cards import ACE
from ..selfplay import NoLegalAction
from .actions import (
    AddToMeld,
    Allow,
    Deny,
    Discard,
    Draw,
    MayI,
    MayIAction,
    Meld,
    Pass,
    TakeDiscard,
)
from .rules import Contract, MayIRules
from .state import DealState

BUY_AT = 5  # weighted affinity a discard needs to be worth a buy (a penalty card comes with it)
TAKE_AT = 3  # weighted affinity a discard needs to be taken instead of the stock's card


@dataclass(frozen=True)
class MayIKnowledge:
    """What the bot reads: its hand, the contract's weights, whether it is down."""

    rules: MayIRules
    hand: list[int]
    rank_weight: int
    suit_weight: int
    down: bool


def _weights(contract: Contract | None) -> tuple[int, int]:
    if contract is None:
        return 2, 1
    return (3 if contract.sets else 1), (2 if contract.sequences else 0)


def knowledge_of(state: DealState, seat: int) -> MayIKnowledge:
    rank_weight, suit_weight = _weights(state.contract)
    return MayIKnowledge(
        state.rules, state.hand_faces(seat), rank_weight, suit_weight, state.down[seat]
    )


def weighted_affinity(card: int, hand: Sequence[int], k: MayIKnowledge) -> int:
    """How much ``card`` goes with ``hand`` for this contract: cards of its rank, and neighbours
    in its suit within two (the ace at both ends), each weighted by what the contract asks."""
    rank, suit = card % 13, card // 13
    same_rank = sum(1 for f in hand if f % 13 == rank and f != card)
    positions = {f % 13 for f in hand if f // 13 == suit and f != card}
    if ACE in positions:
        positions.add(13)
    mine = (rank, 13) if rank == ACE else (rank,)
    near = {p for p in positions for m in mine if 0 < abs(p - m) <= 2}
    return k.rank_weight * same_rank + k.suit_weight * len(near)


class HeuristicMayIBot:
    """Plays for the contract (see the module docstring)."""

    name = "heuristic"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random(0)

    def choose(
        self, legal: Sequence[MayIAction], hand: Sequence[int], rules: MayIRules
    ) -> MayIAction:
        if not legal:
            raise NoLegalAction("no legal action")
        down = not any(isinstance(a, Meld) for a in legal) and any(
            isinstance(a, AddToMeld) for a in legal
        )
        rank_weight, suit_weight = _weights(None)
        return self.decide(legal, MayIKnowledge(rules, list(hand), rank_weight, suit_weight, down))

    def choose_in(self, state: Any) -> Any:
        if not isinstance(state, DealState):
            raise TypeError(f"not a May I? deal: {type(state).__name__}")
        legal = state.legal_actions()
        if not legal:
            raise NoLegalAction(f"no legal action in phase {state.phase.value}")
        return self.decide(legal, knowledge_of(state, state.to_move))

    def decide(self, legal: Sequence[MayIAction], k: MayIKnowledge) -> MayIAction:
        return self.ranked(legal, k)[0]

    def ranked(self, legal: Sequence[MayIAction], k: MayIKnowledge) -> list[MayIAction]:
        """The legal actions, best first."""
        scored = [(self.score(a, k), i, a) for i, a in enumerate(legal)]
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [a for _, _, a in scored]

    def score(self, action: MayIAction, k: MayIKnowledge) -> float:
        rules = k.rules
        if isinstance(action, Pass | Allow):
            return 0.0
        if isinstance(action, MayI | Deny):
            if k.down:
                return -1.0
            return 1.0 if weighted_affinity(action.card, k.hand, k) >= BUY_AT else -1.0
        if isinstance(action, Draw):
            return 0.0
        if isinstance(action, TakeDiscard):
            return 1.0 if self._worth_taking(action.card, k) else -1.0
        if isinstance(action, Meld):
            return 10_000.0 + len(action.cards)
        if isinstance(action, AddToMeld):
            return 5_000.0 + rules.card_value(action.card)
        if isinstance(action, Discard):
            value = rules.card_value(action.card)
            if len(k.hand) == 1:
                return 20_000.0  # going out
            if k.down:
                return float(value)
            return -10.0 * weighted_affinity(action.card, k.hand, k) + value / 10
        return -1e9

    @staticmethod
    def _worth_taking(card: int, k: MayIKnowledge) -> bool:
        if k.down:
            return False
        wanted = weighted_affinity(card, k.hand, k)
        worst = min((weighted_affinity(f, [*k.hand, card], k) for f in k.hand), default=0)
        return wanted >= TAKE_AT and wanted > worst
