"""An audit of the May I? engine against RULES.md section 6, one rule (sentence) at a time.

Each block quotes the sentence it pins.  Where an edge is already pinned elsewhere, the test here
goes one step further (the listing agrees, the refusal leaves the state unchanged, the other end
of the limit).  The meld, lay-off and contract tests at the end compare the engine with a
from-scratch reading of the rules that shares no code with it.

Decisions where the text leaves room (also in the report of this audit):

- "exactly, no more and no less" counts melds: a contract of two sets is two melds, both sets of
  different ranks; each may be longer than the minimum (a set of 3 to 8, a sequence of 4 to 13),
  since RULES.md defines a set as "3 or more" and a sequence as "4 or more" cards.  Three sets,
  or a set and a sequence, are not "two sets".
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from test_mayi_play import act as accept
from test_mayi_play import listed, make_deal
from test_mayi_play import refused as refuse

from canasta_net.cards import JOKER, face_text, make_face, parse_faces
from canasta_net.errors import IllegalAction
from canasta_net.mayi import (
    MAY_I,
    DealState,
    EndReason,
    GreedyMayIBot,
    MayIMatch,
    Meld,
    Phase,
    choose_for,
    deal_scores,
    hand_value,
    parse_action,
    play_deal,
    preset,
    seat_view,
)
from canasta_net.mayi.contract import contract_lay_downs
from canasta_net.mayi.melds import new_meld, shape_of

F = parse_faces
STOCK = "9S 9D 9C 9H 8S 8D"  # bottom to top: 8D is drawn first


def position(hands: Sequence[str], **given: Any) -> DealState:
    """``test_mayi_play.make_deal`` with this module's short stock by default."""
    given.setdefault("stock", STOCK)
    return make_deal(hands, **given)


def hand(state: DealState, seat: int) -> list[str]:
    return sorted(face_text(f) for f in state.hand_faces(seat))


def settle(state: DealState) -> None:
    """Answer a buy window with the defaults (pass, allow): nobody buys."""
    while (default := state.default_action()) is not None:
        state.apply(default)


def out_by(state: DealState, seat: int) -> bool:
    return (
        state.end is not None
        and state.end.reason is EndReason.WENT_OUT
        and (state.end.went_out == seat)
    )


# ------------------------------------------------------------------------------------------
# "104 cards: two 52-card decks, no jokers. Values: ace 15, K Q J 10 are 10, others their face
# value. Everyone plays for himself; the goal is the lowest total of penalty points."


def test_the_deck_is_two_packs_without_jokers() -> None:
    state = DealState(MAY_I, list(range(104)))
    faces = Counter(state.deck.face)
    assert state.deck.size == 104 and len(faces) == 52
    assert all(n == 2 for n in faces.values()) and JOKER not in faces
    assert MAY_I.jokers_per_deck == 0 and MAY_I.deck_size == 104
    with pytest.raises(ValueError):
        DealState(MAY_I, list(range(105)))  # no room for a joker


@pytest.mark.parametrize("rank", range(13))
def test_every_rank_has_its_value_in_every_suit(rank: int) -> None:
    expected = {0: 15, 9: 10, 10: 10, 11: 10, 12: 10}.get(rank, rank + 1)
    for suit in range(4):
        assert MAY_I.card_value(make_face(rank, suit)) == expected
        assert hand_value(MAY_I, [make_face(rank, suit)]) == expected


@pytest.mark.parametrize("players", [3, 4, 5])
def test_everyone_plays_for_himself(players: int) -> None:
    rules = preset("may-i", players)
    assert not rules.partnerships and rules.teams == players
    assert [rules.team_of(s) for s in range(players)] == list(range(players))
    for bad in (2, 6):
        with pytest.raises(ValueError):
            preset("may-i", bad)


# ------------------------------------------------------------------------------------------
# "A game is five deals; the deal rotates; 10 cards each; the player left of the dealer starts."


@pytest.mark.parametrize(("players", "first_dealer"), [(3, 2), (4, 0), (5, 3)])
def test_a_game_is_five_deals_the_dealer_rotating(players: int, first_dealer: int) -> None:
    rules = preset("may-i", players)
    match = MayIMatch(rules, first_dealer=first_dealer)
    rng = random.Random(players)
    contracts = []
    for deal in range(5):
        order = list(range(104))
        rng.shuffle(order)
        state = match.new_deal(order)
        dealer = (first_dealer + deal) % players
        assert (state.deal, state.dealer) == (deal, dealer)
        assert state.turn == state.to_move == (dealer + 1) % players, "left of the dealer starts"
        assert [len(h) for h in state.hands] == [10] * players
        contracts.append(str(state.contract))
        play_deal(state, [GreedyMayIBot(random.Random(s)) for s in range(players)])
        match.record_deal(state)
    assert contracts == [
        "2 sets",
        "1 set + 1 sequence",
        "2 sequences",
        "3 sets",
        "2 sets + 1 sequence",
    ]
    assert match.result is not None and match.result.deals == 5


