"""Connections to hosts read in turns (``net/read_turns.py``): a process's share of a reactor
iteration, then the others' turn; a seat that waits for an answer goes first."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from twisted.internet.testing import StringTransport

from canasta_net.net import wire
from canasta_net.net.peer import PeerFactory, PeerProtocol
from canasta_net.net.read_turns import read_turns
from canasta_net.timing import NO_TIMING, Timing

COST = 0.001  # seconds each message takes to handle here (the share is two of them)


class Player:
    def event(self, text: str) -> None:
        pass

    def finished(self, reason: str) -> None:
        pass


class Session:
    """A host session that notes what it handles, each message taking ``COST`` of the clock
    the turns read."""

    done = False
    problem: str | None = None

    def __init__(self, name: str, handled: list[str], now: list[float]) -> None:
        self.name, self.handled, self.now = name, handled, now

    @property
    def player(self) -> Player:
        return Player()

    @property
    def timing(self) -> Timing:
        return NO_TIMING

    def hello(self) -> dict[str, Any]:
        return {"t": "hello"}

    def handle(self, message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        self.now[0] += COST
        self.handled.append(f"{self.name}{message['n']}")

    def quit(self, reason: str) -> dict[str, Any] | None:
        return None


def frames(*messages: dict[str, Any]) -> bytes:
    encoded = [wire.encode(m) for m in messages]
    return b"".join(struct.pack("!I", len(e)) + e for e in encoded)


class Reactor:
    """Calls made for the next reactor iteration, run one iteration at a time."""

    def __init__(self) -> None:
        self.due: list[tuple[Callable[..., object], tuple[Any, ...]]] = []

    def callLater(self, delay: float, f: Callable[..., object], *args: Any) -> object:
        assert delay == 0
        self.due.append((f, args))
        return object()

    def advance(self, seconds: float) -> None:
        """One iteration (what was due when it began)."""
        due, self.due = self.due, []
        for f, args in due:
            f(*args)


class Mover(Session):
    """A seat's session that answers each prompt with its move at once (a bot)."""

    def handle(self, message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        super().handle(message, send)
        if message["t"] == "turn":
            send({"t": "act", "n": message["n"]})


def setup(
    *names: str, session: type[Session] = Session
) -> tuple[Reactor, list[str], dict[str, PeerProtocol]]:
    clock = Reactor()
    now = [0.0]
    turns = read_turns(clock)
    turns.timer = lambda: now[0]
    assert turns.SLICE == 2 * COST
    handled: list[str] = []
    protocols = {}
    for name in names:
        protocol = PeerFactory(session(name, handled, now), clock=clock).buildProtocol(None)
        protocol.makeConnection(StringTransport())
        protocols[name] = protocol
    return clock, handled, protocols


def transport_of(protocol: PeerProtocol) -> StringTransport:
    # as object: mypy finds no StringTransport among ITransports (mypy-zope), nothing to narrow
    transport: object = protocol.transport
    assert isinstance(transport, StringTransport)
    return transport


def record(n: int) -> dict[str, Any]:
    return {"t": "record", "seq": n, "data": b"", "n": n}


def test_once_the_share_is_spent_connections_wait_for_a_later_turn_in_order() -> None:
    clock, handled, p = setup("a", "b")
    p["a"].dataReceived(frames(record(1), record(2), record(3)))
    p["b"].dataReceived(frames(record(1), record(2)))
    assert handled == ["a1", "a2"]  # the share is spent: the rest waits, unread
    assert p["a"].paused and p["b"].paused
    assert transport_of(p["a"]).producerState == "paused"
    clock.advance(0)  # the next iteration: each waiting connection a turn, in order
    assert handled == ["a1", "a2", "a3", "b1"]
    clock.advance(0)
    assert handled == ["a1", "a2", "a3", "b1", "b2"]
    assert not p["a"].paused and not p["b"].paused and not clock.due
    assert transport_of(p["b"]).producerState == "producing"


def test_a_seat_that_waits_for_the_answer_to_its_move_goes_first() -> None:
    clock, handled, p = setup("a", "b", "c")
    p["a"].dataReceived(frames(record(1), record(2), record(3)))
    p["b"].dataReceived(frames(record(1)))
    p["c"].send({"t": "act", "n": 0})  # c's move: the host answers with its record
    p["c"].dataReceived(frames(record(1)))
    assert handled == ["a1", "a2"]
    clock.advance(0)
    assert handled == ["a1", "a2", "c1", "a3"]  # c first; b waits for the next iteration
    clock.advance(0)
    assert handled[-1] == "b1"


def test_a_connection_that_holds_a_prompt_goes_first() -> None:
    clock, handled, p = setup("a", "b")
    p["a"].dataReceived(frames(record(1), record(2), record(3)))
    p["b"].dataReceived(frames(record(1), {"t": "turn", "n": 2}))
    clock.advance(0)
    assert handled == ["a1", "a2", "b1", "b2"]  # b's prompt, and the record before it, first


def test_a_lost_connection_gets_no_turn() -> None:
    clock, handled, p = setup("a", "b")
    p["a"].dataReceived(frames(record(1), record(2), record(3)))
    p["b"].dataReceived(frames(record(1)))
    p["a"].connectionLost()
    clock.advance(0)
    assert handled == ["a1", "a2", "b1"]


def test_the_record_of_a_move_goes_before_a_prompt() -> None:
    clock, handled, p = setup("a", "b", "c")
    p["a"].dataReceived(frames(record(1), record(2)))
    p["b"].dataReceived(frames({"t": "turn", "n": 1}))
    p["c"].send({"t": "act", "n": 0})
    p["c"].dataReceived(frames(record(1)))
    clock.advance(0)
    assert handled == ["a1", "a2", "c1", "b1"]


def test_a_turn_handles_a_message_however_small_the_share() -> None:
    clock, handled, p = setup("a", "b")
    read_turns(clock).SLICE = 0.0  # every message overruns the share
    p["a"].dataReceived(frames(record(1), record(2)))
    p["b"].dataReceived(frames(record(1)))
    assert handled == []
    clock.advance(0)
    assert handled == ["a1"]  # one connection an iteration, one message a turn
    clock.advance(0)
    clock.advance(0)
    assert handled == ["a1", "b1", "a2"]
    clock.advance(0)  # b's turn finds nothing more
    clock.advance(0)  # nor a's
    assert not clock.due and not p["a"].paused and not p["b"].paused


def test_a_process_s_only_connection_reads_as_it_comes() -> None:
    clock, handled, p = setup("a")
    p["a"].dataReceived(frames(record(1), record(2), record(3)))
    assert handled == ["a1", "a2", "a3"] and not clock.due


def test_a_seat_that_sends_its_move_ends_the_iterations_reading() -> None:
    # Twisted writes the move in the reactor's next pass: reading the rest of the share first
    # held it back (bench_table at 100 tables: the act's seat_write p50 4 ms, 2 ms after)
    clock, handled, p = setup("a", "b", session=Mover)
    p["a"].dataReceived(frames({"t": "turn", "n": 1}, record(2)))
    assert handled == ["a1"] and transport_of(p["a"]).value()
    p["b"].dataReceived(frames(record(1)))
    assert handled == ["a1"]  # the rest waits for the next iteration
    clock.advance(0)
    assert handled == ["a1", "a2", "b1"]


class Searched(bytes):
    """Unread bytes that count how often they are searched."""

    searches = 0

    def __contains__(self, part: object) -> bool:
        Searched.searches += 1
        return super().__contains__(part)  # type: ignore[operator]


def test_a_connection_s_unread_bytes_are_searched_for_a_prompt_once() -> None:
    # each iteration sorts the waiting connections by urgency: searching every buffer each time
    # was 8 % of the seats' process at 100 tables
    _, _, p = setup("a", "b")
    held = Searched(frames(record(1), {"t": "turn", "n": 2}))
    p["a"]._unprocessed = held
    assert [p["a"].urgency for _ in range(3)] == [1, 1, 1]
    assert Searched.searches == 1
    p["a"]._unprocessed = Searched(frames(record(3)))  # it read on: its new buffer is searched
    assert p["a"].urgency == 2 and Searched.searches == 2
    p["a"].send({"t": "act", "n": 0})
    assert p["a"].urgency == 0 and Searched.searches == 2
