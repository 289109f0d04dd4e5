"""Bots that fill empty seats: a random-legal bot and a simple greedy one.

A bot chooses among the legal actions given its own hand: exactly what a remote seat receives
from the host (the legal list comes with every prompt), so the same bot plays in-process and
across the network. :func:`choose_for` adapts a bot to a full engine state.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

from .. import selfplay
from ..cards import JOKER, is_black_three, rank_of
from ..selfplay import NoLegalAction as NoLegalAction
from .actions import Action, AddToMeld, Answer, AskGoOut, Discard, Draw, Meld, TakePile
from .melds import is_wild
from .rules import RuleSet
from .state import HandState


class Bot(Protocol):
    name: str

    def choose(self, legal: Sequence[Action], hand: Sequence[int], rules: RuleSet) -> Action: ...


def choose_for(bot: Bot, state: HandState) -> Action:
    """Ask ``bot`` for the move of the seat to move in ``state``."""
    action: Action = selfplay.choose_for(bot, state)
    return action


class RandomBot:
    """Picks uniformly among the legal actions: the engine's own fuzzer."""

    name = "random"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, legal: Sequence[Action], hand: Sequence[int], rules: RuleSet) -> Action:
        if not legal:
            raise NoLegalAction("no legal action")
        return self.rng.choice(list(legal))

    def choose_in(self, state: Any) -> Any:
        """The move in ``state`` itself: as uniform over its legal actions as :meth:`choose`;
        for a Canasta hand without listing them all (see ``HandState.random_legal_action``)."""
        if not isinstance(state, HandState):
            return selfplay.choose_from_list(self, state)
        action = state.random_legal_action(self.rng.randrange)
        if action is None:
            raise NoLegalAction(f"no legal action in phase {state.phase.value}")
        return action


class GreedyBot:
    """Takes the pile when it can, lays as many cards as it can, discards what it needs least."""

    name = "greedy"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random(0)

    def choose(self, legal: Sequence[Action], hand: Sequence[int], rules: RuleSet) -> Action:
        actions = list(legal)
        if not actions:
            raise NoLegalAction("no legal action")
        if isinstance(actions[0], Answer):
            return Answer(True)
        takes = [a for a in actions if isinstance(a, TakePile)]
        if takes:
            return max(takes, key=lambda a: sum(1 for f in a.cards if not is_wild(f)))
        if any(isinstance(a, Draw) for a in actions):
            return Draw()
        if any(isinstance(a, AskGoOut) for a in actions):
            return AskGoOut()
        lays = [a for a in actions if isinstance(a, Meld | AddToMeld)]
        if lays:
            return max(lays, key=self._lay_score)
        discards = [a for a in actions if isinstance(a, Discard)]
        return self._best_discard(hand, rules, discards)

    @staticmethod
    def _lay_score(action: Meld | AddToMeld) -> tuple[int, int]:
        naturals = sum(1 for f in action.cards if not is_wild(f))
        return (naturals, len(action.cards))

    def _best_discard(self, hand: Sequence[int], rules: RuleSet, discards: list[Discard]) -> Action:
        ranks = Counter(rank_of(f) for f in hand if not is_wild(f))

        def cost(a: Discard) -> tuple[int, int, float]:
            f = a.card
            if is_black_three(f):
                return (0, 0, self.rng.random())
            if f == JOKER or is_wild(f):
                return (3, rules.card_value(f), self.rng.random())
            return (
                1 if ranks[rank_of(f)] == 1 else 2,
                rules.card_value(f),
                self.rng.random(),
            )

        return min(discards, key=cost)


BOTS = {"random": RandomBot, "greedy": GreedyBot}


def make_bot(kind: str, rng: random.Random) -> Bot:
    if kind == "random":
        return RandomBot(rng)
    if kind == "greedy":
        return GreedyBot(rng)
    raise ValueError(f"unknown bot {kind!r}; known: {', '.join(BOTS)}")
