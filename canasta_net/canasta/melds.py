"""Melds on the table and the rules for forming and extending them.

Four kinds: a *group* of one rank (with wild cards), *black threes* (laid when going out, or at
any time in Bolivia), a *sequence* of one suit (Samba, Bolivia), and a meld of *wild cards* only
(Bolivia). A meld records its physical cards (ids) plus running counts of natural and wild cards
and, for a sequence, its suit and ends, so the checks on every candidate action need no recounting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from ..cards import (
    ACE,
    RANK_NAMES,
    SEVEN,
    SUIT_NAMES,
    THREE,
    is_black_three,
    is_red_three,
    is_wild,
    rank_of,
    suit_of,
)
from ..reasons import refuse
from .rules import RuleSet

__all__ = [
    "BLACK_THREES_KIND",
    "GROUP_KIND",
    "SEQUENCE_KIND",
    "WILDS_KIND",
    "GroupShape",
    "MeldKind",
    "TableMeld",
    "canasta_bonus",
    "check_addition",
    "group_shape",
    "is_wild",
    "run_position",
]


class MeldKind(StrEnum):
    GROUP = "group"
    BLACK_THREES = "black-threes"
    SEQUENCE = "sequence"
    WILDS = "wilds"


# The kinds as module constants for the engine's hot paths: Python 3.11 looks a member up on
# its enum class several times slower than a global.
GROUP_KIND: Final = MeldKind.GROUP
SEQUENCE_KIND: Final = MeldKind.SEQUENCE
WILDS_KIND: Final = MeldKind.WILDS
BLACK_THREES_KIND: Final = MeldKind.BLACK_THREES


def run_position(rank: int) -> int:
    """A rank's place in a sequence, 0 (four) .. 10 (ace, high only); -1 if it cannot run."""
    if rank == ACE:
        return 10
    return rank - 3 if rank > THREE else -1


def rank_at(position: int) -> int:
    return ACE if position == 10 else position + 3


@dataclass(slots=True)
class TableMeld:
    """One meld of a team."""

    kind: MeldKind
    rank: int  # the group's rank; a sequence's lowest rank; -1 for wild cards only
    cards: list[int]
    naturals: int
    wilds: int
    laid_turn: int
    laid_by: int
    faces: list[int] = field(default_factory=list)
    suit: int = -1  # a sequence's suit
    low: int = 0  # a sequence's run positions, inclusive
    high: int = 0
    # how ``position.seat_view`` last drew this meld, and from what (its faces, kind, rank and
    # run); not part of the meld's value, and not copied by ``clone``
    drawn: tuple[tuple[Any, ...], dict[str, Any]] | None = field(
        default=None, compare=False, repr=False
    )
    # held by a copy of the position too (``HandState.copy`` shares the melds): the engine
    # replaces such a meld by its ``clone`` before it changes one
    shared: bool = field(default=False, compare=False, repr=False)

    @property
    def size(self) -> int:
        return len(self.cards)

    def clone(self) -> TableMeld:
        """A copy whose card lists may change apart from this one's (not shared)."""
        return TableMeld(
            self.kind,
            self.rank,
            self.cards[:],
            self.naturals,
            self.wilds,
            self.laid_turn,
            self.laid_by,
            self.faces[:],
            self.suit,
            self.low,
            self.high,
        )

    def is_canasta(self, rules: RuleSet) -> bool:
        return self.kind is not BLACK_THREES_KIND and len(self.cards) >= rules.canasta_size

    def is_natural(self) -> bool:
        return self.wilds == 0

    def is_closed(self, rules: RuleSet) -> bool:
        """Nothing more may be added (black threes; a full sequence; Bolivia's seven cards)."""
        if self.kind is BLACK_THREES_KIND:
            return True
        if self.kind is SEQUENCE_KIND and self.size >= rules.sequence_max:
            return True
        return bool(rules.max_meld_size) and self.size >= rules.max_meld_size

    def label(self) -> str:
        if self.kind is BLACK_THREES_KIND:
            return "3s (black)"
        if self.kind is WILDS_KIND:
            return "wild cards"
        if self.kind is SEQUENCE_KIND:
            return (
                f"{RANK_NAMES[rank_at(self.low)]}-{RANK_NAMES[rank_at(self.high)]}"
                f"{SUIT_NAMES[self.suit]} run"
            )
        return RANK_NAMES[self.rank] + "s"


def canasta_bonus(rules: RuleSet, meld: TableMeld) -> int:
    """The bonus a canasta earns (0 for a meld that is not one)."""
    if not meld.is_canasta(rules):
        return 0
    if meld.kind is WILDS_KIND:
        return rules.wild_canasta_bonus or rules.mixed_canasta_bonus
    if meld.kind is SEQUENCE_KIND:
        return rules.sequence_canasta_bonus or rules.natural_canasta_bonus
    if meld.rank == SEVEN:
        bonus = rules.natural_sevens_bonus if meld.is_natural() else rules.mixed_sevens_bonus
        if bonus:
            return bonus
    return rules.natural_canasta_bonus if meld.is_natural() else rules.mixed_canasta_bonus


@dataclass(slots=True)  # not frozen: a frozen one costs a call a field to make; none changes
class GroupShape:
    """What a set of faces would be as a new meld (a value: never changed)."""

    kind: MeldKind
    rank: int
    naturals: int
    wilds: int
    suit: int = -1
    low: int = 0
    high: int = 0


