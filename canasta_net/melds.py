"""Melds on the table and the rules for forming and extending groups.

A meld records its physical cards (ids) plus running counts of natural and wild cards, so the
checks the engine makes on every candidate action need no recounting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from .cards import RANK_NAMES, THREE, is_black_three, is_red_three, is_wild, rank_of
from .errors import IllegalAction
from .rules import RuleSet

__all__ = ["GroupShape", "MeldKind", "TableMeld", "check_addition", "group_shape", "is_wild"]


class MeldKind(StrEnum):
    GROUP = "group"
    BLACK_THREES = "black-threes"


@dataclass(slots=True)
class TableMeld:
    """One meld of a team: a group of one rank (or a meld of black threes)."""

    kind: MeldKind
    rank: int
    cards: list[int]
    naturals: int
    wilds: int
    laid_turn: int
    laid_by: int
    faces: list[int] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.cards)

    def is_canasta(self, rules: RuleSet) -> bool:
        return self.kind is MeldKind.GROUP and len(self.cards) >= rules.canasta_size

    def is_natural(self) -> bool:
        return self.wilds == 0

    def label(self) -> str:
        return "3s (black)" if self.kind is MeldKind.BLACK_THREES else RANK_NAMES[self.rank] + "s"


@dataclass(frozen=True, slots=True)
class GroupShape:
    """What a set of faces would be as a new meld."""

    kind: MeldKind
    rank: int
    naturals: int
    wilds: int


def group_shape(rules: RuleSet, faces: Sequence[int]) -> GroupShape:
    """Check ``faces`` as a new meld and describe it, or raise :class:`IllegalAction`."""
    if len(faces) < 3:
        raise IllegalAction("too-few-cards", "A meld needs at least three cards.")
    if any(is_red_three(f) for f in faces):
        raise IllegalAction("not-meldable", "Red threes are never melded.")
    black_threes = sum(1 for f in faces if is_black_three(f))
    if black_threes:
        if black_threes != len(faces):
            raise IllegalAction(
                "not-meldable", "Black threes can only be melded together, with no other card."
            )
        return GroupShape(MeldKind.BLACK_THREES, THREE, len(faces), 0)
    naturals = [f for f in faces if not is_wild(f)]
    wilds = len(faces) - len(naturals)
    if not naturals:
        raise IllegalAction("wild-only-meld", "Wild cards cannot form a meld on their own.")
    rank = rank_of(naturals[0])
    if any(rank_of(f) != rank for f in naturals):
        raise IllegalAction("mixed-ranks", "All natural cards of a meld must have the same rank.")
    check_wild_balance(rules, len(naturals), wilds)
    return GroupShape(MeldKind.GROUP, rank, len(naturals), wilds)


def check_wild_balance(rules: RuleSet, naturals: int, wilds: int) -> None:
    if naturals < rules.min_naturals_in_group:
        raise IllegalAction(
            "too-few-naturals",
            f"A meld needs at least {rules.min_naturals_in_group} natural cards.",
        )
    limit = rules.max_wilds(naturals)
    if wilds > limit:
        raise IllegalAction(
            "too-many-wilds",
            f"A meld with {naturals} natural cards may hold at most {limit} wild cards.",
        )


def check_addition(rules: RuleSet, meld: TableMeld, faces: Sequence[int]) -> tuple[int, int]:
    """Check adding ``faces`` to ``meld``; return the (naturals, wilds) added."""
    if not faces:
        raise IllegalAction("too-few-cards", "Add at least one card.")
    if meld.kind is MeldKind.BLACK_THREES:
        raise IllegalAction("black-three-meld-closed", "Nothing may be added to black threes.")
    naturals = 0
    for f in faces:
        if is_wild(f):
            continue
        if is_red_three(f) or is_black_three(f) or rank_of(f) != meld.rank:
            raise IllegalAction(
                "wrong-rank", f"Only {RANK_NAMES[meld.rank]}s and wild cards go on that meld."
            )
        naturals += 1
    wilds = len(faces) - naturals
    check_wild_balance(rules, meld.naturals + naturals, meld.wilds + wilds)
    return naturals, wilds
