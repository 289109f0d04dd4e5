"""The heuristic and searching bots: always a legal move, and a search that can be replayed."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest
from rulecases import short_position

from canasta_net import mayi, selfplay
from canasta_net import search as search_module
from canasta_net.canasta import bots as canasta_bots
from canasta_net.canasta.actions import Discard, parse_action
from canasta_net.canasta.heuristic import HeuristicBot, SeatReader, knowledge_of
from canasta_net.canasta.rules import PRESETS, preset
from canasta_net.canasta.state import HandState, Phase
from canasta_net.cards import is_red_three, rank_of
from canasta_net.games import game_for
from canasta_net.hint import suggest
from canasta_net.search import SearchBot, search_budget
from canasta_net.table.config import TableConfig


def _state(variant: str, seed: int) -> Any:
    order = list(range(game_for(variant).deck_size))
    random.Random(seed).shuffle(order)
    if variant in mayi.PRESETS:
        return mayi.DealState(mayi.preset(variant), order, 0, 0)
    return HandState(preset(variant), order, dealer=0)


def _search(variant: str, seed: int, simulations: int = 1) -> SearchBot:
    maker = mayi.bots.search_bot if variant in mayi.PRESETS else canasta_bots.search_bot
    bot = maker(random.Random(seed), simulations=simulations)
    bot.horizon = 8
    return bot


@pytest.mark.parametrize("variant", [*PRESETS, "may-i"])
def test_the_heuristic_plays_whole_hands_legally(variant: str) -> None:
    game = game_for(variant)
    state = _state(variant, 0)
    bots = [game.make_bot("heuristic", random.Random(0)) for _ in range(state.players)]
    # play_to_end applies each choice, which raises IllegalAction for an illegal one
    selfplay.play_to_end(state, bots)
    assert state.is_over


@pytest.mark.parametrize("variant", ["classic", "classic-2p", "samba", "may-i"])
def test_the_search_chooses_legal_moves(variant: str) -> None:
    state = _state(variant, 3)
    game = game_for(variant)
    others = [game.make_bot("heuristic", random.Random(1)) for _ in range(state.players)]
    searcher = _search(variant, 5)
    for _ in range(25):
        if state.is_over:
            break
        bot = searcher if state.to_move == 0 else others[state.to_move]
        action = selfplay.choose_for(bot, state)
        assert state.is_legal(action)
        state.apply(action)


def test_the_heuristic_chooses_from_a_prompt_alone() -> None:
    """A remote seat knows its legal list and hand: the search falls back to the heuristic."""
    state = _state("classic", 4)
    state.apply(state.legal_actions()[0])
    legal, hand = state.legal_actions(), state.hand_faces(state.to_move)
    for kind in ("heuristic", "search"):
        bot = canasta_bots.make_bot(kind, random.Random(0))
        assert bot.choose(legal, hand, state.rules) in legal


@pytest.mark.parametrize("variant", ["classic-2p", "may-i"])
def test_the_search_is_reproducible_with_a_seed_and_a_count(variant: str) -> None:
    def line(seed: int) -> list[str]:
        state = _state(variant, 8)
        bot = _search(variant, seed, simulations=2)
        moves = []
        for _ in range(12):
            if state.is_over:
                break
            action = selfplay.choose_for(bot, state)
            moves.append(str(action))
            state.apply(action)
        return moves

    assert line(9) == line(9)


def test_search_kinds_name_a_budget() -> None:
    assert search_budget("search") == 0.5
    assert search_budget("search:0.2") == 0.2
    assert search_budget("greedy") is None
    for bad in ("search:0", "search:x", "search:100"):
        with pytest.raises(ValueError):
            search_budget(bad)
    bot = canasta_bots.make_bot("search:0.1", random.Random(0))
    assert isinstance(bot, SearchBot) and bot.budget == 0.1


def test_a_table_config_accepts_the_new_bot_kinds() -> None:
    rules = preset("classic")
    for kind in ("heuristic", "search", "search:0.25"):
        config = TableConfig.simple("bots", rules, 1, host_plays=False)
        config.bot_kind = kind
        back = TableConfig.from_log_fields(
            rules, config.to_log_fields(), deal=config.deal, insecure=False
        )
        assert back.bot_kind == kind


@pytest.mark.parametrize("variant", ["classic", "may-i"])
def test_a_hint_names_a_legal_move_and_a_reason(variant: str) -> None:
    state = _state(variant, 2)
    state.apply(state.legal_actions()[0])
    hint = suggest(state, simulations=1, rng=random.Random(0))
    assert state.is_legal(hint.action)
    assert hint.reason and str(hint.action) in str(hint)


def _kind_of_card(face: int) -> tuple[int, bool]:
    """What the rules read of a face without sequences: its rank, and a three's colour."""
    return (rank_of(face), is_red_three(face))


