"""Three-handed lone-hand ("cutthroat") Canasta: docs/spec/RULES.md section 2's optional knob.

Everyone plays alone until someone first takes the pile; that player is the lone hand, and the
other two become partners for the rest of the hand, pooling their melds but keeping their own red
threes and their own initial-meld minimums. Draw two; game to 7500.
"""

from __future__ import annotations

import random

import pytest

from canasta_net.canasta.actions import parse_action
from canasta_net.canasta.position import (
    position_from_dict,
    position_from_view,
    position_to_dict,
    seat_view,
)
from canasta_net.canasta.rules import RuleSetError, preset
from canasta_net.canasta.scoring import score_hand
from canasta_net.canasta.state import EndReason, HandState
from canasta_net.errors import IllegalAction

LONE = preset("classic-3p-lone")


def _position(**over: object) -> HandState:
    data: dict[str, object] = {
        "rules": "classic-3p-lone",
        "turn": 0,
        "phase": "draw",
        "minimums": [50, 50, 50],
        "hands": [["QS", "QD", "9C", "9D", "4H"], ["KH", "KS", "5C"], ["KD", "KC", "6C"]],
        "stock": ["8C", "8D", "8H", "8S"],
        "pile": ["4C", "QH"],
        "melds": [[], [{"cards": ["AC", "AD", "AH"], "turn": -1, "seat": 1}], []],
        "opened": [True, True, False],
    }
    data.update(over)
    return position_from_dict(data)


def test_the_preset_draws_two_and_plays_to_7500() -> None:
    assert LONE.players == 3 and LONE.draw_count == 2 and LONE.target == 7500
    with pytest.raises(RuleSetError):
        preset("classic").with_changes(three_player_mode="lone_hand")


def test_everyone_alone_until_the_pile_is_taken() -> None:
    state = _position()
    assert [state.team_of(s) for s in range(3)] == [0, 1, 2] and state.lone is None
    state.apply(parse_action("take-pile QS QD"))
    assert state.lone == 0
    assert [state.team_of(s) for s in range(3)] == [0, 1, 1], "seats 1 and 2 are partners"
    assert state.melds[2] == [] and [m.label() for m in state.melds[1]] == ["As"]
    assert state.opened[1], "the partnership has opened (seat 1 had)"


def test_partners_pool_melds_of_a_rank() -> None:
    state = _position(
        melds=[
            [],
            [{"cards": ["KH", "KS", "KD"], "turn": -1, "seat": 1}],
            [{"cards": ["KC", "KC", "2C"], "turn": -1, "seat": 2}],
        ],
        opened=[True, True, True],
        hands=[["QS", "QD", "9C", "9D", "4H"], ["5C", "6D"], ["6C", "7D"]],
    )
    state.apply(parse_action("take-pile QS QD"))
    (kings,) = state.melds[1]
    assert kings.size == 6 and kings.naturals == 5 and kings.wilds == 1
    again = position_from_dict(position_to_dict(state))
    assert position_to_dict(again) == position_to_dict(state)


def test_pooled_groups_that_would_hold_too_many_wild_cards_stay_two() -> None:
    # each partner's kings hold three wild cards: one group would hold six, so they stay apart
    state = _position(
        melds=[
            [],
            [{"cards": ["KH", "KS", "2C", "2D", "JK"], "turn": -1, "seat": 1}],
            [{"cards": ["KC", "KD", "2H", "2S", "JK"], "turn": -1, "seat": 2}],
        ],
        opened=[True, True, True],
        hands=[["QS", "QD", "9C"], ["5C", "6D", "KH"], ["6C", "7D"]],
    )
    state.apply(parse_action("take-pile QS QD"))
    kings = [m for m in state.melds[1] if m.label() == "Ks"]
    assert [(m.naturals, m.wilds) for m in kings] == [(2, 3), (2, 3)]
    assert all(m.wilds <= 3 for team in state.melds for m in team)
    # the position still reads back, and a king the partnership lays goes to the first group
    again = position_from_dict(position_to_dict(state))
    assert position_to_dict(again) == position_to_dict(state)
    for text in ("discard 9C", "draw", "add 0 KH"):  # seat 0 discards, seat 1 plays
        state.apply(parse_action(text))
    assert [m.size for m in state.melds[1] if m.label() == "Ks"] == [6, 5]


