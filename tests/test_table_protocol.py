"""The table protocol end to end without sockets: a TableService on a Clock, peers on fake wires.

Every connection is a ``HostConnection`` built by ``HostFactory`` on a ``StringTransport``; the
peer's identity comes from the transport (what TLS gives the real host). Peers are ``PeerSession``
objects with a ``BotPlayer`` (the real client code), or messages crafted by hand with a
``SeatSigner``. Frames travel both ways through the real framing code (4-byte length + msgpack).
"""

from __future__ import annotations

import dataclasses
import io
import os
import random
import struct
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from twisted.internet.defer import Deferred
from twisted.internet.error import ConnectionDone
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure

from canasta_net import bot_pool as bot_pool_module
from canasta_net.canasta.actions import parse_action
from canasta_net.canasta.rules import RuleSet, preset
from canasta_net.cards import face_text, parse_face
from canasta_net.deal.blind.schedule import labels_for_rules
from canasta_net.deal.shuffle import commitment
from canasta_net.errors import IllegalAction
from canasta_net.games import GameRules
from canasta_net.i18n import translator
from canasta_net.identity import Identity
from canasta_net.log import (
    SEAT_KEY_KIND,
    iter_records,
    open_log_for_writing,
    parse_header,
    parse_stored_record,
    redact_for_seat,
    verify_log,
)
from canasta_net.log import records as R
from canasta_net.log.replay import ReplayError, ReplayResult, replay_log
from canasta_net.log.seed_store import SeedStore
from canasta_net.net import wire
from canasta_net.net.host import (
    HostConnection,
    HostFactory,
    TableConfig,
    TableService,
    derived_identity,
)
from canasta_net.net.limits import HostLimits
from canasta_net.net.peer import PeerSession, SeatClient, describe_record
from canasta_net.search import SearchBot
from canasta_net.table.blind_seat import Background
from canasta_net.table.host import HostTable, TablePhase
from canasta_net.table.signer import SeatSigner
from canasta_net.ui.players import BotPlayer
from canasta_net.ui.table_model import TableModel
from canasta_net.ui.terminal_view import render_view
from replay.audit import audit_source

HOST = Identity.from_seed(b"protocol test host")
TABLE_ID = bytes(range(16))
HOST_SEED = 7  # the host's insecure seed; peers use others, so no seat can guess another's seed
HOLD = 30.0
Message = dict[str, Any]


def classic(target: int = 5000) -> RuleSet:
    return preset("classic").with_changes(target=target)


def config(rules: GameRules | None = None, players: int = 3, **kw: Any) -> TableConfig:
    """Seat 0 a bot playing with the host's key, seats 1.. remote players, bots for the rest."""
    return TableConfig.simple(
        "test table",
        rules or classic(),
        players,
        host_plays=False,
        insecure_seed=HOST_SEED,
        hold_seconds=HOLD,
        **kw,
    )


def frame(message: Message) -> bytes:
    return frame_bytes(wire.encode(message))


