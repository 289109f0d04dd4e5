"""May I?'s listing agrees with the straightforward one it replaced.

``DealState.legal_actions`` builds its list with shortcuts (shared action values, lay-offs looked
up by a set's rank and a sequence's suit, the contract's lay-downs from face counts). These tests
list positions reached by seeded random play, and random hands, both that way and the slow way
below (the code before the shortcuts), and require the same list in the same order.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import combinations, product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canasta_net.cards import ACE, make_face
from canasta_net.mayi import MAY_I, DealState, MayIAction, MayIRules, Phase
from canasta_net.mayi.actions import (
    AddToMeld,
    Allow,
    Deny,
    Discard,
    Draw,
    MayI,
    Meld,
    Pass,
    TakeDiscard,
)
from canasta_net.mayi.contract import contract_lay_downs
from canasta_net.mayi.melds import HIGH_ACE, face_at
from canasta_net.mayi.rules import Contract

Groups = tuple[tuple[int, ...], ...]


# ---------------------------------------------------------------- the slow, reference listing
def _reference_sets(rules: MayIRules, counts: Counter[int], rank: int) -> list[tuple[int, ...]]:
    faces = tuple(make_face(rank, suit) for suit in range(4))
    held = tuple(counts[f] for f in faces)
    out = []
    for take in product(*(range(k + 1) for k in held)):
        if rules.min_set <= sum(take) <= rules.max_set:
            out.append(tuple(f for f, k in zip(faces, take, strict=True) for _ in range(k)))
    return out


def _reference_sequences(rules: MayIRules, ranks: set[int], suit: int) -> list[tuple[int, ...]]:
    present = [p in ranks for p in range(HIGH_ACE)]
    present.append(ACE in ranks)
    out = []
    full = False
    for low in range(HIGH_ACE + 1 - rules.min_sequence + 1):
        high = low
        while high <= HIGH_ACE and present[high] and high - low < rules.max_sequence:
            high += 1
        for end in range(low + rules.min_sequence - 1, high):
            if end - low + 1 == 13:
                if full:
                    continue
                full = True
            out.append(tuple(face_at(p, suit) for p in range(low, end + 1)))
    return out


def _reference_fill(
    slots: list[list[tuple[int, ...]]], i: int, left: Counter[int], chosen: Groups
) -> Iterator[Groups]:
    if i == len(slots):
        yield chosen
        return
    for group in slots[i]:
        need = Counter(group)
        if all(left[f] >= k for f, k in need.items()):
            yield from _reference_fill(slots, i + 1, left - need, (*chosen, group))


def reference_lay_downs(
    rules: MayIRules, contract: Contract, hand: Sequence[int]
) -> Iterator[Groups]:
    counts = Counter(hand)
    set_options: dict[int, list[tuple[int, ...]]] = {}
    if contract.sets:
        for rank, n in Counter(f % 13 for f in hand).items():
            if n >= rules.min_set:
                set_options[rank] = _reference_sets(rules, counts, rank)
        if len(set_options) < contract.sets:
            return
    seq_options: dict[int, list[tuple[int, ...]]] = {}
    if contract.sequences:
        by_suit: dict[int, set[int]] = {}
        for f in counts:
            by_suit.setdefault(f // 13, set()).add(f % 13)
        for suit, held in by_suit.items():
            if len(held) >= rules.min_sequence:
                options = _reference_sequences(rules, held, suit)
                if options:
                    seq_options[suit] = options
        if len(seq_options) < contract.sequences:
            return
    for set_ranks in combinations(sorted(set_options), contract.sets):
        for suits in combinations(sorted(seq_options), contract.sequences):
            slots = [set_options[r] for r in set_ranks] + [seq_options[s] for s in suits]
            yield from _reference_fill(slots, 0, counts, ())


def reference_listing(state: DealState) -> list[MayIAction]:
    """Every legal action, each candidate built anew and checked in full where it may fail."""
    if state.phase is Phase.OVER:
        return []
    top = state.pile_top
    if state.phase is Phase.DRAW:
        draws: list[MayIAction] = [Draw()]
        return draws + ([TakeDiscard(top)] if top is not None else [])
    if state.phase is Phase.BUY_OFFER:
        assert top is not None
        return [MayI(top), Pass()]
    if state.phase is Phase.BUY_PERMISSION:
        assert top is not None
        return [Allow(), Deny(top)]
    seat, rules = state.turn, state.rules
    hand = state.hand_faces(seat)
    distinct = sorted(set(hand))
    strict_last = not state.contract.discard_out
    out: list[MayIAction] = []
    if not state.down[seat]:
        for groups in reference_lay_downs(rules, state.contract, hand):
            lay = Meld(groups)
            if len(lay.cards) != len(hand) - 1 or not strict_last or state.is_legal(lay):
                out.append(lay)
    else:
        for owner, seat_melds in enumerate(state.melds):
            for i, meld in enumerate(seat_melds):
                for f in distinct:
                    if meld.fits(rules, f):
                        add = AddToMeld(owner, i, f)
                        if len(hand) != 2 or not strict_last or state.is_legal(add):
                            out.append(add)
    if len(hand) > 1 or not strict_last:
        out += [Discard(f) for f in distinct]
    return out


# ---------------------------------------------------------------- the comparisons
RULES = [MAY_I, dataclasses.replace(MAY_I, players=3), dataclasses.replace(MAY_I, players=5)]


def _play(rules: MayIRules, deal: int, seed: int) -> Iterator[DealState]:
    """The positions of one deal of random play that lays whenever it can (so that melds,
    lay-offs and the last cards are reached), each position once."""
    rng = random.Random(seed)
    order = list(range(DealState.blank(rules).deck.size))
    rng.shuffle(order)
    state = DealState(rules, order, dealer=seed % rules.players, deal=deal)
    while not state.is_over:
        yield state
        legal = state.legal_actions()
        lays = [a for a in legal if isinstance(a, Meld | AddToMeld)]
        state.apply(rng.choice(lays) if lays and rng.random() < 0.8 else rng.choice(legal))


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r.players}p")
@pytest.mark.parametrize("deal", range(MAY_I.deals))
def test_the_listing_agrees_with_the_reference_in_random_play(rules: MayIRules, deal: int) -> None:
    lays = adds = 0
    for seed in range(4):
        for state in _play(rules, deal, seed):
            listed = state.legal_actions()
            assert listed == reference_listing(state), state.phase
            lays += any(isinstance(a, Meld) for a in listed)
            adds += any(isinstance(a, AddToMeld) for a in listed)
    assert lays + adds  # the play reached lays


@settings(max_examples=150, deadline=None)
@given(
    hand=st.lists(st.integers(0, 51), min_size=3, max_size=16),
    contract=st.sampled_from(
        [*MAY_I.contracts, Contract(1, 2), Contract(2, 2), Contract(0, 3), Contract(4, 0)]
    ),
)
def test_the_contract_lay_downs_agree_with_the_reference(
    hand: list[int], contract: Contract
) -> None:
    # random hands of up to two decks' worth of each face
    hand = [f for f, k in Counter(hand).items() for _ in range(min(k, 2))]
    assert list(contract_lay_downs(MAY_I, contract, hand)) == list(
        reference_lay_downs(MAY_I, contract, hand)
    )


def test_a_hand_rich_in_one_suit_and_rank_lists_every_mixed_lay_down() -> None:
    # sets and sequences that compete for the same cards: the lists must still agree
    clubs = [make_face(r, 0) for r in range(13)]
    diamonds = [make_face(r, 1) for r in range(2, 9)]
    hand = [
        *clubs,
        *diamonds,
        *(make_face(5, s) for s in (2, 3)),
        *(make_face(8, s) for s in (2, 3)),
    ]
    for contract in (Contract(1, 1), Contract(2, 1), Contract(1, 2)):
        expected = list(reference_lay_downs(MAY_I, contract, hand))
        assert expected
        assert list(contract_lay_downs(MAY_I, contract, hand)) == expected
