"""Searching bots think in worker processes, so that a reactor never waits for a search.

A search takes its whole budget (0.5 s a move by default) of pure Python: run in the reactor's
thread it would stop every table, connection and timer of the process for that long. The
:class:`BotPool` runs each search (:meth:`BotPool.choose`, and hints: :meth:`BotPool.suggest_later`)
in a ``concurrent.futures.ProcessPoolExecutor`` and gives the result back as a Deferred that fires
in the reactor's thread.

How a result reaches the reactor: the executor completes a future in its own management thread;
the future's done-callback only hands it to ``reactor.callFromThread``, which is thread-safe and
wakes the reactor. No thread is blocked waiting for a search (``deferToThreadPool`` around a
blocking ``future.result()`` would hold one pool thread per search in flight, and the reactor's
thread pool is shared with DNS and the log writers).

What crosses to a worker: the searching bot's *information set* only
(:meth:`canasta_net.search.SearchBot.information_set`): the position with every card hidden from
the seat to move dealt in sorted order, plus the search's settings and a seed drawn from the bot's
own RNG. The worker searches exactly as the bot would in-process (the search samples from the
multiset of hidden cards), so the pool's choice equals the in-process choice for the same seed.

Limits, so that a table never hangs:

- at most ``workers`` processes (the CPU count), started when the first search comes, at a lower
  CPU priority than the reactor's process;
- at most ``workers * queue_per_worker`` searches in flight; a search asked beyond that is not
  queued: the bot plays the heuristic's choice (its policy's first candidate) at once;
- a deadline per search (the budget times the queue's depth, plus ``GRACE`` seconds): past it the
  bot plays the heuristic's choice; when no search at all has come back for two deadlines, the
  workers are stuck or dead, and the pool is started afresh (its processes ended; the other
  searches in flight fall back to the heuristic);
- a worker that dies does the same (``BrokenProcessPool``).

``bot_pool(reactor)`` gives the reactor's one pool; it shuts down (pending searches cancelled,
workers ended) before the reactor stops.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from twisted.internet import threads
from twisted.internet.defer import Deferred, succeed
from twisted.logger import Logger

from .hint import Suggestion, search_bot_for, suggestion_of
from .search import SearchBot, SearchGame

log = Logger()

GRACE = 5.0  # seconds a search may take beyond its budget and its wait in the queue
# workers take only the CPU that no table wants: Linux's idle policy where there is one, and the
# lowest niceness besides (at +5, two searching workers on a 2-core host of 100 busy tables put its
# action->broadcast p99 at 267 ms; at +19 50 ms, and under SCHED_IDLE 48 ms, bench_table)
WORKER_NICENESS = 19


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class SearchJob:
    """One search as a worker receives it: nothing of the position the seat may not see."""

    game: SearchGame
    position: dict[str, Any]  # the seat to move's information set
    seed: int
    budget: float
    simulations: int | None
    candidates: int
    horizon: int | None
    margin: float
    confidence: float
    duel: tuple[float, float] | None


@dataclass(frozen=True)
class SearchResult:
    action: str
    deals: int
    values: list[tuple[str, float]]  # each candidate's mean over the deals


def run_search(job: SearchJob) -> SearchResult:
    """In a worker: the search the bot would run in-process, from its information set."""
    bot = SearchBot(
        job.game,
        random.Random(0),  # unused: the seed is the bot's own, drawn in the reactor's process
        budget=job.budget,
        simulations=job.simulations,
        candidates=job.candidates,
        horizon=job.horizon,
        margin=job.margin,
        confidence=job.confidence,
    )
    bot.duel = job.duel
    state = job.game.from_dict(job.position)
    action = bot.search(job.position, bot.candidates_in(state), job.seed)
    return SearchResult(str(action), bot.deals_tried, [(str(a), v) for a, v in bot.last])


def lower_priority(pid: int) -> None:
    """Process ``pid`` at the lowest CPU priority: nice +19 and, on Linux, the idle policy."""
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, pid, WORKER_NICENESS)
    idle = getattr(os, "SCHED_IDLE", None)
    if idle is not None:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(pid, idle, os.sched_param(0))


def _lower_priority() -> None:
    """A worker's start: the tables' processes come first (a search on a busy host samples
    fewer deals in its budget, or its deadline gives the heuristic's move)."""
    lower_priority(0)


class BotPool:
    """Worker processes for searching bots (see the module docstring)."""

    def __init__(
        self,
        reactor: Any,
        workers: int | None = None,
        queue_per_worker: int = 2,
        timeout: float | None = None,
    ) -> None:
        self.reactor = reactor
        self.workers = workers or cpu_count()
        self.queue_per_worker = queue_per_worker
        self.timeout = timeout  # seconds a search may take, queue included (None: by budget)
        self.executor: ProcessPoolExecutor | None = None
        self.in_flight = 0
        self.progress = 0.0  # when a search last came back (or the workers were started)
        self._lowered: set[int] = set()  # the executor's workers put at the lowest priority
        self.closed = False
        # what happened to the searches asked for (for the benchmark and the tests)
        self.counts = {"searched": 0, "overloaded": 0, "timed_out": 0, "failed": 0}

    # ------------------------------------------------------------------ asking
    def choose(self, bot: SearchBot, state: Any) -> Deferred[Any]:
        """The searching ``bot``'s action for the seat to move in ``state`` (one of its legal
        actions). A move with one candidate is answered at once, without a worker; a search the
        pool cannot run in time is answered by the heuristic's choice. ``bot.last`` and
        ``bot.deals_tried`` tell what the search found (empty and 0 when it did not run)."""
        tried = bot.candidates_in(state)
        if len(tried) == 1:
            bot.deals_tried, bot.last = 0, [(tried[0], 0.0)]
            return succeed(tried[0])
        by_text = {str(a): a for a in tried}

        def answer(result: SearchResult | None) -> Any:
            if result is None or result.action not in by_text:
                bot.deals_tried, bot.last = 0, []
                return tried[0]  # the heuristic's choice
            bot.deals_tried = result.deals
            bot.last = [(by_text[t], v) for t, v in result.values if t in by_text]
            return by_text[result.action]

        seed = bot.rng.getrandbits(64)  # the same draw as an in-process search makes
        if self._full():  # answered now: the information set is not even built (40 us a move)
            self.counts["overloaded"] += 1
            return succeed(None).addCallback(answer)
        job = SearchJob(
            bot.game,
            bot.information_set(state),
            seed,
            bot.budget,
            bot.simulations,
            bot.candidates,
            bot.horizon,
            bot.margin,
            bot.confidence,
            bot.duel,
        )
        return self._submit(job).addCallback(answer)

    def suggest_later(
        self,
        state: Any,
        budget: float = 0.5,
        simulations: int | None = None,
        rng: random.Random | None = None,
    ) -> Deferred[Suggestion]:
        """``canasta_net.hint.suggest`` without blocking: the searching bot's move for the seat
        to move in ``state``, with its reason, once a worker has searched it."""
        bot = search_bot_for(state, rng or random.Random(), budget, simulations)
        d = self.choose(bot, state)
        return d.addCallback(lambda action: suggestion_of(action, bot.last, bot.deals_tried))

    @property
    def limit(self) -> int:
        """How many searches may be in flight: beyond, the heuristic answers at once."""
        return self.workers * self.queue_per_worker

    # ------------------------------------------------------------------ the workers
    def _lower_new_workers(self, executor: ProcessPoolExecutor) -> None:
        """Put a worker just started (a submit starts one while none is idle) at the lowest
        priority from here, at once: its own start (a new interpreter importing the engine,
        about 0.7 s of CPU) would otherwise run at the tables' priority; ``_lower_priority``
        in the worker comes only after it."""
        processes = getattr(executor, "_processes", None) or {}
        for pid in list(processes):
            if pid not in self._lowered:
                self._lowered.add(pid)
                lower_priority(pid)

    def _executor(self) -> ProcessPoolExecutor:
        if self.executor is None:
            self.progress = self.reactor.seconds()
            self._lowered = set()  # a new executor's workers (an old worker's pid may recur)
            # spawned, not forked: the reactor's process has threads (log writers, DNS)
            self.executor = ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_lower_priority,
            )
        return self.executor

    def _full(self) -> bool:
        """Whether a search asked now would not run: the pool is closed or at its limit."""
        return self.closed or self.in_flight >= self.limit

    def _submit(self, job: SearchJob) -> Deferred[SearchResult | None]:
        executor = self._executor()
        try:
            future = executor.submit(run_search, job)
        except (BrokenProcessPool, RuntimeError):
            self._restart(executor)
            self.counts["failed"] += 1
            return succeed(None)
        self._lower_new_workers(executor)
        self.in_flight += 1
        d: Deferred[SearchResult | None] = Deferred()
        deadline = self.timeout
        if deadline is None:
            deadline = job.budget * (self.queue_per_worker + 1) + GRACE

        def expired() -> None:
            self.counts["timed_out"] += 1
            d.callback(None)
            # no search at all has come back for two deadlines (the workers' start included):
            # they are stuck or dead; end them, start afresh. One slow search is not enough (a
            # future counts as running as soon as it is handed to the workers' queue)
            if self.reactor.seconds() - self.progress > 2 * deadline:
                self._restart(executor)

        timer = self.reactor.callLater(deadline, expired)

        def arrived(done: Future[SearchResult]) -> None:
            self.in_flight -= 1
            self.progress = self.reactor.seconds()
            if d.called:
                return  # past its deadline: the heuristic played already
            timer.cancel()
            try:
                result = done.result()
            except (BrokenProcessPool, CancelledError) as e:
                if not self.closed:
                    log.warn("a search worker failed: {error!r}", error=e)
                    self._restart(executor)
                self.counts["failed"] += 1
                d.callback(None)
                return
            except Exception as e:  # a bug in the search: play on with the heuristic
                log.failure("a search failed: {error!r}", error=e)
                self.counts["failed"] += 1
                d.callback(None)
                return
            self.counts["searched"] += 1
            d.callback(result)

        # called in the executor's thread (or at once in this one if already done)
        future.add_done_callback(lambda done: self.reactor.callFromThread(arrived, done))
        return d

    def _restart(self, executor: ProcessPoolExecutor) -> None:
        """End ``executor``'s workers (if it is still the pool's); the next search starts new."""
        if self.executor is executor:
            self.executor = None
            pool = self.reactor.getThreadPool()  # joining processes is not the reactor's work
            threads.deferToThreadPool(self.reactor, pool, _end, executor, False)

    def shutdown(self) -> Deferred[None]:
        """Cancel the searches not started, end the workers (a running search is given
        ``GRACE`` seconds); fires when they are gone. Searches asked afterwards are answered by
        the heuristic."""
        self.closed = True
        executor, self.executor = self.executor, None
        if executor is None:
            return succeed(None)
        return threads.deferToThreadPool(
            self.reactor, self.reactor.getThreadPool(), _end, executor, True
        )


def _end(executor: ProcessPoolExecutor, wait: bool) -> None:
    """Shut ``executor`` down: pending work cancelled, its processes ended (terminated if
    ``wait`` is False or they outlive ``GRACE``)."""
    # the executor keeps its processes in a private dict; Python 3.11 has no public way to end a
    # worker that is running a task (3.14's terminate_workers)
    processes = list(getattr(executor, "_processes", {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if wait:
            process.join(GRACE)
        if process.is_alive():
            process.terminate()
            process.join(1.0)


_pools: dict[int, BotPool] = {}


def bot_pool(reactor: Any) -> BotPool:
    """The reactor's one pool of search workers, shut down before the reactor stops."""
    key = id(reactor)
    pool = _pools.get(key)
    if pool is None or pool.reactor is not reactor or pool.closed:
        pool = BotPool(reactor)
        _pools[key] = pool
        reactor.addSystemEventTrigger("before", "shutdown", pool.shutdown)
    return pool