def frame_bytes(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def split_frames(buffer: bytearray) -> list[bytes]:
    """Cut whole frames off the front of ``buffer``."""
    out = []
    while len(buffer) >= 4:
        (length,) = struct.unpack(">I", buffer[:4])
        if len(buffer) < 4 + length:
            break
        out.append(bytes(buffer[4 : 4 + length]))
        del buffer[: 4 + length]
    return out


class Wire(StringTransport):
    """A fake connection: the peer's key is what TLS would have proven; frames are checked (and
    shown to ``watch``) as the host writes them, so a test can compare them with the host's state
    at that very moment."""

    def __init__(self, key: bytes) -> None:
        super().__init__()
        self.key = key
        self.watch: Callable[[Message], None] | None = None
        self._buffer = bytearray()
        self.messages: list[Message] = []
        self.frames: list[bytes] = []
        self.writes: list[list[str]] = []  # the types of the messages of each write

    def write(self, data: bytes) -> None:
        super().write(data)
        self._buffer += data
        self.writes.append([])
        for data_frame in split_frames(self._buffer):
            message = wire.decode(data_frame)
            wire.validate(message)  # every frame the host sends is on-schema, nested fields too
            assert message["t"] in wire.HOST_TO_PEER | wire.HOST_TO_WATCHER
            self.messages.append(message)
            self.frames.append(data_frame)
            self.writes[-1].append(message["t"])
            if self.watch is not None:
                self.watch(message)


def key_of(transport: Any) -> bytes:
    assert isinstance(transport, Wire)
    return transport.key


class RecordingBot(BotPlayer):
    """The greedy bot, keeping every line the session tells its player."""

    def __init__(self, events: list[str], rng: random.Random, game: Any) -> None:
        super().__init__("greedy", rng, game)
        self.events = events

    def event(self, text: str) -> None:
        self.events.append(text)


class Remote:
    """One peer: its identity, its connection (if any) and, usually, its PeerSession."""

    def __init__(
        self,
        harness: Harness,
        name: str,
        *,
        auto: bool = True,
        seed_store: SeedStore | None = None,
    ) -> None:
        self.harness = harness
        self.name = name
        self.identity = Identity.from_seed(f"protocol test peer {name}".encode())
        self.auto = auto
        self.seed_store = seed_store  # real random seeds kept on disk, instead of test seeds
        self.events: list[str] = []
        self.log = io.BytesIO()
        self.session = self._new_session()
        self.conn: HostConnection | None = None
        self.transport: Wire | None = None
        self.seen = 0  # messages of this connection already moved to ``pending``
        self.pending: list[Message] = []  # received, not yet handled by the session
        self.received: list[Message] = []  # everything the host sent, all connections
        self.sent: list[Message] = []
        self.watch: Callable[[Message], None] | None = None

    def _new_session(self) -> PeerSession:
        seed = sum(self.name.encode())
        player = RecordingBot(self.events, random.Random(seed), lambda: self.session.game)
        return PeerSession(
            self.identity,
            player,
            name=self.name,
            bot=True,
            log_file=self.log,
            insecure_seed=None if self.seed_store else 1000 + seed,
            seed_store=self.seed_store,
        )

    def restart(self) -> None:
        """The peer's process died and started again: the connection, the session's memory and
        its log file are gone; its identity (and seed store, if any) are not."""
        if self.conn is not None:
            self.drop()
        self.pending.clear()
        self.log = io.BytesIO()
        self.session = self._new_session()

    def connect(self, *, hello: bool = True) -> None:
        assert self.conn is None
        self.transport = Wire(self.identity.public_key)
        self.transport.watch = self.watch
        self.seen = 0
        conn = self.harness.factory.buildProtocol(None)
        conn.makeConnection(self.transport)
        self.conn = conn
        if hello:
            self.send(self.session.hello())

    def send(self, message: Message) -> None:
        self.sent.append(message)
        self.raw(frame(message))

    def raw(self, data: bytes) -> None:
        assert self.conn is not None
        self.conn.dataReceived(data)

    def collect(self) -> list[Message]:
        """Move what the host wrote since the last call to ``pending``; return it."""
        if self.transport is None:
            return []
        new = self.transport.messages[self.seen :]
        self.seen += len(new)
        self.pending.extend(new)
        self.received.extend(new)
        return new

    def replies(self) -> list[Message]:
        """Messages from the host not yet looked at, taken off ``pending`` unhandled."""
        self.collect()
        out, self.pending = self.pending, []
        return out

    @property
    def closing(self) -> bool:
        return self.transport is not None and bool(self.transport.disconnecting)

    def drop(self) -> None:
        """The connection is gone (as TCP would report it after the host closed it, or not)."""
        assert self.conn is not None
        self.collect()
        conn, self.conn = self.conn, None
        conn.connectionLost(Failure(ConnectionDone()))

    def errors(self) -> list[str]:
        return [m["code"] for m in self.received if m["t"] == "error"]


Stop = Callable[[Remote, Message], bool]


class Harness:
    def __init__(
        self,
        cfg: TableConfig,
        *,
        log_file: BinaryIO | None = None,
        log_path: Path | None = None,
        table: HostTable | None = None,
        random_bytes: Callable[[int], bytes] | None = None,
        background: Background | None = None,
    ) -> None:
        self.clock = Clock()
        self.log = log_file if log_file is not None else io.BytesIO()
        self.log_path = log_path
        self.cfg = cfg
        self.service = TableService(
            cfg,
            HOST,
            self.clock,
            self.log,
            table=table,
            fsync=False,
            random_bytes=random_bytes or random.Random(3).randbytes,
            table_id=TABLE_ID,
            # the clock jumps here while no message moves: only a long silence drops a seat
            limits=HostLimits(silence_limit=3600.0),
            background=background,
        )
        self.factory = HostFactory(self.service, key_of)
        self.remotes: list[Remote] = []

    def remote(
        self,
        name: str,
        *,
        connect: bool = True,
        auto: bool = True,
        seed_store: SeedStore | None = None,
    ) -> Remote:
        peer = Remote(self, name, auto=auto, seed_store=seed_store)
        self.remotes.append(peer)
        if connect:
            peer.connect()
        return peer

    @property
    def table(self) -> HostTable:
        assert self.service.table is not None
        return self.service.table

    def run(
        self, stop: Stop | None = None, *, hold: tuple[Remote, ...] = (), limit: int = 200_000
    ) -> tuple[Remote, Message] | None:
        """Deliver messages both ways until nothing moves, or until ``stop`` picks a message a
        peer is about to handle (returned, and left first in that peer's ``pending``). Peers in
        ``hold`` are slow: what the host sends them waits in their ``pending``."""
        for _ in range(limit):
            self.clock.advance(0)
            moved = False
            for peer in self.remotes:
                peer.collect()
                if peer in hold:
                    continue
                outbox: list[Message] = []
                while peer.pending:
                    message = peer.pending[0]
                    if stop is not None and stop(peer, message):
                        return peer, message
                    peer.pending.pop(0)
                    if peer.auto:
                        peer.session.handle(message, outbox.append)
                if peer.conn is not None and peer.closing:
                    peer.drop()
                    moved = True
                elif peer.conn is not None:
                    for message in outbox:
                        peer.send(message)
                        moved = True
            if not moved:
                return None
        raise AssertionError("the table never settled")

    def run_to_end(self) -> None:
        assert self.run() is None
        problems = [p.session.problem for p in self.remotes if p.session.problem]
        assert self.service.finished, f"the table is stuck in {self.table.phase}: {problems}"

    def log_bytes(self) -> bytes:
        if isinstance(self.log, io.BytesIO):
            return self.log.getvalue()
        assert self.log_path is not None
        self.log.flush()
        return self.log_path.read_bytes()


def turn_for(need: str, peer: Remote | None = None) -> Stop:
    def stop(who: Remote, message: Message) -> bool:
        return message["t"] == "turn" and message["need"] == need and who is (peer or who)

    return stop


def seat_copy(host_log: bytes, seat: int) -> bytes:
    return b"".join(redact_for_seat(record, seat) for record in iter_records(host_log))


def same_result(a: ReplayResult, b: ReplayResult) -> None:
    assert a.result == b.result
    assert a.match.scores == b.match.scores
    assert a.forfeit == b.forfeit
    assert [h.scores for h in a.hands] == [h.scores for h in b.hands]


def check_logs(h: Harness, *peers: Remote) -> ReplayResult:
    """The host's log verifies and replays; each peer's log is its redacted copy and agrees."""
    data = h.log_bytes()
    verify_log(data)
    result = replay_log(data)
    for peer in peers:
        seat = peer.session.seat
        assert seat is not None
        assert peer.session.problem is None, peer.session.problem
        assert peer.log.getvalue() == seat_copy(data, seat)
        report = verify_log(peer.log.getvalue())
        assert report.payload_seats <= {seat}
        same_result(replay_log(peer.log.getvalue()), result)
    return result


# --------------------------------------------------------------------------- a whole match


def test_full_match_two_remote_bots_two_host_bots() -> None:
    h = Harness(config())
    a, b = h.remote("alice"), h.remote("bob")
    h.run_to_end()
    table = h.table
    assert table.phase is TablePhase.OVER
    assert table.match.result is not None
    assert (a.session.seat, b.session.seat) == (1, 2)
    result = check_logs(h, a, b)
    assert result.result == table.match.result
    assert len(result.hands) == table.match.hands_played >= 1
    for peer in (a, b):
        assert peer.session.done and peer.received[-1] == {
            "t": "bye",
            "reason": "the match is over",
        }
        assert peer.errors() == []
        # each peer got every record exactly once, in order, the same bytes as its log
        records = [m for m in peer.received if m["t"] == "record"]
        assert [m["seq"] for m in records] == list(range(len(table.history)))
        assert b"".join(m["data"] for m in records) == peer.log.getvalue()


def test_a_match_stopped_at_the_tables_limit_ends_every_log_with_a_match_stop() -> None:
    """The seats take the host's match-stop as the last record (their replay checks it), then
    the bye; every copy ends with it."""
    h = Harness(config(max_hands=1))
    a, b = h.remote("alice"), h.remote("bob")
    h.run_to_end()
    assert h.table.phase is TablePhase.OVER and h.table.match.result is None
    check_logs(h, a, b)
    for peer in (a, b):
        assert peer.errors() == [] and peer.session.problem is None
        last = list(iter_records(peer.log.getvalue()))[-1]
        assert last.kind == R.MATCH_STOP and last.fields["reason"] == R.STOP_MAX_HANDS
        assert any("match stopped (max-hands) after 1 hand," in e for e in peer.events)
        assert peer.received[-1] == {"t": "bye", "reason": "the match is over"}


def test_a_seat_does_not_check_the_signatures_it_made_itself_again() -> None:
    # the seat signed them: the same bytes verify as they did (about 5 % of a seat's CPU)
    h = Harness(config(max_hands=1))
    a, b = h.remote("alice"), h.remote("bob")
    h.run_to_end()
    check_logs(h, a, b)
    for peer in (a, b):
        own = [
            record
            for record in iter_records(peer.log.getvalue())
            if record.action is not None and record.action["seat"] == peer.session.seat
        ]
        assert len(own) > 10 and peer.session.copy.verifier.own_signatures == len(own)


# --------------------------------------------------------------------------- hidden cards


def view_faces(value: Any, key: str = "") -> list[str]:
    """Every card face written anywhere in a view (meld labels like "Ks" and names aside)."""
    if key in ("label", "name"):
        return []
    if isinstance(value, dict):
        return [f for k, v in value.items() for f in view_faces(v, str(k))]
    if isinstance(value, list):
        return [f for v in value for f in view_faces(v, key)]
    if isinstance(value, str):
        try:
            return [face_text(parse_face(value))]
        except ValueError:
            return []
    return []


class SeatAuditor:
    """Checks, as the host writes it, every frame meant for one seat against the host's state."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.seat: int | None = None
        self.header: Any = None
        self.dealt: dict[int, list[int]] = {}  # this hand's dealt ids per seat (host's state)
        self.counts: Counter[str] = Counter()

    def __call__(self, message: Message) -> None:
        self.counts[message["t"]] += 1
        if message["t"] == "welcome":
            self.seat = message["seat"]
            assert set(message) == {"t", "version", "seat", "table", "aseq", "head"}
            return
        seat = self.seat
        table = self.h.service.table
        if message["t"] == "record":
            assert seat is not None and table is not None
            self.record(seat, table, message)
        elif message["t"] == "view":
            assert seat is not None and table is not None
            self.view(seat, table, message["view"])
        elif message["t"] == "turn":
            assert seat is not None and table is not None
            assert table.needs(seat) == message["need"]
            assert ("msg" in message) == (message["need"] == "checkpoint")
            if "legal" in message:
                assert message["need"] == "act"
                assert table.state is not None and table.state.to_move == seat
                legal = [str(a) for a in table.state.legal_actions()]
                assert message["legal"] == legal
            else:
                assert message["need"] != "act"

    def record(self, seat: int, table: HostTable, message: Message) -> None:
        record = parse_stored_record(message["data"], message["seq"], self.header)
        if record.index == 0:
            self.header = parse_header(record)
        assert set(record.private) <= {seat}, "another seat's private payload was sent"
        state = table.state
        if record.kind == R.DEAL:
            assert state is not None
            self.dealt = {s: sorted(state.hands[s]) for s in range(state.players)}
        payload = record.private.get(seat)
        if payload is None:
            return
        data = R.read_private(payload)
        others: set[int] = set()
        if state is not None:
            others = {c for s in range(state.players) if s != seat for c in state.hands[s]}
        dealt_to_others = {c for s, cards in self.dealt.items() if s != seat for c in cards}
        if record.kind == R.DEAL:
            assert data["hand"] == self.dealt[seat]
            assert not set(data["hand"]) & dealt_to_others
        elif record.kind == R.ACTION:
            assert not set(data["drawn"]) & dealt_to_others  # from the stock: dealt to nobody
            assert not set(data["drawn"] + data["picked_up"]) & others
        else:
            assert record.kind == R.REVEAL and set(data) == {"salt", "seed"}

    def view(self, seat: int, table: HostTable, view: Message) -> None:
        state = table.state
        if state is None:
            assert view["state"] is None
            assert view_faces(view) == []
            return
        mine = view["state"]
        assert mine["seat"] == seat
        assert Counter(mine["hand"]) == Counter(face_text(f) for f in state.hand_faces(seat))
        assert mine["hand_sizes"] == [len(cards) for cards in state.hands]
        public = [c for team in state.melds for m in team for c in m.cards]
        public += [c for reds in state.red_threes for c in reds]
        public += state.pile[-1:]
        expected = Counter(face_text(f) for f in state.faces(public))
        expected.update(face_text(f) for f in state.hand_faces(seat))
        # the cards each hand took with the pile, in everyone's sight (``shown``)
        expected.update(face_text(f) for known in state.shown for f in known)
        # every face a view shows is the seat's own or public: none from a hidden hand
        assert Counter(view_faces(view)) == expected


def test_no_seat_sees_another_seats_hidden_cards() -> None:
    h = Harness(config(classic(3000)))
    a, b = h.remote("alice", connect=False), h.remote("bob", connect=False)
    auditors = {}
    for peer in (a, b):
        auditors[peer.name] = peer.watch = SeatAuditor(h)
        peer.connect()
    h.run_to_end()
    check_logs(h, a, b)
    data = h.log_bytes()
    seeds = {r.fields["hand"]: r.fields["seeds"] for r in iter_records(data) if r.kind == R.SEEDS}
    assert len(seeds) >= 2
    for peer in (a, b):
        seat = peer.session.seat
        assert seat is not None
        counts = auditors[peer.name].counts
        assert counts["record"] == len(h.table.history) and counts["view"] > 100
        assert counts["turn"] > 50
        # no other seat's seed crosses this seat's wire before the hand's seeds record
        assert peer.transport is not None
        published = -1
        header = auditors[peer.name].header
        for raw, message in zip(peer.transport.frames, peer.transport.messages, strict=True):
            if message["t"] == "record" and message["seq"] > 0:
                record = parse_stored_record(message["data"], message["seq"], header)
                if record.kind == R.SEEDS:
                    published = record.fields["hand"]
            for hand, hand_seeds in seeds.items():
                if hand > published:
                    for other, seed in enumerate(hand_seeds):
                        assert other == seat or seed not in raw, (hand, other)


def test_the_client_counts_hands_from_1() -> None:
    """The log's first hand is hand 0; a person at a seat reads "hand 1", as replay does."""
    h, alice, _ = short_match()
    h.run_to_end()
    assert "hand 1 is dealt" in alice.events  # what the seat's player is told
    assert not any(line.startswith("hand 0 ") for line in alice.events)
    records = list(iter_records(h.log_bytes()))
    names = [slot.name for slot in h.service.slots]
    deals = [r for r in records if r.kind == R.DEAL]
    ends = [r for r in records if r.kind == R.HAND_END]
    assert deals[0].fields["hand"] == 0 and ends[0].fields["hand"] == 0
    assert describe_record(deals[0], names) == "hand 1 is dealt"
    assert (describe_record(ends[0], names) or "").startswith("hand 1 over: ")
    if len(deals) > 1:
        assert describe_record(deals[1], names) == "hand 2 is dealt"
    title = render_view({"table": "t", "hand_no": 0, "scores": [0, 0]}).splitlines()[0]
    assert title.startswith("== t == hand 1 ")


# --------------------------------------------------------------------------- bad input

STRANGER = Identity.from_seed(b"protocol test stranger")


def short_match(**kw: Any) -> tuple[Harness, Remote, Remote]:
    """Seat 0 a host bot, alice seat 1, bob seat 2, a bot seat 3; a match of a hand or two."""
    h = Harness(config(classic(100), **kw))
    return h, h.remote("alice"), h.remote("bob")


def inject(h: Harness, peer: Remote, message: Message | bytes) -> list[Message]:
    """Send one message (or raw bytes) on ``peer``'s connection; return the host's answers.

    The answers stay queued for the peer's session too (it is told of its refusals and sees any
    new prompt). The clock runs the calls the refusal scheduled (a re-prompt)."""
    assert peer.transport is not None
    before = len(peer.transport.messages)
    if isinstance(message, bytes):
        peer.raw(message)
    else:
        peer.send(message)
    h.clock.advance(0)
    return peer.transport.messages[before:]


def only_error(answers: list[Message], code: str) -> Message:
    errors = [m for m in answers if m["t"] == "error"]
    assert [e["code"] for e in errors] == [code], answers
    # ``args`` and ``variant``: an engine refusal's parameters (canasta_net/reasons.py)
    assert {"t", "code", "message"} <= set(errors[0]) <= {"t", "code", "message", "args", "variant"}
    assert errors[0]["message"]
    return errors[0]


def refused(
    h: Harness, peer: Remote, message: Message | bytes, code: str, *, reprompt: bool = True
) -> Message:
    """``message`` is refused with ``code``; the connection lives and nothing is written.

    A refusal by the table (not a schema error) prompts the seat again if the table waits for it;
    the new prompt replaces the one the peer holds (answering both would answer twice)."""
    records, aseq = len(h.table.history), list(h.table.next_aseq)
    peer.collect()
    held = [m for m in peer.pending if m["t"] == "turn"]
    answers = inject(h, peer, message)
    error = only_error(answers, code)
    assert not peer.closing
    assert len(h.table.history) == records and h.table.next_aseq == aseq
    prompts = [m for m in answers if m["t"] == "turn"]
    if held:
        assert prompts == (held[-1:] if reprompt else [])
    keep_last_prompt(peer)
    return error


def keep_last_prompt(peer: Remote) -> None:
    """Forget prompts a later one superseded (the host prompts again after a refusal)."""
    peer.collect()
    last = max((i for i, m in enumerate(peer.pending) if m["t"] == "turn"), default=-1)
    peer.pending = [m for i, m in enumerate(peer.pending) if m["t"] != "turn" or i == last]


def signer_for(h: Harness, peer: Remote, identity: Identity | None = None) -> SeatSigner:
    """Signs ``peer``'s next message as the peer would (or with another key)."""
    session = peer.session
    assert session.seat is not None and session.signer is not None
    signer = SeatSigner(
        identity or peer.identity,
        session.seat,
        TABLE_ID,
        session.signer.head,
        aseq=h.table.next_aseq[session.seat],
    )
    signer.secrets = dict(session.signer.secrets)  # the peer's own seeds
    return signer


def act_message(act: bytes, asig: bytes) -> Message:
    return {"t": "act", "act": act, "asig": asig}


def reconnect(peer: Remote) -> None:
    """The peer comes back on a new connection (same identity, same session, resume)."""
    if peer.conn is not None:
        peer.drop()
    peer.pending.clear()  # what the old connection still held is lost with it
    peer.connect()


def finish_and_check(h: Harness, *peers: Remote) -> None:
    verify_log(h.log_bytes())
    for peer in peers:
        if peer.conn is None:
            reconnect(peer)
    h.run_to_end()
    check_logs(h, *peers)


def stopped(result: tuple[Remote, Message] | None) -> Message:
    assert result is not None, "the table finished before the test could interfere"
    return result[1]


def test_overlong_frame_drops_only_that_connection() -> None:
    h, alice, bob = short_match()
    stopped(h.run(turn_for("act", bob)))
    records = len(h.table.history)
    bob.raw(struct.pack(">I", wire.MAX_FRAME + 1) + b"\x00" * 64)
    assert bob.closing and not alice.closing
    assert bob.transport is not None and bob.transport.messages[-1]["t"] == "turn"  # no reply
    bob.drop()
    # nothing but the host's word that bob's connection went and his seat is held
    assert [(i.kind, i.seq) for i in h.table.history[records:]] == [
        ("seat-event", records),
        ("seat-event", records + 1),
    ]
    verify_log(h.log_bytes())
    reconnect(bob)  # within the hold time: bob's seat is still his
    finish_and_check(h, alice, bob)
    assert SEAT_KEY_KIND not in {info.kind for info in h.table.history}


def test_a_frame_of_exactly_the_limit_is_read() -> None:
    h, alice, bob = short_match()
    prompt = stopped(h.run(turn_for("act", bob)))
    message: Message = {"t": "checkpoint", "hand": prompt["hand"], "sig": b"s" * 64, "pad": b""}
    padding = wire.MAX_FRAME - len(wire.encode(message)) - 3  # bin 8 -> bin 32: 3 more bytes
    message["pad"] = b"\x00" * padding  # an unknown field: ignored
    assert len(wire.encode(message)) == wire.MAX_FRAME
    refused(h, bob, message, "wrong-phase")  # read, and refused by the table, not the framing
    finish_and_check(h, alice, bob)


@pytest.mark.parametrize(
    "body",
    [
        b"\xc1",  # a byte msgpack never uses
        b"",  # an empty frame
        b"\x93\x01",  # an array cut short
        b"\x92\x01\x02",  # a msgpack array, not a map
        b"\xa5hello",  # a msgpack str
        b"\x81\xa1t\xa3act\x00",  # a map followed by extra bytes
    ],
)
def test_bytes_that_are_not_a_msgpack_map_drop_only_that_connection(body: bytes) -> None:
    h, alice, bob = short_match()
    stopped(h.run(turn_for("act", bob)))
    aseq = h.table.next_aseq[2]
    act, asig = signer_for(h, bob).action(h.table.hand_no, "draw")
    # the garbage frame and a valid action in one read: nothing after the garbage is taken
    answers = inject(h, bob, frame_bytes(body) + frame(act_message(act, asig)))
    assert answers == [] and bob.closing and not alice.closing
    assert h.table.next_aseq[2] == aseq
    bob.drop()
    verify_log(h.log_bytes())
    finish_and_check(h, alice, bob)


TABLE_INFO = {
    "name": "t",
    "game": "canasta",
    "variant": "classic",
    "rules": {},
    "table_id": TABLE_ID,
    "seats": [],
    "deal": "commit-reveal",
}


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"t": "fly"}, "unknown-message"),
        ({"t": 3}, "unknown-message"),
        ({"x": 1}, "unknown-message"),
        ({"t": "act", "act": b"x"}, "bad-message"),  # no asig
        ({"t": "act", "act": "text", "asig": b"s" * 64}, "bad-message"),  # str, not bin
        ({"t": "act", "act": b"x", "asig": b"s" * 65}, "bad-message"),  # too long
        ({"t": "checkpoint", "hand": True, "sig": b"s" * 64}, "bad-message"),  # a bool
        ({"t": "reveal", "act": b"x", "asig": b"s"}, "bad-message"),  # no seed
        # a nested field off-schema (the table lacks every field)
        (
            {"t": "welcome", "version": 1, "seat": 1, "table": {}, "aseq": 0, "head": b""},
            "bad-message",
        ),
        ({"t": "seats", "seats": [1, 2]}, "bad-message"),
        (
            {"t": "welcome", "version": 1, "seat": 1, "table": TABLE_INFO, "aseq": 0, "head": b""},
            None,
        ),
    ],
)
def test_off_schema_messages_get_an_error_and_the_connection_lives(
    message: Message, code: str | None
) -> None:
    h, alice, bob = short_match()
    stopped(h.run(turn_for("act", bob)))
    records = len(h.table.history)
    # a schema error is answered by the framing layer (the prompt bob holds stays good); a
    # well-formed message of the wrong direction is refused by the table, which prompts again
    refused(h, bob, message, code or "unexpected-message", reprompt=code is None)
    assert not alice.closing
    h.run()
    assert len(h.table.history) > records
    finish_and_check(h, alice, bob)
    assert bob.errors() == [code or "unexpected-message"]


