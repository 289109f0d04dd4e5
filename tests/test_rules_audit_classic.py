"""An adversarial audit of docs/spec/RULES.md sections 1-3 (classic, two and three players with
the lone hand, Vienna): the edges the rule-case tests (``test_cases_classic``,
``test_lone_hand``) leave open, one test per edge.

Every accepted action is also listed by ``legal_actions`` (``act``), every refused one is refused
with its reason code, leaves the state unchanged and is not listed (``rejects``).  Where
RULES.md is silent, the test says which choice a Canasta player expects and pins it.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from rulecases import act, faces, phase_of, rejects, short_position, texts

from canasta_net.canasta.actions import Answer, AskGoOut, Draw, Meld, TakePile
from canasta_net.canasta.bots import GreedyBot
from canasta_net.canasta.heuristic import HeuristicBot
from canasta_net.canasta.match import Match
from canasta_net.canasta.melds import MeldKind, TableMeld
from canasta_net.canasta.rules import RuleSet, preset
from canasta_net.canasta.scoring import score_hand
from canasta_net.canasta.state import EndReason, HandState, Phase
from canasta_net.cards import (
    JOKER,
    face_text,
    is_black_three,
    is_red_three,
    is_wild,
    parse_face,
    rank_of,
)
from canasta_net.errors import PositionError

CLASSIC = preset("classic")
LONE = preset("classic-3p-lone")
KINGS7 = ["KC", "KD", "KH", "KS", "KC", "KD", "KH"]
NINES7 = ["9C", "9D", "9H", "9S", "9C", "9D", "9H"]


def pos(rules: str | RuleSet = "classic", **kw: Any) -> HandState:
    return short_position(rules, **kw)


def canasta(seat: int = 0, cards: list[str] | None = None) -> dict[str, Any]:
    return {"cards": cards or KINGS7, "turn": -1, "seat": seat}


def group(state: HandState, team: int, rank: str) -> TableMeld:
    found = [m for m in state.melds[team] if m.kind is MeldKind.GROUP and m.label() == f"{rank}s"]
    assert len(found) == 1, [m.label() for m in state.melds[team]]
    return found[0]


def listed(state: HandState) -> list[str]:
    return [str(a) for a in state.legal_actions()]


# ============================================================== §1 Cards and melds
def test_red_threes_are_never_melded_nor_added() -> None:
    # (a red three never stays in a hand in play; a position may still hold one)
    state = pos(hands={0: ["3H", "3D", "3H", "8C", "9C"]}, melds={0: [["QC", "QD", "QS"]]})
    rejects(state, "meld 3H 3D 3H", "not-meldable")
    rejects(state, "add 0 3H", "wrong-rank")
    assert not any(a.startswith(("meld", "add")) for a in listed(state))


def test_two_naturals_two_wild_cards_is_a_meld_in_classic() -> None:
    state = pos(hands={0: ["KC", "KD", "2C", "2D", "8C", "9C"]}, melds={0: [["QC", "QD", "QS"]]})
    act(state, "meld KC KD 2C 2D")
    m = group(state, 0, "K")
    assert (m.naturals, m.wilds) == (2, 2)


def test_black_threes_meld_of_two_or_five_is_refused() -> None:
    state = pos(hands={0: ["3C", "3S", "8C"]}, melds={0: [canasta()]})
    rejects(state, "meld 3C 3S", "too-few-cards")


def test_four_black_threes_go_out() -> None:
    state = pos(
        hands={0: ["3C", "3S", "3C", "3S"]},
        melds={0: [canasta()]},
        has_melded=[True, False, False, False],
    )
    act(state, "meld 3C 3S 3C 3S")
    assert state.end is not None and state.end.went_out == 0
    assert scores_of(state)[0].melds == 70 + 20


def test_no_wild_card_on_a_canasta_holding_three() -> None:
    cards = ["KC", "KD", "KH", "KS", "2C", "2D", "JK"]
    state = pos(hands={0: ["2H", "KC", "8C"]}, melds={0: [canasta(0, cards)]})
    rejects(state, "add 0 2H", "too-many-wilds")
    act(state, "add 0 KC")
    rejects(state, "add 0 2H", "too-many-wilds")


def scores_of(state: HandState) -> list[Any]:
    return score_hand(state)


# ============================================================== §1 The initial meld
JUNK = ["8C", "9D", "JC", "QH"]  # singletons that never form a meld


@pytest.mark.parametrize(
    ("minimum", "lays"),
    [
        (15, ["4H 4D 4S"]),
        (50, ["KH KS KD 2C"]),
        (90, ["AH AC 2D", "KH KS KD"]),
        (120, ["AH AC JK", "KH KS KD"]),
    ],
    ids=["15", "50", "90", "120"],
)
def test_initial_meld_of_exactly_the_minimum_opens(minimum: int, lays: list[str]) -> None:
    hand = [c for lay in lays for c in lay.split()]
    state = pos(hands={0: [*hand, *JUNK]}, minimums=[minimum, 50])
    for lay in lays[:-1]:
        act(state, f"meld {lay}")
        assert not state.opened[0]
        rejects(state, "discard 8C", "initial-meld-too-low")
    act(state, f"meld {lays[-1]}")
    assert state.opened[0] and state.t.initial_points == minimum
    act(state, "discard 8C")


@pytest.mark.parametrize(
    ("minimum", "hand", "lay"),
    [
        (50, ["KH", "KS", "KD", "5C", "5D", "5S"], "KH KS KD"),  # 45 at most
        (90, ["AH", "AC", "AD", "4C", "4D", "4S", "4H", "4C"], "AH AC AD"),  # 85 at most
        (120, ["AH", "AC", "JK", "4C", "4D", "4S", "4H", "4C"], "AH AC JK"),  # 115 at most
    ],
    ids=["45-of-50", "85-of-90", "115-of-120"],
)
def test_initial_meld_five_short_of_the_minimum_is_refused(
    minimum: int, hand: list[str], lay: str
) -> None:
    state = pos(hands={0: [*hand, *JUNK]}, minimums=[minimum, 50])
    rejects(state, f"meld {lay}", "initial-meld-unreachable")
    assert not any(a.startswith("meld") for a in listed(state))


def test_a_team_below_zero_opens_with_15_and_a_team_at_zero_needs_50() -> None:
    # the minimums come from the match's cumulative scores at the start of the hand
    match = Match(CLASSIC, first_dealer=3, scores=[-5, 0])
    state = match.new_hand(list(range(108)))
    assert state.minimums == [15, 50]
    fives = pos(hands={0: ["5H", "5S", "5D", *JUNK]}, minimums=state.minimums)
    act(fives, "meld 5H 5S 5D")
    assert fives.opened[0]
    other = pos(turn=1, hands={1: ["5H", "5S", "5D", *JUNK]}, minimums=state.minimums, phase="play")
    rejects(other, "meld 5H 5S 5D", "initial-meld-unreachable")


def test_a_canastas_bonus_never_counts_toward_the_minimum() -> None:
    # seven fours are a canasta worth 35 (its 500 bonus does not count): below 50, and the
    # singletons left keep the player from going out concealed
    fours = ["4C", "4D", "4H", "4S", "4C", "4D", "4H"]
    state = pos(hands={0: [*fours, *JUNK]})
    rejects(state, "meld " + " ".join(fours), "initial-meld-unreachable")
    state = pos(hands={0: [*fours, "KC", "KD", "KS", *JUNK]})
    act(state, "meld " + " ".join(fours), "meld KC KD KS")  # 35 + 30
    assert state.opened[0] and state.t.initial_points == 65


def test_match_minimums_at_each_boundary_per_team_and_per_seat() -> None:
    match = Match(CLASSIC, scores=[-5, 1500])
    assert match.minimums() == [15, 90]
    assert Match(CLASSIC, scores=[2995, 3000]).minimums() == [90, 120]
    assert Match(CLASSIC, scores=[1495, 0]).minimums() == [50, 50]
    lone = Match(LONE, scores=[-10, 2995, 3000])
    assert lone.minimums() == [15, 90, 120]
    state = lone.new_hand(list(range(108)))
    assert state.minimums == [15, 90, 120]
    three = Match(preset("classic-3p"), scores=[0, -1, 1500])
    assert three.minimums() == [50, 15, 90]


# ============================================================== §1 Taking the discard pile
def test_pile_take_with_a_wild_card_onto_a_group_holding_three_is_refused() -> None:
    # the top card and the two cards merge into the team's K group: four wild cards
    state = pos(
        phase="draw",
        hands={0: ["KS", "2C", "KD", "8C", "9C"]},
        melds={0: [["KC", "KD", "2D", "2H", "JK"]]},
        pile=["7C", "KH"],
        stock=["4H"],
    )
    rejects(state, "take-pile KS 2C", "too-many-wilds")
    act(state, "take-pile KS KD")
    assert group(state, 0, "K").size == 8


def test_pile_take_that_leaves_one_card_to_discard_needs_a_canasta() -> None:
    # the pair melds the top card; the one card below comes to the hand and would be discarded
    state = pos(
        phase="draw",
        hands={0: ["QS", "QD"]},
        melds={0: [["KC", "KD", "KS"]]},
        pile=["7C", "QH"],
        stock=["4H"],
    )
    rejects(state, "take-pile QS QD", "must-keep-a-card")
    assert listed(state) == ["draw"]
    # a red three below is laid, not taken into the hand: the same
    state = pos(
        phase="draw",
        hands={0: ["QS", "QD"]},
        melds={0: [["KC", "KD", "KS"]]},
        pile=["3H", "7C", "QH"],
        stock=["4H"],
    )
    rejects(state, "take-pile QS QD", "must-keep-a-card")
    # with a canasta the player takes it and goes out by discarding that card
    state = pos(
        phase="draw",
        hands={0: ["QS", "QD"]},
        melds={0: [canasta()]},
        has_melded=[True, False, False, False],
        pile=["3H", "7C", "QH"],
        stock=["4H"],
    )
    act(state, "take-pile QS QD")
    assert faces(state, 0) == ["7C"] and texts(state, state.red_threes[0]) == ["3H"]
    act(state, "discard 7C")
    assert state.end is not None and state.end.going_out_bonus == 100


def test_one_card_rule_holds_with_a_natural_pair_impossible_and_a_wild_on_top() -> None:
    # one card against a one-card pile: refused even where the team's meld takes the card;
    # the player draws instead, and the listing says so
    state = pos(
        phase="draw",
        hands={0: ["9H"]},
        melds={0: [["9C", "9S", "9D"], canasta()]},
        pile=["9D"],
        stock=["4H"],
    )
    rejects(state, "take-pile", "one-card-pile")
    assert listed(state) == ["draw"]


# ============================================================== §1 End of the stock
@pytest.mark.parametrize(
    ("pile", "melds"),
    [
        (["QD", "2H"], [["QS", "QD", "QC"]]),  # a wild card on top: blocked
        (["QD", "3S"], [["QS", "QD", "QC"], ["3C", "3C", "3S"]]),  # a black three on top
        (["QD", "JK"], [["QS", "QD", "QC"]]),
    ],
    ids=["two", "black-three", "joker"],
)
def test_stock_end_blocked_pile_ends_the_hand(pile: list[str], melds: list[list[str]]) -> None:
    state = pos(phase="draw", hands={0: ["8C", "9D"]}, melds={0: melds[:1]}, pile=pile)
    assert listed(state) == ["draw"]
    act(state, "draw")
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED


def test_stock_end_unopened_team_is_not_forced() -> None:
    # the top card fits no meld of the player's team (it has none): the draw ends the hand
    state = pos(
        phase="draw",
        hands={0: ["QS", "QD", "8C"]},
        melds={1: [["QC", "QD", "QH"]]},
        pile=["7C", "QH"],
    )
    assert "draw" in listed(state)
    act(state, "draw")
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED
    s = scores_of(state)
    assert s[0].going_out == s[1].going_out == 0


def test_stock_end_forced_take_also_in_two_player_game() -> None:
    state = pos(
        "classic-2p",
        phase="draw",
        turn=1,
        hands={1: ["8C", "9D"]},
        melds={1: [["QS", "QD", "QC"]]},
        pile=["6C", "QH"],
    )
    rejects(state, "draw", "must-take-pile")
    assert listed(state) == ["take-pile"]
    act(state, "take-pile")
    assert group(state, 1, "Q").size == 4


def test_the_player_who_draws_the_last_card_may_still_go_out() -> None:
    state = pos(
        phase="draw",
        hands={0: ["QS", "QD", "8C"]},
        melds={0: [canasta()]},
        has_melded=[True, False, False, False],
        stock=["QC"],
        pile=["5D"],
    )
    act(state, "draw", "meld QS QD QC", "discard 8C")
    assert state.stock == [] and state.end is not None
    assert (state.end.reason, state.end.going_out_bonus) == (EndReason.WENT_OUT, 100)


def test_the_last_card_drawn_then_a_discard_the_next_player_cannot_use_ends_the_hand() -> None:
    state = pos(
        phase="draw",
        hands={0: ["8C", "9D", "5S"], 1: ["4D", "4S"]},
        melds={0: [canasta()], 1: [["QS", "QD", "QC"]]},
        stock=["6H"],
        pile=["5D"],
    )
    act(state, "draw", "discard 9D")
    assert state.turn == 1 and state.stock == []
    assert listed(state) == ["draw"]
    act(state, "draw")
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED
    assert state.end.went_out is None and state.end.going_out_bonus == 0


# ============================================================== §1 Going out
def test_concealed_going_out_after_a_red_three_drawn_and_replaced() -> None:
    # seed 000: laying a red three does not spoil a concealed going out
    state = pos(
        phase="draw",
        hands={0: ["KC", "KD", "KH", "KS", "KC", "KD", "5C"]},
        stock=["KH", "3D"],
        minimums=[120, 50],
    )
    act(state, "draw")
    assert texts(state, state.red_threes[0]) == ["3D"]
    act(state, "meld KC KD KH KS KC KD KH", "discard 5C")
    assert state.end is not None and state.end.going_out_bonus == 200
    s = scores_of(state)[0]
    assert (s.red_threes, s.going_out, s.total) == (100, 200, 70 + 500 + 100 + 200)


def test_concealed_going_out_with_black_threes_laid_first() -> None:
    # the team has not melded; the player melds the whole hand in one turn after a stock draw:
    # black threes first, then the canasta (the order of lays in the going-out turn is free)
    hand = ["3C", "3S", "3C", "KC", "KD", "KH", "KS", "KC", "KD", "5C"]
    state = pos(phase="draw", hands={0: hand}, stock=["KH"])
    act(state, "draw", "meld 3C 3S 3C")
    rejects(state, "discard 5C", "must-go-out")
    act(state, "meld KC KD KH KS KC KD KH", "discard 5C")
    assert state.end is not None and state.end.going_out_bonus == 200


def test_concealed_going_out_with_black_threes_laid_last() -> None:
    hand = ["3C", "3S", "3C", "KC", "KD", "KH", "KS", "KC", "KD", "5C"]
    state = pos(phase="draw", hands={0: hand}, stock=["KH"], minimums=[120, 50])
    act(state, "draw", "meld KC KD KH KS KC KD KH", "meld 3C 3S 3C", "discard 5C")
    assert state.end is not None and state.end.going_out_bonus == 200
    assert scores_of(state)[0].melds == 70 + 15


def test_going_out_by_melding_every_card_without_a_discard() -> None:
    state = pos(
        hands={0: ["QS", "QD", "QC"]},
        melds={0: [canasta(2)]},
        has_melded=[False, False, True, False],
        turn_state={"drew": "stock"},
    )
    act(state, "meld QS QD QC")
    assert state.end is not None and state.end.went_out == 0
    # the partner's canasta, the player's first meld, nothing added: not concealed (no canasta
    # of the player's own), so 100
    assert state.end.going_out_bonus == 100


def test_a_pile_take_that_completes_the_canasta_goes_out_at_once() -> None:
    # (without a canasta the same take is refused: test_cases_classic's
    # test_pile_take_leaving_no_card_needs_a_canasta)
    state = pos(
        phase="draw",
        hands={0: ["QS", "QD"]},
        melds={0: [["QC", "QD", "QS", "QH"]]},
        pile=["QH"],
        stock=["4H"],
    )
    act(state, "take-pile QS QD")
    assert state.end is not None and state.end.went_out == 0
    assert group(state, 0, "Q").size == 7


def test_concealed_after_a_pile_take_beside_the_partners_melds_in_classic() -> None:
    # the partner has melded; the player takes the pile with a natural pair (a new meld), lays a
    # canasta and goes out, adding nothing to the partner's melds: concealed, 200 (classic lets
    # a concealed going out take the pile)
    partners = {"cards": ["QC", "QD", "QH"], "turn": -1, "seat": 2}
    hand = ["KC", "KD", "KH", "KS", "KC", "KD", "5C", "5D", "5H"]
    state = pos(
        phase="draw",
        hands={0: hand},
        melds={0: [partners]},
        has_melded=[False, False, True, False],
        pile=["9S", "KH"],
        stock=["4H"],
    )
    act(state, "take-pile KC KD", "add 1 KH KS KC KD", "meld 5C 5D 5H", "discard 9S")
    assert state.end is not None and state.end.going_out_bonus == 200
    # taking the pile onto the partner's meld adds to it: not concealed, 100
    state = pos(
        phase="draw",
        hands={0: [*KINGS7, "5C", "5H"]},
        melds={0: [partners]},
        has_melded=[False, False, True, False],
        pile=["5D", "QS"],
        stock=["4H"],
    )
    act(state, "take-pile", "meld " + " ".join(KINGS7), "meld 5C 5H 5D")
    assert state.end is not None and state.end.going_out_bonus == 100


# ============================================================== §1 "Partner, may I go out?"
def test_ask_when_the_team_has_not_melded_but_a_concealed_going_out_is_possible() -> None:
    hand = ["KC", "KD", "KH", "KS", "KC", "KD", "5C"]
    state = pos(phase="draw", hands={0: hand, 2: ["4D"]}, stock=["KH"])
    act(state, "draw")
    assert "ask-go-out" in listed(state)
    act(state, "ask-go-out")
    act(state, "answer yes", seat=2)
    rejects(state, "discard 5C", "must-go-out")
    act(state, "meld KC KD KH KS KC KD KH", "discard 5C")
    assert state.end is not None and state.end.going_out_bonus == 200


def test_ask_before_drawing_and_after_a_no_is_refused() -> None:
    hand = ["QH", "QD", "8C"]
    state = pos(
        phase="draw",
        hands={0: hand, 2: ["4D"]},
        melds={0: [canasta(2)]},
        has_melded=[False, False, True, False],
        stock=["5S", "QC"],
    )
    rejects(state, "ask-go-out", "wrong-phase")
    act(state, "draw", "ask-go-out")
    rejects(state, "draw", "wrong-phase", seat=2)
    rejects(state, "meld QH QD QC", "wrong-phase")
    act(state, "answer no", seat=2)
    rejects(state, "ask-go-out", "ask-not-allowed")
    # the player may still meld, keeping two cards... here that would leave one: refused
    rejects(state, "meld QH QD QC", "may-not-go-out")
    act(state, "discard 8C")
    assert state.end is None and state.turn == 1


def test_after_a_no_a_team_that_has_not_melded_may_not_lay_what_only_going_out_completes() -> None:
    # minimum 90: the hand can go out concealed (a canasta of sixes), so asking is allowed; after
    # "no" the sixes and fives (55) can never make 90, so laying them would leave the player
    # unable to discard (found by the referee below: the engine listed the lays, then no move)
    hand = ["6C", "6C", "6D", "6D", "6H", "6H", "6S", "5C", "5D", "5H", "7H", "5S"]
    state = pos(phase="draw", hands={0: hand[:-1], 2: ["4D"]}, stock=["5S"], minimums=[90, 90])
    act(state, "draw", "ask-go-out")
    act(state, "answer no", seat=2)
    rejects(state, "meld 6C 6C 6D 6D 6H 6H 6S", "initial-meld-unreachable")
    rejects(state, "meld 5C 5D 5H", "initial-meld-unreachable")
    assert not any(a.startswith(("meld", "add")) for a in listed(state))
    act(state, "discard 7H")
    # after a "yes" the same lays are the way out
    state = pos(phase="draw", hands={0: hand[:-1], 2: ["4D"]}, stock=["5S"], minimums=[90, 90])
    act(state, "draw", "ask-go-out")
    act(state, "answer yes", seat=2)
    act(state, "meld 6C 6C 6D 6D 6H 6H 6S", "meld 5C 5D 5H 5S", "discard 7H")
    assert state.end is not None and state.end.going_out_bonus == 200


def test_ask_is_not_offered_without_a_partner() -> None:
    hand = ["QH", "QD", "QC", "8C"]
    for name in ("classic-3p", "classic-3p-lone"):
        state = pos(
            name,
            hands={0: hand},
            melds={0: [canasta(0)]},
            turn_state={"drew": "stock"},
        )
        assert "ask-go-out" not in listed(state)
        rejects(state, "ask-go-out", "ask-not-allowed")


# ============================================================== §1 Scoring a hand
def test_both_partners_cards_left_in_hand_count_against_the_team() -> None:
    state = pos(
        hands={0: ["KC", "5D"], 1: ["JK"], 2: ["AS", "2H", "3S"], 3: ["4C"]},
        melds={0: [["QC", "QD", "QH"]], 1: [["7C", "7D", "7H"]]},
        red_threes={2: ["3H"], 3: ["3D"]},
    )
    s = scores_of(state)
    assert (s[0].melds, s[0].cards_in_hand, s[0].red_threes) == (30, 15 + 45, 100)
    assert (s[1].melds, s[1].cards_in_hand, s[1].red_threes) == (15, 55, 100)
    assert (s[0].total, s[1].total) == (30 - 60 + 100, 15 - 55 + 100)


def test_all_four_red_threes_of_one_player_are_800_and_minus_800_unmelded() -> None:
    reds = {1: ["3H", "3D", "3H", "3D"]}
    melded = pos(melds={1: [["QC", "QD", "QH"]]}, red_threes=reds)
    assert scores_of(melded)[1].red_threes == 800
    unmelded = pos(melds={0: [canasta()]}, red_threes=reds)
    assert scores_of(unmelded)[1].red_threes == -800
    # in the two-player game, a player's four red threes
    two = pos("classic-2p", melds={0: [["QC", "QD", "QH"]]}, red_threes={0: reds[1]})
    assert scores_of(two)[0].red_threes == 800


def test_red_threes_of_a_hand_that_ended_on_a_red_three() -> None:
    # the last stock card is a red three: laid, the hand ends, it counts with the others
    state = pos(
        phase="draw",
        turn=1,
        hands={1: ["8C"]},
        melds={1: [["QC", "QD", "QH"]]},
        red_threes={3: ["3H", "3D", "3H"]},
        stock=["3D"],
    )
    act(state, "draw")
    assert state.end is not None and state.end.reason is EndReason.LAST_RED_THREE
    s = scores_of(state)[1]
    assert (s.red_threes, s.going_out, s.total) == (800, 0, 30 + 800 - 10)


def test_only_the_side_that_went_out_gets_the_bonus() -> None:
    state = pos(
        hands={0: ["QS", "QD", "QC", "8C"], 1: ["5C"]},
        melds={0: [canasta(2)], 1: [canasta(1, NINES7)]},
        has_melded=[False, False, True, False],
        turn_state={"drew": "stock"},
    )
    act(state, "meld QS QD QC", "discard 8C")
    s = scores_of(state)
    assert (s[0].going_out, s[1].going_out) == (100, 0)
    assert (s[0].total, s[1].total) == (70 + 30 + 500 + 100, 70 + 500 - 5)


# ============================================================== §1 The match
@pytest.mark.parametrize(
    ("rules", "start", "over"),
    [
        (CLASSIC, [4330, 0], True),  # 4330 + 670 = 5000 exactly
        (CLASSIC, [4329, 0], False),  # 4999
        (CLASSIC, [-2000, -3000], False),
    ],
    ids=["5000", "4999", "negative"],
)
def test_the_match_ends_at_exactly_the_target(rules: RuleSet, start: list[int], over: bool) -> None:
    match = Match(rules, scores=list(start))
    state = pos(
        melds={0: [canasta()]},
        phase="over",
        end={"reason": "went-out", "went_out": 0, "going_out_bonus": 100},
    )
    match.record_hand(state)
    assert match.scores[0] == start[0] + 670
    result = match.result
    assert (result is not None) is over
    if result is not None:
        assert result.winner == 0


def lone_finished(went_out: int = 0) -> HandState:
    """A lone-hand hand over: seat 0 (lone) went out with a K canasta (670); the partnership
    of seats 1 and 2 holds a Q meld (30)."""
    return pos(
        "classic-3p-lone",
        melds={0: [canasta(0)], 1: [["QC", "QD", "QH"]]},
        lone=0,
        team_map=[0, 1, 1],
        phase="over",
        end={"reason": "went-out", "went_out": went_out, "going_out_bonus": 100},
    )


def test_lone_hand_match_is_to_7500_per_seat() -> None:
    match = Match(LONE, scores=[6829, 7000, 7000])
    assert [s.total for s in match.record_hand(lone_finished())] == [670, 30, 30]
    assert match.scores == [7499, 7030, 7030]
    assert match.result is None  # nobody at 7500
    match.record_hand(lone_finished())
    result = match.result
    assert result is not None and result.winner == 0 and result.scores == (8169, 7060, 7060)


def test_three_player_ties() -> None:
    hand = pos(
        "classic-3p",
        melds={0: [canasta(0)]},
        phase="over",
        end={"reason": "went-out", "went_out": 0, "going_out_bonus": 100},
    )
    top_tie = Match(preset("classic-3p"), scores=[4430, 5100, 2000])
    top_tie.record_hand(hand)
    result = top_tie.result
    assert top_tie.scores == [5100, 5100, 2000]
    assert result is not None and result.winner is None  # equal totals: a draw
    low_tie = Match(preset("classic-3p"), scores=[4430, 3000, 3000])
    low_tie.record_hand(hand)
    result = low_tie.result
    assert result is not None and result.winner == 0


def test_the_deal_rotates_in_two_and_three_player_games() -> None:
    for name in ("classic-2p", "classic-3p", "classic-3p-lone"):
        rules = preset(name)
        match = Match(rules, first_dealer=rules.players - 1)
        state = match.new_hand(list(range(108)))
        assert (state.dealer, state.turn) == (rules.players - 1, 0)


# ============================================================== §2 Two players
@pytest.mark.parametrize("name", ["classic-2p", "classic-3p", "classic-3p-lone"])
def test_dealt_red_threes_are_replaced_one_card_each(name: str) -> None:
    rules = preset(name)
    dealt_reds = 0
    for seed in range(20):
        order = list(range(rules.deck_size))
        random.Random(seed).shuffle(order)
        state = HandState(rules, order, dealer=seed % rules.players)
        reds = sum(len(r) for r in state.red_threes)
        dealt_reds += reds
        assert all(len(h) == rules.hand_size for h in state.hands)
        assert not any(is_red_three(f) for s in range(rules.players) for f in state.hand_faces(s))
        dealt = rules.hand_size * rules.players
        assert len(state.stock) == rules.deck_size - dealt - len(state.pile) - reds
    assert dealt_reds  # some deals held red threes


def test_two_player_draw_replaces_each_red_three_with_one_card() -> None:
    state = pos("classic-2p", phase="draw", hands={0: ["4H", "5H"]}, stock=["9C", "3D", "3H"])
    act(state, "draw")
    # 3H laid and replaced by one card (3D: laid, replaced by 9C), then the stock is empty
    assert texts(state, state.red_threes[0]) == ["3D", "3H"]
    assert faces(state, 0) == ["4H", "5H", "9C"]
    assert state.end is None and phase_of(state) is Phase.PLAY


def test_two_player_going_out_concealed_with_two_canastas_from_the_hand() -> None:
    hand = [*KINGS7[:-1], *NINES7[:-1], "5C"]
    state = pos("classic-2p", phase="draw", hands={0: hand, 1: ["4D"]}, stock=["4C", "9H", "KH"])
    act(state, "draw")
    assert len(state.hands[0]) == 15
    act(state, "meld " + " ".join(KINGS7))
    act(state, "meld " + " ".join(NINES7), "discard 5C")
    assert state.end is not None and state.end.going_out_bonus == 200


def test_two_player_one_canasta_never_goes_out() -> None:
    state = pos(
        "classic-2p",
        hands={0: ["QS", "QD", "QC", "QH", "QS", "QD", "QC"]},
        turn_state={"drew": "stock"},
    )
    rejects(state, "meld QS QD QC QH QS QD QC", "must-keep-a-card")
    assert not any(a.startswith("meld") and a.count("Q") == 7 for a in listed(state))


# ============================================================== §2 Three players, lone hand
def lone_position(**over: Any) -> HandState:
    data: dict[str, Any] = {
        "hands": {0: ["QS", "QD", "QC", "8C"], 1: ["5C", "6D"], 2: ["7C", "7D"]},
        "melds": {
            0: [canasta(0)],
            1: [{"cards": ["AC", "AD", "AH"], "turn": -1, "seat": 1}],
            2: [{"cards": ["AS", "AC", "2C"], "turn": -1, "seat": 2}],
        },
        "has_melded": [True, True, True],
        "turn_state": {"drew": "stock"},
        "opened": [True, True, True],
    }
    data.update(over)
    return pos("classic-3p-lone", **data)


def test_lone_hand_going_out_before_any_pile_take_makes_the_lone_hand() -> None:
    # the commonly published rule: a player who goes out before the pile was ever taken is the
    # lone hand, and the other two score as partners (their melds pooled)
    state = lone_position(red_threes={1: ["3H"], 2: ["3D", "3H"]})
    act(state, "meld QS QD QC", "discard 8C")
    assert state.end is not None and state.lone == 0
    lone, first, second = scores_of(state)
    assert (lone.going_out, lone.total) == (100, 70 + 30 + 500 + 100)
    assert first.melds == second.melds == 60 + 60
    assert first.cards_in_hand == second.cards_in_hand == 10 + 10
    assert (first.red_threes, second.red_threes) == (100, 200)
    assert first.total == 120 - 20 + 100 and second.total == 120 - 20 + 200


def test_lone_hand_red_threes_count_for_their_owner_by_the_sides_melds() -> None:
    # seat 2 never melded itself, but its side (with seat 1) did: its red threes count plus;
    # all four red threes of one seat are 800
    state = lone_position(
        melds={0: [canasta(0)], 1: [{"cards": ["AC", "AD", "AH"], "turn": -1, "seat": 1}]},
        opened=[True, True, False],
        has_melded=[True, True, False],
        red_threes={2: ["3H", "3D", "3H", "3D"]},
    )
    act(state, "meld QS QD QC", "discard 8C")
    assert scores_of(state)[2].red_threes == 800
    # with no meld on the partnership's side they count minus
    state = lone_position(
        melds={0: [canasta(0)]},
        opened=[True, False, False],
        has_melded=[True, False, False],
        red_threes={2: ["3H", "3D", "3H", "3D"]},
        hands={0: ["QS", "QD", "QC", "8C"], 1: ["5C"], 2: []},
    )
    act(state, "meld QS QD QC", "discard 8C")
    s = scores_of(state)
    assert (s[1].red_threes, s[2].red_threes) == (0, -800)


def test_lone_hand_draws_two_and_the_pile_taker_plays_alone_for_the_hand() -> None:
    state = pos(
        "classic-3p-lone",
        phase="draw",
        turn=1,
        hands={0: ["5C", "5D"], 1: ["KS", "KD", "8C", "9D"], 2: ["6C", "6D"]},
        melds={1: [{"cards": ["AC", "AD", "AH"], "turn": -1, "seat": 1}]},
        opened=[False, True, False],
        pile=["4C", "KH"],
        stock=["7C", "7D", "7H", "7S", "8D", "8S"],
    )
    act(state, "take-pile KS KD")
    assert state.lone == 1 and [state.team_of(s) for s in range(3)] == [0, 1, 0]
    act(state, "discard 8C")
    act(state, "draw")  # seat 2, a partner now: draws two
    assert len(state.hands[2]) == 4
    act(state, "discard 6C")
    act(state, "draw", "discard 5C")  # seat 0
    assert state.lone == 1 and [state.team_of(s) for s in range(3)] == [0, 1, 0]


# ============================================================== §3 Vienna
QUEENS7 = ["QC", "QD", "QH", "QS", "QC", "2C", "JK"]  # a mixed canasta of queens


def vienna_pile(**over: Any) -> HandState:
    data: dict[str, Any] = {
        "phase": "draw",
        "hands": {0: ["QD", "QH", "8C", "9D", "5S"]},
        "melds": {0: [canasta(0, QUEENS7)]},
        "pile": ["7C", "QS"],
        "stock": ["4H"],
    }
    data.update(over)
    return pos("vienna", **data)


def test_vienna_completed_canasta_blocks_every_take_of_its_rank() -> None:
    state = vienna_pile()
    refusal = rejects(state, "take-pile", "pile-blocked")
    assert refusal.variant == "canasta" and "completed canasta" in str(refusal)
    rejects(state, "take-pile QD QH", "pile-blocked")
    assert listed(state) == ["draw"]
    classic = pos("classic", **vienna_pile_data())
    act(classic, "take-pile QD QH")
    assert group(classic, 0, "Q").size == 10


def vienna_pile_data() -> dict[str, Any]:
    return {
        "phase": "draw",
        "hands": {0: ["QD", "QH", "8C", "9D", "5S"]},
        "melds": {0: [canasta(0, QUEENS7)]},
        "pile": ["7C", "QS"],
        "stock": ["4H"],
    }


def test_vienna_block_is_only_by_the_takers_own_completed_canasta_of_that_rank() -> None:
    # the opponents' Q canasta does not block; an incomplete Q meld of one's own does not
    state = vienna_pile(melds={0: [["KC", "KD", "KS"]], 1: [canasta(1, QUEENS7)]})
    act(state, "take-pile QD QH")
    state = vienna_pile(melds={0: [QUEENS7[:6]]})
    act(state, "take-pile")
    assert group(state, 0, "Q").size == 7
    # a canasta of another rank does not block either
    state = vienna_pile(melds={0: [canasta(0, KINGS7)]})
    act(state, "take-pile QD QH")


def test_vienna_blocked_pile_at_the_end_of_the_stock_ends_the_hand() -> None:
    state = vienna_pile(stock=[])
    assert listed(state) == ["draw"]
    act(state, "draw")
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED


def test_vienna_one_card_takes_a_one_card_pile_even_at_the_end_of_the_stock() -> None:
    # the one-card/one-card rule does not apply in Vienna, so neither does its exception to the
    # forced take at the end of the stock (the top card fits the team's 9 meld)
    state = vienna_pile(
        hands={0: ["8H"]}, melds={0: [["9C", "9S", "9H"], canasta()]}, pile=["9D"], stock=[]
    )
    rejects(state, "draw", "must-take-pile")
    act(state, "take-pile")
    assert faces(state, 0) == ["8H"]


def test_vienna_wild_cards_never_outnumber_naturals_when_adding() -> None:
    state = pos(
        "vienna", hands={0: ["JK", "KH", "2S", "8C", "9C"]}, melds={0: [["KC", "KD", "2C", "2D"]]}
    )
    rejects(state, "add 0 JK", "too-many-wilds")
    rejects(state, "add 0 2S JK KH", "too-many-wilds")  # 3 naturals, 4 wild cards
    act(state, "add 0 KH JK")
    m = group(state, 0, "K")
    assert (m.naturals, m.wilds) == (3, 3)
    rejects(state, "add 0 2S", "too-many-wilds")


def test_vienna_red_threes_plus_only_with_a_canasta_all_four_800() -> None:
    reds = {0: ["3H", "3D"], 2: ["3H", "3D"]}
    assert scores_of(pos("vienna", melds={0: [canasta()]}, red_threes=reds))[0].red_threes == 800
    no_canasta = pos("vienna", melds={0: [["QC", "QD", "QH"]]}, red_threes=reds)
    assert scores_of(no_canasta)[0].red_threes == -800


def test_vienna_hand_canasta_is_1000_in_place_of_200_not_added() -> None:
    hand = ["KC", "KD", "KH", "KS", "KC", "KD", "QC", "QD", "QH", "5C"]
    state = pos("vienna", phase="draw", hands={0: hand}, stock=["KH"])
    act(state, "draw", "meld KC KD KH KS KC KD KH", "meld QC QD QH", "discard 5C")
    s = scores_of(state)[0]
    assert (s.going_out, s.canasta_bonus, s.total) == (1000, 500, 70 + 30 + 500 + 1000)


def test_vienna_hand_canasta_beside_the_partners_melds() -> None:
    # the partner has melded; the player lays a canasta and more from the hand, adding nothing
    # to the partner's melds: a hand canasta, 1000
    hand = ["KC", "KD", "KH", "KS", "KC", "KD", "5C"]
    state = pos(
        "vienna",
        phase="draw",
        hands={0: hand},
        melds={0: [{"cards": ["QC", "QD", "QH"], "turn": -1, "seat": 2}]},
        has_melded=[False, False, True, False],
        stock=["KH"],
    )
    act(state, "draw", "meld KC KD KH KS KC KD KH", "discard 5C")
    assert state.end is not None and state.end.going_out_bonus == 1000
    # adding to the partner's meld in the same turn spoils it: 100
    state = pos(
        "vienna",
        phase="draw",
        hands={0: [*hand, "QS"]},
        melds={0: [{"cards": ["QC", "QD", "QH"], "turn": -1, "seat": 2}]},
        has_melded=[False, False, True, False],
        stock=["KH"],
    )
    act(state, "draw", "meld KC KD KH KS KC KD KH", "add 0 QS", "discard 5C")
    assert state.end is not None and state.end.going_out_bonus == 100


def test_vienna_hand_canasta_from_the_stock_needs_no_minimum() -> None:
    hand = ["4C", "4D", "4H", "4S", "4C", "4D", "9S"]
    state = pos("vienna", phase="draw", hands={0: hand}, stock=["4H"], minimums=[120, 50])
    act(state, "draw", "meld 4C 4D 4H 4S 4C 4D 4H", "discard 9S")
    assert state.end is not None and state.end.going_out_bonus == 1000


# ============================================================== an independent referee
# Bots play whole hands; after every move a referee that knows only the rules' text (and the
# public fields of a position) checks what the engine allowed.  It judges the rules of sections
# 1-3 that a single position cannot show: the initial meld over a turn, the going-out bonus from
# the turn's history, black threes only in a going-out turn, the binding answer, the forced take.


def _value(rules: RuleSet, faces_: list[int]) -> int:
    return sum(rules.card_value(f) for f in faces_)


def _frozen(state: HandState) -> bool:
    r = state.rules
    return state.pile_frozen_below or any(
        is_wild(f) or is_red_three(f) or (r.black_three_freezes_pile and is_black_three(f))
        for f in state.faces(state.pile)
    )


def _groups_ok(state: HandState) -> None:
    r = state.rules
    for team, melds in enumerate(state.melds):
        ranks: list[int] = []
        for m in melds:
            fs = state.faces(m.cards)
            assert not any(is_red_three(f) for f in fs), "a red three melded"
            if m.kind is MeldKind.BLACK_THREES:
                assert 3 <= len(fs) <= 4 and all(is_black_three(f) for f in fs)
                continue
            naturals = [f for f in fs if not is_wild(f)]
            wilds = len(fs) - len(naturals)
            assert len({rank_of(f) for f in naturals}) == 1, "mixed ranks"
            assert not any(is_black_three(f) for f in naturals)
            assert len(naturals) >= 2 and wilds <= 3, f"wild limit: {texts(state, m.cards)}"
            if r.wild_rule == "naturals_at_least":
                assert wilds <= len(naturals)
            ranks.append(rank_of(naturals[0]))
        if state.lone is None:
            assert len(ranks) == len(set(ranks)), f"team {team}: two groups of a rank"


def _forced_take(state: HandState) -> bool:
    """RULES.md §1 End of the stock: the player to draw must take the pile."""
    r, seat = state.rules, state.turn
    team = state.team_of(seat)
    if state.stock or not state.pile or not r.forced_pile_take_at_stock_end:
        return False
    top = state.faces(state.pile[-1:])[0]
    if is_wild(top) or rank_of(top) == 2 or not state.opened[team] or _frozen(state):
        return False
    fitting = [m for m in state.melds[team] if m.kind is MeldKind.GROUP and m.rank == rank_of(top)]
    if not fitting:
        return False
    if r.completed_canasta_blocks_pile and any(m.is_canasta(r) for m in fitting):
        return False
    return not (r.one_card_pile_rule and len(state.hands[seat]) == 1 and len(state.pile) == 1)


def _pile_takeable(state: HandState) -> bool | None:
    """RULES.md §1 Taking the discard pile, for a team that has melded: whether some take is
    legal (None where the referee does not judge: the team has not melded)."""
    r, seat = state.rules, state.turn
    team = state.team_of(seat)
    if not state.opened[team]:
        return None
    if not state.pile:
        return False
    top = state.faces(state.pile[-1:])[0]
    if is_wild(top) or rank_of(top) == 2:
        return False
    hand = state.hand_faces(seat)
    rank = rank_of(top)
    naturals = sum(1 for f in hand if not is_wild(f) and rank_of(f) == rank)
    wilds = sum(1 for f in hand if is_wild(f))
    group = [m for m in state.melds[team] if m.kind is MeldKind.GROUP and m.rank == rank]
    if r.completed_canasta_blocks_pile and group and group[0].is_canasta(r):
        return False
    if r.one_card_pile_rule and len(hand) == 1 and len(state.pile) == 1:
        return False
    rest = sum(1 for f in state.faces(state.pile[:-1]) if not is_red_three(f))

    def fits(used: int, with_wild: bool) -> bool:
        canastas = state.canastas(team)
        if group:
            m = group[0]
            limit = r.max_wilds(m.naturals + 1 + used - with_wild)
            if m.wilds + with_wild > limit:
                return False
            canastas += m.size < r.canasta_size <= m.size + 1 + used
        else:
            canastas += 1 + used >= r.canasta_size
        return len(hand) - used + rest > 1 or canastas >= r.canastas_to_go_out

    if naturals >= 2 and fits(2, False):
        return True
    if _frozen(state):
        return False
    if naturals >= 1 and wilds and r.pile_take_with_wild and fits(2, True):
        return True
    return bool(group) and fits(0, False)


def _initial_meld_offered(state: HandState, hand: list[int], legal: list[Any]) -> None:
    """RULES.md §1 The initial meld: a group of naturals from the hand worth the minimum on its
    own, keeping two cards, is a legal first meld."""
    r = state.rules
    per_seat = r.three_player_mode == "lone_hand"
    minimum = state.minimums[state.turn if per_seat else state.team_of(state.turn)]
    listed_ = {str(a) for a in legal}
    by_rank: dict[int, list[int]] = {}
    for f in hand:
        if not is_wild(f) and rank_of(f) != 2:
            by_rank.setdefault(rank_of(f), []).append(f)
    for naturals in by_rank.values():
        worth = state.t.initial_points + _value(r, naturals)
        if len(naturals) >= 3 and worth >= minimum and len(hand) - len(naturals) >= 2:
            meld = Meld(tuple(naturals))
            assert state.is_legal(meld), f"{meld} refused as an initial meld of {worth}"
            assert str(state.normalize(meld)) in listed_, f"{meld} not listed"


def _check_deal(state: HandState) -> None:
    """RULES.md §1 Seating and dealing."""
    r = state.rules
    assert all(len(state.hand_faces(s)) == r.hand_size for s in range(r.players))
    assert state.turn == (state.dealer + 1) % r.players
    pile = state.faces(state.pile)
    turned_again = [f for f in pile[:-1]]
    assert all(is_wild(f) or rank_of(f) == 2 for f in turned_again)
    top = pile[-1]
    assert not is_wild(top) and not is_red_three(top)
    assert not (is_black_three(top) and r.upcard_turns_on_black_three)
    assert state.pile_frozen == any(is_wild(f) or is_red_three(f) for f in turned_again)


def _check_draw(before: HandState, after: HandState) -> None:
    """RULES.md §1 A turn, End of the stock, §2 (draw two): what a draw brings."""
    r, seat = before.rules, before.turn
    if not before.stock:
        assert after.end is not None and after.end.reason is EndReason.STOCK_EXHAUSTED
        return
    used = before.stock[len(after.stock) :][::-1]  # in the order drawn
    reds = after.red_threes[seat][len(before.red_threes[seat]) :]
    gained = [c for c in after.hands[seat] if c not in before.hands[seat]]
    assert sorted(used) == sorted(reds + gained)
    assert all(is_red_three(f) for f in after.faces(reds))
    if after.end is not None:
        assert after.end.reason is EndReason.LAST_RED_THREE and not after.stock
        assert is_red_three(after.faces(used[-1:])[0])
    else:
        assert len(gained) == r.draw_count or not after.stock


def _check_pickup(before: HandState, after: HandState) -> None:
    """RULES.md §1 Taking the discard pile: the top card is melded, the rest of the pile goes
    into the hand (at once, or once the initial meld is made), red threes in it are laid and not
    replaced."""
    seat = before.turn
    assert after.stock == before.stock and not after.pile
    below = before.pile[:-1]
    if after.phase is Phase.PILE_PENDING:
        assert after.t.pending_pile == below
        return
    reds = [c for c in below if is_red_three(before.faces([c])[0])]
    assert after.red_threes[seat][len(before.red_threes[seat]) :] == reds
    rest = set(below) - set(reds)
    assert rest <= set(after.hands[seat]) or after.is_over


class _Turn:
    def __init__(self, state: HandState) -> None:
        self.seat = state.turn
        self.team = state.team_of(self.seat)
        self.opened_at_start = state.opened[self.team]
        self.old_cards = {c for m in state.melds[self.team] for c in m.cards}
        self.old_melds = [set(m.cards) for m in state.melds[self.team]]
        self.drew = ""
        self.laid_value = 0
        self.added_old = False
        self.laid = False
        self.black_threes = False
        self.answer: bool | None = None
        per_seat = state.rules.three_player_mode == "lone_hand"
        self.minimum = state.minimums[self.seat if per_seat else self.team]


def _clustered_order(rules: RuleSet, rng: random.Random) -> list[int]:
    """A deal whose hands hold long runs of one rank (canastas in the hand, so that concealed
    going out, black threes and high initial melds come up), and a stock sorted alike."""
    from canasta_net.cards import Deck

    deck = Deck(rules.decks, rules.jokers_per_deck)
    spread = rng.uniform(0.3, 3.0)
    cards = sorted(range(deck.size), key=lambda c: deck.face[c] % 13 + rng.gauss(0, spread))
    start = rng.randrange(deck.size)
    cards = cards[start:] + cards[:start]
    n, size = rules.players, rules.hand_size
    hands = [cards[s * size : (s + 1) * size] for s in range(n)]
    rest = cards[n * size :]
    return [hands[k][r] for r in range(size) for k in range(n)] + rest[::-1]


def _referee_hand(rules: RuleSet, seed: int) -> tuple[int, int]:
    rng = random.Random(seed)
    order = _clustered_order(rules, rng) if seed % 2 else list(range(rules.deck_size))
    if not seed % 2:
        rng.shuffle(order)
    scores = [rng.choice([-300, 0, 1495, 1500, 2995, 3000]) for _ in range(rules.teams)]
    state = HandState(
        rules, order, rng.randrange(rules.players), [rules.initial_minimum(s) for s in scores]
    )
    bots = [
        HeuristicBot(random.Random(seed * 7 + s)) if rng.random() < 0.8 else GreedyBot(rng)
        for s in range(rules.players)
    ]
    _check_deal(state)
    melded_before = [False] * rules.players
    turn = _Turn(state)
    moves = concealed = 0
    while not state.is_over:
        moves += 1
        assert moves < 2000
        _groups_ok(state)
        assert not any(is_red_three(f) for s in range(rules.players) for f in state.hand_faces(s))
        legal = state.legal_actions()
        if state.phase is Phase.DRAW and not state.stock:
            assert (Draw() not in legal) == _forced_take(state), "the forced take at the end"
        if state.phase is Phase.DRAW:
            if state.stock:
                assert Draw() in legal
            takeable = _pile_takeable(state)
            if takeable is not None:
                taken = any(isinstance(a, TakePile) for a in legal)
                assert taken == takeable, f"pile takeable {takeable}, listed {taken}"
        if state.phase is Phase.PLAY and not (state.t.permission or state.t.black_threes):
            hand = state.hand_faces(state.turn)
            team_ = state.team_of(state.turn)
            pending = not state.opened[team_] and state.t.initial_points > 0
            if len(hand) >= 2 and not pending:
                discards = {str(a) for a in legal if str(a).startswith("discard")}
                want = {f"discard {face_text(f)}" for f in hand if not is_red_three(f)}
                assert discards == want, "every card but a red three may be discarded"
            if len(hand) == 1 and state.canastas(team_) >= rules.canastas_to_go_out:
                going_out = f"discard {face_text(hand[0])}"
                assert pending or going_out in [str(a) for a in legal], "going out by a discard"
            if not state.opened[team_] and state.t.permission is None and state.lone is None:
                _initial_meld_offered(state, hand, legal)
        mover = state.to_move
        action = bots[mover].choose(legal, state.hand_faces(mover), rules)
        if rng.random() < RANDOM_MOVES:
            action = rng.choice(legal)
        before = state.copy()
        state.apply(action)
        team = turn.team
        if isinstance(action, Draw):
            turn.drew = "stock"
            _check_draw(before, state)
        elif isinstance(action, TakePile):
            turn.drew = "pile"
            top = before.faces(before.pile[-1:])[0]
            assert not is_wild(top) and rank_of(top) != 2, "pile taken under a wild or a three"
            if _frozen(before) or not before.opened[team]:
                assert len(action.cards) == 2 and all(
                    not is_wild(f) and rank_of(f) == rank_of(top) for f in action.cards
                ), "a frozen pile taken without a natural pair"
            if rules.one_card_pile_rule:
                assert not (len(before.hands[turn.seat]) == 1 and len(before.pile) == 1)
            _check_pickup(before, state)
        elif isinstance(action, Answer):
            turn.answer = action.yes
        elif isinstance(action, Meld) and all(is_black_three(f) for f in action.cards):
            turn.black_threes = True
        # what the move laid: cards that are in the team's melds now and were not before
        now = {c for m in state.melds[state.team_of(turn.seat)] for c in m.cards}
        was = {c for m in before.melds[team] for c in m.cards}
        laid = now - was
        if laid:
            turn.laid = True
            if not turn.opened_at_start:
                turn.laid_value += _value(rules, state.faces(sorted(laid)))
            grown = [
                old
                for old in turn.old_melds
                if old and any(old < set(m.cards) for m in state.melds[state.team_of(turn.seat)])
            ]
            if grown:
                turn.added_old = True
        if not turn.opened_at_start and state.opened[state.team_of(turn.seat)]:
            assert turn.laid_value >= turn.minimum, "opened below the minimum"
        ended = state.is_over or state.turn != turn.seat or state.turn_no != before.turn_no
        if not ended:
            continue
        end = state.end
        went_out = end is not None and end.went_out == turn.seat
        if turn.black_threes:
            assert went_out, "black threes laid by a player who did not go out"
        if turn.answer is True:
            assert went_out, "went on after a yes"
        if turn.answer is False:
            assert not went_out, "went out after a no"
        if went_out:
            assert end is not None
            assert not state.hands[turn.seat]
            assert state.canastas(state.team_of(turn.seat)) >= rules.canastas_to_go_out
            own = any(
                m.is_canasta(rules) and not (set(m.cards) & turn.old_cards)
                for m in state.melds[state.team_of(turn.seat)]
            )
            hidden = (
                not melded_before[turn.seat]
                and not turn.added_old
                and (turn.drew == "stock" or rules.concealed_after_pile_take)
                and (own or not rules.concealed_requires_own_canasta)
            )
            if hidden and rules.hand_canasta_bonus and own:
                bonus = rules.hand_canasta_bonus
            elif hidden:
                bonus = rules.concealed_bonus
            else:
                bonus = rules.going_out_bonus
            concealed += hidden
            assert end.going_out_bonus == bonus, (end.going_out_bonus, bonus)
            if not state.opened[state.team_of(turn.seat)] or not turn.opened_at_start:
                assert turn.laid_value >= turn.minimum or (hidden and turn.drew == "stock")
        elif end is None:
            assert state.turn == (turn.seat + 1) % rules.players
            assert state.hands[turn.seat], "a discard to no card without going out"
            if not turn.opened_at_start:
                assert turn.laid_value == 0 or state.opened[turn.team]
        if turn.laid:
            melded_before[turn.seat] = True
        if end is None:
            turn = _Turn(state)
    _recount(state)
    return moves, concealed


def _recount(state: HandState) -> None:
    """RULES.md §1 Scoring a hand, by every seat (the lone hand's partners: the side's score
    with their own red threes)."""
    rules = state.rules
    scores = score_hand(state)
    for seat in range(rules.players):
        team = state.team_of(seat)
        seats = [s for s in range(rules.players) if state.team_of(s) == team]
        melds = state.melds[team]
        owners = [seat] if rules.three_player_mode == "lone_hand" else seats
        reds = sum(len(state.red_threes[s]) for s in owners)
        red_value = 800 if reds == 4 else 100 * reds
        if rules.red_three_positive_if == "canasta":
            positive = state.canastas(team) > 0
        else:
            positive = bool(melds)
        end = state.end
        expected = (
            sum(_value(rules, state.faces(m.cards)) for m in melds)
            + sum((500 if m.is_natural() else 300) for m in melds if m.is_canasta(rules))
            + (red_value if positive else -red_value)
            + (end.going_out_bonus if end and end.went_out in seats else 0)
            - sum(_value(rules, state.hand_faces(s)) for s in seats)
        )
        row = seat if rules.three_player_mode == "lone_hand" else team
        assert scores[row].total == expected, (seat, scores[row], expected)


RANDOM_MOVES = 0.15  # the share of moves picked at random among the legal ones
REFEREED = ["classic", "classic-2p", "classic-3p", "classic-3p-lone", "vienna"]


@pytest.mark.parametrize("name", REFEREED)
def test_an_independent_referee_watches_whole_hands(name: str) -> None:
    rules = preset(name)
    # 40 hands, half of them dealt long runs of one rank: a second or two; among them
    # (with today's bots) a few concealed going-out hands per variant
    for seed in range(40):
        _referee_hand(rules, seed)


# ============================================================== brute force against the listing
# The engine finds initial melds, pile takes and ways out with a planner; here every way of
# laying a small hand is enumerated instead, and the two must agree on whether a lay, a take
# of the pile, or "may I go out?" is offered.
RANKS = ["4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]


def _random_hand(rng: random.Random) -> list[str]:
    size = rng.randint(5, 13)
    ranks = rng.sample(RANKS, rng.randint(1, 4))
    out: list[str] = []
    while len(out) < size:
        x = rng.random()
        if x < 0.12:
            card = "JK"
        elif x < 0.24:
            card = "2" + rng.choice("CDHS")
        elif x < 0.3:
            card = "3" + rng.choice("CS")
        elif x < 0.4:
            card = rng.choice(RANKS) + rng.choice("CDHS")
        else:
            card = rng.choice(ranks) + rng.choice("CDHS")
        if out.count(card) < (4 if card == "JK" else 2):
            out.append(card)
    return out


def _layouts(
    rules: RuleSet, hand: list[int], melds: dict[int, tuple[int, int]], must: int = -1
) -> list[tuple[int, int, int]]:
    """Every way to lay ``hand`` onto the team's groups ``melds`` (rank: naturals, wild cards)
    and new groups: (cards left in the hand, value laid, canastas the team then holds).
    ``must``: a rank whose group gets the pile's top card and two naturals from the hand."""
    jokers = hand.count(JOKER)
    twos = sum(1 for f in hand if f != JOKER and rank_of(f) == 1)
    naturals: dict[int, int] = {}
    for f in hand:
        if f != JOKER and rank_of(f) not in (1, 2):
            naturals[rank_of(f)] = naturals.get(rank_of(f), 0) + 1
    if must >= 0 and naturals.get(must, 0) < 2:
        return []  # no natural pair for the top card
    ranks = sorted(set(naturals) | set(melds))
    held = sum(1 for a, w in melds.values() if a + w >= rules.canasta_size)
    found: list[tuple[int, int, int]] = []

    def walk(i: int, j: int, t: int, laid: int, value: int, canastas: int) -> None:
        if i == len(ranks):
            found.append((len(hand) - laid, value, canastas))
            return
        r = ranks[i]
        a0, w0 = melds.get(r, (0, 0))
        top = 1 if r == must else 0
        least = 2 if r == must else 0
        for k in range(least, naturals.get(r, 0) + 1):
            a = a0 + k + top
            if k == 0 and not top:
                walk(i + 1, j, t, laid, value, canastas)
                continue
            if a < 2:
                continue
            room = rules.max_wilds(a) - w0
            for jj in range(min(j, max(room, 0)) + 1):
                for tt in range(min(t, room - jj) + 1):
                    size = a + w0 + jj + tt
                    if r not in melds and size < 3:
                        continue
                    new = size >= rules.canasta_size > a0 + w0
                    worth = (k + top) * rules.card_value(r) + jj * 50 + tt * 20
                    walk(i + 1, j - jj, t - tt, laid + k + jj + tt, value + worth, canastas + new)

    walk(0, jokers, twos, 0, 0, held)
    return found


