"""Turns at reading the host's messages, for every connection of a process to its hosts.

A seat checks each record it is sent (signatures, the game at the hand's end) and journals it:
about a millisecond a record. A process that holds many connections (a client with seats at
several tables, ``scripts/bench_table.py``'s hundred seats) would otherwise handle, in one
reactor iteration, everything that arrived on every connection: tens or hundreds of ms, and a
seat's answer (its ``act``, which Twisted writes only in a later iteration) and the record that
confirms it would wait behind all of it.

So, when a process has several connections, a connection handles what it reads while the
process's share of the current iteration (:attr:`ReadTurns.SLICE` of handling) lasts; once it is
spent, the connection stops reading (its transport is paused, what it holds stays buffered) and
waits for a turn in a later iteration (a process's only connection reads as it comes). Each
later iteration gives the waiting connections one turn each, in order, while its share
lasts; a connection whose seat waits for the record of its move goes first, then one that holds
a prompt. Nothing is skipped or reordered within a connection: a connection's messages are
handled in the order they came, only later.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from operator import attrgetter
from typing import Any, Protocol


class TakesTurns(Protocol):
    """A connection that reads in turns."""

    @property
    def urgency(self) -> int:
        """How soon it should read: 0 its seat waits for the answer to its move, 1 it holds a
        prompt, 2 neither. Lower goes first."""
        ...

    def take_turn(self) -> None:
        """Handle what it holds while the process's share of the iteration lasts."""
        ...


class ReadTurns:
    """The turns of one reactor's connections (see the module's docstring)."""

    # Seconds of message handling per reactor iteration, for all the process's connections: a
    # record takes 0.3-1.5 ms, so this is one to a few records, and an answer written meanwhile
    # goes out within a few ms.
    SLICE = 0.002
    # A share not spent within this long is renewed without waiting for a turn: the reactor has
    # gone round meanwhile (a process that keeps up never makes a connection wait).
    WINDOW = 4 * SLICE

    def __init__(self, clock: Any, timer: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.timer = timer
        self.spent = 0.0  # seconds of handling since the share was renewed
        self.since = timer()  # when it was renewed
        self.waiting: deque[TakesTurns] = deque()
        self.call: Any = None  # the next iteration's turns
        self.connections: set[TakesTurns] = set()  # open ones

    def join(self, connection: TakesTurns) -> None:
        """``connection`` is open: it shares the iterations with the others."""
        self.connections.add(connection)

    def has_room(self) -> bool:
        """Whether the current share has time left for another message (always, for a
        process's only connection: it has nobody to make room for)."""
        if len(self.connections) < 2:
            return True
        if self.call is None and self.timer() - self.since > self.WINDOW:
            self.spent, self.since = 0.0, self.timer()
        return self.spent < self.SLICE

    def spend(self, seconds: float) -> None:
        self.spent += seconds

    def end_share(self) -> None:
        """A connection sent the host a move: this iteration's handling ends with the message
        at hand, so that the reactor writes the move out at once (Twisted writes in its next
        pass); the other connections read in the next iteration. A player waits on a move's
        round trip, not on another table's records."""
        if len(self.connections) >= 2:
            self.spent = max(self.spent, self.SLICE)

    def wait(self, connection: TakesTurns) -> None:
        """``connection`` stopped reading: give it a turn in a later iteration."""
        if connection not in self.waiting:
            self.waiting.append(connection)
        if self.call is None:
            self.call = self.clock.callLater(0, self._turns)

    def forget(self, connection: TakesTurns) -> None:
        """``connection`` is gone: no turn for it."""
        self.connections.discard(connection)
        if connection in self.waiting:
            self.waiting.remove(connection)

    def _turns(self) -> None:
        """One iteration's turns: each waiting connection at most one, the urgent ones first,
        while the share lasts; the rest wait for the next iteration, in order."""
        self.call = None
        self.spent, self.since = 0.0, self.timer()
        queued = list(self.waiting)
        self.waiting.clear()
        queued.sort(key=_URGENCY)  # stable: order kept
        for index, connection in enumerate(queued):
            if index and self.spent >= self.SLICE:  # the first always has its turn
                # ahead of those that had their turn and wait again
                self.waiting.extendleft(reversed(queued[index:]))
                if self.call is None:
                    self.call = self.clock.callLater(0, self._turns)
                break
            connection.take_turn()


# A sort key without a Python frame a call: every iteration sorts tens of waiting connections.
_URGENCY = attrgetter("urgency")

_read_turns: dict[int, ReadTurns] = {}


def read_turns(clock: Any) -> ReadTurns:
    """The one :class:`ReadTurns` of the reactor (or test clock) ``clock``."""
    key = id(clock)
    turns = _read_turns.get(key)
    if turns is None or turns.clock is not clock:
        turns = _read_turns[key] = ReadTurns(clock)
    return turns


__all__ = ["ReadTurns", "TakesTurns", "read_turns"]
