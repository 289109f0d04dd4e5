"""Searches in worker processes (``canasta_net.bot_pool``): the reactor keeps serving while a
searching bot thinks, the pool chooses what the bot would in-process, and a search the pool cannot
run in time falls back to the heuristic's choice."""

from __future__ import annotations

import itertools
import os
import random
import time
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall

from canasta_net import bot_pool as bot_pool_module
from canasta_net import mayi, selfplay
from canasta_net.bot_pool import BotPool
from canasta_net.canasta import bots as canasta_bots
from canasta_net.canasta.rules import preset
from canasta_net.canasta.state import HandState
from canasta_net.games import game_for
from canasta_net.search import SearchBot
from canasta_net.ui.players import BotPlayer


def _position(variant: str, seed: int, moves: int) -> Any:
    """A position with a choice, after ``moves`` actions of heuristic self-play."""
    if variant == "may-i":
        rules: Any = mayi.preset(variant)
    else:
        rules = preset(variant)
    order = list(range(rules.deck_size))
    random.Random(seed).shuffle(order)
    state: Any = (
        mayi.DealState(rules, order, 0, 0)
        if variant == "may-i"
        else HandState(rules, order, dealer=0)
    )
    maker = mayi.make_bot if variant == "may-i" else canasta_bots.make_bot
    bots = [maker("heuristic", random.Random(s)) for s in range(state.players)]
    played = 0
    while played < moves or len(_bot(variant, 0).candidates_in(state)) < 2:
        state.apply(selfplay.choose_for(bots[state.to_move], state))
        played += 1
    return state


def _bot(variant: str, seed: int, simulations: int | None = 2, budget: float = 0.5) -> SearchBot:
    maker = mayi.bots.search_bot if variant == "may-i" else canasta_bots.search_bot
    bot: SearchBot = maker(random.Random(seed), budget, simulations)
    bot.horizon = 30
    return bot


# The tests' searches may wait this long for their worker. The workers run at the idle
# priority, so on a machine whose cores are busy (the suite's other worker, CI) a search of a
# twentieth of a second could miss the product's deadline (its budget times three plus 5 s) and
# come back as the heuristic's move: a test of what the pool does must not depend on the load.
TEST_DEADLINE = 60.0


@pytest.fixture(scope="module")
def pool() -> Any:
    pool = BotPool(reactor, workers=1, timeout=TEST_DEADLINE)  # one worker, for the module
    yield pool
    pytest_twisted.blockon(pool.shutdown())


@pytest_twisted.ensureDeferred
async def test_the_pools_choice_is_the_in_process_choice(pool: BotPool) -> None:
    for variant, seed, moves in [("classic", 1, 9), ("classic-2p", 2, 14), ("may-i", 3, 6)]:
        state = _position(variant, seed, moves)
        here = _bot(variant, 7)
        expected = here.choose_in(state)
        there = _bot(variant, 7)
        chosen = await pool.choose(there, state)
        assert str(chosen) == str(expected) and chosen in state.legal_actions()
        assert there.deals_tried == here.deals_tried == 2
        assert [(str(a), v) for a, v in there.last] == [(str(a), v) for a, v in here.last]
    assert pool.counts["searched"] >= 3


@pytest_twisted.ensureDeferred
async def test_the_reactor_keeps_serving_while_a_bot_searches(pool: BotPool) -> None:
    await pool.choose(_bot("classic", 1), _position("classic", 1, 9))  # the worker is up
    state = _position("classic", 4, 11)
    ticks: list[float] = []
    loop = LoopingCall(lambda: ticks.append(time.perf_counter()))
    loop.start(0.005)
    started = time.perf_counter()
    chosen = await pool.choose(_bot("classic", 5, simulations=None, budget=0.4), state)
    took = time.perf_counter() - started
    loop.stop()
    assert chosen in state.legal_actions()
    assert took >= 0.3  # the search spent (most of) its budget ...
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert len(ticks) >= 20 and max(gaps) < 0.15, max(gaps)  # ... and the reactor ran meanwhile


@pytest_twisted.ensureDeferred
async def test_a_search_past_its_deadline_plays_the_heuristics_choice(pool: BotPool) -> None:
    state = _position("classic", 1, 9)
    bot = _bot("classic", 7, simulations=4)
    first = bot.candidates_in(state)[0]
    pool.timeout = 0.001
    try:
        assert await pool.choose(bot, state) == first
    finally:
        pool.timeout = TEST_DEADLINE
    assert pool.counts["timed_out"] == 1 and bot.last == [] and bot.deals_tried == 0


