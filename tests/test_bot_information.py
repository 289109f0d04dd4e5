"""Every bot decides only from what its seat may see (issue 15's information test).

Positions come from self-play. In each, every card hidden from the seat to move (the other hands
and the stock) is shuffled among those places, keeping how many cards each holds, and the bot,
made again with the same seed, must choose the same action. A bot made to cheat (it reads the
next seat's hand) shows that the shuffle does change what a cheat would see.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from canasta_net import mayi, selfplay
from canasta_net.canasta import bots as canasta_bots
from canasta_net.canasta.position import (
    position_from_dict,
    position_from_view,
    position_to_dict,
    seat_view,
)
from canasta_net.canasta.rules import preset
from canasta_net.canasta.state import HandState
from canasta_net.cards import face_text
from canasta_net.search import SearchBot

VARIANTS = ["classic", "classic-2p", "samba", "bolivia", "may-i"]
KINDS = ["random", "greedy", "heuristic", "search"]
POSITIONS = 5  # per variant and bot kind (the search: 2)


def _engine(variant: str) -> tuple[Any, Callable[[Any], dict[str, Any]], Callable[..., Any]]:
    if variant in mayi.PRESETS:
        return mayi.preset(variant), mayi.position_to_dict, mayi.position_from_dict
    return preset(variant), position_to_dict, position_from_dict


def _new_state(variant: str, seed: int) -> Any:
    rules, _, _ = _engine(variant)
    order = list(range(rules.deck_size))
    random.Random(seed).shuffle(order)
    if variant in mayi.PRESETS:
        return mayi.DealState(rules, order, 0, 0)
    return HandState(rules, order, dealer=0)


def _make(variant: str, kind: str, seed: int) -> Any:
    rng = random.Random(seed)
    if kind == "search":
        maker = mayi.bots.search_bot if variant in mayi.PRESETS else canasta_bots.search_bot
        bot: SearchBot = maker(rng, simulations=2)
        bot.horizon = 12  # short rollouts keep the test fast; the sampling is what is tested
        return bot
    if variant in mayi.PRESETS:
        return mayi.make_bot(kind, rng)
    return canasta_bots.make_bot(kind, rng)


def _positions(variant: str, count: int) -> Iterator[dict[str, Any]]:
    """Positions with a real choice, spread over self-play hands of greedy bots."""
    _, to_dict, _ = _engine(variant)
    found = 0
    for seed in range(50):
        state = _new_state(variant, seed)
        bots = [_make(variant, "greedy", seed) for _ in range(state.players)]
        step = 0
        while not state.is_over and found < count:
            if step % 7 == 3 and len(state.legal_actions()) > 1:
                found += 1
                yield to_dict(state)
            state.apply(selfplay.choose_for(bots[state.to_move], state))
            step += 1
        if found >= count:
            return


def _shuffle_hidden(variant: str, position: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The same position with every card hidden from the seat to move dealt anew (the cards a
    hand is known to hold, ``shown``, stay in it: every seat saw them taken with the pile)."""
    seat = _engine(variant)[2](position).to_move
    shown = position.get("shown") or [[] for _ in position["hands"]]
    places: list[tuple[str, int | None]] = [
        ("hands", s) for s in range(len(position["hands"])) if s != seat
    ]
    places.append(("stock", None))
    out = dict(position)
    out["hands"] = [list(h) for h in position["hands"]]
    cards: list[str] = []
    for key, i in places:
        place = list(out[key] if i is None else out[key][i])
        for card in shown[i] if i is not None else []:
            place.remove(card)
        cards += place
    rng.shuffle(cards)
    for key, i in places:
        known = list(shown[i]) if i is not None else []
        size = len(position[key] if i is None else position[key][i]) - len(known)
        part, cards = cards[:size], cards[size:]
        if i is None:
            out[key] = part
        else:
            out[key][i] = known + part
    return out


def _choice(variant: str, kind: str, position: dict[str, Any]) -> str:
    _, _, from_dict = _engine(variant)
    return str(selfplay.choose_for(_make(variant, kind, 7), from_dict(position)))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kind", KINDS)
