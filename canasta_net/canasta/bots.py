"""Bots that fill empty seats: a random-legal bot, a simple greedy one, the heuristic bot that
knows the game's aims (:mod:`.heuristic`) and the searching bot (:mod:`canasta_net.search`).

A bot chooses among the legal actions given its own hand: exactly what a remote seat receives
from the host (the legal list comes with every prompt), so the same bot plays in-process and
across the network. :func:`choose_for` adapts a bot to a full engine state.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any, Protocol

from .. import selfplay
from ..cards import JOKER, is_black_three, is_red_three, is_three, rank_of
from ..search import DEFAULT_BUDGET, SearchBot, SearchGame, search_budget
from ..selfplay import NoLegalAction as NoLegalAction
from .actions import Action, AddToMeld, Answer, AskGoOut, Discard, Draw, Meld, TakePile
from .heuristic import HeuristicBot, SeatReader, knowledge_of
from .melds import is_wild
from .position import position_from_dict, position_to_dict
from .rules import RuleSet
from .scoring import score_hand
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
        if discards:
            return self._best_discard(hand, rules, discards)
        # no discard is legal yet: bound to go out, the player must first merge two groups of a
        # rank into a canasta (Samba); take the first move listed
        return actions[0]

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


def _same(state: HandState, action: Action) -> Hashable:
    """What ``action`` does as far as the rules can tell: without sequences a card's suit
    matters only for a three's colour, so ``discard 6C`` and ``discard 6H`` are one move, and so
    are ``discard 3C`` and ``discard 3S``."""
    rules = state.rules
    if rules.sequences:
        return action
    cards = getattr(action, "cards", None)
    if cards is None:
        card = getattr(action, "card", None)
        return action if card is None else (Discard, _card_class(rules, card))
    kind = type(action)
    return (
        kind,
        getattr(action, "meld", None),
        tuple(sorted(_card_class(rules, f) for f in cards)),
    )


def _card_class(rules: RuleSet, face: int) -> tuple[int, int, int]:
    """A face up to what no rule reads: its suit, but for a three's colour."""
    if face == JOKER:
        return (-1, 0, 0)
    rank = 100 + int(is_red_three(face)) if is_three(face) else rank_of(face)
    return (rank, rules.card_value(face), rules.left_in_hand_cost(face))


def _hidden_keys(position: dict[str, Any], seat: int) -> list[tuple[str, int | None]]:
    others: list[tuple[str, int | None]] = [
        ("hands", s) for s in range(len(position["hands"])) if s != seat
    ]
    return [*others, ("stock", None)]


def _side_value(state: HandState, seat: int) -> float:
    """The hand's score for ``seat``'s side minus the best other side's. A hand cut short is
    scored without the cards still in hand: they are the side's means until the hand ends, and
    counting them would make every pile taken look like a loss."""
    scores = score_hand(state)
    if state.is_over:
        totals = [score.total for score in scores]
    else:
        totals = [score.total + score.cards_in_hand for score in scores]
    # three-handed lone-hand play scores per seat, every other rule set per team
    mine = seat if len(totals) == state.players else state.team_of(seat)
    return float(totals[mine] - max(t for i, t in enumerate(totals) if i != mine))


_POLICY = HeuristicBot()


def _rollout_bots(rng: random.Random, players: int) -> list[Any]:
    """The heuristic at every seat of a rollout, reading the public table once for all."""
    reader = SeatReader()
    return [HeuristicBot(rng, reader) for _ in range(players)]


def _ranked(state: HandState, legal: Sequence[Action]) -> list[Action]:
    return _POLICY.ranked(legal, knowledge_of(state, state.to_move))


CANASTA_SEARCH = SearchGame(
    to_dict=position_to_dict,
    from_dict=position_from_dict,
    hidden_keys=_hidden_keys,
    side_value=_side_value,
    rollout_bot=HeuristicBot,
    rollout_bots=_rollout_bots,
    ranked=_ranked,
    same=_same,
    # measured over positions of heuristic self-play (classic, 2- and 4-player): a fifth
    # different move gains more than more deals of four, and a gain of half a standard error
    # over the same deals is enough to play it
    candidates=5,
    confidence=0.5,
    # no rule of its own with two seats: the even rule (``duel=(0.0, 0.0)``) gained about ten
    # points a move over the same positions, but lost more hands than this rule on the same
    # deals in play (docs/bots.md)
)


def search_bot(
    rng: random.Random,
    budget: float = DEFAULT_BUDGET,
    simulations: int | None = None,
    cpu_time: bool = False,
) -> SearchBot:
    """The searching bot for Canasta (``simulations``: a fixed number of sampled deals;
    ``cpu_time``: the budget in CPU seconds of its thread, not wall seconds)."""
    return CANASTA_SEARCH.bot(rng, budget, simulations, cpu_time)


BOTS = {"random": RandomBot, "greedy": GreedyBot, "heuristic": HeuristicBot, "search": SearchBot}


def make_bot(kind: str, rng: random.Random) -> Bot:
    if kind == "random":
        return RandomBot(rng)
    if kind == "greedy":
        return GreedyBot(rng)
    if kind == "heuristic":
        return HeuristicBot(rng)
    budget = search_budget(kind)
    if budget is not None:
        return search_bot(rng, budget)
    raise ValueError(f"unknown bot {kind!r}; known: {', '.join(BOTS)} (search:SECONDS)")
