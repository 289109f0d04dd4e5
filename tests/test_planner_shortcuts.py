"""The planner's shortcuts answer as its straightforward form does.

``_run_plans`` skips the places no run starts at, and ``can_lay_out`` tries the hand in groups
before its runs' plans: on random hands (with a run of one suit added, so that the plans are
many) they give what the one-place-at-a-time walk and the plans-first look-ahead below give.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from canasta_net.canasta import planner
from canasta_net.canasta.melds import rank_at
from canasta_net.canasta.planner import MAX_RUN_PLANS, HandCounts, MeldCounts
from canasta_net.canasta.rules import RuleSet, preset
from canasta_net.cards import JOKER, KING

_Plan = tuple[list[int], int, int, int]


def reference_run_plans(rules: RuleSet, hand: HandCounts) -> list[_Plan]:
    """The plans of the hand's runs, walking one run position at a time."""
    assert hand.runs is not None
    counts = [list(r) for r in hand.runs]
    longest = min(rules.sequence_max, rules.max_meld_size or rules.sequence_max)
    chosen: list[tuple[int, int]] = []
    out: list[_Plan] = []

    def walk(suit: int, pos: int, cap: int) -> None:
        if len(out) >= MAX_RUN_PLANS:
            return
        if suit == 4:
            if chosen:
                naturals = list(hand.naturals)
                value = cards = closed = 0
                for first, length in chosen:
                    for p in range(first, first + length):
                        naturals[rank_at(p)] -= 1
                        value += hand.natural_value[rank_at(p)]
                    cards += length
                    closed += length >= rules.canasta_size
                out.append((naturals, value, cards, closed))
            return
        if pos == 11:
            walk(suit + 1, 0, longest)
            return
        row = counts[suit]
        reach = 0
        while pos + reach < 11 and row[pos + reach] and reach < cap:
            reach += 1
        for length in range(reach, rules.sequence_min - 1, -1):
            for q in range(pos, pos + length):
                row[q] -= 1
            chosen.append((pos, length))
            walk(suit, pos, length)
            chosen.pop()
            for q in range(pos, pos + length):
                row[q] += 1
        walk(suit, pos + 1, longest)

    walk(0, 0, longest)
    return out


def reference_can_lay_out(
    rules: RuleSet,
    hand: HandCounts,
    melds: dict[int, MeldCounts],
    leftover: int,
    canastas: int,
    needed: int,
) -> bool:
    """``can_lay_out`` the straightforward way: each plan of the runs, then the hand in
    groups (a card left over tried as each kind in turn)."""
    if hand.runs is not None:
        for rest, _, _, closed in planner._run_plans(rules, hand):
            if reference_can_lay_out(rules, rest, melds, leftover, canastas + closed, needed):
                return True
    if planner._lays_out(rules, hand, melds, canastas, needed):
        return True
    if leftover <= 0:
        return False
    return any(
        reference_can_lay_out(rules, hand.without(k), melds, leftover - 1, canastas, needed)
        for k in hand.kinds()
    )


def _hand(rules: RuleSet, faces: list[int], run: tuple[int, int, int]) -> HandCounts:
    suit, low, length = run
    faces = faces + [suit * 13 + rank_at(p) for p in range(low, min(low + length, 11))]
    return HandCounts.of(rules, faces)


HANDS = st.lists(st.integers(0, JOKER), min_size=2, max_size=14)
RUNS = st.tuples(st.integers(0, 3), st.integers(0, 10), st.integers(0, 9))


@settings(max_examples=200, deadline=None)
@given(variant=st.sampled_from(["samba", "bolivia"]), faces=HANDS, run=RUNS)
def test_the_runs_plans_are_those_of_the_walk_one_place_at_a_time(
    variant: str, faces: list[int], run: tuple[int, int, int]
) -> None:
    rules = preset(variant)
    hand = _hand(rules, faces, run)
    plans = [
        (rest.naturals, value, cards, closed)
        for rest, value, cards, closed in planner._run_plans(rules, hand)
    ]
    assert plans == reference_run_plans(rules, hand)


@settings(max_examples=200, deadline=None)
@given(
    variant=st.sampled_from(["classic", "samba", "samba-2p"]),
    faces=st.lists(st.integers(0, JOKER), max_size=5),  # a few cards besides the run
    run=RUNS,
    leftover=st.integers(0, 1),
    canastas=st.integers(0, 2),
    group=st.integers(0, 5),
)
def test_going_out_in_groups_first_answers_as_the_plans_first(
    variant: str,
    faces: list[int],
    run: tuple[int, int, int],
    leftover: int,
    canastas: int,
    group: int,
) -> None:
    rules = preset(variant)
    hand = _hand(rules, faces, run)
    melds = {KING: MeldCounts(KING, 2 + group, 1)} if group else {}
    needed = rules.canastas_to_go_out
    assert planner.can_lay_out(rules, hand, melds, leftover, canastas, needed) == (
        reference_can_lay_out(rules, hand, melds, leftover, canastas, needed)
    )


@settings(max_examples=300, deadline=None)
@given(
    variant=st.sampled_from(["classic", "classic-3p", "vienna", "bolivia"]),
    faces=st.lists(st.integers(0, JOKER), min_size=1, max_size=12),
    pairs=st.lists(st.integers(0, JOKER), max_size=4),  # cards that come twice: groups to make
    leftover=st.integers(0, 2),
    canastas=st.integers(0, 2),
    group=st.integers(0, 5),
)
def test_a_card_left_over_is_tried_among_the_stranded_ones_alone_when_it_must_be_one(
    variant: str,
    faces: list[int],
    pairs: list[int],
    leftover: int,
    canastas: int,
    group: int,
) -> None:
    """When as many cards are stranded (no meld could take them) as may be left over, only
    they are tried as the card left over: the answer is the one of trying every kind."""
    rules = preset(variant)
    hand = HandCounts.of(rules, faces + pairs + pairs)
    melds = {KING: MeldCounts(KING, 2 + group, 1)} if group else {}
    needed = rules.canastas_to_go_out
    assert planner.can_lay_out(rules, hand, melds, leftover, canastas, needed) == (
        reference_can_lay_out(rules, hand, melds, leftover, canastas, needed)
    )


@settings(max_examples=300, deadline=None)
@given(
    variant=st.sampled_from(["classic", "classic-3p", "vienna", "samba", "bolivia"]),
    faces=st.lists(st.integers(0, JOKER), max_size=6),
    pairs=st.lists(st.integers(0, 51), min_size=1, max_size=6),  # naturals that come twice
    triples=st.lists(st.sampled_from([2, 41, 5, 18, 31]), max_size=2),  # three times
    leftover=st.integers(0, 2),
    canastas=st.integers(0, 2),
    group=st.integers(0, 5),
)
def test_pairs_without_enough_wild_cards_are_refused_as_the_full_look_ahead_refuses_them(
    variant: str,
    faces: list[int],
    pairs: list[int],
    triples: list[int],
    leftover: int,
    canastas: int,
    group: int,
) -> None:
    """With at most one card left over, more pairs than wild cards are refused at once, and a
    card of a pair (or one of three black threes) is not tried as the one left over: the answer
    is the one of trying every kind."""
    rules = preset(variant)
    hand = HandCounts.of(rules, faces + pairs + pairs + triples * 3)
    melds = {KING: MeldCounts(KING, 2 + group, 1)} if group else {}
    needed = rules.canastas_to_go_out
    assert planner.can_lay_out(rules, hand, melds, leftover, canastas, needed) == (
        reference_can_lay_out(rules, hand, melds, leftover, canastas, needed)
    )
