"""An audit of the three-deck games against ``docs/spec/RULES.md`` sections 4 (Samba, with its 2-
and 3-player forms) and 5 (Bolivia), sentence by sentence: the edges that
``tests/test_cases_variants.py`` leaves open.

Every accepted action is also checked against ``legal_actions`` (``rulecases.act``), every
refusal asserts the reason code, that the state is unchanged and that the action is not listed
(``rulecases.rejects``); scores are exact numbers.  Where RULES.md is silent the test names the
choice (docs/variants.md, "Choices").
"""

from __future__ import annotations

import functools
import itertools
import random
from collections import Counter
from typing import Any

import pytest
from rulecases import act, faces, rejects, short_position, texts

from canasta_net.canasta.actions import Draw, Meld, TakeTop
from canasta_net.canasta.match import Match
from canasta_net.canasta.melds import MeldKind, canasta_bonus, group_shape
from canasta_net.canasta.rules import preset
from canasta_net.canasta.scoring import score_hand
from canasta_net.canasta.state import EndReason, HandState, Phase
from canasta_net.cards import parse_face
from canasta_net.errors import IllegalAction

SAMBA = preset("samba")
SAMBA_2P = preset("samba-2p")
SAMBA_3P = preset("samba-3p")
BOLIVIA = preset("bolivia")


def cards(text: str) -> list[str]:
    return text.split()


def bol(**kw: Any) -> HandState:
    """A Bolivia position; the first-canasta bonus is taken as given unless said otherwise."""
    kw.setdefault("canasta_bonus_given", True)
    return short_position("bolivia", **kw)


def listed(state: HandState) -> list[str]:
    return [str(a) for a in state.legal_actions()]


K7 = cards("KC KD KH KS KC KD KH")  # natural canasta of kings, 70
RUN_H = cards("4H 5H 6H 7H 8H 9H 10H")  # a samba / escalera, 50
RUN_S = cards("4S 5S 6S 7S 8S 9S 10S")
BOLIVIA7 = cards("2C 2D 2H 2S JK JK JK")  # 4 x 20 + 3 x 50 = 230


# ================================================================= Samba: seats, deal, draw
@pytest.mark.parametrize(("name", "players"), [("samba", 4), ("samba-2p", 2), ("samba-3p", 3)])
def test_samba_forms_share_every_rule_but_the_seating(name: str, players: int) -> None:
    r = preset(name)
    assert (r.players, r.teams, r.hand_size, r.draw_count, r.deck_size) == (
        players,
        2 if players == 4 else players,
        15,
        2,
        162,
    )
    assert (r.target, r.going_out_bonus, r.concealed_bonus, r.canastas_to_go_out) == (
        10000,
        200,
        200,
        2,
    )
    assert r.pile_always_frozen and r.take_top_to_sequence and not r.wilds_on_canasta


def test_samba_3p_minimums_follow_each_players_own_score() -> None:
    match = Match(SAMBA_3P, scores=[-10, 1500, 7000])
    assert match.minimums() == [15, 90, 150]
    result = Match(SAMBA_3P, scores=[10000, 9000, 12000]).result
    assert result is not None and result.winner == 2
    assert Match(SAMBA_2P, scores=[9995, 9995]).result is None


def test_samba_draw_of_two_with_two_red_threes() -> None:
    # stock bottom first: 3H and 3D are drawn first, each laid and replaced by the next card
    state = short_position(
        "samba", phase="draw", hands={0: ["KH", "KD"]}, stock=["4C", "5C", "6C", "3H", "3D"]
    )
    act(state, "draw")
    assert faces(state, 0) == ["5C", "6C", "KD", "KH"]
    assert texts(state, state.red_threes[0]) == ["3D", "3H"]
    assert texts(state, state.stock) == ["4C"] and state.phase is Phase.PLAY


def test_samba_draw_of_two_red_three_then_the_last_card() -> None:
    # 3H first: laid, replaced by the last card; the stock is empty, the turn goes on
    state = short_position(
        "samba", phase="draw", hands={0: ["KH", "KD"]}, stock=["9C", "3H"], pile=["4S"]
    )
    act(state, "draw")
    assert faces(state, 0) == ["9C", "KD", "KH"] and state.stock == []
    assert texts(state, state.red_threes[0]) == ["3H"]
    assert state.end is None and state.phase is Phase.PLAY
    act(state, "discard 9C")
    act(state, "draw")  # the next player: nothing to draw, the hand ends without a bonus
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED
    assert [s.going_out for s in score_hand(state)] == [0, 0]


def test_samba_draw_of_two_whose_second_card_is_the_last_red_three() -> None:
    state = short_position("samba", phase="draw", hands={0: ["KH", "KD"]}, stock=["3D", "9C"])
    act(state, "draw")
    assert state.end is not None and state.end.reason is EndReason.LAST_RED_THREE
    assert faces(state, 0) == ["9C", "KD", "KH"]
    assert texts(state, state.red_threes[0]) == ["3D"]
    both = short_position("samba", phase="draw", hands={0: ["KH", "KD"]}, stock=["3D", "3H"])
    act(both, "draw")
    assert both.end is not None and both.end.reason is EndReason.LAST_RED_THREE
    assert faces(both, 0) == ["KD", "KH"] and len(both.red_threes[0]) == 2


# ================================================================= Samba: sequences
def test_samba_sequence_ace_high_extends_down_not_past_the_ace() -> None:
    state = short_position(
        "samba",
        hands={0: cards("9H AH 2H 4H 10D QC QD")},
        melds={0: [cards("10H JH QH KH"), cards("5H 6H 7H")]},
    )
    act(state, "add 0 AH")
    run = state.melds[0][0]
    assert run.label() == "10-AH run" and run.size == 5
    rejects(state, "add 0 2H", "not-a-sequence")  # a two is wild, never in a sequence
    rejects(state, "add 1 4H 2H", "not-a-sequence")
    act(state, "add 0 9H")
    assert run.label() == "9-AH run" and run.size == 6
    # the ace is high only: it never goes below a four
    low = short_position(
        "samba", hands={0: cards("AH 3H QC QD 9S")}, melds={0: [cards("4H 5H 6H")]}
    )
    rejects(low, "add 0 AH", "not-a-sequence")
    rejects(low, "add 0 3H", "not-a-sequence")  # no three below the four


