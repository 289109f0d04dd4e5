"""``apply`` makes a move ``legal_actions`` listed for the same position without checking it again.

The listing is kept with the position's key (``HandState._listing_key``); ``apply`` trusts the
very objects listed while the key is unchanged, and checks every other action in full. These
tests compare the trusted path with the full check on positions of every variant, and show that
an action from elsewhere, an action listed for another position, or one added to the returned
list is checked in full.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rulecases import short_position
from test_engine_fast_paths import _snapshot

from canasta_net.canasta import state as state_module
from canasta_net.canasta.actions import Action, AskGoOut, Discard, Meld
from canasta_net.canasta.bots import choose_for, make_bot
from canasta_net.canasta.position import position_from_dict, position_from_view, seat_view
from canasta_net.canasta.rules import PRESETS, preset
from canasta_net.canasta.state import HandState
from canasta_net.cards import parse_face
from canasta_net.errors import IllegalAction

VARIANTS = sorted(PRESETS)
PLANNER = ("can_lay_out", "best_lay_value", "lay_out_value")


@contextmanager
def _no_planner() -> Iterator[None]:
    """The engine's look-ahead refuses to run: a trusted move must not need it."""

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("the planner ran for a listed move")

    with _patched(dict.fromkeys(PLANNER, refuse)):
        yield


@contextmanager
def _patched(functions: dict[str, Callable[..., object]]) -> Iterator[None]:
    with ExitStack() as stack:
        for name, function in functions.items():
            stack.enter_context(mock.patch.object(state_module, name, function))
        yield


@contextmanager
def _planner_calls() -> Iterator[list[str]]:
    """The names of the look-ahead functions the engine calls meanwhile."""
    calls: list[str] = []
    patches: dict[str, Callable[..., object]] = {}
    for name in PLANNER:
        real = getattr(state_module, name)

        def spy(*args: object, _real: object = real, _name: str = name, **kwargs: object) -> object:
            calls.append(_name)
            return _real(*args, **kwargs)  # type: ignore[operator]

        patches[name] = spy
    with _patched(patches):
        yield calls


def _outcome(state: HandState, action: Action) -> object:
    """What applying ``action`` gives: the refusal's code, or the position it leads to."""
    try:
        state.apply(action)
    except IllegalAction as e:
        return ("refused", e.code)
    return _snapshot(state)


def _elsewhere(action: Action) -> Action:
    """An equal action that is not the listed object (as a peer's parsed move is)."""
    other = dataclasses.replace(action)
    assert other == action and other is not action
    return other


def _compare_every_listed_move(state: HandState) -> None:
    """Each listed move, made trusted in a copy (which keeps the listing), leads where the same
    move from elsewhere, checked in full, leads; and the trusted one never needs the planner."""
    legal = state.legal_actions()
    for action in legal:
        trusted = state.copy()
        with _no_planner():
            trusted.apply(action)
        assert _snapshot(trusted) == _outcome(state.copy(), _elsewhere(action)), action


@settings(max_examples=25, deadline=None)
@given(
    variant=st.sampled_from(VARIANTS),
    seed=st.integers(0, 2**32 - 1),
    kinds=st.lists(st.sampled_from(["random", "greedy", "heuristic"]), min_size=4, max_size=4),
    steps=st.integers(1, 200),
)
def test_a_listed_move_leads_where_the_checked_move_leads(
    variant: str, seed: int, kinds: list[str], steps: int
) -> None:
    """Positions of hands played by a mix of bots (they open, meld, ask and go out), and every
    few steps a position the seat to move could be in: every listed move, trusted, leads to the
    same position as the equal move checked in full. The hand itself is played with trusted
    moves beside a twin that gets equal moves from elsewhere: the two stay the same."""
    rules = preset(variant)
    rng = random.Random(seed)
    order = list(range(rules.deck_size))
    rng.shuffle(order)
    dealer = rng.randrange(rules.players)
    state = HandState(rules, order, dealer=dealer)
    twin = HandState(rules, order, dealer=dealer)
    bots = [make_bot(kinds[s % len(kinds)], random.Random(seed + s)) for s in range(rules.players)]
    for step in range(steps):
        if state.is_over:
            break
        _compare_every_listed_move(state)
        if step % 7 == 0:
            view = seat_view(state, state.to_move)
            _compare_every_listed_move(position_from_dict(position_from_view(view, rules, rng)))
        action = choose_for(bots[state.to_move], state)
        listed = state.legal_actions()
        action = next((a for a in listed if a == action), action)  # the listed object
        state.apply(action)
        twin.apply(_elsewhere(action))
        assert _snapshot(state) == _snapshot(twin), f"step {step}"


