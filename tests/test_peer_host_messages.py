"""A seat facing a host that sends malformed messages, without sockets.

Every host message is checked against its nested schema before the seat uses it: a message that
breaks it (a ``welcome`` whose table lacks its ``table_id``, a ``seats`` list of numbers) is host
misbehaviour. The seat says which field was wrong and leaves, and its connection service stops
instead of reconnecting for ever to a host that would send the same again.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from twisted.internet.defer import Deferred, succeed
from twisted.internet.error import ConnectionDone
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure

from canasta_net import i18n
from canasta_net.canasta.rules import preset
from canasta_net.games import game_of_rules
from canasta_net.identity import Identity
from canasta_net.net import wire
from canasta_net.net.peer import PeerFactory, PeerSession, connect_with_retry

Message = dict[str, Any]

TABLE_ID = bytes(range(16))
SEATS = [
    {"seat": s, "name": name, "bot": s == 0, "connected": True, "taken": True}
    for s, name in enumerate(["host", "ada"])
]
TABLE = {
    "name": "test table",
    "game": "canasta",
    "variant": "classic-2p",
    "rules": game_of_rules(preset("classic-2p")).rules_dict(),
    "table_id": TABLE_ID,
    "seats": SEATS,
    "deal": "commit-reveal",
}
WELCOME: Message = {
    "t": "welcome",
    "version": 1,
    "seat": 1,
    "table": TABLE,
    "aseq": 0,
    "head": bytes(32),
}


class RecordingPlayer:
    """A player that only listens."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.finished_reason: str | None = None

    def show(self, view: dict[str, Any]) -> None:
        pass

    def event(self, text: str) -> None:
        self.events.append(text)

    def choose(self, legal: list[str], view: dict[str, Any]) -> str:
        return legal[0]

    def finished(self, reason: str) -> None:
        self.finished_reason = reason


def new_session() -> tuple[PeerSession, RecordingPlayer]:
    player = RecordingPlayer()
    session = PeerSession(Identity.from_seed(b"peer host messages"), player, name="ada")
    return session, player


def without(message: Message, *keys: Any) -> Message:
    """A copy of ``message`` without the value at the path ``keys``."""
    copy = replaced(message, keys, None, delete=True)
    assert isinstance(copy, dict)
    return copy


def replaced(message: Any, keys: tuple[Any, ...], value: Any, *, delete: bool = False) -> Any:
    if not keys:
        return value
    copy = dict(message) if isinstance(message, dict) else list(message)
    head, *rest = keys
    if delete and not rest:
        del copy[head]
    else:
        copy[head] = replaced(copy[head], tuple(rest), value, delete=delete)
    return copy


def frame(message: Message) -> bytes:
    data = wire.encode(message)
    return struct.pack(">I", len(data)) + data


def test_a_well_formed_welcome_seats_the_peer() -> None:
    session, player = new_session()
    sent: list[Message] = []
    session.handle(WELCOME, sent.append)
    assert session.problem is None and not session.done
    assert session.seat == 1 and session.signer is not None and session.names == ["host", "ada"]
    session.handle({"t": "seats", "seats": SEATS}, sent.append)
    assert player.events[-1] == "seats taken: 2 of 2" and sent == []


MALFORMED = [
    # the two messages of the bug report: KeyError and TypeError inside the seat, before
    (without(WELCOME, "table", "table_id"), "welcome.table.table_id: missing"),
    ({"t": "seats", "seats": [1, 2]}, "seats.seats[0]: must be map, not int"),
    (without(WELCOME, "table", "rules"), "welcome.table.rules: missing"),
    (replaced(WELCOME, ("table", "seats", 1, "name"), None), "welcome.table.seats[1].name"),
    (replaced(WELCOME, ("table", "table_id"), b"short"), "welcome.table.table_id: must be bin"),
    (replaced(WELCOME, ("seat",), -1), "welcome.seat: must be a non-negative int"),
    ({"t": "seats", "seats": [without(SEATS[0], "taken")]}, "seats.seats[0].taken: missing"),
    ({"t": "turn", "need": "act", "hand": 0, "aseq": 0, "legal": [7]}, "turn.legal[0]"),
    ({"t": "turn", "need": "act", "hand": "0", "aseq": 0}, "turn.hand: must be int"),
    ({"t": "record", "seq": 0, "data": "text"}, "record.data: must be bin"),
    ({"t": "view", "view": {"state": None}}, "view.view.table: missing"),
    ({"t": "error", "code": 5, "message": "x"}, "error.code: must be str"),
    ({"t": "bye"}, "bye.reason: missing"),
    ({"t": "fly"}, "unknown message type 'fly'"),
    ({"t": "hello", "min": 1, "max": 1, "name": "x", "bot": False}, "a seat's message ('hello')"),
]