def test_samba_sequence_closed_by_an_addition_at_both_ends() -> None:
    state = short_position(
        "samba", hands={0: cards("4H 10H JH QC QD 9S")}, melds={0: [cards("5H 6H 7H 8H 9H")]}
    )
    act(state, "add 0 4H 10H")
    run = state.melds[0][0]
    assert run.size == 7 and run.is_closed(SAMBA) and canasta_bonus(SAMBA, run) == 1500
    rejects(state, "add 0 JH", "meld-closed")
    assert "add 0 JH" not in listed(state)


def test_samba_laid_from_the_hand_whole() -> None:
    state = short_position(
        "samba",
        hands={0: [*cards("JS 10S 9S QS KS AS 8S"), "4C", "5D"]},
        melds={0: [cards("6C 6D 6S")]},
    )
    act(state, "meld 8S 9S 10S JS QS KS AS")
    run = state.melds[0][-1]
    assert run.kind is MeldKind.SEQUENCE and run.size == 7 and run.is_closed(SAMBA)
    assert state.canastas(0) == 1
    s = score_hand(state)[0]
    assert (s.melds, s.canasta_bonus) == (15 + 5 * 10 + 20 + 10, 1500)


def test_samba_two_sequences_of_one_suit_meeting_end_to_end() -> None:
    # 4-6H and 7-9H touch: they stay two melds; the 7-card total is no samba
    state = short_position(
        "samba",
        hands={0: cards("10H 3S QC QD 9S")},
        melds={0: [cards("4H 5H 6H"), cards("7H 8H 9H")]},
    )
    assert state.canastas(0) == 0
    act(state, "add 1 10H")
    assert [m.size for m in state.melds[0]] == [3, 4]
    assert not any("merge" in a for a in listed(state))
    rejects(state, "merge 0 1", "wrong-rank")


def test_samba_sequence_rules_hold_for_each_form() -> None:
    for name in ("samba-2p", "samba-3p"):
        state = short_position(name, hands={0: cards("QH KH AH 2H 9C 9D")}, melds={0: [K7[:3]]})
        rejects(state, "meld QH KH 2H", "not-a-sequence")
        act(state, "meld QH KH AH")
        assert state.melds[0][-1].kind is MeldKind.SEQUENCE


# ================================================================= Samba: groups
def test_samba_natural_cards_go_on_a_mixed_canasta_with_two_wilds() -> None:
    state = short_position(
        "samba",
        hands={0: cards("QS QC 2S 9C 9D")},
        melds={0: [cards("QC QD QH QS QH 2D JK")]},
    )
    rejects(state, "add 0 2S", "wild-on-canasta")
    act(state, "add 0 QS QC")
    assert state.melds[0][0].size == 9
    s = score_hand(state)[0]
    assert (s.canasta_bonus, s.mixed_canastas) == (300, 1)


def test_samba_mixed_canasta_laid_from_the_hand_with_two_wilds() -> None:
    state = short_position(
        "samba",
        hands={0: [*cards("KH KD KS KC KH JK 2C"), "9C", "9D"]},
        melds={0: [cards("6C 6D 6S")]},
    )
    rejects(state, "meld KH KD KS KC JK 2C 2C", "card-not-in-hand")
    act(state, "meld KH KD KS KC KH JK 2C")
    kings = state.melds[0][-1]
    assert kings.size == 7 and kings.wilds == 2 and kings.is_canasta(SAMBA)
    assert canasta_bonus(SAMBA, kings) == 300


def test_samba_merge_never_brings_a_wild_card_to_a_canasta() -> None:
    state = short_position(
        "samba",
        hands={0: cards("4C 5C 9D")},
        melds={0: [cards("QC QD QH QS QC QD QH"), cards("QS QS JK"), cards("QC QD QH")]},
        turn_state={"drew": "stock"},
    )
    rejects(state, "merge 0 1", "wild-on-canasta")
    rejects(state, "merge 1 0", "wild-on-canasta")
    act(state, "merge 0 2")  # natural cards only: the canasta grows to ten
    assert [m.size for m in state.melds[0]] == [10, 3]


def test_samba_merge_is_refused_before_the_initial_meld_and_in_the_draw_phase() -> None:
    hand = cards("KH KD KS KC KH KD 9C 9D AH AD AS")
    state = short_position("samba", hands={0: hand}, minimums=[90, 50])
    act(state, "meld KH KD KS", "meld KC KH KD")
    assert not state.opened[0]
    rejects(state, "merge 0 1", "initial-meld-too-low")
    act(state, "meld AH AD AS")
    assert state.opened[0]
    act(state, "merge 0 1")
    assert [m.size for m in state.melds[0]] == [6, 3]
    drawing = short_position(
        "samba",
        phase="draw",
        hands={0: ["9C", "9D"]},
        melds={0: [cards("KH KD KS"), cards("KH KD KS")]},
        stock=["4C", "5C"],
    )
    rejects(drawing, "merge 0 1", "wrong-phase")


# ================================================================= Samba: the pile
def test_samba_take_top_is_not_stopped_by_a_wild_card_below_it() -> None:
    # the pile is frozen in every way, but take-top never takes the pile: only its top card
    state = short_position(
        "samba",
        phase="draw",
        hands={0: cards("QS QD 4C")},
        melds={0: [cards("5H 6H 7H")]},
        pile=["JK", "9S", "8H"],
        stock=["4S", "9D"],
    )
    assert state.pile_frozen
    act(state, "take-top 0")
    assert texts(state, state.pile) == ["9S", "JK"] and state.melds[0][0].size == 4
    assert faces(state, 0) == ["4C", "QD", "QS"] and len(state.stock) == 2


