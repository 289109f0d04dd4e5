"""May I?: scoring a deal, the five-deal game and its lowest-total winner."""

from __future__ import annotations

import random

import pytest

from canasta_net.mayi import (
    MAY_I,
    DealState,
    GreedyMayIBot,
    MatchOver,
    MayIMatch,
    parse_action,
    play_deal,
    play_match,
    position_from_dict,
    preset,
)


def finished_deal(scores_in_hand: list[str], deal: int = 0, dealer: int = 0) -> DealState:
    """A deal that is over with these hands (seat 0 went out)."""
    rules = preset("may-i", len(scores_in_hand))
    state = position_from_dict(
        {
            "rules": rules.to_dict(),
            "deal": deal,
            "dealer": dealer,
            "turn": 0,
            "phase": "play",
            "hands": [["5C"], *[h.split() for h in scores_in_hand[1:]]],
            "stock": ["8D"],
            "pile": ["KD"],
            "melds": [[["5H", "5S", "5D"]]] + [[] for _ in scores_in_hand[1:]],
        }
    )
    state.apply(parse_action("add 0.0 5C"))  # the last card: out in every deal
    assert state.is_over
    return state


def test_five_deals_dealer_rotates_lowest_total_wins() -> None:
    match = MayIMatch(preset("may-i", 3), first_dealer=2)
    hands = [
        ["", "AC KD", "2S"],  # 25, 2
        ["", "3C", "10H JH"],  # 3, 20
        ["", "4C", "4D"],  # 4, 4
        ["", "QC", "5H"],  # 10, 5
        ["", "6C", "7H"],  # 6, 7
    ]
    dealers = []
    for deal, h in enumerate(hands):
        assert match.result is None
        dealers.append(match.dealer)
        state = finished_deal(h, deal=deal, dealer=match.dealer)
        assert match.record_deal(state)[0] == 0
    assert dealers == [2, 0, 1, 2, 0]
    assert match.deal_scores == [[0, 25, 2], [0, 3, 20], [0, 4, 4], [0, 10, 5], [0, 6, 7]]
    assert match.scores == [0, 48, 38]
    result = match.result
    assert result is not None and result.winner == 0 and result.deals == 5
    assert result.describe(["Ann", "Bob", "Cy"]) == "Ann wins after 5 deals: Ann 0, Bob 48, Cy 38"
    with pytest.raises(MatchOver):
        match.new_deal(list(range(104)))
    again = MayIMatch.from_dict(match.to_dict())
    assert again == match


def test_a_tie_for_lowest_is_a_draw() -> None:
    deals = [[8, 2, 2]] * 4 + [[8, 4, 4]]
    match = MayIMatch(preset("may-i", 3), scores=[40, 12, 12], deal_scores=deals)
    result = match.result
    assert result is not None and result.winner is None and result.leaders == (1, 2)
    assert "draw between seat 1 and seat 2" in result.describe()


def test_new_deal_uses_the_next_contract_and_dealer() -> None:
    match = MayIMatch(MAY_I, first_dealer=1)
    state = match.new_deal(list(range(104)))
    assert state.deal == 0 and state.dealer == 1 and state.turn == 2
    with pytest.raises(ValueError):
        match.record_deal(state)  # not over
    other = finished_deal(["", "2C", "3C", "4C"], deal=1)
    with pytest.raises(ValueError):
        match.record_deal(other)  # deal 1 before deal 0


def test_match_dict_is_checked() -> None:
    data = MayIMatch(MAY_I).to_dict()
    data["deal_scores"] = [[1, 2, 3, 4]]
    data["scores"] = [1, 2, 3, 5]
    with pytest.raises(ValueError):
        MayIMatch.from_dict(data)
    del data["scores"]
    assert MayIMatch.from_dict(data).scores == [1, 2, 3, 4]


@pytest.mark.parametrize("players", [3, 4, 5])
def test_greedy_bots_play_a_whole_game(players: int) -> None:
    rules = preset("may-i", players)
    rng = random.Random(f"game-{players}")
    bots = [GreedyMayIBot(random.Random(s)) for s in range(players)]
    match, actions = play_match(rules, bots, rng, first_dealer=0)
    result = match.result
    assert result is not None and result.deals == 5 and actions > 0
    assert all(s >= 0 for s in match.scores)
    best = min(match.scores)
    assert result.winner is None or match.scores[result.winner] == best


def test_greedy_bots_go_out() -> None:
    rules = preset("may-i", 4)
    rng = random.Random(7)
    went_out = 0
    for deal in (0, 3):
        for _ in range(5):
            order = list(range(104))
            rng.shuffle(order)
            state = DealState(rules, order, 0, deal)
            play_deal(state, [GreedyMayIBot(random.Random(s)) for s in range(4)])
            went_out += state.end is not None and state.end.went_out is not None
    assert went_out >= 5
