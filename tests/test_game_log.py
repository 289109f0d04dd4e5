"""Game logs end to end: record, replay, redact, tamper with, and the host's refusals.

Every log here is recorded through the real table protocol (``recorded_match``: a HostTable and its
seats' signers wired directly, greedy bots) and checked by the real replayer. Tampering comes in
two strengths: bytes changed without the keys (the container must notice), and records rewritten
with every signature valid again (``resign``, with the bots' real keys): then only the replayer's
game checks stand between a lying host and the auditor.
"""

from __future__ import annotations

import copy
import hashlib
import io
import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, cast

import msgpack
import pytest

from canasta_net.canasta.actions import Discard, TakePile
from canasta_net.canasta.match import MatchResult
from canasta_net.canasta.position import position_to_dict
from canasta_net.canasta.rules import preset
from canasta_net.canasta.state import HandState, Phase
from canasta_net.cards import is_black_three, is_wild, rank_of
from canasta_net.errors import IllegalAction
from canasta_net.log import (
    LogError,
    LogVerificationError,
    LogWriter,
    StoredRecord,
    iter_records,
    redact_for_seat,
    verify_log,
)
from canasta_net.log import records as R
from canasta_net.log.replay import ReplayError, replay_log, replay_records
from canasta_net.table.host import HostTable, TableError, TablePhase
from canasta_net.table.local import LocalMatch, bot_identity, recorded_match

PRESETS = ("classic", "classic-2p", "classic-3p", "vienna")
EXAMPLE_LOG = Path(__file__).parent / "data" / "example.cnlog"
EXAMPLE_VARIANT, EXAMPLE_SEED, EXAMPLE_HANDS = "classic-2p", 2, 1
WRITER_FIELDS = frozenset({"seq", "prev", "kind", "priv", "time"})


def pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)  # type: ignore[no-any-return]


def unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


# --------------------------------------------------------------------------- recordings


@dataclass(frozen=True)
class Recording:
    """A match as the host saw it, and its log."""

    variant: str
    seed: int
    data: bytes
    players: int
    scores: list[int]
    hands: int
    result: MatchResult | None
    final: dict[str, Any]  # position_to_dict of the last hand's final state

    def records(self) -> list[StoredRecord]:
        return list(iter_records(self.data))


def play_recorded(variant: str, seed: int, max_hands: int | None) -> tuple[LocalMatch, bytes, Any]:
    buf = io.BytesIO()
    match = recorded_match(preset(variant), buf, seed=seed)
    last: list[HandState] = []

    def keep_state() -> None:
        if match.host.state is not None:
            last[:] = [match.host.state]

    match.play(max_hands=max_hands, on_step=keep_state)
    return match, buf.getvalue(), position_to_dict(last[-1])


@cache
def record(variant: str, seed: int, max_hands: int | None) -> Recording:
    match, data, final = play_recorded(variant, seed, max_hands)
    host = match.host
    return Recording(
        variant=variant,
        seed=seed,
        data=data,
        players=host.rules.players,
        scores=list(host.match.scores),
        hands=host.match.hands_played,
        result=host.match.result,
        final=final,
    )


def seat_copy(data: bytes, seat: int) -> bytes:
    """A seat's copy of a log: every stored record redacted for that seat."""
    return b"".join(redact_for_seat(record, seat) for record in iter_records(data))


RECORDINGS = [pytest.param(name, 2, id=f"{name}-2-hands") for name in PRESETS] + [
    pytest.param("classic", None, id="classic-full-match")
]


def check_replay(rec: Recording, data: bytes) -> None:
    result = replay_log(data)
    assert isinstance(result.state, HandState)
    assert position_to_dict(result.state) == rec.final
    assert result.match.scores == rec.scores
    assert result.match.hands_played == rec.hands == len(result.hands)
    assert result.result == rec.result
    assert result.forfeit is None and result.truncated is None and result.pending == 0
    for hand in result.hands:
        assert hand.checkpoint_signers == frozenset(range(rec.players))


@pytest.mark.parametrize(("variant", "hands"), RECORDINGS)
def test_the_replay_agrees_with_the_host(variant: str, hands: int | None) -> None:
    rec = record(variant, 1, hands)
    if hands is None:
        assert rec.result is not None and max(rec.scores) >= preset(variant).target
    else:
        assert rec.hands == hands and rec.result is None
    report = verify_log(rec.data)
    assert report.header.variant == variant and report.header.insecure
    assert report.payload_seats == frozenset(range(rec.players))
    assert not any(report.private_absent.values())
    check_replay(rec, rec.data)


@pytest.mark.parametrize(("variant", "hands"), RECORDINGS)
def test_every_seats_copy_verifies_and_replays(variant: str, hands: int | None) -> None:
    rec = record(variant, 1, hands)
    for seat in range(rec.players):
        copy = seat_copy(rec.data, seat)
        report = verify_log(copy)
        assert report.records == verify_log(rec.data).records
        assert report.payload_seats == {seat}
        assert all(report.private_absent[s] for s in range(rec.players) if s != seat)
        check_replay(rec, copy)


