"""Invariants of the May I? engine under random play, for 3, 4 and 5 players.

Half the moves are uniformly random among the legal ones, half greedy, so that play reaches
contracts, lay-offs, buys and going out in every deal.

- every card is accounted for at every step;
- a deal that is not over always has a legal action, for the seat ``to_move``;
- every listed action applies, and a sampled unlisted action is refused (unless it is a listed
  lay-down written in another order) with a reason code, leaving the state unchanged;
- positions round-trip through their dictionary form;
- a seat's view never shows another seat's hidden card.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canasta_net.canasta.bots import RandomBot
from canasta_net.cards import face_text, parse_face
from canasta_net.errors import IllegalAction
from canasta_net.mayi import (
    AddToMeld,
    Allow,
    DealState,
    Deny,
    Discard,
    Draw,
    GreedyMayIBot,
    MayI,
    MayIAction,
    MayIMatch,
    Meld,
    Pass,
    Phase,
    TakeDiscard,
    benchmark,
    choose_for,
    parse_action,
    play_deal,
    position_from_dict,
    position_to_dict,
    preset,
    seat_view,
)


def _random_candidate(state: DealState, rng: random.Random) -> MayIAction:
    """An arbitrary, usually illegal, action built from the hand, the table and random faces."""
    hand = state.hand_faces(state.to_move) or [0]
    top = state.pile_top if state.pile_top is not None else 0
    any_face = rng.randrange(52)
    kind = rng.randrange(11)
    if kind == 0:
        return Draw()
    if kind == 1:
        return TakeDiscard(rng.choice((top, any_face)))
    if kind == 2:
        sizes = [rng.randint(1, 5) for _ in range(rng.randint(1, 3))]
        return Meld(tuple(tuple(rng.choice(hand) for _ in range(k)) for k in sizes))
    if kind == 3:
        return AddToMeld(rng.randrange(state.players + 1), rng.randrange(4), rng.choice(hand))
    if kind == 4:
        return Discard(rng.choice((any_face, *hand)))
    if kind == 5:
        return MayI(rng.choice((top, any_face)))
    if kind == 6:
        return Deny(rng.choice((top, any_face)))
    if kind == 7:
        return Pass()
    if kind == 8:
        return Allow()
    lays = [a for a in state.legal_actions() if isinstance(a, Meld)]
    if not lays:
        return Discard(rng.choice(hand))
    groups = [list(g) for g in rng.choice(lays).groups]
    if kind == 9:  # a listed lay-down written in another order: legal
        for g in groups:
            rng.shuffle(g)
        rng.shuffle(groups)
    else:  # one card fewer, or moved to another group: usually illegal
        source = rng.choice(groups)
        card = source.pop(rng.randrange(len(source)))
        if rng.random() < 0.5:
            rng.choice(groups).append(card)
        groups = [g for g in groups if g]
    return Meld(tuple(tuple(g) for g in groups))


def _check_step(state: DealState, rng: random.Random, deep: bool) -> list[MayIAction]:
    assert state.cards_in_play() == state.deck.size
    legal = state.legal_actions()
    assert legal, f"no legal action in a {state.phase} position"
    listed = {str(a) for a in legal}
    assert len(listed) == len(legal), "duplicates in the legal list"
    assert all(parse_action(text) in legal for text in listed)
    if deep:
        for action in legal:
            trial = state.copy()
            trial.apply(action, state.to_move)
            assert trial.cards_in_play() == state.deck.size
    before = json.dumps(position_to_dict(state), sort_keys=True)
    for _ in range(10 if deep else 3):
        candidate = _random_candidate(state, rng)
        seat = state.to_move if rng.random() < 0.8 else rng.randrange(state.players)
        equivalent = seat == state.to_move and str(state.normalize(candidate)) in listed
        trial = state.copy()
        try:
            trial.apply(candidate, seat)
        except IllegalAction as e:
            assert e.code, "every refusal has a reason code"
            assert not equivalent, f"{candidate} refused ({e.code}) but listed as legal"
            assert json.dumps(position_to_dict(trial), sort_keys=True) == before
        else:
            assert equivalent, f"{candidate} by seat {seat} applied but is not listed"
    assert json.dumps(position_to_dict(state), sort_keys=True) == before
    return legal


def _collect_cards(value: object, out: Counter[str]) -> None:
    if isinstance(value, str):
        try:
            parse_face(value)
        except ValueError:
            return
        out[value] += 1
    elif isinstance(value, dict):
        for k, v in value.items():
            # pile_top repeats the last card of pile
            if k not in ("variant", "phase", "label", "kind", "reason", "contract", "pile_top"):
                _collect_cards(v, out)
    elif isinstance(value, list):
        for v in value:
            _collect_cards(v, out)


def _check_views(state: DealState) -> None:
    public: Counter[str] = Counter(face_text(f) for f in state.faces(state.pile))
    for seat_melds in state.melds:
        for m in seat_melds:
            public.update(face_text(f) for f in m.faces)
    for seat in range(state.players):
        view = seat_view(state, seat)
        json.dumps(view)
        own = Counter(face_text(f) for f in state.hand_faces(seat))
        assert Counter(view["hand"]) == own
        seen: Counter[str] = Counter()
        _collect_cards(view, seen)
        assert not seen - (public + own), f"seat {seat} sees hidden cards {seen - public - own}"
        assert view["hand_sizes"] == [len(h) for h in state.hands]
        assert view["stock_size"] == len(state.stock)


def _check_round_trip(state: DealState, legal: list[MayIAction]) -> None:
    data = position_to_dict(state)
    again = position_from_dict(json.loads(json.dumps(data)))
    assert position_to_dict(again) == data
    assert again.to_move == state.to_move
    assert [str(a) for a in again.legal_actions()] == [str(a) for a in legal]


# Deals per table size: enough to reach every phase, both ways a deal ends and every kind of
# move (asserted below), each of the five contracts three times.
DEALS = 15


@pytest.mark.parametrize("players", [3, 4, 5])
def test_random_play_soak(players: int) -> None:
    rules = preset("may-i", players)
    rng = random.Random(f"may-i-soak-{players}")
    greedy = GreedyMayIBot(random.Random(players))
    phases: Counter[str] = Counter()
    ends: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for deal_no in range(DEALS):
        order = list(range(rules.deck_size))
        rng.shuffle(order)
        state = DealState(rules, order, dealer=deal_no, deal=deal_no % rules.deals)
        steps = 0
        while not state.is_over:
            deep = steps % 9 == 0
            legal = _check_step(state, rng, deep)
            if deep:
                _check_views(state)
                _check_round_trip(state, legal)
            phases[state.phase.value] += 1
            if rng.random() < 0.5:  # half the moves greedy, to reach contracts and going out
                action = greedy.choose(legal, state.hand_faces(state.to_move), rules)
            else:
                action = rng.choice(legal)
            kinds[type(action).__name__] += 1
            state.apply(action, state.to_move)
            steps += 1
            assert steps < 5000
        assert state.end is not None
        ends[state.end.reason.value] += 1
        assert state.cards_in_play() == state.deck.size
        assert state.legal_actions() == []
        _check_views(state)
        _check_round_trip(state, [])
    # with three seats only one seat may buy a discard (the one between the player to move and
    # the discarder): nobody has priority over it to ask for permission
    unreachable = {Phase.OVER} | ({Phase.BUY_PERMISSION} if players == 3 else set())
    assert all(phases[p.value] for p in Phase if p not in unreachable), phases
    assert ends["went-out"] and ends["stock-exhausted"], ends
    expected = {"Draw", "TakeDiscard", "Meld", "AddToMeld", "Discard", "MayI", "Pass"}
    if players > 3:  # with three, the only seat that may buy never needs permission
        expected |= {"Allow", "Deny"}
    assert expected <= set(kinds), kinds


def test_canasta_random_bot_plays_may_i() -> None:
    """The common bot protocol: a Canasta RandomBot needs only the legal list."""
    rules = preset("may-i", 4)
    rng = random.Random(3)
    bots: Any = [RandomBot(random.Random(s)) for s in range(4)]
    match = MayIMatch(rules)
    order = list(range(104))
    rng.shuffle(order)
    state = match.new_deal(order)
    actions = play_deal(state, bots)
    assert actions > 0 and state.is_over
    match.record_deal(state)
    assert match.deals_played == 1
    state = match.new_deal(order)
    assert choose_for(bots[state.to_move], state) in state.legal_actions()


@settings(max_examples=50, deadline=None)
@given(order=st.permutations(range(104)), players=st.integers(3, 5), dealer=st.integers(0, 9))
def test_deal_invariants(order: list[int], players: int, dealer: int) -> None:
    state = DealState(preset("may-i", players), order, dealer)
    assert state.cards_in_play() == 104 and state.pile == []
    assert all(len(h) == 10 for h in state.hands)
    assert state.turn == (dealer + 1) % players and state.phase is Phase.DRAW
    assert [str(a) for a in state.legal_actions()] == ["draw"]  # no upcard (seed 003)
    upcard = DealState(preset("may-i", players).with_changes(upcard=True), order, dealer)
    assert upcard.cards_in_play() == 104 and len(upcard.pile) == 1
    assert {str(a) for a in upcard.legal_actions()} == {
        "draw",
        f"take-discard {face_text(upcard.pile_top or 0)}",
    }


def test_benchmark_runs() -> None:
    report = benchmark(deals=3, players=4, seed=2)
    assert report["hands"] == 3 and report["actions"] > 0
    assert report["hands_per_second"] > 0 and report["actions_per_second"] > 0
