"""The host's queue of bot moves (``net/host.py``, ``BotTurns``): one per reactor, moves run in
order a slice at a time, and the registry of queues keeps no reactor alive."""

from __future__ import annotations

import functools
import gc
import time
import weakref
from collections.abc import Callable

from twisted.internet.task import Clock

from canasta_net.net.host import BotTurns, bot_turns


def test_one_queue_per_reactor_and_moves_run_in_order() -> None:
    clock, other = Clock(), Clock()
    assert bot_turns(clock) is bot_turns(clock)
    assert bot_turns(clock) is not bot_turns(other)
    ran: list[int] = []
    for n in range(5):
        bot_turns(clock).add(functools.partial(ran.append, n))
    assert ran == []  # a move waits for the reactor
    for _ in range(10):
        clock.advance(0)
    assert ran == [0, 1, 2, 3, 4]


class Pending:
    def __init__(self, reactor: Iterations, f: Callable[[], None]) -> None:
        self.reactor, self.f = reactor, f

    def active(self) -> bool:
        return self in self.reactor.pending


class Iterations:
    """A reactor that runs its pending calls one iteration at a time (a Clock runs the calls
    that a call makes for now in the same ``advance``)."""

    def __init__(self) -> None:
        self.pending: list[Pending] = []

    def callLater(self, delay: float, f: Callable[[], None]) -> Pending:
        call = Pending(self, f)
        self.pending.append(call)
        return call

    def iterate(self) -> None:
        now, self.pending = self.pending, []
        for call in now:
            call.f()


def test_a_slice_lets_the_reactor_in_between_moves() -> None:
    """Moves that take longer than a slice run one per reactor iteration."""
    reactor = Iterations()
    ran: list[int] = []

    def move(n: int) -> None:
        time.sleep(2 * BotTurns.SLICE)
        ran.append(n)

    for n in range(3):
        bot_turns(reactor).add(functools.partial(move, n))
    assert len(reactor.pending) == 1  # one call of the queue, however many moves
    reactor.iterate()
    assert ran == [0]
    reactor.iterate()
    assert ran == [0, 1]
    reactor.iterate()
    assert ran == [0, 1, 2] and reactor.pending == []


def test_the_registry_keeps_no_reactor_alive() -> None:
    """A test's Clock (and every table whose heartbeats it still holds) is freed once nothing
    else holds it: a module-level registry holding it kept each test's tables alive for the
    rest of the process."""
    clock = Clock()
    held: list[object] = [object()]
    clock.callLater(30, held.append, 1)  # a pending call, as a table's heartbeat is
    bot_turns(clock).add(lambda: None)  # its call still pending when the clock is let go
    alive = weakref.ref(clock)
    del clock
    gc.collect()
    assert alive() is None