def test_the_deal_is_one_card_at_a_time_from_the_dealers_left() -> None:
    # deck order = card ids; ids 0..51 are faces AC..KS of the first pack
    state = DealState(preset("may-i", 3), list(range(104)), dealer=1)
    assert state.turn == 2
    # seat 2 gets positions 0, 3, 6 ...; seat 0 gets 1, 4, ...; seat 1 (the dealer) 2, 5, ...
    assert state.hands[2][:3] == [0, 3, 6]
    assert state.hands[0][:3] == [1, 4, 7]
    assert state.hands[1][:3] == [2, 5, 8]
    # RULES.md is silent on an upcard; seed 003 says the first player takes the top card of the
    # stock and his discard starts the open pile: no upcard; the stock is the rest, in order
    assert state.pile == [] and len(state.stock) == 104 - 30
    assert [str(a) for a in state.legal_actions()] == ["draw"]
    assert refuse(state, "take-discard AC") == "pile-empty"
    accept(state, "draw")
    assert state.hands[2][-1] == 30


def test_a_deal_from_another_dealer_is_not_recorded() -> None:
    match = MayIMatch(preset("may-i", 3), first_dealer=0)
    order = list(range(104))
    state = DealState(match.rules, order, dealer=2, deal=0)  # the game's first dealer is 0
    play_deal(state, [GreedyMayIBot(random.Random(s)) for s in range(3)])
    with pytest.raises(ValueError):
        match.record_deal(state)
    assert match.deals_played == 0


# ------------------------------------------------------------------------------------------
# "A turn: take the top card of the stock or the top discard (it need not be melded at once),
# then optionally meld, then discard one card. All discards stay visible."


def test_a_turn_begins_with_one_card_taken() -> None:
    rules = MAY_I.with_changes(players=3, buy_limit=0)  # no buy window after the draw
    state = position(["7H 7D 7S KC KD KH 2C", "5C", "8C"], rules=rules, phase="draw", discarder=2)
    assert listed(state) == {"draw", "take-discard KD"}
    assert refuse(state, "meld 7H 7D 7S | KC KD KH") == "wrong-phase"
    assert refuse(state, "discard 2C") == "wrong-phase"
    assert refuse(state, "take-discard 8D") == "not-top-discard"  # the stock's top is hidden
    accept(state, "draw")
    assert "8D" in hand(state, 0) and state.phase is Phase.PLAY
    assert refuse(state, "take-discard KD") == "wrong-phase", "one card a turn"
    assert refuse(state, "draw") == "wrong-phase"


def test_a_taken_discard_may_be_kept_and_melded_later() -> None:
    rules = MAY_I.with_changes(players=3, buy_limit=0)  # no buy windows to answer
    state = position(
        ["7H 7D 4S KC KH 2C", "5C 6C", "7S 9C"], rules=rules, phase="draw", discarder=2
    )
    accept(state, "take-discard KD")
    # the discard does not make the contract yet (one set only): keep it, discard another card
    assert not any(a.startswith("meld") for a in listed(state))
    accept(state, "discard 2C")
    assert "KD" in hand(state, 0) and state.turn == 1
    accept(state, "draw", seat=1)  # 8D
    accept(state, "discard 5C", seat=1)
    accept(state, "draw", seat=2)  # 8S
    accept(state, "discard 7S", seat=2)
    accept(state, "take-discard 7S")
    accept(state, "meld 7D 7H 7S | KC KD KH")  # a turn later, with the next discard
    assert state.down[0] and hand(state, 0) == ["4S"]


def test_every_discard_stays_visible_to_everyone() -> None:
    rules = MAY_I.with_changes(players=3, buy_limit=0)
    state = position(["2C 3C", "4C 5C", "6C 7C"], rules=rules, phase="draw", discarder=2)
    for seat, card in ((0, "2C"), (1, "4C"), (2, "6C"), (0, "3C")):
        accept(state, "draw", seat)
        accept(state, f"discard {card}", seat)
    for seat in range(3):
        view = seat_view(state, seat)
        assert view["pile"] == ["KD", "2C", "4C", "6C", "3C"] and view["pile_top"] == "3C"


# ------------------------------------------------------------------------------------------
# "Melds: a set is 3 or more cards of one rank; a sequence is 4 or more consecutive cards of
# one suit, the ace both high and low (Q-K-A-2 is not a sequence; A-2-3-4 and J-Q-K-A are)."


