"""Invariants of the rules engine under random play, for every preset.

- every card is accounted for at every step;
- a position that is not over always has a legal action;
- every listed action applies, and a sampled unlisted action is refused unless it is equivalent
  (same rank and counts) to a listed one; a refused action leaves the state unchanged;
- positions round-trip through their dictionary form;
- a seat's view never shows another seat's hidden card.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canasta_net.canasta.actions import (
    Action,
    AddToMeld,
    AskGoOut,
    Discard,
    Draw,
    Meld,
    MergeMelds,
    TakePile,
    TakeTop,
    parse_action,
)
from canasta_net.canasta.position import position_from_dict, position_to_dict, seat_view
from canasta_net.canasta.rules import PRESETS, preset
from canasta_net.canasta.state import HandState, Phase
from canasta_net.cards import JOKER, face_text, is_red_three, is_wild
from canasta_net.errors import IllegalAction
from canasta_net.simulate import cards_in_play

VARIANTS = sorted(PRESETS)


def _random_candidate(state: HandState, rng: random.Random) -> Action:
    """An arbitrary, usually illegal, action built from the hand and random faces."""
    hand = state.hand_faces(state.turn) or [JOKER]
    pick = lambda k: tuple(rng.choice(hand) for _ in range(k))  # noqa: E731
    kind = rng.randrange(9)
    if kind == 7:
        return MergeMelds(rng.randrange(4), rng.randrange(4))
    if kind == 8:
        return TakeTop(rng.randrange(4))
    if kind == 0:
        return Draw()
    if kind == 1:
        return TakePile(pick(rng.choice((0, 2, 2, 3))))
    if kind == 2:
        return Meld(pick(rng.randint(2, 5)))
    if kind == 3:
        return AddToMeld(rng.randrange(4), pick(rng.randint(1, 3)))
    if kind == 4:
        return Discard(rng.randrange(53))
    if kind == 5:
        return AskGoOut()
    return Discard(rng.choice(hand))


def _check_step(state: HandState, rng: random.Random, deep: bool) -> list[Action]:
    assert cards_in_play(state) == state.deck.size
    legal = state.legal_actions()
    assert legal, f"no legal action in a {state.phase} position"
    assert len({str(a) for a in legal}) == len(legal), "duplicates in the legal list"
    listed = {str(a) for a in legal}
    if deep:
        for action in legal:
            trial = state.copy()
            trial.apply(action)
            assert cards_in_play(trial) == state.deck.size
    before = json.dumps(position_to_dict(state), sort_keys=True)
    for _ in range(8 if deep else 2):
        candidate = _random_candidate(state, rng)
        equivalent = str(state.normalize(candidate)) in listed
        trial = state.copy()
        try:
            trial.apply(candidate)
        except IllegalAction as e:
            assert e.code, "every refusal has a reason code"
            assert not equivalent, f"{candidate} refused ({e.code}) but listed as legal"
            assert json.dumps(position_to_dict(trial), sort_keys=True) == before
        else:
            assert equivalent, f"{candidate} applied but is not listed"
    return legal


def _check_views(state: HandState) -> None:
    public: Counter[str] = Counter()
    for team in state.melds:
        for m in team:
            public.update(face_text(f) for f in m.faces)
    for reds in state.red_threes:
        public.update(state.faces_text(reds))
    if state.pile_top is not None:
        public[face_text(state.pile_top)] += 1
    for known in state.shown:  # taken with the pile, in everyone's sight
        public.update(face_text(f) for f in known)
    for seat in range(state.players):
        view = seat_view(state, seat)
        assert Counter(view["hand"]) == Counter(state.faces_text(state.hands[seat]))
        seen: Counter[str] = Counter()
        _collect_cards(view, seen)
        allowed = public + Counter(view["hand"])
        assert not seen - allowed, f"seat {seat} sees hidden cards {seen - allowed}"
        assert view["hand_sizes"] == [len(h) for h in state.hands]


def _collect_cards(value: object, out: Counter[str]) -> None:
    if isinstance(value, str):
        try:
            from canasta_net.cards import parse_face

            parse_face(value)
        except ValueError:
            return
        out[value] += 1
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in ("variant", "phase", "label", "canasta", "reason", "drew"):
                _collect_cards(v, out)
    elif isinstance(value, list):
        for v in value:
            _collect_cards(v, out)


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_play_soak(variant: str) -> None:
    rules = preset(variant)
    rng = random.Random(f"soak-{variant}")
    # random hands per variant (every variant is played): classic, the one most rules share,
    # gets twice as many
    hands = 20 if variant == "classic" else 10
    for hand_no in range(hands):
        order = list(range(rules.deck_size))
        rng.shuffle(order)
        state = HandState(rules, order, dealer=hand_no)
        steps = 0
        while not state.is_over:
            deep = steps % 7 == 0
            legal = _check_step(state, rng, deep)
            if deep:
                _check_views(state)
                again = position_from_dict(position_to_dict(state))
                assert position_to_dict(again) == position_to_dict(state)
                assert [str(a) for a in again.legal_actions()] == [str(a) for a in legal]
            state.apply(rng.choice(legal))
            steps += 1
            assert steps < 5000
        assert cards_in_play(state) == state.deck.size
        assert state.legal_actions() == []
        _check_views(state)


@settings(max_examples=100, deadline=None)
@given(variant=st.sampled_from(VARIANTS), shuffle=st.randoms(), dealer=st.integers(0, 5))
def test_deal_invariants(variant: str, shuffle: random.Random, dealer: int) -> None:
    rules = preset(variant)
    order = list(range(rules.deck_size))
    shuffle.shuffle(order)
    state = HandState(rules, order, dealer)
    assert cards_in_play(state) == rules.deck_size
    faces = state.faces
    for seat, hand in enumerate(state.hands):
        assert not any(is_red_three(f) for f in faces(hand)), "red threes are laid at the deal"
        assert len(hand) == rules.hand_size or not state.stock
        assert len(hand) + len(state.red_threes[seat]) >= rules.hand_size
    top = state.pile_top
    assert top is not None and not is_wild(top) and not is_red_three(top)
    turned = faces(state.pile[:-1])
    assert state.pile_frozen == any(is_wild(f) or is_red_three(f) for f in turned)
    assert state.turn == (state.dealer + 1) % rules.players
    assert state.phase is Phase.DRAW


actions_strategy = st.one_of(
    st.just(Draw()),
    st.just(AskGoOut()),
    st.builds(TakePile, st.lists(st.integers(0, 52), max_size=3).map(tuple)),
    st.builds(Meld, st.lists(st.integers(0, 52), min_size=1, max_size=8).map(tuple)),
    st.builds(AddToMeld, st.integers(0, 20), st.lists(st.integers(0, 52), min_size=1).map(tuple)),
    st.builds(Discard, st.integers(0, 52)),
    st.builds(MergeMelds, st.integers(0, 20), st.integers(0, 20)),
    st.builds(TakeTop, st.integers(0, 20)),
    st.builds(
        TakePile,
        st.lists(st.integers(0, 52), max_size=3).map(tuple),
        st.one_of(st.none(), st.integers(0, 20)),
    ),
)


@given(actions_strategy)
def test_action_text_round_trips(action: Action) -> None:
    assert parse_action(str(action)) == action
    assert parse_action(str(action).upper()) == action