def test_samba_take_top_at_the_low_end_and_with_the_stock_empty() -> None:
    state = short_position(
        "samba",
        turn=1,
        phase="draw",
        hands={1: cards("QS QD 4C")},
        melds={1: [cards("5D 6D 7D"), cards("JH QH KH")]},
        pile=["9S", "4D"],
    )
    legal = state.legal_actions()
    assert TakeTop(0) in legal and TakeTop(1) not in legal and Draw() in legal
    act(state, "take-top 0")
    assert state.melds[1][0].label() == "4-7D run" and texts(state, state.pile) == ["9S"]
    assert state.end is None and state.phase is Phase.PLAY
    act(state, "discard 4C")
    assert state.turn == 2


def test_samba_take_top_onto_the_ace_end_and_the_refusal_past_it() -> None:
    state = short_position(
        "samba",
        phase="draw",
        hands={0: cards("QS QD 4C")},
        melds={0: [cards("JH QH KH"), cards("10C JC QC KC AC")]},
        pile=["9S", "AH"],
        stock=["4S", "9D"],
    )
    rejects(state, "take-top 1", "not-a-sequence")  # AH is not a club
    act(state, "take-top 0")
    assert state.melds[0][0].label() == "J-AH run"
    past = short_position(
        "samba",
        phase="draw",
        hands={0: cards("QS QD 4C")},
        melds={0: [cards("QH KH AH")]},
        pile=["9S", "4H"],  # the four is no card after the ace
        stock=["4S", "9D"],
    )
    rejects(past, "take-top 0", "not-a-sequence")


def test_samba_take_top_refused_with_one_card_and_one_canasta_allowed_with_two() -> None:
    one = short_position(
        "samba",
        phase="draw",
        hands={0: ["4C"]},
        melds={0: [cards("5H 6H 7H"), K7]},
        pile=["9S", "8H"],
        stock=["4S", "9D"],
    )
    rejects(one, "take-top 0", "must-keep-a-card")
    assert one.legal_actions() == [Draw()]
    two = short_position(
        "samba",
        phase="draw",
        hands={0: ["4C"]},
        melds={0: [cards("5H 6H 7H"), K7, RUN_S]},
        pile=["9S", "8H"],
        stock=["4S", "9D"],
        has_melded=[True, False, False, False],
    )
    act(two, "take-top 0", "discard 4C")
    assert two.end is not None and two.end.reason is EndReason.WENT_OUT
    assert two.end.going_out_bonus == 200


def test_samba_pile_with_a_natural_pair_brings_red_threes_laid_not_replaced() -> None:
    state = short_position(
        "samba",
        phase="draw",
        hands={0: cards("QS QD 4C 5D")},
        melds={0: [cards("5H 6H 7H")]},
        pile=["3H", "9S", "QC"],
        stock=["4S", "9D"],
    )
    act(state, "take-pile QS QD")
    assert texts(state, state.red_threes[0]) == ["3H"]
    assert faces(state, 0) == ["4C", "5D", "9S"] and len(state.stock) == 2


def test_samba_pile_never_taken_with_a_pair_holding_a_wild_card_even_opened() -> None:
    state = short_position(
        "samba",
        phase="draw",
        hands={0: cards("QS 2D 4C 5D")},
        melds={0: [cards("QH QD QS")]},
        pile=["9S", "QC"],
        stock=["4S", "9D"],
    )
    rejects(state, "take-pile QS 2D", "pile-frozen")
    rejects(state, "take-pile onto 0", "pile-frozen")
    assert state.legal_actions() == [Draw()]


# ================================================================= Samba: initial meld
VALUES = {"A": 20, "K": 10, "Q": 10, "J": 10, "10": 10, "9": 10, "8": 10, "JK": 50, "2": 20}


def value_of(melds: list[str]) -> int:
    return sum(VALUES.get(c if c == "JK" else c[:-1], 5) for m in melds for c in m.split())


def opens_exactly(name: str, minimum: int, melds: list[str], short: list[str]) -> None:
    """``melds`` reach ``minimum`` exactly and open the team; ``short`` (5 less) cannot even
    begin: its first lay is refused, the minimum being out of reach."""
    spare = ["9D", "QH"]  # one card to discard, one to keep; they join no meld
    assert value_of(melds) == minimum and value_of(short) == minimum - 5
    state = short_position(
        name, hands={0: [c for m in melds for c in m.split()] + spare}, minimums=[minimum, 50]
    )
    if name == "bolivia":
        state.canasta_bonus_given = True
    act(state, *(f"meld {m}" for m in melds[:-1]))
    assert not state.opened[0]
    act(state, f"meld {melds[-1]}")
    assert state.opened[0] and state.t.initial_points == minimum
    act(state, "discard 9D")
    low = short_position(
        name, hands={0: [c for m in short for c in m.split()] + spare}, minimums=[minimum, 50]
    )
    rejects(low, f"meld {short[0]}", "initial-meld-unreachable")


@pytest.mark.parametrize(
    ("score", "melds", "short"),
    [
        (-5, ["4H 5H 6H"], None),
        (0, ["KH KD KS", "4S 5S 6S 7S"], ["KH KD KS", "4S 5S 6S"]),
        (1495, ["KH KD KS", "4S 5S 6S 7S"], ["KH KD KS", "4S 5S 6S"]),
        (1500, ["AH AD AS", "KC KD KS"], ["AH AD AS", "7H 8H 9H"]),
        (2995, ["AH AD AS", "KC KD KS"], ["AH AD AS", "7H 8H 9H"]),
        (3000, ["AH AD AS", "KC KD KS", "QC QD QS"], ["AH AD AS", "KC KD KS", "7S 8S 9S"]),
        (6995, ["AH AD AS", "KC KD KS", "QC QD QS"], ["AH AD AS", "KC KD KS", "7S 8S 9S"]),
        (
            7000,
            ["AH AD AS", "KC KD KS", "QC QD QS", "JC JD JS"],
            ["AH AD AS", "KC KD KS", "QC QD QS", "7S 8S 9S"],
        ),
    ],
    ids=lambda v: str(v) if isinstance(v, int) else None,
)
def test_samba_initial_minimum_enforced_at_its_boundaries(
    score: int, melds: list[str], short: list[str] | None
) -> None:
    minimum = SAMBA.initial_minimum(score)
    assert minimum == {-5: 15, 0: 50, 1495: 50, 1500: 90, 2995: 90}.get(
        score, 120 if score < 7000 else 150
    )
    if short is None:
        state = short_position(
            "samba", hands={0: [*melds[0].split(), "9D", "QH"]}, minimums=[15, 50]
        )
        act(state, f"meld {melds[0]}")
        assert state.opened[0]
        return
    opens_exactly("samba", minimum, melds, short)