@pytest.mark.parametrize(
    ("cards", "code"),
    [
        ("7H 7D 7S", None),
        ("7H 7H 7D", None),  # two decks: the same card twice in a set
        ("AC AC AD AD AH AH AS AS", None),  # all eight
        ("7H 7D", "set-too-small"),
        ("AH 2H 3H 4H", None),
        ("JH QH KH AH", None),
        ("10H JH QH KH AH", None),
        ("AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH", None),
        ("QH KH AH 2H", "not-a-sequence"),
        ("KH AH 2H 3H", "not-a-sequence"),
        ("AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH", "not-a-sequence"),  # the ace twice
        ("QH KH AH", "sequence-too-short"),
        ("AH 2H 3H", "sequence-too-short"),
        ("4H 5H 6H 8H", "not-a-sequence"),
        ("4H 5H 6H 7D", "not-a-meld"),
        ("4H 4D 5H 5D", "not-a-meld"),
    ],
)
def test_melds_as_a_player_reads_them(cards: str, code: str | None) -> None:
    try:
        shape_of(MAY_I, F(cards))
    except IllegalAction as e:
        assert e.code == code
    else:
        assert code is None


# ------------------------------------------------------------------------------------------
# "Each deal has a contract, which is the player's first lay-down, exactly, no more and no
# less: deal 1 two sets; deal 2 one set and one sequence; deal 3 two sequences; deal 4 three
# sets; deal 5 two sets and a sequence. Sets in one contract have different ranks; sequences
# different suits."

NOT_MET = "contract-not-met"
DUP_RANK = "contract-duplicate-rank"
DUP_SUIT = "contract-duplicate-suit"
CONTRACT_CASES = [
    # deal 1: two sets
    (0, "7H 7D 7S KC KD KH 4C 4D 4H 2S", "meld 7H 7D 7S | KC KD KH", None),
    (0, "7H 7D 7S KC KD KH 4C 4D 4H 2S", "meld 7H 7D 7S | KC KD KH | 4C 4D 4H", NOT_MET),
    (0, "7H 7D 7S KC KD KH 4C 4D 4H 2S", "meld 7H 7D 7S", NOT_MET),
    (0, "7H 7D 7S 7C 7C 7D 4C 4D 2S 3S", "meld 7H 7D 7S | 7C 7C 7D", DUP_RANK),
    (0, "7H 7D 7S 7C 7C 7D 4C 4D 2S 3S", "meld 7H 7D 7S 7C 7C 7D", NOT_MET),
    (0, "7H 7D 7S 4C 5C 6C 7C 2S 3S 9D", "meld 7H 7D 7S | 4C 5C 6C 7C", NOT_MET),
    (0, "7H 7D 7S 7C KC KD KH KS 2S 3S", "meld 7H 7D 7S 7C | KC KD KH KS", None),  # longer sets
    # deal 2: a set and a sequence
    (1, "7H 7D 7S 4C 5C 6C 7C 8C 2S 3S", "meld 7H 7D 7S | 4C 5C 6C 7C 8C", None),  # 5 long
    (1, "7H 7D 7S 4C 5C 6C 7C 8C 2S 3S", "meld 7H 7D 7S | 5C 6C 7C 8C", None),
    (1, "7H 7D 7S KC KD KH 4C 5C 6C 7C", "meld 7H 7D 7S | KC KD KH", NOT_MET),
    (
        1,
        "7H 7D 7S KC KD KH 4C 5C 6C 7C",
        "meld 7H 7D 7S | KC KD KH | 4C 5C 6C 7C",
        NOT_MET,
    ),
    (1, "4C 5C 6C 7C 4D 5D 6D 7D 2S 3S", "meld 4C 5C 6C 7C | 4D 5D 6D 7D", NOT_MET),
    (1, "AH 2H 3H 4H JS QS KS AS 2D 9C", "meld AH 2H 3H 4H | JS QS KS AS", NOT_MET),
    # deal 3: two sequences, different suits
    (2, "AH 2H 3H 4H JS QS KS AS 2D 9C", "meld AH 2H 3H 4H | JS QS KS AS", None),
    (2, "AH 2H 3H 4H JH QH KH AH 2D 9C", "meld AH 2H 3H 4H | JH QH KH AH", DUP_SUIT),
    (2, "4C 5C 6C 7C 8C 9C 10C JC 2D 9D", "meld 4C 5C 6C 7C | 8C 9C 10C JC", DUP_SUIT),
    (2, "4C 5C 6C 7C 8C 9C 10C JC 2D 9D", "meld 4C 5C 6C 7C 8C 9C 10C JC", NOT_MET),
    (2, "4C 5C 6C 7C 4D 5D 6D 7D 9C 9H 9S", "meld 4C 5C 6C 7C | 4D 5D 6D 7D", None),
    (
        2,
        "4C 5C 6C 7C 4D 5D 6D 7D 9C 9H 9S",
        "meld 4C 5C 6C 7C | 4D 5D 6D 7D | 9C 9H 9S",
        NOT_MET,
    ),
    # deal 4: three sets
    (3, "2C 2D 2H 3C 3D 3S 4H 4H 4S JD", "meld 2C 2D 2H | 3C 3D 3S | 4H 4H 4S", None),
    (3, "2C 2D 2H 3C 3D 3S 4H 4H 4S JD", "meld 2C 2D 2H | 3C 3D 3S", NOT_MET),
    (3, "2C 2D 2H 2S 2S 2H 4H 4H 4S JD", "meld 2C 2D 2H | 2S 2S 2H | 4H 4H 4S", DUP_RANK),
    # deal 5: two sets and a sequence
    (4, "2C 2D 2H 3C 3D 3S 6H 7H 8H 9H KS QS", "meld 2C 2D 2H | 3C 3D 3S | 6H 7H 8H 9H", None),
    (4, "2C 2D 2H 3C 3D 3S 6H 7H 8H 9H KS QS", "meld 2C 2D 2H | 6H 7H 8H 9H", NOT_MET),
    (4, "2C 2D 2H 3C 3D 3S 6H 7H 8H 9H KS QS", "meld 2C 2D 2H | 3C 3D 3S", NOT_MET),
    (
        4,
        "2C 2D 2H 3C 3D 3S 4C 4D 4H 6H 7H 8H 9H",
        "meld 2C 2D 2H | 3C 3D 3S | 4C 4D 4H | 6H 7H 8H 9H",
        NOT_MET,
    ),
    (
        4,
        "2C 2D 2H 3C 3D 3S 6H 7H 8H 9H 6S 7S 8S 9S",
        "meld 2C 2D 2H | 3C 3D 3S | 6H 7H 8H 9H | 6S 7S 8S 9S",
        NOT_MET,
    ),
]