def _discard_position(variant: str, seed: int) -> HandState:
    """A hand from heuristic self-play at a seat's discard holding two cards of one kind in
    different suits."""
    state = _state(variant, seed)
    assert isinstance(state, HandState)
    bots = [canasta_bots.make_bot("heuristic", random.Random(s)) for s in range(state.players)]
    while not state.is_over:
        faces = {a.card for a in state.legal_actions() if isinstance(a, Discard)}
        if len({_kind_of_card(f) for f in faces}) < len(faces):
            return state
        state.apply(canasta_bots.choose_for(bots[state.to_move], state))
    raise AssertionError("no such position in this hand")


def test_the_search_tries_each_different_move_once() -> None:
    """Without sequences a discarded six is the same move in any suit (a black three too): the
    candidates are different moves (more of them in the same rollouts); Samba's sequences keep
    suits apart."""
    for seed in range(4):
        state = _discard_position("classic", seed)
        bot = _search("classic", 1)
        bot.candidates = 100
        tried = [_kind_of_card(a.card) for a in bot.candidates_in(state) if isinstance(a, Discard)]
        assert len(tried) == len(set(tried)), tried
        offered = {_kind_of_card(a.card) for a in state.legal_actions() if isinstance(a, Discard)}
        assert set(tried) == offered  # every kind of card is still tried once
    samba = _discard_position("samba", 0)
    bot = _search("samba", 1)
    bot.candidates = 100
    every = [a for a in samba.legal_actions() if isinstance(a, Discard)]
    assert len([a for a in bot.candidates_in(samba) if isinstance(a, Discard)]) == len(every)


def test_a_lucky_rollout_does_not_replace_the_policys_move() -> None:
    """A candidate replaces the policy's first choice only when its gain over the same deals is
    both above the margin and larger than its standard error: a mean made of one huge deal is
    luck."""
    bot = _search("classic", 1)
    first = [0.0] * 6
    lucky = [2400.0, -400.0, -300.0, -300.0, -200.0, -250.0]  # mean +158, most deals worse
    steady = [210.0, 190.0, 205.0, 200.0, 195.0, 200.0]
    bot._values = [first, lucky, steady]
    assert not bot._convincing(1) and bot._convincing(2)
    bot.confidence = 0.0  # the margin alone, as before
    assert bot._convincing(1)
    bot._values = [first[:1], steady[:1], steady[:1]]
    bot.confidence = 1.0
    assert not bot._convincing(1)  # one deal cannot tell


