"""A searching bot for every game: determinized Monte Carlo over the engine.

For each move the bot samples the cards hidden from its seat (the other hands and the stock) as
one random deal of the cards the seat has not seen, keeping every hand's and the stock's count,
plays each of its best few candidate moves in that deal and then ``horizon`` more actions (or the
rest of the hand) with a fast policy (the game's heuristic bot at every seat), and scores the
position reached for its own side (a hand's score counts melds, bonuses and the cards still in
hand, so a position cut short is scored as if the hand ended there). The
candidate with the best mean over the deals is played. Every candidate is tried in the same
sampled deals with the same rollout seeds (common random numbers), so the comparison is fair
even with few deals.

It decides only from what its seat may see: the sampled deal is built from the multiset of unseen
cards, sorted before it is shuffled, so two positions that differ only in hidden cards give the
same deals (``tests/test_bot_information.py``). Cards a hand is known to hold (a position's
``shown``: taken with the pile, or a May I? discard taken or bought) stay in that hand in every
sampled deal. A ``budget`` in seconds bounds the thinking per
move (a search stops before a deal that would end past it, but plays one deal at least);
``simulations`` fixes the number of sampled deals instead (reproducible, for tests).

The games plug in through :class:`SearchGame`: how to read a seat's hidden cards out of a
position dictionary, how to score a finished hand for a seat, and the rollout policy.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from .selfplay import NoLegalAction, choose_for

ROLLOUT_LIMIT = 2_000  # actions in one rollout before it is scored where it stands
DEFAULT_BUDGET = 0.5  # seconds a move for the bot kind ``search``; ``search:0.2`` names another


def search_budget(kind: str) -> float | None:
    """The budget a ``search`` or ``search:SECONDS`` bot kind names (None: not a search kind)."""
    name, _, seconds = kind.partition(":")
    if name != "search":
        return None
    if not seconds:
        return DEFAULT_BUDGET
    try:
        budget = float(seconds)
    except ValueError:
        budget = -1.0
    if not 0 < budget <= 60:
        raise ValueError(f"bot {kind!r}: a search budget is 0 to 60 seconds, like search:0.5")
    return budget


@dataclass(frozen=True)
class SearchGame:
    """One game's side of the search."""

    to_dict: Callable[[Any], dict[str, Any]]
    from_dict: Callable[[dict[str, Any]], Any]
    hidden_keys: Callable[[dict[str, Any], int], list[tuple[str, int | None]]]
    """The places in a position dictionary hidden from a seat: ``("hands", s)``, ``("stock",
    None)``."""
    side_value: Callable[[Any, int], float]
    """A finished (or abandoned) hand's value for a seat's side: its score minus the best other."""
    rollout_bot: Callable[[random.Random], Any]
    ranked: Callable[[Any, Sequence[Any]], list[Any]]
    """The legal actions of a position, the policy's best first."""
    same: Callable[[Any, Any], Hashable] | None = None
    """What an action does in a position, as far as the game's rules can tell (Canasta: which
    suit a discarded six has does not matter): the search tries one action of each, so its
    candidates are different moves. None: every action is its own."""
    candidates: int = 4
    """How many of the policy's best moves the search tries."""
    confidence: float = 0.0
    """How many standard errors a candidate's gain must be to replace the policy's first choice
    (``SearchBot.confidence``)."""
    duel: tuple[float, float] | None = None
    """The (margin, confidence) for a position of two seats, where the search's gain is larger
    and an even rule does best (``docs/bots.md``); None: ``margin`` and ``confidence`` there too."""
    rollout_bots: Callable[[random.Random, int], list[Any]] | None = None
    """The policy for every seat of one rollout, if the seats' bots may share what they work
    out (Canasta's read the public table once for all); None: ``rollout_bot`` for each."""

    def bot(
        self,
        rng: random.Random,
        budget: float = DEFAULT_BUDGET,
        simulations: int | None = None,
        cpu_time: bool = False,
    ) -> SearchBot:
        """The searching bot for this game (``simulations``: a fixed number of sampled deals;
        ``cpu_time``: the budget in CPU seconds); a remote prompt, which gives no position to
        sample, is played by the rollout policy."""
        return SearchBot(
            self,
            rng,
            budget=budget,
            simulations=simulations,
            fallback=self.rollout_bot(rng),
            cpu_time=cpu_time,
        )


def _known(position: dict[str, Any], key: str, index: int | None) -> list[str]:
    """The cards of a hidden place every seat knows are there (``shown``: a hand's cards taken
    with the pile that it still holds)."""
    shown = position.get("shown")
    if key != "hands" or index is None or not shown:
        return []
    known: list[str] = shown[index]
    return known