@pytest.mark.parametrize(("deal", "cards", "lay", "code"), CONTRACT_CASES)
def test_the_contract_exactly(deal: int, cards: str, lay: str, code: str | None) -> None:
    state = position([cards, "5C 5D", "8C 8D"], deal=deal)
    if code is None:
        accept(state, lay)
        assert state.down[0] and len(state.melds[0]) == MAY_I.contract(deal).melds
    else:
        assert refuse(state, lay) == code
        assert not state.down[0]


@pytest.mark.parametrize("deal", range(5))
def test_no_listed_lay_down_breaks_the_contract(deal: int) -> None:
    """A hand rich in sets and sequences: every listed lay-down is exactly the contract."""
    cards = "7H 7D 7S 7C KC KD KH 4C 5C 6C 8C 9C 4D 5D 6D 7D 9H 9S"
    state = position([cards, "5C 5D", "8C 8D"], deal=deal)
    contract = MAY_I.contract(deal)
    lays = [a for a in state.legal_actions() if isinstance(a, Meld)]
    assert lays
    for lay in lays:
        shapes = [shape_of(MAY_I, g) for g in lay.groups]
        sets = [s.rank for s in shapes if s.kind == "set"]
        runs = [s.suit for s in shapes if s.kind == "sequence"]
        assert (len(sets), len(runs)) == (contract.sets, contract.sequences), str(lay)
        assert len(set(sets)) == len(sets) and len(set(runs)) == len(runs), str(lay)


# ------------------------------------------------------------------------------------------
# "After laying the contract a player may add cards to any melds on the table (his own and
# others'), sets up to 8 cards and sequences up to 13."


def test_lay_offs_only_after_ones_own_contract_even_onto_others_melds() -> None:
    melds = [[], ["9C 9D 9H", "4S 5S 6S 7S"], []]
    state = position(["9S 8S 2D 3D", "5C", "8C"], melds=melds, down=[False, True, False])
    assert not any(a.startswith("add") for a in listed(state))
    assert refuse(state, "add 1.0 9S") == "contract-first"
    assert refuse(state, "add 1.1 8S") == "contract-first"
    assert refuse(state, "meld 9S 9C 9D") == "card-not-in-hand"


def test_a_player_who_is_down_lays_off_on_later_turns_but_never_melds_again() -> None:
    melds = [["JC JD JH", "QC QD QH"], ["4S 5S 6S 7S"], []]
    state = position(
        ["JS 3S 8S 2C 2D 2H", "5C", "8C"], melds=melds, down=[True, True, False], phase="draw"
    )
    accept(state, "draw")
    settle(state)
    assert listed(state) >= {"add 0.0 JS", "add 1.0 3S", "add 1.0 8S"}
    assert refuse(state, "meld 2C 2D 2H") == "already-down"
    assert refuse(state, "add 1.0 JS") == "does-not-fit"
    assert refuse(state, "add 0.1 JS") == "does-not-fit"
    assert refuse(state, "add 2.0 JS") == "no-such-meld"
    accept(state, "add 0.0 JS")
    accept(state, "add 1.0 3S")
    accept(state, "add 1.0 8S")
    assert state.melds[1][0].faces == F("3S 4S 5S 6S 7S 8S") and state.melds[1][0].owner == 1


