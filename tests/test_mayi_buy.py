"""May I?: the buy window, step by step (offers, permissions, denial, penalty card, the limit)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from canasta_net.cards import face_text
from canasta_net.errors import IllegalAction
from canasta_net.mayi import (
    MAY_I,
    Allow,
    DealState,
    MayIRules,
    Pass,
    Phase,
    parse_action,
    position_from_dict,
    position_to_dict,
    preset,
    seat_view,
)

# the stock, bottom to top: the next card drawn is 8D, then 8S ...
STOCK = "9S 9C 9H 8S 8D"


def window_deal(
    players: int = 4,
    *,
    discarder: int | None = 0,
    turn: int = 1,
    buys: Sequence[int] | None = None,
    stock: str = STOCK,
    pile: str = "4C 9D",
    rules: MayIRules | None = None,
) -> DealState:
    rules = rules or preset("may-i", players)
    hands = ["2C 3C", "2D 3D", "2H 3H", "2S 3S", "4H 5H"][:players]
    data: dict[str, Any] = {
        "rules": rules.to_dict(),
        "turn": turn,
        "phase": "draw",
        "hands": [h.split() for h in hands],
        "stock": stock.split(),
        "pile": pile.split(),
        "discarder": discarder,
        "buys": list(buys or [0] * players),
    }
    return position_from_dict(data)


def act(state: DealState, text: str, seat: int | None = None) -> None:
    state.apply(parse_action(text), seat)


def refused(state: DealState, text: str, seat: int | None = None) -> str:
    before = json.dumps(position_to_dict(state), sort_keys=True)
    with pytest.raises(IllegalAction) as e:
        state.apply(parse_action(text), seat)
    assert json.dumps(position_to_dict(state), sort_keys=True) == before
    return e.value.code


def hand(state: DealState, seat: int) -> list[str]:
    return sorted(face_text(f) for f in state.hand_faces(seat))


def listed(state: DealState) -> list[str]:
    return [str(a) for a in state.legal_actions()]


def test_no_window_when_the_discard_is_taken() -> None:
    state = window_deal()
    act(state, "take-discard 9D", seat=1)
    assert state.phase is Phase.PLAY and state.to_move == 1


def test_window_asks_lowest_priority_first_and_closes_when_all_pass() -> None:
    state = window_deal()
    assert refused(state, "may-i 9D", seat=3) == "no-buy-window"
    act(state, "draw", seat=1)
    # seat 0 discarded the 9D; seat 1 drew instead: seats 2 and 3 may buy, seat 3 asked first
    assert state.phase is Phase.BUY_OFFER and state.to_move == 3 and state.offer == [3, 2]
    assert listed(state) == ["may-i 9D", "pass"]
    assert state.default_action() == Pass()
    assert refused(state, "may-i 9D", seat=0) == "own-discard"
    assert refused(state, "may-i 9D", seat=1) == "own-turn"
    assert refused(state, "may-i 9D", seat=2) == "not-your-turn"
    assert refused(state, "may-i 8D", seat=3) == "not-top-discard"
    assert refused(state, "allow", seat=3) == "wrong-phase"
    assert refused(state, "discard 2D", seat=1) == "not-your-turn"
    act(state, "pass", seat=3)
    assert state.to_move == 2
    act(state, "pass", seat=2)
    assert state.phase is Phase.PLAY and state.to_move == 1
    assert hand(state, 1) == ["2D", "3D", "8D"]
    assert state.pile_top is not None and face_text(state.pile_top) == "9D"


def test_buy_with_permission_takes_the_discard_and_a_penalty_card() -> None:
    state = window_deal()
    act(state, "draw", seat=1)
    act(state, "may-i 9D", seat=3)
    # seat 2 sits between the discarder and the asker: his permission is needed
    assert state.phase is Phase.BUY_PERMISSION and state.to_move == 2 and state.asker == 3
    assert listed(state) == ["allow", "deny 9D"]
    assert state.default_action() == Allow()
    assert refused(state, "pass", seat=2) == "wrong-phase"
    assert refused(state, "allow", seat=3) == "not-your-turn"
    act(state, "allow", seat=2)
    assert hand(state, 3) == ["2S", "3S", "8S", "9D"], "the discard plus the stock's top card"
    assert state.buys == [0, 0, 0, 1]
    assert state.pile_top is not None and face_text(state.pile_top) == "4C"
    assert state.phase is Phase.PLAY and state.to_move == 1
    act(state, "discard 2D", seat=1)
    assert state.turn == 2 and state.phase is Phase.DRAW
    assert state.cards_in_play() == 4 * 2 + 5 + 2


def test_denying_means_buying_it_oneself() -> None:
    state = window_deal()
    act(state, "draw", seat=1)
    act(state, "may-i 9D", seat=3)
    act(state, "deny 9D", seat=2)
    assert hand(state, 2) == ["2H", "3H", "8S", "9D"] and hand(state, 3) == ["2S", "3S"]
    assert state.buys == [0, 0, 1, 0] and state.phase is Phase.PLAY


def test_the_first_in_priority_needs_no_permission() -> None:
    state = window_deal()
    act(state, "draw", seat=1)
    act(state, "pass", seat=3)
    act(state, "may-i 9D", seat=2)  # only the player to move had priority, and he drew
    assert hand(state, 2) == ["2H", "3H", "8S", "9D"] and state.phase is Phase.PLAY


def test_five_players_permissions_in_priority_order() -> None:
    state = window_deal(5)
    act(state, "draw", seat=1)
    assert state.offer == [4, 3, 2]
    act(state, "may-i 9D", seat=4)
    assert state.permission == [2, 3] and state.to_move == 2
    act(state, "allow", seat=2)
    act(state, "deny 9D", seat=3)
    assert state.buys == [0, 0, 0, 1, 0]


def test_three_players_only_one_seat_may_buy() -> None:
    state = window_deal(3)
    act(state, "draw", seat=1)
    assert state.offer == [2]
    act(state, "may-i 9D", seat=2)
    assert state.buys == [0, 0, 1] and state.phase is Phase.PLAY


def test_the_upcard_may_be_bought_by_anyone_but_the_first_player() -> None:
    state = window_deal(4, discarder=None, pile="9D")
    act(state, "draw", seat=1)
    assert state.offer == [0, 3, 2]
    act(state, "may-i 9D", seat=0)
    assert state.permission == [2, 3]
    act(state, "allow", seat=2)
    act(state, "allow", seat=3)
    assert state.buys == [1, 0, 0, 0] and state.pile == []
    act(state, "discard 3D", seat=1)
    assert listed(state) == ["draw", "take-discard 3D"]


def test_limit_of_three_buys_per_deal() -> None:
    state = window_deal(buys=[0, 0, 0, 3])
    assert refused(state, "may-i 9D", seat=3) == "no-buy-window"
    act(state, "draw", seat=1)
    assert state.offer == [2], "a seat at the limit is not asked"
    assert refused(state, "may-i 9D", seat=3) == "buy-limit"
    state = window_deal(buys=[0, 0, 3, 0])
    act(state, "draw", seat=1)
    act(state, "may-i 9D", seat=3)  # seat 2 cannot deny (it would be a fourth buy)
    assert state.buys == [0, 0, 3, 1] and state.phase is Phase.PLAY
    state = window_deal(buys=[3, 0, 3, 3])
    act(state, "draw", seat=1)
    assert state.phase is Phase.PLAY, "nobody may buy: no window"


def settle(state: DealState) -> None:
    """Answer any buy window with the defaults (pass, allow)."""
    while (default := state.default_action()) is not None:
        state.apply(default)


def test_three_buys_in_one_deal_then_no_more() -> None:
    state = window_deal(3, stock="5S 6S 7S 8S 9S 10S JS QS KS AS 5D 6D 7D 8D")
    for k in range(3):
        act(state, "draw")  # seat 1
        assert state.to_move == 2
        act(state, f"may-i {face_text(state.pile_top or 0)}")
        assert state.buys[2] == k + 1
        act(state, f"discard {hand(state, 1)[0]}")
        act(state, "draw")  # seat 2
        settle(state)
        act(state, f"discard {hand(state, 2)[0]}")
        act(state, "draw")  # seat 0
        settle(state)
        act(state, f"discard {hand(state, 0)[0]}")
    act(state, "draw")
    assert state.phase is Phase.PLAY, "seat 2 has bought three times"
    assert state.cards_in_play() == 6 + 14 + 2


def test_penalty_from_a_turned_over_pile_and_none_at_all() -> None:
    state = window_deal(stock="8D", pile="4C 5C 9D")
    act(state, "draw", seat=1)
    assert state.phase is Phase.BUY_OFFER
    act(state, "pass")
    act(state, "may-i 9D")
    assert hand(state, 2) == ["2H", "3H", "4C", "9D"], "the pile below the 9D was turned over"
    assert state.turnovers == 1 and [face_text(f) for f in state.faces(state.stock)] == ["5C"]
    rules = MAY_I.with_changes(stock_turnovers=0)
    state = window_deal(stock="8D", pile="4C 5C 9D", rules=rules)
    act(state, "draw", seat=1)
    assert state.phase is Phase.PLAY, "no penalty card to be had: no window"


def test_two_penalty_cards_knob() -> None:
    state = window_deal(rules=MAY_I.with_changes(buy_penalty_cards=2))
    act(state, "draw", seat=1)
    act(state, "pass")
    act(state, "may-i 9D")
    assert hand(state, 2) == ["2H", "3H", "8S", "9D", "9H"]


def test_window_is_in_positions_and_views() -> None:
    state = window_deal(5)
    act(state, "draw", seat=1)
    act(state, "may-i 9D", seat=4)
    again = position_from_dict(position_to_dict(state))
    assert position_to_dict(again) == position_to_dict(state)
    assert listed(again) == listed(state) and again.to_move == 2
    view = seat_view(state, 0)
    assert view["window"] == {"offer": [], "asker": 4, "permission": [2, 3]}
    assert view["to_move"] == 2 and view["phase"] == "buy-permission"
    assert view["pile_top"] == "9D" and view["hand"] == ["2C", "3C"]
