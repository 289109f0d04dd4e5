"""The game seam: hands of both engines played through only what ``games.py``'s Protocols name.

mypy --strict proves statically (``games._both_engines_fit_the_seam``) that ``HandState``,
``DealState``, both rule sets, both matches, both engines and both engines' bots are what the
Protocols say; these tests check at run time that the Protocols' methods, used alone, carry a
hand from the deal to its score the same way for either game.
"""

from __future__ import annotations

import random

import pytest

from canasta_net.errors import IllegalAction
from canasta_net.games import (
    CANASTA,
    MAY_I,
    AnyGameState,
    Game,
    GameMatch,
    UnknownGame,
    game_for,
    game_from_header,
)

MAX_TURNS = 5000  # a greedy bot ends every hand long before this


def play_hand(game: Game, match: GameMatch, rng: random.Random) -> AnyGameState:
    """Deal a hand of ``match`` and play it to its end with greedy bots, checking at every step
    what the Protocols promise."""
    order = list(range(game.deck_size))
    rng.shuffle(order)
    state = match.new_hand(order)
    assert state.dealer == match.dealer
    assert state.players == game.players == state.rules.players
    assert state.rules.name == game.name
    bots = [
        game.make_bot("greedy", random.Random(rng.getrandbits(64))) for _ in range(game.players)
    ]
    steps = 0
    while not state.is_over:
        assert state.end is None
        assert state.cards_in_play() == game.deck_size
        top = state.faces(state.pile[-1:])
        assert state.pile_top == (top[0] if top else None)
        seat = state.to_move
        legal = state.legal_actions()
        assert legal, f"no legal action in {state.phase.value}"
        action = bots[seat].choose(legal, state.hand_faces(seat), game.rules)
        assert action in legal
        # an action crosses the seam as text and comes back as its game's own value
        parsed = game.parse_action(str(action))
        assert state.normalize(parsed) == state.normalize(action)
        state.check(parsed, seat)
        assert state.is_legal(parsed, seat)
        with pytest.raises(IllegalAction):
            state.check(parsed, (seat + 1) % game.players)
        before = state.copy()
        turn_no = state.turn_no
        state.apply(parsed, seat)
        # the copy is independent: it is still the position before the action
        assert before.to_move == seat and before.turn_no == turn_no and not before.is_over
        assert state.turn_no >= turn_no
        assert state.cards_in_play() == game.deck_size
        view = game.seat_view(state, seat)
        assert view["game"] == game.kind
        steps += 1
        assert steps < MAX_TURNS, "the hand does not end"
    assert state.end is not None
    assert isinstance(state.end.reason.value, str)
    if state.end.went_out is not None:
        assert state.hand_faces(state.end.went_out) == []
    assert state.legal_actions() == []
    with pytest.raises(IllegalAction):
        state.check(game.parse_action("draw"), state.to_move)
    return state


@pytest.mark.parametrize("variant", ["classic", "classic-2p", "samba-3p", "may-i"])
def test_hands_through_the_protocols_only(variant: str) -> None:
    game = game_for(variant)
    rng = random.Random(f"protocol {variant}")
    match = game.new_match(first_dealer=1)
    for played in range(2):
        assert match.hands_played == played
        state = play_hand(game, match, rng)
        what_if = game.score_hand(state)
        recorded = match.record_hand(state)
        assert len(recorded) == game.teams
        assert [s.to_dict() for s in what_if] == [s.to_dict() for s in recorded]
        assert all(s.to_dict()["total"] == s.total for s in recorded)
        assert match.hands_played == played + 1
        assert len(match.scores) == game.teams


def test_each_game_answers_for_itself() -> None:
    canasta, mayi = game_for("classic"), game_for("may-i", 4)
    assert (canasta.kind, mayi.kind) == (CANASTA, MAY_I)
    assert (canasta.teams, mayi.teams) == (2, 4)
    assert [canasta.team_of(s) for s in range(4)] == [0, 1, 0, 1]
    assert [mayi.team_of(s) for s in range(4)] == [0, 1, 2, 3]
    assert (canasta.lowest_wins, mayi.lowest_wins) == (False, True)
    assert canasta.forfeit_winner([0, 0], 1) == 0
    assert mayi.forfeit_winner([0, 0, 0, 0], 1) is None
    assert canasta.new_match().minimums() and mayi.new_match().minimums() == []


def test_a_state_of_the_other_game_is_refused() -> None:
    canasta, mayi = game_for("classic"), game_for("may-i", 4)
    deal = mayi.new_match().new_hand(list(range(mayi.deck_size)))
    with pytest.raises(TypeError):
        canasta.seat_view(deal, 0)
    with pytest.raises(TypeError):
        canasta.new_match().record_hand(deal)


@pytest.mark.parametrize("variant", ["classic", "bolivia", "may-i"])
def test_game_from_header_rebuilds_the_game(variant: str) -> None:
    game = game_for(variant)
    assert game_from_header(game.kind, game.rules_dict()) == game


@pytest.mark.parametrize("kind", ["rummy", "", 3, None])
def test_game_from_header_refuses_an_unknown_game(kind: object) -> None:
    with pytest.raises(UnknownGame, match="unknown game"):
        game_from_header(kind, {})  # type: ignore[arg-type]
