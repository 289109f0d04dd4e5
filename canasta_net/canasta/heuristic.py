"""A Canasta bot that knows the game's aims: the searching bot's rollout policy.

:class:`HeuristicBot` decides from what its seat may know (:class:`SeatKnowledge`): its own hand,
the melds and red threes on the table, the discard pile (every card of it was seen face up as it
was discarded), and how many cards each hand and the stock hold. It never reads another seat's
hand or the stock's order, which ``tests/test_bot_information.py`` checks by permuting them.

What it knows of the game, in the order it decides:

- go out when a move empties the hand; ask the partner when it can, and answer "yes" when the
  hand it would be caught with is cheap or the opponents are about to go out themselves;
- take the pile when it is worth it (never spend wild cards on a one-card pile);
- lay naturals freely, wild cards only where they complete a canasta, reach the initial
  minimum, or the hand must be laid down; complete canastas first;
- discard what the next opponent cannot use: black threes, ranks whose remaining copies are
  accounted for, never a rank the opponents have melded on an unfrozen pile; break no pair (the
  pair takes a frozen pile, Samba's rule for every pile); freeze a big pile with a wild card when
  every other discard would give it away.

Seen from a remote seat that knows only its legal list and its hand (:meth:`HeuristicBot.choose`),
the public part is empty and the same rules apply with what is left.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..cards import JOKER, TWO, is_black_three, is_red_three, rank_of
from ..selfplay import NoLegalAction
from .actions import (
    Action,
    AddToMeld,
    Answer,
    AskGoOut,
    Discard,
    Draw,
    Meld,
    MergeMelds,
    TakePile,
    TakeTop,
)
from .melds import GROUP_KIND, is_wild
from .rules import RuleSet
from .state import HandState, Phase

# weights of the discard cost, in points
PAIR_BREAK = 18  # breaking a natural pair (it takes a frozen pile)
OWN_MELD_RANK = 25  # a card the team could lay on its own meld
FREEZE_PILE_AT = 6  # a wild card discard freezes a pile this big when nothing else is safe
DRAW: Final = Draw()


@dataclass
class SeatKnowledge:
    """Everything the bot reads: one seat's hand and the public table, nothing hidden.

    Counted once per decision, so that scoring each legal action is cheap.
    """

    rules: RuleSet
    hand: list[int]
    pile_size: int = 0
    pile_points: int = 0
    pile_frozen_for_them: bool = False
    my_melds: list[tuple[int, int, bool]] = field(default_factory=list)
    """The team's melds as listed: (rank, size, canasta); rank -1 for anything but a group."""
    their_open_ranks: frozenset[int] = frozenset()  # opponents' group ranks that take more cards
    seen_ranks: list[int] = field(default_factory=lambda: [0] * 13)  # naturals not hidden
    their_fewest_cards: int = 11
    stock_size: int = 50
    opened: bool = False
    their_opened: bool = False
    must_lay: bool = False  # a pile taken for the initial meld: lay until the minimum
    hand_ranks: list[int] = field(default_factory=list)  # naturals in hand, a count a rank

    def __post_init__(self) -> None:
        if not self.hand_ranks:  # a reader that counted the hand already passes them
            self.hand_ranks = [0] * 13
            for f in self.hand:
                if not is_wild(f):
                    self.hand_ranks[rank_of(f)] += 1
        self.my_group_ranks = frozenset(r for r, _, _ in self.my_melds if r >= 0)
        self.my_canastas = sum(1 for _, _, canasta in self.my_melds if canasta)

    def unseen_naturals(self, rank: int) -> int:
        """Copies of ``rank`` that the seat has not seen: in other hands or in the stock."""
        return max(0, 4 * self.rules.decks - self.seen_ranks[rank])


def _count_ranks(seen: list[int], faces: Sequence[int]) -> None:
    for f in faces:
        if f != JOKER:
            seen[f % 13] += 1


def knowledge_of(state: HandState, seat: int) -> SeatKnowledge:
    """What ``seat`` may know of ``state``: read from its public parts and the seat's own hand."""
    rules = state.rules
    team = state.team_of(seat)
    hand = state.hand_faces(seat)
    pile = state.faces(state.pile)
    seen = [0] * 13
    _count_ranks(seen, hand)
    _count_ranks(seen, pile)
    _count_ranks(seen, state.faces(state.t.pending_pile))
    my_melds: list[tuple[int, int, bool]] = []
    their_open: set[int] = set()
    for side, melds in enumerate(state.melds):
        for m in melds:
            _count_ranks(seen, m.faces)
            canasta = m.is_canasta(rules)
            rank = m.rank if m.kind is GROUP_KIND else -1
            if side == team:
                my_melds.append((rank, m.size, canasta))
            elif rank >= 0 and not (canasta and rules.completed_canasta_blocks_pile):
                their_open.add(rank)
    others = [s for s in range(state.players) if state.team_of(s) != team]
    return SeatKnowledge(
        rules=rules,
        hand=hand,
        pile_size=len(pile),
        pile_points=sum(rules.card_value(f) for f in pile),
        pile_frozen_for_them=any(state.frozen_for(state.team_of(s)) for s in others),
        my_melds=my_melds,
        their_open_ranks=frozenset(their_open),
        seen_ranks=seen,
        their_fewest_cards=min((len(state.hands[s]) for s in others), default=11),
        stock_size=len(state.stock),
        opened=state.opened[team],
        their_opened=any(state.opened[state.team_of(s)] for s in others),
        must_lay=state.phase is Phase.PILE_PENDING,
    )


