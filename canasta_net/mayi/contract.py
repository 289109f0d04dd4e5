"""The contract: checking a first lay-down against it, and listing every lay-down a hand allows.

A lay-down is a tuple of groups (each a tuple of faces).  Its canonical form, the one the engine
lists, has the sets first by rank, then the sequences by suit, each group in
:func:`~canasta_net.mayi.melds.canonical_faces` order.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from itertools import combinations, product

from ..cards import ACE, NUM_FACES, make_face
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


_RANK_FACES: tuple[tuple[int, ...], ...] = tuple(
    tuple(make_face(rank, suit) for suit in range(4)) for rank in range(13)
)


@lru_cache(maxsize=4096)
def _sets_of(
    faces: tuple[int, ...], held: tuple[int, ...], smallest: int, largest: int
) -> tuple[tuple[int, ...], ...]:
    """Every set of ``faces`` (one rank's) with at most ``held`` of each face, each multiset of
    suits once."""
    out = []
    for take in product(*(range(k + 1) for k in held)):
        if smallest <= sum(take) <= largest:
            out.append(tuple(f for f, k in zip(faces, take, strict=True) for _ in range(k)))
    return tuple(out)


@lru_cache(maxsize=4096)
def _sequences_of(
    ranks: int, suit: int, shortest: int, longest: int
) -> tuple[tuple[int, ...], ...]:
    """Every run of ``suit`` a hand holding the ranks of the bit set ``ranks`` (bit r: rank r)
    holds, from the lowest start, each of the allowed lengths."""
    present = [bool(ranks >> p & 1) for p in range(HIGH_ACE)]
    present.append(bool(ranks >> ACE & 1))
    out = []
    full = False
    for low in range(HIGH_ACE + 1 - shortest + 1):
        high = low
        while high <= HIGH_ACE and present[high] and high - low < longest:
            high += 1
        # positions low .. high-1 are held: every run from low of an allowed length
        for end in range(low + shortest - 1, high):
            if end - low + 1 == 13:  # A..K with the ace low or high: the same cards, once
                if full:
                    continue
                full = True
            out.append(tuple(face_at(p, suit) for p in range(low, end + 1)))
    return tuple(out)


def contract_lay_downs(rules: MayIRules, contract: Contract, hand: Sequence[int]) -> list[Groups]:
    """Every lay-down of ``hand`` (faces) that meets ``contract``, canonical, each once: the
    sets' ranks and the sequences' suits in increasing order, each group's options in
    ``_sets_of`` / ``_sequences_of`` order, the last group varying fastest."""
    counts = [0] * NUM_FACES
    for f in hand:
        counts[f] += 1
    set_options: list[tuple[tuple[int, ...], ...]] = []  # by rank, increasing
    if contract.sets:
        by_rank = [0] * 13
        for f in hand:
            by_rank[f % 13] += 1
        smallest, largest = rules.min_set, rules.max_set
        ranks = [r for r in range(13) if by_rank[r] >= smallest]
        if len(ranks) < contract.sets:
            return []
        for rank in ranks:
            faces = _RANK_FACES[rank]
            held = (counts[faces[0]], counts[faces[1]], counts[faces[2]], counts[faces[3]])
            set_options.append(_sets_of(faces, held, smallest, largest))
    seq_options: list[tuple[tuple[int, ...], ...]] = []  # by suit, increasing
    if contract.sequences:
        masks = [0, 0, 0, 0]
        for f in hand:
            masks[f // 13] |= 1 << (f % 13)
        for suit, mask in enumerate(masks):
            if mask.bit_count() >= rules.min_sequence:
                options = _sequences_of(mask, suit, rules.min_sequence, rules.max_sequence)
                if options:
                    seq_options.append(options)
        if len(seq_options) < contract.sequences:
            return []
    out: list[Groups] = []
    for set_slots in combinations(set_options, contract.sets):
        for seq_slots in combinations(seq_options, contract.sequences):
            if not set_slots or not seq_slots:
                # groups of different ranks (or suits) never share a card
                out += product(*set_slots, *seq_slots)
            else:
                _fill([*set_slots, *seq_slots], 0, counts, (), out)
    return out


def _fill(
    slots: list[tuple[tuple[int, ...], ...]],
    i: int,
    left: list[int],
    chosen: Groups,
    out: list[Groups],
) -> None:
    """Every choice of one group a slot from ``slots[i:]`` that the cards ``left`` (counts by
    face, restored on return) hold, after ``chosen``, appended to ``out``."""
    if i == len(slots):
        out.append(chosen)
        return
    for group in slots[i]:
        fits = True
        for f in group:
            left[f] -= 1
            if left[f] < 0:
                fits = False
        if fits:
            _fill(slots, i + 1, left, (*chosen, group), out)
        for f in group:
            left[f] += 1
