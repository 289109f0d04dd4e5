"""May I?: dealing, the turn, the contract, lay-offs, going out and the end of the stock."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from canasta_net.cards import face_text, parse_face, parse_faces
from canasta_net.errors import IllegalAction
from canasta_net.mayi import (
    MAY_I,
    DealState,
    EndReason,
    MayIAction,
    MayIRules,
    Phase,
    deal_scores,
    parse_action,
    position_from_dict,
    position_to_dict,
    preset,
)

FILLER = "9S 9D 9C 9H 8S 8D"  # a stock, bottom to top


def make_deal(
    hands: Sequence[str],
    *,
    rules: MayIRules | None = None,
    deal: int = 0,
    stock: str = FILLER,
    pile: str = "KD",
    melds: Sequence[Sequence[str]] | None = None,
    turn: int = 0,
    phase: str = "play",
    **extra: Any,
) -> DealState:
    rules = rules or preset("may-i", len(hands))
    data: dict[str, Any] = {
        "rules": rules.to_dict(),
        "deal": deal,
        "dealer": (turn - 1) % rules.players,
        "turn": turn,
        "phase": phase,
        "hands": [h.split() for h in hands],
        "stock": stock.split(),
        "pile": pile.split(),
        "melds": [[m.split() for m in seat] for seat in (melds or [[]] * rules.players)],
        **extra,
    }
    return position_from_dict(data)


def snapshot(state: DealState) -> str:
    return json.dumps(position_to_dict(state), sort_keys=True)


def listed(state: DealState) -> set[str]:
    return {str(a) for a in state.legal_actions()}


def act(state: DealState, text: str, seat: int | None = None) -> None:
    """A legal action: listed (in its canonical form) for the seat to move, and applied."""
    action = parse_action(text)
    if seat is None or seat == state.to_move:
        assert str(state.normalize(action)) in listed(state), f"{text!r} is not listed"
    state.check(action, seat)
    state.apply(action, seat)


def refused(state: DealState, text: str, seat: int | None = None) -> str:
    """An illegal action: not listed, refused with a code, the state unchanged."""
    before = snapshot(state)
    action = parse_action(text)
    if seat is None or seat == state.to_move:
        assert str(state.normalize(action)) not in listed(state), f"{text!r} is listed"
    assert not state.is_legal(action, seat)
    with pytest.raises(IllegalAction) as e:
        state.apply(action, seat)
    assert snapshot(state) == before, f"refusing {text!r} changed the state"
    assert e.value.code
    return e.value.code


def hand_text(state: DealState, seat: int) -> list[str]:
    return sorted(face_text(f) for f in state.hand_faces(seat))


# ---------------------------------------------------------------- the deal
@pytest.mark.parametrize("players", [3, 4, 5])
def test_dealing(players: int) -> None:
    rules = preset("may-i", players)
    order = list(range(104))
    state = DealState(rules, order, dealer=players - 1, deal=2)
    assert [len(h) for h in state.hands] == [10] * players
    assert state.hands[0][:2] == [0, players], "one card at a time from the dealer's left"
    assert state.turn == 0 and state.to_move == 0 and state.phase is Phase.DRAW
    # seed 003: no upcard; the first player draws from the stock and his discard starts the pile
    assert state.pile == [] and state.pile_top is None
    assert state.stock[-1] == 10 * players, "the next card is the stock's top, drawn next"
    assert len(state.stock) == 104 - 10 * players
    assert state.cards_in_play() == 104
    assert [str(a) for a in state.legal_actions()] == ["draw"]
    upcard = DealState(rules.with_changes(upcard=True), order, dealer=players - 1, deal=2)
    assert upcard.pile == [10 * players], "with the knob: the next card is the upcard"
    assert upcard.stock[-1] == 10 * players + 1, "then the stock, its top drawn next"
    assert len(upcard.stock) == 104 - 10 * players - 1 and upcard.cards_in_play() == 104
    assert str(state.contract) == "2 sequences"
    with pytest.raises(ValueError):
        DealState(rules, order[:-1])
    with pytest.raises(ValueError):
        DealState(rules, order, deal=5)


def test_a_turn_draw_then_discard() -> None:
    state = make_deal(["2C 3D 4H", "5C 6D 7H", "8C 9D 10H"], phase="draw", discarder=2)
    assert listed(state) == {"draw", "take-discard KD"}
    assert refused(state, "discard 2C") == "wrong-phase"
    assert refused(state, "draw", seat=1) == "not-your-turn"
    assert refused(state, "take-discard QD") == "not-top-discard"
    act(state, "take-discard KD", seat=0)
    assert hand_text(state, 0) == ["2C", "3D", "4H", "KD"]
    assert state.phase is Phase.PLAY and refused(state, "draw") == "wrong-phase"
    assert refused(state, "discard 5C") == "card-not-in-hand"
    act(state, "discard KD")  # the card just taken may go straight back
    assert state.turn == 1 and state.phase is Phase.DRAW and state.discarder == 0
    assert state.pile_top == parse_face("KD") and state.turn_no == 1


def test_draw_takes_the_top_of_the_stock() -> None:
    rules = MAY_I.with_changes(players=3, buy_limit=0)  # no buy window
    state = make_deal(["2C", "5C", "8C"], rules=rules, phase="draw", discarder=2)
    act(state, "draw")
    assert hand_text(state, 0) == ["2C", "8D"] and state.phase is Phase.PLAY


# ---------------------------------------------------------------- the contract
def test_contract_laid_exactly_once() -> None:
    state = make_deal(["7H 7D 7S KC KD KH 2C 4D", "5C", "8C"])
    assert listed(state) >= {"meld 7D 7H 7S | KC KD KH", "discard 2C"}
    assert refused(state, "meld 7H 7D 7S") == "contract-not-met"
    assert refused(state, "meld 7H 7D 7S | KC KD KH | 2C 4D") == "contract-not-met"
    assert refused(state, "meld 7H 7D 7S | 7C 7D 7H") == "card-not-in-hand"
    assert refused(state, "meld 7H 7D | KC KD KH 7S") == "set-too-small"
    assert refused(state, "add 0.0 7H") == "contract-first"
    act(state, "meld KC KD KH | 7S 7H 7D")
    assert state.down[0] and hand_text(state, 0) == ["2C", "4D"]
    assert [m.faces for m in state.melds[0]] == [
        parse_faces("7D 7H 7S"),
        parse_faces("KC KD KH"),
    ]
    assert refused(state, "meld 2C 2C 2C | 4D 4D 4D") == "already-down"


def test_contract_deal_two_set_and_sequence_with_ace_high() -> None:
    state = make_deal(["QS JS KS AS 5D 5C 5H 9H", "2C", "3C"], deal=1)
    assert "meld 5C 5D 5H | JS QS KS AS" in listed(state)
    assert refused(state, "meld 5D 5C 5H | QS KS AS 2S") == "card-not-in-hand"
    act(state, "meld AS KS QS JS | 5H 5C 5D")
    assert state.melds[0][1].label() == "J-A of S"


def test_contract_deal_three_no_wrap() -> None:
    state = make_deal(["QD KD AD 2D 4C 5C 6C 7C 9H", "2C", "3C"], deal=2)
    assert not any(a.startswith("meld") for a in listed(state))
    assert refused(state, "meld QD KD AD 2D | 4C 5C 6C 7C") == "not-a-sequence"
    assert refused(state, "meld 4C 5C 6C 7C") == "contract-not-met"


def test_contract_deal_four_three_sets() -> None:
    state = make_deal(["2C 2D 2H 3C 3D 3S 4H 4H 4S JD", "2C", "3C"], deal=3)
    assert listed(state) >= {"meld 2C 2D 2H | 3C 3D 3S | 4H 4H 4S"}
    act(state, "meld 2C 2D 2H | 3C 3D 3S | 4H 4H 4S")
    assert hand_text(state, 0) == ["JD"]


# ---------------------------------------------------------------- lay-offs
def test_lay_offs_onto_anyones_melds_after_the_contract() -> None:
    melds = [[], ["9C 9D 9H", "4S 5S 6S 7S"], []]
    state = make_deal(
        ["7H 7D 7S KC KD KH 9S 8S 3S 2D", "5C", "8C"],
        melds=melds,
        down=[False, True, False],
    )
    assert refused(state, "add 1.0 9S") == "contract-first"
    act(state, "meld 7H 7D 7S | KC KD KH")
    # laid this turn, the player may lay off at once, onto his own melds and others'
    assert listed(state) >= {"add 1.0 9S", "add 1.1 8S", "add 1.1 3S"}
    assert refused(state, "add 1.1 2D") == "does-not-fit"
    assert refused(state, "add 1.0 8S") == "does-not-fit"
    assert refused(state, "add 1.2 8S") == "no-such-meld"
    assert refused(state, "add 3.0 8S") == "no-such-meld"
    act(state, "add 1.0 9S")
    act(state, "add 1.1 8S")
    act(state, "add 1.1 3S")
    assert state.melds[1][1].faces == parse_faces("3S 4S 5S 6S 7S 8S")
    assert state.melds[1][0].faces == parse_faces("9C 9D 9H 9S")
    assert all(m.owner == 1 for m in state.melds[1]), "a meld stays its layer's"
    assert hand_text(state, 0) == ["2D"]


def test_set_limit_eight() -> None:
    melds = [["QC QC QD QD QH QH QS", "JC JD JH"], [], []]
    state = make_deal(["QS 4D 5D", "5C", "8C"], melds=melds)
    assert "add 0.0 QS" in listed(state)
    act(state, "add 0.0 QS")
    assert state.melds[0][0].size == 8


def test_sequence_limit_thirteen() -> None:
    melds = [["JC JD JH"], ["2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH"], []]
    state = make_deal(["AH AH 4D 5D", "5C", "8C"], melds=melds)
    assert "add 1.0 AH" in listed(state)
    act(state, "add 1.0 AH")
    assert state.melds[1][0].size == 13
    assert refused(state, "add 1.0 AH") == "meld-full"
    assert not any(a.startswith("add 1.0") for a in listed(state))


# ---------------------------------------------------------------- going out
def test_going_out_by_discarding_in_deals_one_to_four() -> None:
    for deal in range(4):
        state = make_deal(["5C 9H", "2C", "3C"], deal=deal, melds=[["5H 5S 5D"], [], []])
        state.down[0] = True
        act(state, "add 0.0 5C")
        assert listed(state) == {"discard 9H"}
        act(state, "discard 9H")
        assert state.is_over and state.end is not None
        assert state.end.reason is EndReason.WENT_OUT and state.end.went_out == 0
        assert state.legal_actions() == []
        assert refused(state, "draw") == "deal-over"


def test_going_out_by_melding_everything() -> None:
    state = make_deal(["7H 7D 7S KC KD KH", "2C", "3C"])
    act(state, "meld 7H 7D 7S | KC KD KH")
    assert state.is_over and state.end is not None and state.end.went_out == 0
    assert deal_scores(state) == [0, 2, 3]


def test_deal_five_last_card_must_be_melded() -> None:
    melds = [["5H 5S 5D", "6C 6C 6D", "8S 9S 10S JS"], [], []]
    state = make_deal(["5C 9H", "2C", "3C"], deal=4, melds=melds, down=[True, False, False])
    # laying off the 5C would leave the 9H, which cannot be melded: refused
    assert refused(state, "add 0.0 5C") == "must-meld-last-card"
    assert listed(state) == {"discard 5C", "discard 9H"}
    act(state, "discard 9H")
    # next turn, with a card that fits: lay off one, then the other
    state = make_deal(["5C QS", "2C", "3C"], deal=4, melds=melds, down=[True, False, False])
    assert listed(state) == {"add 0.0 5C", "add 0.2 QS", "discard 5C", "discard QS"}
    act(state, "add 0.0 5C")
    assert listed(state) == {"add 0.2 QS"}
    assert refused(state, "discard QS") == "must-meld-last-card"
    act(state, "add 0.2 QS")
    assert state.is_over and state.end is not None and state.end.went_out == 0


def test_deal_five_last_card_may_fit_a_meld_made_by_the_lay() -> None:
    melds = [[], ["3C 4C 5C 6C"], []]
    hand = "2H 2D 2S 9C 9D 9H 4S 5S 6S 7S 8S 8D"
    state = make_deal([hand, "2C", "3C"], deal=4, melds=melds, down=[False, True, False])
    # with the 4S-8S sequence the contract uses 11 of 12 cards and leaves the 8D, which fits
    # nowhere; with 4S-7S it leaves two cards
    assert refused(state, "meld 2H 2D 2S | 9C 9D 9H | 4S 5S 6S 7S 8S") == "must-meld-last-card"
    assert "meld 2D 2H 2S | 9C 9D 9H | 4S 5S 6S 7S 8S" not in listed(state)
    assert "meld 2D 2H 2S | 9C 9D 9H | 4S 5S 6S 7S" in listed(state)
    # with a 3S instead of the 8D, the 4S-8S lay leaves the 3S, which fits the new sequence
    state = make_deal(
        [hand.replace("8D", "3S"), "2C", "3C"], deal=4, melds=melds, down=[False, True, False]
    )
    assert "meld 2D 2H 2S | 9C 9D 9H | 4S 5S 6S 7S 8S" in listed(state)
    act(state, "meld 2D 2H 2S | 9C 9D 9H | 4S 5S 6S 7S 8S")
    assert listed(state) == {"add 0.2 3S"}
    act(state, "add 0.2 3S")
    assert state.is_over and state.end is not None and state.end.went_out == 0


def test_scores_are_the_cards_left() -> None:
    state = make_deal(["5C 9H", "AC KD 2S", "10H 10H 3D"], melds=[["5H 5S 5D"], [], []])
    state.down[0] = True
    act(state, "add 0.0 5C")
    act(state, "discard 9H")
    assert deal_scores(state) == [0, 15 + 10 + 2, 10 + 10 + 3]


# ---------------------------------------------------------------- the end of the stock
def test_stock_turned_over_once_in_fixed_order() -> None:
    rules = MAY_I.with_changes(players=3, buy_limit=0)
    state = make_deal(
        ["2C 3C", "4C 5C", "6C 7C"],
        rules=rules,
        stock="",
        pile="JH QH KH",
        phase="draw",
        discarder=2,
    )
    act(state, "draw")
    # the pile below its top, turned over: its bottom card (the oldest discard) is drawn first
    assert hand_text(state, 0) == ["2C", "3C", "JH"]
    assert [face_text(f) for f in state.faces(state.stock)] == ["QH"]
    assert [face_text(f) for f in state.faces(state.pile)] == ["KH"]
    assert state.turnovers == 1
    act(state, "discard 2C")
    act(state, "draw")
    act(state, "discard 4C")
    # the stock is empty and may not be turned over again: the deal ends, hands are scored
    assert state.is_over and state.end is not None
    assert state.end.reason is EndReason.STOCK_EXHAUSTED and state.end.went_out is None
    assert deal_scores(state) == [3 + 10, 5 + 10, 6 + 7]


def test_stock_never_turned_over() -> None:
    rules = MAY_I.with_changes(players=3, buy_limit=0, stock_turnovers=0)
    state = make_deal(
        ["2C 3C", "4C 5C", "6C 7C"], rules=rules, stock="9D", pile="JH QH KH", phase="draw"
    )
    act(state, "draw")
    act(state, "discard 9D")
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED


def test_turn_limit_ends_a_deal() -> None:
    rules = MAY_I.with_changes(players=3, turn_limit=5)
    state = make_deal(["2C 3C", "4C 5C", "6C 7C"], rules=rules, phase="draw", turn_no=3)
    act(state, "take-discard KD")
    act(state, "discard KD")
    assert not state.is_over
    act(state, "take-discard KD")
    act(state, "discard KD")
    assert state.end is not None and state.end.reason is EndReason.TURN_LIMIT


def test_every_action_of_a_deal_applies_from_its_text() -> None:
    state = DealState(MAY_I, list(range(104)))
    seen: list[MayIAction] = []
    while not state.is_over and len(seen) < 200:
        action = state.legal_actions()[-1]
        state.apply(parse_action(str(action)), state.to_move)
        seen.append(action)
        assert state.cards_in_play() == 104
    assert seen
