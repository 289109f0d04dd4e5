"""Blind deal, the deal schedule: positions go to seats exactly as the engine deals a deck order."""

from __future__ import annotations

import pytest

from canasta_net.canasta.rules import preset
from canasta_net.canasta.state import HandState
from canasta_net.cards import is_black_three, is_red_three, is_wild
from canasta_net.deal.blind import (
    BadParameters,
    deal_schedule,
    labels_for_rules,
    schedule_for_rules,
)
from canasta_net.deal.shuffle import derive_deck


def quiet_order(variant: str, hand_no: int) -> list[int]:
    """A shuffled deck order whose dealt cards hold no red three and whose upcard is plain, so
    the engine's hands are exactly the positions dealt (no replacement, no extra upcard)."""
    rules = preset(variant)
    deck = labels_for_rules(rules)
    order = derive_deck(b"schedule", hand_no, [bytes(32)], len(deck))
    plain: list[int] = []
    special: list[int] = []
    for card in order:
        label = deck[card].split(":")[1]
        face_is_special = label in ("3H", "3D", "3C", "3S") or label.startswith(("2", "JK"))
        (special if face_is_special else plain).append(card)
    dealt = rules.players * rules.hand_size + 1
    return plain[:dealt] + special + plain[dealt:]


@pytest.mark.parametrize("variant", ["classic", "classic-3p", "classic-2p", "samba"])
@pytest.mark.parametrize("dealer", [0, 1])
def test_schedule_matches_the_engine(variant: str, dealer: int) -> None:
    rules = preset(variant)
    order = quiet_order(variant, dealer)
    state = HandState(rules, order, dealer=dealer)
    face = state.deck.face
    schedule = schedule_for_rules(rules, dealer)
    upcard = order[schedule.upcard]
    assert not (is_wild(face[upcard]) or is_red_three(face[upcard]) or is_black_three(face[upcard]))
    for seat in range(rules.players):
        assert state.hands[seat] == [order[p] for p in schedule.hands[seat]]
    assert state.pile == [upcard]
    # The engine keeps the stock with its top at the end.
    assert state.stock[::-1] == [order[p] for p in schedule.stock]


def test_schedule_shape() -> None:
    schedule = deal_schedule(4, 11, 3, 108)
    assert schedule.hands[0][:3] == (0, 4, 8)  # left of dealer 3 is seat 0
    assert schedule.hands[3][:2] == (3, 7)
    assert schedule.upcard == 44 and schedule.stock[0] == 45 and schedule.stock[-1] == 107
    assert schedule.owner(5) == 1 and schedule.owner(44) is None and schedule.owner(107) is None
    assert schedule.next_stock_position(0) == 45
    positions = sorted(p for hand in schedule.hands for p in hand)
    assert positions == list(range(44))
    with pytest.raises(BadParameters):
        deal_schedule(4, 27, 0, 108)
    with pytest.raises(BadParameters):
        schedule.owner(108)
