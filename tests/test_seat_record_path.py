"""A seat's record path: the checks it skips nothing of when it is made cheaper.

A seat checks a hand's records only when the hand's seeds are published; it may spread that
check over several reactor turns (``PeerSession.spread_checks``), and the follower lets the
engine's ``apply`` validate an action without asking ``check`` first. Each test here fails if
the shortcut lets a false record through, or answers differently from the plain path.
"""

from __future__ import annotations

import copy
import struct
from collections.abc import Callable, Sequence
from typing import Any

import msgpack
import pytest
from seat_feed import Quiet, welcome_for
from test_game_log import change, expect_replay_error, find, resign, seat_copy, semantic_log
from twisted.internet.testing import StringTransport

from canasta_net.canasta.actions import parse_action
from canasta_net.errors import IllegalAction
from canasta_net.identity import Identity
from canasta_net.log import StoredRecord, iter_records, parse_header
from canasta_net.log import format as log_format
from canasta_net.log import records as R
from canasta_net.log.replay import Replayer
from canasta_net.net import wire
from canasta_net.net.peer import CHECK_SLICE, PeerFactory, PeerSession
from canasta_net.net.read_turns import read_turns

SEAT = 1  # the seat whose copy of the log is followed


def host_messages(log: bytes, seat: int) -> list[tuple[dict[str, Any], str]]:
    """What the host sends a seat, with each record's kind: its welcome, then every record of
    the seat's copy of ``log`` (each through the wire's encoding, as the seat receives it)."""
    data = seat_copy(log, seat)
    records = list(iter_records(data))
    messages = [(welcome_for(records[0].fields, seat, "t"), "")]
    for r in records:
        stored = data[r.offset : r.offset + r.size]
        messages.append(({"t": "record", "seq": r.index, "data": stored}, r.kind))
    return [(wire.decode(wire.encode(m)), kind) for m, kind in messages]


def follow(
    messages: list[tuple[dict[str, Any], str]],
    *,
    sliced: bool,
    after_seeds: Sequence[dict[str, Any]] = (),
) -> tuple[PeerSession, list[dict[str, Any]], list[int]]:
    """Feed ``messages`` to a new seat session; ``sliced``: one held record a slice (the
    connection layer's reactor turns, driven here by hand). ``after_seeds``: messages that come
    right after the first seeds record, while its hand is checked. Returns the session, what it
    sent, and how many slices each seeds record's hand took."""
    session = PeerSession(Identity.generate(), Quiet(), bot=True)
    if sliced:
        session.spread_checks(0.0)  # no time left after any record: one record a slice
    sent: list[dict[str, Any]] = []
    slices: list[int] = []
    extra = list(after_seeds)
    for message, kind in messages:
        session.handle(message, sent.append)
        if kind == R.SEEDS:
            for waiting in extra:
                session.handle(waiting, sent.append)
            extra = []
            turns, answered = 0, len(sent)
            while session.busy:
                assert len(sent) == answered, "a message that came meanwhile was answered early"
                turns += 1
                session.work()
            slices.append(turns)
        if session.problem is not None:
            break
    return session, sent, slices


def test_a_seat_checks_a_hands_held_records_in_slices_with_the_same_outcome() -> None:
    messages = host_messages(semantic_log().data, SEAT)
    whole, _, whole_slices = follow(messages, sliced=False)
    sliced, _, slices = follow(messages, sliced=True)
    assert whole.problem is None and sliced.problem is None
    assert whole_slices == [0] * len(whole_slices)  # all at once: never busy
    # one held record a slice: a hand is tens of records
    assert len(slices) == len(whole_slices) >= 2 and all(n > 10 for n in slices), slices
    assert sliced.copy.replayer is not None and whole.copy.replayer is not None
    assert sliced.copy.replayer.match.scores == whole.copy.replayer.match.scores
    assert sliced.copy.replayer.pending == 0
    hands = [(h.scores, h.actions) for h in sliced.copy.replayer.hands]
    assert hands == [(h.scores, h.actions) for h in whole.copy.replayer.hands]
    assert sliced.copy.hashes == whole.copy.hashes
    assert sliced.signer is not None and whole.signer is not None
    assert sliced.signer.head == whole.signer.head


