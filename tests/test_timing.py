"""The timing hook (``canasta_net.timing``): the Recorder, the do-nothing default, and the points
the library reports at, counted over whole matches played in memory."""

from __future__ import annotations

import io
import random
from collections import Counter
from collections.abc import Iterator

import pytest
from test_table_protocol import Harness, classic, config
from twisted.internet.testing import StringTransport

from canasta_net.canasta.rules import preset
from canasta_net.identity import Identity
from canasta_net.net.host import HostConnection
from canasta_net.net.peer import PeerProtocol, PeerSession
from canasta_net.table.host import TablePhase
from canasta_net.table.local import recorded_match
from canasta_net.timing import NO_TIMING, Recorder, Timing
from canasta_net.ui.players import BotPlayer


def ticks(*readings: float) -> Iterator[float]:
    return iter(readings)


def test_recorder_keeps_span_durations_and_mark_times_per_name() -> None:
    clock = ticks(1.0, 1.25, 2.0, 3.0, 3.5, 4.0, 4.5)
    rec = Recorder(clock=lambda: next(clock))
    with rec.span("log.sync"):
        pass
    rec.mark("host.prompt", table=b"t", seat=1)
    with rec.span("log.sync", extra=1):
        pass
    with pytest.raises(RuntimeError), rec.span("table.submit", seat=2):
        raise RuntimeError("a step that fails took its time too")
    assert rec.spans == {"log.sync": [0.25, 0.5], "table.submit": [0.5]}
    assert rec.marks == {"host.prompt": [2.0]}
    assert rec.details["host.prompt"] == [{"table": b"t", "seat": 1}]
    assert rec.details["log.sync"] == [{}, {"extra": 1}]
    assert rec.count("log.sync") == 2 and rec.count("host.prompt") == 1
    assert rec.count("seat.send") == 0


def test_no_timing_does_nothing() -> None:
    timing: Timing = NO_TIMING
    with timing.span("host.handle", t="act", act=b"", conn=None) as inside:
        assert inside is None
    timing.mark("seat.receive", message={}, session=None)
    assert vars(timing) == {}  # nothing kept, by the span or the mark


def test_a_local_match_reports_each_submit_and_each_sync() -> None:
    rec = Recorder()
    match = recorded_match(preset("classic"), io.BytesIO(), seed=5, timing=rec)
    submitted: Counter[str] = Counter()
    take = match.host.take_message

    def counting(seat: int, message: dict[str, object], **options: bool) -> object:
        submitted[str(message["t"])] += 1
        return take(seat, message, **options)

    match.host.take_message = counting  # type: ignore[assignment,method-assign]
    match.play(max_hands=1)
    assert match.host.match.hands_played == 1
    # every message but the checkpoints goes through HostTable.submit, once
    assert rec.count("table.submit") == sum(submitted.values()) - submitted["checkpoint"] > 0
    assert [d["seat"] for d in rec.details["table.submit"]].count(0) > 0
    # one sync per record written, the header included
    assert rec.count("log.sync") == len(match.host.history) == match.host.writer.next_seq
    assert all(d >= 0 for d in rec.spans["log.sync"])


def test_a_hosted_match_reports_the_host_and_the_seats_steps() -> None:
    rec = Recorder()
    h = Harness(config(classic(100)))
    h.service.timing = rec  # before the table starts: its HostTable and LogWriter get it too
    a, b = h.remote("alice"), h.remote("bob")
    for peer in (a, b):
        peer.session.timing = rec
    h.run_to_end()
    table = h.table
    assert table.phase is TablePhase.OVER
    sent = a.sent + b.sent
    received = a.received + b.received
    # each message a seat sent was handled once, with its type and act bytes
    assert rec.count("host.handle") == len(sent)
    assert Counter(d["t"] for d in rec.details["host.handle"]) == Counter(m["t"] for m in sent)
    acts = sorted(d["act"] for d in rec.details["host.handle"] if d["t"] == "act")
    assert acts == sorted(m["act"] for m in sent if m["t"] == "act") and acts
    assert all(isinstance(d["conn"], HostConnection) for d in rec.details["host.handle"])
    # one sync per record
    assert rec.count("log.sync") == len(table.history)
    # each signed message of a seat was submitted once (checkpoints are not: they are no act)
    assert a.errors() == b.errors() == []
    by_seat = Counter(d["seat"] for d in rec.details["table.submit"])
    signed = [m for m in sent if m["t"] in ("commit", "reveal", "act", "chat")]
    assert by_seat[1] + by_seat[2] == len(signed)
    # and the host's bots (seats 0 and 3) submitted from their turns
    assert {d["seat"] for d in rec.details["host.bot-turn"]} == {0, 3}
    assert 0 < by_seat[0] + by_seat[3] <= rec.count("host.bot-turn")
    assert set(by_seat) == {0, 1, 2, 3}
    # every prompt the seats received was marked as sent; the seats saw every message
    assert rec.count("host.prompt") == sum(1 for m in received if m["t"] == "turn")
    assert {(d["table"], d["seat"]) for d in rec.details["host.prompt"]} == {
        (table.table_id, 1),
        (table.table_id, 2),
    }
    assert rec.count("seat.receive") == len(received)
    assert rec.count("seat.record") == sum(1 for m in received if m["t"] == "record")
    assert rec.count("host.publish") > 0


def test_a_seat_reports_its_sends_with_the_message_and_transport() -> None:
    rec = Recorder()
    session = PeerSession(
        Identity.from_seed(b"timing seat"),
        BotPlayer("greedy", random.Random(1), lambda: None),
        name="t",
        timing=rec,
    )
    proto = PeerProtocol(session)
    transport = StringTransport()
    proto.makeConnection(transport)
    assert rec.count("seat.send") == 1
    (details,) = rec.details["seat.send"]
    assert details["message"]["t"] == "hello"
    assert details["session"] is session and details["transport"] is transport
    assert transport.value()  # and it was sent