@pytest_twisted.ensureDeferred
async def test_a_full_queue_and_a_closed_pool_answer_at_once(pool: BotPool) -> None:
    state = _position("classic", 1, 9)
    bot = _bot("classic", 7)
    bot.last, bot.deals_tried = [("an earlier move", 1.0)], 5
    searched = _bot("classic", 7)
    searched.rng.getrandbits(64)  # the seed a search would have drawn
    queue, pool.queue_per_worker = pool.queue_per_worker, 0  # no search may be in flight
    try:
        d = pool.choose(bot, state)
    finally:
        pool.queue_per_worker = queue
    assert d.called  # not queued: the heuristic's choice, now
    assert await d == bot.candidates_in(state)[0] and pool.counts["overloaded"] == 1
    assert bot.last == [] and bot.deals_tried == 0  # nothing was searched
    # the bot's random stream moves on as if it had searched: its next seeds do not hang on load
    assert bot.rng.getstate() == searched.rng.getstate()
    closed = BotPool(reactor, workers=1)
    await closed.shutdown()
    assert closed.choose(bot, state).called and closed.executor is None


@pytest_twisted.ensureDeferred
async def test_a_dead_worker_falls_back_and_the_pool_starts_afresh(pool: BotPool) -> None:
    state = _position("classic", 1, 9)
    await pool.choose(_bot("classic", 1), state)
    assert pool.executor is not None
    for process in list(pool.executor._processes.values()):
        process.kill()
    d = pool.choose(_bot("classic", 2, simulations=50), state)
    chosen = await d
    assert chosen in state.legal_actions() and pool.counts["failed"] >= 1
    assert str(await pool.choose(_bot("classic", 7), state)) == str(
        _bot("classic", 7).choose_in(state)
    )  # a new worker searches again


@pytest_twisted.ensureDeferred
async def test_suggest_later_gives_the_hint_without_blocking(pool: BotPool) -> None:
    state = _position("classic-2p", 2, 14)
    hint = await pool.suggest_later(state, simulations=2, rng=random.Random(3))
    assert hint.action in state.legal_actions() and hint.reason


@pytest.mark.parametrize("variant", ["classic", "may-i"])
@pytest_twisted.ensureDeferred
async def test_a_remote_seat_searches_from_its_view_in_the_pool(
    pool: BotPool, monkeypatch: pytest.MonkeyPatch, variant: str
) -> None:
    monkeypatch.setitem(bot_pool_module._pools, id(reactor), pool)
    game = game_for(variant)
    state = _position(variant, 2, 12)
    seat = state.to_move
    legal = [str(a) for a in state.legal_actions()]
    player = BotPlayer("search:0.05", random.Random(1), lambda: game)
    view = {"state": game.seat_view(state, seat)}
    before = pool.counts["searched"]
    chosen = player.choose(legal, view)
    assert isinstance(chosen, Deferred)
    assert await chosen in legal and pool.counts["searched"] == before + 1
    # not its turn in the view (or no view): the policy, from the legal list, at once
    assert player.choose(legal, {}) in legal


def test_the_reactors_pool_is_shut_down_before_the_reactor_stops() -> None:
    class Reactor:
        def __init__(self) -> None:
            self.triggers: list[tuple[str, str, Any]] = []

        def addSystemEventTrigger(self, phase: str, event: str, f: Any) -> None:
            self.triggers.append((phase, event, f))

    fake = Reactor()
    pool = bot_pool_module.bot_pool(fake)
    assert bot_pool_module.bot_pool(fake) is pool  # one per reactor
    assert fake.triggers == [("before", "shutdown", pool.shutdown)]
    assert pool.shutdown().called and pool.closed  # never started: nothing to wait for
    assert bot_pool_module.bot_pool(fake) is not pool  # a closed pool is replaced
    bot_pool_module._pools.pop(id(fake))


def test_workers_take_only_the_cpu_that_the_tables_leave(pool: BotPool) -> None:
    """The workers run at the lowest priority (Linux's idle policy where it exists), so that a
    busy host's tables are not slowed by its bots' searches."""
    executor = pool._executor()
    if hasattr(os, "SCHED_IDLE"):
        assert executor.submit(os.sched_getscheduler, 0).result(timeout=60) == os.SCHED_IDLE
    assert executor.submit(os.getpriority, os.PRIO_PROCESS, 0).result(timeout=60) == 19


@pytest_twisted.ensureDeferred
async def test_a_worker_is_at_the_lowest_priority_from_its_start() -> None:
    """A spawned worker starts a new interpreter and imports the engine (most of a second of
    CPU) before its initializer can lower its priority: the pool lowers it from the reactor's
    process as soon as the first search starts it, so that a host's tables do not wait while
    the workers start (``scripts/bench_table.py --host-bot search:0.5``: act p99 18-29 ms
    before, 10-14 ms after, docs/bots.md)."""
    fresh = BotPool(reactor, workers=1, timeout=TEST_DEADLINE)
    try:
        state = _position("classic", 1, 9)
        answer = fresh.choose(_bot("classic", 7), state)
        executor = fresh.executor
        assert executor is not None
        (pid,) = list(executor._processes)
        # at once, while the new interpreter is still starting
        assert os.getpriority(os.PRIO_PROCESS, pid) == 19
        if hasattr(os, "SCHED_IDLE"):
            assert os.sched_getscheduler(pid) == os.SCHED_IDLE
        assert await answer in state.legal_actions()
    finally:
        await fresh.shutdown()