def signed(identity: Identity, fields: Message) -> Message:
    """An ``act`` message of arbitrary fields, properly signed by ``identity``."""
    act = R.pack(fields)
    return act_message(act, identity.sign("seat-action", act))


def bad_acts(h: Harness, bob: Remote, prompt: Message) -> list[tuple[str, Message]]:
    """Messages bob might send at his ``act`` prompt, each refused, with the expected code."""
    hand, legal = prompt["hand"], prompt["legal"]
    state = h.table.state
    assert state is not None
    me = signer_for(h, bob)
    base = {
        "table": TABLE_ID,
        "hand": hand,
        "seat": 2,
        "aseq": prompt["aseq"],
        "head": me.head,
        "type": "action",
        "action": legal[0],
    }
    illegal: list[tuple[str, Message]] = []
    for text in ("discard JK", "meld 4C 4D 4H", "add 99 KH KS", "answer yes", "ask-go-out"):
        try:
            state.check(parse_action(text), 2)
            continue  # legal here after all
        except IllegalAction as e:
            illegal.append((e.code, act_message(*signer_for(h, bob).action(hand, text))))
    assert len(illegal) >= 3
    other_table = SeatSigner(bob.identity, 2, bytes(16), me.head, aseq=prompt["aseq"])
    reveal = signer_for(h, bob).reveal(hand)
    return [
        ("bad-signature", act_message(*signer_for(h, bob, STRANGER).action(hand, legal[0]))),
        ("wrong-table", act_message(*other_table.action(hand, legal[0]))),
        ("wrong-seat", signed(bob.identity, base | {"seat": 1})),
        ("bad-aseq", signed(bob.identity, base | {"aseq": prompt["aseq"] + 1})),
        ("bad-message", signed(bob.identity, base | {"aseq": True})),
        ("bad-message", signed(bob.identity, base | {"hand": -1})),
        ("bad-message", signed(bob.identity, base | {"type": "dance"})),
        ("bad-message", signed(bob.identity, base | {"type": ["action"]})),
        ("bad-message", signed(bob.identity, base | {"action": 7})),
        ("bad-message", act_message(b"\xc1", bob.identity.sign("seat-action", b"\xc1"))),
        ("bad-message", act_message(b"\x93\x01\x02\x03", b"s" * 64)),
        ("unknown-head", signed(bob.identity, base | {"head": bytes(32)})),
        ("unknown-head", signed(bob.identity, base | {"head": [1, 2]})),
        ("unknown-head", signed(bob.identity, base | {"head": {"a": 1}})),
        ("wrong-hand", signed(bob.identity, base | {"hand": hand + 1})),
        ("bad-action", signed(bob.identity, base | {"action": "fly away"})),
        ("bad-action", signed(bob.identity, base | {"action": "add ² KH"})),
        *illegal,
        ("wrong-phase", act_message(*signer_for(h, bob).commit(hand))),
        (
            "wrong-phase",
            {"t": "reveal", "act": reveal[0], "asig": reveal[1], "seed": reveal[2]},
        ),
        ("wrong-phase", {"t": "checkpoint", "hand": hand, "sig": b"s" * 64}),
        ("wrong-hand", {"t": "checkpoint", "hand": hand + 1, "sig": b"s" * 64}),
        ("bad-message", signed(bob.identity, base | {"type": "chat", "text": "x" * 501})),
    ]


def test_refused_actions_change_nothing_and_the_seat_plays_on() -> None:
    h, alice, bob = short_match()
    prompt = stopped(h.run(turn_for("act", bob)))
    expected = []
    for code, message in bad_acts(h, bob, prompt):
        refused(h, bob, message, code)
        expected.append(code)
        verify_log(h.log_bytes())
    # a chat is accepted at any time, even on another seat's turn
    records = len(h.table.history)
    answers = inject(h, bob, act_message(*signer_for(h, bob).chat(prompt["hand"], "gl hf")))
    assert h.table.history[-1].kind == R.CHAT and len(h.table.history) == records + 1
    assert [m["t"] for m in answers] == ["record", "view", "turn"]  # a prompt with the new aseq
    assert answers[-1]["aseq"] == prompt["aseq"] + 1
    keep_last_prompt(bob)
    finish_and_check(h, alice, bob)
    assert bob.errors() == expected


def test_a_replayed_message_is_refused_as_bad_aseq() -> None:
    h, alice, bob = short_match()
    stopped(
        h.run(lambda p, m: turn_for("act", bob)(p, m) and any(s["t"] == "act" for s in bob.sent))
    )
    last_act = [m for m in bob.sent if m["t"] == "act"][-1]
    refused(h, bob, last_act, "bad-aseq")
    first_commit = next(m for m in bob.sent if m["t"] == "commit")
    refused(h, bob, first_commit, "bad-aseq")
    finish_and_check(h, alice, bob)


def test_out_of_turn_actions_get_the_engines_codes() -> None:
    h, alice, bob = short_match()
    prompt = stopped(h.run(turn_for("act", alice)))
    hand = prompt["hand"]
    h.run(lambda p, m: p is bob)  # bob's session catches up with the records alice has seen
    refused(h, bob, act_message(*signer_for(h, bob).action(hand, "draw")), "not-your-turn")
    refused(
        h, bob, act_message(*signer_for(h, bob).action(hand, prompt["legal"][0])), "not-your-turn"
    )
    # once the hand is over, while the seats sign it, an action is in the wrong phase
    stopped(h.run(turn_for("checkpoint", bob)))
    refused(h, bob, act_message(*signer_for(h, bob).action(hand, "draw")), "wrong-phase")
    refused(h, bob, {"t": "checkpoint", "hand": hand, "sig": b"\x00" * 64}, "bad-signature")
    sig = STRANGER.sign("checkpoint", h.table.checkpoint_msg)
    refused(h, bob, {"t": "checkpoint", "hand": hand, "sig": sig}, "bad-signature")
    finish_and_check(h, alice, bob)


def test_each_seat_reads_the_engines_refusal_in_its_own_language() -> None:
    """The host sends the code and its parameters; alice's client words it in Russian, bob's
    in English, at the same table."""
    h, alice, bob = short_match()
    alice.session.observer = ru = TableModel(tr=translator("ru"))
    alice.session.player.tr = translator("ru")  # type: ignore[attr-defined]  # her event lines
    bob.session.observer = en = TableModel(tr=translator("en"))
    prompt = stopped(h.run(turn_for("act", bob)))
    h.run(lambda p, m: p is alice)  # alice's session catches up with the records bob has seen
    hand = prompt["hand"]
    error = refused(
        h, alice, act_message(*signer_for(h, alice).action(hand, "draw")), "not-your-turn"
    )
    assert error["args"] == {"to_move": "2", "seat": "1"} and "variant" not in error
    assert error["message"] == "It is seat 2's turn, not 1's."  # for an older client
    assert h.run(hold=(bob,)) is None  # alice's session reads the error; bob is to move
    assert ru.snapshot()["refusal"]["message"] == "Сейчас ход места 2, а не места 1."
    assert "отказано (not-your-turn): Сейчас ход места 2, а не места 1." in alice.events
    prompt = stopped(h.run(turn_for("act", alice)))
    h.run(lambda p, m: p is bob)
    error = refused(h, bob, act_message(*signer_for(h, bob).action(hand, "draw")), "not-your-turn")
    assert error["args"] == {"to_move": "1", "seat": "2"}
    assert h.run(hold=(alice,)) is None
    assert en.snapshot()["refusal"]["message"] == "It is seat 1's turn, not 2's."
    assert "refused (not-your-turn): It is seat 1's turn, not 2's." in bob.events
    assert ru.snapshot()["refusal"]["message"] == "Сейчас ход места 2, а не места 1."
    finish_and_check(h, alice, bob)


def test_bad_reveals_are_refused() -> None:
    h, alice, bob = short_match()
    prompt = stopped(h.run(turn_for("reveal", bob)))
    hand = prompt["hand"]
    signer = bob.session.signer
    assert signer is not None
    secret = signer.secret(hand)

    def reveal(seed: bytes) -> Message:
        act, asig, _ = signer_for(h, bob).reveal(hand)
        return {"t": "reveal", "act": act, "asig": asig, "seed": seed}

    refused(h, bob, reveal(bytes(32)), "reveal-mismatch")
    refused(h, bob, reveal(secret.seed[:31]), "seed-size")
    refused(h, bob, reveal(b""), "seed-size")
    act_only = reveal(secret.seed)
    del act_only["seed"]
    refused(h, bob, act_only | {"t": "act"}, "seed-size")
    refused(h, bob, act_message(*signer_for(h, bob).commit(hand)), "wrong-phase")
    finish_and_check(h, alice, bob)


def test_a_second_commitment_is_refused() -> None:
    h, alice, bob = short_match()
    prompt = stopped(h.run(turn_for("commit", alice)))
    assert h.run(hold=(alice,)) is None  # bob commits; the table waits for alice
    assert h.table.needs(2) == "wait" and h.table.needs(1) == "commit"
    assert bob.session.signer is not None
    again = signer_for(h, bob)
    again.secrets.clear()  # a fresh seed, a new commitment
    refused(h, bob, act_message(*again.commit(prompt["hand"])), "duplicate-commitment")
    finish_and_check(h, alice, bob)


