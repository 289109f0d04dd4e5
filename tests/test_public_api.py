"""The engine as a library: `import canasta_net` gives rules, a hand, actions, positions, bots
and a match; positions read with one rule for who laid a meld."""

from __future__ import annotations

import random

import pytest

import canasta_net as cn


def test_a_whole_match_played_through_the_package_level_api() -> None:
    rules = cn.preset("classic-2p")
    match = cn.Match(rules)
    rng = random.Random(7)
    bots = [cn.make_bot("greedy", rng), cn.make_bot("random", rng)]
    while match.result is None and match.hands_played < 3:
        order = list(range(rules.deck_size))
        rng.shuffle(order)
        hand = match.new_hand(order)
        while not hand.is_over:
            choice = cn.choose_for(bots[hand.to_move], hand)
            assert hand.is_legal(choice)
            hand.apply(choice)
        scores = match.record_hand(hand)
        assert all(isinstance(s, cn.TeamScore) for s in scores)
    assert match.hands_played >= 1 and sum(match.scores) != 0


def test_actions_parse_and_illegal_ones_carry_a_reason_code() -> None:
    hand = cn.position_from_dict(
        {"rules": "classic", "phase": "draw", "hands": [["KH", "KS", "KD", "5C"], [], [], []]}
    )
    assert cn.parse_action("draw") in hand.legal_actions()
    with pytest.raises(cn.IllegalAction) as refused:
        hand.apply(cn.parse_action("discard 5C"))
    assert refused.value.code == "wrong-phase"
    assert cn.position_to_dict(cn.position_from_dict(cn.position_to_dict(hand))) == (
        cn.position_to_dict(hand)
    )
    assert sorted(cn.seat_view(hand, 0)["hand"]) == ["5C", "KD", "KH", "KS"]


GOING_OUT = {
    "rules": "classic",
    "phase": "play",
    "turn": 0,
    "turn_no": 5,
    "hands": [["QC", "QS", "9H"], [], [], []],
    "turn_state": {"drew": "stock"},
}


@pytest.mark.parametrize(
    "meld",
    [
        {"cards": ["KC", "KD", "KH", "KS", "KC", "KD", "KH"]},
        {"cards": ["KC", "KD", "KH", "KS", "KC", "KD", "KH"], "seat": 0},
        {"cards": ["KC", "KD", "KH", "KS", "KC", "KD", "KH"], "seat": 0, "turn": 2},
    ],
    ids=["no seat or turn", "seat", "seat and turn"],
)
def test_a_meld_without_seat_is_the_team_first_seat_s_for_melding_and_going_out(
    meld: dict[str, object],
) -> None:
    # one rule: the meld was laid by the team's first seat in an earlier turn, so that seat has
    # melded and its going out is not concealed (100, not 200) however the position says it
    data = dict(GOING_OUT, melds=[[meld, {"cards": ["QH", "QD", "QS"]}], []])
    data["hands"] = [["QC", "QC", "9H"], [], [], []]
    hand = cn.position_from_dict(data)
    assert hand.melds[0][0].laid_by == 0 and hand.has_melded[0]
    hand.apply(cn.parse_action("add 1 QC QC"))
    hand.apply(cn.parse_action("discard 9H"))
    assert hand.end is not None and hand.end.going_out_bonus == 100