@pytest.mark.parametrize("variant", PRESETS)
def test_a_seats_copy_replays_each_hand_at_its_seeds(variant: str) -> None:
    rec = record(variant, 1, 2)
    full = list(replay_records(rec.data))
    assert all(replayer.pending == 0 for _, replayer in full)
    for seat in range(rec.players):
        held = 0
        hands_replayed = 0
        for stored, replayer in replay_records(seat_copy(rec.data, seat)):
            if stored.kind in (R.DEAL, R.ACTION, R.HAND_END):
                held += 1
                assert replayer.pending == held  # the deck is not known yet
                assert replayer.current is not None and replayer.current.state is None
            elif stored.kind == R.SEEDS:
                assert replayer.pending == 0
                assert replayer.current is not None and replayer.current.state is not None
                assert replayer.current.state.is_over and replayer.current.scores
                held = 0
                hands_replayed += 1
        assert hands_replayed == rec.hands


# --------------------------------------------------------------------------- container tampering


def tamper_log() -> Recording:
    return record("classic", 5, 1)


def flip(data: bytes, position: int, bit: int) -> bytes:
    out = bytearray(data)
    out[position] ^= 1 << bit
    return bytes(out)


def sample_flips(stored: StoredRecord) -> list[tuple[int, int]]:
    """Byte positions (absolute) and bits: the record's framing bytes, its last byte, and a
    spread of positions through the body, the host signature and the private payloads."""
    rng = random.Random(f"flip {stored.kind} {stored.index}")
    start, size = stored.offset, stored.size
    positions = {0, 1, 2, 3, size - 1, size - 65, size - 66}
    positions |= {rng.randrange(size) for _ in range(12)}
    return [(start + p, rng.randrange(8)) for p in sorted(positions) if 0 <= p < size]


def first_of_each_kind(records: list[StoredRecord]) -> list[StoredRecord]:
    first: dict[str, StoredRecord] = {}
    for stored in records:
        first.setdefault(stored.kind, stored)
    return [*first.values(), records[-1]]


TAMPER_KINDS = [
    "header",
    "commit",
    "commitments",
    "reveal",
    "deal",
    "action",
    "hand-end",
    "seeds",
    "checkpoint",
]


@pytest.mark.parametrize("kind", TAMPER_KINDS)
def test_flipping_a_bit_is_detected(kind: str) -> None:
    rec = tamper_log()
    records = rec.records()
    targets = [r for r in first_of_each_kind(records) if r.kind == kind]
    assert targets
    outcomes: Counter[str] = Counter()
    for stored in targets:
        for position, bit in sample_flips(stored):
            tampered = flip(rec.data, position, bit)
            try:
                result = replay_log(tampered)
            except LogError as e:
                assert e.record_no == stored.index, (position, bit, e)
                outcomes[e.code] += 1
                continue
            except ReplayError as e:  # pragma: no cover - a flip never passes the container
                pytest.fail(f"a flipped bit passed the container check: {e} [{e.code}]")
            # A length field flipped upwards once made the rest of the file read as one record
            # cut short by a crash; the reader now refuses a tail a crash cannot leave.
            pytest.fail(f"a flipped bit passed: {stored.kind} {position} {bit} {result.truncated}")
    assert sum(outcomes.values()) >= 15
    if kind == "header":
        # The header is checked as a whole before the replayer reads its rules.
        assert not outcomes.keys() - {
            "bad-host-signature",
            "bad-encoding",
            "bad-field",
            "bad-version",
            "missing-header",
            "not-an-array",
        }


def test_a_tampered_header_is_blamed_on_its_signature_not_its_rules() -> None:
    rec = tamper_log()
    header = rec.records()[0]
    rules = unpack(header.body)["rules"]
    key = next(k for k, v in rules.items() if type(v) is int and v > 0)
    # Rewrite one rule's integer in place (same encoding length): the body still decodes.
    old, new = pack(rules[key]), pack(rules[key] - 1)
    assert len(old) == len(new)
    at = header.body.index(pack(key) + old) + len(pack(key))
    body = header.body[:at] + new + header.body[at + len(old) :]
    tampered = rec.data.replace(header.body, body, 1)
    with pytest.raises(LogVerificationError) as info:
        replay_log(tampered)
    assert (info.value.record_no, info.value.code) == (0, "bad-host-signature")


def stored_pieces(data: bytes) -> list[bytes]:
    return [data[r.offset : r.offset + r.size] for r in iter_records(data)]


def expect_log_error(data: bytes, record_no: int, code: str) -> LogError:
    with pytest.raises(LogError) as info:
        replay_log(data)
    assert (info.value.record_no, info.value.code) == (record_no, code), info.value
    return info.value