def test_sequence_ends_on_the_table_ace_low_and_high_never_wrapping() -> None:
    melds = [["2H 3H 4H 5H", "10S JS QS KS"], [], []]
    state = position(["AH AS KH 2S 6H 9D", "5C", "8C"], melds=melds, down=[True, False, False])
    assert listed(state) >= {"add 0.0 AH", "add 0.0 6H", "add 0.1 AS"}
    assert refuse(state, "add 0.0 KH") == "does-not-fit"  # K-2-3-4-5 would wrap
    accept(state, "add 0.1 AS")  # 10-J-Q-K-A
    assert refuse(state, "add 0.1 2S") == "does-not-fit"  # J-Q-K-A-2 would wrap
    accept(state, "add 0.0 AH")  # A-2-3-4-5
    assert refuse(state, "add 0.0 KH") == "does-not-fit"
    assert state.melds[0][0].faces == F("AH 2H 3H 4H 5H")


def test_sets_up_to_eight_sequences_up_to_thirteen_from_play() -> None:
    melds = [["QC QC QD QD QH QH QS"], [], []]
    state = position(["QS 4D 5D", "5C", "8C"], melds=melds, down=[True, False, False])
    accept(state, "add 0.0 QS")
    assert state.melds[0][0].size == 8 and not any(a.startswith("add 0.0") for a in listed(state))
    melds = [["QC QD QS"], ["2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH"], []]
    state = position(["KH AH AH 4D 5D", "5C", "8C"], melds=melds, down=[True, True, False])
    accept(state, "add 1.0 KH")  # 2..K, 12 cards
    accept(state, "add 1.0 AH")  # the ace low makes 13: the whole suit
    assert state.melds[1][0].size == 13
    assert refuse(state, "add 1.0 AH") == "meld-full"  # the ace high would be a 14th card


# ------------------------------------------------------------------------------------------
# "Going out: in deals 1-4 the last card may be discarded; in deal 5 it must be melded."


@pytest.mark.parametrize("deal", range(4))
def test_deals_one_to_four_go_out_by_discarding_or_by_melding(deal: int) -> None:
    melds = [["5H 5S 5D", "8S 9S 10S JS"], [], []]
    state = position(["9H", "2C", "3C"], deal=deal, melds=melds, down=[True, False, False])
    assert listed(state) == {"discard 9H"}
    accept(state, "discard 9H")
    assert out_by(state, 0) and deal_scores(state) == [0, 2, 3]
    state = position(["5C QS", "2C", "3C"], deal=deal, melds=melds, down=[True, False, False])
    accept(state, "add 0.0 5C")
    accept(state, "add 0.1 QS")  # the last card laid off: out, no discard needed
    assert out_by(state, 0)


def test_deal_five_goes_out_only_by_melding_the_last_card() -> None:
    # the whole hand as the contract: out at once
    state = position(["2C 2D 2H 3C 3D 3S 6H 7H 8H 9H 10H", "5C", "8C"], deal=4)
    accept(state, "meld 2C 2D 2H | 3C 3D 3S | 6H 7H 8H 9H 10H")
    assert out_by(state, 0)
    # one card left that fits nowhere cannot be discarded
    melds = [["5H 5S 5D"], [], []]
    state = position(["9H 4C", "2C", "3C"], deal=4, melds=melds, down=[True, False, False])
    accept(state, "discard 4C")  # two cards: a discard is fine
    assert state.turn == 1 and hand(state, 0) == ["9H"]
    state = position(["9H 5C", "2C", "3C"], deal=4, melds=melds, down=[True, False, False])
    assert refuse(state, "add 0.0 5C") == "must-meld-last-card"  # would strand the 9H
    state = position(["5C", "2C", "3C"], deal=4, melds=melds, down=[True, False, False])
    assert listed(state) == {"add 0.0 5C"}
    assert refuse(state, "discard 5C") == "must-meld-last-card"


def test_deal_five_last_two_cards_laid_off_one_after_the_other() -> None:
    # the 10H fits only once the 9H is on the sequence: laying the 9H first is fine, since the
    # card it leaves can then be laid off; the 10H first does not fit at all
    melds = [["5H 5S 5D", "5C 6C 7C 8C"], [], []]
    state = position(["9C 10C", "2C", "3C"], deal=4, melds=melds, down=[True, False, False])
    assert listed(state) == {"add 0.1 9C", "discard 9C", "discard 10C"}
    assert refuse(state, "add 0.1 10C") == "does-not-fit"
    accept(state, "add 0.1 9C")
    assert listed(state) == {"add 0.1 10C"}
    accept(state, "add 0.1 10C")
    assert out_by(state, 0)


@pytest.mark.parametrize("deal", range(5))
def test_a_player_who_goes_out_scores_nothing_and_the_others_their_hands(deal: int) -> None:
    melds = [["5H 5S 5D"], [], []]
    state = position(
        ["5C", "AC KD 2S", "10H 10H 3D"], deal=deal, melds=melds, down=[True, False, False]
    )
    accept(state, "add 0.0 5C")
    assert out_by(state, 0) and deal_scores(state) == [0, 27, 23]
    assert refuse(state, "draw", seat=1) == "deal-over" and state.legal_actions() == []