# --------------------------------------------------------------------------- the handshake


def hello(**kw: Any) -> Message:
    return {"t": "hello", "min": 1, "max": 1, "name": "mallory", "bot": False} | kw


def stranger(h: Harness, name: str = "mallory") -> Remote:
    """A peer whose key has no seat, driven by hand."""
    peer = h.remote(name, connect=False, auto=False)
    peer.connect(hello=False)
    return peer


def test_messages_before_hello_get_no_seat() -> None:
    h, alice, bob = short_match()
    stopped(h.run(turn_for("act", bob)))
    for peer in (stranger(h), bob):  # a stranger, and bob on a second connection
        if peer is bob:
            bob.pending.clear()
            bob.conn = None  # his first connection stays open; bob opens another
            bob.connect(hello=False)
        act, asig = signer_for(h, bob).action(h.table.hand_no, "draw")
        for message in (
            act_message(act, asig),
            {"t": "commit", "act": act, "asig": asig},
            {"t": "checkpoint", "hand": 0, "sig": b"s" * 64},
        ):
            only_error(inject(h, peer, message), "no-seat")
            assert not peer.closing
    # bob's second connection says hello: it takes over his seat and is prompted again
    answers = inject(h, bob, bob.session.hello())
    assert [m["t"] for m in answers][:1] == ["welcome"] and answers[-1]["t"] == "turn"
    finish_and_check(h, alice, bob)


def test_a_second_hello_is_refused_and_the_seat_kept() -> None:
    h, alice, bob = short_match()
    stopped(h.run(turn_for("act", bob)))
    refused(h, bob, bob.session.hello(), "already-seated")
    refused(h, bob, hello(password="x", resume=3), "already-seated")
    finish_and_check(h, alice, bob)


@pytest.mark.parametrize(("low", "high"), [(4, 5), (0, 0), (3, 2)])
def test_version_mismatch_is_refused_and_closed(low: int, high: int) -> None:
    h = Harness(config(classic(100)))
    alice = h.remote("alice")
    mallory = stranger(h)
    answers = inject(h, mallory, hello(min=low, max=high))
    assert only_error(answers, "version-mismatch") == answers[-1] and mallory.closing
    # bob's own key with an old client: refused before any seat is given
    bob = h.remote("bob", connect=False)
    bob.connect(hello=False)
    answers = inject(h, bob, bob.session.hello() | {"min": low, "max": high})
    only_error(answers, "version-mismatch")
    assert bob.closing and not alice.closing
    bob.restart()  # an old client stops on version-mismatch: bob starts one that speaks 1
    assert h.service.table is None and h.service.slots[2].key is None
    mallory.drop()
    bob.connect()  # a client that speaks versions 1-2 is seated
    h.run_to_end()
    check_logs(h, alice, bob)
    welcome = next(m for m in bob.received if m["t"] == "welcome")
    assert welcome["version"] == wire.PROTOCOL_MAX and welcome["seat"] == 2


def test_wrong_password_is_refused_and_closed() -> None:
    h = Harness(config(classic(100), password="sesame"))
    for attempt in (hello(), hello(password="open"), hello(password="sesame2")):
        mallory = stranger(h)
        only_error(inject(h, mallory, attempt), "bad-password")
        assert mallory.closing
        mallory.drop()
    assert all(slot.key is None for slot in h.service.slots[1:3])
    alice = h.remote("alice", connect=False)
    bob = h.remote("bob", connect=False)
    for peer in (alice, bob):
        peer.session.password = "sesame"
        peer.connect()
    h.run_to_end()
    check_logs(h, alice, bob)


def test_the_host_s_own_seat_needs_no_password() -> None:
    """The host's person joins its own table with the host's key (TLS proves it); a resumed host
    knows only the password's hash, so it could not send the password anyway."""
    cfg = TableConfig.simple(
        "t", classic(100), 2, host_plays=True, password="sesame", insecure_seed=HOST_SEED
    )
    h = Harness(cfg)
    me = h.remote("me", connect=False)
    me.identity = HOST
    me.session = me._new_session()
    me.connect()
    assert [m["t"] for m in me.replies()][:1] == ["welcome"]


def test_a_full_table_refuses_newcomers() -> None:
    # in the lobby: one remote seat, taken by alice
    h = Harness(config(classic(100), players=2))
    alice = h.remote("alice", auto=False)
    h.run()
    mallory = stranger(h)
    only_error(inject(h, mallory, hello()), "table-full")
    assert mallory.closing and not alice.closing
    mallory.drop()
    # once the match has started, a key with no seat is refused even if a player left
    h = Harness(config(classic(100)))
    alice, bob = h.remote("alice"), h.remote("bob")
    stopped(h.run(turn_for("act", bob)))
    assert h.service.table is not None
    bob.drop()
    mallory = stranger(h)
    only_error(inject(h, mallory, hello()), "table-full")
    assert mallory.closing and not alice.closing
    mallory.drop()
    verify_log(h.log_bytes())
    finish_and_check(h, alice, bob)


def test_the_lobby_refuses_play_before_the_start_and_the_hosts_key() -> None:
    h = Harness(config(classic(100)))
    alice = h.remote("alice", auto=False)
    h.run()
    assert h.service.table is None
    act = R.make_act(TABLE_ID, 0, 1, 0, bytes(32), "commit", commitment=bytes(32))
    answers = inject(h, alice, act_message(act, alice.identity.sign("seat-action", act)))
    only_error(answers, "not-started")
    # the host's own key: seat 0 is played by the host (a bot here), not from outside
    host = h.remote("host", connect=False, auto=False)
    host.identity = HOST
    host.connect(hello=False)
    only_error(inject(h, host, hello()), "seat-is-local")
    assert not host.closing
    # a lobby seat is freed when its player leaves before the start
    seats = [m for m in alice.received if m["t"] == "seats"][-1]["seats"]
    assert seats[1]["taken"] and seats[1]["name"] == "alice"
    alice.drop()
    assert h.service.slots[1].key is None and h.service.free_seats == 2
    alice.auto = True
    alice.connect()
    bob = h.remote("bob")
    h.run_to_end()
    check_logs(h, alice, bob)


# --------------------------------------------------------------------------- resilience


def seat_keys(h: Harness) -> list[tuple[int, bytes]]:
    """The (seat, key) of every seat-key record so far."""
    out = []
    for info in h.table.history:
        if info.kind == SEAT_KEY_KIND:
            record = parse_stored_record(info.stored, info.seq, h.table.writer.header)
            out.append((record.fields["rekey"]["seat"], record.fields["rekey"]["key"]))
    return out


def stand_in_key(seat: int, generation: int = 1) -> bytes:
    return derived_identity(HOST, TABLE_ID, seat, generation).public_key


def seat_events(h: Harness, start: int) -> list[tuple[int, str, str | None, int | None]]:
    """The connection events the host wrote from record ``start`` on: (seat, event, reason,
    hold in ms)."""
    out = []
    for info in h.table.history[start:]:
        if info.kind == R.SEAT_EVENT:
            f = R.unpack_map(info.body, "record", limit=1 << 20)
            out.append((f["seat"], f["event"], f.get("reason"), f.get("hold")))
    return out


def record_time(h: Harness, seq: int) -> int:
    """A record's ``time`` (ms, the host's clock)."""
    time_ms: int = R.unpack_map(h.table.history[seq].body, "record", limit=1 << 20)["time"]
    return time_ms


def test_a_stand_in_takes_a_dropped_seat_and_the_player_reclaims_it() -> None:
    h = Harness(config(classic(3000)))
    alice, bob = h.remote("alice"), h.remote("bob")
    stopped(
        h.run(lambda p, m: turn_for("act", bob)(p, m) and any(s["t"] == "act" for s in bob.sent))
    )
    bob.drop()  # mid-hand, on his turn
    bob.pending.clear()
    aseq_at_drop = h.table.next_aseq[2]
    assert h.run() is None and not h.service.finished  # everyone waits for bob
    records = len(h.table.history)
    # the host's word that bob went and is held, dated by its clock (a fake one here)
    assert seat_events(h, records - 2) == [
        (2, "lost", "connection lost", None),
        (2, "held", None, int(HOLD * 1000)),
    ]
    dropped_at = record_time(h, records - 1)
    h.clock.advance(HOLD - 1)
    assert h.run() is None and len(h.table.history) == records and seat_keys(h) == []
    h.clock.advance(1)  # the hold runs out: a bot stands in
    assert seat_keys(h) == [(2, stand_in_key(2))]
    assert seat_events(h, records)[0] == (2, "stand-in", None, None)
    assert h.table.history[records + 1].kind == SEAT_KEY_KIND
    assert record_time(h, records) - dropped_at == int(HOLD * 1000)
    assert h.service.seat_summary()[2]["name"] == "bob (bot stand-in)"
    # the match goes on with the stand-in playing bob's cards
    stopped(
        h.run(lambda p, m: len(h.table.history) > records + 40 and turn_for("act", alice)(p, m))
    )
    assert h.table.next_aseq[2] > aseq_at_drop
    assert "the host says bob (seat 2) is played by a bot stand-in from now on" in alice.events
    stand_in_aseq = h.table.next_aseq[2]
    missed = bob.session.last_seq
    # bob is back (same identity, same session): resynced, then his seat is his again
    bob.connect()
    answers = bob.replies()
    welcome = answers[0]
    assert welcome["t"] == "welcome" and welcome["seat"] == 2 and welcome["aseq"] == stand_in_aseq
    record_seqs = [m["seq"] for m in answers if m["t"] == "record"]
    assert record_seqs == list(range(missed + 1, len(h.table.history)))
    assert seat_keys(h) == [(2, stand_in_key(2)), (2, bob.identity.public_key)]
    welcomes = [m for m in answers if m["t"] == "welcome"]
    assert welcomes[-1]["aseq"] == h.table.next_aseq[2] == stand_in_aseq  # his aseq runs on
    for message in answers:
        bob.session.handle(message, bob.send)
    assert bob.session.problem is None and bob.session.last_seq == len(h.table.history) - 1
    assert bob.session.signer is not None and bob.session.signer.aseq >= stand_in_aseq
    assert [e[:2] for e in seat_events(h, records + 2)] == [(2, "connected"), (2, "reclaimed")]
    h.run_to_end()
    check_logs(h, alice, bob)
    assert h.service.seat_summary()[2]["name"] == "bob"
    # the audit reports the drop and the stand-in's moves for bob's seat
    activity = audit_source(h.log_bytes()).activity
    assert activity is not None and activity["timed"]
    bob_seat = activity["seats"][2]
    assert bob_seat["disconnections"] == 1 and bob_seat["stand_ins"] == 1
    assert bob_seat["stand_in_moves"] >= 1 and bob_seat["moves"] >= 1
    # bob signed again after reclaiming, with his own key, numbering on from the stand-in's
    assert any(
        m["t"] == "act" and R.unpack_map(m["act"], "act")["aseq"] >= stand_in_aseq for m in bob.sent
    )


def test_a_drop_while_the_table_waits_for_the_seed_forfeits() -> None:
    h = Harness(config(classic(3000)))
    alice, bob = h.remote("alice"), h.remote("bob")
    stopped(h.run(turn_for("reveal", bob)))
    bob.drop()
    bob.pending.clear()
    assert h.run() is None and h.table.phase is TablePhase.REVEALING
    h.clock.advance(HOLD)
    h.run()
    assert [i.kind for i in h.table.history[-2:]] == [R.FORFEIT, R.MATCH_END]
    assert h.service.finished and h.table.phase.value == "over"
    assert alice.received[-1]["t"] == "bye"
    result = check_logs(h, alice)
    assert result.forfeit == (2, "the player left holding its secrets for the hand")
    assert result.result is not None and result.result.winner == 1  # alice's team
    assert seat_keys(h) == []
    bob.connect()  # late: he still gets the whole log
    h.run()
    check_logs(h, alice, bob)


def test_a_drop_after_committing_forfeits_when_the_hold_runs_out() -> None:
    h = Harness(config(classic(3000)))
    alice, bob = h.remote("alice"), h.remote("bob")
    stopped(h.run(turn_for("commit", alice)))
    assert h.run(hold=(alice,)) is None  # bob commits, alice is slow
    assert h.table.phase is TablePhase.COMMITTING and h.table.needs(2) == "wait"
    bob.drop()
    bob.pending.clear()
    h.clock.advance(HOLD)  # only bob knows his seed: no stand-in can reveal it
    h.run()
    assert [i.kind for i in h.table.history[-2:]] == [R.FORFEIT, R.MATCH_END]
    assert h.service.finished and seat_keys(h) == []
    result = check_logs(h, alice)
    assert result.forfeit is not None and result.forfeit[0] == 2


