"""The state of one hand of Canasta, its legal actions, and the transitions between states.

``HandState`` is pure: it is built from a rule set and a shuffled deck (card ids in deal order),
and changes only through :meth:`HandState.apply`, which either performs a legal action or raises
:class:`~canasta_net.errors.IllegalAction` leaving the state exactly as it was.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from .. import shown
from ..cards import (
    JOKER,
    RANK_NAMES,
    SORT_ORDER,
    THREE,
    TWO,
    Deck,
    face_text,
    is_black_three,
    is_red_three,
    pick_cards,
    pick_in_order,
    rank_of,
    suit_of,
)
from ..errors import IllegalAction
from ..reasons import refuse
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
from .melds import (
    BLACK_THREES_KIND,
    GROUP_KIND,
    SEQUENCE_KIND,
    WILDS_KIND,
    GroupShape,
    TableMeld,
    check_addition,
    check_wild_balance,
    group_shape,
    is_wild,
    rank_at,
    run_position,
)
from .planner import (
    WILD_MELD,
    HandCounts,
    MeldCounts,
    best_lay_value,
    can_lay_out,
    lay_out_value,
)
from .rules import RuleSet


class Phase(StrEnum):
    DRAW = "draw"  # the player to move must draw or take the pile
    PLAY = "play"  # the player may meld, then must discard (or go out)
    PILE_PENDING = "pile-pending"  # pile taken for an initial meld: lay more until the minimum
    ASKED = "asked"  # the partner must answer "may I go out?"
    OVER = "over"


class EndReason(StrEnum):
    WENT_OUT = "went-out"
    STOCK_EXHAUSTED = "stock-exhausted"
    LAST_RED_THREE = "last-red-three"


# The phases as module constants for the hot paths (see melds.GROUP_KIND).
DRAW_PHASE: Final = Phase.DRAW
PLAY_PHASE: Final = Phase.PLAY
PILE_PENDING_PHASE: Final = Phase.PILE_PENDING
ASKED_PHASE: Final = Phase.ASKED
OVER_PHASE: Final = Phase.OVER


@dataclass(slots=True)
class TurnState:
    """What happened so far in the current turn."""

    drew: str = ""  # "", "stock" or "pile"
    initial_points: int = 0  # value laid this turn while the team had not opened
    laid: bool = False  # the player laid or added anything this turn
    added_to_old: bool = False  # added to a meld laid before this turn
    permission: bool | None = None  # the partner's answer to "may I go out?"
    black_threes: bool = False  # black threes laid: the player must go out this turn
    pending_pile: list[int] = field(default_factory=list)  # pile awaiting pick-up


@dataclass(frozen=True, slots=True)
class HandEnd:
    reason: EndReason
    went_out: int | None = None  # seat
    going_out_bonus: int = 0


def _canonical_faces(
    hand_faces: Sequence[int], naturals_rank: int, n: int, j: int, t: int
) -> tuple[int, ...]:
    """Pick representative faces from a hand: the first ``n`` naturals of a rank, ``t`` twos and
    ``j`` jokers, in face order. Suits never matter in a group, so one representative stands for
    every equivalent choice."""
    nat = (
        sorted(f for f in hand_faces if f != JOKER and rank_of(f) == naturals_rank)[:n] if n else []
    )
    twos = sorted(f for f in hand_faces if f != JOKER and f % 13 == 1)[:t] if t else []
    return (*nat, *twos, *([JOKER] * j))


# How a candidate action is checked (see HandState._candidates)
CHECK_ALL = 0  # as apply() would
CHECK_LAY = 1  # a meld or addition valid in itself by construction: only the guards after it
CHECK_GROUP = 2  # a new group by construction (its naturals, then its wild cards): as CHECK_LAY
CHECK_THREES = 4  # a meld of three or four black threes from the hand: as CHECK_LAY
LEGAL = 3  # legal by construction


RED_THREE_FACES: Final = frozenset(f for f in range(JOKER) if is_red_three(f))

# Actions are immutable values: the listing hands out these instead of building equal ones.
DRAW: Final = Draw()
ASK_GO_OUT: Final = AskGoOut()
ANSWERS: Final = (Answer(True), Answer(False))
DISCARDS: Final = tuple(Discard(f) for f in range(JOKER + 1))
# The faces, and their discards, by their place in the listing order (``SORT_ORDER``).
_FACE_AT_ORDER: Final = tuple(sorted(range(JOKER + 1), key=SORT_ORDER.__getitem__))
_DISCARD_AT_ORDER: Final = tuple(DISCARDS[f] for f in _FACE_AT_ORDER)
_RED_THREE_ORDERS: Final = frozenset(SORT_ORDER[f] for f in RED_THREE_FACES)


def _orders_of(hand: list[int]) -> list[int]:
    """The places in the listing order (``SORT_ORDER``) of the faces ``hand`` holds, ascending:
    a sort of small numbers costs less than a sort by a key."""
    order = SORT_ORDER
    return sorted({order[f] for f in hand})


_LAY_ACTIONS: dict[tuple[int, tuple[int, ...]], Action] = {}  # (meld, faces) -> its action
_LAY_ACTIONS_LIMIT: Final = 1 << 16  # emptied when it grows past this (it never needs to)


def _lay_of(meld: int, faces: tuple[int, ...]) -> Action:
    """The action laying ``faces`` (a new meld if ``meld`` is NEW_MELD), shared across listings:
    a dictionary look-up costs less than making a frozen dataclass."""
    key = (meld, faces)
    action = _LAY_ACTIONS.get(key)
    if action is None:
        if len(_LAY_ACTIONS) >= _LAY_ACTIONS_LIMIT:
            _LAY_ACTIONS.clear()
        action = Meld(faces) if meld == NEW_MELD else AddToMeld(meld, faces)
        _LAY_ACTIONS[key] = action
    return action


_TAKES: dict[tuple[tuple[int, ...], int | None], TakePile] = {}  # (cards, meld) -> its action


def _take_pile_of(cards: tuple[int, ...], meld: int | None) -> TakePile:
    """The action taking the pile with ``cards`` onto ``meld``, shared across listings."""
    key = (cards, meld)
    action = _TAKES.get(key)
    if action is None:
        if len(_TAKES) >= _LAY_ACTIONS_LIMIT:
            _TAKES.clear()
        action = _TAKES[key] = TakePile(cards, meld)
    return action


_RUN_POSITIONS: Final = tuple(run_position(rank) for rank in range(13))  # by rank
_MELD_VERSIONS: Final = itertools.count(1)  # HandState.meld_version's numbers

NEW_MELD: Final = -1
_Lay = tuple[int, tuple[int, ...], int]
"""A candidate lay: the team's meld it adds to (NEW_MELD: a new meld), the faces, the check."""
_HandGroups = tuple[dict[int, list[int]], list[int], int]
"""A hand's naturals by rank, its twos, its jokers (``HandState._hand_groups``)."""


@dataclass(slots=True)
class _Candidates:
    """A position's candidate actions in listing order, each with how far it must still be
    checked: ``lays`` (built only when asked for), ``built`` ones, then a discard of each face of
    ``discards`` (also built when asked for), then "may I go out?" if ``ask``."""

    built: list[tuple[Action, int]]
    lays: Sequence[_Lay] = ()
    discards: Sequence[int] = ()
    discard_check: int = CHECK_ALL  # for every discard but of a red three (CHECK_ALL)
    ask: bool = False

    def __len__(self) -> int:
        return len(self.lays) + len(self.built) + len(self.discards) + self.ask

    def __iter__(self) -> Iterator[tuple[Action, int]]:
        for lay in self.lays:
            yield _lay_action(lay)
        yield from self.built
        for face in self.discards:
            yield self._discard(face)
        if self.ask:
            yield AskGoOut(), CHECK_ALL

    def get(self, index: int) -> tuple[Action, int]:
        """The candidate at ``index`` of the listing order."""
        if index < len(self.lays):
            return _lay_action(self.lays[index])
        index -= len(self.lays)
        if index < len(self.built):
            return self.built[index]
        index -= len(self.built)
        if index < len(self.discards):
            return self._discard(self.discards[index])
        return AskGoOut(), CHECK_ALL

    def _discard(self, face: int) -> tuple[Action, int]:
        return Discard(face), CHECK_ALL if face in RED_THREE_FACES else self.discard_check


def _lay_action(lay: _Lay) -> tuple[Action, int]:
    meld, faces, check = lay
    return (Meld(faces) if meld == NEW_MELD else AddToMeld(meld, faces)), check


@functools.cache
def _wild_choices(
    jokers: int, twos: tuple[int, ...], most: int
) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """The wild cards a group may take from a hand with ``jokers`` and the faces ``twos``
    (sorted), at most ``most``: (how many, their faces), by jokers then twos."""
    return tuple(
        (j + t, (*twos[:t], *([JOKER] * j)))
        for j in range(min(jokers, most) + 1)
        for t in range(min(len(twos), most - j) + 1)
    )


@functools.cache
def _wild_sets_of(
    twos: tuple[int, ...], jokers: int, least: int, most: int
) -> tuple[tuple[int, ...], ...]:
    """The sets of ``least`` to ``most`` wild cards from ``jokers`` jokers and the faces
    ``twos`` (sorted), by jokers then twos (melds of wild cards, and additions to them)."""
    return tuple(
        (*twos[:t], *([JOKER] * j))
        for j in range(jokers + 1)
        for t in range(len(twos) + 1)
        if least <= j + t <= most
    )


_NO_WILD_CHOICES: Final = _wild_choices(0, (), 0)  # a hand without wild cards: none added


@dataclass(slots=True)
class _InitialFacts:
    """A position's facts for new groups toward the team's initial meld (see
    ``HandState._initial_facts``)."""

    extra: int  # cards the pending pile adds to the hand
    minimum: int
    melds: dict[int, MeldCounts]  # the team's groups laid this turn
    sequences: list[tuple[int, int, int]]  # its sequences laid this turn that may grow
    canastas: int
    melded: frozenset[int]  # ranks of the team's groups
    keep: int  # cards the hand keeps in reaching the minimum
    concealed: bool  # going out concealed is still open (after a stock draw)
    lay_out: bool  # going out with the whole hand may still reach the minimum
    possible: bool | None = None  # ``_initial_possible()``, once asked


@dataclass(slots=True)
class _PileCounts:
    """The freezing cards and red threes among the first ``counted`` cards of ``pile`` (the
    last of them ``last``)."""

    pile: list[int]
    counted: int = 0
    last: int = -1
    freezers: int = 0
    reds: int = 0


def _frozen_pile_error(rank: int) -> IllegalAction:
    return refuse("pile-frozen", rank=RANK_NAMES[rank])


def upcard_turns_again(rules: RuleSet, face: int) -> bool:
    """Whether an upcard showing ``face`` is covered by the next stock card at the deal."""
    return (
        is_wild(face)
        or is_red_three(face)
        or (is_black_three(face) and rules.upcard_turns_on_black_three)
    )