def test_samba_initial_meld_of_150_by_the_pile() -> None:
    # 7000 or more: 150. Top card and pair (AC AH AD: 60) and the hand's kings, queens and jacks
    # (90) make 150 exactly; the rest of the pile does not count
    hand = cards("AH AD KH KD KS QH QD QS JH JD JS 4C 9D")
    state = short_position(
        "samba",
        phase="draw",
        hands={0: hand},
        pile=["AS", "AS", "AC"],
        stock=["4S"],
        minimums=[150, 50],
    )
    act(state, "take-pile AH AD")
    assert state.phase is Phase.PILE_PENDING
    act(state, "meld KH KD KS", "meld QH QD QS")
    assert state.phase is Phase.PILE_PENDING and state.t.initial_points == 120
    rejects(state, "discard 4C", "wrong-phase")
    act(state, "meld JH JD JS")
    assert state.opened[0] and state.phase is Phase.PLAY
    assert faces(state, 0) == ["4C", "9D", "AS", "AS"]
    no_jacks = short_position(
        "samba",
        phase="draw",
        hands={0: cards("AH AD KH KD KS QH QD QS 4C 9D")},
        pile=["AS", "AS", "AC"],
        stock=["4S"],
        minimums=[150, 50],
    )
    rejects(no_jacks, "take-pile AH AD", "initial-meld-too-low")


# ================================================================= Samba: going out, scoring
def test_samba_going_out_with_a_samba_and_a_mixed_canasta_scores_exactly() -> None:
    state = short_position(
        "samba",
        hands={0: cards("JC JD JH 4C"), 1: cards("AS JK 7C"), 2: cards("5D 9S"), 3: []},
        melds={
            0: [RUN_H, cards("QC QD QH QS QC 2D JK"), cards("8C 8D 8S")],
            1: [cards("AC AD AH"), K7],
        },
        red_threes={0: ["3H"], 2: ["3D"], 1: ["3H", "3D"]},
        has_melded=[True, True, True, False],
    )
    act(state, "meld JC JD JH", "discard 4C")
    assert state.end is not None and state.end.went_out == 0
    us, them = score_hand(state)
    # us: cards 50 + 120 + 30 + 30; samba 1500 + mixed 300; reds +200; out 200; hand 5D 9S
    assert (us.melds, us.canasta_bonus, us.red_threes, us.going_out, us.cards_in_hand) == (
        230,
        1800,
        200,
        200,
        15,
    )
    assert us.total == 2415
    # them: one canasta only, so the red threes count minus; AS JK 7C left
    assert (them.melds, them.canasta_bonus, them.red_threes, them.cards_in_hand) == (
        60 + 70,
        500,
        -200,
        75,
    )
    assert them.total == 355


def test_samba_3p_going_out_scores_each_player_alone() -> None:
    state = short_position(
        "samba-3p",
        hands={0: ["4C"], 1: cards("KH JK"), 2: ["9D"]},
        melds={0: [RUN_H, K7], 1: [cards("QC QD QS")], 2: [RUN_S, cards("AC AD AH AS AC AD AH")]},
        red_threes={0: ["3H"], 1: ["3D"], 2: ["3H", "3D", "3H", "3D"]},
        has_melded=[True, True, True],
    )
    act(state, "discard 4C")
    s = score_hand(state)
    assert [x.going_out for x in s] == [200, 0, 0]
    assert [x.red_threes for x in s] == [100, -100, 400]
    assert [x.total for x in s] == [
        50 + 70 + 2000 + 100 + 200,
        30 - 100 - 60,
        50 + 140 + 2000 + 400 - 10,
    ]


def test_samba_2p_all_six_red_threes_to_one_player() -> None:
    reds = ["3H", "3D", "3H", "3D", "3H", "3D"]
    for melds, value in (([RUN_H, K7], 1000), ([RUN_H], -1000)):
        state = short_position("samba-2p", melds={0: melds}, red_threes={0: reds})
        assert score_hand(state)[0].red_threes == value


def test_samba_going_out_concealed_below_the_minimum() -> None:
    """RULES.md section 4 drops the concealed bonus but says nothing of the initial meld: the
    classic rule holds (section 1: a concealed going out that draws from the stock need not
    meet the minimum). Two sambas (100) go out concealed against a minimum of 150."""
    hand = [*RUN_H, *RUN_S[:6]]
    state = short_position(
        "samba", phase="draw", hands={0: hand}, stock=["9C", "10S"], minimums=[150, 50]
    )
    act(state, "draw", "meld " + " ".join(RUN_H), "meld " + " ".join(RUN_S), "discard 9C")
    assert state.end is not None and state.end.going_out_bonus == 200
    s = score_hand(state)[0]
    assert (s.melds, s.canasta_bonus, s.going_out, s.total) == (100, 3000, 200, 3300)
    # without going out, the same samba alone is below the minimum
    alone = short_position(
        "samba",
        phase="draw",
        hands={0: [*RUN_H, "KS", "QD"]},
        stock=["9C", "JH"],
        minimums=[150, 50],
    )
    act(alone, "draw")
    rejects(alone, "meld " + " ".join(RUN_H), "initial-meld-unreachable")


# ================================================================= Bolivia: melds
def test_bolivia_wild_melds_several_and_closed_at_seven() -> None:
    state = bol(
        hands={0: cards("2C 2D JK 2S 9C 9D 8S")},
        melds={0: [BOLIVIA7, cards("2H JK JK")]},
    )
    rejects(state, "add 0 2C", "meld-closed")
    act(state, "meld 2C 2D JK")  # a second meld of wild cards beside the others
    assert [m.kind for m in state.melds[0]] == [MeldKind.WILDS] * 3
    rejects(state, "add 2 9C", "wrong-rank")
    act(state, "add 1 2S")
    s = score_hand(state)[0]
    assert s.canasta_bonus == 2000 and s.melds == 230 + (2 * 20 + 2 * 50) + (2 * 20 + 50)