def _sequence_shape(rules: RuleSet, faces: Sequence[int]) -> GroupShape | None:
    """The faces as a sequence, or None if they are not one (Samba, Bolivia)."""
    if not rules.sequences or len(faces) < rules.sequence_min or any(is_wild(f) for f in faces):
        return None
    suits = {suit_of(f) for f in faces}
    positions = sorted(run_position(rank_of(f)) for f in faces)
    if len(suits) != 1 or positions[0] < 0:
        return None
    if positions != list(range(positions[0], positions[0] + len(positions))):
        return None
    if len(faces) > rules.sequence_max:
        raise refuse("meld-too-large.sequence", limit=rules.sequence_max)
    return GroupShape(
        SEQUENCE_KIND,
        rank_at(positions[0]),
        len(faces),
        0,
        suits.pop(),
        positions[0],
        positions[-1],
    )


def group_shape(rules: RuleSet, faces: Sequence[int]) -> GroupShape:
    """Check ``faces`` as a new meld and describe it, or raise :class:`IllegalAction`."""
    if len(faces) < 3:
        raise refuse("too-few-cards")
    if any(is_red_three(f) for f in faces):
        raise refuse("not-meldable")
    black_threes = sum(1 for f in faces if is_black_three(f))
    if black_threes:
        if black_threes != len(faces):
            raise refuse("not-meldable.black-threes")
        if len(faces) > 4:
            raise refuse("meld-too-large.black-threes")
        return GroupShape(BLACK_THREES_KIND, THREE, len(faces), 0)
    sequence = _sequence_shape(rules, faces)
    if sequence is not None:
        return sequence
    naturals = [f for f in faces if not is_wild(f)]
    wilds = len(faces) - len(naturals)
    _check_size(rules, len(faces))
    if not naturals:
        if not rules.wild_melds:
            raise refuse("wild-only-meld")
        return GroupShape(WILDS_KIND, -1, 0, wilds)
    rank = rank_of(naturals[0])
    if any(rank_of(f) != rank for f in naturals):
        if rules.sequences and len({suit_of(f) for f in naturals}) == 1:
            raise refuse("not-a-sequence")
        raise refuse("mixed-ranks")
    check_wild_balance(rules, len(naturals), wilds)
    return GroupShape(GROUP_KIND, rank, len(naturals), wilds)


def _check_size(rules: RuleSet, size: int) -> None:
    if rules.max_meld_size and size > rules.max_meld_size:
        raise refuse("meld-too-large", limit=rules.max_meld_size)


def check_wild_balance(rules: RuleSet, naturals: int, wilds: int) -> None:
    if naturals < rules.min_naturals_in_group:
        raise refuse("too-few-naturals", minimum=rules.min_naturals_in_group)
    limit = rules.max_wilds(naturals)
    if wilds > limit:
        raise refuse("too-many-wilds", naturals=naturals, limit=limit)


def check_addition(
    rules: RuleSet, meld: TableMeld, faces: Sequence[int]
) -> tuple[int, int, int, int]:
    """Check adding ``faces`` to ``meld``; return (naturals, wilds, new low, new high)."""
    if not faces:
        raise refuse("too-few-cards.add")
    if meld.kind is BLACK_THREES_KIND:
        raise refuse("black-three-meld-closed")
    if meld.is_closed(rules):
        raise refuse("meld-closed")
    _check_size(rules, meld.size + len(faces))
    if meld.kind is SEQUENCE_KIND:
        return _check_sequence_addition(rules, meld, faces)
    wilds = sum(1 for f in faces if is_wild(f))
    if wilds and not rules.wilds_on_canasta and meld.is_canasta(rules):
        raise refuse("wild-on-canasta")
    if meld.kind is WILDS_KIND:
        if wilds != len(faces):
            raise refuse("wrong-rank.wilds")
        return 0, wilds, 0, 0
    naturals = 0
    for f in faces:
        if is_wild(f):
            continue
        if is_red_three(f) or is_black_three(f) or rank_of(f) != meld.rank:
            raise refuse("wrong-rank", rank=RANK_NAMES[meld.rank])
        naturals += 1
    check_wild_balance(rules, meld.naturals + naturals, meld.wilds + wilds)
    return naturals, wilds, 0, 0


def _check_sequence_addition(
    rules: RuleSet, meld: TableMeld, faces: Sequence[int]
) -> tuple[int, int, int, int]:
    if any(is_wild(f) or suit_of(f) != meld.suit for f in faces):
        raise refuse("not-a-sequence.extend")
    positions = sorted(run_position(rank_of(f)) for f in faces)
    if positions[0] < 0 or len(set(positions)) != len(positions):
        raise refuse("not-a-sequence.extend")
    below = [p for p in positions if p < meld.low]
    above = [p for p in positions if p > meld.high]
    if len(below) + len(above) != len(positions):
        raise refuse("not-a-sequence.extend")
    low, high = meld.low, meld.high
    if below:
        if below != list(range(meld.low - len(below), meld.low)):
            raise refuse("not-a-sequence.extend")
        low = below[0]
    if above:
        if above != list(range(meld.high + 1, meld.high + 1 + len(above))):
            raise refuse("not-a-sequence.extend")
        high = above[-1]
    if high - low + 1 > rules.sequence_max:
        raise refuse("meld-too-large.sequence", limit=rules.sequence_max)
    return len(faces), 0, low, high
