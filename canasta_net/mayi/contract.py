"""The contract: checking a first lay-down against it, and listing every lay-down a hand allows.

A lay-down is a tuple of groups (each a tuple of faces).  Its canonical form, the one the engine
lists, has the sets first by rank, then the sequences by suit, each group in
:func:`~canasta_net.mayi.melds.canonical_faces` order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import combinations, product

from ..cards import ACE, make_face
from ..errors import IllegalAction
from ..reasons import refuse
from .melds import HIGH_ACE, MeldKind, Shape, canonical_faces, face_at, shape_of
from .rules import Contract, MayIRules

Groups = tuple[tuple[int, ...], ...]


def check_contract(
    rules: MayIRules, contract: Contract, groups: Sequence[Sequence[int]]
) -> list[Shape]:
    """The shapes of a lay-down that meets ``contract`` exactly, or IllegalAction."""
    if len(groups) != contract.melds:
        raise refuse(
            "contract-not-met.count",
            sets=contract.sets,
            sequences=contract.sequences,
            melds=contract.melds,
        )
    shapes = [shape_of(rules, g) for g in groups]
    sets = [s for s in shapes if s.kind is MeldKind.SET]
    sequences = [s for s in shapes if s.kind is MeldKind.SEQUENCE]
    if len(sets) != contract.sets or len(sequences) != contract.sequences:
        raise refuse(
            "contract-not-met",
            sets=contract.sets,
            sequences=contract.sequences,
            laid_sets=len(sets),
            laid_sequences=len(sequences),
        )
    if len({s.rank for s in sets}) != len(sets):
        raise refuse("contract-duplicate-rank")
    if len({s.suit for s in sequences}) != len(sequences):
        raise refuse("contract-duplicate-suit")
    return shapes


def canonical_groups(rules: MayIRules, groups: Sequence[Sequence[int]]) -> Groups | None:
    """The canonical form of a lay-down whose groups are all valid melds, else None."""
    try:
        shapes = [shape_of(rules, g) for g in groups]
    except IllegalAction:
        return None
    ordered = sorted(zip(shapes, groups, strict=True), key=lambda p: p[0].key)
    return tuple(canonical_faces(s, g) for s, g in ordered)


def _set_candidates(rules: MayIRules, counts: Counter[int], rank: int) -> list[tuple[int, ...]]:
    """Every set of ``rank`` the hand holds, each multiset of suits once."""
    faces = tuple(make_face(rank, suit) for suit in range(4))
    held = tuple(counts[f] for f in faces)
    return list(_sets_of(faces, held, rules.min_set, rules.max_set))


@lru_cache(maxsize=4096)
def _sets_of(
    faces: tuple[int, ...], held: tuple[int, ...], smallest: int, largest: int
) -> tuple[tuple[int, ...], ...]:
    out = []
    for take in product(*(range(k + 1) for k in held)):
        if smallest <= sum(take) <= largest:
            out.append(tuple(f for f, k in zip(faces, take, strict=True) for _ in range(k)))
    return tuple(out)


def _sequence_candidates(rules: MayIRules, ranks: set[int], suit: int) -> list[tuple[int, ...]]:
    """Every run of ``suit`` the hand holds (``ranks``: the ranks it has in that suit)."""
    present = [p in ranks for p in range(HIGH_ACE)]
    present.append(ACE in ranks)
    out = []
    full = False
    for low in range(HIGH_ACE + 1 - rules.min_sequence + 1):
        high = low
        while high <= HIGH_ACE and present[high] and high - low < rules.max_sequence:
            high += 1
        # positions low .. high-1 are held: every run from low of an allowed length
        for end in range(low + rules.min_sequence - 1, high):
            if end - low + 1 == 13:  # A..K with the ace low or high: the same cards, once
                if full:
                    continue
                full = True
            out.append(tuple(face_at(p, suit) for p in range(low, end + 1)))
    return out


def contract_lay_downs(
    rules: MayIRules, contract: Contract, hand: Sequence[int]
) -> Iterator[Groups]:
    """Every lay-down of ``hand`` (faces) that meets ``contract``, canonical, each once."""
    counts = Counter(hand)
    set_options: dict[int, list[tuple[int, ...]]] = {}
    if contract.sets:
        by_rank = Counter(f % 13 for f in hand)
        for rank, n in by_rank.items():
            if n >= rules.min_set:
                set_options[rank] = _set_candidates(rules, counts, rank)
        if len(set_options) < contract.sets:
            return
    seq_options: dict[int, list[tuple[int, ...]]] = {}
    if contract.sequences:
        by_suit: dict[int, set[int]] = {}
        for f in counts:
            by_suit.setdefault(f // 13, set()).add(f % 13)
        for suit, held in by_suit.items():
            if len(held) >= rules.min_sequence:
                options = _sequence_candidates(rules, held, suit)
                if options:
                    seq_options[suit] = options
        if len(seq_options) < contract.sequences:
            return
    for set_ranks in combinations(sorted(set_options), contract.sets):
        for suits in combinations(sorted(seq_options), contract.sequences):
            slots = [set_options[r] for r in set_ranks] + [seq_options[s] for s in suits]
            yield from _fill(slots, 0, counts, ())


def _fill(
    slots: list[list[tuple[int, ...]]], i: int, left: Counter[int], chosen: Groups
) -> Iterator[Groups]:
    if i == len(slots):
        yield chosen
        return
    for group in slots[i]:
        need = Counter(group)
        if all(left[f] >= k for f, k in need.items()):
            yield from _fill(slots, i + 1, left - need, (*chosen, group))
