"""Bots for May I?: a random-legal bot, a simple greedy one, the heuristic that plays for the
contract (:mod:`.heuristic`) and the searching bot (:mod:`canasta_net.search`).

A bot chooses among the legal actions given its own hand, exactly what a remote seat receives with
every prompt (``choose(legal, hand, rules)``, the protocol of :mod:`canasta_net.bots`). Actions
that concern the discard name it (``take-discard 9D``, ``may-i 9D``, ``deny 9D``), so a bot needs
no other view of the table. :class:`canasta_net.bots.RandomBot` works here unchanged.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol

from .. import selfplay
from ..cards import ACE
from ..search import DEFAULT_BUDGET, SearchBot, SearchGame, search_budget
from ..selfplay import NoLegalAction as NoLegalAction
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
from .heuristic import HeuristicMayIBot, knowledge_of
from .position import position_from_dict, position_to_dict
from .rules import MayIRules
from .scoring import deal_scores
from .state import DealState


class MayIBot(Protocol):
    name: str

    def choose(
        self, legal: Sequence[MayIAction], hand: Sequence[int], rules: MayIRules
    ) -> MayIAction: ...


def choose_for(bot: MayIBot, state: DealState) -> MayIAction:
    """Ask ``bot`` for the action of the seat to move in ``state``."""
    action: MayIAction = selfplay.choose_for(bot, state)
    return action


class RandomMayIBot:
    """Picks uniformly among the legal actions: the engine's own fuzzer."""

    name = "random"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(
        self, legal: Sequence[MayIAction], hand: Sequence[int], rules: MayIRules
    ) -> MayIAction:
        if not legal:
            raise NoLegalAction("no legal action")
        return self.rng.choice(list(legal))


def affinity(card: int, hand: Sequence[int]) -> int:
    """How much ``card`` goes with the hand: cards of its rank count 2, cards of its suit within
    two ranks (the ace at both ends) count 1, each distinct neighbour once."""
    rank, suit = card % 13, card // 13
    same_rank = sum(1 for f in hand if f % 13 == rank and f != card)
    positions = {f % 13 for f in hand if f // 13 == suit and f != card}
    if ACE in positions:
        positions.add(13)
    mine = (rank, 13) if rank == ACE else (rank,)
    near = {p for p in positions for m in mine if 0 < abs(p - m) <= 2}
    return 2 * same_rank + len(near)


class GreedyMayIBot:
    """Takes or buys a discard that pairs with its hand, lays the biggest contract it can, lays
    off whatever fits (its most expensive cards first), and discards what goes with nothing."""

    name = "greedy"

    def __init__(self, rng: random.Random | None = None, buy_threshold: int = 4) -> None:
        self.rng = rng or random.Random(0)
        self.buy_threshold = buy_threshold  # affinity needed to pay a penalty card for a discard

    def choose(
        self, legal: Sequence[MayIAction], hand: Sequence[int], rules: MayIRules
    ) -> MayIAction:
        actions = list(legal)
        if not actions:
            raise NoLegalAction("no legal action")
        first = actions[0]
        if isinstance(first, Allow | MayI):
            card = next(a.card for a in actions if isinstance(a, MayI | Deny))
            if affinity(card, hand) >= self.buy_threshold:
                return next(a for a in actions if isinstance(a, MayI | Deny))
            return next(a for a in actions if isinstance(a, Pass | Allow))
        if isinstance(first, Draw):
            takes = [a for a in actions if isinstance(a, TakeDiscard)]
            if takes and self._worth_taking(takes[0].card, hand):
                return takes[0]
            return first
        melds = [a for a in actions if isinstance(a, Meld)]
        if melds:
            return max(melds, key=lambda a: (len(a.cards), sum(map(rules.card_value, a.cards))))
        adds = [a for a in actions if isinstance(a, AddToMeld)]
        if adds:
            return max(adds, key=lambda a: rules.card_value(a.card))
        discards = [a for a in actions if isinstance(a, Discard)]
        return min(
            discards,
            key=lambda a: (affinity(a.card, hand), -rules.card_value(a.card), self.rng.random()),
        )

    @staticmethod
    def _worth_taking(card: int, hand: Sequence[int]) -> bool:
        """The discard goes with the hand better than the card the bot would throw away for it
        (so that two bots do not pass one card back and forth)."""
        wanted = affinity(card, hand)
        return wanted >= 2 and wanted > min(affinity(f, [*hand, card]) for f in hand)


def _hidden_keys(position: dict[str, Any], seat: int) -> list[tuple[str, int | None]]:
    others: list[tuple[str, int | None]] = [
        ("hands", s) for s in range(len(position["hands"])) if s != seat
    ]
    return [*others, ("stock", None)]


def _side_value(state: DealState, seat: int) -> float:
    """The other seats' mean penalty minus the seat's own (each seat plays for itself)."""
    points = deal_scores(state)
    others = [p for s, p in enumerate(points) if s != seat]
    return sum(others) / len(others) - points[seat]


_POLICY = HeuristicMayIBot()


def _ranked(state: DealState, legal: Sequence[MayIAction]) -> list[MayIAction]:
    return _POLICY.ranked(legal, knowledge_of(state, state.to_move))


MAYI_SEARCH = SearchGame(
    to_dict=position_to_dict,
    from_dict=position_from_dict,
    hidden_keys=_hidden_keys,
    side_value=_side_value,
    rollout_bot=HeuristicMayIBot,
    ranked=_ranked,
)


def search_bot(
    rng: random.Random, budget: float = DEFAULT_BUDGET, simulations: int | None = None
) -> SearchBot:
    """The searching bot for May I? (``simulations``: a fixed number of sampled deals)."""
    return MAYI_SEARCH.bot(rng, budget, simulations)


BOTS = {
    "random": RandomMayIBot,
    "greedy": GreedyMayIBot,
    "heuristic": HeuristicMayIBot,
    "search": SearchBot,
}


def make_bot(kind: str, rng: random.Random) -> MayIBot:
    if kind == "random":
        return RandomMayIBot(rng)
    if kind == "greedy":
        return GreedyMayIBot(rng)
    if kind == "heuristic":
        return HeuristicMayIBot(rng)
    budget = search_budget(kind)
    if budget is not None:
        return search_bot(rng, budget)
    raise ValueError(f"unknown bot {kind!r}; known: {', '.join(BOTS)} (search:SECONDS)")