class SearchBot:
    """Determinized Monte Carlo with the heuristic as rollout policy (see the module docstring)."""

    name = "search"

    def __init__(
        self,
        game: SearchGame,
        rng: random.Random,
        *,
        budget: float = 0.5,
        simulations: int | None = None,
        candidates: int | None = None,
        horizon: int | None = None,
        margin: float = 30.0,
        confidence: float | None = None,
        fallback: Any = None,
        cpu_time: bool = False,
    ) -> None:
        self.game = game
        self.rng = rng
        self.budget = budget
        # the budget counts this thread's CPU time, not the wall clock's: a benchmark on a busy
        # machine then measures the same search as an idle core runs (a player waits longer)
        self.cpu_time = cpu_time
        self.simulations = simulations
        self.candidates = game.candidates if candidates is None else candidates
        self.horizon = horizon  # actions a rollout plays before it is scored (None: to the end)
        # points a candidate's mean must beat the policy's first choice by to replace it: with a
        # few sampled deals the means are noisy, and the policy's order is a good prior
        self.margin = margin
        # ... and by this many standard errors of the mean difference (paired over the deals):
        # a rollout to the hand's end differs by hundreds of points from one deal to the next,
        # so a gain seen in a few deals is mostly luck unless it is large
        self.confidence = game.confidence if confidence is None else confidence
        # ... but with two seats (the search gains most there) the game's ``duel`` rule
        self.duel = game.duel
        self._players = 0  # seats of the last searched position
        self.fallback = fallback  # plays from a legal list and a hand alone (a remote prompt)
        self.deals_tried = 0  # sampled deals of the last search (for the benchmark)
        self.last: list[tuple[Any, float]] = []  # the last search's candidates, mean values
        self._values: list[list[float]] = []  # the last search's value of each candidate a deal

    def choose(self, legal: Sequence[Any], hand: Sequence[int], rules: Any) -> Any:
        """Without a state (a remote seat's prompt) there is nothing to sample: the policy."""
        if self.fallback is None:
            raise NoLegalAction("the searching bot needs the seat's position")
        return self.fallback.choose(legal, hand, rules)

    def choose_in(self, state: Any) -> Any:
        tried = self.candidates_in(state)
        if len(tried) == 1:
            self.deals_tried, self.last = 0, [(tried[0], 0.0)]
            return tried[0]
        return self.search(self.information_set(state), tried, self.rng.getrandbits(64))

    def candidates_in(self, state: Any) -> list[Any]:
        """The policy's best few legal actions, best first (one: nothing to search)."""
        legal = state.legal_actions()
        if not legal:
            raise NoLegalAction(f"no legal action in phase {state.phase.value}")
        ranked = self.game.ranked(state, legal)
        if self.game.same is None:
            return ranked[: self.candidates]
        tried: list[Any] = []
        seen: set[Hashable] = set()
        for action in ranked:
            key = self.game.same(state, action)
            if key not in seen:
                seen.add(key)
                tried.append(action)
                if len(tried) == self.candidates:
                    break
        return tried

    def information_set(self, state: Any) -> dict[str, Any]:
        """The position as the seat to move may know it: the cards hidden from it are dealt in
        sorted order into the places they fill (each keeps its count). The search samples from
        the multiset of those cards, so it chooses the same from this as from ``state``; a worker
        process is sent only this (``canasta_net.bot_pool``)."""
        position = self.game.to_dict(state)
        seat = state.to_move
        canonical = dict(position)
        canonical["hands"] = [list(h) for h in position["hands"]]
        self._deal_into(canonical, seat, self._unseen(position, seat))
        return canonical

    def search(self, position: dict[str, Any], tried: Sequence[Any], seed: int) -> Any:
        """The best of ``tried`` (the policy's candidates in ``position``, the seat to move's
        information set) over deals sampled from ``seed``."""
        totals = self._totals(position, tried, seed)
        # ties go to the policy's order: max keeps the first of equal totals
        best = max(range(len(tried)), key=lambda i: totals[i])
        return tried[best] if self._convincing(best) else tried[0]

    def _convincing(self, best: int) -> bool:
        """Whether candidate ``best`` beat the policy's first choice by enough to replace it:
        by ``margin`` points a deal and by ``confidence`` standard errors of the difference."""
        if best == 0:
            return False
        margin, confidence, least = self.margin, self.confidence, 1
        if self.duel is not None and self._players == 2:
            margin, confidence = self.duel
            least = 2  # a rule without a margin: one deal cannot tell luck from a better move
        gains = [b - a for a, b in zip(self._values[0], self._values[best], strict=True)]
        deals = len(gains)
        mean = sum(gains) / deals
        if deals < least or mean < margin or mean <= 0:
            return False
        if confidence <= 0:
            return True
        if deals < 2:
            return False  # one deal cannot tell luck from a better move
        variance = sum((g - mean) ** 2 for g in gains) / (deals - 1)
        return mean >= confidence * math.sqrt(variance / deals)

    def evaluate(self, state: Any, actions: Sequence[Any]) -> list[tuple[Any, float]]:
        """Each of ``actions`` (legal for the seat to move) with its mean value for that seat's
        side over the same sampled deals and rollout seeds; also kept in ``last``, and the
        number of deals in ``deals_tried``. ``choose_in`` searches the policy's best few the
        same way; the game analysis (``replay/analysis.py``) evaluates those and the move that
        was played."""
        self._totals(self.game.to_dict(state), actions, self.rng.getrandbits(64))
        return self.last

    def _totals(self, position: dict[str, Any], actions: Sequence[Any], seed: int) -> list[float]:
        """Each action's total value for the seat to move over deals sampled from ``seed``."""
        seat = self.game.from_dict(position).to_move
        unseen = self._unseen(position, seat)
        self._players = len(position["hands"])
        values: list[list[float]] = [[] for _ in actions]
        clock = time.thread_time if self.cpu_time else time.perf_counter
        started = clock()
        deals = 0
        while True:
            deal_rng = random.Random(seed + deals)
            sampled = self._sample(position, seat, unseen, deal_rng)
            rollout_seed = deal_rng.getrandbits(64)
            for i, action in enumerate(actions):
                values[i].append(self._rollout(sampled, action, seat, rollout_seed))
            deals += 1
            if self.simulations is not None:
                if deals >= self.simulations:
                    break
            elif (clock() - started) * (deals + 1) / deals > self.budget:
                break  # the next deal, as long as the mean one, would end past the budget
        self.deals_tried = deals
        self._values = values
        totals = [sum(v) for v in values]
        self.last = [(action, total / deals) for action, total in zip(actions, totals, strict=True)]
        return totals

    def deal_values(self) -> list[list[float]]:
        """The last search's value of each candidate (in ``last``'s order) in each deal."""
        return [list(v) for v in self._values]

    # ------------------------------------------------------------------ sampling
    def _unseen(self, position: dict[str, Any], seat: int) -> list[str]:
        """The hidden cards as a multiset, sorted: the same for every arrangement of them. Cards
        a hand is known to hold (``shown``: taken with the pile) are not hidden."""
        cards: list[str] = []
        for key, index in self.game.hidden_keys(position, seat):
            place = position[key] if index is None else position[key][index]
            known = _known(position, key, index)
            if known:
                place = list(place)
                for card in known:
                    place.remove(card)
            cards += place
        return sorted(cards)

    def _sample(
        self, position: dict[str, Any], seat: int, unseen: list[str], rng: random.Random
    ) -> Any:
        cards = list(unseen)
        rng.shuffle(cards)
        sampled = dict(position)
        sampled["hands"] = [list(h) for h in position["hands"]]
        self._deal_into(sampled, seat, cards)
        return self.game.from_dict(sampled)

    def _deal_into(self, position: dict[str, Any], seat: int, cards: list[str]) -> None:
        """Deal ``cards`` in order into the places hidden from ``seat`` (``position['hands']``
        is a fresh list of lists), each place keeping its count."""
        for key, index in self.game.hidden_keys(position, seat):
            known = _known(position, key, index)
            size = len(position[key] if index is None else position[key][index]) - len(known)
            part, cards = cards[:size], cards[size:]
            if index is None:
                position[key] = part
            else:
                position[key][index] = known + part  # a hand keeps what it is known to hold

    # ------------------------------------------------------------------ rollouts
    def _rollout(self, state: Any, action: Any, seat: int, seed: int) -> float:
        sim = state.copy()
        sim.apply(action, seat)
        rng = random.Random(seed)
        if self.game.rollout_bots is not None:
            bots = self.game.rollout_bots(rng, sim.players)
        else:
            bots = [self.game.rollout_bot(rng) for _ in range(sim.players)]
        limit = ROLLOUT_LIMIT if self.horizon is None else self.horizon
        played = 0
        try:
            while not sim.is_over and played < limit:
                sim.apply(choose_for(bots[sim.to_move], sim), sim.to_move)
                played += 1
        except NoLegalAction:
            pass  # a rollout that stalls is scored where it stands
        return self.game.side_value(sim, seat)
