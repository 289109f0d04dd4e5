"""The three-deck variants, Samba (``samba``, ``samba-2p``, ``samba-3p``) and Bolivia
(``bolivia``), as engine tests: ``docs/spec/RULES.md`` sections 4 and 5, the cases of
``docs/spec/cases/variants.md`` that concern them, and worked examples for every choice the
engine makes where the specification and seed 003 (``docs/spec/seeds/INDEX.md``) are silent (see
``docs/variants.md``).

docs/spec/RULES.md is the specification: where a case line disagrees with it, the test follows
docs/spec/RULES.md and a comment (and docs/variants.md) records the conflict.  Every rejection
asserts the exact reason code and that the state is unchanged; every accepted action is also
checked against ``legal_actions``.  Scores are exact numbers.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from rulecases import act, faces, rejects, short_position, texts

from canasta_net.canasta.actions import AskGoOut, Draw, TakePile, TakeTop, parse_action
from canasta_net.canasta.bots import make_bot
from canasta_net.canasta.match import Match, MatchOver
from canasta_net.canasta.melds import MeldKind, TableMeld, canasta_bonus
from canasta_net.canasta.position import position_from_dict, position_from_view, seat_view
from canasta_net.canasta.rules import RuleSet, RuleSetError, preset
from canasta_net.canasta.scoring import TeamScore, score_hand
from canasta_net.canasta.state import EndReason, HandState, Phase
from canasta_net.cards import JOKER, Deck, is_red_three, parse_face
from canasta_net.errors import IllegalAction
from canasta_net.simulate import cards_in_play, play_hand

SAMBA = preset("samba")
BOLIVIA = preset("bolivia")
CLASSIC = preset("classic")


# ---------------------------------------------------------------------------------- helpers
def pos(rules: str | RuleSet = "samba", **kw: Any) -> HandState:
    return short_position(rules, **kw)


def bol(**kw: Any) -> HandState:
    """A Bolivia position; the first-canasta bonus is taken as given unless said otherwise."""
    kw.setdefault("canasta_bonus_given", True)
    return pos("bolivia", **kw)


def groups_of(state: HandState, team: int, rank_text: str) -> list[TableMeld]:
    rank = parse_face(rank_text + "C") % 13
    return [m for m in state.melds[team] if m.kind is MeldKind.GROUP and m.rank == rank]


def scores(state: HandState) -> list[TeamScore]:
    return score_hand(state)


def cards(text: str) -> list[str]:
    return text.split()


# Handy melds (three decks hold three of every card and six jokers).
K7 = cards("KC KD KH KS KC KD KH")  # a natural canasta of kings: 70 points
Q7_MIXED = cards("QC QD QH QS QC 2D JK")  # a mixed canasta of queens: 50 + 70 = 120
RUN_H = cards("4H 5H 6H 7H 8H 9H 10H")  # a samba / escalera of hearts: 50 points
JUNK = cards("8C 9D JC QH")  # singletons that never form a meld


# ====================================================================== Samba: cards and deal
def test_samba_preset_knobs() -> None:
    r = SAMBA
    assert (r.players, r.partnerships, r.teams, r.decks, r.jokers_per_deck) == (4, True, 2, 3, 2)
    assert (r.hand_size, r.draw_count, r.deck_size, r.target) == (15, 2, 162, 10000)
    assert (r.wild_rule, r.max_wilds_in_group, r.one_group_per_rank) == ("official", 2, False)
    assert r.sequences and not r.wild_melds and not r.wilds_on_canasta
    assert (r.sequence_min, r.sequence_max, r.max_meld_size) == (3, 7, 0)
    assert (r.natural_canasta_bonus, r.mixed_canasta_bonus, r.sequence_canasta_bonus) == (
        500,
        300,
        1500,
    )
    assert (r.going_out_bonus, r.concealed_bonus, r.canastas_to_go_out) == (200, 200, 2)
    assert (r.red_three_bonus, r.red_three_all_bonus, r.red_three_positive_if) == (
        100,
        1000,
        "two_canastas",
    )
    assert r.pile_always_frozen and r.take_top_to_sequence and not r.pile_take_with_wild
    assert r.going_out_allowed and r.match_hands == 0


def test_c98_samba_deck() -> None:
    deck = Deck(SAMBA.decks, SAMBA.jokers_per_deck)
    assert deck.size == 162
    assert sum(1 for f in deck.face if f == JOKER) == 6
    assert deck.red_threes == 6
    assert sum(1 for f in deck.face if is_red_three(f)) == 6
    assert sum(1 for f in deck.face if f == parse_face("KH")) == 3


@pytest.mark.parametrize("name", ["samba", "samba-2p", "samba-3p", "bolivia"])
@pytest.mark.parametrize("seed", range(6))
def test_three_deck_deal(name: str, seed: int) -> None:
    rules = preset(name)
    order = list(range(162))
    random.Random(seed).shuffle(order)
    state = HandState(rules, order, dealer=seed % rules.players)
    assert cards_in_play(state) == 162
    assert [len(h) for h in state.hands] == [15] * rules.players
    assert not any(is_red_three(f) for s in range(rules.players) for f in state.hand_faces(s))
    assert state.turn == (state.dealer + 1) % rules.players
    laid = sum(len(r) for r in state.red_threes)
    assert len(state.stock) == 162 - 15 * rules.players - len(state.pile) - laid


def test_c98_seats_and_partnerships() -> None:
    # docs/spec/RULES.md: 4 players in two partnerships, 2 and 3 each for himself (the presets)
    assert SAMBA.partner_of(0) == 2 and SAMBA.team_of(3) == 1
    for name, players in (("samba-2p", 2), ("samba-3p", 3)):
        r = preset(name)
        assert (r.players, r.partnerships, r.teams, r.hand_size) == (players, False, players, 15)
        assert r.partner_of(0) is None
    # C98 also lists 5 seats (each for himself) and 6 seats (three pairs, 13 cards): not presets,
    # but the knobs express them; 7 seats are refused.
    six = SAMBA.with_changes(name="samba-6", players=6, hand_size=13)
    assert (six.teams, six.partner_of(0), six.partner_of(1), six.team_of(4)) == (3, 3, 4, 1)
    five = SAMBA.with_changes(name="samba-5", players=5, partnerships=False)
    assert five.teams == 5
    with pytest.raises(RuleSetError):
        SAMBA.with_changes(players=7)
    with pytest.raises(RuleSetError):
        SAMBA.with_changes(players=5)  # partnerships need an even number


def test_samba_draws_two() -> None:
    state = pos(phase="draw", hands={0: ["KH", "KD"]}, stock=["9C", "8D", "7S"], pile=["6C"])
    act(state, "draw")
    assert faces(state, 0) == ["7S", "8D", "KD", "KH"]
    assert texts(state, state.stock) == ["9C"]
    assert state.phase is Phase.PLAY and state.t.drew == "stock"
    rejects(state, "draw", "wrong-phase")


def test_c83_red_three_in_a_draw_of_two_is_laid_and_replaced() -> None:
    # C83 lists the stock "from the end", top first: 7C, 3H, 6C, 5C.  Positions list the stock
    # bottom first, so the same stock is written 5C 6C 3H 7C here.
    state = pos(phase="draw", hands={0: ["KH", "KD"]}, stock=["5C", "6C", "3H", "7C"])
    act(state, "draw")
    assert faces(state, 0) == ["6C", "7C", "KD", "KH"]  # hand 4
    assert texts(state, state.red_threes[0]) == ["3H"]  # red threes 1
    assert texts(state, state.stock) == ["5C"]
    # Read literally in this project's notation (last card drawn first) the red three is not
    # reached at all: 5C and 6C are drawn.
    literal = pos(phase="draw", hands={0: ["KH", "KD"]}, stock=["7C", "3H", "6C", "5C"])
    act(literal, "draw")
    assert faces(literal, 0) == ["5C", "6C", "KD", "KH"] and literal.red_threes[0] == []


def test_c82_last_single_card_is_a_complete_draw() -> None:
    # C82 says the deal ends when the stock runs out mid-draw. docs/spec/RULES.md section 2 (draw
    # two): "one if only one is left: that is a complete draw" - the turn goes on.
    state = pos(phase="draw", hands={0: ["KH", "KD"], 1: ["9S", "9H"]}, stock=["7C"], pile=["4S"])
    act(state, "draw")
    assert faces(state, 0) == ["7C", "KD", "KH"]
    assert state.stock == [] and state.phase is Phase.PLAY and state.end is None
    act(state, "discard 7C")
    # the next player finds an empty stock: drawing ends the hand, nobody goes out
    act(state, "draw")
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED
    assert state.end.went_out is None and state.end.going_out_bonus == 0


@pytest.mark.parametrize("name", ["samba", "bolivia"])
def test_red_three_as_last_card_ends_the_hand(name: str) -> None:
    state = pos(name, phase="draw", hands={0: ["KH", "KD"]}, stock=["3D", "8C"])
    act(state, "draw")
    assert state.end is not None and state.end.reason is EndReason.LAST_RED_THREE
    assert faces(state, 0) == ["8C", "KD", "KH"]
    assert texts(state, state.red_threes[0]) == ["3D"]


# ====================================================================== Samba: groups
SAMBA_GROUPS = [
    # C22 and the limits around it: at least two naturals, at most two wild cards
    # (docs/spec/RULES.md §4: "as in Canasta, but at most two wild cards"; C22's "KH KD JK 2H
    # INVALID" conflicts with it)
    ("C22-3K", "KH KD KS", (3, 0)),
    ("C22-2K-JK", "KH KD JK", (2, 1)),
    ("C22-4K-2wild", "KH KD KS KC JK 2H", (4, 2)),
    ("C22-4K-3wild", "KH KD KS KC JK 2H 2D", "too-many-wilds"),
    ("C22-2K-2wild", "KH KD JK 2H", (2, 2)),
    ("3K-2wild", "KH KD KS JK 2H", (3, 2)),
    ("3K-3wild", "KH KD KS JK 2H 2D", "too-many-wilds"),
    ("1K-2wild", "KH 2C JK", "too-few-naturals"),
    ("wilds-only", "2S 2C JK", "wild-only-meld"),
    ("mixed-ranks", "QC QD JH", "mixed-ranks"),
    ("three-decks", "QC QC QC", (3, 0)),
    ("red-three", "KH KD 3H", "not-meldable"),
    ("two-cards", "KH KD", "too-few-cards"),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in SAMBA_GROUPS], ids=[c[0] for c in SAMBA_GROUPS]
)
def test_samba_new_group(text: str, expected: str | tuple[int, int]) -> None:
    hand = [*text.split(), "10C", "JC"]
    state = pos(hands={0: hand}, melds={0: [["6C", "6D", "6S"]]}, red_threes={})
    if isinstance(expected, str):
        rejects(state, f"meld {text}", expected)
        return
    act(state, f"meld {text}")
    m = state.melds[0][-1]
    assert m.kind is MeldKind.GROUP
    assert (m.naturals, m.wilds, m.size) == (*expected, sum(expected))
    assert faces(state, 0) == ["10C", "JC"]


def test_c22_same_meld_valid_in_classic() -> None:
    state = pos("classic", hands={0: ["KH", "KD", "JK", "2H", "10C", "JC"]}, melds={0: [K7[:3]]})
    act(state, "meld KH KD JK 2H")  # classic: merged into the team's K meld
    assert len(state.melds[0]) == 1
    assert (state.melds[0][0].naturals, state.melds[0][0].wilds) == (5, 2)
    state = pos(
        "classic", hands={0: ["KH", "KD", "JK", "2H", "10C", "JC"]}, melds={0: [["6C", "6D", "6S"]]}
    )
    act(state, "meld KH KD JK 2H")  # official: two naturals may hold two wild cards


def test_samba_wild_limit_when_adding() -> None:
    state = pos(
        hands={0: ["2C", "JK", "KC", "9C", "9D", "8S"]},
        melds={0: [["KH", "KD", "KS", "2H"]]},
    )
    act(state, "add 0 JK")  # 3 naturals, 2 wilds
    rejects(state, "add 0 2C", "too-many-wilds")  # never a third wild card
    act(state, "add 0 KC")
    rejects(state, "add 0 2C", "too-many-wilds")  # 4 naturals, still two wilds at most
    rejects(state, "add 0 9C", "wrong-rank")


def test_c21_several_groups_of_a_rank() -> None:
    state = pos(hands={0: ["KH", "KD", "KS", "KC", "9C", "9D", "8S"]}, melds={0: [K7]})
    act(state, "meld KH KD KS")  # a second group of kings, not an addition to the canasta
    assert [m.size for m in groups_of(state, 0, "K")] == [7, 3]
    act(state, "add 1 KC")
    assert [m.size for m in groups_of(state, 0, "K")] == [7, 4]
    # classic keeps one meld per rank
    classic = pos(
        "classic", hands={0: ["KH", "KD", "KS", "9C", "9D"]}, melds={0: [["KC", "KC", "KD"]]}
    )
    act(classic, "meld KH KD KS")  # merged: one meld of each rank
    assert [m.size for m in classic.melds[0]] == [6]


def test_two_canastas_of_one_rank() -> None:
    state = pos(melds={0: [K7, cards("KS KS KC KD KH 2C 2D")]})
    assert state.canastas(0) == 2
    s = scores(state)[0]
    assert (s.melds, s.canasta_bonus, s.natural_canastas, s.mixed_canastas) == (
        70 + 50 + 40,
        800,
        1,
        1,
    )


def test_samba_no_wild_card_on_a_canasta() -> None:
    state = pos(
        hands={0: ["2C", "JK", "KC", "QC", "9C", "9D", "8S"]},
        melds={0: [K7, cards("QH QD QS QH QD QS")]},
    )
    rejects(state, "add 0 2C", "wild-on-canasta")
    rejects(state, "add 0 KC JK", "wild-on-canasta")
    act(state, "add 0 KC")  # a group canasta stays open to natural cards
    assert state.melds[0][0].size == 8 and state.melds[0][0].is_natural()
    act(state, "add 1 2C")  # six naturals and a wild card: the seventh card makes it a canasta
    q = state.melds[0][1]
    assert q.is_canasta(SAMBA) and not q.is_natural()
    rejects(state, "add 1 JK", "wild-on-canasta")
    act(state, "add 1 QC")
    assert q.size == 8
    s = scores(state)[0]
    assert (s.canasta_bonus, s.melds) == (500 + 300, 80 + 70 + 20)


def test_samba_wild_card_added_with_naturals_to_a_short_group() -> None:
    # adding several cards at once: the group is not a canasta before the addition
    state = pos(
        hands={0: ["QC", "QD", "JK", "9C", "9D", "8S"]},
        melds={0: [K7, cards("QH QD QS QH QS")]},
    )
    act(state, "add 1 QC QD JK")
    assert state.melds[0][1].size == 8 and state.melds[0][1].wilds == 1


# ====================================================================== Samba: sequences
SAMBA_SEQUENCES = [
    ("low", "4H 5H 6H", ("4", 3)),
    ("ace-high", "QH KH AH", ("Q", 3)),
    ("any-order", "9S 7S 8S", ("7", 3)),
    ("five", "10D JD QD KD AD", ("10", 5)),
    ("samba", "4H 5H 6H 7H 8H 9H 10H", ("4", 7)),
    ("ace-low", "AH 4H 5H", "not-a-sequence"),
    ("wrap", "KH AH 4H", "not-a-sequence"),
    ("gap", "4H 6H 7H", "not-a-sequence"),
    ("duplicate", "4H 4H 5H", "not-a-sequence"),
    ("two-wild", "4H 5H 2C", "not-a-sequence"),
    ("joker", "4H 5H JK", "not-a-sequence"),
    ("suits", "4H 5S 6H", "mixed-ranks"),
    ("black-three", "3S 4S 5S", "not-meldable"),
    ("eight", "4H 5H 6H 7H 8H 9H 10H JH", "meld-too-large"),
    ("two", "4H 5H", "too-few-cards"),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in SAMBA_SEQUENCES], ids=[c[0] for c in SAMBA_SEQUENCES]
)
def test_samba_new_sequence(text: str, expected: str | tuple[str, int]) -> None:
    state = pos(hands={0: [*text.split(), "10C", "JC"]}, melds={0: [["6C", "6D", "6S"]]})
    if isinstance(expected, str):
        rejects(state, f"meld {text}", expected)
        return
    act(state, f"meld {text}")
    m = state.melds[0][-1]
    low, size = expected
    assert m.kind is MeldKind.SEQUENCE and m.size == size and m.wilds == 0
    assert m.rank == parse_face(low + "C") % 13
    assert m.is_canasta(SAMBA) is (size == 7) and m.is_closed(SAMBA) is (size == 7)


def test_sequences_are_not_in_classic() -> None:
    state = pos("classic", hands={0: ["4H", "5H", "6H", "10C", "JC"]}, melds={0: [K7[:3]]})
    rejects(state, "meld 4H 5H 6H", "mixed-ranks")


def test_samba_extending_a_sequence() -> None:
    state = pos(
        hands={0: ["4H", "8H", "9H", "10H", "JH", "10S", "8S", "2C", "6H", "QC", "QD"]},
        melds={0: [["5H", "6H", "7H"]]},
    )
    rejects(state, "add 0 10H", "not-a-sequence")  # not next to either end
    rejects(state, "add 0 8S", "not-a-sequence")  # wrong suit
    rejects(state, "add 0 2C", "not-a-sequence")  # no wild card in a sequence
    rejects(state, "add 0 6H", "not-a-sequence")  # already in it
    act(state, "add 0 4H 8H")  # both ends at once
    m = state.melds[0][0]
    assert (m.size, m.rank, m.label()) == (5, parse_face("4C") % 13, "4-8H run")
    rejects(state, "add 0 9H 10H JH", "meld-too-large")  # eight cards
    act(state, "add 0 9H 10H")
    assert m.size == 7 and m.is_canasta(SAMBA) and m.is_closed(SAMBA)
    rejects(state, "add 0 JH", "meld-closed")  # a samba is closed
    s = scores(state)[0]
    assert (s.melds, s.canasta_bonus, s.natural_canastas) == (50, 1500, 1)


def test_samba_two_sequences_of_one_suit_stay_apart() -> None:
    state = pos(
        hands={0: ["7H", "7H", "QC", "QD", "9S"]},
        melds={0: [["4H", "5H", "6H"], ["8H", "9H", "10H"]]},
    )
    act(state, "add 0 7H", "add 1 7H")
    assert [(m.label(), m.size) for m in state.melds[0]] == [("4-7H run", 4), ("7-10H run", 4)]
    # there is no action that joins them: 4-7H and 8-10H never become one meld


def test_c23_samba_bonus_and_going_out() -> None:
    state = pos(hands={0: ["9C"]}, melds={0: [RUN_H, K7]}, has_melded=[True, False, True, False])
    m = state.melds[0][0]
    assert m.is_canasta(SAMBA) and m.is_closed(SAMBA) and canasta_bonus(SAMBA, m) == 1500
    assert state.canastas(0) == 2  # the samba counts as a canasta for going out
    act(state, "discard 9C")
    assert state.end is not None and state.end.reason is EndReason.WENT_OUT
    s = scores(state)[0]
    assert (s.melds, s.canasta_bonus, s.going_out, s.cards_in_hand) == (120, 2000, 200, 0)
    assert s.total == 2320


# ====================================================================== Samba: the pile
def samba_pile(pile: list[str], hand: list[str] | None = None, **kw: Any) -> HandState:
    kw.setdefault("phase", "draw")
    return pos(
        hands={0: hand or ["KH", "JK", "KD", "9C", "8D", "QS"]},
        melds={0: [["KH", "KD", "KS"]]},
        pile=pile,
        stock=["4H", "5H"],
        **kw,
    )


def test_c55_samba_pile_always_frozen() -> None:
    state = samba_pile(["4D", "KC"])
    assert not state.pile_frozen and state.frozen_for(0)  # nothing in it freezes it, yet frozen
    rejects(state, "take-pile KH JK", "pile-frozen")
    rejects(state, "take-pile onto 0", "pile-frozen")
    rejects(state, "take-pile KH JK onto 0", "pile-frozen")
    rejects(state, "take-pile", "pile-frozen")  # the one K group is meant: frozen all the same
    rejects(state, "take-pile JK 9C", "pile-take-cards")
    act(state, "take-pile KH KD")
    assert state.pile == [] and state.phase is Phase.PLAY and state.t.drew == "pile"
    assert [m.size for m in groups_of(state, 0, "K")] == [3, 3]  # a new group of kings
    assert faces(state, 0) == ["4D", "8D", "9C", "JK", "QS"]


def test_samba_pile_pair_onto_an_existing_group() -> None:
    state = samba_pile(["4D", "KC"])
    act(state, "take-pile KH KD onto 0")
    assert [m.size for m in groups_of(state, 0, "K")] == [6]
    assert faces(state, 0) == ["4D", "8D", "9C", "JK", "QS"]


@pytest.mark.parametrize("top", ["2C", "JK", "3S"])
def test_samba_pile_blocked_by_wild_or_black_three(top: str) -> None:
    state = samba_pile(["KC", top], hand=["KH", "KD", "8D"])
    rejects(state, "take-pile KH KD", "pile-blocked")
    assert state.legal_actions() == [Draw()]


def test_samba_unopened_team_takes_the_pile_for_its_initial_meld() -> None:
    state = pos(
        phase="draw",
        hands={0: ["KH", "KD", "AH", "AC", "AD", "9C", "8D"]},
        pile=["9S", "7S", "KC"],
        stock=["4H"],
    )
    assert state.minimums[0] == 50 and not state.opened[0]
    act(state, "take-pile KH KD")  # 30 so far: the rest of the pile waits
    assert state.phase is Phase.PILE_PENDING and state.t.initial_points == 30
    rejects(state, "discard 9C", "wrong-phase")
    act(state, "meld AH AC AD")
    assert state.opened[0] and state.phase is Phase.PLAY and state.t.initial_points == 90
    assert faces(state, 0) == ["7S", "8D", "9C", "9S"]
    # without enough from the hand the pile cannot be taken
    short = pos(phase="draw", hands={0: ["KH", "KD", "9C", "8D"]}, pile=["KC"], stock=["4H"])
    rejects(short, "take-pile KH KD", "initial-meld-too-low")


def test_samba_initial_meld_completed_with_a_sequence_after_the_pile() -> None:
    state = pos(
        phase="draw",
        hands={0: ["KH", "KD", "8S", "9S", "10S", "4C", "5D"]},
        pile=["6C", "KC"],
        stock=["4H"],
    )
    act(state, "take-pile KH KD", "meld 8S 9S 10S")
    assert state.opened[0] and state.t.initial_points == 60
    assert faces(state, 0) == ["4C", "5D", "6C"]


# ---------------------------------------------------------------- take-top (C56)
def take_top_position(top: str, hand: list[str] | None = None, **kw: Any) -> HandState:
    kw.setdefault("phase", "draw")
    kw.setdefault("melds", {0: [["5H", "6H", "7H"], ["KC", "KD", "KS"]]})
    return pos(
        hands={0: hand if hand is not None else ["QS", "QD", "4C"]},
        pile=["KC", top],
        stock=["4S", "9D"],
        **kw,
    )


def test_c56_take_top_extends_a_sequence() -> None:
    state = take_top_position("8H")
    assert TakeTop(0) in state.legal_actions() and TakeTop(1) not in state.legal_actions()
    act(state, "take-top 0")
    assert texts(state, state.pile) == ["KC"]  # only the top card was taken
    run = state.melds[0][0]
    assert (run.label(), run.size) == ("5-8H run", 4)
    assert faces(state, 0) == ["4C", "QD", "QS"]  # the hand is unchanged
    assert state.phase is Phase.PLAY and state.t.drew == "pile"
    assert len(state.stock) == 2
    rejects(state, "draw", "wrong-phase")  # it replaces the draw
    act(state, "discard 4C")
    assert state.turn == 1


def test_c56_take_top_refusals() -> None:
    rejects(take_top_position("10H"), "take-top 0", "not-a-sequence")  # not consecutive
    rejects(take_top_position("8S"), "take-top 0", "not-a-sequence")  # wrong suit
    rejects(take_top_position("2H"), "take-top 0", "not-a-sequence")  # wild card
    rejects(take_top_position("3S"), "take-top 0", "not-a-sequence")  # black three
    rejects(take_top_position("KH"), "take-top 1", "not-a-sequence")  # a group takes no top
    rejects(take_top_position("8H"), "take-top 2", "no-such-meld")
    rejects(take_top_position("8H", hand=["4C"]), "take-top 0", "must-keep-a-card")
    rejects(take_top_position("8H", phase="play"), "take-top 0", "wrong-phase")
    closed = take_top_position("JH", melds={0: [RUN_H]})
    rejects(closed, "take-top 0", "meld-closed")
    other_team = take_top_position("8H", melds={0: [], 1: [["5H", "6H", "7H"]]})
    rejects(other_team, "take-top 0", "no-such-meld")
    empty = pos(phase="draw", hands={0: ["QS", "QD"]}, melds={0: [["5H", "6H", "7H"]]})
    rejects(empty, "take-top 0", "pile-empty")


def test_c56_classic_has_no_take_top() -> None:
    state = pos("classic", phase="draw", hands={0: ["QS", "QD"]}, melds={0: [K7[:3]]}, pile=["KC"])
    rejects(state, "take-top 0", "not-in-this-game")
    rejects(
        pos("bolivia", phase="draw", hands={0: ["QS"]}, pile=["KC"]),
        "take-top 0",
        "not-in-this-game",
    )


def test_take_top_completing_a_samba_then_going_out() -> None:
    # one card in hand is enough when the top card makes the second canasta
    state = pos(
        phase="draw",
        hands={0: ["4C"]},
        melds={0: [cards("5H 6H 7H 8H 9H 10H"), K7]},
        has_melded=[True, False, False, False],
        pile=["KC", "JH"],
        stock=["4S", "9D"],
    )
    act(state, "take-top 0")
    assert state.canastas(0) == 2 and state.melds[0][0].is_closed(SAMBA)
    act(state, "discard 4C")
    assert state.end is not None and state.end.going_out_bonus == 200
    s = scores(state)[0]
    assert (s.melds, s.canasta_bonus, s.going_out, s.total) == (55 + 70, 2000, 200, 2325)


# ====================================================================== Samba: initial meld
@pytest.mark.parametrize(
    ("score", "minimum"),
    [
        (-100, 15),
        (-5, 15),
        (0, 50),
        (1495, 50),
        (1500, 90),
        (2995, 90),
        (3000, 120),
        (6995, 120),
        (6999, 120),
        (7000, 150),  # C25 notes Bicycle/HowStuffWorks "160 over 7000": docs/spec/RULES.md says 150
        (12000, 150),
    ],
    ids=lambda v: str(v),
)
def test_c25_samba_initial_minimum(score: int, minimum: int) -> None:
    assert SAMBA.initial_minimum(score) == minimum
    assert Match(SAMBA, scores=[score, 0]).minimums() == [minimum, 50]


def test_samba_sequence_counts_toward_the_initial_meld() -> None:
    state = pos(hands={0: ["8H", "9H", "10H", "JC", "JD", "JS", "4C", "5D"]})
    act(state, "meld 8H 9H 10H")
    assert not state.opened[0] and state.t.initial_points == 30
    rejects(state, "discard 4C", "initial-meld-too-low")
    act(state, "meld JC JD JS", "discard 4C")
    assert state.opened[0] and state.turn == 1
    # a lone low sequence does not reach 50
    short = pos(hands={0: ["4H", "5H", "6H", *JUNK]})
    rejects(short, "meld 4H 5H 6H", "initial-meld-unreachable")
    # with a minus score the minimum is 15: the same sequence opens
    minus = pos(hands={0: ["4H", "5H", "6H", *JUNK]}, minimums=[15, 50])
    act(minus, "meld 4H 5H 6H")
    assert minus.opened[0]


def test_initial_meld_by_extending_a_sequence_laid_this_turn() -> None:
    # the run is laid short and grown in the same turn: each step must stay possible
    hand = ["8H", "9H", "10H", "JH", "QH", "4C", "5D", "7S", "KS"]
    for name in ("samba", "bolivia"):
        state = pos(name, hands={0: hand}, minimums=[50, 50])
        act(state, "meld 8H 9H 10H")
        assert state.t.initial_points == 30
        rejects(state, "discard 4C", "initial-meld-too-low")
        act(state, "add 0 JH")
        assert not state.opened[0] and state.t.initial_points == 40
        act(state, "add 0 QH")
        assert state.opened[0] and state.t.initial_points == 50
        act(state, "discard 4C")
    # both ends: 6-7-8 (20) laid first, then 4-5 (10) below and 9 (10) above: 40
    state = pos(hands={0: ["4S", "5S", "6S", "7S", "8S", "9S", *JUNK]}, minimums=[40, 50])
    act(state, "meld 6S 7S 8S", "add 0 4S 5S")
    assert not state.opened[0] and state.t.initial_points == 30
    act(state, "add 0 9S")
    assert state.opened[0] and state.t.initial_points == 40


@pytest.mark.parametrize("name", ["samba", "bolivia"])
@pytest.mark.parametrize(
    ("hand", "minimum", "plan"),
    [
        # a group and a run, either first: 10H 10S 10S (30) + 7H 8H 9H (25) = 55, two cards kept
        ("7H 8H 9H 10H 10S 10S 4C 9C", 50, ["meld 10H 10S 10S", "meld 7H 8H 9H"]),
        ("7H 8H 9H 10H 10S 10S 4C 9C", 50, ["meld 7H 8H 9H", "meld 10H 10S 10S"]),
        # only part of a run: 4H-7H (20) + KC KD KS (30), the 8H kept with the 9C
        ("4H 5H 6H 7H 8H KC KD KS 9C", 50, ["meld 4H 5H 6H 7H", "meld KC KD KS"]),
        # a run that shares a card with a group: 8S 9S 10S (30) + JS JD 2H (40)
        ("8S 9S 10S JS JD KC 7C 2H QC", 60, ["meld 8S 9S 10S", "meld JS JD 2H"]),
        # two runs of one suit from a doubled card: 6-7-8C (20) twice, and 9C 9D 9S (30)
        (
            "6C 7C 8C 6C 7C 8C 9C 9D 9S KH QD",
            70,
            ["meld 6C 7C 8C", "meld 6C 7C 8C", "meld 9C 9D 9S"],
        ),
    ],
)
def test_initial_meld_plans_with_runs_are_found(
    name: str, hand: str, minimum: int, plan: list[str]
) -> None:
    """The look-ahead accepts a lay whenever some legal way to the minimum remains after it,
    whichever runs (whole, in part, or none) that way lays."""
    state = pos(name, hands={0: hand.split()}, minimums=[minimum, minimum])
    if name == "bolivia":
        state.canasta_bonus_given = True
    act(state, *plan)
    assert state.opened[0] and state.t.initial_points >= minimum


def test_bolivia_wild_cards_alone_may_open_rather_than_with_a_pair() -> None:
    # 7S 8S 9S (25) + JK JK 2C as a meld of wild cards (120) = 145 >= 140; spreading the wild
    # cards onto the pair of sevens gives less
    hand = ["7S", "8S", "9S", "JK", "JH", "7D", "JK", "2C", "5D", "10D", "7H"]
    state = bol(hands={0: hand}, minimums=[140, 140])
    act(state, "meld 7S 8S 9S", "meld JK JK 2C")
    assert state.opened[0] and state.t.initial_points == 145


def test_samba_going_out_with_part_of_a_run_is_seen() -> None:
    # two canastas down; 4H-7H and 8H 8C 8D are laid and the 9C discarded: going out is possible,
    # so asking the partner is allowed
    run, kings = (
        ["4S", "5S", "6S", "7S", "8S", "9S", "10S"],
        ["KC", "KD", "KH", "KS", "KC", "KD", "KH"],
    )
    hand = ["4H", "5H", "6H", "7H", "8H", "8C", "8D", "9C"]
    state = pos(hands={0: hand}, melds={0: [run, kings]})
    assert state.can_go_out()
    going = state.copy()
    act(going, "meld 4H 5H 6H 7H", "meld 8H 8C 8D", "discard 9C")
    assert going.end is not None and going.end.went_out == 0


# ====================================================================== Samba: going out
def test_c69_samba_going_out_needs_two_canastas() -> None:
    one = pos(hands={0: ["9C"]}, melds={0: [K7, ["QC", "QD", "QS"]]})
    err = rejects(one, "discard 9C", "no-canasta-to-go-out")
    assert "2 canastas" in str(err)
    laying = pos(hands={0: ["QH", "9C"]}, melds={0: [K7, ["QC", "QD", "QS"]]})
    rejects(laying, "add 1 QH", "must-keep-a-card")
    two = pos(
        hands={0: ["9C"]},
        melds={0: [K7, Q7_MIXED]},
        has_melded=[True, False, False, False],
    )
    act(two, "discard 9C")
    assert two.end is not None and two.end.went_out == 0 and two.end.going_out_bonus == 200
    s = scores(two)
    assert (s[0].melds, s[0].canasta_bonus, s[0].going_out, s[0].total) == (190, 800, 200, 1190)
    assert s[1].total == 0


def test_samba_going_out_by_melding_the_last_cards() -> None:
    state = pos(
        hands={0: ["JC", "JD", "JH"], 2: ["4C", "KS"]},
        melds={0: [RUN_H, Q7_MIXED]},
        has_melded=[True, False, False, False],
    )
    act(state, "meld JC JD JH")
    assert state.end is not None and state.end.reason is EndReason.WENT_OUT
    s = scores(state)[0]
    assert (s.melds, s.canasta_bonus, s.going_out, s.cards_in_hand) == (
        50 + 120 + 30,
        1800,
        200,
        15,
    )
    assert s.total == 200 + 1800 + 200 - 15


def test_samba_concealed_going_out_earns_200_only() -> None:
    # the whole hand in one turn, two canastas from the hand: still 200 (no concealed bonus)
    hand = [*K7[:6], *RUN_H]
    state = pos(phase="draw", hands={0: hand}, stock=["9S", "KH"], minimums=[150, 50])
    act(state, "draw", "meld " + " ".join(K7), "meld " + " ".join(RUN_H), "discard 9S")
    assert state.end is not None and state.end.going_out_bonus == 200
    s = scores(state)[0]
    assert (s.melds, s.canasta_bonus, s.going_out, s.cards_in_hand, s.total) == (
        120,
        2000,
        200,
        0,
        2320,
    )


def test_samba_ask_to_go_out_needs_two_canastas() -> None:
    state = pos(
        phase="draw",
        hands={0: ["QH", "QD", "8C"], 2: ["4D", "5D"]},
        melds={0: [K7]},
        stock=["5S", "QC"],
    )
    act(state, "draw")
    rejects(state, "ask-go-out", "ask-not-allowed")  # one canasta: going out is impossible
    state = pos(
        phase="draw",
        hands={0: ["QH", "QD", "8C"], 2: ["4D", "5D"]},
        melds={0: [K7, RUN_H]},
        stock=["QS", "QC"],
    )
    act(state, "draw")
    assert AskGoOut() in state.legal_actions()
    act(state, "ask-go-out")
    act(state, "answer yes", seat=2)
    act(state, "meld QH QD QC QS", "discard 8C")
    assert state.end is not None and state.end.going_out_bonus == 200


def test_samba_2p_no_partner_to_ask() -> None:
    state = pos(
        "samba-2p",
        phase="draw",
        hands={0: ["QH", "QD", "8C"]},
        melds={0: [K7, RUN_H]},
        stock=["QS", "QC"],
    )
    act(state, "draw")
    assert AskGoOut() not in state.legal_actions()
    rejects(state, "ask-go-out", "ask-not-allowed")
    act(state, "meld QH QD QC QS", "discard 8C")
    assert state.end is not None and state.end.going_out_bonus == 200


def test_samba_end_of_stock_nothing_is_forced() -> None:
    # classic forces the take of a top card that fits a team meld; Samba's pile is always frozen,
    # so drawing from the empty stock (ending the hand) stays legal
    state = pos(
        turn=1,
        phase="draw",
        hands={1: ["QH", "5S", "8C"]},
        melds={1: [["QC", "QD", "QS"]]},
        pile=["QH"],
    )
    assert state.legal_actions() == [Draw()]
    act(state, "draw")
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED
    # a natural pair still takes it
    state = pos(
        turn=1,
        phase="draw",
        hands={1: ["QH", "QS", "8C", "9D"]},
        melds={1: [["QC", "QD", "QS"]]},
        pile=["7C", "QH"],
    )
    act(state, "take-pile QH QS")
    assert faces(state, 1) == ["7C", "8C", "9D"] and state.end is None


# ====================================================================== Samba: red threes, match
@pytest.mark.parametrize(
    ("reds", "canastas", "value"),
    [
        (6, 1, -1000),  # C76: all six with one canasta
        (6, 2, 1000),  # C76: all six with two canastas
        (3, 2, 300),  # C76: three with two canastas
        (3, 1, -300),
        (1, 0, -100),
        (2, 2, 200),
    ],
    ids=["C76-6-1", "C76-6-2", "C76-3-2", "3-1", "1-0", "2-samba"],
)
def test_c76_samba_red_threes(reds: int, canastas: int, value: int) -> None:
    red = ["3H", "3D", "3H", "3D", "3H", "3D"][:reds]
    melds = [K7, RUN_H][:canastas] or [["QC", "QD", "QS"]]
    state = pos(melds={0: melds}, red_threes={0: red[:2], 2: red[2:]})
    assert scores(state)[0].red_threes == value


def test_samba_match_to_10000() -> None:
    assert Match(SAMBA, scores=[9995, 9000]).result is None
    result = Match(SAMBA, scores=[10000, 9000]).result
    assert result is not None and result.winner == 0
    drawn = Match(SAMBA, scores=[10500, 10500]).result
    assert drawn is not None and drawn.winner is None  # tie_policy draw, as classic


# ====================================================================== Bolivia: preset
def test_bolivia_preset_knobs() -> None:
    r = BOLIVIA
    assert (r.players, r.partnerships, r.decks, r.deck_size, r.hand_size, r.draw_count) == (
        4,
        True,
        3,
        162,
        15,
        2,
    )
    assert (r.wild_rule, r.max_wilds_in_group, r.one_group_per_rank) == ("official", 2, False)
    assert r.sequences and r.wild_melds and r.max_meld_size == 7
    assert not r.black_threes_only_going_out and not r.going_out_allowed
    assert (r.first_canasta_bonus_cards, r.black_three_left_penalty, r.seven_left_penalty) == (
        11,
        200,
        500,
    )
    assert (r.wild_canasta_bonus, r.sequence_canasta_bonus) == (2000, 1500)
    assert (r.natural_sevens_bonus, r.mixed_sevens_bonus) == (1500, 1000)
    assert (r.natural_canasta_bonus, r.mixed_canasta_bonus) == (500, 300)
    assert (r.red_three_all_bonus, r.red_three_positive_if) == (2000, "special_canasta")
    assert not r.pile_take_with_wild and not r.pile_always_frozen and not r.take_top_to_sequence
    assert not r.forced_pile_take_at_stock_end
    assert (r.target, r.match_hands) == (0, 4)


# ====================================================================== Bolivia: melds
BOLIVIA_MELDS = [
    ("C10-wilds", "2S 2C JK", ("wilds", 0, 3)),
    ("seven-wilds", "2S 2C 2D 2H JK JK JK", ("wilds", 0, 7)),
    ("eight-wilds", "2S 2C 2D 2H JK JK JK JK", "meld-too-large"),
    ("two-wilds", "2S JK", "too-few-cards"),
    ("group", "KH KD KS KC JK 2H", ("group", 4, 2)),
    # docs/spec/RULES.md: as in Canasta, two wild cards
    ("group-2-2", "KH KD JK 2H", ("group", 2, 2)),
    ("group-3-3", "KH KD KS JK 2H 2D", "too-many-wilds"),
    ("seven-kings", "KH KD KS KC KH KD KS", ("group", 7, 0)),
    ("eight-kings", "KH KD KS KC KH KD KS KC", "meld-too-large"),
    ("escalera", "4H 5H 6H 7H 8H 9H 10H", ("sequence", 7, 0)),
    ("eight-run", "4H 5H 6H 7H 8H 9H 10H JH", "meld-too-large"),
    ("run-wild", "4H 5H 2H", "not-a-sequence"),
    ("black-threes", "3C 3S 3C", ("black-threes", 3, 0)),
    ("four-black-threes", "3C 3S 3C 3S", ("black-threes", 4, 0)),
    ("five-black-threes", "3C 3S 3C 3S 3C", "meld-too-large"),
    ("black-threes-wild", "3C 3S JK", "not-meldable"),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in BOLIVIA_MELDS], ids=[c[0] for c in BOLIVIA_MELDS]
)
def test_bolivia_new_meld(text: str, expected: str | tuple[str, int, int]) -> None:
    state = bol(hands={0: [*text.split(), "10C", "JC"]}, melds={0: [["6C", "6D", "6S"]]})
    if isinstance(expected, str):
        rejects(state, f"meld {text}", expected)
        return
    act(state, f"meld {text}")
    m = state.melds[0][-1]
    kind, naturals, wilds = expected
    assert (m.kind.value, m.naturals, m.wilds) == (kind, naturals, wilds)
    assert faces(state, 0) == ["10C", "JC"]


def test_c10_wild_melds_only_in_bolivia() -> None:
    for name in ("classic", "samba"):
        state = pos(name, hands={0: ["2S", "2C", "JK", "10C", "JC"]}, melds={0: [K7[:3]]})
        rejects(state, "meld 2S 2C JK", "wild-only-meld")


def test_bolivia_wild_meld_grows_to_a_bolivia() -> None:
    state = bol(
        hands={0: ["2S", "2C", "JK", "JK", "KC", "9C", "9D"]},
        melds={0: [cards("2D 2H JK JK")]},
    )
    m = state.melds[0][0]
    assert m.kind is MeldKind.WILDS and m.label() == "wild cards"
    rejects(state, "add 0 KC", "wrong-rank")  # only wild cards go on it
    rejects(state, "add 0 2S 2C JK JK", "meld-too-large")  # eight cards
    act(state, "add 0 2S 2C JK")
    assert m.size == 7 and m.is_canasta(BOLIVIA) and m.is_closed(BOLIVIA)
    assert canasta_bonus(BOLIVIA, m) == 2000
    rejects(state, "add 0 JK", "meld-closed")
    s = scores(state)[0]
    assert (s.melds, s.canasta_bonus) == (4 * 20 + 3 * 50, 2000)


def test_bolivia_wild_meld_opens_the_team() -> None:
    state = bol(hands={0: ["2S", "2C", "JK", "9C", "8D"]})  # 90 >= 60
    assert state.minimums[0] == 60
    act(state, "meld 2S 2C JK")
    assert state.opened[0]


def test_bolivia_no_meld_over_seven() -> None:
    state = bol(
        hands={0: ["KC", "2C", "JH", "QC", "9C", "9D"]},
        melds={0: [K7, RUN_H, cards("QH QD QS QH QD QS")]},
    )
    rejects(state, "add 0 KC", "meld-closed")  # a group canasta is closed at seven
    rejects(state, "add 0 2C", "meld-closed")
    rejects(state, "add 1 JH", "meld-closed")  # the escalera too
    rejects(state, "add 2 QC 2C", "meld-too-large")
    act(state, "add 2 2C")  # six naturals and a wild card: a mixed canasta, then closed
    assert state.melds[0][2].is_closed(BOLIVIA)
    rejects(state, "add 2 QC", "meld-closed")


def test_bolivia_initial_meld_by_growing_a_wild_meld_laid_this_turn() -> None:
    # The dead-end guard sees that the two jokers left can go on the wild meld just laid: laying
    # the five wild cards at once (190) or in two steps both reach the minimum of 180.
    state = bol(hands={0: ["2C", "2D", "JK", "JK", "JK", *JUNK]}, minimums=[180, 60])
    act(state, "meld 2C 2D JK JK JK")
    state = bol(hands={0: ["2C", "2D", "JK", "JK", "JK", *JUNK]}, minimums=[180, 60])
    act(state, "meld 2C 2D JK", "add 0 JK JK")


def test_bolivia_two_canastas_of_one_rank() -> None:
    state = bol(
        hands={0: ["KC", "KD", "KH", "9C", "9D"]},
        melds={0: [K7, cards("KS KS 2D")]},
    )
    act(state, "meld KC KD KH")  # a third group of kings
    assert [m.size for m in groups_of(state, 0, "K")] == [7, 3, 3]


def test_bolivia_black_threes_any_time_and_closed() -> None:
    state = bol(hands={0: ["3C", "3S", "3C", "3S", "9C", "9D"]}, melds={0: [K7[:3]]})
    act(state, "meld 3C 3S 3C")  # not going out: allowed at any time in Bolivia
    m = state.melds[0][-1]
    assert m.kind is MeldKind.BLACK_THREES and not m.is_canasta(BOLIVIA)
    rejects(state, "add 1 3S", "black-three-meld-closed")
    assert faces(state, 0) == ["3S", "9C", "9D"]
    s = scores(state)[0]
    assert (s.melds, s.cards_in_hand) == (30 + 15, 200 + 20)  # the black three left costs 200
    # classic: only when going out
    classic = pos("classic", hands={0: ["3C", "3S", "3C", "9C", "9D"]}, melds={0: [K7]})
    rejects(classic, "meld 3C 3S 3C", "black-threes-only-going-out")


def test_bolivia_black_threes_count_toward_the_initial_meld() -> None:
    # 15 + 45 = 60: the black threes complete the initial meld, laid in either order
    hand = ["3C", "3S", "3C", "KH", "KD", "KS", "5C", "5D", "5H", "9C", "8D"]
    first = bol(hands={0: hand})
    act(first, "meld 3C 3S 3C", "meld KH KD KS")
    assert not first.opened[0] and first.t.initial_points == 45
    act(first, "meld 5C 5D 5H")
    assert first.opened[0] and first.t.initial_points == 60
    later = bol(hands={0: hand})
    act(later, "meld KH KD KS", "meld 5C 5D 5H", "meld 3C 3S 3C")
    assert later.opened[0]
    # without enough for the minimum, they cannot be laid before the team has opened
    short = bol(hands={0: ["3C", "3S", "3C", *JUNK]})
    rejects(short, "meld 3C 3S 3C", "initial-meld-unreachable")


# ====================================================================== Bolivia: the pile
def bolivia_pile(pile: list[str], hand: list[str] | None = None, **kw: Any) -> HandState:
    kw.setdefault("phase", "draw")
    kw.setdefault("melds", {0: [["KH", "KD", "KS"], ["4H", "5H", "6H"]]})
    return bol(
        hands={0: hand or ["KC", "KD", "JK", "9C", "8D", "QS"]},
        pile=pile,
        stock=["4C", "5C"],
        **kw,
    )


def test_bolivia_pile_onto_a_group() -> None:
    state = bolivia_pile(["9S", "KH"])
    assert not state.frozen_for(0)
    # a plain take-pile means the one meld KH fits: the 4-6H run is not one (KH does not
    # continue it), so the K group is meant
    plain = state.copy()
    act(plain, "take-pile")
    assert groups_of(plain, 0, "K")[0].size == 4
    act(state, "take-pile onto 0")
    assert groups_of(state, 0, "K")[0].size == 4
    assert faces(state, 0) == ["8D", "9C", "9S", "JK", "KC", "KD", "QS"]
    assert state.pile == [] and state.phase is Phase.PLAY


def test_bolivia_pile_with_a_natural_pair() -> None:
    state = bolivia_pile(["9S", "KH"])
    act(state, "take-pile KC KD")
    assert [m.size for m in groups_of(state, 0, "K")] == [3, 3]
    state = bolivia_pile(["9S", "KH"])
    act(state, "take-pile KC KD onto 0")
    assert [m.size for m in groups_of(state, 0, "K")] == [6]


def test_bolivia_pile_never_with_a_natural_and_a_wild() -> None:
    state = bolivia_pile(["9S", "KH"])
    rejects(state, "take-pile KC JK", "pile-take-cards")
    rejects(state, "take-pile KC JK onto 0", "pile-take-cards")


@pytest.mark.parametrize("top", ["JK", "2C", "3S"], ids=["C57-joker", "C57-two", "black-three"])
def test_c57_bolivia_wild_on_top_blocks(top: str) -> None:
    state = bolivia_pile(["KH", top], hand=["KC", "KD", "JK", "2C"])
    rejects(state, "take-pile onto 0", "pile-blocked")
    rejects(state, "take-pile KC KD", "pile-blocked")
    assert state.legal_actions() == [Draw()]


def test_bolivia_frozen_pile_needs_a_natural_pair() -> None:
    # a wild card inside the pile freezes it, as in classic (docs/spec/RULES.md is silent;
    # published rules)
    state = bolivia_pile(["2C", "9S", "KH"])
    assert state.pile_frozen
    rejects(state, "take-pile onto 0", "pile-frozen")
    act(state, "take-pile KC KD onto 0")
    assert "2C" in faces(state, 0)


def test_bolivia_pile_onto_a_sequence() -> None:
    """docs/spec/RULES.md §5: the pile is taken "by adding the top card to one of the team's
    melds", and a sequence is one: the top card goes on the sequence, the rest of the pile to the
    hand."""
    state = bolivia_pile(["9S", "7H"], hand=["9C", "8D", "QS"])
    assert "take-pile onto 1" in [str(a) for a in state.legal_actions()]
    act(state, "take-pile onto 1")
    seq = state.melds[0][1]
    assert seq.kind is MeldKind.SEQUENCE and seq.size == 4 and state.phase is Phase.PLAY
    assert faces(state, 0) == ["8D", "9C", "9S", "QS"]
    # a plain take-pile means the one meld it fits
    plain = bolivia_pile(["9S", "7H"], hand=["9C", "8D", "QS"])
    act(plain, "take-pile")
    assert plain.melds[0][1].size == 4
    # the card must extend it: another suit, a gap, or a wild card inside the pile refuse it
    for top in ("7S", "8H"):
        pile = bolivia_pile(["9S", top], hand=["9C", "8D", "QS"])
        rejects(pile, "take-pile onto 1", "not-a-sequence")
    frozen = bolivia_pile(["JK", "9S", "7H"], hand=["9C", "8D", "QS"])
    rejects(frozen, "take-pile onto 1", "pile-frozen")
    # a closed escalera takes nothing more
    full = bolivia_pile(
        ["9S", "JH"],
        hand=["9C", "8D", "QS"],
        melds={0: [["4H", "5H", "6H", "7H", "8H", "9H", "10H"]]},
    )
    rejects(full, "take-pile onto 0", "meld-closed")
    # Samba keeps its own rule: the top card alone extends a sequence (take-top), not the pile
    samba = pos(
        phase="draw",
        hands={0: ["9C", "8D", "QS"]},
        melds={0: [["4H", "5H", "6H"]]},
        pile=["9S", "7H"],
        stock=["4C", "5C"],
    )
    rejects(samba, "take-pile onto 0", "wrong-rank")
    act(samba, "take-top 0")
    assert len(samba.pile) == 1 and samba.melds[0][0].size == 4


def test_bolivia_pile_onto_which_group_is_asked_when_several_fit() -> None:
    state = bolivia_pile(["9S", "KC"], melds={0: [["KH", "KD", "KS"], ["KH", "KD", "KS"]]})
    rejects(state, "take-pile", "pile-take-cards")
    act(state, "take-pile onto 1")
    assert [m.size for m in state.melds[0]] == [3, 4]
    rejects(
        bolivia_pile(["9S", "KS"], hand=["9C", "8D", "QS"], melds={0: [K7]}),
        "take-pile onto 0",
        "meld-closed",
    )


def test_bolivia_a_position_from_a_seats_view_gives_the_first_canasta_bonus_once() -> None:
    """The bonus given (a canasta on the table): a position built from a seat's view (what a
    searching bot and a hint sample from) knows it, so the side's next lay brings no eleven cards
    a second time; nor does one from a view that does not say it (an older host's)."""
    state = bol(
        hands={0: ["QH", "QD", "QS", "9C", "8D"]},
        melds={0: [K7]},
        stock=cards("4C 5C 6C 7C 8C 9C 10C JC QC KC AC 4D 5D"),
    )
    view = seat_view(state, 0)
    assert view["canasta_bonus_given"] is True
    older = {k: v for k, v in view.items() if k != "canasta_bonus_given"}
    for shown in (view, older):
        sampled = position_from_dict(position_from_view(shown, BOLIVIA, random.Random(1)))
        stock = len(sampled.stock)
        act(sampled, "meld QH QD QS")
        assert len(sampled.hands[0]) == 2 and len(sampled.stock) == stock


def test_bolivia_first_canasta_bonus_refills_a_hand_the_lay_empties() -> None:
    """The first canasta of the hand brings eleven cards at once: a lay that makes it may leave
    the hand empty (nobody may discard the last card, but this is no discard)."""
    stock = ["4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC", "AC", "4D", "5D"]
    hand = ["KH", "KD", "KS", "KC", "KH", "KD", "KS", "9C"]
    state = pos("bolivia", hands={0: hand}, melds={0: [["QH", "QD", "QS"]]}, stock=stock)
    act(state, "meld KH KD KS KC KH KD KS")
    assert state.canasta_bonus_given and len(state.hands[0]) == 12
    # once the bonus is given, the same lay is refused: it would leave one card to discard
    again = pos(
        "bolivia",
        hands={0: hand},
        melds={0: [["QH", "QD", "QS"]]},
        stock=stock,
        canasta_bonus_given=True,
    )
    rejects(again, "meld KH KD KS KC KH KD KS", "no-going-out")


def test_bolivia_unopened_team_pile() -> None:
    state = bol(
        phase="draw",
        hands={0: ["KC", "KD", "JK", "AH", "AC", "9C", "8D"]},
        pile=["9S", "KH"],
        stock=["4C"],
    )
    assert state.frozen_for(0)
    rejects(state, "take-pile KC JK", "pile-frozen")
    act(state, "take-pile KC KD")  # 30: the aces bring 40 more
    assert state.phase is Phase.PILE_PENDING
    act(state, "meld AH AC JK")
    assert state.opened[0] and state.t.initial_points == 120


# ====================================================================== Bolivia: no going out
def test_bolivia_nobody_discards_his_last_card() -> None:
    state = bol(hands={0: ["9C"]}, melds={0: [K7, RUN_H]})
    rejects(state, "discard 9C", "no-going-out")
    assert not state.can_go_out()
    # (a player never reaches his play phase with one card: every lay keeps two cards)


@pytest.mark.parametrize(
    "melds",
    [
        pytest.param([RUN_H, K7], id="samba+canasta"),
        pytest.param([RUN_H, cards("4S 5S 6S 7S 8S 9S 10S")], id="two-escaleras"),
        pytest.param([K7, Q7_MIXED], id="two-canastas"),
        pytest.param([K7, cards("2C 2D 2H 2S JK JK JK")], id="canasta+bolivia"),
        pytest.param(
            [cards("2C 2D 2H 2S JK JK JK"), cards("2C 2D 2H 2S JK JK 2C")], id="2-bolivias"
        ),
    ],
)
def test_c68_bolivia_has_no_going_out(melds: list[list[str]]) -> None:
    # C68 lists which canastas let a side go out in Bolivia; docs/spec/RULES.md section 5 (and seed
    # 003: "nobody may discard his last card") has no going out at all, whatever the canastas.
    state = bol(hands={0: ["JC", "JD", "JH", "9C"]}, melds={0: melds})
    assert not state.can_go_out()
    rejects(state, "meld JC JD JH", "no-going-out")  # Samba would let this side go out
    samba = pos(hands={0: ["JC", "JD", "JH", "9C"]}, melds={0: [RUN_H, Q7_MIXED]})
    act(samba, "meld JC JD JH", "discard 9C")
    assert samba.end is not None and samba.end.reason is EndReason.WENT_OUT
    last = bol(hands={0: ["9C"]}, melds={0: melds})
    rejects(last, "discard 9C", "no-going-out")


def test_bolivia_no_lay_down_to_one_card() -> None:
    state = bol(hands={0: ["KC", "KD", "KH", "9C"]}, melds={0: [K7[:3]]})
    rejects(state, "meld KC KD KH", "no-going-out")
    rejects(state, "add 0 KC KD KH", "no-going-out")
    act(state, "add 0 KC KD")  # two cards stay: one to discard, one to keep
    act(state, "discard 9C")
    assert faces(state, 0) == ["KH"]
    # taking the pile so that one card would be left
    pile = bol(
        phase="draw",
        hands={0: ["KC", "KD"]},
        melds={0: [K7[:3]]},
        pile=["9S", "KH"],
        stock=["4C"],
    )
    rejects(pile, "take-pile KC KD", "no-going-out")
    ok = bol(
        phase="draw",
        hands={0: ["KC", "KD"]},
        melds={0: [K7[:3]]},
        pile=["8S", "9S", "KH"],
        stock=["4C"],
    )
    act(ok, "take-pile KC KD")
    assert faces(ok, 0) == ["8S", "9S"]


def test_bolivia_no_asking_to_go_out() -> None:
    state = bol(
        phase="draw",
        hands={0: ["QH", "QD", "8C"], 2: ["4D", "5D"]},
        melds={0: [K7, RUN_H]},
        stock=["5S", "QC"],
    )
    act(state, "draw")
    assert AskGoOut() not in state.legal_actions()
    rejects(state, "ask-go-out", "ask-not-allowed")


def test_bolivia_hand_runs_to_the_end_of_the_stock() -> None:
    state = bol(
        phase="draw",
        hands={0: ["9C", "8D"], 1: ["KC", "KD", "5S"], 2: ["QC", "QD", "4D"]},
        melds={1: [["KH", "KS", "KC"]]},
        stock=["7C", "6C", "5C"],  # three cards: a draw of two, then a draw of one
        pile=["4S"],
    )
    act(state, "draw", "discard 9C")
    assert len(state.stock) == 1
    act(state, "draw")  # seat 1 draws the last card: a complete draw of one
    assert state.stock == [] and faces(state, 1) == ["5S", "7C", "KC", "KD"]
    act(state, "discard 7C")  # he must discard
    # the next player may still take the pile (with a natural pair or onto a group) ...
    assert set(state.legal_actions()) == {Draw()}  # seat 2: no pair of sevens, no melds
    act(state, "draw")
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED
    assert state.end.went_out is None and state.end.going_out_bonus == 0
    assert [s.going_out for s in scores(state)] == [0, 0]


def test_bolivia_after_the_stock_the_pile_may_be_taken_but_never_must() -> None:
    state = bol(
        turn=1,
        phase="draw",
        hands={1: ["KC", "KD", "5S", "9H"], 2: ["9C", "9S", "4D", "5D"]},
        melds={0: [["AC", "AD", "AS"]], 1: [["KH", "KS", "KC"]]},
        pile=["9D", "KH"],
    )
    legal = state.legal_actions()
    assert Draw() in legal and TakePile((), 0) in legal  # not forced (classic would force it)
    act(state, "take-pile KC KD")
    act(state, "discard 9H")
    act(state, "take-pile 9C 9S")  # seat 2 takes it in turn
    act(state, "discard 4D")
    act(state, "draw")  # seat 3 cannot or will not take it: the hand ends
    assert state.end is not None and state.end.reason is EndReason.STOCK_EXHAUSTED


# ====================================================================== Bolivia: first canasta
def first_canasta(stock: list[str], **kw: Any) -> HandState:
    kw.setdefault("hands", {0: ["KC", "9C", "8D"]})
    kw.setdefault("melds", {0: [cards("KH KD KS KC KH KD")]})
    return pos("bolivia", stock=stock, canasta_bonus_given=False, **kw)


ELEVEN = cards("4C 5C 6C 7C 8C 9C 10C JC QC KC AC")


def test_bolivia_first_canasta_brings_eleven_cards() -> None:
    state = first_canasta(["5D", "4D", *ELEVEN[::-1]], hands={0: ["KC", "9D", "8D"]})
    # ELEVEN reversed: 4C..AC are the next eleven cards, 4C the first
    act(state, "add 0 KC")
    assert state.canasta_bonus_given
    assert faces(state, 0) == sorted(["9D", "8D", *ELEVEN])
    assert texts(state, state.stock) == ["4D", "5D"]
    # the cards may be melded at once: a sequence of clubs from them
    act(state, "meld 4C 5C 6C 7C 8C 9C 10C")
    assert state.melds[0][-1].is_canasta(BOLIVIA)
    assert len(state.hands[0]) == 6  # no second bonus
    act(state, "discard AC")


def test_bolivia_first_canasta_red_threes_laid_and_replaced() -> None:
    stock = ["5D", "4D", *ELEVEN[5:][::-1], "3H", *ELEVEN[:5][::-1]]
    state = first_canasta(stock, hands={0: ["KC", "9D", "8D"]})
    act(state, "add 0 KC")
    assert texts(state, state.red_threes[0]) == ["3H"]
    assert faces(state, 0) == sorted(["9D", "8D", *ELEVEN])
    assert texts(state, state.stock) == ["4D", "5D"]  # twelve cards came off the stock


def test_bolivia_first_canasta_short_stock() -> None:
    state = first_canasta(["4D", "5D", "6D"], hands={0: ["KC", "9D", "8D"]})
    act(state, "add 0 KC")
    assert faces(state, 0) == ["4D", "5D", "6D", "8D", "9D"] and state.stock == []


def test_bolivia_first_canasta_only_once_per_hand() -> None:
    state = first_canasta(
        [*ELEVEN, *ELEVEN[:5]],
        hands={0: ["KC", "9D", "8D"], 1: ["QC", "QD", "QH", "QS", "QC", "QD", "QH", "4S", "5S"]},
    )
    act(state, "add 0 KC", "discard 9D")
    assert len(state.stock) == 5
    act(state, "draw", "meld QC QD QH QS QC QD QH")  # the other side's first canasta
    assert state.canastas(1) == 1 and len(state.hands[1]) == 4  # no bonus: it was given
    assert len(state.stock) == 3


def test_bolivia_first_canasta_by_laying_seven_or_by_the_pile() -> None:
    # an escalera laid from the hand
    state = first_canasta(
        ELEVEN[::-1],
        hands={0: [*cards("4S 5S 6S 7S 8S 9S 10S"), "9D", "8D"]},
        melds={0: [["AC", "AD", "AS"]]},
    )
    act(state, "meld 4S 5S 6S 7S 8S 9S 10S")
    assert len(state.hands[0]) == 2 + 11
    # a group completed by taking the pile onto it
    state = first_canasta(ELEVEN[::-1], phase="draw", pile=["9H", "KS"], hands={0: ["9D", "8D"]})
    act(state, "take-pile onto 0")
    assert state.melds[0][0].size == 7
    assert faces(state, 0) == sorted(["9D", "8D", "9H", *ELEVEN])


def test_bolivia_first_canasta_goes_to_either_side() -> None:
    state = first_canasta(
        ELEVEN[::-1],
        turn=1,
        hands={1: ["QC", "QD", "QH", "QS", "QC", "QD", "QH", "4S", "5S"]},
        melds={0: [cards("KH KD KS KC KH KD")]},
    )
    act(state, "meld QC QD QH QS QC QD QH")
    assert faces(state, 1) == sorted(["4S", "5S", *ELEVEN])


# ====================================================================== Bolivia: scoring
def test_bolivia_canasta_bonuses() -> None:
    state = bol(
        melds={
            0: [
                cards("7C 7D 7H 7S 7C 7D 7H"),  # natural sevens 1500
                cards("7C 7D 7H 7S 7S 2D JK"),  # mixed sevens 1000
                K7,  # natural 500
                Q7_MIXED,  # mixed 300
                cards("8S 9S 10S JS QS KS AS"),  # escalera 1500
                cards("2C 2C 2D 2H 2S JK JK"),  # bolivia 2000
            ]
        },
        hands={0: ["3C", "3S", "9C"], 2: ["QH"]},
        red_threes={0: ["3H", "3D"]},
    )
    bonuses = [canasta_bonus(BOLIVIA, m) for m in state.melds[0]]
    assert bonuses == [1500, 1000, 500, 300, 1500, 2000]
    s = scores(state)[0]
    assert s.melds == 35 + (25 + 20 + 50) + 70 + (50 + 20 + 50) + 80 + (5 * 20 + 2 * 50)
    assert s.melds == 600
    assert s.canasta_bonus == 6800
    assert s.red_threes == 200
    assert s.cards_in_hand == 200 + 200 + 10 + 10
    assert s.going_out == 0
    assert s.total == 600 + 6800 + 200 - 420
    # the same melds in Samba rules would earn ordinary bonuses (for comparison)
    assert canasta_bonus(SAMBA, state.melds[0][0]) == 500


def test_bolivia_cards_left_in_hand() -> None:
    state = bol(hands={0: ["3C", "7D", "7H", "JK", "2C", "AS", "4D"], 1: ["3S", "KC"]})
    s = scores(state)
    assert s[0].cards_in_hand == 200 + 500 + 500 + 50 + 20 + 20 + 5
    assert s[1].cards_in_hand == 210
    assert CLASSIC.left_in_hand_cost(parse_face("7D")) == 5


SPECIALS = {
    "natural-sevens": cards("7C 7D 7H 7S 7C 7D 7H"),
    "escalera": RUN_H,
    "bolivia": cards("2C 2C 2D 2H 2S JK JK"),
    "mixed-sevens": cards("7C 7D 7H 7S 7S 2D JK"),
    "natural-kings": K7,
    "six-sevens": cards("7C 7D 7H 7S 7C 7D"),
}


@pytest.mark.parametrize(
    ("meld", "reds", "value"),
    [
        ("natural-sevens", 2, 200),
        ("escalera", 2, 200),
        ("bolivia", 2, 200),
        ("mixed-sevens", 2, -200),
        ("natural-kings", 2, -200),
        ("six-sevens", 2, -200),
        ("natural-sevens", 6, 2000),
        ("natural-kings", 6, -2000),
        ("escalera", 5, 500),
    ],
)
def test_bolivia_red_threes(meld: str, reds: int, value: int) -> None:
    red = ["3H", "3D", "3H", "3D", "3H", "3D"][:reds]
    state = bol(melds={0: [SPECIALS[meld]]}, red_threes={0: red[:3], 2: red[3:]})
    assert scores(state)[0].red_threes == value


@pytest.mark.parametrize(
    ("score", "minimum"),
    [
        (-500, 60),
        (0, 60),
        (3495, 60),
        (3500, 100),
        (6995, 100),
        (7000, 140),
        (10495, 140),
        (10500, 180),
        (20000, 180),
    ],
    ids=lambda v: str(v),
)
def test_bolivia_initial_minimum(score: int, minimum: int) -> None:
    # C25 gives Bolivia the Samba table (15/50/90/120/150): docs/spec/RULES.md section 5 (seed
    # 003) wins
    assert BOLIVIA.initial_minimum(score) == minimum
    assert Match(BOLIVIA, scores=[score, 0]).minimums() == [minimum, 60]


def test_bolivia_initial_meld_of_60() -> None:
    state = bol(hands={0: ["KH", "KD", "KS", "QH", "QD", "5C", "9C"]})
    rejects(state, "meld KH KD KS", "initial-meld-unreachable")  # 30 + nothing else
    state = bol(hands={0: ["KH", "KD", "KS", "QH", "QD", "QS", "5C", "9C"]})
    act(state, "meld KH KD KS", "meld QH QD QS")
    assert state.opened[0] and state.t.initial_points == 60


# ====================================================================== Bolivia: the match
def finished(rules: str, team0: list[str], team1: list[str]) -> HandState:
    return pos(
        rules,
        phase="over",
        melds={0: [team0], 1: [team1]},
        canasta_bonus_given=True,
        end={"reason": "stock-exhausted", "went_out": None, "going_out_bonus": 0},
    )


def test_bolivia_match_is_four_hands() -> None:
    match = Match(BOLIVIA, first_dealer=1)
    dealers = []
    for k in range(4):
        dealers.append(match.dealer)
        assert match.result is None
        # team 0 far ahead after one hand: the match still goes on to four hands
        big = (
            finished("bolivia", K7, ["QC", "QD", "QS"])
            if k == 0
            else finished("bolivia", ["AC", "AD", "AS"], ["QC", "QD", "QS"])
        )
        match.record_hand(big)
    assert dealers == [1, 2, 3, 0]
    result = match.result
    assert result is not None and result.winner == 0 and result.hands == 4
    assert result.scores == (570 + 3 * 60, 4 * 30)
    with pytest.raises(MatchOver):
        match.new_hand(list(range(162)))


def test_bolivia_match_tie_is_a_draw() -> None:
    match = Match(BOLIVIA, scores=[1000, 1000], hand_scores=[[], [], [], []])
    result = match.result
    assert result is not None and result.winner is None
    short = Match(BOLIVIA, scores=[50000, 0], hand_scores=[[], [], []])
    assert short.result is None  # no target: only the number of hands ends it


# ====================================================================== soak
SOAKS = [
    ("samba", 12, "random"),
    ("samba", 8, "greedy,random"),
    ("samba-2p", 8, "random"),
    ("samba-3p", 8, "random"),
    ("bolivia", 12, "random"),
    ("bolivia", 8, "greedy,random"),
]


@pytest.mark.parametrize(("name", "hands", "kinds"), SOAKS)
def test_soak_random_play(name: str, hands: int, kinds: str) -> None:
    """Random legal play (about twenty hands of each variant): every card accounted for after
    every action, never a position without a legal action, and the variant's invariants."""
    rules = preset(name)
    rng = random.Random(f"soak-{name}-{kinds}")
    bot_kinds = kinds.split(",")
    bots = [
        make_bot(bot_kinds[i % len(bot_kinds)], random.Random(rng.getrandbits(32)))
        for i in range(rules.players)
    ]
    match = Match(rules)
    seen: dict[str, int] = {"went-out": 0, "bonus": 0, "sequences": 0}

    def check(s: HandState, seat: int, action: Any) -> None:
        assert cards_in_play(s) == rules.deck_size
        assert s.is_over or s.legal_actions()
        for team in s.melds:
            for m in team:
                assert not rules.max_meld_size or m.size <= rules.max_meld_size
                if m.kind is MeldKind.SEQUENCE:
                    assert m.size <= rules.sequence_max and m.wilds == 0
                if m.kind is MeldKind.GROUP:
                    assert m.wilds <= 2 and m.naturals >= 2

    for _ in range(hands):
        if match.result is not None:
            match = Match(rules)
        order = list(range(rules.deck_size))
        rng.shuffle(order)
        state = match.new_hand(order)
        play_hand(state, bots, on_action=check, max_actions=5000)
        assert state.end is not None
        if state.end.went_out is not None:
            assert rules.going_out_allowed
            assert state.canastas(rules.team_of(state.end.went_out)) >= 2
            assert state.end.going_out_bonus == 200
            seen["went-out"] += 1
        if rules.first_canasta_bonus_cards:
            any_canasta = any(state.canastas(t) for t in range(rules.teams))
            assert state.canasta_bonus_given == any_canasta
            seen["bonus"] += state.canasta_bonus_given
        seen["sequences"] += sum(m.kind is MeldKind.SEQUENCE for team in state.melds for m in team)
        match.record_hand(state)
    assert seen["sequences"] > 0
    if name == "bolivia":
        assert seen["went-out"] == 0 and seen["bonus"] > 0


# --------------------------------------------------------------------------- merging groups
def _samba_with_two_king_groups(
    second: list[str], first: tuple[str, ...] = ("KH", "KD", "KS", "KC", "2C")
) -> HandState:
    return position_from_dict(
        {
            "rules": "samba",
            "turn": 0,
            "phase": "play",
            "hands": [["4C", "5C", "9D"], [], [], []],
            "melds": [
                [
                    {"cards": list(first), "turn": -1, "seat": 0},
                    {"cards": second, "turn": -1, "seat": 2},
                ],
                [],
            ],
            "opened": [True, True],
            "turn_state": {"drew": "stock"},
        }
    )


def test_samba_two_groups_of_a_rank_merge_into_a_canasta() -> None:
    state = _samba_with_two_king_groups(["KH", "KD", "KS"])
    assert "merge 0 1" in [str(a) for a in state.legal_actions()]
    state.apply(parse_action("merge 0 1"))
    (kings,) = state.melds[0]
    assert kings.size == 8 and kings.naturals == 7 and kings.wilds == 1
    assert kings.is_canasta(state.rules) and state.canastas(0) == 1


def test_samba_merge_refuses_too_many_wilds_and_other_ranks_and_classic() -> None:
    state = _samba_with_two_king_groups(["KH", "KD", "2S"], ("KH", "KD", "KS", "KC", "2C", "2D"))
    with pytest.raises(IllegalAction) as err:
        state.apply(parse_action("merge 0 1"))  # 6 naturals and 3 wild cards: at most 2
    assert err.value.code == "too-many-wilds"
    assert len(state.melds[0]) == 2, "state unchanged"
    state = _samba_with_two_king_groups(["QH", "QD", "QS"])
    with pytest.raises(IllegalAction) as err:
        state.apply(parse_action("merge 0 1"))
    assert err.value.code == "wrong-rank"
    classic = position_from_dict(
        {
            "rules": "classic",
            "turn": 0,
            "phase": "play",
            "hands": [["4C", "5C", "9D"], [], [], []],
            "melds": [[{"cards": ["KH", "KD", "KS"], "turn": -1, "seat": 0}], []],
            "turn_state": {"drew": "stock"},
        }
    )
    with pytest.raises(IllegalAction) as err:
        classic.apply(parse_action("merge 0 0"))
    assert err.value.code == "not-in-this-game"