@pytest.mark.parametrize("variant", VARIANTS)
def test_listed_moves_of_a_random_hand_lead_where_checked_ones_lead(variant: str) -> None:
    """Every listed move of every position of one random hand of each variant."""
    rules = preset(variant)
    rng = random.Random(f"listed-{variant}")
    order = list(range(rules.deck_size))
    rng.shuffle(order)
    state = HandState(rules, order, dealer=0)
    while not state.is_over:
        _compare_every_listed_move(state)
        state.apply(rng.choice(state.legal_actions()))


# ---------------------------------------------------------------- what is not trusted
def _unopened() -> HandState:
    """Classic, the team not opened (minimum 50) after a stock draw: three kings (30) are legal
    toward the initial meld while the aces and the two still reach it."""
    return short_position(
        "classic",
        hands={0: ["KH", "KS", "KD", "AH", "AS", "2C", "5C", "7D", "9S"]},
        stock=["4C", "4D", "4H"],
        pile=["6C"],
        turn_state={"drew": "stock"},
    )


KINGS = Meld(tuple(sorted(parse_face(f) for f in ("KH", "KS", "KD"))))


def test_the_kings_toward_the_initial_meld_are_listed_and_need_the_planner() -> None:
    state = _unopened()
    assert KINGS in state.legal_actions()
    with _planner_calls() as calls:
        state.copy().apply(_elsewhere(KINGS))
    assert calls, "the full check of the kings asks the planner"


def test_a_move_equal_to_a_listed_one_from_elsewhere_is_checked_in_full() -> None:
    """A peer's move (parsed: equal to a listed one, not the same object) gets the full check."""
    state = _unopened()
    state.legal_actions()
    with _planner_calls() as calls:
        state.apply(_elsewhere(KINGS))
    assert calls


def test_a_listed_move_is_trusted() -> None:
    state = _unopened()
    listed = next(a for a in state.legal_actions() if a == KINGS)
    with _no_planner():
        state.apply(listed)


def _replace_in_hand(state: HandState, old: list[str], new: list[str]) -> None:
    """Swap cards of the hand to move for others (as the blind deal's stand-ins are swapped)."""
    hand = state.hands[state.turn]
    for o, n in zip(old, new, strict=True):
        card = next(c for c in hand if state.deck.face[c] == parse_face(o))
        spare = next(
            c
            for c in range(state.deck.size)
            if state.deck.face[c] == parse_face(n)
            and c not in hand
            and c not in state.stock
            and c not in state.pile
        )
        hand[hand.index(card)] = spare


def test_a_listed_move_is_checked_in_full_once_the_hand_changed() -> None:
    """After the listing, the aces and the two become cards that reach nothing: the kings
    listed before are refused (the initial meld is out of reach), not trusted."""
    state = _unopened()
    listed = next(a for a in state.legal_actions() if a == KINGS)
    _replace_in_hand(state, ["AH", "AS", "2C"], ["4S", "6D", "8H"])
    with pytest.raises(IllegalAction) as refused:
        state.apply(listed)
    assert refused.value.code.startswith("initial-meld-unreachable")


def test_a_listed_move_is_checked_in_full_in_a_copy_whose_hand_changed() -> None:
    state = _unopened()
    listed = next(a for a in state.legal_actions() if a == KINGS)
    trial = state.copy()
    _replace_in_hand(trial, ["AH", "AS", "2C"], ["4S", "6D", "8H"])
    with pytest.raises(IllegalAction):
        trial.apply(listed)
    state.apply(listed)  # the original's listing still holds


def test_a_listed_discard_is_checked_in_full_once_the_turn_changed() -> None:
    """The turn's state edited after the listing (the partner's yes: the player must go out):
    a discard listed before is refused."""
    state = _unopened()
    discard = next(a for a in state.legal_actions() if isinstance(a, Discard))
    assert state._listed is not None, "the listing (the kings were checked) is kept"
    state.t.permission = True
    with pytest.raises(IllegalAction) as refused:
        state.apply(discard)
    assert refused.value.code == "must-go-out"


def test_a_move_added_to_the_returned_list_is_checked_in_full() -> None:
    """The list handed out is the caller's: what it adds is not trusted (asking to go out with
    a hand that cannot is refused)."""
    state = _unopened()
    legal = state.legal_actions()
    assert state._listed is not None, "the listing (the kings were checked) is kept"
    ask = AskGoOut()
    assert ask not in legal
    legal.append(ask)
    with pytest.raises(IllegalAction) as refused:
        state.apply(ask)
    assert refused.value.code == "ask-not-allowed"


def test_a_move_listed_for_an_earlier_position_is_checked_in_full() -> None:
    """The listing holds until the next move: a discard listed before the kings were laid is
    refused after them (the initial meld is then pending: 30 of 50)."""
    state = _unopened()
    legal = state.legal_actions()
    kings = next(a for a in legal if a == KINGS)
    discard = next(a for a in legal if isinstance(a, Discard) and a.card == parse_face("9S"))
    state.apply(kings)
    with pytest.raises(IllegalAction) as refused:
        state.apply(discard)
    assert refused.value.code == "initial-meld-too-low"