def test_bolivia_group_with_one_natural_is_no_meld() -> None:
    state = bol(hands={0: cards("KH 2C JK 9C 9D")}, melds={0: [K7[:3]]})
    rejects(state, "meld KH 2C JK", "too-few-naturals")


def test_bolivia_pile_pair_onto_a_group_of_six_would_exceed_seven() -> None:
    state = bol(
        phase="draw",
        hands={0: cards("KC KD 9C 8D QS")},
        melds={0: [cards("KH KD KS KH KD KS")]},
        pile=["9S", "KH"],
        stock=["4C", "5C"],
    )
    rejects(state, "take-pile KC KD onto 0", "meld-too-large")
    act(state, "take-pile KC KD")  # a new group of kings instead
    assert [m.size for m in state.melds[0]] == [6, 3]


def test_bolivia_two_natural_canastas_of_one_rank_both_score() -> None:
    state = bol(melds={0: [K7, cards("KS KS KC KD KH 2C 2D")]})
    assert state.canastas(0) == 2
    s = score_hand(state)[0]
    assert (s.canasta_bonus, s.melds) == (500 + 300, 70 + 90)


def test_bolivia_black_threes_second_set_and_penalty_without_melds() -> None:
    state = bol(hands={0: cards("3C 3S 3C 3S 3C 3S 9C 9D")}, melds={0: [K7[:3]]})
    act(state, "meld 3C 3S 3C")
    act(state, "meld 3S 3C 3S")  # another set: nothing limits how many
    assert [m.kind for m in state.melds[0]][1:] == [MeldKind.BLACK_THREES] * 2
    rejects(state, "add 2 3C", "card-not-in-hand")
    assert score_hand(state)[0].melds == 30 + 30
    # a black three and a seven left in a hand cost 200 and 500, for a team with no melds too
    other = bol(hands={1: cards("3C 7D 9H")}, melds={0: [K7[:3]]})
    them = score_hand(other)[1]
    assert them.melds == 0 and them.cards_in_hand == 200 + 500 + 10 and them.total == -710


# ================================================================= Bolivia: the pile
def test_bolivia_plain_take_pile_means_the_one_meld_the_top_card_fits() -> None:
    """A plain take-pile names no meld: the one group or sequence the top card goes on. A
    sequence of its suit that it does not continue is not one (it was counted, and the take
    refused as if two melds could take it)."""
    state = bol(
        phase="draw",
        hands={0: cards("KC KD JK 9C 8D QS")},
        melds={0: [cards("KH KD KS"), cards("4H 5H 6H")]},
        pile=["9S", "KH"],
        stock=["4C", "5C"],
    )
    act(state, "take-pile")
    assert [m.size for m in state.melds[0]] == [4, 3]
    assert faces(state, 0) == ["8D", "9C", "9S", "JK", "KC", "KD", "QS"]
    # the same with a run the card does continue: two melds fit, the player names one
    both = bol(
        phase="draw",
        hands={0: cards("KC KD JK 9C 8D QS")},
        melds={0: [cards("KH KD KS"), cards("10H JH QH")]},
        pile=["9S", "KH"],
        stock=["4C", "5C"],
    )
    rejects(both, "take-pile", "pile-take-cards")
    act(both, "take-pile onto 1")
    assert both.melds[0][1].label() == "10-KH run"


def test_bolivia_pile_onto_a_sequence_at_its_low_end_brings_the_rest() -> None:
    state = bol(
        phase="draw",
        hands={0: cards("9C 8D QS")},
        melds={0: [cards("5H 6H 7H")]},
        pile=["9S", "JD", "4H"],
        stock=["4C", "5C"],
    )
    assert "take-pile onto 0" in listed(state)
    act(state, "take-pile")
    assert state.melds[0][0].label() == "4-7H run"
    assert faces(state, 0) == ["8D", "9C", "9S", "JD", "QS"] and state.pile == []


def test_bolivia_pile_never_with_a_wild_card_pair() -> None:
    state = bol(
        phase="draw",
        hands={0: cards("2C JK 9C 8D QS")},
        melds={0: [cards("2H 2D JK")]},
        pile=["9S", "KH"],
        stock=["4C", "5C"],
    )
    rejects(state, "take-pile 2C JK", "pile-take-cards")
    rejects(state, "take-pile onto 0", "wrong-rank")
    assert state.legal_actions() == [Draw()]


# ================================================================= Bolivia: the end of the stock
def test_bolivia_last_card_drawn_then_the_next_player_takes_the_pile_onto_a_meld() -> None:
    state = bol(
        phase="draw",
        hands={0: cards("9C 8D QD"), 1: cards("4D 5S 6C"), 2: ["10H"]},
        melds={1: [cards("QC QD QS")]},
        stock=["7C"],
        pile=["4S"],
    )
    act(state, "draw")  # the last card: a complete draw of one
    assert state.stock == [] and state.phase is Phase.PLAY and state.end is None
    act(state, "discard QD")  # he must discard (and keeps three cards)
    # the next player may still take the pile: QD goes on his side's queens, 4S to his hand
    act(state, "take-pile onto 0")
    assert faces(state, 1) == ["4D", "4S", "5S", "6C"] and state.end is None
    act(state, "discard 4D")
    # the player after him cannot take it: drawing from the empty stock ends the hand
    assert state.legal_actions() == [Draw()]
    act(state, "draw")
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED
    assert state.end.went_out is None
    assert [x.going_out for x in score_hand(state)] == [0, 0]


def test_bolivia_nobody_discards_the_last_card_even_at_the_end_of_the_stock() -> None:
    state = bol(
        turn=1,
        phase="draw",
        hands={1: ["5S"]},
        melds={1: [cards("QC QD QS")]},
        pile=["QH"],
    )
    # one card and a one-card pile: taking it would leave one card to discard
    rejects(state, "take-pile onto 0", "no-going-out")
    assert state.legal_actions() == [Draw()]


