"""Look-ahead the engine needs to refuse dead ends: can a hand still reach a value, or be laid out.

Both questions are answered *constructively*: the functions find an actual way to lay the cards
(a plan of legal melds), so an answer of "yes" is never wrong; the engine accepts a lay during an
initial meld only if such a plan still exists after it, which is what keeps a player from being
stuck with a half-made initial meld and no legal move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .cards import JOKER, THREE, TWO, is_black_three
from .rules import RuleSet

MELDABLE_RANKS = tuple(r for r in range(13) if r not in (TWO, THREE))


@dataclass(slots=True)
class HandCounts:
    """A hand reduced to what the meld rules care about."""

    naturals: list[int]  # by rank index; twos and threes stay 0
    natural_value: list[int]  # value of one natural card of that rank
    jokers: int
    twos: int
    black_threes: int
    other: int  # cards that can never be laid (red threes)

    @classmethod
    def of(cls, rules: RuleSet, faces: Sequence[int]) -> HandCounts:
        naturals = [0] * 13
        jokers = twos = black_threes = other = 0
        for f in faces:
            if f == JOKER:
                jokers += 1
                continue
            r = f % 13
            if r == TWO:
                twos += 1
            elif r == THREE:
                if is_black_three(f):
                    black_threes += 1
                else:
                    other += 1
            else:
                naturals[r] += 1
        return cls(naturals, rules.natural_values, jokers, twos, black_threes, other)

    @property
    def size(self) -> int:
        return sum(self.naturals) + self.jokers + self.twos + self.black_threes + self.other

    def without(self, kind: int) -> HandCounts:
        """A copy with one card removed: a rank index, or -1 joker, -2 two, -3 black three."""
        copy = HandCounts(
            list(self.naturals),
            self.natural_value,
            self.jokers,
            self.twos,
            self.black_threes,
            self.other,
        )
        if kind >= 0:
            copy.naturals[kind] -= 1
        elif kind == -1:
            copy.jokers -= 1
        elif kind == -2:
            copy.twos -= 1
        else:
            copy.black_threes -= 1
        return copy

    def kinds(self) -> list[int]:
        out = [r for r in MELDABLE_RANKS if self.naturals[r]]
        if self.jokers:
            out.append(-1)
        if self.twos:
            out.append(-2)
        if self.black_threes:
            out.append(-3)
        return out


@dataclass(frozen=True, slots=True)
class MeldCounts:
    """A team meld as the planner sees it: a group it may extend."""

    rank: int
    naturals: int
    wilds: int

    @property
    def size(self) -> int:
        return self.naturals + self.wilds


def _wild_values(rules: RuleSet, hand: HandCounts) -> list[int]:
    values = [rules.joker_value] * hand.jokers + [rules.two_value] * hand.twos
    values.sort(reverse=True)
    return values


def _greedy_value(
    rules: RuleSet, hand: HandCounts, melds: dict[int, MeldCounts]
) -> tuple[int, int]:
    """(value, cards used) of a good lay of ``hand`` onto ``melds`` and into new groups."""
    value = used = 0
    capacity = 0
    pairs: list[int] = []
    for m in melds.values():
        if hand.naturals[m.rank] == 0:
            capacity += max(0, rules.max_wilds(m.naturals) - m.wilds)
    for r in MELDABLE_RANKS:
        n = hand.naturals[r]
        if not n:
            continue
        if r in melds:
            m = melds[r]
            value += n * hand.natural_value[r]
            used += n
            capacity += max(0, rules.max_wilds(m.naturals + n) - m.wilds)
        elif n >= max(3, rules.min_naturals_in_group):
            value += n * hand.natural_value[r]
            used += n
            capacity += max(0, rules.max_wilds(n))
        elif n == 2 and rules.max_wilds(2) >= 1:
            pairs.append(2 * hand.natural_value[r])
    wilds = _wild_values(rules, hand)
    pairs.sort(reverse=True)
    taken = 0
    for pair_value in pairs:
        if taken == len(wilds):
            break
        value += pair_value + wilds[taken]
        used += 3
        taken += 1
        capacity += rules.max_wilds(2) - 1
    extra = min(capacity, len(wilds) - taken)
    value += sum(wilds[taken : taken + extra])
    used += extra
    return value, used


def best_lay_value(
    rules: RuleSet, hand: HandCounts, melds: dict[int, MeldCounts], keep: int
) -> int:
    """The value of cards that can be laid from ``hand`` while keeping ``keep`` cards in it.

    Black threes are never part of such a lay (they are melded only when going out).
    """
    value, used = _greedy_value(rules, hand, melds)
    if hand.size - used >= keep:
        return value
    best = 0
    for kind in hand.kinds():
        if kind == -3:
            continue
        best = max(best, best_lay_value(rules, hand.without(kind), melds, keep - 1))
    return best


def can_lay_out(
    rules: RuleSet,
    hand: HandCounts,
    melds: dict[int, MeldCounts],
    leftover: int,
    canastas: int,
    canastas_needed: int,
) -> bool:
    """Can every card of ``hand`` but at most ``leftover`` (the discard) be laid, so that the
    team then holds ``canastas_needed`` canastas?  ``canastas`` is how many it holds now."""
    stranded = hand.other + (hand.black_threes if hand.black_threes < 3 else 0)
    stranded += sum(1 for r in MELDABLE_RANKS if hand.naturals[r] == 1 and r not in melds)
    if stranded > leftover:
        return False  # quick answer: each stranded card would have to be the discard
    if _lays_out(rules, hand, melds, canastas, canastas_needed):
        return True
    if leftover <= 0:
        return False
    return any(
        can_lay_out(rules, hand.without(k), melds, leftover - 1, canastas, canastas_needed)
        for k in hand.kinds()
    )


def _lays_out(
    rules: RuleSet,
    hand: HandCounts,
    melds: dict[int, MeldCounts],
    canastas: int,
    canastas_needed: int,
) -> bool:
    if hand.other:
        return False
    if 0 < hand.black_threes < 3:  # black threes go out as a meld of three or four
        return False
    size_caps: list[tuple[int, int, bool]] = []  # (size, wild capacity, was a canasta)
    pairs = 0
    for m in melds.values():
        n = hand.naturals[m.rank]
        size_caps.append(
            (
                m.size + n,
                max(0, rules.max_wilds(m.naturals + n) - m.wilds),
                m.size >= rules.canasta_size,
            )
        )
    for r in MELDABLE_RANKS:
        n = hand.naturals[r]
        if not n or r in melds:
            continue
        if n >= max(3, rules.min_naturals_in_group):
            size_caps.append((n, max(0, rules.max_wilds(n)), False))
        elif n == 2 and rules.max_wilds(2) >= 1:
            pairs += 1
            size_caps.append((3, rules.max_wilds(2) - 1, False))
        else:
            return False
    wilds = hand.jokers + hand.twos
    if wilds < pairs:
        return False
    extra = wilds - pairs
    if extra > sum(cap for _, cap, _ in size_caps):
        return False
    new_canastas = 0
    deficits: list[int] = []
    for size, cap, was in size_caps:
        if was:
            continue
        if size >= rules.canasta_size:
            new_canastas += 1
        elif rules.canasta_size - size <= cap:
            deficits.append(rules.canasta_size - size)
    deficits.sort()
    budget = extra
    for d in deficits:
        if d > budget:
            break
        budget -= d
        new_canastas += 1
    return canastas + new_canastas >= canastas_needed


def meld_counts(rank_naturals_wilds: Sequence[tuple[int, int, int]]) -> dict[int, MeldCounts]:
    return {r: MeldCounts(r, n, w) for r, n, w in rank_naturals_wilds}


__all__ = [
    "HandCounts",
    "MeldCounts",
    "best_lay_value",
    "can_lay_out",
    "meld_counts",
]