class HandState:
    """One hand: hands, stock, discard pile, melds, red threes, whose turn, and the phase."""

    def __init__(
        self,
        rules: RuleSet,
        deck_order: Sequence[int],
        dealer: int = 0,
        minimums: Sequence[int] | None = None,
    ) -> None:
        self._setup(rules, dealer, minimums)
        if sorted(deck_order) != list(range(self.deck.size)):
            raise ValueError(f"the deck order must be a permutation of 0..{self.deck.size - 1}")
        self._deal(list(deck_order))

    def _setup(self, rules: RuleSet, dealer: int, minimums: Sequence[int] | None) -> None:
        self.rules = rules
        self.deck = Deck(rules.decks, rules.jokers_per_deck)
        n = rules.players
        self.dealer = dealer % n
        self.minimums = (
            list(minimums) if minimums is not None else [rules.initial_minimum(0)] * rules.teams
        )
        if len(self.minimums) != rules.teams:
            raise ValueError("one initial-meld minimum per team")
        self.hands: list[list[int]] = [[] for _ in range(n)]
        self.melds: list[list[TableMeld]] = [[] for _ in range(rules.teams)]
        # the list above (and the teams' lists in it) is held by a copy of the position too
        # (see ``copy``): the engine replaces them by copies of its own before changing one
        self._melds_shared = False
        # seat -> team; fixed but for three-handed "lone hand" play, where the two players who
        # did not first take the pile become partners (see _form_partnership)
        self.team_map = [rules.team_of(s) for s in range(n)]
        self.lone: int | None = None
        self.red_threes: list[list[int]] = [[] for _ in range(n)]
        # faces every seat saw go into a hand with the pile, while that hand may still hold them
        # (one fewer each time the seat plays such a face): public, like the pile was
        self.shown: tuple[tuple[int, ...], ...] = ((),) * n
        self.opened = [False] * rules.teams
        self.has_melded = [False] * n
        self.pile: list[int] = []
        # a position may say the pile is frozen by a card below the cards it lists (a puzzle, a
        # seat's view: only the top is known); it thaws when the pile is taken
        self.pile_frozen_below = False
        self.stock: list[int] = []
        self.turn_no = 0
        self.turn = (self.dealer + 1) % n
        self.phase = DRAW_PHASE
        self.t = TurnState()
        # the turn's state above is held by a copy of the position too (see ``copy``): the
        # engine replaces it by a copy of its own before changing it (``_own_turn``)
        self._turn_shared = False
        self.end: HandEnd | None = None
        self.canasta_bonus_given = False
        # Blind dealing (docs/blind-deal.md): seats whose hands this state holds only stand-in
        # cards for. Guards that read the rest of such a hand are left to the hand-end audit.
        self.hidden_hands: frozenset[int] = frozenset()
        # Cards a lay takes first (in this order) when other cards of the hand show the same face.
        self.prefer_cards: tuple[int, ...] = ()
        # the last listing of legal actions, with the key of the position it was made for
        self._listed: tuple[tuple[object, ...], tuple[Action, ...]] | None = None
        # a number no other melds have had: renewed whenever the engine changes a meld (a copy
        # keeps it while its melds are the same), so that two states showing the same number
        # show the same melds (a reader of the table checks it instead of every meld)
        self.meld_version = next(_MELD_VERSIONS)

    @classmethod
    def blank(
        cls, rules: RuleSet, dealer: int = 0, minimums: Sequence[int] | None = None
    ) -> HandState:
        """A state with no cards anywhere, for building positions (see ``position.py``)."""
        state = cls.__new__(cls)
        state._setup(rules, dealer, minimums)
        return state

    # ------------------------------------------------------------------ dealing
    def _deal(self, order: list[int]) -> None:
        rules, n, face = self.rules, self.rules.players, self.deck.face
        position = 0
        for _ in range(rules.hand_size):
            for k in range(n):
                self.hands[(self.dealer + 1 + k) % n].append(order[position])
                position += 1
        # the stock is kept with its top at the end of the list
        self.stock = order[position:][::-1]
        while True:
            card = self.stock.pop()
            self.pile.append(card)
            if not upcard_turns_again(rules, face[card]):
                break
        for k in range(n):
            seat = (self.dealer + 1 + k) % n
            self._lay_red_threes_from_hand(seat)

    def _lay_red_threes_from_hand(self, seat: int) -> None:
        face, hand = self.deck.face, self.hands[seat]
        while True:
            reds = [c for c in hand if is_red_three(face[c])]
            if not reds or not self.stock:
                return
            for c in reds:
                hand.remove(c)
                self._lay_red_three(seat, c)
                if self.stock:
                    hand.append(self.stock.pop())

    # ------------------------------------------------------------------ simple queries
    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def to_move(self) -> int:
        """The seat that must act next (the partner while a "may I go out?" is pending)."""
        if self.phase is ASKED_PHASE:
            partner = self.rules.partner_of(self.turn)
            assert partner is not None
            return partner
        return self.turn

    @property
    def is_over(self) -> bool:
        return self.phase is OVER_PHASE

    def team_of(self, seat: int) -> int:
        return self.team_map[seat]

    def _minimum(self, team: int) -> int:
        """The initial-meld minimum that applies to the player to move (in lone-hand play each
        partner keeps his own, by his own score)."""
        if self.rules.three_player_mode == "lone_hand":
            return self.minimums[self.turn]
        return self.minimums[team]

    def _form_partnership(self, lone: int) -> None:
        """Three-handed lone-hand play: ``lone`` plays alone from now on; the other two become
        partners, pooling their melds (groups of one rank merge)."""
        if self.rules.three_player_mode != "lone_hand" or self.lone is not None:
            return
        self.lone = lone
        self.meld_version = next(_MELD_VERSIONS)
        first, second = (s for s in range(self.players) if s != lone)
        self._own_melds()
        for meld in self.melds[second]:
            same = self.team_meld_of_rank(first, meld.rank)
            if (
                meld.kind is GROUP_KIND
                and same is not None
                and self._poolable(self.melds[first][same], meld)
            ):
                target = self._changing_meld(first, same)
                target.cards.extend(meld.cards)
                target.faces.extend(meld.faces)
                target.naturals += meld.naturals
                target.wilds += meld.wilds
            else:
                self.melds[first].append(meld)
        self.melds[second] = []
        if self.opened[second] and not self.opened[first]:
            self._set_opened(first)
        team_map = list(self.team_map)  # shared with copies: replaced, never changed in place
        team_map[second] = first
        self.team_map = team_map

    def _poolable(self, one: TableMeld, other: TableMeld) -> bool:
        """Whether two partners' groups of a rank may become one: together they must keep the
        wild-card limit. Otherwise they stay two groups (cards never leave a meld), and the
        first takes what the partnership adds to that rank."""
        return one.wilds + other.wilds <= self.rules.max_wilds(one.naturals + other.naturals)

    def faces(self, cards: Iterable[int]) -> list[int]:
        face = self.deck.face
        return [face[c] for c in cards]

    def cards_in_play(self) -> int:
        """Every physical card is somewhere: hands, stock, pile, melds, red threes, pending pile."""
        return (
            sum(len(h) for h in self.hands)
            + len(self.stock)
            + len(self.pile)
            + sum(len(m.cards) for team in self.melds for m in team)
            + sum(len(r) for r in self.red_threes)
            + len(self.t.pending_pile)
        )

    def faces_text(self, cards: Iterable[int]) -> list[str]:
        face = self.deck.face
        return [face_text(face[c]) for c in cards]

    def hand_faces(self, seat: int) -> list[int]:
        return self.faces(self.hands[seat])

    @property
    def pile_top(self) -> int | None:
        return self.deck.face[self.pile[-1]] if self.pile else None

    @property
    def pile_frozen(self) -> bool:
        """Frozen by a wild card or red three in it (or a black three, with that knob)."""
        return self.pile_frozen_below or self._pile_counts()[0] > 0

    def _pile_counts(self) -> tuple[int, int]:
        """(freezing cards, red threes) in the pile, kept up to date as the pile grows.

        The pile list only grows by appending, loses its top card to a meld, or is replaced: so
        while it is the same list and still holds the card that was last counted where it was,
        the cards below are unchanged and only those appended since need counting."""
        pile = self.pile
        cached: _PileCounts | None = self.__dict__.get("_pile_cache")
        if (
            cached is None
            or cached.pile is not pile
            or len(pile) < cached.counted
            or (cached.counted and pile[cached.counted - 1] != cached.last)
        ):
            cached = _PileCounts(pile)
            self.__dict__["_pile_cache"] = cached
        if cached.counted < len(pile):
            face = self.deck.face
            b3 = self.rules.black_three_freezes_pile
            for c in pile[cached.counted :]:
                f = face[c]
                if f in RED_THREE_FACES:
                    cached.reds += 1
                    cached.freezers += 1
                elif is_wild(f) or (b3 and is_black_three(f)):
                    cached.freezers += 1
            cached.counted, cached.last = len(pile), pile[-1]
        return cached.freezers, cached.reds

    def frozen_for(self, team: int) -> bool:
        return self.rules.pile_always_frozen or not self.opened[team] or self.pile_frozen

    def canastas(self, team: int) -> int:
        size = self.rules.canasta_size  # ``TableMeld.is_canasta``, without a call a meld
        melds = self.melds[team]
        return len([m for m in melds if len(m.cards) >= size and m.kind is not BLACK_THREES_KIND])

    def _meld_counts(self, team: int, only_this_turn: bool = False) -> dict[int, MeldCounts]:
        """The team's groups as the planner sees them: one open group per rank; where the team
        may merge its groups of a rank (Samba, once it has opened), with all of them as its
        ``parts``."""
        rules = self.rules
        out: dict[int, MeldCounts] = {}
        several = False
        for m in self.melds[team]:
            if m.kind not in (GROUP_KIND, WILDS_KIND) or m.is_closed(rules):
                continue
            key = m.rank if m.kind is GROUP_KIND else WILD_MELD
            if key in out:
                several = True
                continue
            if only_this_turn and m.laid_turn != self.turn_no:
                continue
            out[key] = self._counts_of(key, m.naturals, m.wilds)
        if several and rules.merge_groups and self.opened[team] and not only_this_turn:
            for rank, parts in self._group_parts(team).items():
                if len(parts) > 1:
                    out[rank].parts = parts
        return out

    def _group_parts(
        self, team: int, change: tuple[int | None, int, int, int] | None = None
    ) -> dict[int, tuple[tuple[int, int], ...]]:
        """Samba (``merge_groups``; RULES.md section 4: "a team may hold several groups of the
        same rank and merge them"): the team's groups by rank, as (naturals, wild cards), sorted:
        what the going-out planner may merge (``MeldCounts.parts``). ``change``: a lay not yet
        made, as (meld index, or None for a new group; rank; naturals; wild cards)."""
        by_rank: dict[int, list[tuple[int, int]]] = {}
        for i, m in enumerate(self.melds[team]):
            if m.kind is GROUP_KIND:
                naturals, wilds = m.naturals, m.wilds
                if change is not None and change[0] == i:
                    naturals, wilds = naturals + change[2], wilds + change[3]
                by_rank.setdefault(m.rank, []).append((naturals, wilds))
        if change is not None and change[0] is None:
            by_rank.setdefault(change[1], []).append((change[2], change[3]))
        return {rank: tuple(sorted(parts)) for rank, parts in by_rank.items()}

    def _changed_group(
        self,
        team_melds: dict[int, MeldCounts],
        team: int,
        change: tuple[int | None, int, int, int],
    ) -> None:
        """Put in ``team_melds`` (the planner's view of the team's groups) the group a lay not
        yet made changes or starts (``change`` as in ``_group_parts``), with the rank's other
        groups as its parts where the team may merge them."""
        _, rank, naturals, wilds = change
        if change[0] is not None:
            m = self.melds[team][change[0]]
            naturals, wilds = m.naturals + naturals, m.wilds + wilds
        counts = self._counts_of(rank, naturals, wilds)
        if self.rules.merge_groups and self.opened[team]:
            parts = self._group_parts(team, change)[rank]
            if len(parts) > 1:
                counts.parts = parts
        team_melds[rank] = counts

    def _open_sequences(
        self, team: int, skip: int = -1, this_turn: bool = True
    ) -> list[tuple[int, int, int]]:
        """The team's sequences laid this turn (``this_turn``; else all of them) that may still
        grow, as (suit, low, high) run positions (the planner extends them toward an initial
        meld, or in going out); ``skip``: a meld index."""
        return [
            (m.suit, m.low, m.high)
            for i, m in enumerate(self.melds[team])
            if m.kind is SEQUENCE_KIND
            and (m.laid_turn == self.turn_no or not this_turn)
            and i != skip
            and not m.is_closed(self.rules)
        ]

    def _counts_of(self, rank: int, naturals: int, wilds: int) -> MeldCounts:
        rules = self.rules
        size = naturals + wilds
        room = rules.max_meld_size - size if rules.max_meld_size else 1 << 20
        wild_room = 0 if not rules.wilds_on_canasta and size >= rules.canasta_size else 1 << 20
        return MeldCounts(rank, naturals, wilds, room, wild_room)

    # The lists below change a few times a hand: a copy of the position shares them (see
    # ``copy``), so they are replaced by changed copies, never changed in place.
    def _lay_red_three(self, seat: int, card: int) -> None:
        red_threes = list(self.red_threes)
        red_threes[seat] = [*red_threes[seat], card]
        self.red_threes = red_threes

    def _set_opened(self, team: int) -> None:
        opened = list(self.opened)
        opened[team] = True
        self.opened = opened

    def _set_has_melded(self, seat: int) -> None:
        has_melded = list(self.has_melded)
        has_melded[seat] = True
        self.has_melded = has_melded

    def _own_melds(self) -> None:
        """Before the teams' meld lists change: replace lists shared with a copy of the
        position by lists of this state's own, their melds marked shared (whichever state
        changes one of them first changes a clone of it)."""
        if self._melds_shared:
            for team in self.melds:
                for meld in team:
                    meld.shared = True
            self.melds = [list(team) for team in self.melds]
            self._melds_shared = False

    def _own_turn(self) -> None:
        """Before the turn's state changes: replace one shared with a copy of the position by
        a copy of its own."""
        t = self.t
        self.t = TurnState(
            t.drew,
            t.initial_points,
            t.laid,
            t.added_to_old,
            t.permission,
            t.black_threes,
            t.pending_pile,  # replaced, never changed in place
        )
        self._turn_shared = False
        # the initial-meld cache's key names the turn's state by its id: another one now
        self.__dict__["_initial_cache"] = None

    def _changing_meld(self, team: int, index: int) -> TableMeld:
        """The team's meld ``index``, about to change: one shared with a copy of the position
        (see ``copy``) is first replaced by a clone of its own."""
        self.meld_version = next(_MELD_VERSIONS)
        if self._melds_shared:
            self._own_melds()
        meld = self.melds[team][index]
        if meld.shared:
            meld = self.melds[team][index] = meld.clone()
        return meld

    def team_meld_of_rank(self, team: int, rank: int) -> int | None:
        for i, m in enumerate(self.melds[team]):
            if m.kind is GROUP_KIND and m.rank == rank:
                return i
        return None

    # ------------------------------------------------------------------ apply
    def apply(self, action: Action, seat: int | None = None) -> None:
        """Perform ``action`` for the seat to move, or raise IllegalAction (state unchanged).

        Every ``_do_`` method validates completely before it changes anything. An action that
        :meth:`legal_actions` listed for this very position (the same object, while the
        position's key is unchanged: see ``_listing_key``) is legal already: only the checks
        that find its cards and meld are made, not the guards (which may run the planner).
        Any other action, an equal one from elsewhere included, is checked in full.
        """
        if self.phase is OVER_PHASE or seat is not None:
            self._check_turn(seat)
        listed = self._listed
        if listed is not None and listed[0] == self._listing_key():
            self._listed = None  # a listing holds until the next move
            for candidate in listed[1]:
                if candidate is action:
                    self._perform(action, True)
                    return
        self._listed = None
        self._perform(action)

    def _listing_key(self) -> tuple[object, ...]:
        """What a listing of legal actions depends on and a caller could change without a move
        (the hand to move, the turn's state, the pile's and stock's sizes and top): a listing is
        trusted by ``apply`` only while this is unchanged. Every move drops the listing; a copy
        keeps it (the same position)."""
        seat, t, pile = self.turn, self.t, self.pile
        team = self.team_map[seat]
        return (
            self.phase,
            seat,
            self.turn_no,
            tuple(self.hands[seat]),
            t.drew,
            t.initial_points,
            t.laid,
            t.added_to_old,
            t.permission,
            t.black_threes,
            len(t.pending_pile),
            len(self.stock),
            len(pile),
            pile[-1] if pile else -1,
            self.pile_frozen_below,
            self.opened[team],
            len(self.melds[team]),
            self.hidden_hands,
        )

    def is_legal(self, action: Action, seat: int | None = None) -> bool:
        try:
            self._check(action, seat)
        except IllegalAction:
            return False
        return True

    def check(self, action: Action, seat: int | None = None) -> None:
        """Raise IllegalAction if ``action`` is not legal now; change nothing."""
        self._check(action, seat)

    def _check_turn(self, seat: int | None) -> None:
        if self.phase is OVER_PHASE:
            raise refuse("hand-over")
        if seat is not None and seat != self.to_move:
            raise refuse("not-your-turn", to_move=self.to_move, seat=seat)

    def _check(self, action: Action, seat: int | None) -> None:
        self._check_turn(seat)
        if isinstance(action, Draw):
            self._check_draw()
        elif isinstance(action, TakePile):
            self._plan_take_pile(action)
        elif isinstance(action, TakeTop):
            self._plan_take_top(action)
        elif isinstance(action, Meld):
            merged = self._as_addition(action)
            if isinstance(merged, AddToMeld):
                self._plan_add(merged)
            else:
                self._plan_meld(action)
        elif isinstance(action, AddToMeld):
            self._plan_add(action)
        elif isinstance(action, MergeMelds):
            self._plan_merge(action)
        elif isinstance(action, Discard):
            self._check_discard(action)
        elif isinstance(action, AskGoOut):
            self._check_ask()
        elif isinstance(action, Answer):
            if self.phase is not ASKED_PHASE:
                raise refuse("nothing-to-answer")
        else:  # pragma: no cover - exhaustive
            raise refuse("wrong-phase.unknown-action", action=repr(action))

    def _perform(self, action: Action, listed: bool = False) -> None:
        """Check and make ``action``; ``listed``: it is legal (listed for this position), only
        its cards and meld are looked up."""
        if isinstance(action, Draw):
            if not listed:
                self._check_draw()
            self._do_draw()
        elif isinstance(action, Discard):
            self._do_discard(action, listed)
        elif isinstance(action, TakePile):
            self._do_take_pile(action, listed)
        elif isinstance(action, TakeTop):
            self._do_take_top(action, listed)
        elif isinstance(action, Meld):
            merged = self._as_addition(action)
            if isinstance(merged, AddToMeld):
                self._do_add(merged, listed)
            else:
                self._do_meld(action, listed)
        elif isinstance(action, AddToMeld):
            self._do_add(action, listed)
        elif isinstance(action, MergeMelds):
            self._do_merge(action, listed)
        elif isinstance(action, AskGoOut):
            if not listed:
                self._check_ask()
            self.phase = ASKED_PHASE
        elif isinstance(action, Answer):
            if self.phase is not ASKED_PHASE:
                raise refuse("nothing-to-answer")
            if self._turn_shared:
                self._own_turn()
            self.t.permission = action.yes
            self.phase = PLAY_PHASE
        else:
            raise refuse("wrong-phase.unknown-action", action=repr(action))

    def _as_addition(self, action: Meld) -> Meld | AddToMeld:
        """docs/spec/RULES.md §1: a team holds one meld of a rank, and melding another group of
        that rank merges it into the first, which is adding its cards to it."""
        if not self.rules.one_group_per_rank or not action.cards:
            return action
        if any(is_black_three(f) or is_red_three(f) for f in action.cards):
            return action
        ranks = {rank_of(f) for f in action.cards if not is_wild(f)}
        if len(ranks) != 1:
            return action
        index = self.team_meld_of_rank(self.team_map[self.turn], ranks.pop())
        return action if index is None else AddToMeld(index, action.cards)

    # ------------------------------------------------------------------ helpers for checks
    def _require_phase(self, *phases: Phase) -> None:
        if self.phase not in phases:
            raise refuse("wrong-phase", phase=self.phase.value)

    def _take_from_hand(self, seat: int, faces: Sequence[int]) -> list[int]:
        """The card ids in ``seat``'s hand for ``faces`` (lowest id first, the cards of
        :attr:`prefer_cards` before any other), or raise."""
        if self.prefer_cards:
            hand = self.hands[seat]
            first = [c for c in self.prefer_cards if c in hand]
            taken = set(first)
            return pick_in_order(
                self.deck.face, first + sorted(c for c in hand if c not in taken), faces
            )
        return pick_cards(self.deck.face, self.hands[seat], faces)

    def _must_take_pile(self) -> bool:
        """At the end of the stock: the top card can be added to one of the team's melds."""
        if not self.rules.forced_pile_take_at_stock_end or not self.pile:
            return False
        try:
            self._plan_take_pile(TakePile(()))
        except IllegalAction:
            return False
        return True

    def _pending_pile_to_hand(self) -> int:
        """How many cards the pending pile will add to the hand (its red threes are laid)."""
        face = self.deck.face
        return sum(1 for c in self.t.pending_pile if face[c] not in RED_THREE_FACES)

    def _could_go_concealed(self, seat: int) -> bool:
        """Whether going out concealed is still open to ``seat`` this turn: never where nobody
        goes out (Bolivia, RULES.md section 5), and never after the partner's "no" (RULES.md §1:
        the player must not go out), which the guards on an initial meld that only a concealed
        going out would excuse rely on."""
        return (
            self.rules.going_out_allowed
            and not self.has_melded[seat]
            and not self.t.added_to_old
            and (self.t.drew == "stock" or self.rules.concealed_after_pile_take)
            and self.t.permission is not False
        )

    def _check_after_lay(
        self,
        cards_left: int,
        counts_after: Callable[[], HandCounts],
        melds_after: Callable[[], tuple[dict[int, MeldCounts], list[tuple[int, int, int]]]],
        canastas_after: Callable[[], int],
        points_after: int,
        own_canasta_after: Callable[[], bool],
        extra_cards: int = 0,
        adds_to_old: bool = False,
    ) -> None:
        """The guards that keep a lay from leading into a dead end (see docs/rules.md).

        ``cards_left`` is how many cards the hand keeps; ``counts_after`` gives them counted, and
        ``melds_after`` the team's groups after the lay and its sequences laid this turn that may
        still grow; ``canastas_after`` how many canastas the team then holds, and
        ``own_canasta_after`` whether the player then holds one made this turn (all only when a
        guard needs them). ``adds_to_old`` says the lay adds to a meld of an earlier turn (which
        rules out going out concealed). Where the team may merge its groups of a rank (Samba),
        ``melds_after`` gives every group of a rank as the parts of its view."""
        rules, seat = self.rules, self.turn
        team = self.team_map[seat]
        cards_after = cards_left + extra_cards
        if cards_after <= 1:  # the first canasta's bonus cards (Bolivia) refill the hand
            cards_after += self._first_canasta_cards(canastas_after())
        opened = self.opened[team] or points_after >= self._minimum(team)
        if cards_after > 1 and opened and not self._must_go_out:
            return  # the common case: nothing can go wrong
        if seat in self.hidden_hands:
            self._check_after_hidden_lay(cards_after, canastas_after(), opened, extra_cards)
            return
        canastas = canastas_after()
        if cards_after <= 1:
            if self.t.permission is False:
                raise refuse("may-not-go-out")
            if (
                cards_after == 1
                and not extra_cards
                and rules.going_out_allowed
                and canastas < rules.canastas_to_go_out  # else the answer changes nothing
                # the last card may still be laid, or discarded after merging groups of a rank
                # (Samba), to complete the canastas needed to go out
                and self._can_finish(counts_after(), *melds_after(), canastas, last_card=True)
            ):
                canastas = rules.canastas_to_go_out
            self._check_cards_left(cards_after, canastas)
            if not opened and not (
                self._concealed_after(adds_to_old, own_canasta_after) and self.t.drew == "stock"
            ):
                raise self._too_low(team)
            return
        team_melds, sequences = melds_after()
        counts = counts_after()
        if self._must_go_out and not self._can_finish(counts, team_melds, sequences, canastas):
            raise self._must_go_out_refusal()
        if not opened:
            if not self._initial_possible():
                raise refuse("initial-meld-unreachable", minimum=self._minimum(team))
            keep = 2 if self.phase is PLAY_PHASE else max(0, 2 - extra_cards)
            minimum = self._minimum(team)
            enough = minimum - points_after
            if best_lay_value(rules, counts, team_melds, keep, sequences, enough) >= enough:
                return
            if (
                self.phase is PLAY_PHASE
                and self.t.drew == "stock"
                and self._could_go_concealed(seat)
                and not adds_to_old
                and can_lay_out(
                    rules, counts, team_melds, 1, canastas, rules.canastas_to_go_out, sequences
                )
            ):
                return
            if not extra_cards and self.t.permission is not False:
                out = self._lay_out_value(counts, team_melds, canastas, sequences)
                if out is not None and points_after + out >= minimum:
                    return  # the minimum is reached by going out with the whole hand
            raise refuse("initial-meld-unreachable.after", minimum=minimum)

    def _concealed_after(self, adds_to_old: bool, own_canasta_after: Callable[[], bool]) -> bool:
        """Whether the player to move could still go out concealed after a lay."""
        return (
            self._could_go_concealed(self.turn)
            and not adds_to_old
            and (own_canasta_after() or not self.rules.concealed_requires_own_canasta)
        )

    def _lay_out_value(
        self,
        counts: HandCounts,
        team_melds: dict[int, MeldCounts],
        canastas: int,
        sequences: Sequence[tuple[int, int, int]] = (),
    ) -> int | None:
        """The most a player lays in going out with ``counts`` (None if going out is not
        possible): what an initial meld may still reach when no card remains to be picked up."""
        if not self.rules.going_out_allowed:
            return None
        return lay_out_value(
            self.rules, counts, team_melds, canastas, self.rules.canastas_to_go_out, sequences
        )

    def _check_after_hidden_lay(
        self, cards_after: int, canastas_after: int, opened: bool, extra_cards: int
    ) -> None:
        """The guards of :meth:`_check_after_lay` that need no hidden card: the rest (whether
        the hand could still lay out, reach the minimum, or go out) are the audit's."""
        if cards_after > 1:
            return
        if self.t.permission is False:
            raise refuse("may-not-go-out")
        if cards_after == 1 and not extra_cards and self.rules.going_out_allowed:
            # the last card may complete the canastas needed: whether it can is the audit's
            canastas_after = max(canastas_after, self.rules.canastas_to_go_out)
        self._check_cards_left(cards_after, canastas_after)
        if not opened and not (self._could_go_concealed(self.turn) and self.t.drew == "stock"):
            raise self._too_low(self.team_map[self.turn])

    def _initial_possible(self) -> bool:
        """Can the player to move still complete the team's initial meld this turn (or go out
        concealed)? A property of the position, asked before any lay toward the initial meld;
        cached because listing legal actions asks it once per candidate."""
        seat = self.turn
        key = (self.turn_no, id(self.t), len(self.hands[seat]), self.t.initial_points, self.phase)
        cached = self.__dict__.get("_initial_cache")
        if cached is not None and cached[0] == key:
            return bool(cached[1])
        rules, team = self.rules, self.team_map[seat]
        counts = HandCounts.of(rules, self.hand_faces(seat))
        melds = self._meld_counts(team, only_this_turn=True)
        extra = self._pending_pile_to_hand()
        keep = 2 if self.phase is PLAY_PHASE else max(0, 2 - extra)
        minimum = self._minimum(team)
        enough = minimum - self.t.initial_points
        sequences = self._open_sequences(team)
        canastas = self.canastas(team)
        possible = (
            best_lay_value(rules, counts, melds, keep, sequences, enough) >= enough
            or (
                self.phase is PLAY_PHASE
                and self.t.drew == "stock"
                and self._could_go_concealed(seat)
                and can_lay_out(
                    rules, counts, melds, 1, canastas, rules.canastas_to_go_out, sequences
                )
            )
            or (
                not extra
                and self.t.permission is not False
                and (out := self._lay_out_value(counts, melds, canastas, sequences)) is not None
                and self.t.initial_points + out >= minimum
            )
        )
        self.__dict__["_initial_cache"] = (key, possible)
        return possible

    def _too_low(self, team: int) -> IllegalAction:
        return refuse(
            "initial-meld-too-low", minimum=self._minimum(team), laid=self.t.initial_points
        )

    # ------------------------------------------------------------------ draw
    def _check_draw(self) -> None:
        self._require_phase(DRAW_PHASE)
        if not self.stock and self._must_take_pile():
            raise refuse("must-take-pile")

    def _do_draw(self) -> None:
        seat = self.turn
        if not self.stock:
            self._finish(HandEnd(EndReason.STOCK_EXHAUSTED))
            return
        face = self.deck.face
        to_draw = min(self.rules.draw_count, len(self.stock))
        while to_draw > 0 and self.stock:
            card = self.stock.pop()
            if face[card] in RED_THREE_FACES:
                self._lay_red_three(seat, card)
                if not self.stock:
                    self._finish(HandEnd(EndReason.LAST_RED_THREE))
                    return
                continue  # replaced by the next card
            self.hands[seat].append(card)
            to_draw -= 1
        if self._turn_shared:
            self._own_turn()
        self.t.drew = "stock"
        self.phase = PLAY_PHASE

    # ------------------------------------------------------------------ take the pile
    def _plan_take_pile(
        self, action: TakePile, listed: bool = False
    ) -> tuple[list[int], int | None, GroupShape | None]:
        """Check a pile take; return (hand card ids used, existing meld index, new group).
        ``listed``: the take is legal, the guards on what follows it are skipped."""
        self._require_phase(DRAW_PHASE)
        rules, seat = self.rules, self.turn
        team = self.team_map[seat]
        if not self.pile:
            raise refuse("pile-empty")
        top = self.deck.face[self.pile[-1]]
        if is_wild(top) or is_black_three(top):
            raise refuse("pile-blocked", card=face_text(top))
        rank = rank_of(top)
        if action.meld is not None:
            existing: int | None = self._team_meld(team, action.meld)
            target = self.melds[team][action.meld]
            onto_sequence = (
                target.kind is SEQUENCE_KIND and rules.pile_onto_sequence and not action.cards
            )
            if not onto_sequence and (target.kind is not GROUP_KIND or target.rank != rank):
                raise refuse("wrong-rank.onto", card=face_text(top), meld=action.meld)
        elif rules.one_group_per_rank:
            existing = self.team_meld_of_rank(team, rank)
        else:
            existing = self._only_meld_for_top(team, top) if not action.cards else None
        same_rank = self.team_meld_of_rank(team, rank)
        if (
            rules.completed_canasta_blocks_pile
            and same_rank is not None
            and self.melds[team][same_rank].is_canasta(rules)
        ):
            raise refuse("pile-blocked.canasta", card=face_text(top))
        if rules.one_card_pile_rule and len(self.hands[seat]) == 1 and len(self.pile) == 1:
            raise refuse("one-card-pile")
        used = self._take_from_hand(seat, action.cards)
        faces = [self.deck.face[c] for c in used]
        naturals = sum(1 for f in faces if not is_wild(f) and rank_of(f) == rank)
        frozen = self.frozen_for(team)
        if not faces:
            if existing is None:
                raise refuse(
                    "pile-take-cards.no-meld"
                    if rules.one_group_per_rank
                    else "pile-take-cards.no-meld-or-onto",
                    rank=RANK_NAMES[rank],
                )
            if frozen:
                raise _frozen_pile_error(rank)
        elif (
            len(faces) != 2 or naturals + sum(1 for f in faces if is_wild(f)) != 2 or naturals == 0
        ):
            raise refuse("pile-take-cards", rank=RANK_NAMES[rank])
        elif naturals == 1:
            if frozen:
                raise _frozen_pile_error(rank)
            if not rules.pile_take_with_wild:
                raise refuse("pile-take-cards.pair")
        shape: GroupShape | None = None
        melded = [top, *faces]
        if existing is not None:
            check_addition(rules, self.melds[team][existing], melded)
        else:
            shape = group_shape(rules, melded)
        if listed:
            return used, existing, shape
        # consequences: the initial meld and the cards left afterwards
        top_is_red = is_red_three(top)  # never, in practice: a red three is never discarded
        rest_to_hand = len(self.pile) - 1 - (self._pile_counts()[1] - top_is_red)
        hand_after = [c for c in self.hands[seat] if c not in used]
        points = self.t.initial_points + sum(map(rules.card_values.__getitem__, melded))
        canastas_after = self.canastas(team)
        if existing is not None:
            m = self.melds[team][existing]
            if m.size + len(melded) >= rules.canasta_size and not m.is_canasta(rules):
                canastas_after += 1
        if not self.opened[team] and seat not in self.hidden_hands:
            # the top card and the hand must reach the minimum
            team_melds = self._meld_counts(team)
            if existing is not None:
                m = self.melds[team][existing]
                team_melds[rank] = self._counts_of(
                    rank, m.naturals + naturals + 1, m.wilds + len(faces) - naturals
                )
            else:
                assert shape is not None
                team_melds[rank] = self._counts_of(rank, shape.naturals, shape.wilds)
            counts = HandCounts.of(rules, self.faces(hand_after))
            keep = max(0, 2 - rest_to_hand)
            enough = self._minimum(team) - points  # below it, the value is exact
            reachable = points + best_lay_value(rules, counts, team_melds, keep, (), enough)
            if reachable < self._minimum(team) and not rest_to_hand:
                # nothing else comes to the hand: going out may lay it all (RULES.md §Going out)
                out = self._lay_out_value(counts, team_melds, canastas_after)
                reachable = max(reachable, points + out) if out is not None else reachable
            if reachable < self._minimum(team):
                raise refuse(
                    "initial-meld-too-low.pile", minimum=self._minimum(team), reachable=reachable
                )
        if points >= self._minimum(team) or self.opened[team]:
            left = len(hand_after) + rest_to_hand
            if left <= 1:
                left += self._first_canasta_cards(canastas_after)

            def after() -> tuple[list[int], dict[int, MeldCounts]]:
                face = self.deck.face
                cards = [*self.faces(hand_after), *(face[c] for c in self.pile[:-1])]
                team_melds = self._meld_counts(team)
                naturals = sum(1 for f in melded if not is_wild(f))
                self._changed_group(
                    team_melds, team, (existing, rank, naturals, len(melded) - naturals)
                )
                return [f for f in cards if f not in RED_THREE_FACES], team_melds

            def sequences() -> list[tuple[int, int, int]]:
                # a pile put on a sequence (Bolivia): that one is left out (not extended)
                onto = -1 if existing is None else existing
                if onto >= 0 and self.melds[team][onto].kind is not SEQUENCE_KIND:
                    onto = -1
                return self._open_sequences(team, skip=onto, this_turn=False)

            self._check_cards_left_after_take(left, canastas_after, after, sequences)
        return used, existing, shape

    def _pile_targets(self, team: int, top: int) -> list[int]:
        """The team's melds the top card could go on, by kind and rank or suit (not yet checked
        for room): groups of its rank, and with ``pile_onto_sequence`` its suit's sequences that
        it continues at either end (a card of the suit that continues neither end fits none:
        RULES.md section 5, "adding the top card to one of the team's melds")."""
        rank = rank_of(top)
        onto_runs = self.rules.pile_onto_sequence
        position = run_position(rank)
        return [
            i
            for i, m in enumerate(self.melds[team])
            if (m.kind is GROUP_KIND and m.rank == rank)
            or (
                onto_runs
                and m.kind is SEQUENCE_KIND
                and m.suit == suit_of(top)
                and position >= 0
                and (position == m.low - 1 or position == m.high + 1)
            )
        ]

    def _only_meld_for_top(self, team: int, top: int) -> int | None:
        """A plain ``take-pile`` where several groups of a rank may exist: the one meld the top
        card could go on, or a refusal that asks to name it."""
        fitting = self._pile_targets(team, top)
        if len(fitting) > 1:
            raise refuse("pile-take-cards.which-meld", count=len(fitting), card=face_text(top))
        return fitting[0] if fitting else None

    def _check_cards_left(self, cards_after: int, canastas_after: int) -> None:
        """With one card or none left the player can only go out: is that allowed?"""
        rules = self.rules
        if cards_after > 1:
            return
        if not rules.going_out_allowed:
            raise refuse("no-going-out")
        if canastas_after < rules.canastas_to_go_out:
            raise refuse("must-keep-a-card")

    def _check_cards_left_after_take(
        self,
        cards_after: int,
        canastas_after: int,
        after: Callable[[], tuple[list[int], dict[int, MeldCounts]]],
        sequences: Callable[[], list[tuple[int, int, int]]],
    ) -> None:
        """``_check_cards_left`` after a take of the pile or its top card: a last card left may
        still be laid, or discarded after merging groups of a rank (Samba), to complete the
        canastas needed to go out. ``after`` gives the faces of the hand after the take and the
        team's groups as the planner then sees them, ``sequences`` its sequences that may then
        still grow (both asked only when needed); for a hand held as
        stand-ins whether the last card can go is the hand-end audit's to check."""
        rules = self.rules
        needed = rules.canastas_to_go_out
        if cards_after == 1 and rules.going_out_allowed and canastas_after < needed:
            if self.turn in self.hidden_hands:
                canastas_after = needed
            else:
                hand, team_melds = after()
                sequences_after = sequences()
                counts = HandCounts.of(rules, hand)
                if self._can_finish(
                    counts, team_melds, sequences_after, canastas_after, last_card=True
                ):
                    canastas_after = needed
        self._check_cards_left(cards_after, canastas_after)

    def _team_meld(self, team: int, index: int) -> int:
        if not 0 <= index < len(self.melds[team]):
            raise refuse("no-such-meld", meld=index)
        return index

    # ------------------------------------------------------------------ take the top card only
    def _plan_take_top(self, action: TakeTop, listed: bool = False) -> None:
        """Samba: the top card alone extends one of the team's sequences; the rest stays.
        ``listed``: the take is legal, the guard on the cards left is skipped."""
        self._require_phase(DRAW_PHASE)
        rules, seat = self.rules, self.turn
        team = self.team_map[seat]
        if not rules.take_top_to_sequence:
            raise refuse("not-in-this-game.take-top")
        if not self.pile:
            raise refuse("pile-empty")
        meld = self.melds[team][self._team_meld(team, action.meld)]
        if meld.kind is not SEQUENCE_KIND:
            raise refuse("not-a-sequence.top-card")
        top = self.deck.face[self.pile[-1]]
        check_addition(rules, meld, [top])
        if listed:
            return
        becomes = meld.size + 1 >= rules.canasta_size and not meld.is_canasta(rules)
        self._check_cards_left_after_take(
            len(self.hands[seat]),
            self.canastas(team) + becomes,
            lambda: (self.hand_faces(seat), self._meld_counts(team)),
            lambda: self._grown_sequences(team, action.meld, top),
        )

    def _grown_sequences(self, team: int, index: int, face: int) -> list[tuple[int, int, int]]:
        """The team's sequences that may still grow once ``face`` extends its sequence
        ``index`` (which is left out if it is then full)."""
        m = self.melds[team][index]
        sequences = self._open_sequences(team, skip=index, this_turn=False)
        position = run_position(face % 13)
        low, high = min(m.low, position), max(m.high, position)
        if high - low + 1 < self.rules.sequence_max:
            sequences.append((m.suit, low, high))
        return sequences

    def _do_take_top(self, action: TakeTop, listed: bool = False) -> None:
        self._plan_take_top(action, listed)
        seat, team = self.turn, self.team_map[self.turn]
        top_card = self.pile.pop()
        self._lay(seat, team, [top_card], action.meld, None)
        self.t.drew = "pile"
        self.phase = PLAY_PHASE
        self._after_lay(seat, team)

    def _do_take_pile(self, action: TakePile, listed: bool = False) -> None:
        used, existing, shape = self._plan_take_pile(action, listed)
        self._form_partnership(self.turn)
        seat, team = self.turn, self.team_map[self.turn]
        top_card = self.pile.pop()
        for c in used:
            self.hands[seat].remove(c)
        self._unshow(seat, used)
        cards = [top_card, *used]
        self._lay(seat, team, cards, existing, shape)
        self.t.pending_pile = self.pile
        self.pile = []
        self.pile_frozen_below = False
        self.t.drew = "pile"
        self.phase = PILE_PENDING_PHASE
        self._after_lay(seat, team)

    def _unshow(self, seat: int, cards: Iterable[int]) -> None:
        """``seat`` played ``cards`` from its hand (``canasta_net.shown.after_play``)."""
        if self.shown[seat]:
            face = self.deck.face
            self.shown = shown.after_play(self.shown, seat, (face[c] for c in cards))

    def _set_shown(self, seat: int, faces: tuple[int, ...]) -> None:
        self.shown = shown.with_faces(self.shown, seat, faces)

    def _pick_up_pile(self, seat: int) -> None:
        face = self.deck.face
        for c in self.t.pending_pile:
            if is_red_three(face[c]):
                self._lay_red_three(seat, c)
            else:
                self.hands[seat].append(c)
        taken = tuple(face[c] for c in self.t.pending_pile if not is_red_three(face[c]))
        self._set_shown(seat, self.shown[seat] + taken)
        if self._turn_shared:
            self._own_turn()
        self.t.pending_pile = []
        self.phase = PLAY_PHASE

    # ------------------------------------------------------------------ meld and add
    def _lay(
        self,
        seat: int,
        team: int,
        cards: list[int],
        existing: int | None,
        shape: GroupShape | None,
    ) -> None:
        rules = self.rules
        faces = self.faces(cards)
        if self._turn_shared:  # the turn's state changes below (and after, as the lay's caller)
            self._own_turn()
        if existing is not None:
            m = self._changing_meld(team, existing)
            naturals, wilds, low, high = check_addition(rules, m, faces)
            m.cards.extend(cards)
            m.faces.extend(faces)
            m.naturals += naturals
            m.wilds += wilds
            if m.kind is SEQUENCE_KIND:
                m.low, m.high = low, high
                m.rank = rank_at(low)
            if m.laid_turn != self.turn_no:
                self.t.added_to_old = True
        else:
            assert shape is not None
            self.meld_version = next(_MELD_VERSIONS)
            if self._melds_shared:
                self._own_melds()
            self.melds[team].append(
                TableMeld(
                    shape.kind,
                    shape.rank,
                    list(cards),
                    shape.naturals,
                    shape.wilds,
                    self.turn_no,
                    seat,
                    list(faces),
                    shape.suit,
                    shape.low,
                    shape.high,
                )
            )
        if not self.opened[team]:
            self.t.initial_points += sum(map(rules.card_values.__getitem__, faces))
        self.t.laid = True

    def _after_lay(self, seat: int, team: int) -> None:
        if not self.opened[team] and self.t.initial_points >= self._minimum(team):
            self._set_opened(team)
        if (
            self.rules.first_canasta_bonus_cards
            and not self.canasta_bonus_given
            and self.canastas(team)
        ):
            self._give_first_canasta_bonus(seat)
        if self.phase is PILE_PENDING_PHASE and self.opened[team]:
            self._pick_up_pile(seat)
        if self.phase is PLAY_PHASE and not self.hands[seat]:
            self._go_out(seat)

    def _first_canasta_cards(self, canastas_after: int) -> int:
        """How many cards a lay that leaves the team ``canastas_after`` canastas brings from the
        stock as the hand's first-canasta bonus (Bolivia; 0 elsewhere or once given)."""
        bonus = self.rules.first_canasta_bonus_cards
        if not bonus or self.canasta_bonus_given or not canastas_after:
            return 0
        if self.hidden_hands:  # the stock is hidden too: the audit counts its red threes
            return min(bonus, len(self.stock))
        face = self.deck.face
        return min(bonus, sum(1 for c in self.stock if not is_red_three(face[c])))

    def _give_first_canasta_bonus(self, seat: int) -> None:
        """Bolivia: the first canasta of the hand brings the top cards of the stock."""
        self.canasta_bonus_given = True
        face = self.deck.face
        for _ in range(self.rules.first_canasta_bonus_cards):
            while self.stock:
                card = self.stock.pop()
                if is_red_three(face[card]):
                    self._lay_red_three(seat, card)
                    continue  # laid, and replaced by the next card
                self.hands[seat].append(card)
                break

    def _plan_meld(self, action: Meld, listed: bool = False) -> tuple[list[int], GroupShape]:
        self._require_phase(PLAY_PHASE, PILE_PENDING_PHASE)
        rules, seat = self.rules, self.turn
        used = self._take_from_hand(seat, action.cards)
        faces = self.faces(used)
        shape = group_shape(rules, faces)
        if listed:
            return used, shape
        hand_after = [c for c in self.hands[seat] if c not in used]
        self._check_new_meld(
            faces, shape, len(hand_after), lambda: HandCounts.of(rules, self.faces(hand_after))
        )
        return used, shape

    def _check_new_meld(
        self,
        faces: Sequence[int],
        shape: GroupShape,
        cards_left: int,
        counts_after: Callable[[], HandCounts],
    ) -> None:
        """The checks of a new meld of ``faces`` (from the hand, of that ``shape``) that depend on
        the position: a rank already melded, and the guards after the lay."""
        rules, seat = self.rules, self.turn
        team = self.team_map[seat]
        extra = self._pending_pile_to_hand()
        if shape.kind is BLACK_THREES_KIND:
            if rules.black_threes_only_going_out and not self._black_threes_go_out(
                team, cards_left, extra, counts_after
            ):
                raise refuse("black-threes-only-going-out")
        elif (
            shape.kind is GROUP_KIND
            and rules.one_group_per_rank
            and self.team_meld_of_rank(team, shape.rank) is not None
        ):
            raise refuse("meld-rank-exists", rank=RANK_NAMES[shape.rank])
        is_canasta = shape.kind is not BLACK_THREES_KIND and len(faces) >= rules.canasta_size
        points = self.t.initial_points + (
            0 if self.opened[team] else sum(map(rules.card_values.__getitem__, faces))
        )

        def melds_after() -> tuple[dict[int, MeldCounts], list[tuple[int, int, int]]]:
            team_melds = self._meld_counts(team, only_this_turn=not self.opened[team])
            if shape.kind is GROUP_KIND:
                self._changed_group(
                    team_melds, team, (None, shape.rank, shape.naturals, shape.wilds)
                )
            elif shape.kind is WILDS_KIND and WILD_MELD not in team_melds:
                team_melds[WILD_MELD] = self._counts_of(WILD_MELD, 0, shape.wilds)
            sequences = self._open_sequences(team, this_turn=not self.opened[team])
            if shape.kind is SEQUENCE_KIND and len(faces) < rules.sequence_max:
                sequences.append((shape.suit, shape.low, shape.high))
            return team_melds, sequences

        self._check_after_lay(
            cards_left,
            counts_after,
            melds_after,
            lambda: self.canastas(team) + (1 if is_canasta else 0),
            points,
            lambda: is_canasta or self._own_canasta_this_turn(team),
            extra,
        )

    def _black_threes_go_out(
        self, team: int, cards_left: int, extra: int, counts_after: Callable[[], HandCounts]
    ) -> bool:
        """Whether black threes may go down now: the player goes out this turn. Either the lay
        leaves at most the discard and the team has its canastas, or the rest of the hand can
        still be laid out so; then the player is bound to go out. A team that has not melded
        goes out so only concealed, after a draw from the stock (RULES.md §1: the minimum is
        then not needed), laying out with its melds of this turn."""
        rules = self.rules
        needed = rules.canastas_to_go_out
        canastas = self.canastas(team)
        opened = self.opened[team]
        if cards_left + extra <= 1:
            if canastas >= needed:
                return True
            if cards_left != 1 or extra or not rules.going_out_allowed:
                return False
            if self.turn in self.hidden_hands:
                return True  # the last card may be laid: whether it can is the audit's
            # the last card may be laid, or discarded after merging groups of a rank (Samba)
            melds = self._meld_counts(team, only_this_turn=not opened)
            sequences = self._open_sequences(team, this_turn=not opened)
            return self._can_finish(counts_after(), melds, sequences, canastas, last_card=True)
        if extra or not rules.going_out_allowed:
            return False
        if not opened and not (self.t.drew == "stock" and self._could_go_concealed(self.turn)):
            return False
        if self.t.permission is False:
            return False
        if self.turn in self.hidden_hands:
            return True  # whether the rest lays out is the hand-end audit's to check
        melds = self._meld_counts(team, only_this_turn=not opened)
        sequences = self._open_sequences(team, this_turn=not opened)
        return self._can_finish(counts_after(), melds, sequences, canastas)

    @property
    def _must_go_out(self) -> bool:
        """The player is bound to go out this turn (the partner said yes, or black threes)."""
        return self.t.permission is True or self.t.black_threes

    def _must_go_out_refusal(self) -> IllegalAction:
        if self.t.permission is True:
            return refuse("must-go-out")
        return refuse("must-go-out.black-threes")

    def _own_canasta_this_turn(self, team: int) -> bool:
        return any(
            m.laid_turn == self.turn_no and m.laid_by == self.turn and m.is_canasta(self.rules)
            for m in self.melds[team]
        )

    def _do_meld(self, action: Meld, listed: bool = False) -> None:
        used, shape = self._plan_meld(action, listed)
        seat, team = self.turn, self.team_map[self.turn]
        for c in used:
            self.hands[seat].remove(c)
        self._unshow(seat, used)
        self._lay(seat, team, used, None, shape)
        if shape.kind is BLACK_THREES_KIND and self.rules.black_threes_only_going_out:
            self.t.black_threes = True
        self._after_lay(seat, team)

    def _plan_add(self, action: AddToMeld, listed: bool = False) -> list[int]:
        self._require_phase(PLAY_PHASE, PILE_PENDING_PHASE)
        rules, seat = self.rules, self.turn
        team = self.team_map[seat]
        meld = self.melds[team][self._team_meld(team, action.meld)]
        if not self.opened[team] and meld.laid_turn != self.turn_no:
            raise refuse("initial-meld-too-low.first")  # pragma: no cover - no older melds
        used = self._take_from_hand(seat, action.cards)
        if listed:
            return used  # ``_lay`` checks the addition itself as it makes it
        faces = self.faces(used)
        hand_after = [c for c in self.hands[seat] if c not in used]
        self._check_addition(
            action.meld,
            faces,
            len(hand_after),
            lambda: HandCounts.of(rules, self.faces(hand_after)),
        )
        return used

    def _check_addition(
        self,
        index: int,
        faces: Sequence[int],
        cards_left: int,
        counts_after: Callable[[], HandCounts],
    ) -> None:
        """The checks of adding ``faces`` (from the hand) to the team's meld ``index``: the meld's
        own rules, then the guards after the lay."""
        rules, seat = self.rules, self.turn
        team = self.team_map[seat]
        meld = self.melds[team][index]
        naturals, wilds, low, high = check_addition(rules, meld, faces)
        extra = self._pending_pile_to_hand()
        becomes_canasta = meld.size < rules.canasta_size <= meld.size + len(faces)
        points = self.t.initial_points + (
            0 if self.opened[team] else sum(map(rules.card_values.__getitem__, faces))
        )

        def own() -> bool:
            return self._own_canasta_this_turn(team) or (
                becomes_canasta and meld.laid_turn == self.turn_no and meld.laid_by == seat
            )

        def melds_after() -> tuple[dict[int, MeldCounts], list[tuple[int, int, int]]]:
            team_melds = self._meld_counts(team, only_this_turn=not self.opened[team])
            if meld.kind is GROUP_KIND:
                self._changed_group(team_melds, team, (index, meld.rank, naturals, wilds))
            elif meld.kind is WILDS_KIND:
                team_melds[WILD_MELD] = self._counts_of(WILD_MELD, 0, meld.wilds + wilds)
            sequences = self._open_sequences(team, skip=index, this_turn=not self.opened[team])
            if meld.kind is SEQUENCE_KIND and high - low + 1 < rules.sequence_max:
                sequences.append((meld.suit, low, high))
            return team_melds, sequences

        self._check_after_lay(
            cards_left,
            counts_after,
            melds_after,
            lambda: self.canastas(team) + becomes_canasta,
            points,
            own,
            extra,
            adds_to_old=meld.laid_turn != self.turn_no,
        )

    # ------------------------------------------------------------------ merging two groups
    def _plan_merge(self, action: MergeMelds, listed: bool = False) -> None:
        """Samba: two groups of one rank become one (it may make a canasta). ``listed``: the
        merge is legal, the guard on going out is skipped."""
        self._require_phase(PLAY_PHASE)
        rules, team = self.rules, self.team_map[self.turn]
        if not rules.merge_groups:
            raise refuse("not-in-this-game.merge")
        if not self.opened[team]:
            raise refuse("initial-meld-too-low.merge")
        first = self.melds[team][self._team_meld(team, action.first)]
        second = self.melds[team][self._team_meld(team, action.second)]
        if action.first == action.second:
            raise refuse("no-such-meld.merge-same")
        if (
            first.kind is not GROUP_KIND
            or second.kind is not GROUP_KIND
            or first.rank != second.rank
        ):
            raise refuse("wrong-rank.merge")
        if first.is_closed(rules) or second.is_closed(rules):
            raise refuse("meld-closed.merge")
        if not rules.wilds_on_canasta and (
            (first.is_canasta(rules) and second.wilds) or (second.is_canasta(rules) and first.wilds)
        ):
            raise refuse("wild-on-canasta")
        if rules.max_meld_size and first.size + second.size > rules.max_meld_size:
            raise refuse("meld-too-large.merge")
        check_wild_balance(rules, first.naturals + second.naturals, first.wilds + second.wilds)
        if self._must_go_out and not listed and self.turn not in self.hidden_hands:
            # bound to go out: the merge must leave a way out (for a hand held as stand-ins,
            # whether it does is the hand-end audit's to check, as for the other guards)
            trial = self.copy()
            trial._merge(action)
            if not trial.can_go_out():
                raise self._must_go_out_refusal()

    def _do_merge(self, action: MergeMelds, listed: bool = False) -> None:
        self._plan_merge(action, listed)
        self._merge(action)

    def _merge(self, action: MergeMelds) -> None:
        """Make a checked merge (``_plan_merge``)."""
        team = self.team_map[self.turn]
        first, second = self._changing_meld(team, action.first), self.melds[team][action.second]
        first.cards.extend(second.cards)
        first.faces.extend(second.faces)
        first.naturals += second.naturals
        first.wilds += second.wilds
        first.laid_turn = min(first.laid_turn, second.laid_turn)
        del self.melds[team][action.second]  # owned: _changing_meld above

    def _do_add(self, action: AddToMeld, listed: bool = False) -> None:
        used = self._plan_add(action, listed)
        seat, team = self.turn, self.team_map[self.turn]
        for c in used:
            self.hands[seat].remove(c)
        self._unshow(seat, used)
        self._lay(seat, team, used, action.meld, None)
        self._after_lay(seat, team)

    # ------------------------------------------------------------------ discard and going out
    def _check_discard(self, action: Discard) -> int:
        if self.phase is not PLAY_PHASE:
            raise refuse("wrong-phase", phase=self.phase.value)
        rules, seat = self.rules, self.turn
        team = self.team_map[seat]
        if action.card in RED_THREE_FACES:
            raise refuse("cannot-discard-three")
        (card,) = self._take_from_hand(seat, (action.card,))
        left = len(self.hands[seat]) - 1
        pending = 0 < self.t.initial_points < self._minimum(team) and not self.opened[team]
        if left == 0:
            if not rules.going_out_allowed:
                raise refuse("no-going-out.discard")
            if self.t.permission is False:
                raise refuse("may-not-go-out.discard")
            if self.canastas(team) < rules.canastas_to_go_out:
                need = rules.canastas_to_go_out
                raise (
                    refuse("no-canasta-to-go-out")
                    if need == 1
                    else refuse("no-canasta-to-go-out.many", count=need)
                )
            if pending and not (self._could_go_concealed(seat) and self.t.drew == "stock"):
                raise self._too_low(team)
        else:
            if self._must_go_out:
                raise self._must_go_out_refusal()
            if pending:
                raise self._too_low(team)
        return card

    def _do_discard(self, action: Discard, listed: bool = False) -> None:
        if listed:
            (card,) = self._take_from_hand(self.turn, (action.card,))
        else:
            card = self._check_discard(action)
        seat = self.turn
        self.hands[seat].remove(card)
        self._unshow(seat, (card,))
        self.pile.append(card)
        if not self.hands[seat]:
            self._go_out(seat)
            return
        self._next_turn()

    def _next_turn(self) -> None:
        seat = self.turn
        if self.t.laid and not self.has_melded[seat]:
            self._set_has_melded(seat)
        self.turn = (seat + 1) % self.players
        self.turn_no += 1
        self.t = TurnState()
        self._turn_shared = False
        self.phase = DRAW_PHASE

    def _go_out(self, seat: int) -> None:
        self._form_partnership(seat)  # going out before the pile was taken: the lone hand
        rules, team = self.rules, self.team_map[seat]
        concealed = self._could_go_concealed(seat) and (
            self._own_canasta_this_turn(team) or not rules.concealed_requires_own_canasta
        )
        if concealed and rules.hand_canasta_bonus and self._own_canasta_this_turn(team):
            bonus = rules.hand_canasta_bonus
        elif concealed:
            bonus = rules.concealed_bonus
        else:
            bonus = rules.going_out_bonus
        if self.t.laid and not self.has_melded[seat]:
            self._set_has_melded(seat)
        self._finish(HandEnd(EndReason.WENT_OUT, seat, bonus))

    def _finish(self, end: HandEnd) -> None:
        self.end = end
        self.phase = OVER_PHASE

    # ------------------------------------------------------------------ asking the partner
    def _check_ask(self) -> None:
        self._require_phase(PLAY_PHASE)
        rules, seat = self.rules, self.turn
        if rules.partner_of(seat) is None:
            raise refuse("ask-not-allowed.no-partner")
        if self.t.drew != "stock" or self.t.laid or self.t.permission is not None:
            raise refuse("ask-not-allowed.when")
        if len(self.hands[seat]) < 2:
            raise refuse("ask-not-allowed.one-card")
        if seat not in self.hidden_hands and not self.can_go_out():
            raise refuse("ask-not-allowed")

    def _ask_legal(self, hand: list[int], counted: list[HandCounts], groups: _HandGroups) -> bool:
        """``_check_ask`` without a refusal, where the play phase's candidates say the turn
        allows asking (``_play_extras``): ``hand`` is the faces of the hand (``groups``: as
        ``_hand_groups`` gives them), ``counted`` holds them counted once that was needed."""
        if len(hand) < 2:
            return False
        if self.turn in self.hidden_hands:
            return True
        rules, seat = self.rules, self.turn
        team = self.team_map[seat]
        if not rules.going_out_allowed:
            return False
        opened = self.opened[team]
        if not opened and not self._could_go_concealed(seat):
            return False
        if self._surely_stuck(groups, team, opened):
            return False  # what the planner (can_lay_out) would answer, without counting
        if not counted:
            counted.append(HandCounts.of(rules, hand))
        melds = self._meld_counts(team) if opened else {}
        sequences = self._open_sequences(team, this_turn=False) if opened else []
        return self._can_finish(counted[0], melds, sequences, self.canastas(team))

    def _black_threes_stuck(
        self, faces: tuple[int, ...], hand: list[int], groups: _HandGroups
    ) -> bool:
        """Whether a meld of black threes ``faces`` is refused because the rest of the hand
        surely cannot be laid out (``_black_threes_go_out``'s planner question, answered by
        ``_surely_stuck``); False where that question is not the one asked."""
        rules, seat = self.rules, self.turn
        team = self.team_map[seat]
        if (
            not faces
            or not all(is_black_three(f) for f in faces)
            or not rules.black_threes_only_going_out
            or len(hand) - len(faces) <= 1
            or self.t.pending_pile
            or not self.opened[team]
            or not rules.going_out_allowed
            or self.t.permission is False
            or seat in self.hidden_hands
        ):
            return False
        naturals_by_rank, twos, jokers = groups
        rest = dict(naturals_by_rank)
        threes = list(rest.get(THREE, ()))
        for f in faces:
            threes.remove(f)
        rest[THREE] = threes
        return self._surely_stuck((rest, twos, jokers), team, True)

    def _surely_stuck(self, groups: _HandGroups, team: int, opened: bool) -> bool:
        """Whether a hand (``groups``: its ``_hand_groups``) surely cannot be laid out but for a
        discard: what ``can_lay_out`` then answers no to. Two cards no meld could take (red
        threes, fewer than three black threes, single naturals of a rank the team, if it has
        opened, has no open group of, and that lie in no run of the hand long enough to be a
        sequence, nor could extend an open sequence of the team) are one too many; and the
        canastas missing to go out need as many ranks that
        could still make one (the team's open group and the hand's naturals of that rank, with
        every wild card of the hand; in Samba, as many as all the team's groups of the rank short
        of a canasta, the hand's naturals of it and its wild cards could fill) or runs that could
        (as many cards of a suit), or open sequences of the team that the hand's naturals at
        their ends could lengthen into canastas."""
        rules = self.rules
        naturals_by_rank, twos, jokers = groups
        melds = self.melds[team] if opened else []
        melded = {m.rank for m in melds if m.kind is GROUP_KIND and not m.is_closed(rules)}
        stranded = 0
        singles: list[int] = []  # single naturals stranded unless they extend a sequence
        for r, nat in naturals_by_rank.items():
            if r == THREE:
                reds = sum(1 for f in nat if f in RED_THREE_FACES)
                black_threes = len(nat) - reds
                stranded += reds + (black_threes if black_threes < 3 else 0)
            elif (
                len(nat) == 1
                and r not in melded
                and not (rules.sequences and self._in_a_run(nat[0], naturals_by_rank))
            ):
                stranded += 1
                singles.append(nat[0])
        if 1 < stranded <= len(singles) + 1 and rules.sequences and melds:
            reach, _ = self._sequence_reach(melds, naturals_by_rank)
            stranded -= sum(1 for f in singles if f in reach)
        if stranded > 1:
            return True
        if not rules.sequences:  # (with runs a pair may go into a sequence)
            pairs = sum(
                1
                for r, nat in naturals_by_rank.items()
                if len(nat) == 2 and r != THREE and r not in melded
            )
            if pairs > len(twos) + jokers:
                return True  # each pair needs a wild card (the planner's quick answer)
        missing = rules.canastas_to_go_out - self.canastas(team)
        if missing <= 0 or rules.wild_melds:
            return False
        short = rules.canasta_size - len(twos) - jokers  # cards a group needs besides wilds
        could = {
            r for r, nat in naturals_by_rank.items() if r != THREE and len(nat) >= short
        }  # new groups, and groups the team has of ranks the hand holds enough of
        if rules.merge_groups:
            # Samba: a rank's groups short of a canasta may be merged, and the hand's naturals
            # of a rank may make more than one canasta: at most all these cards, and every
            # wild card of the hand, in canastas of that rank
            cards = {r: len(nat) for r, nat in naturals_by_rank.items() if r != THREE}
            for m in melds:
                if m.kind is GROUP_KIND and not m.is_canasta(rules):
                    cards[m.rank] = cards.get(m.rank, 0) + m.size
            wilds = len(twos) + jokers
            could_make = sum((n + wilds) // rules.canasta_size for n in cards.values())
        else:
            for m in melds:
                if (
                    m.kind is GROUP_KIND
                    and not m.is_closed(rules)
                    and not m.is_canasta(rules)
                    and m.size + len(naturals_by_rank.get(m.rank, ())) >= short
                ):
                    could.add(m.rank)
            could_make = len(could)
        runs = 0  # sequences the hand could lay as canastas: at most its cards of a suit // size
        if rules.sequences:
            by_suit = [0, 0, 0, 0]
            for r, nat in naturals_by_rank.items():
                if r != THREE:  # every other natural has a run position
                    for f in nat:
                        by_suit[f // 13] += 1
            runs = sum(n // rules.canasta_size for n in by_suit)
            if could_make + runs < missing and melds:
                runs += self._sequence_reach(melds, naturals_by_rank)[1]
        return could_make + runs < missing

    def _sequence_reach(
        self, melds: Sequence[TableMeld], naturals_by_rank: dict[int, list[int]]
    ) -> tuple[set[int], int]:
        """The hand's naturals (``naturals_by_rank``) that could extend the open sequences among
        ``melds`` (in a run of the hand that touches one's end), and how many of these
        sequences they could lengthen into canastas."""
        rules = self.rules
        reach: set[int] = set()
        completed = 0
        open_sequences = [m for m in melds if m.kind is SEQUENCE_KIND and not m.is_closed(rules)]
        if not open_sequences:
            return reach, completed
        held = {f for r, nat in naturals_by_rank.items() if r != THREE for f in nat}
        for m in open_sequences:
            grown = m.size
            for step, start in ((-1, m.low - 1), (1, m.high + 1)):
                p = start
                while 0 <= p <= 10 and m.suit * 13 + rank_at(p) in held:
                    reach.add(m.suit * 13 + rank_at(p))
                    grown += 1
                    p += step
            completed += m.size < rules.canasta_size <= grown
        return reach, completed

    def _in_a_run(self, face: int, naturals_by_rank: dict[int, list[int]]) -> bool:
        """Whether the natural ``face`` lies in a run of the hand (``naturals_by_rank``) of its
        suit as long as a new sequence: the only way the planner lays it but in a group."""
        suit, position = face // 13, run_position(face % 13)

        def held(p: int) -> bool:
            return suit * 13 + rank_at(p) in naturals_by_rank.get(rank_at(p), ())

        low = high = position
        while low > 0 and held(low - 1):
            low -= 1
        while high < 10 and held(high + 1):
            high += 1
        return high - low + 1 >= self.rules.sequence_min

    def can_go_out(self) -> bool:
        """Whether the player to move could lay out the hand (discarding at most one card)."""
        rules, seat = self.rules, self.turn
        team = self.team_map[seat]
        if not rules.going_out_allowed:
            return False
        counts = HandCounts.of(rules, self.hand_faces(seat))
        opened = self.opened[team]
        melds = self._meld_counts(team) if opened else {}
        if not opened and not self._could_go_concealed(seat):
            return False
        sequences = self._open_sequences(team, this_turn=False) if opened else []
        return self._can_finish(counts, melds, sequences, self.canastas(team))

    def _can_finish(
        self,
        counts: HandCounts,
        melds: dict[int, MeldCounts],
        sequences: Sequence[tuple[int, int, int]],
        canastas: int,
        last_card: bool = False,
    ) -> bool:
        """Whether a hand (``counts``) can be laid out, all but at most a discard, leaving the team
        the canastas it needs to go out: ``can_lay_out`` with the team's groups as the planner
        sees them (``melds``; in Samba every group of a rank, which may be merged), its sequences
        that may still grow (``sequences``, which the hand's cards may extend) and the canastas
        it holds. ``last_card``: the hand is one card and the team lacks canastas, so
        discarding it can go out only where groups may be merged (elsewhere it must be laid)."""
        rules = self.rules
        leftover = 1 if rules.merge_groups or not last_card else 0
        return can_lay_out(
            rules, counts, melds, leftover, canastas, rules.canastas_to_go_out, sequences
        )

    # ------------------------------------------------------------------ legal actions
    def legal_actions(self) -> list[Action]:
        """Every legal action for the seat to move, one representative per equivalent choice.

        The list is kept with the position's key: :meth:`apply` makes a listed action (the same
        object) without checking it again while the position is the same. A caller's change to
        the list changes nothing of what is kept.
        """
        legal, checked = self._legal_actions()
        # kept where a listed move's check is more than a look-up (the key costs a little)
        self._listed = (self._listing_key(), tuple(legal)) if checked else None
        return legal

    def _legal_actions(self) -> tuple[list[Action], bool]:
        """:meth:`legal_actions`' list, worked out, and whether a draw, a pile take, a lay or
        "may I go out?" in it was listed after a check (not legal by construction).

        Suits never matter within a group, so of the melds that differ only in which suits of a
        rank (or which twos) they use, one is listed; :meth:`normalize` maps any action to its
        representative.

        The candidates are those ``random_legal_action`` draws from, in the same order; what
        they share is worked out once for the position (the hand's faces and counts, the play
        phase's discards and "may I go out?"), and a candidate legal by construction is not
        checked.
        """
        phase = self.phase
        if phase is OVER_PHASE:
            return [], False
        if phase is ASKED_PHASE:
            return list(ANSWERS), False
        face = self.deck.face
        hand = [face[c] for c in self.hands[self.turn]]  # ``hand_faces``
        counted: list[HandCounts] = []  # the hand counted, once a check needs it
        check_one = self._candidate_legal
        legal: list[Action] = []
        checked = False
        if phase is DRAW_PHASE:
            is_legal = self.is_legal
            for action, check in self._draw_candidates(hand):
                if check == LEGAL:
                    legal.append(action)
                elif (
                    is_legal(action)
                    if check == CHECK_ALL
                    else check_one(action, check, hand, counted)
                ):
                    legal.append(action)
                    checked = True
            return legal, checked
        groups = self._hand_groups(hand)
        checked = self._list_lays(legal, hand, counted, groups)
        if phase is PLAY_PHASE:
            discard_check, ask = self._play_checks(len(hand))
            orders = _orders_of(hand)  # the discards, as ``_play_extras`` gives them
            if discard_check == LEGAL:
                legal += [_DISCARD_AT_ORDER[o] for o in orders if o not in _RED_THREE_ORDERS]
            else:
                is_legal = self.is_legal
                legal += [d for d in map(_DISCARD_AT_ORDER.__getitem__, orders) if is_legal(d)]
            if ask and self._ask_legal(hand, counted, groups):
                legal.append(ASK_GO_OUT)
                checked = True
        return legal, checked

    def legal_lays(self) -> list[Action]:
        """The lays among :meth:`legal_actions` (new melds, additions, merges), in its order,
        without the rest: a caller weighing the lays against a discard need not list the
        discards (which are every face of the hand but a red three, unless a lay is pending or
        the player must go out). Empty where no lay may be made (the draw, an answer, the end).
        A lay of this list is checked in full by :meth:`apply`, as any move not listed by
        :meth:`legal_actions` is."""
        phase = self.phase
        if phase is not PLAY_PHASE and phase is not PILE_PENDING_PHASE:
            return []
        face = self.deck.face
        hand = [face[c] for c in self.hands[self.turn]]
        legal: list[Action] = []
        self._list_lays(legal, hand, [], self._hand_groups(hand))
        return legal

    def _list_lays(
        self, legal: list[Action], hand: list[int], counted: list[HandCounts], groups: _HandGroups
    ) -> bool:
        """Append the legal lays of ``hand`` (the hand to move; ``groups``: its
        ``_hand_groups``, ``counted``: as in ``_candidate_legal``) to ``legal``; whether one was
        listed after a check (see ``_legal_actions``)."""
        check_one = self._candidate_legal
        checked = False
        lays, merges = self._lay_candidates(hand, groups)
        initial: list[_InitialFacts | None] = []  # the initial meld's facts, once needed
        lay_actions = _LAY_ACTIONS
        for meld, faces, check in lays:
            action = lay_actions.get((meld, faces)) or _lay_of(meld, faces)
            if check == LEGAL:
                legal.append(action)
                continue
            if check == CHECK_GROUP:
                if not initial:
                    initial.append(self._initial_facts())
                facts = initial[0]
                if facts is not None:
                    if self._initial_group_legal(faces, hand, counted, facts):
                        legal.append(action)
                        checked = True
                    continue
            elif check == CHECK_THREES and self._black_threes_stuck(faces, hand, groups):
                continue  # "black-threes-only-going-out", without the planner
            if check_one(action, check, hand, counted):
                legal.append(action)
                checked = True
        for action, _check in merges:
            if self.is_legal(action):
                legal.append(action)
        return checked

    def random_legal_action(self, pick: Callable[[int], int]) -> Action | None:
        """A legal action drawn uniformly from :meth:`legal_actions` (None if there is none),
        checking only the candidates it draws. ``pick(n)`` must return a uniformly random index
        below ``n`` (``random.Random.randrange``).

        Candidates are drawn without replacement until one is legal: the first legal one of a
        random order is uniform among the legal ones, whatever the illegal ones are.
        """
        hand = self.hand_faces(self.turn)
        counts: list[HandCounts] = []
        candidates = self._candidates(hand)
        size = len(candidates)
        left: list[int] | None = None  # the indices not yet refused, once one is
        while size:
            k = pick(size)
            action, check = candidates.get(k if left is None else left[k])
            if check == LEGAL or self._candidate_legal(action, check, hand, counts):
                return action
            if left is None:
                left = list(range(size))
            left[k] = left[-1]
            left.pop()
            size -= 1
        return None

    def _candidates(self, hand: list[int]) -> _Candidates:
        """Every candidate action for the seat to move (``hand``: the faces of the hand of the
        player whose turn it is), each with how far it must still be checked."""
        if self.phase is OVER_PHASE:
            return _Candidates([])
        if self.phase is ASKED_PHASE:
            return _Candidates([(ANSWERS[0], LEGAL), (ANSWERS[1], LEGAL)])
        if self.phase is DRAW_PHASE:
            return _Candidates(self._draw_candidates(hand))
        lays, merges = self._lay_candidates(hand)
        candidates = _Candidates(merges, lays)
        if self.phase is PLAY_PHASE:
            candidates.discards, candidates.discard_check, candidates.ask = self._play_extras(hand)
        return candidates

    def _initial_facts(self) -> _InitialFacts | None:
        """What every new group toward the team's initial meld is checked against, worked out
        once a position (None where ``_initial_group_legal`` does not apply: the team has opened,
        the player must go out, or the hand is hidden)."""
        seat = self.turn
        team = self.team_map[seat]
        if self.opened[team] or self._must_go_out or seat in self.hidden_hands:
            return None
        extra = self._pending_pile_to_hand()
        t = self.t
        return _InitialFacts(
            extra=extra,
            minimum=self._minimum(team),
            melds=self._meld_counts(team, only_this_turn=True),
            sequences=self._open_sequences(team),
            canastas=self.canastas(team),
            melded=frozenset(m.rank for m in self.melds[team] if m.kind is GROUP_KIND),
            keep=2 if self.phase is PLAY_PHASE else max(0, 2 - extra),
            concealed=self.phase is PLAY_PHASE
            and t.drew == "stock"
            and self._could_go_concealed(seat),
            lay_out=not extra and t.permission is not False,
        )

    def _initial_group_legal(
        self, faces: tuple[int, ...], hand: list[int], counted: list[HandCounts], f: _InitialFacts
    ) -> bool:
        """Whether a new group of ``faces`` (of one rank, its naturals then its wild cards: valid
        by construction) is legal toward the team's initial meld: what ``_check_new_meld`` and
        ``_check_after_lay`` decide, with the position's facts ``f``. A lay that leaves at most
        one card is checked the full way."""
        rules = self.rules
        rank = faces[0] % 13
        if rules.one_group_per_rank and rank in f.melded:
            return False  # "meld-rank-exists" (the candidates leave such ranks out)
        cards_after = len(hand) - len(faces) + f.extra
        if cards_after <= 1:
            return self._candidate_legal(_lay_of(NEW_MELD, faces), CHECK_GROUP, hand, counted)
        points = self.t.initial_points + sum(map(rules.card_values.__getitem__, faces))
        if points >= f.minimum:
            return True  # the initial meld is made, and cards remain
        if f.possible is None:
            f.possible = self._initial_possible()
        if not f.possible:
            return False
        if not counted:
            counted.append(HandCounts.of(rules, hand))
        counts = counted[0].minus(faces)
        naturals = sum(1 for x in faces if not is_wild(x))
        melds = dict(f.melds)
        melds[rank] = self._counts_of(rank, naturals, len(faces) - naturals)
        enough = f.minimum - points
        if best_lay_value(rules, counts, melds, f.keep, f.sequences, enough) >= enough:
            return True
        canastas = f.canastas + (len(faces) >= rules.canasta_size)
        needed = rules.canastas_to_go_out
        if f.concealed and can_lay_out(rules, counts, melds, 1, canastas, needed, f.sequences):
            return True
        if f.lay_out:
            out = self._lay_out_value(counts, melds, canastas, f.sequences)
            return out is not None and points + out >= f.minimum
        return False

    def _play_extras(self, hand: list[int]) -> tuple[list[int], int, bool]:
        """The play phase's candidates after the lays: the faces of ``hand`` to discard (in
        listing order), how far a discard (but of a red three) must be checked, and whether to
        consider "may I go out?" (asking is then legal if ``_ask_legal`` says so)."""
        discard_check, ask = self._play_checks(len(hand))
        return [_FACE_AT_ORDER[o] for o in _orders_of(hand)], discard_check, ask

    def _play_checks(self, size: int) -> tuple[int, bool]:
        """``_play_extras`` but the discards, for a hand of ``size`` cards."""
        seat, t = self.turn, self.t
        pending = not self.opened[self.team_map[seat]] and t.initial_points > 0
        must_go_out = t.permission is True or t.black_threes  # ``_must_go_out``
        trusted = size >= 2 and not must_go_out and not pending
        ask = (
            t.drew == "stock"
            and not t.laid
            and t.permission is None
            and self.rules.partnerships  # ``partner_of`` is None without them
        )
        return LEGAL if trusted else CHECK_ALL, ask

    def _candidate_legal(
        self, action: Action, check: int, hand: list[int], counted: list[HandCounts]
    ) -> bool:
        """Whether a candidate is legal, checked as far as its construction (``check``) leaves
        open; ``hand`` is the faces of the hand, ``counted`` holds them counted once that was
        needed."""
        if check == CHECK_ALL or not isinstance(action, Meld | AddToMeld):
            return self.is_legal(action)
        if not counted:
            counted.append(HandCounts.of(self.rules, hand))
        counts, size, faces = counted[0], len(hand), action.cards
        try:
            if isinstance(action, AddToMeld):
                self._check_addition(
                    action.meld, faces, size - len(faces), lambda: counts.minus(faces)
                )
            else:
                if check == CHECK_GROUP:
                    naturals = sum(1 for f in faces if not is_wild(f))
                    shape = GroupShape(
                        GROUP_KIND, rank_of(faces[0]), naturals, len(faces) - naturals
                    )
                else:
                    shape = group_shape(self.rules, faces)
                self._check_new_meld(faces, shape, size - len(faces), lambda: counts.minus(faces))
        except IllegalAction:
            return False
        return True

    def _draw_candidates(self, hand: list[int]) -> list[tuple[Action, int]]:
        """Candidate draws and pile takes with ``hand`` (the faces of the hand of the player to
        move), each with how far it must still be checked: with a stock a draw is legal. Takes
        that are refused whatever else holds are left out: a pile frozen for the team takes only
        a natural pair, and the top card alone goes only on a meld of its rank."""
        out: list[tuple[Action, int]] = [(DRAW, LEGAL if self.stock else CHECK_ALL)]
        pile = self.pile
        if not pile:
            return out
        top = self.deck.face[pile[-1]]
        rank = top % 13
        if top == JOKER or rank in (TWO, THREE):  # ``is_wild``, ``is_three``
            return out
        rules, team = self.rules, self.team_map[self.turn]
        frozen = self.frozen_for(team)
        # the hand's naturals of the top card's rank (a joker's face is 52: rank 0, the ace's)
        nat = sorted([f for f in hand if f % 13 == rank and f != JOKER])
        targets: list[int | None] = [None]
        if not rules.one_group_per_rank:
            targets += self._pile_targets(team, top)
        elif frozen and len(nat) < 2:
            targets = []  # a frozen pile takes only a natural pair (no meld is named)
        if targets:
            self._take_candidates(out, team, top, frozen, nat, hand, targets)
        if rules.take_top_to_sequence:
            for i, m in enumerate(self.melds[team]):
                if m.kind is SEQUENCE_KIND:
                    out.append((TakeTop(i), CHECK_ALL))
        return out

    def _take_candidates(
        self,
        out: list[tuple[Action, int]],
        team: int,
        top: int,
        frozen: bool,
        nat: list[int],
        hand: list[int],
        targets: list[int | None],
    ) -> None:
        """Append to ``out`` the candidate pile takes onto each of ``targets`` (None: the meld
        not named) of a top card ``top`` (a natural), ``frozen`` for the team, with the hand's
        naturals of its rank ``nat`` (sorted)."""
        rules = self.rules
        with_wild = bool(nat) and rules.pile_take_with_wild and not frozen
        jokers = with_wild and JOKER in hand
        twos = [f for f in hand if f % 13 == 1] if with_wild else []
        existing = self.team_meld_of_rank(team, top % 13)
        alone = not frozen and not (rules.one_group_per_rank and existing is None)
        size = len(hand)
        take_check = self._take_check
        for target in targets:
            if target is not None and self.melds[team][target].kind is SEQUENCE_KIND:
                out.append((_take_pile_of((), target), CHECK_ALL))  # the top card alone on it
                continue
            named = target is not None
            if named or (rules.one_group_per_rank and alone):
                check = CHECK_ALL if named else take_check(team, top, size, 0, 0, existing)
                out.append((_take_pile_of((), target), check))
            if len(nat) >= 2:
                check = CHECK_ALL if named else take_check(team, top, size, 2, 0, existing)
                out.append((_take_pile_of((nat[0], nat[1]), target), check))
            if jokers or twos:
                check = CHECK_ALL if named else take_check(team, top, size, 1, 1, existing)
                if jokers:
                    out.append((_take_pile_of((nat[0], JOKER), target), check))
                if twos:
                    out.append((_take_pile_of((nat[0], min(twos)), target), check))

    @staticmethod
    def _hand_groups(hand: list[int]) -> _HandGroups:
        """The hand's faces as the lays and going out see them: its naturals by rank (threes
        too; each list sorted), its twos (sorted), how many jokers."""
        naturals_by_rank: dict[int, list[int]] = {}
        twos_sorted: list[int] = []
        jokers = hand.count(JOKER)
        faces = sorted(hand)
        if jokers:  # the highest face: the last ones
            del faces[-jokers:]
        for f in faces:
            rank = f % 13
            if rank == 1:
                twos_sorted.append(f)
            else:
                same = naturals_by_rank.get(rank)
                if same is None:
                    naturals_by_rank[rank] = [f]
                else:
                    same.append(f)
        return naturals_by_rank, twos_sorted, jokers

    def _take_check(
        self, team: int, top: int, size: int, naturals: int, wilds: int, existing: int | None
    ) -> int:
        """How far a take of the pile (the meld not named) must be checked, from a hand of
        ``size`` cards melding ``naturals`` naturals of the top card's rank and ``wilds`` wild
        cards with it (the candidates take the top card alone or with wild cards only from a
        pile not frozen for the team). Legal by construction for a team that has opened, with
        one group a rank and no meld size limit, when the hand keeps two cards or more and the
        cards make a new group or go on the team's group of that rank as ``_plan_take_pile``
        would find. ``existing``: ``team_meld_of_rank(team, rank_of(top))``."""
        rules = self.rules
        if (
            not self.opened[team]
            or not rules.one_group_per_rank
            or rules.max_meld_size
            or rules.sequences
            or size < 4  # at most two cards melded, two or more kept whatever the pile holds
        ):
            return CHECK_ALL
        if existing is None:
            if not naturals:
                return CHECK_ALL
            fits = 1 + naturals >= rules.min_naturals_in_group and wilds <= rules.max_wilds(
                1 + naturals
            )
            return LEGAL if fits else CHECK_ALL
        meld = self.melds[team][existing]
        if meld.is_canasta(rules) and (
            rules.completed_canasta_blocks_pile or (wilds and not rules.wilds_on_canasta)
        ):
            return CHECK_ALL
        fits = meld.wilds + wilds <= rules.max_wilds(meld.naturals + 1 + naturals)
        return LEGAL if fits else CHECK_ALL

    def _lay_candidates(
        self, hand: list[int], groups: _HandGroups | None = None
    ) -> tuple[list[_Lay], list[tuple[Action, int]]]:
        """Candidate lays from ``hand`` (the faces of the hand of the player to move), each with
        how far it must still be checked: additions and new melds as ``_Lay`` (built only when
        needed), then merges (the discards follow them: see ``_candidates``).

        Candidates are built valid as melds (CHECK_LAY, CHECK_GROUP); when nothing else can
        refuse them (the team has opened, no answer binds the player, two or more cards stay in
        the hand) they are LEGAL without a check, which is what makes listing cheap in the common
        case.
        """
        rules, seat = self.rules, self.turn
        team = self.team_map[seat]
        opened = self.opened[team]
        size = len(hand)
        if groups is None:
            groups = self._hand_groups(hand)
        naturals_by_rank, twos_sorted, jokers = groups
        wild_choices = (
            _wild_choices(jokers, tuple(twos_sorted), rules.max_wilds_in_group)
            if jokers or twos_sorted
            else _NO_WILD_CHOICES
        )
        has_wilds = len(wild_choices) > 1
        cap = rules.max_meld_size or 1 << 20
        max_wilds = rules.max_wilds_table  # a group's naturals are at most the deck's
        simple = (
            opened
            and self.t.permission is None
            and not self.t.black_threes
            and self.phase is PLAY_PHASE
        )
        most_legal = size - 2 if simple else -1  # lays of at most this many cards are legal
        out: list[_Lay] = []
        merges: list[tuple[Action, int]] = []
        runs: list[dict[int, int]] | None = None  # the hand by suit and run position, once needed
        # additions to the team's melds
        turn_no, max_size, canasta_size = self.turn_no, rules.max_meld_size, rules.canasta_size
        for i, m in enumerate(self.melds[team]):
            kind = m.kind
            if not opened and m.laid_turn != turn_no:
                continue
            if kind is GROUP_KIND:  # closed only at Bolivia's size limit (``is_closed``)
                nat = naturals_by_rank.get(m.rank, ())
                size_m = len(m.cards)
                if (not nat and not has_wilds) or (max_size and size_m >= max_size):
                    continue
                room = cap - size_m
                wilds_allowed = rules.wilds_on_canasta or size_m < canasta_size  # ``is_canasta``
                if not has_wilds or not wilds_allowed:  # naturals only, keeping the balance
                    for n in range(1, min(len(nat), room) + 1):
                        if not wilds_allowed or max_wilds[m.naturals + n] >= m.wilds:
                            check = LEGAL if n <= most_legal else CHECK_LAY
                            out.append((i, tuple(nat[:n]), check))
                    continue
                m_naturals, m_wilds = m.naturals, m.wilds
                for n in range(min(len(nat), room) + 1):
                    limit = min(max_wilds[m_naturals + n] - m_wilds, room - n)
                    if limit < 0:
                        continue  # not even the first choice (no wild card) fits
                    naturals = tuple(nat[:n])
                    for wilds, wild_faces in wild_choices:
                        if wilds <= limit and n + wilds:
                            check = LEGAL if n + wilds <= most_legal else CHECK_LAY
                            out.append((i, naturals + wild_faces, check))
                continue
            if m.is_closed(rules):
                continue
            room = cap - len(m.cards)
            if kind is SEQUENCE_KIND:
                if runs is None:
                    runs = self._runs_in_hand(hand)
                for faces in self._sequence_extensions(m, runs[m.suit]):
                    out.append((i, faces, LEGAL if len(faces) <= most_legal else CHECK_LAY))
            elif kind is WILDS_KIND:
                for faces in self._wild_sets(twos_sorted, jokers, 1, room):
                    out.append((i, faces, LEGAL if len(faces) <= most_legal else CHECK_LAY))
        # new groups
        melded = (
            {m.rank for m in self.melds[team] if m.kind is GROUP_KIND}
            if rules.one_group_per_rank
            else set()
        )
        # the fewest naturals of a new group: three without wild cards, else two (or the rule's)
        least = max(2 if has_wilds else 3, rules.min_naturals_in_group)
        for r, nat in naturals_by_rank.items():
            if len(nat) < least or r == THREE or r in melded:
                continue
            if not has_wilds:
                for n in range(least, min(len(nat), cap) + 1):
                    if max_wilds[n] >= 0:
                        check = LEGAL if n <= most_legal else CHECK_GROUP
                        out.append((NEW_MELD, tuple(nat[:n]), check))
                continue
            for n in range(least, min(len(nat), cap) + 1):
                limit = min(max_wilds[n], cap - n)
                naturals = tuple(nat[:n])
                for wilds, wild_faces in wild_choices:
                    if wilds <= limit and n + wilds >= 3:
                        check = LEGAL if n + wilds <= most_legal else CHECK_GROUP
                        out.append((NEW_MELD, naturals + wild_faces, check))
        if rules.sequences:
            for faces in self._new_sequences(self._runs_in_hand(hand) if runs is None else runs):
                out.append((NEW_MELD, faces, LEGAL if len(faces) <= most_legal else CHECK_LAY))
        if rules.wild_melds:
            for faces in self._wild_sets(twos_sorted, jokers, 3, cap):
                out.append((NEW_MELD, faces, LEGAL if len(faces) <= most_legal else CHECK_LAY))
        threes = naturals_by_rank.get(THREE, ())
        if len(threes) >= 3:
            b3 = [f for f in threes if is_black_three(f)]
            for n in range(3, min(len(b3), 4) + 1):
                out.append((NEW_MELD, tuple(b3[:n]), CHECK_THREES))
        if rules.merge_groups and self.phase is PLAY_PHASE and opened:
            open_groups = [
                (i, m.rank)
                for i, m in enumerate(self.melds[team])
                if m.kind is GROUP_KIND and not m.is_closed(rules)
            ]
            for i, rank in open_groups:
                for j, other in open_groups:
                    if other == rank and i != j:
                        merges.append((MergeMelds(i, j), CHECK_ALL))
        return out, merges

    @staticmethod
    def _wild_sets(
        twos_sorted: list[int], jokers: int, least: int, most: int
    ) -> tuple[tuple[int, ...], ...]:
        """The sets of ``least`` to ``most`` of the hand's wild cards (its twos sorted, its
        jokers), by jokers then twos: ``_wild_sets_of``, kept."""
        return _wild_sets_of(tuple(twos_sorted), jokers, least, most)

    def _runs_in_hand(self, hand: Sequence[int]) -> list[dict[int, int]]:
        """For each suit, the hand's natural cards by run position (4 .. ace)."""
        runs: list[dict[int, int]] = [{}, {}, {}, {}]
        positions = _RUN_POSITIONS
        for f in hand:
            if f == JOKER:
                continue
            position = positions[f % 13]
            if position >= 0:
                runs[f // 13][position] = f
        return runs

    def _new_sequences(self, runs: list[dict[int, int]]) -> list[tuple[int, ...]]:
        """New sequences from the hand's ``runs`` (see ``_runs_in_hand``), by suit, lowest card
        and length: the run positions held one after another, in stretches as long as a
        sequence or longer, give every sequence within them (the others none)."""
        rules = self.rules
        least, most = max(2, rules.sequence_min), rules.sequence_max
        out: list[tuple[int, ...]] = []
        for suit_runs in runs:
            if len(suit_runs) < least:
                continue  # too few cards of the suit for a sequence
            positions = sorted(suit_runs)  # the run positions held, low to high
            start, end = 0, len(positions)
            while start < end:
                stop = start + 1  # the stretch positions[start:stop] is held in a row
                while stop < end and positions[stop] == positions[stop - 1] + 1:
                    stop += 1
                size = stop - start
                if size >= least:
                    faces = [suit_runs[p] for p in positions[start:stop]]
                    for low in range(size - least + 1):
                        for high in range(low + least, min(size, low + most) + 1):
                            out.append(tuple(faces[low:high]))
                start = stop
        return out

    def _sequence_extensions(
        self, meld: TableMeld, suit_runs: dict[int, int]
    ) -> Iterator[tuple[int, ...]]:
        """Additions to the sequence ``meld`` from the hand's cards of its suit by run position
        (``suit_runs``)."""
        rules = self.rules
        below: list[int] = []
        p = meld.low - 1
        while p >= 0 and p in suit_runs:
            below.append(suit_runs[p])
            p -= 1
        above: list[int] = []
        p = meld.high + 1
        while p <= 10 and p in suit_runs:
            above.append(suit_runs[p])
            p += 1
        room = rules.sequence_max - meld.size
        if rules.max_meld_size:
            room = min(room, rules.max_meld_size - meld.size)
        for a in range(len(below) + 1):
            for b in range(len(above) + 1):
                if 0 < a + b <= room:
                    yield (*below[:a][::-1], *above[:b])

    def normalize(self, action: Action) -> Action:
        """The listed representative of ``action`` (same rank and counts of naturals, jokers
        and twos). Actions that are not groups are returned unchanged."""
        if (
            isinstance(action, TakePile)
            and not action.cards
            and action.meld is None
            and not self.rules.one_group_per_rank
            and self.pile_top is not None
        ):  # a plain take-pile means the one meld the top card could go on, if there is one
            fitting = self._pile_targets(self.team_map[self.turn], self.pile_top)
            return TakePile((), fitting[0]) if len(fitting) == 1 else action
        if not isinstance(action, Meld | AddToMeld | TakePile) or not action.cards:
            return action
        if isinstance(action, Meld):
            action = self._as_addition(action)
        faces = action.cards
        hand = self.hand_faces(self.turn)
        if Counter(faces) - Counter(hand):
            return action  # not in the hand: no representative
        if isinstance(action, Meld) and all(is_black_three(f) for f in faces):
            return Meld(tuple(sorted(f for f in hand if is_black_three(f))[: len(faces)]))
        if (
            isinstance(action, Meld)
            and all(not is_wild(f) for f in faces)
            and len({rank_of(f) for f in faces}) > 1
        ):  # a sequence: its cards in order
            return Meld(tuple(sorted(faces, key=lambda f: run_position(rank_of(f)))))
        if any(is_black_three(f) or is_red_three(f) for f in faces):
            return action
        if isinstance(action, AddToMeld):
            team_melds = self.melds[self.team_map[self.turn]]
            if not 0 <= action.meld < len(team_melds):
                return action
            if team_melds[action.meld].kind is SEQUENCE_KIND:
                return action  # suits matter on a sequence: every choice is its own action
        naturals = [f for f in faces if not is_wild(f)]
        if len({rank_of(f) for f in naturals}) > 1 or not (
            naturals or isinstance(action, AddToMeld) or self.rules.wild_melds
        ):
            return action
        j = sum(1 for f in faces if f == JOKER)
        t = len(faces) - len(naturals) - j
        if isinstance(action, TakePile):
            if not naturals:
                return action
            rank = rank_of(naturals[0])
            nat = sorted(f for f in hand if f != JOKER and rank_of(f) == rank)[: len(naturals)]
            if len(nat) < len(naturals):
                return action
            wild = (
                (JOKER,) if j else tuple(sorted(f for f in hand if f != JOKER and f % 13 == 1)[:t])
            )
            return TakePile((*nat, *wild), action.meld)
        rank = rank_of(naturals[0]) if naturals else 0
        canonical = _canonical_faces(hand, rank, len(naturals), j, t)
        if len(canonical) != len(faces):
            return action
        if isinstance(action, Meld):
            return Meld(canonical)
        return AddToMeld(action.meld, canonical)

    # ------------------------------------------------------------------ copying
    def copy(self) -> HandState:
        """An independent copy: what a search pays per simulated move.

        The rules, the deck and the other immutable values are shared, and so are the lists the
        engine replaces rather than changes in place (red threes, ``opened``, ``has_melded``,
        ``team_map``, ``minimums``, a turn's pending pile), the turn's state until either state
        changes it (``_own_turn``), and the teams' meld lists until either state changes one
        (``_own_melds``: then the melds are marked shared, and whichever state changes a meld
        first changes a clone of it, ``_changing_meld``). The other lists the engine changes
        (hands, pile, stock) are copied."""
        other = HandState.__new__(HandState)
        # the meld lists and the turn's state are shared until either state changes them
        self._melds_shared = self._turn_shared = True
        fields = self.__dict__.copy()  # every field, then a copy of each that changes in place
        # the pile cache names the pile it counted (the copy's pile is another list), but the
        # initial-meld cache's key does not name this state
        fields["_initial_cache"] = None
        other.__dict__ = fields
        other.hands = [[*h] for h in self.hands]
        other.pile, other.stock = [*self.pile], [*self.stock]
        return other