def test_bolivia_last_card_of_the_stock_a_red_three_ends_the_hand() -> None:
    # RULES.md section 5 is silent: as classic (section 1), the hand ends at once
    state = bol(phase="draw", hands={0: cards("9C 8D")}, stock=["3H", "7C"])
    act(state, "draw")
    assert state.end is not None and state.end.reason is EndReason.LAST_RED_THREE
    assert faces(state, 0) == ["7C", "8D", "9C"]
    assert score_hand(state)[0].red_threes == -100


# ================================================================= Bolivia: the first canasta
def test_bolivia_first_canasta_with_exactly_eleven_left_empties_the_stock() -> None:
    eleven = cards("4C 5C 6C 7C 8C 9C 10C JC QC KC AC")
    state = short_position(
        "bolivia",
        hands={0: cards("KC 9D 8D"), 1: cards("9S 9H 5D")},
        melds={0: [cards("KH KD KS KC KH KD")]},
        stock=eleven,
        pile=["4S"],
    )
    act(state, "add 0 KC")
    assert state.stock == [] and len(state.hands[0]) == 13
    act(state, "discard 9D")  # the turn ends as usual
    act(state, "draw")  # the next player: the stock is exhausted, the hand ends
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED


def test_bolivia_first_canasta_a_bolivia_laid_from_the_hand() -> None:
    stock = cards("4C 5C 6C 7C 8C 9C 10C JC QC KC AC 4D")
    state = short_position(
        "bolivia",
        hands={0: [*BOLIVIA7, "9D", "8D"]},
        melds={0: [cards("QH QD QS")]},
        stock=stock,
    )
    act(state, "meld " + " ".join(BOLIVIA7))
    assert state.canasta_bonus_given and len(state.hands[0]) == 13
    assert texts(state, state.stock) == ["4C"]


def test_bolivia_first_canasta_bonus_counts_for_nobody_elses_turn() -> None:
    # the bonus goes to the player who lays the canasta, here seat 2 (the partner of seat 0)
    stock = cards("4C 5C 6C 7C 8C 9C 10C JC QC KC AC 4D")
    state = short_position(
        "bolivia",
        turn=2,
        hands={0: cards("9C 9D"), 2: [*RUN_S, "9H", "8H"]},
        melds={0: [cards("QH QD QS")]},
        stock=stock,
    )
    act(state, "meld " + " ".join(RUN_S))
    assert len(state.hands[2]) == 13 and len(state.hands[0]) == 2


# ================================================================= Bolivia: scoring
def test_bolivia_hand_scored_exactly() -> None:
    state = bol(
        phase="over",
        hands={0: cards("7C 3S"), 1: cards("JK 2C 7H 7D"), 2: ["AS"], 3: []},
        melds={
            0: [cards("7C 7D 7H 7S 7C 7D 2H"), cards("3C 3S 3C")],
            1: [RUN_S, cards("AC AD AH")],
        },
        red_threes={0: ["3H", "3D"], 2: ["3H"], 1: ["3D"]},
        end={"reason": "stock-exhausted", "went_out": None, "going_out_bonus": 0},
    )
    us, them = score_hand(state)
    # us: mixed sevens 1000 (no special canasta: reds minus), black threes 15, 7C 3S AS left
    assert (us.melds, us.canasta_bonus, us.red_threes, us.going_out, us.cards_in_hand) == (
        30 + 20 + 15,
        1000,
        -300,
        0,
        500 + 200 + 20,
    )
    assert us.total == 65 + 1000 - 300 - 720
    # them: an escalera (1500): the red three counts plus; JK 2C 7H 7D left
    assert (them.melds, them.canasta_bonus, them.red_threes, them.cards_in_hand) == (
        50 + 60,
        1500,
        100,
        50 + 20 + 500 + 500,
    )
    assert them.total == 110 + 1500 + 100 - 1070


def test_bolivia_all_six_red_threes_with_a_bolivia() -> None:
    reds = ["3H", "3D", "3H", "3D", "3H", "3D"]
    state = bol(melds={0: [BOLIVIA7]}, red_threes={0: reds[:1], 2: reds[1:]})
    assert score_hand(state)[0].red_threes == 2000
    state = bol(melds={0: [K7, cards("7C 7D 7H 7S 7C 7D 2H")]}, red_threes={0: reds})
    assert score_hand(state)[0].red_threes == -2000


@pytest.mark.parametrize(
    ("score", "melds", "short"),
    [
        (3495, ["AH AD AS"], ["KH KD KS", "7H 8H 9H"]),
        (3500, ["AH AD AS", "7H 8H 9H", "4S 5S 6S"], ["AH AD AS", "4C 5C 6C 7C", "4S 5S 6S"]),
        (6995, ["AH AD AS", "7H 8H 9H", "4S 5S 6S"], ["AH AD AS", "4C 5C 6C 7C", "4S 5S 6S"]),
        (7000, ["JK JK 2C", "4S 5S 6S 7S"], ["JK JK 2C", "4S 5S 6S"]),
        (10495, ["JK JK 2C", "4S 5S 6S 7S"], ["JK JK 2C", "4S 5S 6S"]),
        (10500, ["JK JK JK", "4S 5S 6S", "4H 5H 6H"], ["JK JK JK", "7S 8S 9S"]),
    ],
    ids=lambda v: str(v) if isinstance(v, int) else None,
)
def test_bolivia_initial_minimum_enforced_at_its_boundaries(
    score: int, melds: list[str], short: list[str]
) -> None:
    minimum = BOLIVIA.initial_minimum(score)
    assert minimum == (
        60 if score <= 3495 else 100 if score <= 6995 else 140 if score <= 10495 else 180
    )
    opens_exactly("bolivia", minimum, melds, short)