def test_choice_does_not_depend_on_hidden_cards(variant: str, kind: str) -> None:
    rng = random.Random(11)
    count = 2 if kind == "search" else POSITIONS
    for position in _positions(variant, count):
        shuffled = _shuffle_hidden(variant, position, rng)
        assert _choice(variant, kind, shuffled) == _choice(variant, kind, position), position


class _Cheat:
    """Discards (or plays) by the next seat's hand: what the test must catch."""

    name = "cheat"

    def choose_in(self, state: Any) -> Any:
        legal = state.legal_actions()
        peek = sum(state.hand_faces((state.to_move + 1) % state.players))
        return legal[peek % len(legal)]


@pytest.mark.parametrize("variant", ["classic", "may-i"])
def test_the_shuffle_catches_a_bot_that_peeks(variant: str) -> None:
    rng = random.Random(11)
    _, _, from_dict = _engine(variant)
    changed = 0
    for position in _positions(variant, POSITIONS):
        shuffled = _shuffle_hidden(variant, position, rng)
        before = selfplay.choose_for(_Cheat(), from_dict(position))
        after = selfplay.choose_for(_Cheat(), from_dict(shuffled))
        changed += str(before) != str(after)
    assert changed


def _pile_taken(variant: str, seed: int, least: int) -> Any:
    """A hand played by greedy bots until a seat other than the one to move holds ``least``
    cards it took with the pile (in May I?, discards it took or bought)."""
    for attempt in range(seed, seed + 50):
        state = _new_state(variant, attempt)
        bots = [_make(variant, "greedy", attempt) for _ in range(state.players)]
        while not state.is_over:
            state.apply(selfplay.choose_for(bots[state.to_move], state))
            others = [s for s in range(state.players) if s != state.to_move]
            if state.phase.value == "draw" and any(len(state.shown[s]) >= least for s in others):
                return state
    raise AssertionError("no pile taken")


@pytest.mark.parametrize(("variant", "least"), [("classic", 3), ("may-i", 2)])
def test_cards_taken_with_the_pile_stay_in_that_hand_in_every_sampled_deal(
    variant: str, least: int
) -> None:
    state = _pile_taken(variant, 0, least)
    _, to_dict, from_dict = _engine(variant)
    seat = state.to_move
    taker = next(s for s in range(state.players) if s != seat and len(state.shown[s]) >= least)
    shown = [face_text(f) for f in state.shown[taker]]
    position = to_dict(state)
    assert position["shown"][taker] == shown  # a position keeps them, and reads them back
    assert to_dict(from_dict(position)) == position
    maker = mayi.bots.search_bot if variant in mayi.PRESETS else canasta_bots.search_bot
    bot = maker(random.Random(1), simulations=1)
    canonical = bot.information_set(state)
    unseen = bot._unseen(canonical, seat)
    for deal in range(20):
        sampled = bot._sample(canonical, seat, unseen, random.Random(deal))
        held = Counter(face_text(f) for f in sampled.hand_faces(taker))
        assert not Counter(shown) - held, (shown, held)
        assert sampled.shown == state.shown


def test_a_position_from_a_seats_view_knows_only_the_view() -> None:
    """``position_from_view``: what a remote searching seat searches from. Positions whose
    hidden cards differ give the same one; its legal actions are the real position's."""
    rules = preset("classic")
    rng = random.Random(5)
    checked = 0
    for position in _positions("classic", POSITIONS):
        state = position_from_dict(position)
        shuffled = position_from_dict(_shuffle_hidden("classic", position, rng))
        seat = state.to_move
        built = position_from_view(seat_view(state, seat), rules, random.Random(1))
        again = position_from_view(seat_view(shuffled, seat), rules, random.Random(1))
        assert built == again
        rebuilt = position_from_dict(built)
        assert rebuilt.to_move == seat
        assert sorted(rebuilt.hand_faces(seat)) == sorted(state.hand_faces(seat))
        assert sorted(map(str, rebuilt.legal_actions())) == sorted(map(str, state.legal_actions()))
        checked += 1
    assert checked == POSITIONS
