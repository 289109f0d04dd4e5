"""May I?: melds, contracts, card values, the rule set and the action texts (worked examples)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from canasta_net.cards import parse_face, parse_faces
from canasta_net.errors import ActionParseError, IllegalAction
from canasta_net.mayi import (
    MAY_I,
    AddToMeld,
    Allow,
    Contract,
    Deny,
    Discard,
    Draw,
    MayI,
    MayIAction,
    MayIRules,
    MayIRulesError,
    Meld,
    Pass,
    TakeDiscard,
    parse_action,
    preset,
)
from canasta_net.mayi.contract import canonical_groups, check_contract, contract_lay_downs
from canasta_net.mayi.melds import MeldKind, new_meld, shape_of
from canasta_net.mayi.scoring import hand_value

F = parse_faces


def code_of(rules: MayIRules, text: str) -> str:
    with pytest.raises(IllegalAction) as e:
        shape_of(rules, F(text))
    return e.value.code


# ---------------------------------------------------------------- sets and sequences
@pytest.mark.parametrize(
    "cards",
    ["7H 7D 7S", "7H 7H 7S", "KC KD KH KS KC KD KH KS", "AC AD AH AS"],
)
def test_sets(cards: str) -> None:
    shape = shape_of(MAY_I, F(cards))
    assert shape.kind is MeldKind.SET and shape.rank == F(cards)[0] % 13


@pytest.mark.parametrize(
    ("cards", "low", "high"),
    [
        ("4C 5C 6C 7C", 3, 6),
        ("AH 2H 3H 4H", 0, 3),  # ace low
        ("JS QS KS AS", 10, 13),  # ace high
        ("KS AS QS JS 10S", 9, 13),  # any order
        ("AD 2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD", 0, 12),  # the whole suit
    ],
)
def test_sequences(cards: str, low: int, high: int) -> None:
    shape = shape_of(MAY_I, F(cards))
    assert (shape.kind, shape.low, shape.high) == (MeldKind.SEQUENCE, low, high)


@pytest.mark.parametrize(
    ("cards", "code"),
    [
        ("7H 7D", "set-too-small"),
        ("7H", "set-too-small"),
        ("QC KC AC 2C", "not-a-sequence"),  # no wrap around the ace
        ("KC AC 2C 3C", "not-a-sequence"),
        ("4C 5C 7C 8C", "not-a-sequence"),  # gap
        ("4C 5C 5C 6C 7C", "not-a-sequence"),  # a rank twice
        ("4C 5C 6C", "sequence-too-short"),
        ("QH KH AH", "sequence-too-short"),
        ("4C 5C 6D 7C", "not-a-meld"),  # two suits
        ("7H 7D 8H", "not-a-meld"),
        ("", "not-a-meld"),
    ],
)
def test_not_melds(cards: str, code: str) -> None:
    assert code_of(MAY_I, cards) == code


def test_set_larger_than_allowed() -> None:
    three_decks = MAY_I.with_changes(decks=3)
    assert code_of(three_decks, "5C 5C 5C 5D 5D 5D 5H 5H 5H") == "set-too-large"


def test_adding_to_sequences_ace_high_and_low_never_wraps() -> None:
    rules = MAY_I
    low = new_meld(0, shape_of(rules, F("2H 3H 4H 5H")), range(4), F("2H 3H 4H 5H"))
    assert low.fits(rules, parse_face("AH")) and low.fits(rules, parse_face("6H"))
    assert not low.fits(rules, parse_face("7H")) and not low.fits(rules, parse_face("6S"))
    grown = low.with_card(rules, 99, parse_face("AH"))
    assert grown.faces == F("AH 2H 3H 4H 5H") and not grown.fits(rules, parse_face("KH"))
    high = new_meld(0, shape_of(rules, F("JS QS KS AS")), range(4), F("JS QS KS AS"))
    assert high.fits(rules, parse_face("10S"))
    assert not high.fits(rules, parse_face("2S")), "Q-K-A-2 would wrap"
    assert not high.fits(rules, parse_face("AS"))
    with pytest.raises(IllegalAction) as e:
        high.with_card(rules, 99, parse_face("2S"))
    assert e.value.code == "does-not-fit"


def test_sequence_of_thirteen_is_full_and_shown_ace_to_king() -> None:
    rules = MAY_I
    faces = F("3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC")  # 3 to ace, 12 cards
    meld = new_meld(1, shape_of(rules, faces), range(12), faces)
    full = meld.with_card(rules, 50, parse_face("2C"))
    assert full.size == 13 and full.faces == F("AC 2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC")
    with pytest.raises(IllegalAction) as e:
        full.with_card(rules, 51, parse_face("AC"))
    assert e.value.code == "meld-full"


def test_set_holds_at_most_eight() -> None:
    rules = MAY_I
    faces = F("9C 9C 9D 9D 9H 9H 9S")
    meld = new_meld(0, shape_of(rules, faces), range(7), faces)
    eight = meld.with_card(rules, 7, parse_face("9S"))
    assert eight.faces == F("9C 9C 9D 9D 9H 9H 9S 9S")
    with pytest.raises(IllegalAction) as e:
        eight.placement(MAY_I.with_changes(decks=3), parse_face("9S"))
    assert e.value.code == "meld-full"
    with pytest.raises(IllegalAction) as e:
        meld.placement(rules, parse_face("8S"))
    assert e.value.code == "does-not-fit"


# ---------------------------------------------------------------- contracts
def groups(text: str) -> tuple[tuple[int, ...], ...]:
    return tuple(F(g) for g in text.split("|"))


@pytest.mark.parametrize(
    ("deal", "lay", "code"),
    [
        (0, "7H 7D 7S | KC KD KH", None),
        (0, "7H 7D 7S 7C | KC KD KH", None),  # a set may be longer than three
        (0, "7H 7D 7S", "contract-not-met"),  # too few
        (0, "7H 7D 7S | KC KD KH | 4C 4D 4H", "contract-not-met"),  # too many
        (0, "7H 7D 7S | 7C 7D 7H", "contract-duplicate-rank"),
        (0, "7H 7D 7S | 4C 5C 6C 7C", "contract-not-met"),  # a sequence is not a set
        (0, "7H 7D | KC KD KH", "set-too-small"),
        (1, "7H 7D 7S | 4C 5C 6C 7C", None),
        (1, "4C 5C 6C 7C | 7H 7D 7S", None),  # any order
        (1, "7H 7D 7S | KC KD KH", "contract-not-met"),
        (1, "7H 7D 7S | 4C 5C 6C", "sequence-too-short"),
        (2, "AH 2H 3H 4H | JS QS KS AS", None),
        (2, "4C 5C 6C 7C | 9C 10C JC QC", "contract-duplicate-suit"),
        (2, "4C 5C 6C 7C | QD KD AD 2D", "not-a-sequence"),
        (2, "4C 5C 6C 7C 8C 9C 10C JC", "contract-not-met"),
        (3, "2C 2D 2H | 5S 5S 5H | QC QD QD", None),
        (3, "2C 2D 2H | 5S 5S 5H", "contract-not-met"),
        (4, "2C 2D 2H | 5S 5S 5H | 6D 7D 8D 9D", None),
        (4, "2C 2D 2H | 5S 5S 5H | 6D 7D 8D 9D | 6H 7H 8H 9H", "contract-not-met"),
        (4, "2C 2D 2H | 2S 2S 2H | 6D 7D 8D 9D", "contract-duplicate-rank"),
    ],
)
def test_contracts(deal: int, lay: str, code: str | None) -> None:
    contract = MAY_I.contract(deal)
    if code is None:
        check_contract(MAY_I, contract, groups(lay))
    else:
        with pytest.raises(IllegalAction) as e:
            check_contract(MAY_I, contract, groups(lay))
        assert e.value.code == code


def test_the_five_contracts() -> None:
    assert [(c.sets, c.sequences, c.discard_out) for c in MAY_I.contracts] == [
        (2, 0, True),
        (1, 1, True),
        (0, 2, True),
        (3, 0, True),
        (2, 1, False),
    ]
    assert [str(c) for c in MAY_I.contracts] == [
        "2 sets",
        "1 set + 1 sequence",
        "2 sequences",
        "3 sets",
        "2 sets + 1 sequence",
    ]


def test_listing_lay_downs_is_complete_and_canonical() -> None:
    hand = F("7H 7D 7S 7C 4C 5C 6C KD")
    lays = list(contract_lay_downs(MAY_I, MAY_I.contract(1), hand))
    texts = {str(Meld(g)) for g in lays}
    assert texts == {
        "meld 7D 7H 7S | 4C 5C 6C 7C",  # the 7C goes to the sequence
    }
    deal_one = list(contract_lay_downs(MAY_I, Contract(2, 0), F("7H 7D 7S 7C KD KD KS 2C")))
    assert {str(Meld(g)) for g in deal_one} == {
        "meld 7C 7D 7H | KD KD KS",
        "meld 7C 7D 7S | KD KD KS",
        "meld 7C 7H 7S | KD KD KS",
        "meld 7D 7H 7S | KD KD KS",
        "meld 7C 7D 7H 7S | KD KD KS",
    }
    assert canonical_groups(MAY_I, groups("KS KD KD | 7S 7C 7H")) == groups("7C 7H 7S | KD KD KS")


def test_listing_whole_suit_once() -> None:
    hand = F("AD 2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD")
    runs = {g for lay in contract_lay_downs(MAY_I, Contract(0, 1), hand) for g in lay}
    assert F("AD 2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD") in runs
    assert F("JD QD KD AD") in runs and F("AD 2D 3D 4D") in runs
    assert len(runs) == len(set(runs))
    # the 13 cards ace-low and 2-to-ace are the same cards: listed once
    assert sum(1 for g in runs if len(g) == 13) == 1


# ---------------------------------------------------------------- values and rules
def test_card_values() -> None:
    assert hand_value(MAY_I, F("AS")) == 15
    assert hand_value(MAY_I, F("KS QH JD 10C")) == 40
    assert hand_value(MAY_I, F("2C 3C 4C 5C 6C 7C 8C 9C")) == 44


def test_rules_round_trip_and_presets() -> None:
    assert MayIRules.from_dict(MAY_I.to_dict()) == MAY_I
    five = preset("may-i", 5)
    assert five.players == 5 and MayIRules.from_dict(five.to_dict()) == five
    assert MAY_I.deck_size == 104 and MAY_I.hand_size == 10 and MAY_I.buy_limit == 3
    for bad in ({"players": 2}, {"players": 6}, {"buy_limit": -1}, {"nonsense": 1}):
        with pytest.raises(MayIRulesError):
            MayIRules.from_dict({**MAY_I.to_dict(), **bad})
    with pytest.raises(MayIRulesError):
        preset("canasta")


# ---------------------------------------------------------------- action texts
@pytest.mark.parametrize(
    "text",
    [
        "draw",
        "take-discard 9D",
        "meld 7H 7D 7S | 4C 5C 6C 7C",
        "meld 7H 7D 7S",
        "add 2.0 8C",
        "add 0.11 AS",
        "discard 10D",
        "may-i 9D",
        "pass",
        "allow",
        "deny QS",
    ],
)
def test_action_texts_round_trip(text: str) -> None:
    action = parse_action(text)
    assert str(action) == text
    assert parse_action(text.upper()) == action


def test_action_parsing_is_lenient_about_spacing_but_strict_about_form() -> None:
    assert parse_action("  meld 7H 7D 7S|KC KD KH ") == Meld(groups("7H 7D 7S | KC KD KH"))
    assert parse_action("take-discard TD") == TakeDiscard(parse_face("10D"))
    for bad in ("", "jump", "add 2 8C", "add 2.0", "meld", "meld 7H | ", "discard", "may-i"):
        with pytest.raises(ActionParseError):
            parse_action(bad)
    with pytest.raises(ActionParseError):
        parse_action("discard 1Z")


faces = st.integers(0, 51)
actions_strategy: st.SearchStrategy[MayIAction] = st.one_of(
    st.just(Draw()),
    st.just(Pass()),
    st.just(Allow()),
    st.builds(TakeDiscard, faces),
    st.builds(Discard, faces),
    st.builds(MayI, faces),
    st.builds(Deny, faces),
    st.builds(AddToMeld, st.integers(0, 4), st.integers(0, 20), faces),
    st.builds(
        Meld,
        st.lists(st.lists(faces, min_size=1, max_size=8).map(tuple), min_size=1, max_size=3).map(
            tuple
        ),
    ),
)


@given(actions_strategy)
def test_action_text_round_trips(action: MayIAction) -> None:
    assert parse_action(str(action)) == action
    assert parse_action(str(action).lower()) == action


def test_the_upcard_knob_reads_from_a_log_and_is_checked() -> None:
    """The preset deals no upcard (seed 003); a rule set written before the knob existed (no
    ``upcard``) dealt one, and a malformed value is refused."""
    from canasta_net.mayi.rules import MayIRules, MayIRulesError

    preset_rules = MayIRules().to_dict()
    assert preset_rules["upcard"] is False
    assert MayIRules.from_dict(preset_rules) == MayIRules()
    older = {k: v for k, v in preset_rules.items() if k != "upcard"}
    assert MayIRules.from_dict(older).upcard is True
    with pytest.raises(MayIRulesError):
        MayIRules.from_dict({**preset_rules, "upcard": "yes"})