def test_bolivia_initial_meld_has_no_concealed_way_out() -> None:
    """RULES.md section 5: "Going out earns nothing; nobody may discard his last card": the
    classic escape of an initial meld, going out concealed, does not exist. 8C 8C 8H was
    accepted toward a minimum of 140 that the whole hand (125) cannot reach, because the guard
    saw the hand laid out around a canasta of eights, concealed, as in Samba; the player was
    then left with additions only, none of which could end the turn."""
    hand = cards("JK 2D 5H 8H 8H 8H 8C 8C")
    state = bol(hands={0: hand}, minimums=[140, 140])
    rejects(state, "meld 8C 8C 8H", "initial-meld-unreachable")
    rejects(state, "meld 8C 8C 8H 8H 8H JK 2D", "no-going-out")  # one card kept
    assert not [a for a in listed(state) if a.startswith(("meld", "add"))]
    # the same hand opens where the minimum is within its reach (120 of 125)
    ok = bol(hands={0: [*hand, "9D"]}, minimums=[100, 100])
    act(ok, "meld 8C 8C 8H 8H 8H JK 2D", "discard 5H")
    assert ok.opened[0]


@pytest.mark.parametrize(
    ("name", "minimum", "hand", "plan"),
    [
        # four fives and three wild cards: one group of fives holds two wild cards, two groups
        # hold all three (5C 5C JK 60 + 5C 5H JK 2D 80 = 140)
        ("samba", 140, "5C 2D 5H 8C 5C AH 5C JK JK", ["meld 5C 5C JK", "meld 5C 5H JK 2D"]),
        # two pairs of eights with a wild card each beside a group with two (60 + 70 = 130)
        ("samba", 100, "8S 2C 8D 2D 7S 8S JK QS 8D", ["meld 8D 8D 2C 2D", "meld 8S 8S JK"]),
        ("bolivia", 140, "10S 3C 8D 8D 8D JK 2D 8S JK", ["meld 8D 8D 2D JK", "meld 8D 8S JK"]),
        # a meld of wild cards and a pair with the fourth wild card (150 + 50 = 200; 120 + 60)
        ("bolivia", 180, "JK 3S 2C AD 5H JK 5D JK 9D", ["meld JK JK JK", "meld 5D 5H 2C"]),
        ("bolivia", 180, "JK 3S 2C AD 5H JK 5D JK 9D", ["meld 2C JK JK", "meld 5D 5H JK"]),
    ],
)
def test_initial_meld_with_two_groups_of_a_rank_or_wild_cards_apart(
    name: str, minimum: int, hand: str, plan: list[str]
) -> None:
    """RULES.md section 4: "a team may hold several groups of the same rank"; section 5: "Wild
    cards alone may form a meld". The initial meld's dead-end guard looked for a way to the
    minimum with one group a rank, and (Bolivia) with the wild cards either all spread or all
    alone: the first lay of these legal plans was refused (initial-meld-unreachable)."""
    state = short_position(name, hands={0: hand.split()}, minimums=[minimum, minimum])
    state.canasta_bonus_given = True
    act(state, *plan)
    assert state.opened[0] and state.t.initial_points >= minimum
    discard = next(a for a in listed(state) if a.startswith("discard"))
    act(state, discard)


def _two_king_groups(hand: list[str], phase: str = "play", **kw: Any) -> HandState:
    """Samba: a samba, and kings in two groups (4 and 3) that make a canasta merged."""
    return short_position(
        "samba",
        phase=phase,
        hands={0: hand, 2: ["4D", "5D"]},
        melds={0: [RUN_S, cards("KH KD KS KC"), cards("KH KD KS")]},
        has_melded=[True, False, True, False],
        **kw,
    )


def test_samba_going_out_through_a_merge_is_seen() -> None:
    """RULES.md section 4: "a team may hold several groups of the same rank and merge them";
    "Going out needs two canastas". Two groups of kings that merge into the second canasta make
    going out possible: the engine said it was not (it counted the groups apart), refused to
    let the player ask his partner, and refused a lay that leaves the last card to discard
    after the merge."""
    state = _two_king_groups(["QH", "QD", "QS", "9C"])
    assert state.can_go_out()
    act(state, "meld QH QD QS")  # one card left: merge, then discard it
    rejects(state, "discard 9C", "no-canasta-to-go-out")
    act(state, "merge 1 2", "discard 9C")
    assert state.end is not None and state.end.going_out_bonus == 200
    assert score_hand(state)[0].canasta_bonus == 1500 + 500
    # asking the partner: allowed (and listed), and after yes the merge is part of the way out
    asking = _two_king_groups(["QH", "QD"], phase="draw", stock=["QS", "9C"])
    act(asking, "draw", "ask-go-out")
    act(asking, "answer yes", seat=2)
    act(asking, "meld QH QD QS", "merge 1 2", "discard 9C")
    assert asking.end is not None and asking.end.went_out == 0


def test_samba_merge_counted_only_where_it_makes_a_canasta() -> None:
    # four and two kings with one wild card each: merged, 6 naturals and 2 wilds (8): a canasta;
    # three and three kings with two wild cards each: merged, four wild cards: never
    ok = short_position(
        "samba",
        hands={0: cards("QH QD QS 9C")},
        melds={0: [RUN_S, cards("KH KD KS KC 2C"), cards("KH KD JK")]},
    )
    assert ok.can_go_out()
    too_wild = short_position(
        "samba",
        hands={0: cards("QH QD QS 9C")},
        melds={0: [RUN_S, cards("KH KD KS 2C 2D"), cards("KH KD KS JK JK")]},
    )
    assert not too_wild.can_go_out()
    rejects(too_wild, "meld QH QD QS", "must-keep-a-card")
    rejects(too_wild, "merge 1 2", "too-many-wilds")


def test_samba_going_out_with_two_groups_of_a_rank_holding_the_wild_cards() -> None:
    """RULES.md section 4: several groups of one rank, at most two wild cards each. Four sixes
    and three wild cards go out as 6C 6C 2D 2D and 6C 6S JK; the going-out planner put every
    six in one group (two wild cards), found a wild card to spare and said going out was
    impossible, so "may I go out?" was refused."""
    state = short_position(
        "samba",
        phase="draw",
        hands={0: cards("6C 2D 2D JK 6C 6C"), 2: ["4D", "5D"]},
        melds={0: [RUN_S, cards("KC KD KH KS KC KD KH")]},
        stock=["4C", "10S", "6S"],
        has_melded=[True, False, True, False],
    )
    act(state, "draw")
    assert state.can_go_out()
    act(state, "ask-go-out")
    act(state, "answer yes", seat=2)
    act(state, "meld 6C 6C 2D 2D", "meld 6C 6S JK", "discard 10S")
    assert state.end is not None and state.end.going_out_bonus == 200