class SeatReader:
    """:func:`knowledge_of`, faster for bots asked again and again about one hand (a rollout):
    what the melds tell is kept until a meld changes, and the pile's cards are counted only as
    far as they are new. Only public parts are kept, so the bots of every seat may share one
    reader (a rollout's do). Gives exactly what :func:`knowledge_of` gives
    (``tests/test_bots_strong.py``)."""

    def __init__(self) -> None:
        # the melds last read, as (rules, the state's meld version)
        self._melds_key: tuple[Any, ...] | None = None
        self._meld_seen: list[int] = []
        # each meld's ranks as last counted, by id (the entry holds the meld: the id stays its
        # own), with its size then: a meld that only changed elsewhere is not counted again
        self._meld_ranks: dict[int, tuple[Any, int, list[tuple[int, int]]]] = {}
        self._side_melds: list[list[tuple[int, int, bool]]] = []  # each side's, as listed
        self._side_open: list[set[int]] = []  # each side's group ranks that take more cards
        # per team: its melds as listed and the other sides' open ranks
        self._team_facts: dict[int, tuple[list[tuple[int, int, bool]], frozenset[int]]] = {}
        self._my_melds: list[tuple[int, int, bool]] = []
        self._their_open: frozenset[int] = frozenset()
        # the pile last read: its deck and rules, its cards then, and the ranks and points they
        # hold (a pile grows by discards on top: only the new cards need counting)
        self._pile_of: tuple[Any, Any] | None = None
        self._pile: list[int] = []
        self._pile_seen: list[int] = [0] * 13
        self._pile_points = 0

    def knowledge(self, state: HandState, seat: int) -> SeatKnowledge:
        rules = state.rules
        team = state.team_of(seat)
        self._read_melds(state, team)
        pile_seen = self._read_pile(state)
        face = state.deck.face
        seen = [a + b for a, b in zip(self._meld_seen, pile_seen, strict=True)]
        hand = [face[c] for c in state.hands[seat]]
        hand_ranks = [0] * 13
        for f in hand:
            if f != JOKER:
                rank = f % 13
                seen[rank] += 1
                if rank != TWO:
                    hand_ranks[rank] += 1
        _count_ranks(seen, state.faces(state.t.pending_pile))
        team_map = state.team_map
        others = [s for s in range(state.players) if team_map[s] != team]
        other_teams = {team_map[s] for s in others}
        return SeatKnowledge(
            rules=rules,
            hand=hand,
            pile_size=len(state.pile),
            pile_points=self._pile_points,
            pile_frozen_for_them=any(state.frozen_for(t) for t in other_teams),
            my_melds=list(self._my_melds),
            their_open_ranks=self._their_open,
            seen_ranks=seen,
            their_fewest_cards=min((len(state.hands[s]) for s in others), default=11),
            stock_size=len(state.stock),
            opened=state.opened[team],
            their_opened=any(state.opened[t] for t in other_teams),
            must_lay=state.phase is Phase.PILE_PENDING,
            hand_ranks=hand_ranks,
        )

    def _read_melds(self, state: HandState, team: int) -> None:
        # two states with the same meld version show the same melds (``HandState.meld_version``)
        key = (state.rules, state.meld_version)
        if key != self._melds_key:
            self._count_melds(state, key)
        facts = self._team_facts.get(team)
        if facts is None:
            their_open: set[int] = set()
            for side, ranks in enumerate(self._side_open):
                if side != team:
                    their_open |= ranks
            facts = (self._side_melds[team], frozenset(their_open))
            self._team_facts[team] = facts
        self._my_melds, self._their_open = facts

    def _count_melds(self, state: HandState, key: tuple[Any, ...]) -> None:
        rules = state.rules
        seen = [0] * 13
        side_melds: list[list[tuple[int, int, bool]]] = []
        side_open: list[set[int]] = []
        counted, recount = self._meld_ranks, {}
        for side_list in state.melds:
            listed: list[tuple[int, int, bool]] = []
            open_ranks: set[int] = set()
            for m in side_list:
                size = len(m.cards)
                entry = counted.get(id(m))
                if entry is None or entry[0] is not m or entry[1] != size:
                    ranks = [0] * 13
                    _count_ranks(ranks, m.faces)
                    entry = (m, size, [(r, n) for r, n in enumerate(ranks) if n])
                recount[id(m)] = entry
                for r, n in entry[2]:
                    seen[r] += n
                canasta = m.is_canasta(rules)
                rank = m.rank if m.kind is GROUP_KIND else -1
                listed.append((rank, size, canasta))
                if rank >= 0 and not (canasta and rules.completed_canasta_blocks_pile):
                    open_ranks.add(rank)
            side_melds.append(listed)
            side_open.append(open_ranks)
        self._melds_key = key
        self._meld_ranks = recount
        self._meld_seen, self._side_melds, self._side_open = seen, side_melds, side_open
        self._team_facts = {}

    def _read_pile(self, state: HandState) -> list[int]:
        """The ranks counted in the pile; its points are left in ``_pile_points``."""
        pile, last = state.pile, self._pile
        of = (state.rules, state.deck)
        if of != self._pile_of or len(pile) < len(last) or pile[: len(last)] != last:
            last, self._pile_seen, self._pile_points = [], [0] * 13, 0
            self._pile_of = of
        if len(pile) > len(last):
            new = state.faces(pile[len(last) :])
            _count_ranks(self._pile_seen, new)
            self._pile_points += sum(state.rules.card_value(f) for f in new)
        self._pile = list(pile)
        return self._pile_seen