def test_a_drop_after_revealing_gets_a_stand_in_not_a_forfeit() -> None:
    # bob's seed is already with the host: he holds no secret, so his hold running out before
    # the deal brings a stand-in (the round could not forfeit him: AlreadyRevealed went uncaught)
    h = Harness(config(classic(3000)))
    alice, bob = h.remote("alice"), h.remote("bob")
    stopped(h.run(turn_for("reveal", alice)))
    assert h.run(hold=(alice,)) is None  # bob reveals, alice is slow
    assert h.table.phase is TablePhase.REVEALING and h.table.needs(2) == "wait"
    assert h.table.between_hands(2) and not all(h.table.between_hands(s) for s in range(4))
    bob.drop()
    bob.pending.clear()
    h.clock.advance(HOLD)
    h.run()
    assert R.FORFEIT not in [i.kind for i in h.table.history]
    assert seat_keys(h) == [(2, stand_in_key(2))]
    h.run_to_end()
    check_logs(h, alice)
    assert replay_log(h.log_bytes()).forfeit is None


def test_a_seat_restarted_between_commit_and_reveal_reveals_from_its_seed_store(
    tmp_path: Path,
) -> None:
    store = SeedStore(tmp_path / "bob.seeds")
    h = Harness(config(classic(3000)))
    alice, bob = h.remote("alice"), h.remote("bob", seed_store=store)
    stopped(h.run(turn_for("reveal", bob)))
    kept = list(store.directory.iterdir())
    assert [p.name for p in kept] == [f"{TABLE_ID.hex()}.seeds"]
    assert (
        kept[0].stat().st_mode & 0o777 == 0o600 and store.directory.stat().st_mode & 0o777 == 0o700
    )
    assert store.for_table(TABLE_ID).get(0) is not None
    bob.restart()  # the process dies between committing and revealing: only the store is left
    bob.connect()
    h.run_to_end()
    check_logs(h, alice, bob)
    assert replay_log(h.log_bytes()).forfeit is None
    assert [m["t"] for m in bob.sent].count("reveal") >= 1
    assert list(store.directory.iterdir()) == [], "published seeds are not kept"


def test_a_seat_restarted_without_its_seed_says_so_leaves_and_forfeits(tmp_path: Path) -> None:
    store = SeedStore(tmp_path / "bob.seeds")
    h = Harness(config(classic(3000)))
    alice, bob = h.remote("alice"), h.remote("bob", seed_store=store)
    stopped(h.run(turn_for("reveal", bob)))
    for kept in store.directory.iterdir():
        kept.unlink()  # the disk was wiped too
    bob.restart()
    bob.connect()
    assert h.run() is None
    assert bob.session.done and bob.session.problem is not None
    assert "cannot reveal" in bob.session.problem and "hand 1" in bob.session.problem
    assert not any(m["t"] == "reveal" for m in bob.sent), "no seed is made up"
    bob.drop()  # what PeerProtocol does once the session is done
    h.clock.advance(HOLD)
    h.run()
    result = check_logs(h, alice)
    assert result.forfeit == (2, "the player left holding its secrets for the hand")


def test_a_restarted_seat_asked_to_commit_again_draws_a_fresh_seed(tmp_path: Path) -> None:
    """A kept seed is only ever revealed: committing anew (the host never logged the first
    commitment, or replays an old table id) always takes a new seed."""
    store = SeedStore(tmp_path / "bob.seeds")
    h = Harness(config(classic(3000)))
    alice, bob = h.remote("alice"), h.remote("bob", seed_store=store)
    prompt = stopped(h.run(turn_for("commit", bob)))
    outbox: list[Message] = []
    bob.session.handle(bob.pending.pop(0), outbox.append)  # bob commits, the message is lost
    first = store.for_table(TABLE_ID).get(prompt["hand"])
    assert first is not None and [m["t"] for m in outbox] == ["commit"]
    bob.restart()
    bob.connect()
    h.run_to_end()
    check_logs(h, alice, bob)
    revealed = [m["seed"] for m in bob.sent if m["t"] == "reveal"]
    assert revealed and revealed[0] != first
    assert R.unpack_map(revealed_act(bob, 0), "act")["commitment"] != commitment_of(first, 0)


def revealed_act(peer: Remote, hand: int) -> bytes:
    return next(
        bytes(m["act"])
        for m in peer.sent
        if m["t"] == "reveal" and R.unpack_map(m["act"], "act")["hand"] == hand
    )


def commitment_of(seed: bytes, hand: int) -> bytes:
    return commitment(TABLE_ID, hand, 2, seed)


def _flip_a_signature_byte(message: Message) -> Message | None:
    if message["t"] != "record" or message["seq"] < 3:
        return None
    data = bytearray(message["data"])
    data[-5] ^= 0x01
    return {**message, "data": bytes(data)}


def _skip_a_record(message: Message) -> Message | None:
    if message["t"] != "record" or message["seq"] < 3:
        return None
    return {**message, "seq": message["seq"] + 1}


def _other_totals_to_sign(message: Message) -> Message | None:
    if message["t"] != "turn" or message["need"] != "checkpoint":
        return None
    fields = R.unpack_map(message["msg"], "checkpoint")
    result = dict(fields["result"], totals=[t + 100 for t in fields["result"]["totals"]])
    return {**message, "msg": R.pack({**fields, "result": result})}


def _reveal_before_the_list(message: Message) -> Message | None:
    if message["t"] != "turn" or message["need"] != "commit":
        return None
    return {**message, "need": "reveal"}


@pytest.mark.parametrize(
    ("tamper", "problem"),
    [
        (_flip_a_signature_byte, "fails verification"),
        (_skip_a_record, "arrived after"),
        (_other_totals_to_sign, "refusing to sign hand 1:"),  # the first hand, as people count
        (_reveal_before_the_list, "before the signed list holds my commitment"),
    ],
)
def test_a_seat_that_catches_the_host_misbehaving_says_why_and_leaves(
    tamper: Callable[[Message], Message | None], problem: str
) -> None:
    h, alice, bob = short_match()
    found: list[Message] = []

    def forged(who: Remote, message: Message) -> bool:
        if who is bob and not found:
            changed = tamper(message)
            if changed is not None:
                found.append(changed)
                return True
        return False

    stopped(h.run(forged))
    bob.pending.pop(0)
    sent_before = len(bob.sent)
    outbox: list[Message] = []
    bob.session.handle(found[0], outbox.append)
    assert outbox == [], "nothing is signed or sent after the host is caught"
    assert bob.session.done and bob.session.problem is not None
    assert problem in bob.session.problem and bob.session.problem.startswith("the host misbehaved")
    player = bob.session.player
    assert isinstance(player, RecordingBot) and player.finished_reason is not None
    assert player.finished_reason.startswith("leaving the table: the host misbehaved")
    for message in bob.replies():  # whatever the host sends next is not taken any more
        bob.session.handle(message, outbox.append)
    assert outbox == [] and len(bob.sent) == sent_before
    # the seat leaves; the others play on with a stand-in in its place
    bob.drop()
    h.clock.advance(HOLD)
    h.run_to_end()
    check_logs(h, alice)


def test_a_reclaim_waits_until_the_stand_in_has_revealed_its_seed() -> None:
    h = Harness(config(classic(3000)))
    alice, bob = h.remote("alice"), h.remote("bob")
    stopped(h.run(turn_for("commit", alice)))
    stopped(h.run(turn_for("commit", bob), hold=(alice,)))
    bob.drop()  # before committing
    bob.pending.clear()
    h.clock.advance(HOLD)
    assert h.run(hold=(alice,)) is None
    assert seat_keys(h) == [(2, stand_in_key(2))]
    assert h.table.needs(2) == "wait"  # the stand-in committed its own seed
    bob.connect()  # back while the stand-in's seed is still to be revealed
    assert h.run(hold=(alice,)) is None
    assert seat_keys(h) == [(2, stand_in_key(2))]
    errors = [m for m in bob.received if m["t"] == "error"]
    assert errors == [] and bob.session.problem is None
    h.run_to_end()  # alice commits; the stand-in reveals; bob takes his seat back
    assert seat_keys(h) == [(2, stand_in_key(2)), (2, bob.identity.public_key)]
    check_logs(h, alice, bob)


def test_a_stand_in_taking_a_seat_that_signed_the_hand_signs_again() -> None:
    # bob signs the checkpoint and leaves; the stand-in takes his seat before alice has signed
    h = Harness(config(classic(3000)))
    alice, bob = h.remote("alice"), h.remote("bob")
    stopped(h.run(turn_for("checkpoint", alice)))
    assert h.run(hold=(alice,)) is None and h.table.needs(2) == "wait"  # bob has signed
    bob.drop()
    bob.pending.clear()
    h.clock.advance(HOLD)
    assert h.run(hold=(alice,)) is None
    assert seat_keys(h) == [(2, stand_in_key(2))]
    h.run_to_end()
    check_logs(h, alice)  # the checkpoint's signature for seat 2 is the stand-in's


def test_a_player_reclaiming_a_seat_whose_stand_in_signed_the_hand_signs_again() -> None:
    h = Harness(config(classic(3000)))
    alice, bob = h.remote("alice"), h.remote("bob")
    stopped(h.run(turn_for("act", bob)))
    bob.drop()
    bob.pending.clear()
    h.clock.advance(HOLD)
    stopped(h.run(turn_for("checkpoint", alice)))
    assert h.run(hold=(alice,)) is None and h.table.needs(2) == "wait"  # the stand-in signed
    assert seat_keys(h) == [(2, stand_in_key(2))]
    bob.connect()  # back before alice has signed
    assert h.run(hold=(alice,)) is None
    assert seat_keys(h) == [(2, stand_in_key(2)), (2, bob.identity.public_key)]
    h.run_to_end()
    check_logs(h, alice, bob)


def test_a_record_after_the_seeds_does_not_stop_the_signing() -> None:
    # the checkpoint names the seeds record; a chat may come after it before a seat signs
    h = Harness(config(classic(3000)))
    alice, bob = h.remote("alice"), h.remote("bob")
    prompt = stopped(h.run(turn_for("checkpoint", alice)))
    alice.drop()  # alice's connection fails before she signs
    alice.pending.clear()
    h.run()
    answers = inject(h, bob, act_message(*signer_for(h, bob).chat(prompt["hand"], "well played")))
    assert [m for m in answers if m["t"] == "error"] == []
    assert h.table.history[-1].kind == R.CHAT
    alice.connect()  # resynced up to the chat, then prompted again
    h.run_to_end()
    check_logs(h, alice, bob)


# --------------------------------------------------------------------------- the host resumes


def crash_and_resume(
    first: Harness,
    path: Path,
    peers: tuple[Remote, ...],
    random_bytes: Callable[[int], bytes] | None = None,
    cfg: TableConfig | None = None,
) -> Harness:
    """The host's process dies (a record half written, the connections gone with it); a new
    one resumes the table from its log (with ``cfg``, or the first host's config). The peers,
    still running, connect to it again."""
    first.log.close()
    with path.open("ab") as f:
        # the start of a record: the array, the body's length, its map and its first key
        f.write(b"\x93\xc5\x01\x00\x85\xa3seq")
    for peer in first.remotes:
        peer.conn = peer.transport = None
        peer.pending.clear()
    log = open_log_for_writing(path, resume=True)
    table = HostTable.resume(log, HOST, random_bytes=random.Random(4).randbytes, fsync=False)
    assert len(table.history) == len(first.table.history) and table.head == first.table.head
    h = Harness(
        cfg or first.cfg, log_file=log, log_path=path, table=table, random_bytes=random_bytes
    )
    assert h.service.table_id == TABLE_ID
    for peer in peers:
        peer.harness = h
        h.remotes.append(peer)
        before = peer.session.last_seq
        peer.connect()  # the same PeerSession: hello with resume = its last record
        welcome = peer.collect()[0]
        assert welcome["t"] == "welcome" and welcome["aseq"] == table.next_aseq[welcome["seat"]]
        resent = [m["seq"] for m in peer.pending if m["t"] == "record"]
        assert resent == list(range(before + 1, len(table.history)))  # only what it missed
    return h