def _goes_out(rules: RuleSet, hand: list[int], left: int, canastas: int) -> bool:
    """Cards ``left`` after the lays, black threes (three or four) laid in going out too."""
    threes = sum(1 for f in hand if is_black_three(f))
    return canastas >= rules.canastas_to_go_out and any(
        left - b <= 1 for b in (0, 3, 4) if b <= threes
    )


@pytest.mark.parametrize("name", ["classic", "classic-2p", "vienna"])
def test_brute_force_agrees_on_initial_melds_pile_takes_and_going_out(name: str) -> None:
    rules = preset(name)
    rng = random.Random(name)
    other = 2 if rules.partnerships else 1
    for _ in range(400):
        hand = _random_hand(rng)
        minimum = rng.choice([15, 50, 90, 120])
        # a first meld after a stock draw: worth the minimum keeping two cards, or going out
        state = pos(name, hands={0: hand, other: ["3H"]}, minimums=[minimum] * rules.teams)
        faces_ = state.hand_faces(0)
        ways = _layouts(rules, faces_, {})
        can = any(left >= 2 and value >= minimum for left, value, _ in ways) or any(
            _goes_out(rules, faces_, left, c) for left, _, c in ways
        )
        lays = [a for a in state.legal_actions() if str(a).startswith(("meld", "add"))]
        assert bool(lays) == can, (hand, minimum)
        if rules.partnerships:
            out = any(_goes_out(rules, faces_, left, c) for left, _, c in ways)
            assert (AskGoOut() in state.legal_actions()) == out, (hand, minimum)
        # a pile take by a team that has not melded: the top card and a natural pair, then more
        # from the hand, reach the minimum before the rest of the pile comes
        top = rng.choice(RANKS) + rng.choice("CDHS")
        if rng.random() < 0.7:
            hand = [*hand, top[:-1] + rng.choice("CDHS"), top[:-1] + rng.choice("CDHS")]
        below = [rng.choice(RANKS) + rng.choice("CDHS") for _ in range(rng.choice([0, 1, 2, 5]))]
        try:
            state = pos(
                name,
                phase="draw",
                hands={0: hand, other: ["3H"]},
                minimums=[minimum] * rules.teams,
                pile=[*below, top],
                stock=["4H", "4D"],
            )
        except PositionError:
            continue  # more copies of a card than the deck holds
        faces_ = state.hand_faces(0)
        rest = len(below)
        ways = _layouts(rules, faces_, {}, must=rank_of(parse_face(top)))
        take = any(value >= minimum and left + rest >= 2 for left, value, _ in ways) or (
            rest == 0
            and any(
                value >= minimum and _goes_out(rules, faces_, left, c) for left, value, c in ways
            )
        )
        take = take and not (rules.one_card_pile_rule and len(hand) == 1 and rest == 0)
        assert any(isinstance(a, TakePile) for a in state.legal_actions()) == take, (
            hand,
            [*below, top],
            minimum,
        )