def sample_indices(records: list[StoredRecord]) -> list[int]:
    """One record of each kind (not the header, not the last record) and a middle action."""
    kinds = {r.index for r in first_of_each_kind(records)} - {0, len(records) - 1}
    actions = [r.index for r in records if r.kind == R.ACTION]
    return sorted(kinds | {actions[len(actions) // 2]})


def test_removing_a_record_is_detected() -> None:
    pieces = stored_pieces(tamper_log().data)
    for k in sample_indices(tamper_log().records()):
        expect_log_error(b"".join(pieces[:k] + pieces[k + 1 :]), k, "bad-seq")
    expect_log_error(b"".join(pieces[1:]), 0, "missing-header")
    # The file alone cannot show that its last records were cut off (docs/log-format.md,
    # "Truncation"): that is what checkpoints and the seats' own copies are for.
    assert replay_log(b"".join(pieces[:-1])).records == len(pieces) - 1


def test_reordering_two_records_is_detected() -> None:
    pieces = stored_pieces(tamper_log().data)
    for k in sample_indices(tamper_log().records()):
        swapped = list(pieces)
        swapped[k], swapped[k + 1] = swapped[k + 1], swapped[k]
        expect_log_error(b"".join(swapped), k, "bad-seq")
    # Far apart, too: the first displaced record is named.
    swapped = list(pieces)
    swapped[3], swapped[40] = swapped[40], swapped[3]
    expect_log_error(b"".join(swapped), 3, "bad-seq")


def test_duplicating_a_record_is_detected() -> None:
    pieces = stored_pieces(tamper_log().data)
    for k in [*sample_indices(tamper_log().records()), len(pieces) - 1]:
        expect_log_error(b"".join(pieces[: k + 1] + pieces[k:]), k + 1, "bad-seq")


def test_swapping_two_host_signatures_is_detected() -> None:
    rec = tamper_log()
    records = rec.records()
    pieces = stored_pieces(rec.data)

    def with_sig(stored: StoredRecord, sig: bytes) -> bytes:
        return pack([stored.body, sig, stored.private])

    for k in sample_indices(records):
        j = k + 7 if k + 7 < len(records) else 1  # the earlier of the two is named
        a, b = records[k], records[j]
        swapped = list(pieces)
        swapped[k], swapped[j] = with_sig(a, b.host_sig), with_sig(b, a.host_sig)
        error = expect_log_error(b"".join(swapped), min(j, k), "bad-host-signature")
        assert isinstance(error, LogVerificationError) and error.seat == 0


# --------------------------------------------------------------------------- semantic tampering

Mutation = Callable[
    [int, dict[str, Any], dict[str, Any] | None],
    tuple[dict[str, Any], dict[str, Any] | None, Mapping[int, bytes]],
]


def resign(log: bytes, mutate: Mutation, *, seed: int) -> bytes:
    """Rewrite ``log`` through ``mutate``, with every signature valid again.

    ``mutate(index, fields, act)`` gets each record's body fields (without those the writer fills
    in: seq, prev, kind, priv) and its decoded ``act`` (or None), and returns the fields, the act
    and the private payloads to write. A fresh ``LogWriter`` with the host's real key
    (``bot_identity(seed, host)``) writes the records, so every ``seq``, ``prev`` and ``priv`` and
    every host signature is right. Since a changed record changes its hash, and so every later
    hash, references into the chain are mapped from old hashes to new ones: each act's ``head``
    and each checkpoint's ``head`` and ``result.hand_end``. Each author's ``aseq`` is renumbered
    in log order (so an act moved to another seat stays in sequence). An act whose content ends
    up different from the original is re-encoded and signed by its author's real key
    (``bot_identity(seed, seat)``); an unchanged act keeps its exact bytes and signature. A
    checkpoint message that changes is signed again by every seat that had signed it.
    """
    records = list(iter_records(log))
    header = records[0].fields
    out = io.BytesIO()
    now = [0]  # each record keeps its time (format 2)
    writer = LogWriter(
        out, bot_identity(seed, header["host"]), fsync=False, clock=lambda: now[0] / 1000
    )
    writer.write_header({k: v for k, v in header.items() if k not in WRITER_FIELDS | {"format"}})
    new_hash = {records[0].hash: writer.head}
    aseq: Counter[int] = Counter()
    for stored in records[1:]:
        fields = {k: v for k, v in stored.fields.items() if k not in WRITER_FIELDS}
        now[0] = stored.fields.get("time", 0)
        original_act = stored.action
        fields, act, private = mutate(
            stored.index, fields, None if original_act is None else dict(original_act)
        )
        if act is None:
            fields.pop("act", None)
            fields.pop("asig", None)
        else:
            author = act["seat"]
            act = {
                **act,
                "head": new_hash.get(act["head"], act["head"]),
                "aseq": aseq[author],
            }
            aseq[author] += 1
            if act != original_act or fields.get("act") != stored.fields.get("act"):
                act_bytes = pack(act)
                fields["act"] = act_bytes
                fields["asig"] = bot_identity(seed, author).sign("seat-action", act_bytes)
        if stored.kind == R.CHECKPOINT:
            msg = unpack(fields["msg"])
            msg["head"] = new_hash.get(msg["head"], msg["head"])
            result = msg.get("result")
            if isinstance(result, dict) and result.get("hand_end") in new_hash:
                result["hand_end"] = new_hash[result["hand_end"]]
            msg_bytes = pack(msg)
            if msg_bytes != stored.fields["msg"]:
                fields["msg"] = msg_bytes
                fields["sigs"] = {
                    s: bot_identity(seed, s).sign("checkpoint", msg_bytes)
                    for s in stored.fields["sigs"]
                }
        info = writer.append(stored.kind, fields, dict(private))
        new_hash[stored.hash] = info.hash
    return out.getvalue()


def change(
    records: list[StoredRecord],
    target: int,
    *,
    fields: Callable[[dict[str, Any]], None] | None = None,
    act: Callable[[dict[str, Any]], None] | None = None,
    private: Callable[[dict[int, bytes]], None] | None = None,
) -> Mutation:
    """A mutation that edits record ``target`` in place and keeps every other record."""

    def mutate(
        index: int, body: dict[str, Any], action: dict[str, Any] | None
    ) -> tuple[dict[str, Any], dict[str, Any] | None, Mapping[int, bytes]]:
        payloads = dict(records[index].private)
        if index == target:
            if fields is not None:
                fields(body)
            if act is not None:
                assert action is not None
                act(action)
            if private is not None:
                private(payloads)
        return body, action, payloads

    return mutate


@cache
def semantic_records() -> list[StoredRecord]:
    return semantic_log().records()


def semantic_log() -> Recording:
    return record("classic", 11, 2)


def expect_replay_error(log: bytes, record_no: int, code: str | set[str], seat: int) -> ReplayError:
    verify_log(log)  # every signature is valid: only the game checks can catch the lie
    with pytest.raises(ReplayError) as info:
        replay_log(log)
    error = info.value
    codes = {code} if isinstance(code, str) else code
    assert (error.record_no, error.code, error.seat) in {(record_no, c, seat) for c in codes}, (
        error.record_no,
        error.code,
        error.seat,
        error.reason,
    )
    return error


def find(records: list[StoredRecord], kind: str, nth: int = 0, **act: Any) -> StoredRecord:
    found = [
        r
        for r in records
        if r.kind == kind
        and all(r.action is not None and r.action.get(k) == v for k, v in act.items())
    ]
    return found[nth]


def test_resign_without_changes_rewrites_the_log_exactly() -> None:
    log = semantic_log().data
    assert resign(log, change(semantic_records(), -1), seed=11) == log


def test_resign_re_signs_the_chain_after_a_change() -> None:
    records = semantic_records()
    chat_at = 2
    assert records[chat_at].kind == R.COMMIT
    # Seat 1's commitment becomes a chat, signed by seat 1: every later hash changes.
    mutate = change(records, chat_at, act=lambda a: a.update(type="chat", text="hello"))
    tampered = resign(semantic_log().data, mutate, seed=11)
    report = verify_log(tampered)  # later heads, checkpoints and aseqs all follow the new chain
    assert report.records == len(records)
    assert report.last_hash != records[-1].hash
    # A commit record holding a chat is caught by the game checks.
    expect_replay_error(tampered, chat_at, "bad-record", 0)


def test_an_illegal_action_signed_by_its_author_is_caught() -> None:
    records = semantic_records()
    target = find(records, R.ACTION, 3, action="draw")
    author = target.action["seat"] if target.action else -1
    # A discard where the turn must begin with a draw: signed by the real key of the real seat.
    mutate = change(records, target.index, act=lambda a: a.update(action="discard KH"))
    error = expect_replay_error(
        resign(semantic_log().data, mutate, seed=11), target.index, "illegal-action", author
    )
    assert "wrong-phase" in error.reason


def test_an_unreadable_action_signed_by_its_author_is_caught() -> None:
    records = semantic_records()
    target = find(records, R.ACTION, 5)
    author = target.action["seat"] if target.action else -1
    mutate = change(records, target.index, act=lambda a: a.update(action="fly away"))
    expect_replay_error(
        resign(semantic_log().data, mutate, seed=11), target.index, "illegal-action", author
    )


def test_an_action_out_of_turn_is_caught() -> None:
    records = semantic_records()
    target = find(records, R.ACTION, 4, action="draw")
    assert target.action is not None
    intruder = (target.action["seat"] + 1) % 4
    mutate = change(records, target.index, act=lambda a: a.update(seat=intruder))
    expect_replay_error(
        resign(semantic_log().data, mutate, seed=11), target.index, "out-of-turn", intruder
    )


def test_a_wrong_published_seed_is_caught() -> None:
    records = semantic_records()
    target = find(records, R.SEEDS)

    def wrong_seed(body: dict[str, Any]) -> None:
        body["seeds"] = list(body["seeds"])
        body["seeds"][1] = hashlib.sha256(b"not seat 1's seed").digest()

    tampered = resign(
        semantic_log().data, change(records, target.index, fields=wrong_seed), seed=11
    )
    # The host's log holds seat 1's reveal: the host published another seed than it received.
    expect_replay_error(tampered, target.index, "bad-seeds", 0)
    # Seat 1 holds its own reveal, too.
    expect_replay_error(seat_copy(tampered, 1), target.index, "bad-seeds", 0)
    # Seat 2 never saw seat 1's seed: all it can tell is that the seed fails seat 1's commitment.
    expect_replay_error(seat_copy(tampered, 2), target.index, "reveal-mismatch", 1)


def test_a_revealed_seed_that_fails_its_commitment_is_caught() -> None:
    records = semantic_records()
    target = find(records, R.REVEAL, seat=2)

    def wrong_seed(payloads: dict[int, bytes]) -> None:
        payload = unpack(payloads[2])
        payloads[2] = pack({**payload, "seed": bytes(32)})

    mutate = change(records, target.index, private=wrong_seed)
    expect_replay_error(
        resign(semantic_log().data, mutate, seed=11), target.index, "reveal-mismatch", 2
    )


@pytest.mark.parametrize("copy_of", [None, 3], ids=["host-log", "seat-3-copy"])
def test_a_wrong_score_is_caught(copy_of: int | None) -> None:
    records = semantic_records()
    target = find(records, R.HAND_END)

    def inflate(body: dict[str, Any]) -> None:
        body["scores"] = [dict(s) for s in body["scores"]]
        body["scores"][1]["melds"] += 100
        body["scores"][1]["total"] += 100
        body["totals"] = list(body["totals"])
        body["totals"][1] += 100

    tampered = resign(semantic_log().data, change(records, target.index, fields=inflate), seed=11)
    if copy_of is not None:
        tampered = seat_copy(tampered, copy_of)
    expect_replay_error(tampered, target.index, "wrong-score", 0)


def test_a_wrong_total_is_caught() -> None:
    records = semantic_records()
    target = find(records, R.HAND_END, 1)

    def shift(body: dict[str, Any]) -> None:
        body["totals"] = [t + 5 for t in body["totals"]]

    tampered = resign(semantic_log().data, change(records, target.index, fields=shift), seed=11)
    expect_replay_error(tampered, target.index, "wrong-score", 0)


def test_a_wrong_dealt_hand_is_caught() -> None:
    records = semantic_records()
    deal = find(records, R.DEAL)

    def swap_a_card(payloads: dict[int, bytes]) -> None:
        payload = unpack(payloads[1])
        hand = payload["hand"]
        outsider = next(c for c in range(len(hand) * 10) if c not in hand)
        payloads[1] = pack({**payload, "hand": sorted([outsider, *hand[1:]])})

    mutate = change(records, deal.index, private=swap_a_card)
    expect_replay_error(resign(semantic_log().data, mutate, seed=11), deal.index, "bad-deal", 0)


def test_a_wrong_pile_in_the_deal_is_caught() -> None:
    records = semantic_records()
    deal = find(records, R.DEAL, 1)

    def other_pile(body: dict[str, Any]) -> None:
        body["pile"] = [body["pile"][0] + 1]

    tampered = resign(semantic_log().data, change(records, deal.index, fields=other_pile), seed=11)
    expect_replay_error(tampered, deal.index, "bad-deal", 0)
    # A seat's copy replays the deal only once the seeds are out, and still names the deal.
    expect_replay_error(seat_copy(tampered, 2), deal.index, "bad-deal", 0)


def test_wrong_cards_drawn_are_caught() -> None:
    records = semantic_records()
    target = find(records, R.ACTION, 2, action="draw")
    actor = next(iter(target.private))

    def other_card(payloads: dict[int, bytes]) -> None:
        payload = unpack(payloads[actor])
        payloads[actor] = pack({**payload, "drawn": [c + 1 for c in payload["drawn"]]})

    mutate = change(records, target.index, private=other_card)
    expect_replay_error(
        resign(semantic_log().data, mutate, seed=11), target.index, "bad-effects", 0
    )


def test_cards_drawn_without_a_payload_are_caught() -> None:
    records = semantic_records()
    target = find(records, R.ACTION, 2, action="draw")
    mutate = change(records, target.index, private=lambda payloads: payloads.clear())
    expect_replay_error(
        resign(semantic_log().data, mutate, seed=11), target.index, "bad-effects", 0
    )


@pytest.mark.parametrize("field", ["totals", "hand_end"])
def test_a_wrong_checkpoint_result_is_caught(field: str) -> None:
    records = semantic_records()
    target = find(records, R.CHECKPOINT)

    def wrong_result(body: dict[str, Any]) -> None:
        msg = unpack(body["msg"])
        if field == "totals":
            msg["result"]["totals"] = [t + 50 for t in msg["result"]["totals"]]
        else:
            msg["result"]["hand_end"] = records[target.index - 3].hash  # the last action's
        body["msg"] = pack(msg)

    tampered = resign(
        semantic_log().data, change(records, target.index, fields=wrong_result), seed=11
    )
    # Every seat signed the false result (resign re-signs it): the replayer still refuses it.
    assert all(cp.signers == frozenset(range(4)) for cp in verify_log(tampered).checkpoints)
    expect_replay_error(tampered, target.index, "bad-checkpoint", 0)


# --------------------------------------------------------------------------- the host's refusals


@dataclass
class Table:
    match: LocalMatch
    buf: io.BytesIO

    @property
    def host(self) -> HostTable:
        return self.match.host

    def snapshot(self) -> tuple[Any, ...]:
        host = self.host
        return (
            host.writer.next_seq,
            host.phase,
            host.hand_no,
            list(host.next_aseq),
            len(host.history),
            self.buf.getvalue(),
            None if host.state is None else position_to_dict(host.state),
            None
            if host.hand is None
            else copy.deepcopy(vars(getattr(host.hand, "round", host.hand))),
        )

    def signed(
        self,
        seat: int,
        type_: str,
        *,
        table: bytes | None = None,
        hand: int | None = None,
        aseq: int | None = None,
        head: bytes | None = None,
        signer: int | None = None,
        **fields: Any,
    ) -> tuple[bytes, bytes]:
        host = self.host
        act = R.make_act(
            host.table_id if table is None else table,
            host.hand_no if hand is None else hand,
            seat,
            host.next_aseq[seat] if aseq is None else aseq,
            host.head if head is None else head,
            type_,
            **fields,
        )
        identity = self.match.seats[seat if signer is None else signer].signer.identity
        return act, identity.sign("seat-action", act)

    def mover(self) -> int:
        assert self.host.state is not None
        return int(self.host.state.to_move)


def new_table(phase: TablePhase, variant: str = "classic", seed: int = 7) -> Table:
    buf = io.BytesIO()
    table = Table(recorded_match(preset(variant), buf, seed=seed), buf)
    while table.host.phase is not phase:
        table.match.step()
    return table


def raw_map(pairs: list[tuple[Any, Any]]) -> bytes:
    """A msgpack map written pair by pair, so that it may repeat a key."""
    out = bytearray(msgpack.Packer().pack_map_header(len(pairs)))
    for key, value in pairs:
        out += pack(key) + pack(value)
    return bytes(out)


Submission = tuple[int, bytes, bytes, bytes | None]


def _commit(t: Table, seat: int = 1, **kw: Any) -> Submission:
    commitment = t.match.seats[seat].signer.secret(t.host.hand_no).commitment
    return (seat, *t.signed(seat, "commit", commitment=commitment, **kw), None)


def _flipped_signature(t: Table) -> Submission:
    seat, act, sig, _ = _commit(t)
    return seat, act, bytes([sig[0] ^ 1]) + sig[1:], None


def _duplicate_key(t: Table) -> Submission:
    host = t.host
    act = raw_map(
        [
            ("table", host.table_id),
            ("hand", host.hand_no),
            ("seat", 1),
            ("aseq", 0),
            ("head", host.head),
            ("type", "chat"),
            ("text", "one"),
            ("text", "two"),
        ]
    )
    return 1, act, t.match.seats[1].signer.identity.sign("seat-action", act), None


def _sign_raw(t: Table, seat: int, act: bytes) -> Submission:
    return seat, act, t.match.seats[seat].signer.identity.sign("seat-action", act), None


def _action(t: Table, text: str, seat: int | None = None) -> Submission:
    seat = t.mover() if seat is None else seat
    return (seat, *t.signed(seat, "action", action=text), None)


def _not_your_turn(t: Table) -> Submission:
    return _action(t, "draw", (t.mover() + 1) % 4)


def _discard_before_drawing(t: Table) -> Submission:
    state = t.host.state
    card = state.hand_faces(t.mover())[0]
    return _action(t, str(Discard(card)))


def _bad_reveal(t: Table) -> Submission:
    secret = t.match.seats[2].signer.secret(t.host.hand_no)
    seat, act, sig = 2, *t.signed(2, "reveal", commitment=secret.commitment)
    return seat, act, sig, bytes(32)


def _reveal_without_seed(t: Table) -> Submission:
    secret = t.match.seats[2].signer.secret(t.host.hand_no)
    return (2, *t.signed(2, "reveal", commitment=secret.commitment), None)


REFUSALS: list[tuple[str, TablePhase, Callable[[Table], Submission], str]] = [
    (
        "bad signature (another seat's key)",
        TablePhase.COMMITTING,
        lambda t: (1, *t.signed(1, "commit", commitment=bytes(32), signer=2), None),
        "bad-signature",
    ),
    ("bad signature (a flipped bit)", TablePhase.COMMITTING, _flipped_signature, "bad-signature"),
    ("aseq ahead", TablePhase.COMMITTING, lambda t: _commit(t, aseq=1), "bad-aseq"),
    ("aseq replayed", TablePhase.REVEALING, lambda t: _commit(t, aseq=0), "bad-aseq"),
    ("unknown head", TablePhase.COMMITTING, lambda t: _commit(t, head=bytes(32)), "unknown-head"),
    ("another table", TablePhase.COMMITTING, lambda t: _commit(t, table=bytes(16)), "wrong-table"),
    (
        "another seat's message",
        TablePhase.COMMITTING,
        lambda t: (3, *_commit(t)[1:3], None),
        "wrong-seat",
    ),
    ("another hand", TablePhase.COMMITTING, lambda t: _commit(t, hand=1), "wrong-hand"),
    ("unknown seat", TablePhase.COMMITTING, lambda t: (9, *_commit(t)[1:3], None), "unknown-seat"),
    (
        "an action while committing",
        TablePhase.COMMITTING,
        lambda t: (1, *t.signed(1, "action", action="draw"), None),
        "wrong-phase",
    ),
    ("a commitment while playing", TablePhase.PLAYING, _commit, "wrong-phase"),
    ("a second commitment", TablePhase.REVEALING, lambda t: _commit(t, aseq=1), "wrong-phase"),
    ("not your turn", TablePhase.PLAYING, _not_your_turn, "not-your-turn"),
    ("discard before drawing", TablePhase.PLAYING, _discard_before_drawing, "wrong-phase"),
    ("an unreadable action", TablePhase.PLAYING, lambda t: _action(t, "fly away"), "bad-action"),
    (
        "a reveal that does not open the commitment",
        TablePhase.REVEALING,
        _bad_reveal,
        "reveal-mismatch",
    ),
    ("a reveal without its seed", TablePhase.REVEALING, _reveal_without_seed, "seed-size"),
    ("not msgpack", TablePhase.COMMITTING, lambda t: _sign_raw(t, 1, b"\xc1\x00"), "bad-message"),
    ("not a map", TablePhase.COMMITTING, lambda t: _sign_raw(t, 1, pack([1, 2])), "bad-message"),
    (
        "too large",
        TablePhase.COMMITTING,
        lambda t: (1, *t.signed(1, "chat", text="x" * R.MAX_ACT_SIZE), None),
        "bad-message",
    ),
    (
        "an over-long chat",
        TablePhase.PLAYING,
        lambda t: (1, *t.signed(1, "chat", text="x" * (R.MAX_CHAT_LENGTH + 1)), None),
        "bad-message",
    ),
    (
        "an unknown message type",
        TablePhase.COMMITTING,
        lambda t: (1, *t.signed(1, "shuffle"), None),
        "bad-message",
    ),
    ("a repeated key", TablePhase.COMMITTING, _duplicate_key, "bad-message"),
    (
        "an ext value",
        TablePhase.COMMITTING,
        lambda t: _commit(t, extra=msgpack.ExtType(1, b"x")),
        "bad-message",
    ),
    (
        "a chat for hand 'x'",
        TablePhase.COMMITTING,
        lambda t: (1, *t.signed(1, "chat", hand=cast(Any, "x"), text="hi"), None),
        "bad-message",
    ),
    ("a bool aseq", TablePhase.REVEALING, lambda t: _commit(t, aseq=True), "bad-message"),
    ("a float hand", TablePhase.COMMITTING, lambda t: _commit(t, hand=0.0), "bad-message"),
]


@pytest.mark.parametrize(
    ("phase", "build", "code"),
    [pytest.param(phase, build, code, id=name) for name, phase, build, code in REFUSALS],
)
def test_the_host_refuses_and_changes_nothing(
    phase: TablePhase, build: Callable[[Table], Submission], code: str
) -> None:
    table = new_table(phase)
    seat, act, asig, seed = build(table)
    before = table.snapshot()
    with pytest.raises(TableError) as info:
        table.host.submit(seat, act, asig, seed)
    assert info.value.code == code, info.value
    assert table.snapshot() == before
    # The table goes on as if nothing had been sent, and its log stays sound.
    table.match.play(max_hands=1)
    assert table.host.match.hands_played == 1
    assert replay_log(table.buf.getvalue()).match.scores == table.host.match.scores


def find_frozen_pile(table: Table, limit: int = 2000) -> TakePile:
    """Play on until the seat to move could try to take a frozen pile with a natural and a wild."""
    for _ in range(limit):
        host = table.host
        state = host.state
        if host.phase is TablePhase.PLAYING and state.phase is Phase.DRAW and state.pile:
            seat = state.to_move
            top = state.deck.face[state.pile[-1]]
            faces = state.hand_faces(seat)
            naturals = [f for f in faces if not is_wild(f) and rank_of(f) == rank_of(top)]
            wilds = [f for f in faces if is_wild(f)]
            if not (is_wild(top) or is_black_three(top)) and naturals and wilds:
                attempt = TakePile((naturals[0], wilds[0]))
                try:
                    state.check(attempt, seat)
                except IllegalAction as e:
                    if e.code == "pile-frozen":
                        return attempt
        table.match.step()
    raise AssertionError("no frozen pile to try")


def test_the_host_refuses_to_take_a_frozen_pile() -> None:
    table = new_table(TablePhase.PLAYING)
    attempt = find_frozen_pile(table)
    seat = table.mover()
    act, asig = table.signed(seat, "action", action=str(attempt))
    before = table.snapshot()
    with pytest.raises(TableError) as info:
        table.host.submit(seat, act, asig)
    assert info.value.code == "pile-frozen"
    assert table.snapshot() == before


def test_the_host_refuses_checkpoint_signatures_out_of_place() -> None:
    table = new_table(TablePhase.COMMITTING)
    before = table.snapshot()
    with pytest.raises(TableError) as info:
        table.host.submit_checkpoint(1, bytes(64))
    assert info.value.code == "wrong-phase"
    table = new_table(TablePhase.CHECKPOINTING)
    before = table.snapshot()
    msg = table.host.checkpoint_msg
    # seat 2's signature, claimed by seat 1
    wrong = table.match.seats[2].signer.sign_checkpoint(msg)
    with pytest.raises(TableError) as info:
        table.host.submit_checkpoint(1, wrong)
    assert info.value.code == "bad-signature"
    assert table.snapshot() == before


@pytest.mark.parametrize("phase", [TablePhase.COMMITTING, TablePhase.REVEALING])
def test_a_forfeit_ends_the_match_and_the_log_replays(phase: TablePhase) -> None:
    table = new_table(TablePhase.COMMITTING)
    table.match.play(max_hands=1)
    host = table.host
    scores = list(host.match.scores)
    if phase is TablePhase.REVEALING:
        while host.phase is TablePhase.COMMITTING:
            table.match.step()  # everyone commits
        act, sig, seed = table.match.seats[0].signer.reveal(host.hand_no)
        host.submit(0, act, sig, seed)
    assert host.phase is phase
    written = host.forfeit(1, "withheld its seed")
    assert [info.kind for info in written] == [R.FORFEIT, R.MATCH_END]
    assert host.phase is TablePhase.OVER
    data = table.buf.getvalue()
    verify_log(data)
    for log in [data, *(seat_copy(data, s) for s in range(4))]:
        result = replay_log(log)
        assert result.forfeit == (1, "withheld its seed")
        assert result.result == MatchResult(0, tuple(scores), 1)  # seat 1's team loses
        assert result.match.scores == scores


def test_a_forfeit_is_refused_once_the_cards_are_dealt() -> None:
    table = new_table(TablePhase.PLAYING)
    before = table.snapshot()
    with pytest.raises(TableError) as info:
        table.host.forfeit(1, "left")
    assert info.value.code == "wrong-phase"
    assert table.snapshot() == before


# --------------------------------------------------------------------------- the example log


def make_example_log() -> bytes:
    match, data, _ = play_recorded(EXAMPLE_VARIANT, EXAMPLE_SEED, EXAMPLE_HANDS)
    assert match.host.match.hands_played == EXAMPLE_HANDS
    return data


def test_the_example_log_still_verifies_and_replays() -> None:
    data = EXAMPLE_LOG.read_bytes()
    report = verify_log(data)
    assert report.header.variant == EXAMPLE_VARIANT and report.header.insecure
    assert report.truncated is None and report.valid_length == len(data)
    assert {R.COMMIT, R.COMMITMENTS, R.REVEAL, R.DEAL, R.ACTION, R.HAND_END, R.SEEDS} <= set(
        report.kinds
    )
    result = replay_log(data)
    assert len(result.hands) == EXAMPLE_HANDS and result.pending == 0
    assert [cp.signers for cp in report.checkpoints] == [frozenset({0, 1})]
    assert result.state is not None and result.state.is_over
    for seat in (0, 1):
        assert replay_log(seat_copy(data, seat)).match.scores == result.match.scores