@pytest.mark.parametrize("need", ["act", "commit", "reveal", "checkpoint"])
def test_the_host_resumes_from_its_log_and_the_peers_reconnect(tmp_path: Path, need: str) -> None:
    path = tmp_path / "host.cnlog"
    first = Harness(config(classic(3000)), log_file=open_log_for_writing(path), log_path=path)
    alice, bob = first.remote("alice"), first.remote("bob")

    def mid_second_hand(peer: Remote, message: Message) -> bool:
        acted = sum(1 for m in bob.sent if m["t"] == "act")
        return first.table.hand_no == 1 and acted > 3 and turn_for(need, bob)(peer, message)

    stopped(first.run(mid_second_hand if need == "act" else turn_for(need, bob)))
    assert first.table.hand_no == (1 if need == "act" else 0)
    written = path.read_bytes()
    h = crash_and_resume(first, path, (alice, bob))
    h.run_to_end()
    data = path.read_bytes()
    assert data.startswith(written) and len(data) > len(written)
    check_logs(h, alice, bob)
    for peer in (alice, bob):
        assert peer.errors() == []


def test_a_host_resumed_from_its_log_alone_is_the_same_table(tmp_path: Path) -> None:
    """The log's header keeps the table's setup: the config read back from it is the one the
    table started with (bots, names, options, password policy), and a host resumed with it alone
    plays on with its bots and checks the password against the log's hash."""
    path = tmp_path / "host.cnlog"
    cfg = config(classic(3000), password="sesame", bot_kind="random", max_hands=50)
    first = Harness(cfg, log_file=open_log_for_writing(path), log_path=path)
    alice, bob = first.remote("alice", connect=False), first.remote("bob", connect=False)
    for peer in (alice, bob):
        peer.session.password = "sesame"
        peer.connect()
    stopped(first.run(turn_for("act", bob)))
    header = parse_header(next(iter(iter_records(path.read_bytes()))))
    from_log = TableConfig.from_log_header(header.fields)
    assert from_log == cfg
    assert b"sesame" not in path.read_bytes()  # the seats' copies get the header too
    h = crash_and_resume(first, path, (alice, bob), cfg=from_log)
    assert [slot.is_bot for slot in h.service.slots] == [True, False, False, True]
    assert h.service.table_info()["name"] == "test table"
    mallory = stranger(h)
    only_error(inject(h, mallory, hello(password="sesame2")), "bad-password")
    mallory.drop()
    h.run_to_end()
    check_logs(h, alice, bob)


def test_a_resumed_host_keeps_a_stand_in_until_its_player_reclaims_the_seat(
    tmp_path: Path,
) -> None:
    path = tmp_path / "host.cnlog"
    first = Harness(config(classic(3000)), log_file=open_log_for_writing(path), log_path=path)
    alice, bob = first.remote("alice"), first.remote("bob")
    stopped(first.run(turn_for("act", bob)))
    bob.drop()
    first.clock.advance(HOLD)
    stopped(first.run(turn_for("act", alice)))
    assert seat_keys(first) == [(2, stand_in_key(2))]
    h = crash_and_resume(first, path, (alice,))
    assert h.service.slots[2].local is not None  # the resumed host signs for the stand-in
    stopped(h.run(turn_for("act", alice)))
    bob.harness = h
    h.remotes.append(bob)
    bob.connect()
    h.run_to_end()
    assert seat_keys(h) == [(2, stand_in_key(2)), (2, bob.identity.public_key)]
    check_logs(h, alice, bob)


def test_a_host_resumed_while_a_checkpoint_is_signed_after_a_chat_asks_for_the_right_one(
    tmp_path: Path,
) -> None:
    # the checkpoint names the hand's seeds record, not the log's last record (here a chat): a
    # resumed host that named the last record made every honest seat refuse to sign and leave
    path = tmp_path / "host.cnlog"
    first = Harness(config(classic(3000)), log_file=open_log_for_writing(path), log_path=path)
    alice, bob = first.remote("alice"), first.remote("bob")
    prompt = stopped(first.run(turn_for("checkpoint", alice)))
    answers = inject(
        first, bob, act_message(*signer_for(first, bob).chat(prompt["hand"], "well played"))
    )
    assert [m for m in answers if m["t"] == "error"] == []
    assert first.table.history[-1].kind == R.CHAT
    msg = first.table.checkpoint_msg
    h = crash_and_resume(first, path, (alice, bob))
    assert h.table.checkpoint_msg == msg
    h.run_to_end()
    check_logs(h, alice, bob)
    for peer in (alice, bob):
        assert peer.errors() == []


def test_a_host_whose_log_lost_records_a_seat_holds_stops_with_the_reason(
    tmp_path: Path,
) -> None:
    # the host's log is cut back (a crash without the disk sync, an older copy restored) while a
    # seat holds the records it lost: the seat shows the host its record and leaves at once, and
    # the host, shown a record it signed but no longer has, stops the table and says why (it used
    # to refuse the seat's every message as naming an unknown head, for ever)
    path = tmp_path / "host.cnlog"
    first = Harness(config(classic(3000)), log_file=open_log_for_writing(path), log_path=path)
    alice, bob = first.remote("alice"), first.remote("bob")
    stopped(first.run(turn_for("act", bob)))
    cut = len(path.read_bytes())
    kept = len(first.table.history)
    stopped(first.run(turn_for("act", alice)))
    stopped(first.run(turn_for("act", bob)))
    assert len(first.table.history) > kept
    first.log.close()
    with path.open("r+b") as f:
        f.truncate(cut)
    for peer in first.remotes:
        peer.conn = peer.transport = None
        peer.pending.clear()
    log = open_log_for_writing(path, resume=True)
    table = HostTable.resume(log, HOST, random_bytes=random.Random(4).randbytes, fsync=False)
    assert len(table.history) == kept
    h = Harness(first.cfg, log_file=log, log_path=path, table=table)
    told: list[str] = []
    h.service.events.on_stopped = told.append
    alice.harness = h
    h.remotes.append(alice)
    alice.connect()
    h.run()
    forks = [m for m in alice.sent if m["t"] == "fork"]
    assert len(forks) == 1
    assert alice.session.done and "lost record" in (alice.session.problem or "")
    assert told and f"lost record {kept}" in told[0] and h.service.closed
    assert any(m["t"] == "bye" and "lost record" in m["reason"] for m in alice.received)
    # nothing was written after the cut but the host's word that it resumed and alice came back
    assert [e[:2] for e in seat_events(h, kept)] == [(0, "resumed"), (1, "connected")]
    assert len(h.table.history) == kept + 2


def test_a_record_that_proves_no_loss_is_refused() -> None:
    h = Harness(config(classic(3000)))
    alice, _ = h.remote("alice"), h.remote("bob")
    stopped(h.run(turn_for("act", alice)))
    data = alice.log.getvalue()  # the seat's own copy of the log
    held = [data[r.offset : r.offset + r.size] for r in iter_records(data)]
    for evidence in (held[3], held[0], b"\x93\xc4\x00", held[3][:-1]):
        answers = inject(h, alice, {"t": "fork", "record": evidence})
        assert [m["code"] for m in answers if m["t"] == "error"] == ["bad-evidence"]
    assert not h.service.closed


def test_a_resumed_host_reveals_its_bots_seeds_with_real_randomness(tmp_path: Path) -> None:
    path = tmp_path / "host.cnlog"
    cfg = config(classic(3000))
    cfg.insecure_seed = None
    first = Harness(
        cfg, log_file=open_log_for_writing(path), log_path=path, random_bytes=os.urandom
    )
    alice, bob = first.remote("alice"), first.remote("bob")
    stopped(first.run(turn_for("commit", alice)))
    assert first.table.needs(0) == first.table.needs(3) == "wait"  # the bots have committed
    h = crash_and_resume(first, path, (alice, bob), random_bytes=os.urandom)
    h.run()
    assert h.table.phase is not TablePhase.REVEALING, "the resumed host's bots cannot reveal"


# --------------------------------------------------------------------------- blind deal


def test_blind_match_two_remote_bots_two_host_bots() -> None:
    """``deal="blind"``: the whole match runs; the host sends no hand view or legal list, and no
    card label travels to any seat."""
    h = Harness(config(deal="blind", rules=classic(1500)))
    a, b = h.remote("alice"), h.remote("bob")
    h.run_to_end()
    assert h.table.deal_mode == "blind" and h.table.match.result is not None
    check_logs(h, a, b)
    labels = [label.encode() for label in labels_for_rules(classic())]
    for peer in (a, b):
        assert peer.errors() == []
        for message in peer.received:
            if message["t"] == "view":
                assert message["view"]["state"] is None
            if message["t"] == "turn":
                assert "legal" not in message
            if message["t"] == "record":
                assert not any(label in message["data"] for label in labels)


def test_blind_seat_reconnects_mid_hand_and_plays_on() -> None:
    """A seat whose connection drops mid-hand (its process, and so its secrets, live on) comes
    back, gets every record again, key messages included, and the match ends and verifies."""
    h = Harness(config(deal="blind", rules=classic(100)))  # one hand: the one that matters
    a, b = h.remote("alice"), h.remote("bob")
    stopped(h.run(turn_for("act", a)))
    a.drop()
    assert h.run(hold=(a,)) is None  # the others wait for alice
    reconnect(a)
    # a stale copy of its log: the peer asks for everything again from its last record
    finish_and_check(h, a, b)
    assert h.table.match.result is not None
    assert a.session.problem is None and a.session.agent is not None


def test_blind_seat_restarted_mid_hand_takes_the_hand_up_with_its_kept_seed(
    tmp_path: Path,
) -> None:
    """The seat's process dies mid-hand: a new one, with the seed it kept on disk, re-derives its
    secrets, re-opens its cards from the log's key messages and plays the hand on."""
    store = SeedStore(tmp_path / "alice.seeds")
    h = Harness(config(deal="blind", rules=classic(100)))  # one hand: the one that matters
    a, b = h.remote("alice", seed_store=store), h.remote("bob")
    stopped(h.run(turn_for("act", a)))
    hand = h.table.hand_no
    assert store.for_table(TABLE_ID).get(hand) is not None
    a.restart()
    a.connect()
    h.run_to_end()
    result = check_logs(h, a, b)
    assert result.forfeit is None and result.result is not None
    assert list(store.directory.iterdir()) == [], "published seeds are not kept"


def test_blind_seat_restarted_mid_hand_without_its_seed_says_so_and_forfeits() -> None:
    h = Harness(config(deal="blind", rules=classic(1500)))
    a, b = h.remote("alice"), h.remote("bob")
    stopped(h.run(turn_for("act", a)))
    a.restart()  # no seed store: the hand's secrets died with the process
    before = len(a.sent)
    a.connect()
    assert h.run() is None
    assert a.session.done and a.session.problem is not None
    assert "secrets for it are lost" in a.session.problem
    assert [m["t"] for m in a.sent[before:]] == ["hello"], "it sends nothing it cannot prove"
    a.drop()
    h.clock.advance(HOLD)
    h.run()
    result = check_logs(h, b)
    assert result.forfeit == (1, "the player left holding its secrets for the hand")


def test_blind_seat_asks_again_after_an_illegal_or_unparsable_choice() -> None:
    """At a blind table the seat checks a person's action against its own view of the hand: a
    refused or unparsable one is explained and the person is asked again."""
    h = Harness(config(deal="blind", rules=classic(100)))  # one hand: the one that matters
    a, b = h.remote("alice"), h.remote("bob")
    bot = a.session.player
    events: list[str] = []
    script = ["take-pile with nothing", "discard 5H 5H", "meld KH"]

    class Scripted:
        def show(self, view: dict[str, Any]) -> None:
            bot.show(view)

        def event(self, text: str) -> None:
            events.append(text)

        def choose(self, legal: list[str], view: dict[str, Any]) -> Any:
            if script:
                return script.pop(0)
            return bot.choose(legal, view)

        def finished(self, reason: str) -> None:
            bot.finished(reason)

    a.session.player = Scripted()
    h.run_to_end()
    assert script == []
    assert sum(1 for e in events if e.startswith("refused")) == 3
    check_logs(h, a, b)


def test_blind_seat_that_leaves_mid_hand_forfeits() -> None:
    """Its secrets for the hand left with it: no stand-in can play its cards."""
    h = Harness(config(deal="blind", rules=classic(1500)))
    h.remote("alice")
    bob = h.remote("bob")
    stopped(h.run(turn_for("act", bob)))
    bob.drop()
    bob.pending.clear()
    assert h.run() is None and not h.service.finished
    h.clock.advance(HOLD)
    h.run()
    assert h.table.phase is TablePhase.OVER
    result = replay_log(h.log_bytes())
    assert result.forfeit is not None and result.forfeit[0] == 2
    assert seat_keys(h) == []