# ------------------------------------------------------------------------------------------
# '"May I?": a discard not taken by the player whose turn it is may be bought by another player
# (not its discarder), with the permission of every player who would have priority to it (those
# between the discarder and the asker in turn order). The buyer takes the discard plus one
# penalty card from the stock (published rules; at most three buys per player per deal).'


def window(players: int = 4, **extra: Any) -> DealState:
    hands = ["2C 3C", "2D 3D", "2H 3H", "2S 3S", "4H 5H"][:players]
    data = {"phase": "draw", "turn": 1, "discarder": 0, "pile": "4C 9D", "stock": STOCK, **extra}
    return position(hands, **data)


def test_the_seeds_example_d_asks_b_and_c_give_permission() -> None:
    # A B C D = seats 0 1 2 3; A discarded the 9D; B (to play) did not take it
    state = window()
    accept(state, "draw", seat=1)  # B's permission: he passed the discard up
    accept(state, "may-i 9D", seat=3)  # D asks
    assert state.phase is Phase.BUY_PERMISSION and state.to_move == 2  # C must agree
    accept(state, "allow", seat=2)
    assert hand(state, 3) == ["2S", "3S", "8S", "9D"], "the discard and the stock's next card"
    assert state.buys == [0, 0, 0, 1] and state.turn == 1 and state.phase is Phase.PLAY
    assert len(state.hands[1]) == 3, "B's turn goes on: he still has to discard"
    accept(state, "discard 2D", seat=1)
    assert state.turn == 2


def test_the_seeds_example_c_asks_only_b_gives_permission() -> None:
    state = window()
    accept(state, "draw", seat=1)
    accept(state, "pass", seat=3)
    accept(state, "may-i 9D", seat=2)  # no one left to ask: C buys at once
    assert state.buys == [0, 0, 1, 0] and hand(state, 2) == ["2H", "3H", "8S", "9D"]


def test_the_seeds_example_b_takes_it_as_his_draw_without_penalty() -> None:
    state = window(buys=[0, 3, 0, 0])  # even at the buy limit: this is no buy
    accept(state, "take-discard 9D", seat=1)
    assert hand(state, 1) == ["2D", "3D", "9D"] and state.buys == [0, 3, 0, 0]
    assert state.phase is Phase.PLAY
    for seat in (0, 2, 3):
        assert refuse(state, "may-i 4C", seat) == "no-buy-window"


def test_nobody_buys_before_the_player_to_move_has_chosen() -> None:
    state = window()
    for seat in (0, 2, 3):
        assert refuse(state, "may-i 9D", seat) == "no-buy-window"


def test_the_discarder_and_the_player_to_move_never_buy() -> None:
    state = window(5)
    accept(state, "draw", seat=1)
    assert refuse(state, "may-i 9D", seat=0) == "own-discard"
    assert refuse(state, "may-i 9D", seat=1) == "own-turn"
    assert sorted(state.offer) == [2, 3, 4]


def test_a_denial_is_a_purchase_by_the_seat_with_priority() -> None:
    state = window(5)
    accept(state, "draw", seat=1)
    accept(state, "may-i 9D", seat=4)
    assert state.permission == [2, 3]
    accept(state, "allow", seat=2)
    accept(state, "deny 9D", seat=3)
    assert hand(state, 3) == ["2S", "3S", "8S", "9D"] and hand(state, 4) == ["4H", "5H"]
    assert state.buys == [0, 0, 0, 1, 0]
    assert refuse(state, "may-i 4C", seat=4) == "no-buy-window", "only the last discard is for sale"


def test_a_player_who_is_down_may_buy() -> None:
    melds = [[], [], [], ["JC JD JH", "QC QD QH"]]
    state = window(melds=melds, down=[False, False, False, True])
    accept(state, "draw", seat=1)
    accept(state, "may-i 9D", seat=3)
    accept(state, "allow", seat=2)
    assert state.buys[3] == 1 and "9D" in hand(state, 3)


def test_at_most_three_buys_and_the_count_starts_again_each_deal() -> None:
    state = window(buys=[0, 0, 3, 3])
    accept(state, "draw", seat=1)
    assert state.phase is Phase.PLAY, "nobody left who may buy: no window"
    assert refuse(state, "may-i 9D", seat=3) == "no-buy-window"
    state = window(buys=[0, 0, 0, 3])
    accept(state, "draw", seat=1)
    assert state.offer == [2]
    assert refuse(state, "may-i 9D", seat=3) == "buy-limit"
    match = MayIMatch(preset("may-i", 4))
    assert match.new_deal(list(range(104))).buys == [0, 0, 0, 0]