def test_each_partner_keeps_his_own_minimum() -> None:
    # seat 2 (score below 0: minimum 15) may open the partnership with 15 after seat 0 took
    state = _position(
        minimums=[50, 90, 15],
        opened=[True, False, False],
        melds=[[], [], []],
        hands=[["QS", "QD", "9C", "9D", "4H"], ["5C", "6D"], ["5H", "5S", "5D", "8C", "JC"]],
    )
    state.apply(parse_action("take-pile QS QD"))
    state.apply(parse_action("discard 4H"))
    assert state.turn == 1
    state.apply(parse_action("draw"))
    state.apply(parse_action("discard 5C"))
    state.apply(parse_action("draw"))  # seat 2
    state.apply(parse_action("meld 5H 5S 5D"))  # 15: enough for seat 2, not for seat 1
    assert state.opened[1], "the partnership is open for seat 1 too"


def test_partners_share_the_score_but_not_their_red_threes() -> None:
    state = _position(
        red_threes=[[], ["3H"], ["3D", "3H"]],
        stock=[],
        hands=[["QS", "QD", "9C", "9D", "4H"], ["KH", "KS", "5C"], ["6C"]],
    )
    state.apply(parse_action("take-pile QS QD"))
    state.apply(parse_action("discard 4H"))
    state.apply(parse_action("draw"))  # the stock is empty: the hand ends
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED
    lone, first, second = score_hand(state)
    assert first.melds == second.melds == 60 and first.cards_in_hand == second.cards_in_hand
    assert (first.red_threes, second.red_threes) == (100, 200)
    assert first.total - first.red_threes == second.total - second.red_threes
    assert lone.melds == 30 and lone.red_threes == 0


def test_without_a_pile_take_each_scores_alone() -> None:
    state = _position(stock=[], pile=["4C", "2H"], red_threes=[[], ["3H"], []])
    state.apply(parse_action("draw"))  # the pile cannot be taken (a wild card on top)
    scores = score_hand(state)
    assert state.lone is None and [state.team_of(s) for s in range(3)] == [0, 1, 2]
    assert scores[1].melds == 60 and scores[2].melds == 0 and scores[1].red_threes == 100


def test_refusals_do_not_form_a_partnership() -> None:
    state = _position(pile=["4C", "JH"])
    with pytest.raises(IllegalAction):
        state.apply(parse_action("take-pile QS QD"))
    assert state.lone is None and state.team_map == [0, 1, 2]


def test_a_seats_view_keeps_the_lone_hand_and_its_positions_play_on() -> None:
    """Once the sides have formed, a position built from a seat's view (what a searching bot and
    a hint sample from) is still the lone hand's: a partner taking the pile onto the side's meld
    adds to it, as at the table, instead of forming the sides a second time (with itself alone,
    or a listed move naming a meld of the wrong side, which failed)."""
    state = _position(
        turn=1,
        lone=0,
        team_map=[0, 1, 1],
        hands=[["9C", "9D", "4H"], ["KH", "KS", "5C"], ["KD", "KC", "6C"]],
        pile=["4C", "AS"],
        melds=[
            [{"cards": ["QS", "QD", "QH"], "turn": -1, "seat": 0}],
            [{"cards": ["AC", "AD", "AH"], "turn": -1, "seat": 1}],
            [],
        ],
        opened=[True, True, True],
    )
    assert state.lone == 0 and "take-pile" in [str(a) for a in state.legal_actions()]
    view = seat_view(state, 1)
    for seed in range(5):
        sampled = position_from_dict(position_from_view(view, LONE, random.Random(seed)))
        assert sampled.lone == 0 and sampled.team_map == state.team_map
        listed = sampled.legal_actions()
        assert "take-pile" in [str(a) for a in listed]
        for action in listed:
            trial = sampled.copy()
            trial.apply(action)  # every listed move plays (none forms the sides again)
            assert trial.lone == 0 and trial.team_map == state.team_map
    assert view["lone"] == 0 and view["teams"] == [0, 1, 1]
