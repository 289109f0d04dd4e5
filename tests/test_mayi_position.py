"""May I?: position dictionaries and per-seat views."""

from __future__ import annotations

import json
from typing import Any

import pytest

from canasta_net.cards import parse_face
from canasta_net.errors import PositionError
from canasta_net.mayi import (
    MAY_I,
    DealState,
    parse_action,
    position_from_dict,
    position_to_dict,
    preset,
    seat_view,
)


def base(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "rules": preset("may-i", 3).to_dict(),
        "deal": 1,
        "turn": 2,
        "phase": "play",
        "hands": [["2C", "3C"], ["4D", "5D"], ["6H", "7H", "8H"]],
        "stock": ["9S", "10S"],
        "pile": ["KD", "QD"],
        "melds": [[["AC", "AD", "AH"], ["4S", "5S", "6S", "7S"]], [], []],
        "down": [True, False, False],
        "buys": [1, 0, 2],
    }
    data.update(changes)
    return data


def test_a_full_state_round_trips_through_json() -> None:
    state = DealState(MAY_I, list(range(104)), dealer=3, deal=4)
    for _ in range(30):
        state.apply(state.legal_actions()[0], state.to_move)
    data = position_to_dict(state)
    again = position_from_dict(json.loads(json.dumps(data)))
    assert position_to_dict(again) == data
    assert [str(a) for a in again.legal_actions()] == [str(a) for a in state.legal_actions()]


def test_a_short_hand_written_position() -> None:
    state = position_from_dict(base())
    assert state.deal == 1 and str(state.contract) == "1 set + 1 sequence"
    assert state.melds[0][1].label() == "4-7 of S" and state.down == [True, False, False]
    assert state.cards_in_play() == 2 + 2 + 3 + 2 + 2 + 7
    assert state.to_move == 2
    state.apply(parse_action("discard 8H"))
    assert state.turn == 0


@pytest.mark.parametrize(
    "changes",
    [
        {"schema": "something/else"},
        {"hands": [["2C"], ["3C"]]},
        {"hands": [["2C", "2C", "2C"], [], []]},  # three of a card in two decks
        {"hands": [["ZZ"], [], []]},
        {"melds": [[["AC", "2D", "3H"]], [], []]},
        {"phase": "nap"},
        {"phase": "buy-offer"},  # a window without seats
        {"phase": "buy-permission", "window": {"permission": [1]}},  # no asker
        {"phase": "buy-offer", "window": {"offer": [0]}},  # seat 0 is at its buy limit
        {"rules": {"players": 9}},
        {"rules": "nonsense"},
        {"phase": "over"},  # no end
        {"shown": [[], [], ["9S"]]},  # a shown card the hand does not hold
    ],
)
def test_malformed_positions_are_refused(changes: dict[str, Any]) -> None:
    data = base(**changes)
    if changes.get("window") == {"offer": [0]}:
        data["buys"] = [3, 0, 0]
    with pytest.raises(PositionError):
        position_from_dict(data)


def test_views_show_only_what_a_seat_may_know() -> None:
    state = position_from_dict(base())
    view = seat_view(state, 1)
    assert view["hand"] == ["4D", "5D"]
    assert view["hand_sizes"] == [2, 2, 3] and view["stock_size"] == 2
    assert view["pile"] == ["KD", "QD"] and view["pile_top"] == "QD"
    assert view["melds"][0][0] == {"cards": ["AC", "AD", "AH"], "kind": "set", "label": "set of As"}
    assert view["contract"] == "1 set + 1 sequence" and view["discard_out"] is True
    assert view["buys"] == [1, 0, 2] and view["buy_limit"] == 3
    assert view["to_move"] == 2 and view["end"] is None
    text = json.dumps(view)
    for hidden in ("2C", "3C", "6H", "7H", "8H", "9S", "10S"):
        assert f'"{hidden}"' not in text
    with pytest.raises(ValueError):
        seat_view(state, 3)


def test_a_taken_discard_is_shown_until_that_face_is_played() -> None:
    """``shown``: the discards a seat took (or bought) are public while it may hold them."""
    state = position_from_dict(base(phase="draw", turn=2, pile=["KD", "6H"]))
    state.apply(parse_action("take-discard 6H"))
    assert state.shown == ((), (), (parse_face("6H"),))
    data = position_to_dict(state)
    assert data["shown"] == [[], [], ["6H"]] and position_to_dict(position_from_dict(data)) == data
    state.apply(parse_action("discard 6H"))  # it held a 6H before too: nobody can tell which
    assert state.shown == ((), (), ()) and "shown" not in position_to_dict(state)