def test_the_penalty_card_with_an_empty_stock() -> None:
    # the stock's last card went to the player to move: the penalty comes from the pile below
    # the discard, turned over (the engine's end-of-stock rule, docs/may-i.md)
    state = window(stock="8D", pile="4C 5C 9D")
    accept(state, "draw", seat=1)
    accept(state, "pass", seat=3)
    accept(state, "may-i 9D", seat=2)
    assert hand(state, 2) == ["2H", "3H", "4C", "9D"] and state.pile == []
    assert state.cards_in_play() == 4 * 2 + 3 + 1
    # no card to pay with at all: the discard is not for sale
    state = window(stock="8D", pile="9D")
    accept(state, "draw", seat=1)
    assert state.phase is Phase.PLAY
    for seat in (2, 3):
        assert refuse(state, "may-i 9D", seat) == "no-buy-window"


# ------------------------------------------------------------------------------------------
# "At the end of a deal each player scores the value of the cards left in his hand. Lowest
# total after five deals wins."


def test_bought_cards_count_against_the_buyer() -> None:
    state = window(3, stock="AS KS")
    accept(state, "draw", seat=1)  # KS
    accept(state, "may-i 9D", seat=2)  # 9D plus AS
    assert deal_scores(state) == [2 + 3, 2 + 3 + 10, 2 + 3 + 15 + 9]


def test_cards_still_in_hand_score_though_their_owner_is_down() -> None:
    melds = [["5H 5S 5D"], ["JC JD JH", "QC QD QH"], []]
    state = position(["5C", "KS 4D", "AC AD 9H"], melds=melds, down=[True, True, False], deal=0)
    accept(state, "add 0.0 5C")
    assert deal_scores(state) == [0, 14, 39]


def test_lowest_total_wins_and_a_shared_lowest_is_a_draw() -> None:
    rules = preset("may-i", 4)
    won = MayIMatch(rules, deal_scores=[[5, 0, 9, 9]] * 5, scores=[25, 0, 45, 45]).result
    assert won is not None and won.winner == 1 and won.leaders == (1,)
    tied = MayIMatch(rules, deal_scores=[[5, 5, 0, 9]] * 5, scores=[25, 25, 0, 45]).result
    assert tied is not None and tied.winner == 2
    drawn = MayIMatch(rules, deal_scores=[[0, 5, 0, 9]] * 5, scores=[0, 25, 0, 45]).result
    assert drawn is not None and drawn.winner is None and drawn.leaders == (0, 2)
    assert MayIMatch(rules, deal_scores=[[0, 5, 0, 9]] * 4, scores=[0, 20, 0, 36]).result is None


# ------------------------------------------------------------------------------------------
# The engine against a from-scratch reading of the meld rules (no engine code shared).


def is_set(faces: Sequence[int]) -> bool:
    return 3 <= len(faces) <= 8 and len({f % 13 for f in faces}) == 1


