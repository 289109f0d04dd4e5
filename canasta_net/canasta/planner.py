"""Look-ahead the engine needs to refuse dead ends: can a hand still reach a value, or be laid out.

Both questions are answered *constructively*: the functions find an actual way to lay the cards
(a plan of legal melds), so an answer of "yes" is never wrong; the engine accepts a lay during an
initial meld only if such a plan still exists after it, which is what keeps a player from being
stuck with a half-made initial meld and no legal move.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..cards import JOKER, THREE, TWO, is_black_three
from .rules import RuleSet

MELDABLE_RANKS = tuple(r for r in range(13) if r not in (TWO, THREE))
WILD_MELD = -1
"""The key of a meld of wild cards only (Bolivia) among a team's melds: it takes wild cards."""


@dataclass(slots=True)
class HandCounts:
    """A hand reduced to what the meld rules care about."""

    naturals: list[int]  # by rank index; twos and threes stay 0
    natural_value: list[int]  # value of one natural card of that rank
    jokers: int
    twos: int
    black_threes: int
    other: int  # cards that can never be laid (red threes)
    runs: list[list[int]] | None = None  # by suit and run position (4 .. ace), with sequences

    @classmethod
    def of(cls, rules: RuleSet, faces: Sequence[int]) -> HandCounts:
        naturals = [0] * 13
        jokers = twos = black_threes = other = 0
        runs = [[0] * 11 for _ in range(4)] if rules.sequences else None
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
                if runs is not None:
                    runs[f // 13][10 if r == 0 else r - 3] += 1
        return cls(naturals, rules.natural_values, jokers, twos, black_threes, other, runs)

    def minus(self, faces: Sequence[int]) -> HandCounts:
        """The counts of this hand without ``faces`` (cards of the hand): what :meth:`of` gives
        for the cards that stay."""
        naturals = list(self.naturals)
        runs = [list(r) for r in self.runs] if self.runs is not None else None
        jokers, twos, black_threes, other = self.jokers, self.twos, self.black_threes, self.other
        for f in faces:
            if f == JOKER:
                jokers -= 1
                continue
            r = f % 13
            if r == TWO:
                twos -= 1
            elif r == THREE:
                if is_black_three(f):
                    black_threes -= 1
                else:
                    other -= 1
            else:
                naturals[r] -= 1
                if runs is not None:
                    runs[f // 13][10 if r == 0 else r - 3] -= 1
        return HandCounts(naturals, self.natural_value, jokers, twos, black_threes, other, runs)

    @property
    def size(self) -> int:
        return sum(self.naturals) + self.jokers + self.twos + self.black_threes + self.other

    def copy(self, runs: list[list[int]] | None = None) -> HandCounts:
        """A copy whose counts may change apart from this one's (the runs only as given)."""
        return HandCounts(
            list(self.naturals),
            self.natural_value,
            self.jokers,
            self.twos,
            self.black_threes,
            self.other,
            runs,
        )

    def without(self, kind: int) -> HandCounts:
        """A copy with one card removed: a rank index, or -1 joker, -2 two, -3 black three."""
        copy = self.copy()
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


@dataclass(slots=True)  # not frozen: a frozen one costs a call a field to make; none changes
class MeldCounts:
    """A team meld as the planner sees it: a group it may extend (a value: never changed)."""

    rank: int
    naturals: int
    wilds: int
    room: int = 1 << 20  # how many more cards it may take
    wild_room: int = 1 << 20  # how many more wild cards (0 on a canasta, in Samba)
    # Samba (``merge_groups``), a team that has opened: every group of the team of this rank,
    # as (naturals, wild cards), this one among them; going out may merge them (empty: this
    # group is the only one the planner may count on)
    parts: tuple[tuple[int, int], ...] = ()

    @property
    def size(self) -> int:
        return self.naturals + self.wilds

    def capacity(self, rules: RuleSet, added_naturals: int) -> int:
        """Wild cards it could still take after ``added_naturals`` more naturals."""
        if self.rank == WILD_MELD:
            return max(0, min(self.wild_room, self.room))
        limit = rules.max_wilds(self.naturals + added_naturals) - self.wilds
        return max(0, min(limit, self.wild_room, self.room - added_naturals))


def _wild_values(rules: RuleSet, hand: HandCounts) -> list[int]:
    values = [rules.joker_value] * hand.jokers + [rules.two_value] * hand.twos
    values.sort(reverse=True)
    return values


def _new_group_size(rules: RuleSet, n: int) -> int:
    return min(n, rules.max_meld_size) if rules.max_meld_size else n


def _new_group_capacity(rules: RuleSet, n: int) -> int:
    room = rules.max_meld_size - n if rules.max_meld_size else 1 << 20
    return max(0, min(rules.max_wilds(n), room))


def _split_groups(rules: RuleSet, hand: HandCounts, melds: dict[int, MeldCounts]) -> int:
    """Where a team may hold several groups of a rank: how many more groups of two natural
    cards the hand's naturals could start than the one group a rank the greedy lay makes (each
    needs a wild card, and takes one more): from four naturals of a rank two groups, and
    naturals of a rank the team has a group of may start new groups instead of going on it."""
    if rules.one_group_per_rank or rules.max_wilds(2) < 1:
        return 0
    groups = 0
    for r in MELDABLE_RANKS:
        n = hand.naturals[r]
        if r in melds:  # the naturals the greedy lay puts on the group (its room allowing)
            groups += min(n, melds[r].room) // 2
        elif n >= 4:
            groups += _new_group_size(rules, n) // 2 - 1
    return groups


def _greedy_value(
    rules: RuleSet, hand: HandCounts, melds: dict[int, MeldCounts]
) -> tuple[int, int]:
    """(value, cards used) of a good lay of ``hand`` onto ``melds`` and into new groups."""
    value = used = 0
    capacity = 0
    pairs: list[int] = []
    for m in melds.values():
        if m.rank == WILD_MELD or hand.naturals[m.rank] == 0:
            capacity += m.capacity(rules, 0)
    for r in MELDABLE_RANKS:
        n = hand.naturals[r]
        if not n:
            continue
        if r in melds:
            m = melds[r]
            n = min(n, m.room)
            value += n * hand.natural_value[r]
            used += n
            capacity += m.capacity(rules, n)
        elif n >= max(3, rules.min_naturals_in_group):
            n = _new_group_size(rules, n)
            value += n * hand.natural_value[r]
            used += n
            capacity += _new_group_capacity(rules, n)
        elif n == 2 and rules.max_wilds(2) >= 1:
            pairs.append(2 * hand.natural_value[r])
    wilds = _wild_values(rules, hand)
    pairs.sort(reverse=True)
    # several groups of one rank (Samba, Bolivia): the hand's naturals may start more groups of
    # two, each holding wild cards, where one group of the rank could hold no more
    capacity += _split_groups(rules, hand, melds) * _new_group_capacity(rules, 2)
    most = min(len(pairs), len(wilds))
    # how many pairs take a wild card: all of them, or (Bolivia) fewer, to leave three or more
    # wild cards for a meld of their own, which takes any number of them
    best_value = best_used = -1
    for taken in range(most + 1) if rules.wild_melds else (most,):
        v = value + sum(pairs[:taken]) + sum(wilds[:taken])
        u = used + 3 * taken
        left = len(wilds) - taken
        if rules.wild_melds and left >= 3:  # Bolivia: every other wild card laid
            v, u = v + sum(wilds[taken:]), u + left
        else:
            room = capacity + taken * (_new_group_capacity(rules, 2) - 1)
            extra = min(room, left)
            v, u = v + sum(wilds[taken : taken + extra]), u + extra
        if v > best_value:
            best_value, best_used = v, u
    value, used = best_value, best_used
    if not rules.black_threes_only_going_out and hand.black_threes >= 3:
        # Bolivia: black threes are laid at any time, in sets of three or four
        laid = 4 if hand.black_threes == 5 else hand.black_threes
        value += laid * rules.black_three_value
        used += laid
    if rules.wild_melds and len(wilds) >= 3 and (hand.jokers or hand.twos):
        # Bolivia: all the wild cards in a meld of their own may be worth more than spread
        naturals_only = hand.copy()
        naturals_only.jokers = naturals_only.twos = 0
        alone, alone_used = _greedy_value(rules, naturals_only, melds)
        if alone + sum(wilds) > value:
            return alone + sum(wilds), alone_used + len(wilds)
    return value, used


MAX_RUN_PLANS = 96
"""How many ways of laying a hand's runs the look-ahead tries (longest runs first)."""


def _run_plans(rules: RuleSet, hand: HandCounts) -> Iterator[tuple[HandCounts, int, int, int]]:
    """Ways to lay some of the hand's runs of a suit as new sequences, each as (rest, value,
    cards, closed sequences): every choice of runs (all of a run or part of it, several runs
    from one suit, none from another), longest first, at most ``MAX_RUN_PLANS`` of them. The
    plan that lays nothing is left out: the callers try the plain groups on their own."""
    assert hand.runs is not None
    counts = [list(r) for r in hand.runs]
    longest = min(rules.sequence_max, rules.max_meld_size or rules.sequence_max)
    chosen: list[tuple[int, int, int]] = []  # (suit, first position, length)
    produced = 0

    def plan() -> tuple[HandCounts, int, int, int]:
        rest = hand.copy()
        value = cards = closed = 0
        for _, first, length in chosen:
            for pos in range(first, first + length):
                rank = 0 if pos == 10 else pos + 3
                rest.naturals[rank] -= 1
                value += hand.natural_value[rank]
            cards += length
            closed += length >= rules.canasta_size
        return rest, value, cards, closed

    def reach_from(row: list[int], pos: int, cap: int) -> int:
        """How long a run may start at ``pos`` (at most ``cap`` cards)."""
        reach = 0
        while pos + reach < 11 and row[pos + reach] and reach < cap:  # cap <= longest
            reach += 1
        return reach

    def walk(suit: int, pos: int, cap: int) -> Iterator[tuple[HandCounts, int, int, int]]:
        nonlocal produced
        if produced >= MAX_RUN_PLANS:
            return
        # skip the places no run starts at (cap >= sequence_min: it is a run's length), as the
        # walk one place at a time did, without a generator for each
        while suit < 4:
            if pos == 11:
                suit, pos, cap = suit + 1, 0, longest
            elif reach_from(counts[suit], pos, cap) < rules.sequence_min:
                pos, cap = pos + 1, longest
            else:
                break
        if suit == 4:
            if chosen:
                produced += 1
                yield plan()
            return
        row = counts[suit]
        reach = reach_from(row, pos, cap)
        for length in range(reach, rules.sequence_min - 1, -1):  # another run starting here
            for q in range(pos, pos + length):
                row[q] -= 1
            chosen.append((suit, pos, length))
            yield from walk(suit, pos, length)  # runs starting at one place: longest first
            chosen.pop()
            for q in range(pos, pos + length):
                row[q] += 1
        yield from walk(suit, pos + 1, longest)  # no (more) run starts here

    return walk(0, 0, longest)


def _extend_sequences(
    rules: RuleSet, hand: HandCounts, sequences: Sequence[tuple[int, int, int]]
) -> tuple[HandCounts, int, int]:
    """The hand after adding what it can to the ends of open sequences, each given as
    (suit, low, high) run positions: (rest, value, cards)."""
    assert hand.runs is not None
    runs = [list(r) for r in hand.runs]
    rest = hand.copy(runs)
    most = min(rules.sequence_max, rules.max_meld_size or rules.sequence_max)
    value = cards = 0
    for suit, low, high in sequences:
        suit_runs = runs[suit]
        while high - low + 1 < most:
            if low > 0 and suit_runs[low - 1]:
                low -= 1
                p = low
            elif high < 10 and suit_runs[high + 1]:
                high += 1
                p = high
            else:
                break
            suit_runs[p] -= 1
            rank = 0 if p == 10 else p + 3
            rest.naturals[rank] -= 1
            value += hand.natural_value[rank]
            cards += 1
    return rest, value, cards


def best_lay_value(
    rules: RuleSet,
    hand: HandCounts,
    melds: dict[int, MeldCounts],
    keep: int,
    sequences: Sequence[tuple[int, int, int]] = (),
    enough: int | None = None,
) -> int:
    """The value of cards that can be laid from ``hand`` while keeping ``keep`` cards in it
    (groups, and with sequences also a plan that lays the longest runs first, and one that
    first extends the open ``sequences``, given as (suit, low, high) run positions).

    With ``enough`` (what a caller compares the value with), the look-ahead stops at the first
    plan worth that much: the value is then at least ``enough``, and exact when it is below."""
    best = _best_group_value(rules, hand, melds, keep)
    if enough is not None and best >= enough:
        return best
    if hand.runs is not None and sequences:
        extended, value, cards = _extend_sequences(rules, hand, sequences)
        if cards and extended.size >= keep:
            rest_enough = None if enough is None else enough - value
            best = max(best, value + best_lay_value(rules, extended, melds, keep, (), rest_enough))
            if enough is not None and best >= enough:
                return best
    if hand.runs is not None:
        for rest, value, _, _ in _run_plans(rules, hand):
            if rest.size >= keep:
                best = max(best, value + _best_group_value(rules, rest, melds, keep))
                if enough is not None and best >= enough:
                    return best
    return best


def _best_group_value(
    rules: RuleSet, hand: HandCounts, melds: dict[int, MeldCounts], keep: int
) -> int:
    """The value of cards that can be laid from ``hand`` while keeping ``keep`` cards in it.

    Black threes are part of such a lay only where they may be laid at any time (Bolivia);
    otherwise they are melded only when going out.
    """
    value, used = _greedy_value(rules, hand, melds)
    if hand.size - used >= keep:
        return value
    best = 0
    for kind in hand.kinds():
        if kind == -3 and rules.black_threes_only_going_out:
            continue
        best = max(best, _best_group_value(rules, hand.without(kind), melds, keep - 1))
    return best


def can_lay_out(
    rules: RuleSet,
    hand: HandCounts,
    melds: dict[int, MeldCounts],
    leftover: int,
    canastas: int,
    canastas_needed: int,
    sequences: Sequence[tuple[int, int, int]] = (),
) -> bool:
    """Can every card of ``hand`` but at most ``leftover`` (the discard) be laid, so that the
    team then holds ``canastas_needed`` canastas?  ``canastas`` is how many it holds now, and
    ``sequences`` the team's sequences that may still grow, as (suit, low, high) run positions:
    the hand's cards at their ends may extend them (every choice of how far at each end is
    tried, extending nothing first), which may complete canastas.

    The hand is tried in groups first, then (with sequences) with each plan of its runs: the
    answer is the same in either order, and the groups alone are the cheaper try."""
    if sequences and hand.runs is not None:
        return any(
            _can_lay_out(rules, rest, melds, leftover, canastas + closed, canastas_needed)
            for rest, closed in _extension_plans(rules, hand, sequences)
        )
    return _can_lay_out(rules, hand, melds, leftover, canastas, canastas_needed)


def _extension_plans(
    rules: RuleSet, hand: HandCounts, sequences: Sequence[tuple[int, int, int]]
) -> Iterator[tuple[HandCounts, int]]:
    """Every way to extend the open ``sequences`` (suit, low, high) with the hand's naturals at
    their ends, as (rest of the hand, canastas completed): extending nothing first (``hand``
    itself), then every number of cards at the low end and at the high end of each sequence
    (the runs of the hand that touch it), within the longest a sequence may be."""
    assert hand.runs is not None
    most = min(rules.sequence_max, rules.max_meld_size or rules.sequence_max)
    runs = [list(r) for r in hand.runs]
    taken: list[int] = []  # run positions taken, as suit * 11 + position

    def plan() -> HandCounts:
        rest = hand.copy([list(r) for r in runs])
        for q in taken:
            p = q % 11
            rest.naturals[0 if p == 10 else p + 3] -= 1
        return rest

    def walk(i: int, closed: int) -> Iterator[tuple[HandCounts, int]]:
        if i == len(sequences):
            yield (plan() if taken else hand), closed
            return
        suit, low, high = sequences[i]
        row = runs[suit]
        size = high - low + 1
        below = 0
        while low - below > 0 and row[low - below - 1] and size + below < most:
            below += 1
        for a in range(below + 1):
            if a:
                row[low - a] -= 1
                taken.append(suit * 11 + low - a)
            above = 0
            while high + above < 10 and row[high + above + 1] and size + a + above < most:
                above += 1
            for b in range(above + 1):
                if b:
                    row[high + b] -= 1
                    taken.append(suit * 11 + high + b)
                yield from walk(i + 1, closed + (size < rules.canasta_size <= size + a + b))
            for b in range(1, above + 1):
                row[high + b] += 1
                taken.pop()
        for a in range(1, below + 1):
            row[low - a] += 1
            taken.pop()

    return walk(0, 0)


def _can_lay_out(
    rules: RuleSet,
    hand: HandCounts,
    melds: dict[int, MeldCounts],
    leftover: int,
    canastas: int,
    canastas_needed: int,
) -> bool:
    """``can_lay_out`` without open sequences to extend."""
    if _lays_out_in_groups(rules, hand, melds, leftover, canastas, canastas_needed):
        return True
    if hand.runs is not None and _stranded_in_runs(rules, hand, melds) > leftover:
        return False  # quick answer: as many cards stay stranded whatever runs are laid
    if hand.runs is not None:
        for rest, _, _, closed in _run_plans(rules, hand):
            if _lays_out_in_groups(
                rules, rest, melds, leftover, canastas + closed, canastas_needed
            ):
                return True
    return False


def _stranded_in_runs(rules: RuleSet, hand: HandCounts, melds: dict[int, MeldCounts]) -> int:
    """Cards that every plan of the hand's runs leaves stranded (``_lays_out_in_groups``' quick
    answer): red threes, fewer than three black threes, and single naturals of a rank no meld
    takes that lie in no run of their suit as long as a new sequence."""
    assert hand.runs is not None
    stranded = hand.other + (hand.black_threes if 0 < hand.black_threes < 3 else 0)
    for r in MELDABLE_RANKS:
        if hand.naturals[r] != 1 or r in melds:
            continue
        pos = 10 if r == 0 else r - 3
        for row in hand.runs:
            if row[pos]:
                low = high = pos
                while low > 0 and row[low - 1]:
                    low -= 1
                while high < 10 and row[high + 1]:
                    high += 1
                stranded += high - low + 1 < rules.sequence_min
                break
    return stranded


def _lays_out_in_groups(
    rules: RuleSet,
    hand: HandCounts,
    melds: dict[int, MeldCounts],
    leftover: int,
    canastas: int,
    canastas_needed: int,
) -> bool:
    """``can_lay_out`` without new sequences (the hand's runs are not looked at)."""
    naturals = hand.naturals
    singles: list[int] = []
    pairs: list[int] = []  # ranks of two naturals no meld of the team takes
    for r in MELDABLE_RANKS:
        n = naturals[r]
        if 0 < n < 3 and r not in melds:
            (singles if n == 1 else pairs).append(r)
    few_threes = 0 < hand.black_threes < 3
    stranded = hand.other + (hand.black_threes if few_threes else 0) + len(singles)
    if stranded > leftover:
        return False  # quick answer: each stranded card would have to be the discard
    if leftover <= 1 and len(pairs) > hand.jokers + hand.twos:
        # quick answer: each pair needs a wild card (_lays_out), and no card left over mends
        # that (one of a pair leaves a single, a wild card leaves fewer, another leaves more)
        return False
    if _lays_out(rules, hand, melds, canastas, canastas_needed):
        return True
    if leftover <= 0:
        return False
    # when as many are stranded as may be left over, a card left over must be a stranded one:
    # without any other card as many stay stranded (or more), which the quick answer refuses
    stranded_kinds = [*singles, -3] if few_threes else singles
    kinds = stranded_kinds if stranded == leftover else hand.kinds()
    if leftover == 1 and stranded == 0:
        # nothing is stranded: one of a pair left over leaves a single, and one of three black
        # threes leaves two, which the quick answer refuses with nothing more to leave over
        kinds = [k for k in kinds if k not in pairs and (k != -3 or hand.black_threes != 3)]
    return any(
        _lays_out_in_groups(rules, hand.without(k), melds, leftover - 1, canastas, canastas_needed)
        for k in kinds
    )


def lay_out_value(
    rules: RuleSet,
    hand: HandCounts,
    melds: dict[int, MeldCounts],
    canastas: int,
    canastas_needed: int,
    sequences: Sequence[tuple[int, int, int]] = (),
) -> int | None:
    """The most points a player lays in going out with ``hand``: every card laid, or all but one
    that is then discarded, so that the team holds ``canastas_needed`` canastas (it holds
    ``canastas`` now; ``sequences`` as in ``can_lay_out``). None when the hand cannot be laid
    out so."""
    kinds = hand.kinds()
    if hand.runs is None:
        # cards that no meld can take must be the one discard: two such, and going out is out
        stranded = [r for r in MELDABLE_RANKS if hand.naturals[r] == 1 and r not in melds]
        if 0 < hand.black_threes < 3:
            stranded += [-3] * hand.black_threes
        if hand.other or len(stranded) > 1:
            return None
        if stranded:
            kinds = stranded
    total = _counts_value(rules, hand)
    if len(kinds) == len(hand.kinds()) and can_lay_out(
        rules, hand, melds, 0, canastas, canastas_needed, sequences
    ):
        return total
    best: int | None = None
    for kind in kinds:
        # (the copy without a card knows no runs: which suit it was is not known)
        if can_lay_out(rules, hand.without(kind), melds, 0, canastas, canastas_needed):
            value = total - _kind_value(rules, hand, kind)
            best = value if best is None else max(best, value)
    return best


def _kind_value(rules: RuleSet, hand: HandCounts, kind: int) -> int:
    """One card's value: a rank index, or -1 joker, -2 two, -3 black three (as in ``without``)."""
    if kind >= 0:
        return hand.natural_value[kind]
    return rules.card_value({-1: JOKER, -2: TWO, -3: THREE}[kind])  # clubs: the black three


def _counts_value(rules: RuleSet, hand: HandCounts) -> int:
    """The value of the cards of ``hand`` that can be laid (red threes are laid apart)."""
    return (
        sum(n * v for n, v in zip(hand.naturals, hand.natural_value, strict=True))
        + hand.jokers * rules.card_value(JOKER)
        + hand.twos * rules.card_value(TWO)
        + hand.black_threes * rules.card_value(THREE)
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
    if hand.black_threes in (1, 2, 5):  # black threes go out in melds of three or four
        return False
    if rules.merge_groups and rules.wild_rule == "official" and not rules.max_meld_size:
        return _lays_out_in_several_groups(rules, hand, melds, canastas, canastas_needed)
    size_caps: list[tuple[int, int, bool]] = []  # (size, wild capacity, was a canasta)
    pairs = 0
    for m in melds.values():
        n = 0 if m.rank == WILD_MELD else hand.naturals[m.rank]
        if n > m.room:
            return False
        size_caps.append((m.size + n, m.capacity(rules, n), m.size >= rules.canasta_size))
    for r in MELDABLE_RANKS:
        n = hand.naturals[r]
        if not n or r in melds:
            continue
        if rules.max_meld_size and n > rules.max_meld_size:
            return False
        if n >= max(3, rules.min_naturals_in_group):
            size_caps.append((n, _new_group_capacity(rules, n), False))
        elif n == 2 and rules.max_wilds(2) >= 1:
            pairs += 1
            size_caps.append((3, _new_group_capacity(rules, 2) - 1, False))
        else:
            return False
    wilds = hand.jokers + hand.twos
    if wilds < pairs:
        return False
    extra = wilds - pairs
    spare = extra - sum(cap for _, cap, _ in size_caps)
    wild_meld_canastas = 0
    split_room = _split_groups(rules, hand, melds) * _new_group_capacity(rules, 2)
    if spare > 0 and canastas >= canastas_needed and spare <= split_room:
        # several groups of a rank (Samba): the wild cards no group takes go on new groups of
        # two naturals split from the groups above (each takes one or two), which changes no
        # canasta the team needs (it holds them all)
        return True
    if spare > 0:
        if not rules.wild_melds or spare < 3:
            return False
        wild_meld_canastas = 1 if spare >= rules.canasta_size else 0
        extra -= spare
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
    return canastas + new_canastas + wild_meld_canastas >= canastas_needed


def _lays_out_in_several_groups(
    rules: RuleSet,
    hand: HandCounts,
    melds: dict[int, MeldCounts],
    canastas: int,
    canastas_needed: int,
) -> bool:
    """``_lays_out`` where a team may hold several groups of a rank and merge them (Samba): rank
    by rank, the most canastas each share of the hand's wild cards could make there
    (``_rank_canastas``), and the shares that place every wild card."""
    wilds = hand.jokers + hand.twos
    best = [0] + [-1] * wilds  # by wild cards placed so far: the most new canastas
    for r in MELDABLE_RANKS:
        n = hand.naturals[r]
        meld = melds.get(r)
        if meld is None:
            if not n:
                continue
            parts: tuple[tuple[int, int], ...] = ()
        else:
            parts = meld.parts or ((meld.naturals, meld.wilds),)
            if n < 2 and all(a + b >= rules.canasta_size for a, b in parts):
                continue  # a natural goes on a canasta, which takes no wild card
        made = _rank_canastas(rules.canasta_size, rules.max_wilds_in_group, parts, n, wilds)
        combined = [-1] * (wilds + 1)
        for used, count in enumerate(best):
            if count < 0:
                continue
            for more, extra in enumerate(made[: wilds + 1 - used]):
                if extra >= 0 and count + extra > combined[used + more]:
                    combined[used + more] = count + extra
        if max(combined) < 0:
            return False
        best = combined
    return best[wilds] >= 0 and canastas + best[wilds] >= canastas_needed


@functools.lru_cache(maxsize=4096)
def _rank_canastas(
    size: int, most: int, parts: tuple[tuple[int, int], ...], naturals: int, wilds: int
) -> tuple[int, ...]:
    """Samba: the most new canastas one rank can make when ``naturals`` of the hand's naturals of
    that rank and w of its wild cards are all laid there, for each w up to ``wilds`` (-1 where
    they cannot all be laid), with canastas of ``size`` cards and at most ``most`` wild cards in
    a group. ``parts`` are the team's groups of the rank as (naturals, wild
    cards): those short of a canasta may be merged into clusters within the wild-card limit (no
    wild card ever comes to a canasta; the cards of the hand go on a cluster before it is one),
    and the hand may start new groups of two naturals or more.

    Any such final lay is reachable: a cluster is first merged from the groups holding its wild
    cards (two at most), then gets the hand's cards in one addition, then the rest of its groups
    (natural, so a canasta may take them); a canasta takes the naturals left over."""
    short = [p for p in parts if p[0] + p[1] < size]
    home = bool(parts)  # a group of the rank takes any natural left over
    best = [-1] * (wilds + 1)
    for clusters in _clusters(tuple(short), most):
        for new_groups in range(naturals // 2 + 1):
            # slots: (size, wild cards it may take, whether it needs one more card: a new group
            # of two naturals)
            slots = [(s, most - w, False) for s, w in clusters]
            slots += [(2, most, True)] * new_groups
            spare = naturals - 2 * new_groups
            states = {(0, 0): 0}  # (naturals, wild cards) laid on the slots so far: canastas
            for s, room, needs in slots:
                after: dict[tuple[int, int], int] = {}
                for (a, b), count in states.items():
                    for y in range(min(room, wilds - b) + 1):
                        choices = {max(0, size - s - y)}
                        choices.add(1 if needs and not y else 0)
                        for x in choices:
                            if a + x > spare:
                                continue
                            key = (a + x, b + y)
                            value = count + (s + x + y >= size)
                            if after.get(key, -1) < value:
                                after[key] = value
                states = after
            for (a, b), count in states.items():
                if a < spare and not (home or slots):
                    continue  # naturals with nowhere to go
                if best[b] < count:
                    best[b] = count
    return tuple(best)


def _clusters(groups: tuple[tuple[int, int], ...], most: int) -> list[list[tuple[int, int]]]:
    """Every way to merge ``groups`` (as (naturals, wild cards)) into clusters of at most
    ``most`` wild cards, each cluster as (size, wild cards)."""
    if not groups:
        return [[]]
    first, rest = groups[0], groups[1:]
    out: list[list[tuple[int, int]]] = []
    for partition in _clusters(rest, most):
        out.append([(first[0] + first[1], first[1]), *partition])
        for i, (s, w) in enumerate(partition):
            if w + first[1] <= most:
                joined = (s + first[0] + first[1], w + first[1])
                out.append([*partition[:i], joined, *partition[i + 1 :]])
    return out


__all__ = [
    "HandCounts",
    "MeldCounts",
    "best_lay_value",
    "can_lay_out",
]