def test_messages_that_come_during_a_sliced_check_wait_and_keep_their_order() -> None:
    messages = host_messages(semantic_log().data, SEAT)
    pings = [{"t": "ping"}, {"t": "ping"}]
    session, sent, slices = follow(messages, sliced=True, after_seeds=pings)
    assert session.problem is None and slices[0] > 1
    assert sent == [{"t": "pong"}, {"t": "pong"}]  # answered once the hand was checked


def first_hand_action(records: list[StoredRecord], nth: int) -> StoredRecord:
    """The ``nth`` action record of the first hand (held by a seat until the hand's seeds)."""
    first_seeds = find(records, R.SEEDS).index
    return [r for r in records if r.kind == R.ACTION and r.index < first_seeds][nth]


@pytest.mark.parametrize("sliced", [False, True], ids=["at-once", "in-slices"])
@pytest.mark.parametrize("nth", [17, -1], ids=["middle", "last"])
def test_a_false_held_record_is_refused_however_the_check_is_spread(sliced: bool, nth: int) -> None:
    recording = semantic_log()
    records = recording.records()
    target = first_hand_action(records, nth)
    author = target.action["seat"] if target.action else -1
    # the author's own key signs an action its hand cannot make: only the game checks see it
    mutate = change(records, target.index, act=lambda a: a.update(action="merge 0 9"))
    tampered = resign(recording.data, mutate, seed=11)
    expect_replay_error(tampered, target.index, "illegal-action", author)  # the auditor's word
    seeds_index = next(r.index for r in iter_records(tampered) if r.kind == R.SEEDS)
    session, sent, _ = follow(host_messages(tampered, SEAT), sliced=sliced)
    assert session.problem is not None and session.done and sent == []
    assert f"record {seeds_index}: seat {author}: 'merge 0 9': " in session.problem
    assert session.copy.replayer is not None and not session.copy.replayer.seeds_published


def test_a_checkpoint_prompt_waits_for_the_hands_check() -> None:
    log = semantic_log().data
    messages = host_messages(log, SEAT)
    seeds_at = next(n for n, (_, kind) in enumerate(messages) if kind == R.SEEDS)
    checkpoint = next(r for r in iter_records(log) if r.kind == R.CHECKPOINT)
    session = PeerSession(Identity.generate(), Quiet(), bot=True)
    session.spread_checks(0.0)
    sent: list[dict[str, Any]] = []
    for message, _ in messages[: seeds_at + 1]:
        session.handle(message, sent.append)
    replayer = session.copy.replayer
    assert session.busy and replayer is not None and not replayer.seeds_published
    # the host prompts for the checkpoint at once: asked now, the seat would refuse ("the hand
    # is not finished in my log"); the prompt waits for the hand's check, then is signed
    prompt = {
        "t": "turn",
        "need": "checkpoint",
        "hand": replayer.hand_no,
        "aseq": 0,
        "msg": checkpoint.fields["msg"],
    }
    session.handle(prompt, sent.append)
    assert sent == [] and session.busy
    while session.busy:
        session.work()
    assert session.problem is None and replayer.seeds_published
    assert [m["t"] for m in sent] == ["checkpoint"]


# ----------------------------------------------------------------- the follower's engine checks


def state_before(records: list[StoredRecord], target: StoredRecord) -> Any:
    """The engine's state just before ``target``, from the host's log (which holds every seed)."""
    replayer = Replayer(parse_header(records[0]))
    seen: list[Any] = []
    replayer.observe(lambda record, state: seen.append(state.copy()))
    for record in records[1 : target.index]:
        replayer.feed(record)
    return seen[-1]


ILLEGAL: list[Callable[[Any, int], str]] = [
    lambda state, seat: "draw",  # at the discard step: draw again
    lambda state, seat: "discard " + _card_not_held(state, seat),
    lambda state, seat: "meld " + " ".join(_faces(state, seat)[:2]),  # two cards: no meld
    lambda state, seat: "merge 0 7",
]


def _faces(state: Any, seat: int) -> list[str]:
    return sorted(state.faces_text(state.hands[seat]))


def _card_not_held(state: Any, seat: int) -> str:
    held = set(_faces(state, seat))
    return next(f for f in ("2C", "3H", "4S", "5D", "JH", "QS", "KC") if f not in held)