def _cheat_at_stage_1(monkeypatch: pytest.MonkeyPatch, seat: int, tamper: str) -> None:
    """Seat ``seat``'s client sends a stage-1 output that is not what its announced keys allow:
    its proof altered (``proof``), or the output raised to a key of its own with a true proof for
    that key (``key``); or (``release``) it releases a wrong key for the upcard."""
    from canasta_net.deal.blind.hand import BlindHand
    from canasta_net.deal.blind.proofs import stages as proof_stages

    honest = BlindHand.respond

    def respond(self: BlindHand, need: Any) -> dict[str, Any]:
        fields = honest(self, need)
        if self.viewer == seat and need.kind == "release" and tamper == "release":
            ((position, key, sig),) = fields["releases"]
            wrong = (int.from_bytes(key, "big") + 1).to_bytes(32, "big")
            return {"releases": [[position, wrong, sig]]}
        if self.viewer != seat or need.kind != "stage" or fields["stage"] != 1:
            return fields
        if tamper == "release":
            return fields
        if tamper == "proof":
            altered = bytearray(fields["proof"])
            altered[100] ^= 1
            return {**fields, "proof": bytes(altered)}
        assert self.secrets2 is not None  # another deck key, with a true proof for it
        other = dataclasses.replace(self.secrets2, deck_key=self.secrets2.deck_key + 1)
        incoming = self.stage_outputs[-1] if self.stage_outputs else self.initial
        out, proof = proof_stages.stage1(other, incoming)
        return {**fields, "deck": b"".join(out), "proof": proof}

    monkeypatch.setattr(BlindHand, "respond", respond)


@pytest.mark.parametrize("tamper", ["proof", "key", "release"])
def test_blind_v2_seat_with_a_bad_stage_proof_forfeits_at_once_named_in_the_log(
    monkeypatch: pytest.MonkeyPatch, tamper: str
) -> None:
    """A seat whose stage output fails its proof (or whose released key is not its announced
    one) at an honest host: the deal ends there, without waiting for any hold (the clock never
    moves), the forfeit naming the seat is logged with the seat's own signed message as
    evidence, every seat receives it, and the replay and the audit check that evidence and name
    the seat. Nothing was dealt (a bad stage: no key message is in the log; a bad release: no
    card was opened)."""
    _cheat_at_stage_1(monkeypatch, 1, tamper)
    h = Harness(config(deal="blind-v2", rules=classic(1500)))
    alice, bob = h.remote("alice"), h.remote("bob")
    h.run(limit=500)
    assert h.clock.seconds() == 0
    assert h.table.phase is TablePhase.OVER
    records = list(iter_records(h.log_bytes()))
    forfeit = next(r for r in records if r.kind == R.FORFEIT)
    assert forfeit.fields["seat"] == 1
    assert records[-1].kind == R.MATCH_END
    if tamper == "release":  # a released key that is not the seat's announced one
        assert forfeit.fields["reason"].startswith("violation: wrong-key: seat 1's key")
        assert forfeit.action is not None and forfeit.action["type"] == "release"
        assert not any(r.kind == R.DEAL for r in records)
    else:
        assert forfeit.fields["reason"].startswith(
            "violation: bad-stage-proof: seat 1's stage-1 output is refused"
        )
        assert forfeit.action is not None and forfeit.action["type"] == "stage"
        assert not any(r.kind == "keys" for r in records)
    for peer in (alice, bob):
        told = [m for m in peer.received if m["t"] == "record"]
        assert any(b"forfeit" in m["data"] for m in told), peer.name
    result = replay_log(h.log_bytes())
    assert result.forfeit is not None and result.forfeit[0] == 1
    report = audit_source(h.log_bytes())
    assert report.verdict == "valid" and report.claims == []
    assert report.match["forfeit"]["seat"] == 1
    for peer in (alice, bob):  # every seat's copy checks the evidence too
        assert replay_log(peer.log.getvalue()).forfeit == result.forfeit


def _eager(started: list[str]) -> Any:
    """A seat's background that does its work at once (a thread would run it beside the reactor:
    a stage before its input's record is checked, a hand's part before the hand), noting the
    name of each piece of work: ``stage1``, ``stage2``, ``work_before``."""

    def run(work: Callable[[], Any]) -> Callable[[], Any]:
        started.append(getattr(work, "func", work).__name__)
        result = work()
        return lambda: result

    return run


def _stages_sent(peer: Remote) -> list[int]:
    acts = [R.unpack_map(m["act"], "act") for m in peer.sent if m["t"] == "act"]
    return [act["stage"] for act in acts if act["type"] == "stage"]


def test_a_blind_v2_seat_works_its_stage_out_while_its_input_is_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A seat starts its stage as the record holding its input arrives, before checking it, and
    sends it, worked out once, when the table asks: after the record checked. So does a seat the
    host plays, as the host receives its input, before the host's check; seat 0, whose stage 1
    takes the initial deck, works it out with the rest of its part of the hand before the hand
    begins (``work_before``), as alice does her part as she takes her seat. Each other stage's
    proof was begun before its input came (its input-independent part)."""
    from canasta_net.deal.blind.hand import BlindHand
    from canasta_net.deal.blind.proofs import stages as proof_stages

    computed: list[tuple[int | None, int]] = []  # every stage a seat works out, ahead or not
    honest = BlindHand.stage_work
    begun: list[tuple[int, int]] = []  # (seat, stage) of every proof finished from its start
    honest_take = proof_stages.ProverStart.take

    def take(self: proof_stages.ProverStart, stage: int, secrets: Any) -> object | None:
        part = honest_take(self, stage, secrets)
        if part is not None:
            begun.append((secrets.seat, stage))
        return part

    monkeypatch.setattr(proof_stages.ProverStart, "take", take)

    def work(self: BlindHand, stage: int, incoming: Any) -> Any:
        computed.append((self.viewer, stage))
        return honest(self, stage, incoming)

    monkeypatch.setattr(BlindHand, "stage_work", work)
    started: list[str] = []
    h = Harness(
        config(deal="blind-v2", rules=preset("classic-2p").with_changes(target=1500), players=2)
    )
    alice = h.remote("alice", connect=False)
    alice.session.background = _eager(started)
    at_host: list[str] = []
    h.service.background = _eager(at_host)
    alice.connect()
    stopped(h.run(turn_for("act")))
    assert started == ["work_before", "stage1", "stage2"]
    assert [c for c in computed if c[0] == 1] == [(1, 1), (1, 2)]
    assert _stages_sent(alice) == [1, 2]
    # seat 0's stage 1 takes the initial deck: worked out (in the background, once) with its
    # part of the hand as the match began; its stage 2 took alice's output, worked out ahead
    assert at_host == ["work_before", "stage2"] and [c for c in computed if c[0] == 0] == [(0, 2)]
    # each proof begun before its input came, but seat 0's stage 1, worked out whole before
    assert sorted(begun) == [(0, 2), (1, 1), (1, 2)]
    assert any(r.kind == R.DEAL for r in iter_records(h.log_bytes()))


def test_a_blind_v2_seat_sends_no_stage_worked_out_on_an_input_that_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A host that logs its own seat's stage 1 without checking it, with a traced entry: the
    remote seat works its stage out on it ahead, but its copy refuses the record (naming seat 0)
    and the seat leaves without sending its stage."""
    from canasta_net.deal.blind.hand import BlindHand
    from canasta_net.deal.blind.proofs import group
    from canasta_net.hand.blind import BlindHandProtocol

    honest = BlindHand.respond

    def respond(self: BlindHand, need: Any) -> dict[str, Any]:
        fields = honest(self, need)
        if self.viewer == 0 and need.kind == "stage" and fields["stage"] == 1:
            deck = bytearray(fields["deck"])
            deck[0:33] = group.encode(group.mul(group.decode(self.initial[9]), 0xBAD))
            fields = {**fields, "deck": bytes(deck)}
        return fields

    def take(self: BlindHandProtocol, *args: Any) -> Any:
        self.blind.trusted = True  # the host checks nothing (followers do not take)
        return honest_take(self, *args)

    honest_take = BlindHandProtocol.take
    monkeypatch.setattr(BlindHand, "respond", respond)
    monkeypatch.setattr(BlindHandProtocol, "take", take)
    started: list[str] = []
    h = Harness(
        config(deal="blind-v2", rules=preset("classic-2p").with_changes(target=1500), players=2)
    )
    alice = h.remote("alice", connect=False)
    alice.session.background = _eager(started)
    alice.connect()
    h.run(limit=500)
    assert started == ["work_before", "stage1"]
    problem = alice.session.problem
    assert problem is not None and "seat 0's stage-1 output is refused" in problem
    assert _stages_sent(alice) == []


def test_a_blind_v2_seat_acts_on_one_ahead_between_two_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A hostile host that sends a seat one ``ahead`` deck after another for the same stage (its
    input, each deck a different one) makes it start its stage once: the seat acts on the first
    ``ahead`` between two records and ignores the rest (each would restart its work, in a
    thread). The deal goes on as before."""
    from canasta_net.deal.blind.hand import BlindHand
    from canasta_net.deal.blind.proofs import group

    computed: list[tuple[int | None, int]] = []
    honest = BlindHand.stage_work

    def work(self: BlindHand, stage: int, incoming: Any) -> Any:
        computed.append((self.viewer, stage))
        return honest(self, stage, incoming)

    monkeypatch.setattr(BlindHand, "stage_work", work)
    h = Harness(config(deal="blind-v2", rules=preset("classic-3p"), max_hands=1))
    h.remote("alice")
    bob = h.remote("bob", connect=False)
    started: list[str] = []
    bob.session.background = _eager(started)
    handle = bob.session.handle
    sent_ahead: list[bytes] = []

    def hostile(message: Message, send: Callable[[Message], None]) -> None:
        handle(message, send)
        if message["t"] != "ahead":
            return
        act = R.unpack_map(message["act"], "act")
        for tweak in (5, 7):  # the same stage with another deck, twice
            deck = bytearray(act["deck"])
            deck[0:33] = group.encode(group.mul(group.decode(bytes(deck[0:33])), tweak))
            again = R.pack({**act, "deck": bytes(deck)})
            sent_ahead.append(again)
            handle({"t": "ahead", "act": again}, send)

    monkeypatch.setattr(bob.session, "handle", hostile)
    bob.connect()
    stopped(h.run(turn_for("act"), limit=2000))  # dealt: the first turn of play
    assert bob.session.seat == 2 and bob.session.problem is None
    assert len(sent_ahead) == 4  # two extra decks for each of alice's two stages
    # bob's stage started once a stage, on the first ahead (the honest one): none restarted
    assert started == ["work_before", "stage1", "stage2"]
    assert [c for c in computed if c[0] == 2] == [(2, 1), (2, 2)]
    assert _stages_sent(bob) == [1, 2]
    assert any(r.kind == R.DEAL for r in iter_records(h.log_bytes()))


def test_a_forfeit_whose_evidence_proves_nothing_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A lying host that logs a seat's honest stage output as the evidence of a violation: the
    replay feeds the evidence to the hand, which finds nothing wrong with it, and refuses the
    forfeit (``bad-forfeit``, the host's fault)."""
    from canasta_net.hand.blind import BlindHandProtocol
    from canasta_net.hand.protocol import HandRefused

    honest = BlindHandProtocol.take

    def take(self: BlindHandProtocol, seat: int, type_: str, fields: Any, secret: Any) -> Any:
        if seat == 1 and type_ == "stage":
            raise HandRefused("bad-stage-proof", "made up", proves=True)
        return honest(self, seat, type_, fields, secret)

    monkeypatch.setattr(BlindHandProtocol, "take", take)
    h = Harness(config(deal="blind-v2", rules=classic(1500)))
    h.remote("alice"), h.remote("bob")
    h.run(limit=500)
    assert h.table.phase is TablePhase.OVER
    monkeypatch.undo()
    with pytest.raises(ReplayError) as refused:
        replay_log(h.log_bytes())
    assert refused.value.code == "bad-forfeit" and refused.value.seat == 0  # the host