@pytest.mark.parametrize(("message", "named"), MALFORMED, ids=[m[1] for m in MALFORMED])
def test_a_malformed_host_message_is_misbehaviour_and_the_seat_leaves(
    message: Message, named: str
) -> None:
    session, player = new_session()
    sent: list[Message] = []
    if message["t"] != "welcome":
        session.handle(WELCOME, sent.append)
    session.handle(message, sent.append)
    assert session.done
    assert session.problem is not None and session.problem.startswith("the host misbehaved")
    assert named in session.problem
    assert player.finished_reason is not None and named in player.finished_reason
    assert sent == []
    # nothing the host says afterwards is taken
    session.handle({"t": "bye", "reason": "all is well"}, sent.append)
    assert player.finished_reason is not None and named in player.finished_reason


def test_a_malformed_frame_drops_the_connection_with_the_reason() -> None:
    session, _ = new_session()
    protocol = PeerFactory(session).buildProtocol(None)
    transport = StringTransport()
    protocol.makeConnection(transport)
    assert transport.value()  # the hello
    protocol.dataReceived(frame(without(WELCOME, "table", "table_id")))
    assert session.problem is not None and "welcome.table.table_id: missing" in session.problem
    assert transport.disconnecting


class MemoryEndpoint:
    """Connects every attempt at once to a StringTransport; keeps the protocols."""

    def __init__(self) -> None:
        self.protocols: list[Any] = []

    def connect(self, factory: Any) -> Deferred[Any]:
        protocol = factory.buildProtocol(None)
        protocol.makeConnection(StringTransport())
        self.protocols.append(protocol)
        return succeed(protocol)


def lose(protocol: Any) -> None:
    protocol.connectionLost(Failure(ConnectionDone()))


def test_the_seat_reconnects_after_a_lost_connection_but_not_after_leaving() -> None:
    clock = Clock()
    endpoint = MemoryEndpoint()
    session, player = new_session()
    service = connect_with_retry(clock, endpoint, session)
    assert len(endpoint.protocols) == 1
    # an honest host's connection drops: the seat connects again (after a backoff delay)
    endpoint.protocols[0].dataReceived(frame(WELCOME))
    lose(endpoint.protocols[0])
    assert "connection to the host lost; reconnecting" in player.events
    clock.advance(2)  # the first delay is 0.3 s plus up to 1 s of jitter
    assert len(endpoint.protocols) == 2 and service.running
    # the host sends a malformed welcome: the seat leaves, and stops connecting
    endpoint.protocols[1].dataReceived(frame(without(WELCOME, "table", "table_id")))
    assert session.done and session.problem is not None
    lose(endpoint.protocols[1])
    clock.advance(600)
    assert len(endpoint.protocols) == 2, "the seat connected again to a misbehaving host"
    assert not service.running
    assert clock.getDelayedCalls() == []


def test_the_seat_stops_connecting_when_the_match_is_over() -> None:
    clock = Clock()
    endpoint = MemoryEndpoint()
    session, player = new_session()
    service = connect_with_retry(clock, endpoint, session)
    endpoint.protocols[0].dataReceived(frame(WELCOME))
    endpoint.protocols[0].dataReceived(frame({"t": "bye", "reason": "the match is over"}))
    assert session.done and player.finished_reason == "the match is over"
    lose(endpoint.protocols[0])
    clock.advance(600)
    assert len(endpoint.protocols) == 1 and not service.running


def test_a_russian_reader_hears_of_the_lost_connection_and_the_leaving_in_russian() -> None:
    clock = Clock()
    endpoint = MemoryEndpoint()
    session, player = new_session()
    player.tr = i18n.translator("ru")  # type: ignore[attr-defined]  # the client's language
    connect_with_retry(clock, endpoint, session)
    endpoint.protocols[0].dataReceived(frame(WELCOME))
    lose(endpoint.protocols[0])
    assert "связь с хозяином стола потеряна; переподключаюсь" in player.events
    clock.advance(2)
    endpoint.protocols[1].dataReceived(frame(without(WELCOME, "table", "table_id")))
    assert player.finished_reason is not None
    assert player.finished_reason.startswith("ухожу из-за стола: ")
    lose(endpoint.protocols[1])
    clock.advance(600)