@pytest.mark.parametrize("make", ILLEGAL, ids=["draw", "discard", "meld", "merge"])
def test_the_follower_refuses_every_action_the_engines_check_refuses(
    make: Callable[[Any, int], str],
) -> None:
    """The follower lets ``apply`` validate alone: each action the engine's own ``check``
    refuses at that point must still be refused, as ``illegal-action`` with check's code."""
    recording = semantic_log()
    records = recording.records()
    target = _a_discard(records)
    assert target.action is not None
    seat = target.action["seat"]
    state = state_before(records, target)
    text = make(state, seat)
    game_action = _parse(text)
    with pytest.raises(IllegalAction) as refused:
        state.check(game_action, seat)
    mutate = change(records, target.index, act=lambda a: a.update(action=text))
    error = expect_replay_error(
        resign(recording.data, mutate, seed=11), target.index, "illegal-action", seat
    )
    assert refused.value.code in error.reason


def _a_discard(records: list[StoredRecord]) -> StoredRecord:
    """A discard well into the first hand: the seat to move is at its discard step."""
    return next(
        r
        for r in records[40:]
        if r.kind == R.ACTION
        and r.action is not None
        and str(r.action.get("action", "")).startswith("discard")
    )


def _parse(text: str) -> Any:
    return parse_action(text)


class Turns:
    """A reactor's calls for its next turns, run one turn at a time by the test."""

    def __init__(self) -> None:
        self.due: list[Callable[[], object]] = []

    def callLater(
        self, delay: float, f: Callable[..., object], *args: Any
    ) -> None:  # Twisted's name
        assert delay == 0
        self.due.append(lambda: f(*args))

    def turn(self) -> None:
        due, self.due = self.due, []
        for call in due:
            call()


def test_the_connection_checks_a_hand_one_slice_a_reactor_turn() -> None:
    messages = host_messages(semantic_log().data, SEAT)
    session = PeerSession(Identity.generate(), Quiet(), bot=True)
    turns = Turns()
    protocol = PeerFactory(session, clock=turns).buildProtocol(None)
    protocol.makeConnection(StringTransport())
    read_turns(turns).timer = lambda: 0.0  # the process's share of a turn never runs out here
    assert session.check_slice == CHECK_SLICE  # the connection spreads the checks
    session.spread_checks(0.0)  # one record a slice, however fast this machine
    slices = []
    for message, kind in messages:
        protocol.dataReceived(frame(message))
        if kind == R.SEEDS:
            slices.append(1)  # the first slice, as the record came
            while session.busy:
                assert len(turns.due) == 1  # the next slice, in the next turn
                turns.turn()
                slices[-1] += 1
            assert not turns.due
    assert session.problem is None and len(slices) >= 2 and all(n > 10 for n in slices)


def frame(message: dict[str, Any]) -> bytes:
    data = wire.encode(message)
    return struct.pack("!I", len(data)) + data


# ----------------------------------------------------------------- the log reader's plain walk


def plain_by_reference(value: Any) -> bool:
    """The plain-msgpack walk, item by item (what ``format._is_plain`` did before it checked a
    map's or list's scalars all at once)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            stack.extend(item.keys())
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
        elif type(item) not in (str, bytes, int, float, bool, type(None)):
            return False
    return True


def test_the_plain_walk_refuses_an_ext_value_at_any_place() -> None:
    odd = msgpack.Timestamp(1, 0)  # the one ext type msgpack decodes past ``ext_hook``
    record = next(r for r in semantic_log().records() if r.action is not None)
    base: Any = {**record.fields, "nested": [{"a": [1, b"x", None]}, 2.5], "k": {"x": {}}}
    variants = [base, [], {}, 3, odd, [odd], {odd: 1}, {"a": odd}]
    for path in (("nested",), ("nested", 0, "a"), ("k", "x"), ("priv",)):
        for place in ("value", "key"):
            changed = copy.deepcopy(base)
            holder = changed
            for step in path:
                holder = holder[step] if type(holder) is not dict or step in holder else {}
            if type(holder) is list:
                holder.append(odd)
            elif type(holder) is dict:
                holder[odd if place == "key" else "odd"] = 1 if place == "key" else odd
            variants.append(changed)
    for value in variants:
        assert log_format._is_plain(value) == plain_by_reference(value), value
    assert not all(plain_by_reference(v) for v in variants)