def test_blind_stand_in_between_hands_plays_on_and_the_player_reclaims() -> None:
    """A seat that leaves while a hand's result is being signed gets a stand-in bot (it holds no
    secret then); the stand-in plays a whole hand, dealt after it took the seat, and the player
    reclaims the seat between hands and plays the next one. Every copy of the log verifies. The
    table stops after the player's hand (``max_hands``: a target no three hands reach), not at
    the match's end, which cost several more blind hands and showed nothing more."""
    h = Harness(config(deal="blind", rules=classic(20000), max_hands=3))
    alice, bob = h.remote("alice"), h.remote("bob")
    stopped(h.run(turn_for("checkpoint", bob)))
    assert h.table.match.hands_played == 1
    bob.drop()
    bob.pending.clear()
    h.clock.advance(HOLD)
    assert seat_keys(h) == [(2, stand_in_key(2))]
    stopped(h.run(lambda p, m: h.table.match.hands_played == 1 and turn_for("act", alice)(p, m)))
    bob.connect()  # back: the seat is his again once the hand in play is over
    h.run_to_end()
    assert seat_keys(h)[-1] == (2, bob.identity.public_key)
    records = list(iter_records(h.log_bytes()))
    assert records[-1].kind == R.MATCH_STOP and records[-1].fields["reason"] == R.STOP_MAX_HANDS
    assert h.table.match.hands_played == 3
    actions = [r.action for r in records if r.kind == R.ACTION and r.action is not None]
    played = {a["hand"] for a in actions if a["seat"] == 2}
    assert played == {0, 1, 2}  # bob, his stand-in (hand 1), bob again
    verify_log(h.log_bytes())
    replay_log(h.log_bytes())
    check_logs(h, alice)


# --------------------------------------------------------------------------- leaving


def test_a_host_that_closes_says_bye_to_every_connection_then_closes_it() -> None:
    """``close`` (the host's quit, or its process stopping): each open connection, seated or
    not, gets one ``bye`` with the reason, written before the connection is closed; nothing is
    held, stood in for or played afterwards."""
    h, alice, bob = short_match()
    stopped(h.run(turn_for("act", bob)))
    lurker = stranger(h)  # connected, no hello yet
    records = len(h.table.history)
    h.service.close("the host quit")
    for peer in (alice, bob, lurker):
        assert peer.transport is not None
        assert peer.transport.messages[-1] == {"t": "bye", "reason": "the host quit"}
        assert peer.closing  # closed after the bye (a transport writes out before it closes)
    late = signer_for(h, bob).action(h.table.hand_no, "draw")  # sent before bob read the bye
    assert inject(h, bob, act_message(*late)) == [] and len(h.table.history) == records
    assert h.run(hold=(bob,)) is None  # alice reads her bye and lets go; the host drops the rest
    assert alice.session.done and alice.session.problem is None
    assert alice.events[-1] == "finished: the host quit"
    for peer in (bob, lurker):
        if peer.conn is not None:
            peer.drop()
    assert h.service.connections == set()
    h.clock.advance(HOLD * 2)
    h.run()
    assert len(h.table.history) == records and seat_keys(h) == []
    assert not h.clock.getDelayedCalls()


def test_a_close_after_the_match_adds_no_second_bye() -> None:
    h, alice, bob = short_match()
    h.run_to_end()
    for peer in (alice, bob):  # seats that have not yet closed their end
        if peer.conn is None:
            peer.connect()
    h.run()
    h.service.close("the host quit")
    for peer in (alice, bob):
        byes = [m["reason"] for m in peer.received if m["t"] == "bye"]
        assert byes and set(byes) == {"the match is over"}, byes
        assert peer.closing


def test_a_seat_that_quits_is_held_then_stood_in_for_and_the_others_are_told() -> None:
    h = Harness(config(classic(3000)))
    alice, bob = h.remote("alice"), h.remote("bob")
    stopped(h.run(turn_for("act", bob)))
    bye = bob.session.quit("quit")
    assert bye == {"t": "bye", "reason": "quit"} and bob.session.done
    assert bob.session.quit("again") is None  # said once
    records = len(h.table.history)
    assert inject(h, bob, bye) == []  # no refusal: the host closes the connection
    assert bob.closing
    bob.drop()
    assert h.run() is None and seat_events(h, records) == [
        (2, "lost", "quit", None),
        (2, "held", None, int(HOLD * 1000)),
    ]
    seats = [m for m in alice.received if m["t"] == "seats"][-1]["seats"]
    assert seats[2]["left"] == "quit" and seats[2]["stand_in_in"] == HOLD
    assert "bob (seat 2) left (quit); a bot stands in after 30 s unless they return" in (
        alice.events
    )
    h.clock.advance(HOLD / 2)
    assert h.service.seat_summary()[2]["stand_in_in"] == HOLD / 2  # counts down
    h.clock.advance(HOLD / 2)  # the hold runs out: a stand-in plays on
    assert seat_keys(h) == [(2, stand_in_key(2))]
    summary = h.service.seat_summary()[2]
    assert summary["left"] == "quit" and "stand_in_in" not in summary
    h.run_to_end()
    check_logs(h, alice)


def test_when_every_person_says_bye_the_match_stops_by_agreement() -> None:
    """No person is left to play for: the host writes a match-stop instead of bots playing on;
    a seat whose player came back, or only lost its connection, does not count as left."""
    h = Harness(config(classic(3000)))
    alice, bob = h.remote("alice"), h.remote("bob")
    stopped(h.run(turn_for("act", bob)))
    inject(h, bob, {"t": "bye", "reason": "quit"})
    bob.drop()
    reconnect(bob)  # bob is back
    alice.drop()  # a lost connection is no bye
    assert h.table.phase is not TablePhase.OVER
    reconnect(alice)
    inject(h, alice, {"t": "bye", "reason": "quit"})
    alice.drop()
    assert h.table.phase is not TablePhase.OVER  # bob still plays
    records = len(h.table.history)
    inject(h, bob, {"t": "bye", "reason": "done for today"})
    assert h.table.phase is TablePhase.OVER
    stop = list(iter_records(h.log_bytes()))[-1]
    assert len(h.table.history) == records + 1 and stop.kind == R.MATCH_STOP
    assert stop.fields["reason"] == R.STOP_PLAYERS_LEFT
    bob.drop()
    h.clock.advance(HOLD)  # no stand-in takes a seat after the stop
    assert seat_keys(h) == []


def test_the_others_hear_a_seat_drop_and_come_back() -> None:
    h, alice, bob = short_match()
    stopped(h.run(turn_for("act", bob)))
    bob.drop()
    bob.pending.clear()
    h.run()
    assert "bob (seat 2) left (connection lost); a bot stands in after 30 s unless they return" in (
        alice.events
    )
    h.clock.advance(10)
    reconnect(bob)
    h.run()
    assert "bob (seat 2) is back" in alice.events
    assert "left" not in h.service.seat_summary()[2]
    assert not any("left" in line or "is back" in line for line in bob.events)
    finish_and_check(h, alice, bob)


def test_a_seats_reason_reaches_the_others_without_control_characters() -> None:
    h, alice, bob = short_match()
    stopped(h.run(turn_for("act", bob)))
    inject(h, bob, {"t": "bye", "reason": "\x1b[2J\x07gone " + "x" * 500})
    bob.drop()
    h.run()
    left = h.service.seat_summary()[2]["left"]
    assert left.startswith("[2Jgone x") and len(left) <= 80 and left.isprintable()
    assert any(line.startswith(f"bob (seat 2) left ({left});") for line in alice.events)


def test_a_bye_before_the_match_frees_the_seat() -> None:
    h = Harness(config(players=3))
    alice = h.remote("alice")
    h.run()
    inject(h, alice, {"t": "bye", "reason": "quit"})
    assert alice.closing
    alice.drop()
    assert h.service.seat_summary()[1] == {
        "seat": 1,
        "name": "(open)",
        "bot": False,
        "connected": False,
        "taken": False,
    }


class FakeEndpoint:
    """Connects each attempt to a fresh in-memory transport (counting the attempts)."""

    def __init__(self) -> None:
        self.transports: list[Any] = []

    def connect(self, factory: Any) -> Any:
        from twisted.internet.defer import succeed
        from twisted.internet.testing import StringTransportWithDisconnection

        protocol = factory.buildProtocol(None)
        transport = StringTransportWithDisconnection()
        transport.protocol = protocol
        protocol.makeConnection(transport)
        self.transports.append(transport)
        return succeed(protocol)


def seat_client(h: Harness) -> tuple[SeatClient, FakeEndpoint, list[str]]:
    events: list[str] = []
    player = RecordingBot(events, random.Random(1), lambda: None)
    session = PeerSession(Identity.from_seed(b"client test"), player, name="carol")
    endpoint = FakeEndpoint()
    client = SeatClient(endpoint, session, clock=h.clock)
    client.startService()
    assert len(endpoint.transports) == 1
    return client, endpoint, events


def test_a_seat_client_stops_for_good_after_the_hosts_bye() -> None:
    h = Harness(config())
    client, endpoint, events = seat_client(h)
    protocol = client.peer_factory.current
    assert protocol is not None
    bye = frame({"t": "bye", "reason": "the host quit"})
    protocol.dataReceived(bye)
    assert events == ["finished: the host quit"]
    assert not client.running and not endpoint.transports[0].connected
    h.clock.advance(600)
    assert len(endpoint.transports) == 1, "no reconnecting after a bye"
    assert not any("reconnecting" in e for e in events)


def test_a_seat_client_that_leaves_says_bye_then_closes() -> None:
    h = Harness(config())
    client, endpoint, events = seat_client(h)
    assert events == []
    transport = endpoint.transports[0]
    before = len(transport.value())
    stopped_ = client.leave("quit")
    assert stopped_.called and not client.running
    frames = split_frames(bytearray(transport.value()[before:]))
    assert [wire.decode(f) for f in frames] == [{"t": "bye", "reason": "quit"}]
    assert not transport.connected
    h.clock.advance(600)
    assert len(endpoint.transports) == 1
    assert client.leave("quit").called  # again: nothing more to say
    assert len(transport.value()) == before + len(frame({"t": "bye", "reason": "quit"}))


# --------------------------------------------------------------------------- searching bots


class _Pool:
    """The reactor's search pool, held: each search waits until the test answers it."""

    def __init__(self, reactor: Any) -> None:
        self.reactor = reactor
        self.closed = False
        self.asked: list[tuple[Any, Any, Deferred[Any]]] = []

    def choose(self, bot: Any, state: Any) -> Deferred[Any]:
        d: Deferred[Any] = Deferred()
        self.asked.append((bot, state, d))
        return d


def test_a_host_bot_that_searches_lets_the_table_serve_until_its_answer_comes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = Harness(config(max_hands=1, bot_kind="search:0.05"))
    pool = _Pool(h.clock)
    monkeypatch.setitem(bot_pool_module._pools, id(h.clock), pool)
    alice, bob = h.remote("alice"), h.remote("bob")
    answered = 0
    while True:
        h.run()
        if not pool.asked:
            break
        assert len(pool.asked) == 1  # one search at a time: the pump does not ask again
        bot, state, d = pool.asked.pop()
        assert isinstance(bot, SearchBot) and state.to_move in (0, 3)
        if answered == 0:
            # the host is not stuck in the search: a seat's message is answered meanwhile
            only_error(inject(h, bob, {"t": "checkpoint", "hand": 0}), "bad-message")
            h.run()
            assert not pool.asked
        d.callback(bot.candidates_in(state)[0])
        answered += 1
    assert h.table.phase is TablePhase.OVER and answered >= 5
    check_logs(h, alice, bob)


def test_a_search_that_fails_is_played_by_the_heuristic(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(_Pool):
        def choose(self, bot: Any, state: Any) -> Deferred[Any]:
            self.asked.append((bot, state, Deferred()))
            raise RuntimeError("a bug in the search")

    h = Harness(config(max_hands=1, bot_kind="search:0.05"))
    pool = Broken(h.clock)
    monkeypatch.setitem(bot_pool_module._pools, id(h.clock), pool)
    alice, bob = h.remote("alice"), h.remote("bob")
    h.run_to_end()
    assert h.table.phase is TablePhase.OVER and len(pool.asked) >= 5
    check_logs(h, alice, bob)


def test_a_seat_gets_each_move_s_records_and_its_view_in_one_write() -> None:
    # Before: one transport write per message, so over TLS one record and one send each.
    h = Harness(config(classic(100)))
    alice, bob = h.remote("alice"), h.remote("bob")
    h.run_to_end()
    for peer in (alice, bob):
        assert peer.transport is not None
        published = [kinds for kinds in peer.transport.writes if "record" in kinds]
        assert len(published) > 20
        # the welcome's resync, and every publish: its records, then the seat's fresh view
        assert all(kinds[-1] in ("view", "bye") or kinds[0] == "welcome" for kinds in published)
        assert sum(kinds.count("view") for kinds in published) >= len(published) - 2