def knowledge_from_hand(hand: Sequence[int], rules: RuleSet) -> SeatKnowledge:
    """What a seat knows from its legal list and its hand alone (a remote seat's prompt)."""
    seen = [0] * 13
    _count_ranks(seen, hand)
    return SeatKnowledge(rules, list(hand), seen_ranks=seen)


class HeuristicBot:
    """Plays by the aims of the game (see the module docstring); fast, for rollouts too."""

    name = "heuristic"
    wild_hold = 12.0  # what laying a wild card short of a canasta costs, in points
    least_pile = 0  # the smallest pile worth taking; 0: by the rules (see _least_pile)

    def __init__(self, rng: random.Random | None = None, reader: SeatReader | None = None) -> None:
        self.rng = rng or random.Random(0)
        self.reader = reader or SeatReader()  # knowledge_of, kept up to date between moves

    def choose(self, legal: Sequence[Action], hand: Sequence[int], rules: RuleSet) -> Action:
        if not legal:
            raise NoLegalAction("no legal action")
        return self.decide(legal, knowledge_from_hand(hand, rules))

    def choose_in(self, state: Any) -> Any:
        """The move in ``state``: :meth:`decide` over its legal actions, with two shortcuts a
        rollout spends most of its moves on (the same choice, ``tests/test_bots_strong.py``)."""
        if not isinstance(state, HandState):
            raise TypeError(f"not a Canasta hand: {type(state).__name__}")
        if state.phase is Phase.DRAW:
            rules = state.rules
            if (
                state.stock
                and len(state.pile) < self._least_pile(rules)
                and not rules.take_top_to_sequence
            ):
                # a draw is legal and listed first, and scores 0; every take of this small a
                # pile scores below 0, and there is no take-top: the draw, without the listing
                return DRAW
        legal = state.legal_actions()
        if not legal:
            raise NoLegalAction(f"no legal action in phase {state.phase.value}")
        return self.decide(legal, self.reader.knowledge(state, state.to_move))

    # ------------------------------------------------------------------ the decision
    def decide(self, legal: Sequence[Action], k: SeatKnowledge) -> Action:
        best, best_score = legal[0], self.score(legal[0], k)
        for action in legal[1:]:
            value = self.score(action, k)
            if value > best_score:
                best, best_score = action, value
        return best

    def ranked(self, legal: Sequence[Action], k: SeatKnowledge) -> list[Action]:
        """The legal actions, best first (the searching bot tries the first few)."""
        scored = [(self.score(a, k), i, a) for i, a in enumerate(legal)]
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [a for _, _, a in scored]

    def score(self, action: Action, k: SeatKnowledge) -> float:
        """How much the seat wants ``action`` now; comparable among one position's actions."""
        if isinstance(action, Answer):
            return self._answer(action, k)
        if isinstance(action, Draw):
            return 0.0
        if isinstance(action, TakePile):
            return self._take_pile(action, k)
        if isinstance(action, TakeTop):
            return 30.0
        if isinstance(action, AskGoOut):
            return 2000.0
        # a lay worth something comes before the discard; one worth nothing after every discard
        if isinstance(action, Meld | AddToMeld):
            value = self._lay(action, k)
            return value if value > 0 else value - 20_000.0
        if isinstance(action, MergeMelds):
            return 5.0
        if isinstance(action, Discard):
            return -self._discard_cost(action.card, k) - 10_000.0
        return -30_000.0

    # ------------------------------------------------------------------ asking and answering
    def _answer(self, action: Answer, k: SeatKnowledge) -> float:
        caught = sum(k.rules.left_in_hand_cost(f) for f in k.hand)
        say_yes = caught <= 100 or k.their_fewest_cards <= 3 or k.stock_size <= 6
        return 1.0 if action.yes == say_yes else 0.0

    # ------------------------------------------------------------------ drawing
    def _take_pile(self, action: TakePile, k: SeatKnowledge) -> float:
        wilds = sum(1 for f in action.cards if is_wild(f))
        naturals = len(action.cards) - wilds
        size = k.pile_size
        if size < self._least_pile(k.rules) or (wilds and size <= 2):
            return -5.0 - wilds  # too little for the cards it commits: draw instead
        return 20.0 + 6 * size + k.pile_points / 10 + naturals - 12 * wilds

    def _least_pile(self, rules: RuleSet) -> int:
        """A small pile costs the pair it is taken with and gives little more than the stock:
        three cards where one is drawn, five where two are (docs/bots.md: in 2-player classic
        five won 65.7 % of 2,000 matches against seven, the setting before; in Samba and
        Bolivia the two are even)."""
        if self.least_pile:
            return self.least_pile
        return 3 if rules.draw_count == 1 else 5

    # ------------------------------------------------------------------ laying
    def _lay(self, action: Meld | AddToMeld, k: SeatKnowledge) -> float:
        cards = action.cards
        hand_after = len(k.hand) - len(cards)
        if hand_after == 0:
            return 5000.0  # going out
        rules = k.rules
        wilds = sum(1 for f in cards if is_wild(f))
        naturals = len(cards) - wilds
        blacks = sum(1 for f in cards if is_black_three(f))
        if blacks:
            return -100.0
        size_after = len(cards)
        was_canasta = False
        if isinstance(action, AddToMeld) and 0 <= action.meld < len(k.my_melds):
            _, size, was_canasta = k.my_melds[action.meld]
            if was_canasta and wilds:
                return -50.0  # a wild card on a finished canasta earns only its value
            size_after += size
        completes = size_after >= rules.canasta_size and not was_canasta
        value = 10.0 * naturals + sum(rules.card_value(f) for f in cards) / 10
        if completes:
            value += 200.0 if wilds == 0 else 120.0
        elif wilds and not (k.must_lay or not k.opened or self._racing(k)):
            value -= self.wild_hold * wilds  # held, it makes a canasta or freezes the pile later
        if hand_after == 1 and not completes and not k.must_lay and not self._can_go_out(k):
            value -= 15.0  # one card left and no way out: every discard is forced
        if k.must_lay:
            value += 100.0
        return value

    @staticmethod
    def _can_go_out(k: SeatKnowledge) -> bool:
        return k.my_canastas >= k.rules.canastas_to_go_out

    def _racing(self, k: SeatKnowledge) -> bool:
        """The hand is near its end: cards in hand only cost, lay everything."""
        return self._can_go_out(k) or k.their_fewest_cards <= 5 or k.stock_size <= 8

    # ------------------------------------------------------------------ discarding
    def _discard_cost(self, face: int, k: SeatKnowledge) -> float:
        rules = k.rules
        pile_stake = 10.0 + 8 * k.pile_size + k.pile_points / 5
        if is_black_three(face):
            return -20.0  # blocks the next player's take
        if is_red_three(face):
            return 0.0
        if face == JOKER or is_wild(face):
            cost = 80.0 + rules.card_value(face)
            if not k.pile_frozen_for_them and k.pile_size >= FREEZE_PILE_AT and k.their_opened:
                cost -= pile_stake / 2  # freezing a big pile the opponents threaten
            return cost
        rank = face % 13
        in_hand = k.hand_ranks[rank]
        cost = rules.card_value(face) / 5
        if in_hand >= 2:
            cost += PAIR_BREAK * (1.5 if in_hand == 2 else 1.0)
        if rank in k.my_group_ranks:
            cost += OWN_MELD_RANK
        return cost + self._danger(rank, k) * pile_stake

    @staticmethod
    def _danger(rank: int, k: SeatKnowledge) -> float:
        """The chance (roughly) that an opponent takes the pile with a card of ``rank``."""
        frozen = k.pile_frozen_for_them or k.rules.pile_always_frozen
        if not frozen and rank in k.their_open_ranks:
            return 1.0
        unseen = k.unseen_naturals(rank)
        if unseen >= 2:
            return min(1.0, unseen / (4.0 * k.rules.decks)) * (0.6 if frozen else 0.8)
        if unseen == 1 and not frozen:
            return 0.25
        return 0.0