def test_samba_3p_take_top_onto_the_players_own_sequence_only() -> None:
    state = short_position(
        "samba-3p",
        turn=1,
        phase="draw",
        hands={1: cards("QS QD 4C")},
        melds={0: [cards("5H 6H 7H")], 1: [cards("9C 10C JC")]},
        pile=["9S", "8H"],
        stock=["4S", "9D"],
    )
    rejects(state, "take-top 0", "not-a-sequence")  # his meld 0 is 9-JC; 5-7H is seat 0's
    assert not any(a.startswith("take-top") for a in listed(state))
    own = short_position(
        "samba-3p",
        turn=1,
        phase="draw",
        hands={1: cards("QS QD 4C")},
        melds={0: [cards("5H 6H 7H")], 1: [cards("9C 10C JC")]},
        pile=["9S", "QC"],
        stock=["4S", "9D"],
    )
    act(own, "take-top 0")
    assert own.melds[1][0].label() == "9-QC run" and own.melds[0][0].size == 3


def test_bolivia_pile_onto_a_six_card_run_makes_an_escalera_and_brings_the_bonus() -> None:
    eleven = cards("4C 5C 6C 7C 8C 9C 10C JC QC KC AC")
    state = short_position(
        "bolivia",
        phase="draw",
        hands={0: cards("9D 8D QS")},
        melds={0: [cards("5H 6H 7H 8H 9H 10H")]},
        pile=["9S", "JH"],
        stock=["4D", *eleven],
    )
    act(state, "take-pile")
    run = state.melds[0][0]
    assert run.size == 7 and run.is_closed(BOLIVIA) and canasta_bonus(BOLIVIA, run) == 1500
    assert state.canasta_bonus_given
    assert faces(state, 0) == sorted([*cards("8D 9D 9S QS"), *eleven])
    assert texts(state, state.stock) == ["4D"]


def test_samba_2p_draw_from_a_one_card_stock_then_the_end() -> None:
    state = short_position(
        "samba-2p",
        phase="draw",
        hands={0: cards("KH KD"), 1: cards("QH QD 5S")},
        melds={1: [cards("QC QS QH")]},
        stock=["7C"],
        pile=["4S"],
    )
    act(state, "draw")
    assert faces(state, 0) == ["7C", "KD", "KH"] and state.stock == []
    act(state, "discard 7C")
    assert set(state.legal_actions()) == {Draw()}  # pile frozen: no natural pair of sevens
    act(state, "draw")
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED
    assert [s.going_out for s in score_hand(state)] == [0, 0]


# ================================================================= the look-ahead against all plans
def _meld_shapes(rules: Any, hand: tuple[int, ...]) -> set[tuple[int, ...]]:
    """Every distinct set of the hand's cards that is a legal new meld."""
    out: set[tuple[int, ...]] = set()
    for size in range(3, len(hand) + 1):
        for idx in itertools.combinations(range(len(hand)), size):
            faces_ = tuple(sorted(hand[i] for i in idx))
            if faces_ not in out:
                try:
                    group_shape(rules, list(faces_))
                except IllegalAction:
                    continue
                out.add(faces_)
    return out


def _minus(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    left = Counter(a)
    left.subtract(b)
    return None if min(left.values(), default=0) < 0 else tuple(sorted(left.elements()))


def _opens_with(rules: Any, hand: tuple[int, ...], first: tuple[int, ...], minimum: int) -> bool:
    """Whether some plan of disjoint legal melds, one of them ``first`` or grown from it (not
    black threes: nothing is added to them), reaches ``minimum`` and keeps two cards."""
    melds = _meld_shapes(rules, hand)
    shape = group_shape(rules, list(first))

    @functools.cache
    def best(rest: tuple[int, ...]) -> int:
        found = 0
        for m in melds:
            after = _minus(rest, m)
            if after is not None and len(after) >= 2:
                found = max(found, sum(map(rules.card_value, m)) + best(after))
        return found

    for m in melds:
        grown = group_shape(rules, list(m))
        if _minus(m, first) is None or (grown.kind, grown.rank, grown.suit) != (
            shape.kind,
            shape.rank,
            shape.suit,
        ):
            continue
        if shape.kind is MeldKind.BLACK_THREES and m != first:
            continue
        rest = _minus(hand, m)
        if (
            rest is not None
            and len(rest) >= 2
            and sum(map(rules.card_value, m)) + best(rest) >= minimum
        ):
            return True
    return False


@pytest.mark.parametrize("name", ["samba", "bolivia"])
def test_first_lays_of_an_initial_meld_agree_with_every_plan(name: str) -> None:
    """For random hands rich in wild cards and pairs, every legal first lay toward an initial
    meld is accepted exactly when some plan of legal melds grown from it reaches the minimum
    (the look-ahead neither refuses a way that exists nor accepts a dead end)."""
    rules = preset(name)
    rng = random.Random(f"audit-{name}")
    for _ in range(25):
        ranks = rng.sample(["4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"], 3)
        pool = [r + s for r in ranks for s in rng.sample("CDHS", 2)] + ["JK", "JK", "2C", "2D"]
        if name == "bolivia":
            pool += ["3C", "3S"]
        hand: list[str] = []
        while len(hand) < 8:
            card = rng.choice(pool)
            if hand.count(card) < 3:
                hand.append(card)
        minimum = rng.choice([50, 60, 90, 100, 120, 140, 150, 180])
        state = short_position(name, hands={0: hand}, minimums=[minimum, minimum])
        state.canasta_bonus_given = True
        held = tuple(sorted(parse_face(c) for c in hand))
        for first in sorted(_meld_shapes(rules, held)):
            expected = _opens_with(rules, held, first, minimum)
            assert state.is_legal(Meld(first)) is expected, (hand, minimum, first)