def test_a_search_stops_before_a_deal_that_would_overrun_its_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each sampled deal takes 0.15 s on this clock: with 0.5 s the search plays three deals
    (0.45 s), not a fourth that would end at 0.6 s."""
    now = [0.0]

    def perf_counter() -> float:
        now[0] += 0.15
        return now[0] - 0.15

    monkeypatch.setattr(search_module, "time", SimpleNamespace(perf_counter=perf_counter))
    state = _state("classic", 2)
    state.apply(state.legal_actions()[0])
    bot = canasta_bots.search_bot(random.Random(0), budget=0.5)
    bot.horizon = 8
    bot.evaluate(state, state.legal_actions()[:2])
    assert bot.deals_tried == 3


@pytest.mark.parametrize(
    "variant", ["classic", "classic-2p", "classic-3p-lone", "samba", "bolivia"]
)
def test_the_heuristics_shortcuts_choose_what_its_full_reading_chooses(variant: str) -> None:
    """The heuristic keeps what the melds and the pile tell between moves (``SeatReader``) and
    draws from a small pile without listing the legal actions: along hands of mixed play (the
    heuristic and random moves, so that odd positions come up too) it reads exactly what
    ``knowledge_of`` reads and chooses what ``decide`` over the whole legal list chooses."""
    reference = HeuristicBot()
    for seed in range(3):
        state = _state(variant, seed)
        shared = SeatReader()  # a rollout's bots share one (seed 1), or not
        bots = [HeuristicBot(reader=shared if seed == 1 else None) for _ in range(state.players)]
        wild = canasta_bots.RandomBot(random.Random(seed))
        rng = random.Random(seed)
        while not state.is_over:
            seat = state.to_move
            legal = state.legal_actions()
            want = reference.decide(legal, knowledge_of(state, seat))
            assert bots[seat].choose_in(state) == want
            if state.phase is not Phase.DRAW:
                assert bots[seat].reader.knowledge(state, seat) == knowledge_of(state, seat)
            action = wild.choose_in(state) if rng.random() < 0.2 else want
            state.apply(action, seat)
            if rng.random() < 0.05:
                state = state.copy()  # a rollout's copy: shared melds, new lists


def test_with_two_seats_a_steady_small_gain_replaces_the_policys_move() -> None:
    """With a ``duel`` rule of (0, 0) the search plays, with two seats, the best mean over two
    deals or more, by any margin; with four it keeps the margin and the standard error."""
    bot = _search("classic", 1)
    bot.duel = (0.0, 0.0)
    first = [0.0] * 6
    small = [12.0, 8.0, 15.0, 5.0, 10.0, 10.0]  # +10 a deal, below the 30-point margin
    bot._values = [first, small]
    bot._players = 2
    assert bot._convincing(1)
    bot._players = 4
    assert not bot._convincing(1)
    bot._players = 2
    bot._values = [first[:1], small[:1]]
    assert not bot._convincing(1)  # one deal cannot tell, with two seats too
    bot._values = [first, [-x for x in small]]
    assert not bot._convincing(1)  # worse is never played


def test_a_cpu_time_budget_counts_the_threads_cpu_not_the_wall_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a busy machine the wall clock runs on while the search waits for a core: with
    ``cpu_time`` the budget counts only the CPU time the search's thread got (here 0.15 s a
    deal, while the wall clock says 1 s a deal)."""
    wall, cpu = [0.0], [0.0]

    def perf_counter() -> float:
        wall[0] += 1.0
        return wall[0] - 1.0

    def thread_time() -> float:
        cpu[0] += 0.15
        return cpu[0] - 0.15

    clock = SimpleNamespace(perf_counter=perf_counter, thread_time=thread_time)
    monkeypatch.setattr(search_module, "time", clock)
    state = _state("classic", 2)
    state.apply(state.legal_actions()[0])
    bot = canasta_bots.search_bot(random.Random(0), budget=0.5, cpu_time=True)
    bot.horizon = 8
    bot.evaluate(state, state.legal_actions()[:2])
    assert bot.deals_tried == 3
    bot = canasta_bots.search_bot(random.Random(0), budget=0.5)  # the wall clock: one deal
    bot.horizon = 8
    bot.evaluate(state, state.legal_actions()[:2])
    assert bot.deals_tried == 1


def test_a_hint_whose_runner_did_as_well_says_so_and_no_gain() -> None:
    from canasta_net.hint import BEST_OF, TIED, USUAL_PLAY, suggestion_of

    best, runner = parse_action("meld 8C 8D 8S"), parse_action("add 0 7D 7H")
    tied = suggestion_of(best, [(best, 12.4), (runner, 12.2)], 15)
    assert tied.message == TIED  # before: "+0 points a deal over 'add 0 7D 7H'"
    assert tied.reason == (
        "as good as any of 2 candidates over 15 sampled deals; 'add 0 7D 7H' did as well"
    )
    assert "'add 0 7D 7H'" not in tied.reason_in("ru") and tied.reason_in("ru") != tied.reason
    assert suggestion_of(best, [(best, 40.0), (runner, 12.0)], 15).message == BEST_OF
    assert suggestion_of(best, [(best, 11.0), (runner, 12.0)], 15).message == USUAL_PLAY


@pytest.mark.parametrize(
    ("variant", "least"), [("classic", 3), ("classic-2p", 5), ("samba", 5), ("bolivia", 5)]
)
def test_the_heuristic_takes_a_pile_from_its_least_size_and_draws_below_it(
    variant: str, least: int
) -> None:
    """The smallest pile worth its pair: three cards where one card is drawn, five where two are
    (docs/bots.md, "How big a pile the heuristic takes"). Both ways, through the full reading
    and through the draw's shortcut."""
    filler = ["5C", "6D", "8H", "9S", "5D", "6H", "8S", "9D"]  # no pair with the top card
    for size in (least - 1, least):
        state = short_position(
            variant,
            hands={0: ["KS", "KD", "4C", "7H", "10S"]},
            melds={0: [["QC", "QD", "QH"]], 1: [["JC", "JD", "JH"]]},
            pile=[*filler[: size - 1], "KH"],
            stock=["4D", "4H", "4S", "7C", "7D", "7S"],
            phase="draw",
        )
        assert len(state.pile) == size
        legal = state.legal_actions()
        took = HeuristicBot().decide(legal, knowledge_of(state, 0))
        assert str(took) == str(HeuristicBot().choose_in(state))
        assert str(took).startswith("take-pile" if size >= least else "draw"), (size, took)