def is_sequence(faces: Sequence[int]) -> bool:
    if not 4 <= len(faces) <= 13 or len({f // 13 for f in faces}) != 1:
        return False
    ranks = [f % 13 for f in faces]
    if len(set(ranks)) != len(ranks):
        return False
    for high_ace in (False, True):
        order = sorted(13 if high_ace and r == 0 else r for r in ranks)
        if order[-1] - order[0] == len(order) - 1:
            return True
    return False


def random_group(rng: random.Random) -> list[int]:
    n, kind, suit = rng.randint(1, 14), rng.random(), rng.randrange(4)
    if kind < 0.4:
        return [suit * 13 + rng.randrange(13) for _ in range(n)]
    if kind < 0.7:
        rank = rng.randrange(13)
        return [rng.randrange(4) * 13 + rank for _ in range(n)]
    start = rng.randrange(13)
    return [suit * 13 + (start + k) % 13 for k in range(n)]


def test_meld_shapes_agree_with_a_plain_reading() -> None:
    rng = random.Random(6)
    checked = 0
    while checked < 3000:
        faces = random_group(rng)
        if max(Counter(faces).values()) > 2:
            continue  # two packs: at most two of a card
        checked += 1
        try:
            shape_of(MAY_I, faces)
            engine = True
        except IllegalAction:
            engine = False
        assert engine == (is_set(faces) or is_sequence(faces)), [face_text(f) for f in faces]


def test_lay_offs_agree_with_a_plain_reading() -> None:
    rng = random.Random(7)
    checked = 0
    while checked < 3000:
        faces = random_group(rng)
        if max(Counter(faces).values()) > 2 or not (is_set(faces) or is_sequence(faces)):
            continue
        checked += 1
        meld = new_meld(0, shape_of(MAY_I, faces), range(len(faces)), faces)
        card = rng.randrange(52)
        after = [*faces, card]
        expected = is_set(after) if is_set(faces) else is_sequence(after)
        assert meld.fits(MAY_I, card) == expected, ([face_text(f) for f in faces], card)
        try:
            grown = meld.with_card(MAY_I, 999, card)
        except IllegalAction:
            assert not expected
        else:
            assert expected and sorted(grown.faces) == sorted(after)


def plain_lay_downs(deal: int, hand: Sequence[int]) -> set[tuple[tuple[int, ...], ...]]:
    """Every way to lay the contract of ``deal`` from ``hand``, by brute force."""
    contract = MAY_I.contract(deal)
    groups = set()
    for k in range(3, len(hand) + 1):
        for pick in itertools.combinations(hand, k):
            if is_set(pick) or is_sequence(pick):
                groups.add(tuple(sorted(pick)))
    have = Counter(hand)
    out = set()
    for combo in itertools.combinations(sorted(groups), contract.melds):
        sets = [g for g in combo if is_set(g)]
        runs = [g for g in combo if is_sequence(g)]
        if (len(sets), len(runs)) != (contract.sets, contract.sequences):
            continue
        if len({g[0] % 13 for g in sets}) < len(sets) or len({g[0] // 13 for g in runs}) < len(
            runs
        ):
            continue
        if Counter(f for g in combo for f in g) - have:
            continue
        out.add(tuple(sorted(combo)))
    return out


def test_contract_lay_downs_agree_with_brute_force() -> None:
    rng = random.Random(8)
    for trial in range(120):
        deal = trial % 5
        suits = rng.sample(range(4), rng.randint(1, 3))
        ranks = rng.sample(range(13), rng.randint(3, 8))
        pool = [s * 13 + r for s in suits for r in ranks for _ in range(2)]
        if len(pool) < 8:
            continue
        hand = rng.sample(pool, min(len(pool), rng.randint(8, 11)))
        listed_lays = contract_lay_downs(MAY_I, MAY_I.contract(deal), hand)
        engine = {tuple(sorted(tuple(sorted(g)) for g in lay)) for lay in listed_lays}
        assert len(engine) == len(listed_lays), "a lay-down listed twice"
        assert engine == plain_lay_downs(deal, hand), [face_text(f) for f in hand]


def test_the_listing_holds_every_legal_lay_off_and_discard() -> None:
    """Try every add and discard of the hand in positions of random play: each is accepted
    exactly when listed."""
    rng = random.Random(9)
    tried = 0
    for seed in range(6):
        order = list(range(104))
        rng.shuffle(order)
        state = DealState(preset("may-i", 3 + seed % 3), order, dealer=seed, deal=seed % 5)
        bots = [GreedyMayIBot(random.Random(s)) for s in range(state.players)]
        while not state.is_over:
            if state.phase is Phase.PLAY and any(state.down):
                seat = state.turn
                texts = listed(state)
                for f in set(state.hand_faces(seat)):
                    candidates = [f"discard {face_text(f)}"] + [
                        f"add {o}.{i} {face_text(f)}"
                        for o in range(state.players)
                        for i in range(len(state.melds[o]))
                    ]
                    for text in candidates:
                        tried += 1
                        assert state.is_legal(parse_action(text)) == (text in texts), text
            state.apply(choose_for(bots[state.to_move], state), state.to_move)
    assert tried > 100


def test_deal_five_lay_downs_agree_with_brute_force() -> None:
    """Deal 5: every lay-down of the contract, less those that leave one card which fits no meld
    on the table afterwards (it could then be neither melded nor discarded)."""
    rng = random.Random(10)
    checked = with_lays = 0
    while checked < 80:
        r1, r2 = rng.sample(range(13), 2)
        suit, start = rng.randrange(4), rng.randrange(10)
        cards = [rng.randrange(4) * 13 + r for r in (r1, r1, r1, r2, r2, r2)]
        cards += [suit * 13 + start + k for k in range(rng.randint(4, 5))]
        cards += [rng.randrange(52) for _ in range(rng.randint(0, 2))]
        if max(Counter(cards).values()) > 2:
            continue
        checked += 1
        left_over = Counter(f for f in range(52) for _ in range(2)) - Counter(cards)
        table = [f for f in left_over.elements() if f % 13 == rng.randrange(13)][:3]
        table = table if is_set(table) else []
        text = " ".join
        state = position(
            [text(face_text(f) for f in cards), "", ""],
            deal=4,
            stock="",
            pile="",
            melds=[[], [text(face_text(f) for f in table)] if table else [], []],
            down=[False, bool(table), False],
        )
        expected = set()
        for lay in plain_lay_downs(4, cards):
            left = Counter(cards) - Counter(f for g in lay for f in g)
            if left.total() == 1:
                card = next(iter(left))
                after = [list(g) for g in lay] + ([table] if table else [])
                if not any(is_set(m) and is_set([*m, card]) for m in after) and not any(
                    is_sequence(m) and is_sequence([*m, card]) for m in after
                ):
                    continue
            expected.add(lay)
        engine = {
            tuple(sorted(tuple(sorted(g)) for g in a.groups))
            for a in state.legal_actions()
            if isinstance(a, Meld)
        }
        assert engine == expected, [face_text(f) for f in cards]
        with_lays += bool(expected)
    assert with_lays > 40
