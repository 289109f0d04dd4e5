"""Sets and sequences: recognising them, and adding a card to one on the table.

A sequence is a run of *positions* within one suit: position ``r`` is rank ``r`` (0 ace .. 12
king) and position 13 is the ace again, so the ace is both low (A-2-3-4) and high (J-Q-K-A) but a
run cannot wrap (Q-K-A-2 would need positions 11, 12, 13 and 1).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from ..cards import ACE, RANK_NAMES, SUIT_NAMES, make_face, rank_of, suit_of
from ..reasons import refuse
from .rules import MayIRules

HIGH_ACE = 13
"""The position of an ace played above the king."""


class MeldKind(StrEnum):
    SET = "set"
    SEQUENCE = "sequence"


def rank_at(position: int) -> int:
    return ACE if position == HIGH_ACE else position


def face_at(position: int, suit: int) -> int:
    return make_face(rank_at(position), suit)


@dataclass(frozen=True, slots=True)
class Shape:
    """What a group of faces is: a set of ``rank`` or a sequence of ``suit`` from ``low`` to
    ``high`` (positions, inclusive)."""

    kind: MeldKind
    rank: int = -1
    suit: int = -1
    low: int = 0
    high: int = 0

    @property
    def key(self) -> tuple[int, int]:
        """Orders the groups of a contract: sets by rank, then sequences by suit."""
        return (0, self.rank) if self.kind is MeldKind.SET else (1, self.suit)


def run_positions(ranks: Sequence[int]) -> tuple[int, int] | None:
    """(low, high) if these distinct ranks form one run, the ace low if it can be, else None."""
    ordered = sorted(ranks)
    if len(set(ordered)) != len(ordered):
        return None
    if ordered[-1] - ordered[0] + 1 == len(ordered):
        return ordered[0], ordered[-1]
    if ordered[0] == ACE:
        high = [*ordered[1:], HIGH_ACE]
        if high[-1] - high[0] + 1 == len(high):
            return high[0], HIGH_ACE
    return None


def shape_of(rules: MayIRules, faces: Sequence[int]) -> Shape:
    """The shape of a new meld, or IllegalAction saying why these cards are not one."""
    if not faces:
        raise refuse("not-a-meld.empty")
    ranks = [rank_of(f) for f in faces]
    suits = [suit_of(f) for f in faces]
    if len(set(ranks)) == 1:
        if len(faces) < rules.min_set:
            raise refuse("set-too-small", minimum=rules.min_set)
        if len(faces) > rules.max_set:
            raise refuse("set-too-large", limit=rules.max_set)
        return Shape(MeldKind.SET, rank=ranks[0])
    if len(set(suits)) == 1:
        run = run_positions(ranks)
        if run is None:
            raise refuse("not-a-sequence.may-i")
        if len(faces) < rules.min_sequence:
            raise refuse("sequence-too-short", minimum=rules.min_sequence)
        if len(faces) > rules.max_sequence:
            raise refuse("sequence-too-long", limit=rules.max_sequence)
        return Shape(MeldKind.SEQUENCE, suit=suits[0], low=run[0], high=run[1])
    raise refuse("not-a-meld")


def canonical_faces(shape: Shape, faces: Sequence[int]) -> tuple[int, ...]:
    """The listed order of a group's cards: a set by suit, a sequence from low to high."""
    if shape.kind is MeldKind.SET:
        return tuple(sorted(faces))
    return tuple(face_at(p, shape.suit) for p in range(shape.low, shape.high + 1))


@dataclass(frozen=True, slots=True)
class TableMeld:
    """A meld on the table: its owner (who laid it as part of a contract), its cards (ids, in
    display order) and their faces, and its shape."""

    owner: int
    shape: Shape
    cards: tuple[int, ...]
    faces: tuple[int, ...]

    @property
    def kind(self) -> MeldKind:
        return self.shape.kind

    @property
    def size(self) -> int:
        return len(self.cards)

    def label(self) -> str:
        s = self.shape
        if s.kind is MeldKind.SET:
            return f"set of {RANK_NAMES[s.rank]}s"
        low, high = RANK_NAMES[rank_at(s.low)], RANK_NAMES[rank_at(s.high)]
        return f"{low}-{high} of {SUIT_NAMES[s.suit]}"

    def placement(self, rules: MayIRules, face: int) -> bool:
        """Where ``face`` would go: True at the low end (a set: anywhere), False at the high
        end; IllegalAction if it does not fit."""
        s = self.shape
        if s.kind is MeldKind.SET:
            if rank_of(face) != s.rank:
                raise refuse("does-not-fit.set", rank=RANK_NAMES[s.rank])
            if self.size >= rules.max_set:
                raise refuse("meld-full", limit=rules.max_set)
            return False
        if suit_of(face) != s.suit:
            raise refuse("does-not-fit.suit", suit=SUIT_NAMES[s.suit])
        if self.size >= rules.max_sequence:
            raise refuse("meld-full.sequence", limit=rules.max_sequence)
        rank = rank_of(face)
        positions = (0, HIGH_ACE) if rank == ACE else (rank,)
        if s.low - 1 in positions:
            return True
        if s.high + 1 in positions:
            return False
        raise refuse("does-not-fit")

    def fits(self, rules: MayIRules, face: int) -> bool:
        """Whether :meth:`placement` would accept ``face`` (without raising: listing is hot)."""
        s, rank = self.shape, face % 13
        if s.kind is MeldKind.SET:
            return rank == s.rank and self.size < rules.max_set
        if face // 13 != s.suit or self.size >= rules.max_sequence:
            return False
        if rank == ACE:
            return s.low == 1 or s.high == HIGH_ACE - 1
        return rank in (s.low - 1, s.high + 1)

    def with_card(self, rules: MayIRules, card: int, face: int) -> TableMeld:
        """This meld with one more card (which must fit)."""
        at_low = self.placement(rules, face)
        s = self.shape
        if s.kind is MeldKind.SET:  # kept in suit order, as a new set is
            k = bisect_right(self.faces, face)
            cards = (*self.cards[:k], card, *self.cards[k:])
            return TableMeld(self.owner, s, cards, (*self.faces[:k], face, *self.faces[k:]))
        if not at_low:
            shape = Shape(MeldKind.SEQUENCE, suit=s.suit, low=s.low, high=s.high + 1)
            return TableMeld(self.owner, shape, (*self.cards, card), (*self.faces, face))
        cards, faces = (card, *self.cards), (face, *self.faces)
        if s.low - 1 == 1 and s.high == HIGH_ACE:
            # two to ace is every rank of the suit: shown, as a new one would be, ace to king
            shape = Shape(MeldKind.SEQUENCE, suit=s.suit, low=0, high=HIGH_ACE - 1)
            return TableMeld(self.owner, shape, (cards[-1], *cards[:-1]), (faces[-1], *faces[:-1]))
        shape = Shape(MeldKind.SEQUENCE, suit=s.suit, low=s.low - 1, high=s.high)
        return TableMeld(self.owner, shape, cards, faces)


def new_meld(owner: int, shape: Shape, ids: Sequence[int], faces: Sequence[int]) -> TableMeld:
    """A meld laid from these cards (ids with their faces), in display order."""
    order = canonical_faces(shape, faces)
    pool = list(zip(faces, ids, strict=True))
    cards = []
    for f in order:
        k = next(i for i, (pool_face, _) in enumerate(pool) if pool_face == f)
        cards.append(pool.pop(k)[1])
    return TableMeld(owner, shape, tuple(cards), order)
