"""Watch mode without sockets: a watcher follows a table with the public view only.

A watcher says ``hello`` with ``watch``; the host gives it no seat and no prompt, every record
with no private payload and the public view (no hand) after each change, in both deal modes.
Every frame the host writes to a watcher is checked as it is written, against the host's state
at that moment: no private payload, no hand, no face a hidden hand holds, no seed the log has not
published. The watcher's own ``SpectatorSession`` checks the records as a seat does.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from typing import Any

import pytest
from test_table_protocol import (
    Harness,
    Message,
    Remote,
    classic,
    config,
    hello,
    inject,
    signer_for,
    stranger,
    view_faces,
)

from canasta_net.canasta.rules import preset
from canasta_net.cards import face_text
from canasta_net.games import game_for
from canasta_net.log import (
    iter_records,
    parse_header,
    parse_stored_record,
    redact_for_seat,
    redact_public,
    verify_log,
)
from canasta_net.log import records as R
from canasta_net.log.replay import replay_log
from canasta_net.net import wire
from canasta_net.net.limits import HostLimits
from canasta_net.net.spectator import SpectatorSession
from canasta_net.ui.table_model import TableModel
from canasta_net.ui.terminal_view import render_view


class Audience:
    """A watcher that keeps what it is told."""

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.views: list[dict[str, Any]] = []
        self.finished_reason: str | None = None

    def show(self, view: dict[str, Any]) -> None:
        self.views.append(view)

    def event(self, text: str) -> None:
        self.events.append(text)

    def finished(self, reason: str) -> None:
        self.finished_reason = reason


class Watcher(Remote):
    """A peer that watches: a ``SpectatorSession`` on the harness's fake wire, whose table
    model (a watcher's page draws from it) follows the session as a seat's does."""

    def _new_session(self) -> Any:
        self.audience = Audience(self.events)
        self.model = TableModel(role="spectator")
        return SpectatorSession(
            self.audience, name=self.name, log_file=self.log, observer=self.model
        )


def watcher(h: Harness, name: str, *, connect: bool = True) -> Watcher:
    peer = Watcher(h, name)
    h.remotes.append(peer)
    if connect:
        peer.connect()
    return peer


def public_copy(host_log: bytes) -> bytes:
    return b"".join(redact_public(record) for record in iter_records(host_log))


def check_public_copy(h: Harness, peer: Watcher) -> None:
    """The watcher's log is the host's with no private payload; it verifies and replays alone."""
    data = h.log_bytes()
    copy = peer.log.getvalue()
    assert peer.session.problem is None, peer.session.problem
    assert copy == public_copy(data)
    assert verify_log(copy).payload_seats == set()
    ours, theirs = replay_log(copy), replay_log(data)
    assert ours.match.scores == theirs.match.scores and ours.result == theirs.result


class PublicAuditor:
    """Checks every frame the host writes to a watcher, as it is written, against the host's
    state: nothing in it may be hidden from the public at that moment."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.header: Any = None
        self.deal = ""
        self.published: set[tuple[int, int]] = set()  # (hand, seat) seeds the log made public
        self.counts: Counter[str] = Counter()
        self.frames: list[tuple[bytes, set[tuple[int, int]]]] = []  # each with what was public
        self.live_views = 0  # views with a hand's public state in them

    def __call__(self, message: Message) -> None:
        t = message["t"]
        self.counts[t] += 1
        assert t in wire.HOST_TO_WATCHER and t not in ("welcome", "turn")
        if t == "watching":
            self.deal = message["table"]["deal"]
        elif t == "record":
            self.record(message)
        elif t == "view":
            self.view(message["view"])
        self.frames.append((wire.encode(message), set(self.published)))

    def record(self, message: Message) -> None:
        record = parse_stored_record(message["data"], message["seq"], self.header)
        if record.index == 0:
            self.header = parse_header(record)
        assert record.private == {}, f"a private payload went to a watcher ({record.kind})"
        if record.kind == R.SEEDS:
            hand = record.fields["hand"]
            self.published |= {(hand, seat) for seat in range(len(record.fields["seeds"]))}
        elif record.kind == R.REVEAL and self.deal == "blind" and record.action is not None:
            # a blind seat reveals its seed in the open once the hand's play is over
            self.published.add((record.action["hand"], record.action["seat"]))

    def view(self, view: Message) -> None:
        table = self.h.service.table
        assert table is not None
        state = table.state
        if state is None:
            assert view["state"] is None and view_faces(view) == []
            return
        shown = view["state"]
        assert shown["seat"] is None and "hand" not in shown
        assert shown["hand_sizes"] == [len(cards) for cards in state.hands]
        public = [c for team in state.melds for m in team for c in m.cards]
        public += [c for reds in state.red_threes for c in reds]
        public += state.pile[-1:]
        expected = Counter(face_text(f) for f in state.faces(public))
        # the cards each hand took with the pile, in everyone's sight (``shown``)
        expected.update(face_text(f) for known in state.shown for f in known)
        # every face the view shows is public: none from any hand
        assert Counter(view_faces(view["state"])) == expected
        self.live_views += 1

    def no_unpublished_seed(self, host_log: bytes) -> None:
        """No frame holds a seed before the log published it (checked once every seed is known,
        each frame against what was public when it was written)."""
        seeds = {
            (r.fields["hand"], seat): seed
            for r in iter_records(host_log)
            if r.kind == R.SEEDS
            for seat, seed in enumerate(r.fields["seeds"])
        }
        assert seeds
        for raw, published in self.frames:
            for where, seed in seeds.items():
                if where not in published:
                    assert seed not in raw, f"the seed of {where} went out before it was public"


def watch_a_match(
    deal: str, max_hands: int, rules: Any, people: tuple[str, ...]
) -> tuple[Harness, Watcher, PublicAuditor]:
    h = Harness(config(rules, len(people) + 1, deal=deal, max_hands=max_hands))
    auditor = PublicAuditor(h)
    w = watcher(h, "wendy", connect=False)
    w.watch = auditor
    w.connect()  # before the match: the watcher sees every record as it is written
    seats = [h.remote(name) for name in people]
    h.run_to_end()
    assert all(seat.session.problem is None for seat in seats)
    return h, w, auditor


def check_watched(h: Harness, w: Watcher, auditor: PublicAuditor, hands: int) -> None:
    check_public_copy(h, w)
    auditor.no_unpublished_seed(h.log_bytes())
    assert auditor.counts["record"] == len(h.table.history)
    assert auditor.live_views > 20  # the public view is live, not null, during the play
    assert auditor.counts["watching"] == 1
    assert h.table.match.hands_played == hands
    assert w.session.done and w.audience.finished_reason == "the match is over"
    assert w.errors() == []
    assert any("hand 1 is dealt" in e for e in w.events)
    last = w.audience.views[-1]
    assert "hand" not in (last["state"] or {}) and last["watchers"] == ["wendy"]
    render_view(last)  # the terminal draws a view with no hand


def test_a_watcher_sees_nothing_hidden_at_a_commit_reveal_table() -> None:
    h, w, auditor = watch_a_match("commit-reveal", 1, classic(5000), ("alice", "bob"))
    check_watched(h, w, auditor, hands=1)


def test_a_watchers_table_model_follows_the_public_table() -> None:
    # the model a watcher's page draws from: the game, the seats, every move, the score sheet,
    # and never a hand or a prompt
    h, w, _ = watch_a_match("commit-reveal", 1, classic(5000), ("alice", "bob"))
    model = w.model
    model.show(w.audience.views[-1])
    snap = model.snapshot()
    assert snap["role"] == "spectator" and snap["seat"] is None
    assert snap["game"] == "canasta" and snap["variant"] == "classic"
    assert [s["name"] for s in snap["seats"]] == ["host (bot)", "alice", "bob", "bot-3"]
    assert snap["watchers"] == ["wendy"]
    assert snap["hand"] == [] and snap["legal"] == [] and snap["prompt"] is None
    assert snap["last_move"] is not None and snap["hand_end"] is not None
    assert snap["hand_end"]["sides"] and snap["history"] == [h.table.match.scores]
    assert snap["match_end"] is not None


def test_a_watcher_sees_nothing_hidden_at_a_blind_table() -> None:
    # two seats: the blind deal's cryptography grows with the seats, the test's time with it
    h, w, auditor = watch_a_match("blind", 1, preset("classic-2p"), ("alice",))
    check_watched(h, w, auditor, hands=1)


def test_a_watcher_that_comes_late_or_comes_back_gets_the_public_copy() -> None:
    h = Harness(config(classic(5000), max_hands=1))
    h.remote("alice"), h.remote("bob")
    w = watcher(h, "wendy", connect=False)
    stop = h.run(lambda peer, m: m["t"] == "turn" and m["need"] == "act")
    assert stop is not None and h.table.state is not None
    written = len(h.table.history)
    w.connect()  # mid-hand: every record so far, then the public view
    h.run(lambda peer, m: peer is w and m["t"] == "view")
    assert w.session.last_seq >= written - 1 and w.session.view == {}
    h.run(lambda peer, m: peer is w and m["t"] == "record")
    assert w.session.view["state"] is not None and "hand" not in w.session.view["state"]
    w.drop()  # the connection is lost; the watcher comes back with what it holds
    w.pending.clear()
    w.connect()
    h.run_to_end()
    check_public_copy(h, w)
    resent = [m["seq"] for m in w.received if m["t"] == "record"]
    assert set(resent) == set(range(len(h.table.history)))
    # after coming back, only what it did not hold: the resync starts after its last record
    assert len(resent) - len(set(resent)) < 10


def test_a_watcher_gets_no_seat_no_prompt_and_its_seat_messages_are_refused() -> None:
    h = Harness(config(classic(100), max_hands=1))
    a, _ = h.remote("alice"), h.remote("bob")
    w = stranger(h, "wendy")
    answers = inject(h, w, hello(watch=True, max=2))
    assert [m["t"] for m in answers][:2] == ["watching", "record"]
    h.run(lambda peer, m: m["t"] == "turn" and m["need"] == "act" and peer is a)
    records = len(h.table.history)
    signer = signer_for(h, a)
    act, asig = signer.chat(0, "hello from the watcher")
    for message in (
        {"t": "act", "act": act, "asig": asig},
        {"t": "commit", "act": act, "asig": asig},
        {"t": "checkpoint", "hand": 0, "sig": b"s" * 64},
        {"t": "fork", "record": b"\x93"},
        hello(watch=True),  # a second hello
    ):
        answer = inject(h, w, message)
        codes = [m["code"] for m in answer if m["t"] == "error"]
        assert codes == (["already-seated"] if message["t"] == "hello" else ["watching"])
        assert not w.closing
    assert len(h.table.history) == records  # nothing was written
    h.run_to_end()
    assert all(m["t"] not in ("welcome", "turn") for m in w.received)
    assert h.table.match.hands_played == 1  # the table went on


def test_watchers_are_capped_and_the_one_too_many_is_told_and_stops() -> None:
    h = Harness(config(classic(100), max_hands=1))
    h.service.limits = HostLimits(silence_limit=3600.0, max_watchers=2)
    first, second = watcher(h, "w1"), watcher(h, "w2")
    third = watcher(h, "w3")
    h.run()
    assert third.errors() == ["too-many-watchers"] and third.session.done
    assert third.session.problem is not None and "too-many-watchers" in third.session.problem
    assert third.conn is None  # closed
    assert first.session.problem is None and second.session.problem is None
    # the same identity again (a new connection while the old one lingers) takes its place
    again = watcher(h, "w1")
    h.run()
    assert again.errors() == [] and again.session.problem is None
    assert {"t": "bye", "reason": "the same identity connected again"} in first.received
    assert len(h.service.watchers) == 2 and h.service.watcher_names() == ["w2", "w1"]


def test_every_seat_is_told_who_watches() -> None:
    h = Harness(config(classic(100), max_hands=1))
    a, b = h.remote("alice"), h.remote("bob")
    w = watcher(h, "wendy\x1b[31m")  # its name goes to terminals: control characters go
    h.run(lambda peer, m: m["t"] == "turn" and m["need"] == "act")
    seats = [m for m in a.received if m["t"] == "seats"][-1]
    assert seats["watchers"] == ["wendy[31m"]
    assert "wendy[31m is watching" in a.events and "wendy[31m is watching" in b.events
    views = [m for m in b.received if m["t"] == "view"]
    assert views[-1]["view"]["watchers"] == ["wendy[31m"]
    assert "watching: wendy[31m" in render_view(views[-1]["view"])
    w.send({"t": "bye", "reason": "done"})
    h.run_to_end()
    assert "wendy[31m stopped watching" in a.events
    seats = [m for m in a.received if m["t"] == "seats"][-1]
    assert seats["watchers"] == []


def test_a_watcher_needs_the_tables_password() -> None:
    h = Harness(config(classic(100), max_hands=1, password="sesame"))
    w = stranger(h, "wendy")
    answers = inject(h, w, hello(watch=True))
    assert [m.get("code") for m in answers if m["t"] == "error"] == ["bad-password"]
    assert w.closing
    ok = stranger(h, "walter")
    answers = inject(h, ok, hello(watch=True, password="sesame"))
    assert answers[0]["t"] == "watching"


@functools.cache
def played_hand() -> tuple[dict[str, Any], list[Any]]:
    """A table's description and the host's records of one hand played (made once)."""
    h = Harness(config(classic(100), max_hands=1))
    h.remote("alice"), h.remote("bob")
    h.run_to_end()
    return h.service.table_info(), list(iter_records(h.log_bytes()))


def test_a_spectator_leaves_a_host_that_sends_it_a_private_payload() -> None:
    table, records = played_hand()
    audience = Audience([])
    session = SpectatorSession(audience)
    sent: list[Message] = []
    session.handle({"t": "watching", "version": 2, "table": table, "head": bytes(32)}, sent.append)
    leaked = False
    for record in records:
        # a host that forgets to redact: the copy of the first seat with a payload
        data = redact_for_seat(record, min(record.private)) if record.private else None
        data = data or redact_public(record)
        session.handle({"t": "record", "seq": record.index, "data": data}, sent.append)
        if record.private:
            leaked = True
            break
    assert leaked and session.done and session.problem is not None
    assert "private payload" in session.problem and audience.finished_reason is not None
    assert sent == []


def test_a_spectator_checks_the_host_as_a_seat_does() -> None:
    """A record whose signature is broken: the watcher says so and stops, as a seat would."""
    table, records = played_hand()
    session = SpectatorSession(Audience([]))
    session.handle(
        {"t": "watching", "version": 2, "table": table, "head": bytes(32)}, lambda m: None
    )
    for record in records[:3]:
        session.handle(
            {"t": "record", "seq": record.index, "data": redact_public(record)}, lambda m: None
        )
    bad = bytearray(redact_public(records[3]))
    bad[-5] ^= 1  # inside the host's signature
    session.handle({"t": "record", "seq": 3, "data": bytes(bad)}, lambda m: None)
    assert session.problem is not None and "record 3 fails verification" in session.problem


def test_a_watcher_given_a_seat_by_an_older_host_gives_it_back_and_stops() -> None:
    h = Harness(config(classic(100), max_hands=1))
    welcome = {
        "t": "welcome",
        "version": 2,
        "seat": 1,
        "table": h.service.table_info(),
        "aseq": 0,
        "head": bytes(32),
    }
    audience = Audience([])
    session = SpectatorSession(audience)
    sent: list[Message] = []
    session.handle(welcome, sent.append)
    assert sent == [{"t": "bye", "reason": "watching only"}]
    assert session.done and session.problem is not None and "older version" in session.problem


@pytest.mark.parametrize("variant", ["classic", "samba", "may-i"])
def test_the_public_view_is_the_seat_view_of_no_seat(variant: str) -> None:
    game = game_for(variant)
    state = game.new_match(0).new_hand(
        random.Random(5).sample(range(game.deck_size), game.deck_size)
    )
    public = game.public_view(state)
    for seat in range(game.players):
        mine = game.seat_view(state, seat)
        assert mine["hand"]
        assert {k: v for k, v in mine.items() if k != "hand"} == {**public, "seat": seat}
    assert public["seat"] is None and "hand" not in public
    assert list(public) == [k for k in game.seat_view(state, 0) if k != "hand"]  # same order


def test_a_watcher_that_reads_nothing_is_dropped_and_the_table_goes_on() -> None:
    h = Harness(config(classic(100), max_hands=1))
    a, _ = h.remote("alice"), h.remote("bob")
    w = watcher(h, "wendy")
    h.run(lambda peer, m: m["t"] == "turn" and m["need"] == "act")
    conn = w.conn
    assert conn is not None and conn in h.service.watchers
    conn.limits = HostLimits(max_unsent=20_000)
    conn.pauseProducing()  # what TCP does once its buffer to the watcher is full
    h.run_to_end()
    assert conn.drop_reason is not None and conn.drop_reason.startswith("slow-reader")
    assert h.service.watchers == [] and "wendy stopped watching" in a.events
    assert h.table.match.hands_played == 1
