"""What a slow, silent or hostile peer can make the host hold (``net/limits.py``, ``net/host.py``):
deadlines, frame and byte budgets, unread output, heartbeats, chat and password rates, and the
host's connection events. Without sockets: StringTransport and a Clock (``test_table_protocol``)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from test_table_protocol import (
    Harness,
    Remote,
    classic,
    config,
    frame,
    hello,
    inject,
    only_error,
    stranger,
)
from twisted.logger import ILogObserver, LogEvent, globalLogPublisher
from zope.interface import provider

from canasta_net.net.limits import (
    HandshakeGate,
    HostLimits,
    PasswordGuard,
    TokenBucket,
    UnauthenticatedBudget,
)


def aborted(peer: Remote) -> bool:
    """The host ended the connection: closed it after its last frame, or aborted it."""
    assert peer.transport is not None
    return bool(peer.transport.disconnecting) or peer.conn is None or peer.conn.dropped


def test_a_token_bucket_gives_its_burst_then_its_rate() -> None:
    bucket = TokenBucket(3, 0.5, now=0.0)
    assert [bucket.take(0.0) for _ in range(4)] == [True, True, True, False]
    assert bucket.wait() == 2.0
    assert not bucket.take(1.0) and bucket.take(2.0)


def test_the_password_guard_waits_longer_then_locks_out_per_address_and_key() -> None:
    limits = HostLimits(password_free_tries=2, password_lockout_after=5)
    guard = PasswordGuard(limits)
    for _ in range(2):
        assert guard.check(0.0, "addr", b"key") is None
        guard.failed(0.0, "addr", b"key")
    refusal = guard.check(0.5, "other address", b"key")  # the key waits, from any address
    assert refusal is not None and refusal.code == "rate-limited"
    assert guard.check(1.0, "addr", b"other key") is None  # the wait is over
    guard.failed(1.0, "addr", b"key")
    assert guard.check(2.5, "addr", b"key") is not None  # now 2 s
    assert guard.check(3.0, "addr", b"key") is None
    for t in (3.0, 7.0, 20.0):
        guard.failed(t, "addr", b"key")
    locked = guard.check(100.0, "addr", b"new key")
    assert locked is not None and locked.code == "locked-out"
    guard.succeeded("addr", b"key")
    assert guard.check(100.0, "addr", b"key") is None


def test_the_unauthenticated_budget_evicts_the_oldest_to_admit_a_newcomer() -> None:
    budget: UnauthenticatedBudget[str] = UnauthenticatedBudget(
        HostLimits(max_unauthenticated=3, max_unauthenticated_per_address=2)
    )
    assert budget.admit("a1", "A") == [] and budget.admit("a2", "A") == []
    assert [c for c, _ in budget.admit("a3", "A")] == ["a1"]  # its address's share
    assert budget.admit("b1", "B") == []
    assert [c for c, _ in budget.admit("c1", "C")] == ["a2"]  # the oldest of all
    assert budget.hold("b1", 100) and budget.held_total == 100
    budget.release("b1")
    assert budget.held_total == 0 and len(budget) == 2


def test_a_hello_frame_is_small_and_partial_frames_have_a_shared_budget() -> None:
    # Before: a connection without a seat could park a 2 MiB frame, less a byte, for ever.
    h = Harness(config(classic(100)))
    mallory = stranger(h)
    mallory.raw(struct.pack(">I", 2 << 20) + b"x" * 100)
    assert aborted(mallory)
    small = Harness(config(classic(100)))
    small.service.limits = small.service.unauthenticated.limits = HostLimits(
        max_unauthenticated_bytes=10_000
    )
    peers = [stranger(small, f"m{i}") for i in range(3)]
    for peer in peers:
        peer.raw(struct.pack(">I", 8000) + b"x" * 4000)
    assert [aborted(p) for p in peers] == [False, False, True]


def test_the_handshake_and_hello_have_deadlines_and_the_peer_hears_why() -> None:
    h = Harness(config(classic(100)))
    silent, late = stranger(h, "silent"), stranger(h, "late")
    assert late.conn is not None
    h.clock.advance(5)
    late.conn.handshakeCompleted()
    h.clock.advance(4.9)
    assert not aborted(silent) and not aborted(late)
    h.clock.advance(0.2)
    assert aborted(silent)  # no handshake in 10 s
    late.collect()
    assert not aborted(late)
    h.clock.advance(5)
    assert [m["code"] for m in late.collect() if m["t"] == "error"] == ["timeout"]
    assert aborted(late)


def test_a_seated_peer_is_pinged_and_a_silent_one_is_dropped_and_held() -> None:
    h = Harness(config(classic(100)))
    h.service.limits = HostLimits()  # heartbeats as a real host has them
    alice = h.remote("alice")
    h.run()
    bob = h.remote("bob", auto=False)  # never answers anything
    assert bob.conn is not None
    bob_conn = bob.conn
    bob_conn.limits = h.service.limits
    h.run()
    h.clock.advance(5)
    assert {"t": "ping"} in bob.collect()
    h.run()  # alice answers hers
    h.clock.advance(5)
    h.run()
    assert not aborted(bob)
    h.clock.advance(5)  # 10 s after the ping without a word
    h.run()
    assert bob_conn.dropped and bob_conn.drop_reason is not None
    assert bob_conn.drop_reason.startswith("silent")
    assert bob.conn is None  # closed, as TCP reports it to the host
    assert h.service.slots[2].life.state.value == "away"  # held for its player
    assert not aborted(alice)


def test_a_peer_that_reads_nothing_is_not_read_and_is_dropped_past_the_cap() -> None:
    # Before: the host queued every answer for a peer that never read, without limit.
    h = Harness(config(classic(100)))
    mallory = stranger(h)
    conn, transport = mallory.conn, mallory.transport
    assert conn is not None and transport is not None
    # registered for backpressure (against mallory.conn: mypy forgets conn is not None after `is`)
    assert transport.producer is mallory.conn and transport.streaming
    conn.limits = HostLimits(max_unsent=2000)
    conn.pauseProducing()  # what TCP does once its buffer to the peer is full
    assert transport.producerState == "paused"  # the host stops reading from it
    before = len(transport.value())
    mallory.raw(frame({"t": "act", "act": b"", "asig": b""}) * 3)
    assert len(transport.value()) == before  # the requests wait in the socket, not answered
    conn.resumeProducing()
    assert transport.producerState == "producing"
    assert len(transport.value()) > before  # answered once it reads again
    conn.pauseProducing()
    for _ in range(40):
        conn.send_error("no-seat", "x" * 100)
    assert conn.dropped and conn.drop_reason is not None
    assert conn.drop_reason.startswith("slow-reader")


def test_a_chat_flood_is_refused_and_nothing_is_logged() -> None:
    h = Harness(config(classic(100)))
    alice, bob = h.remote("alice"), h.remote("bob")
    h.run()
    chats = []
    for i in range(8):
        message = bob.session.chat(f"spam {i}")
        assert message is not None
        chats.append(message)
    log_before = len(h.log_bytes())
    codes: list[str] = []
    for i, message in enumerate(chats):
        answers = inject(h, bob, message)
        codes += [m["code"] for m in answers if m["t"] == "error"]
        assert bob.session.agent is not None
        bob.session.agent.aseq = h.table.next_aseq[2]  # as a prompt would resynchronise it
        if i + 1 < len(chats):
            chats[i + 1] = bob.session.chat(f"spam {i + 1}") or chats[i + 1]
    assert codes == ["rate-limited"] * 3
    written = len(h.log_bytes()) - log_before
    h.clock.advance(2)  # a token comes back
    message = bob.session.chat("later")
    assert message is not None and not [m for m in inject(h, bob, message) if m["t"] == "error"]
    assert written > 0 and alice.conn is not None


def test_password_guessing_slows_down_then_is_locked_out() -> None:
    # Before: every guess was checked at once, 466 a second, for ever.
    h = Harness(config(classic(100), password="sesame"))
    codes = []
    for i in range(30):
        mallory = stranger(h)
        answers = inject(h, mallory, hello(password=f"guess {i}"))
        codes += [m["code"] for m in answers if m["t"] == "error"]
        assert aborted(mallory)
        mallory.drop()
        h.clock.advance(0.5)
    assert codes[:5] == ["bad-password"] * 5
    assert "rate-limited" in codes[5:] and codes.count("bad-password") < 12
    h.clock.advance(10_000)
    for i in range(40):
        mallory = stranger(h)
        inject(h, mallory, hello(password=f"again {i}"))
        mallory.drop()
        h.clock.advance(60)
    mallory = stranger(h)
    answers = inject(h, mallory, hello(password="sesame"))
    assert [m["code"] for m in answers if m["t"] == "error"] == ["locked-out"]


def test_connection_events_are_logged_with_why() -> None:
    events: list[LogEvent] = []

    @provider(ILogObserver)
    def keep(event: LogEvent) -> None:
        if event.get("log_namespace") == "canasta_net.net.host.connections":
            events.append(event)

    globalLogPublisher.addObserver(keep)
    try:
        h = Harness(config(classic(100), password="sesame"))
        mallory = stranger(h)
        inject(h, mallory, hello(password="wrong"))
        mallory.drop()
    finally:
        globalLogPublisher.removeObserver(keep)
    kinds: list[tuple[Any, ...]] = [(e["event"], e.get("code")) for e in events]
    assert kinds == [("accepted", None), ("refused", "bad-password"), ("dropped", None)]
    assert events[-1]["why"].startswith("bad-password")
    assert events[0]["address"] == "192.168.1.1"


def test_the_handshake_gate_lets_a_burst_through_then_one_per_token_in_order() -> None:
    gate: HandshakeGate[str] = HandshakeGate(
        HostLimits(handshake_burst=2, handshakes_per_second=4.0), now=0.0
    )
    assert [gate.arrive(c, 0.0) for c in ("a", "b", "c", "d", "e")] == [True, True] + [False] * 3
    assert gate.wait() == 0.25 and gate.due(0.1) == []
    gate.discard("d")  # closed while it waited
    assert gate.due(0.25) == ["c"] and gate.due(0.5) == ["e"]
    assert gate.wait() is None
    assert not gate.arrive("f", 0.5)  # no token left: it waits for the next one
    assert gate.due(0.75) == ["f"]


def paused(peer: Remote) -> bool:
    assert peer.transport is not None
    return bool(peer.transport.producerState == "paused")


def test_new_connections_wait_unread_for_their_handshake_and_a_seated_player_gets_back() -> None:
    # Before: every new connection's TLS handshake ran at once on the reactor that serves the
    # seated players; a password guesser opening one connection per guess cost them 38 ms at p99.
    h = Harness(config(classic(100)))
    limits = HostLimits(handshake_burst=2, handshakes_per_second=2.0)
    h.service.limits = h.service.unauthenticated.limits = limits
    h.service.handshakes = HandshakeGate(limits, h.clock.seconds())
    guessers = [stranger(h, f"guesser {i}") for i in range(4)]
    assert [paused(g) for g in guessers] == [False, False, True, True]
    guessers[2].drop()  # it gave up while it waited: its turn goes to the next one
    alice = h.remote("alice", connect=False, auto=False)
    alice.connect(hello=False)
    assert paused(alice)
    h.clock.advance(0.5)
    assert not paused(guessers[3]) and paused(alice)
    h.clock.advance(0.5)
    assert not paused(alice)  # within a second: its turn came, it is read
    answers = inject(h, alice, alice.session.hello())
    assert [m["t"] for m in answers][:1] == ["welcome"]


def test_a_password_is_checked_off_the_reactor_while_seated_players_play_on() -> None:
    # Before: each check was a scrypt on the reactor's thread (tens of milliseconds); a guesser
    # held up every seated player's move (seated p99 41 ms in the hostile-peer suite).
    from twisted.internet.defer import Deferred

    from canasta_net.net.password_checks import PasswordChecks

    h = Harness(config(classic(100), password="sesame"))
    alice, bob = h.remote("alice", connect=False), h.remote("bob", connect=False)
    for peer in (alice, bob):
        peer.session.password = "sesame"
        peer.connect()
    h.run()
    held: list[tuple[Callable[[], bool], Deferred[bool]]] = []

    def hold(matches: Callable[[], bool]) -> Deferred[bool]:
        held.append((matches, Deferred()))
        return held[-1][1]

    h.service.password_checks = PasswordChecks(h.clock, run_in_thread=hold)
    guessers = [stranger(h, f"guesser {i}") for i in range(PasswordChecks.MAX_WAITING + 1)]
    answers = [inject(h, g, hello(password=f"guess {i}")) for i, g in enumerate(guessers)]
    assert answers[:-1] == [[]] * PasswordChecks.MAX_WAITING  # they wait for their checks
    only_error(answers[-1], "rate-limited")  # one too many waiting: refused at once
    assert len(held) == 1  # one scrypt at a time
    # a seated player's message is answered while the checks wait
    message = alice.session.chat("still here")
    assert message is not None
    assert not [m for m in inject(h, alice, message) if m["t"] == "error"]
    assert h.log_bytes().count(b"still here") == 1
    # the first check ends: its guesser is refused, and the next check starts
    matches, answer = held[0]
    answer.callback(matches())
    assert aborted(guessers[0]) and not aborted(guessers[1])
    assert len(held) == 2
