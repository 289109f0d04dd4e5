"""The .cnlog container: writing, streaming, redaction, verification and every way to break it."""

from __future__ import annotations

import hashlib
import io
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest

from canasta_net.identity import Identity
from canasta_net.log import (
    FORMAT_VERSION,
    MAX_HEADER_SIZE,
    MAX_RECORD_SIZE,
    READ_SIZE,
    ZERO_HASH,
    LogError,
    LogFormatError,
    LogVerificationError,
    LogVerifier,
    LogWriter,
    LogWriterError,
    RecordInfo,
    SeatInfo,
    StoredRecord,
    Truncation,
    VerificationReport,
    iter_records,
    open_log_for_writing,
    record_hash,
    redact_for_seat,
    verify_log,
)

TABLE = bytes(range(16))
SEATS = [Identity.from_seed(f"eventlog test seat {i}".encode()) for i in range(4)]
HOST = 0
OUTSIDER = Identity.from_seed(b"eventlog test outsider")


def pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)  # type: ignore[no-any-return]


def header_fields(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "software": "canasta-net 0.1.0",
        "table": TABLE,
        "variant": "classic",
        "rules": {"draw_count": 1, "initial_meld_minimum": [50, 90, 120]},
        "seats": [
            {"name": f"player {i}", "key": seat.public_key, "bot": i == 3}
            for i, seat in enumerate(SEATS)
        ],
        "host": HOST,
        "deal": "commit-reveal",
        "insecure": True,
        "created": 1_700_000_000,
    }
    fields.update(overrides)
    return fields


def payload(seat: int, hand: int, cards: str) -> bytes:
    """A salted private payload, as the game layer must build them."""
    salt = hashlib.sha256(f"salt {seat} {hand} {cards}".encode()).digest()
    return pack({"salt": salt, "cards": cards})


def signed_action(
    seat: int,
    aseq: int,
    head: bytes,
    *,
    signer: Identity | None = None,
    table: bytes = TABLE,
    text: str = "discard 7D",
) -> dict[str, bytes]:
    act = pack({"table": table, "hand": 1, "seat": seat, "aseq": aseq, "head": head, "a": text})
    return {"act": act, "asig": (signer or SEATS[seat]).sign("seat-action", act)}


class GameLog:
    """Writes a log through LogWriter into memory, keeping every RecordInfo."""

    def __init__(self, **header: Any) -> None:
        self.file = io.BytesIO()
        self.writer = LogWriter(self.file, SEATS[HOST], fsync=False)
        self.records: list[RecordInfo] = [self.writer.write_header(header_fields(**header))]
        self.aseq = [0] * len(SEATS)

    def append(
        self, kind: str, fields: dict[str, Any], private: dict[int, bytes] | None = None
    ) -> int:
        self.records.append(self.writer.append(kind, fields, private))
        return len(self.records) - 1

    def deal(self, hand: int) -> int:
        private = {seat: payload(seat, hand, f"hand of seat {seat}") for seat in range(4)}
        return self.append("deal", {"hand": hand}, private)

    def action(self, seat: int, *, aseq: int | None = None, **options: Any) -> int:
        number = self.aseq[seat] if aseq is None else aseq
        self.aseq[seat] = number + 1
        return self.append(
            "action", {"hand": 1, **signed_action(seat, number, self.writer.head, **options)}
        )

    def checkpoint(
        self, signers: Iterable[int] = range(4), *, forger: Identity | None = None
    ) -> int:
        msg = pack({"table": TABLE, "hand": 1, "head": self.writer.head, "result": [120, -35]})
        sigs = {seat: (forger or SEATS[seat]).sign("checkpoint", msg) for seat in signers}
        return self.append("checkpoint", {"msg": msg, "sigs": sigs})

    @property
    def data(self) -> bytes:
        return self.file.getvalue()

    def stored(self) -> list[bytes]:
        return [record.stored for record in self.records]


def standard_log() -> GameLog:
    """Header, a deal with four payloads, actions, a private draw, a checkpoint, more actions."""
    log = GameLog()
    log.deal(1)  # 1
    for seat in (1, 2, 3, 0):  # 2..5
        log.action(seat)
    log.append("draw", {"hand": 1, "seat": 1}, {1: payload(1, 1, "KH")})  # 6
    log.action(1)  # 7
    log.checkpoint()  # 8
    log.deal(2)  # 9
    log.action(2)  # 10
    log.action(3, text="meld KH KS 2C")  # 11
    return log


def raw_record(
    body: dict[str, Any] | bytes,
    *,
    private: dict[int, bytes] | None = None,
    signer: Identity = SEATS[HOST],
) -> bytes:
    """A stored record built by hand, host-signed, for logs the writer would refuse to write."""
    body_bytes = body if isinstance(body, bytes) else pack(body)
    return pack([body_bytes, signer.sign("log-record", body_bytes), private or {}])


def header_body(**overrides: Any) -> dict[str, Any]:
    body = {"seq": 0, "prev": ZERO_HASH, "kind": "header", "format": FORMAT_VERSION}
    body.update(header_fields())
    body.update(overrides)
    return body


def expect_error(data: bytes, error: type[LogError], record_no: int, code: str) -> LogError:
    with pytest.raises(error) as caught:
        verify_log(data)
    assert (caught.value.record_no, caught.value.code) == (record_no, code), caught.value
    return caught.value


# --------------------------------------------------------------------------- round trip


def test_round_trip() -> None:
    log = standard_log()
    assert log.data == b"".join(log.stored())
    stream = iter_records(io.BytesIO(log.data))
    records = list(stream)
    assert stream.truncated is None
    assert stream.valid_length == len(log.data)
    assert len(records) == len(log.records)
    offset = 0
    for number, (record, info) in enumerate(zip(records, log.records, strict=True)):
        assert isinstance(record, StoredRecord)
        assert record.index == record.seq == info.seq == number
        assert record.body == info.body
        assert record.hash == info.hash == record_hash(info.body)
        assert record.kind == info.kind
        assert record.offset == offset
        assert record.size == len(info.stored)
        offset += record.size
    assert records[1].private == {
        seat: payload(seat, 1, f"hand of seat {seat}") for seat in range(4)
    }
    assert records[1].fields["priv"] == {
        seat: hashlib.sha256(data).digest() for seat, data in records[1].private.items()
    }
    assert records[2].action is not None and records[2].action["seat"] == 1
    assert records[8].checkpoint is not None and records[8].checkpoint["result"] == [120, -35]
    assert records[3].fields["prev"] == records[2].hash

    report = verify_log(log.data)
    assert isinstance(report, VerificationReport)
    assert report.records == len(log.records)
    assert report.last_hash == log.records[-1].hash == log.writer.head
    assert report.valid_length == len(log.data)
    assert report.truncated is None
    assert report.kinds == {"header": 1, "deal": 2, "action": 7, "draw": 1, "checkpoint": 1}
    assert report.private_present == {0: 2, 1: 3, 2: 2, 3: 2}
    assert report.private_absent == {}
    assert report.payload_seats == {0, 1, 2, 3}
    assert report.last_aseq == {0: 0, 1: 1, 2: 1, 3: 1}
    (checkpoint,) = report.checkpoints
    assert (checkpoint.record_no, checkpoint.hand, checkpoint.signers) == (
        8,
        1,
        frozenset({0, 1, 2, 3}),
    )
    assert checkpoint.head == log.records[7].hash


def test_header_fields() -> None:
    log = GameLog(extra_note="kept as is")
    report = verify_log(log.data)
    header = report.header
    assert header.format == FORMAT_VERSION == 2
    assert header.software == "canasta-net 0.1.0"
    assert header.table == TABLE
    assert header.variant == "classic"
    assert header.rules == {"draw_count": 1, "initial_meld_minimum": [50, 90, 120]}
    assert header.seats == tuple(
        SeatInfo(f"player {i}", seat.public_key, i == 3) for i, seat in enumerate(SEATS)
    )
    assert header.host == HOST and header.host_key == SEATS[HOST].public_key
    assert header.deal == "commit-reveal"
    assert header.insecure is True
    assert header.created == 1_700_000_000
    assert header.fields["extra_note"] == "kept as is"
    assert header.fields["seq"] == 0 and header.fields["prev"] == ZERO_HASH
    assert log.writer.header == header
    stream = iter_records(log.data)
    assert stream.header is None
    next(stream)
    assert stream.header == header


def test_every_kind_of_source_reads_the_same() -> None:
    log = standard_log()
    data = log.data
    expected = [record.hash for record in iter_records(data)]

    def uneven_chunks() -> Iterator[bytes]:
        position, size = 0, 1
        while position < len(data):
            yield data[position : position + size]
            position += size
            size = size * 3 % 97 + 1

    assert [r.hash for r in iter_records(io.BytesIO(data), read_size=7)] == expected
    assert [r.hash for r in iter_records(uneven_chunks())] == expected
    assert [r.hash for r in iter_records([data], read_size=5)] == expected
    assert [r.hash for r in iter_records(bytearray(data))] == expected


class CountingReader(io.RawIOBase):
    """A file that counts what is read from it; ``tail`` repeats forever once ``data`` is used."""

    def __init__(self, data: bytes, tail: bytes = b"") -> None:
        self.data = data
        self.tail = tail
        self.position = 0
        self.largest_read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = len(buffer)
        self.largest_read = max(self.largest_read, size)
        if self.position < len(self.data):
            chunk = self.data[self.position : self.position + size]
        elif self.tail:
            chunk = (self.tail * (size // len(self.tail) + 1))[:size]
        else:
            chunk = b""
        buffer[: len(chunk)] = chunk
        self.position += len(chunk)
        return len(chunk)


def test_streaming_thousands_of_records(tmp_path: Path) -> None:
    path = tmp_path / "long.cnlog"
    with open_log_for_writing(path) as file:
        writer = LogWriter(file, SEATS[HOST], fsync=False)
        writer.write_header(header_fields())
        for number in range(3000):
            writer.append("tick", {"n": number, "text": "x" * (number % 50)})
    with path.open("rb") as file:
        counting = CountingReader(file.read())
    report = verify_log(counting, read_size=4096)
    assert report.records == 3001
    assert report.kinds == {"header": 1, "tick": 3000}
    assert report.valid_length == path.stat().st_size
    assert counting.largest_read <= 4096  # read in small bounded pieces, never the whole file
    with path.open("rb") as file:
        numbers = [record.fields.get("n") for record in iter_records(file)]
    assert numbers == [None, *range(3000)]


# --------------------------------------------------------------------------- tampering


def flip_bit(data: bytes, position: int, bit: int) -> bytes:
    changed = bytearray(data)
    changed[position] ^= 1 << bit
    return bytes(changed)


def assert_detected(tampered: bytes, target: int, what: object) -> None:
    try:
        report = verify_log(tampered)
    except LogError as e:
        # A flip in the count of the private payload map can end the record early: its
        # payloads then count as absent and the leftover bytes fail as the next record.
        assert target <= e.record_no <= target + 1, (what, e)
    else:
        # Only a length that now runs past the end of the file can end up here: the log then
        # ends inside the tampered record, which is reported, never accepted as complete.
        assert report.truncated is not None, what
        assert report.truncated.record_no == target, what
        assert report.records == target, what


@pytest.mark.parametrize("target", [0, 1, 5, 6, 8, 11], ids=lambda n: f"record{n}")
def test_flipping_any_byte_of_a_record_is_detected(target: int) -> None:
    log = standard_log()
    data = log.data
    start = sum(len(record.stored) for record in log.records[:target])
    end = start + len(log.records[target].stored)
    for position in range(start, end):
        for bit in (position % 8, (position + 3) % 8):
            assert_detected(flip_bit(data, position, bit), target, (position, bit))


def test_flipping_any_bit_of_the_private_payloads_is_detected() -> None:
    # The private map is the one part of a record no signature covers: flip all 8 bits of each
    # of its bytes (seat keys, lengths and payloads) in the deal record.
    log = standard_log()
    data = log.data
    start = len(log.records[0].stored)
    body, host_sig, _ = msgpack.unpackb(log.records[1].stored, strict_map_key=False)
    private_start = start + len(pack([body, host_sig, {}])) - 1
    end = start + len(log.records[1].stored)
    assert data[private_start] == 0x84  # a fixmap of the four seats' payloads
    for position in range(private_start, end):
        for bit in range(8):
            assert_detected(flip_bit(data, position, bit), 1, (position, bit))


def test_removing_a_record_is_detected() -> None:
    stored = standard_log().stored()
    del stored[4]
    expect_error(b"".join(stored), LogVerificationError, 4, "bad-seq")


def test_reordering_two_records_is_detected() -> None:
    stored = standard_log().stored()
    stored[4], stored[5] = stored[5], stored[4]
    expect_error(b"".join(stored), LogVerificationError, 4, "bad-seq")


def test_duplicating_a_record_is_detected() -> None:
    stored = standard_log().stored()
    stored.insert(4, stored[4])
    expect_error(b"".join(stored), LogVerificationError, 5, "bad-seq")


def test_swapping_host_signatures_is_detected() -> None:
    stored = standard_log().stored()
    first = msgpack.unpackb(stored[3], strict_map_key=False)
    second = msgpack.unpackb(stored[9], strict_map_key=False)
    first[1], second[1] = second[1], first[1]
    stored[3], stored[9] = pack(first), pack(second)
    error = expect_error(b"".join(stored), LogVerificationError, 3, "bad-host-signature")
    assert isinstance(error, LogVerificationError) and error.seat == HOST


def test_a_record_signed_by_another_key_is_detected() -> None:
    log = standard_log()
    stored = log.stored()
    stored[7] = raw_record(log.records[7].body, signer=SEATS[1])
    expect_error(b"".join(stored), LogVerificationError, 7, "bad-host-signature")


def test_a_wrong_seq_or_prev_signed_by_the_host_is_detected() -> None:
    log = standard_log()
    body = msgpack.unpackb(log.records[3].body)
    stored = log.stored()
    stored[3] = raw_record({**body, "seq": 4})
    expect_error(b"".join(stored), LogVerificationError, 3, "bad-seq")
    stored[3] = raw_record({**body, "prev": log.records[1].hash})
    expect_error(b"".join(stored), LogVerificationError, 3, "bad-prev")


def test_a_forged_author_signature_is_detected() -> None:
    log = standard_log()
    forged = log.action(2, signer=OUTSIDER)
    error = expect_error(log.data, LogVerificationError, forged, "bad-author-signature")
    assert isinstance(error, LogVerificationError) and error.seat == 2
    log = standard_log()
    # Another seat's valid signature does not pass for seat 2's either.
    forged = log.action(2, signer=SEATS[1])
    expect_error(log.data, LogVerificationError, forged, "bad-author-signature")


def test_an_aseq_gap_is_detected() -> None:
    log = standard_log()
    gap = log.action(3, aseq=log.aseq[3] + 1)
    error = expect_error(log.data, LogVerificationError, gap, "bad-aseq")
    assert isinstance(error, LogVerificationError) and error.seat == 3


def test_a_replayed_aseq_is_detected() -> None:
    log = standard_log()
    replay = log.action(1, aseq=0)
    expect_error(log.data, LogVerificationError, replay, "bad-aseq")


def test_an_action_for_another_table_is_detected() -> None:
    log = standard_log()
    wrong = log.action(0, table=bytes(16))
    expect_error(log.data, LogVerificationError, wrong, "wrong-table")


def test_an_action_naming_an_unknown_head_is_detected() -> None:
    log = standard_log()
    fields = {"hand": 1, **signed_action(0, log.aseq[0], hashlib.sha256(b"elsewhere").digest())}
    unknown = log.append("action", fields)
    expect_error(log.data, LogVerificationError, unknown, "unknown-head")


def replace_payload(stored: bytes, seat: int, data: bytes | None) -> bytes:
    body, host_sig, private = msgpack.unpackb(stored, strict_map_key=False)
    if data is None:
        del private[seat]
    else:
        private[seat] = data
    return pack([body, host_sig, private])


def test_a_bad_private_payload_is_detected() -> None:
    log = standard_log()
    stored = log.stored()
    stored[1] = replace_payload(stored[1], 2, payload(2, 1, "a better hand"))
    error = expect_error(b"".join(stored), LogVerificationError, 1, "bad-private")
    assert "seat 2" in error.reason


def test_a_private_payload_without_a_hash_is_detected() -> None:
    log = standard_log()
    stored = log.stored()
    stored[6] = replace_payload(stored[6], 3, payload(3, 1, "KS"))  # priv has seat 1 only
    expect_error(b"".join(stored), LogVerificationError, 6, "bad-private")
    stored = log.stored()
    stored[4] = replace_payload(stored[4], 3, payload(3, 1, "KS"))  # no priv at all
    expect_error(b"".join(stored), LogVerificationError, 4, "bad-private")


def test_a_missing_payload_is_reported_not_refused() -> None:
    log = standard_log()
    stored = log.stored()
    stored[1] = replace_payload(stored[1], 2, None)
    report = verify_log(b"".join(stored))
    assert report.private_absent == {2: 1}
    assert report.private_present[2] == 1


def test_checkpoint_signatures() -> None:
    log = standard_log()
    partial = log.checkpoint(signers=[0, 2])
    (_, checkpoint) = verify_log(log.data).checkpoints
    assert (checkpoint.record_no, checkpoint.signers) == (partial, frozenset({0, 2}))
    forged = log.checkpoint(signers=[1], forger=OUTSIDER)
    error = expect_error(log.data, LogVerificationError, forged, "bad-checkpoint-signature")
    assert isinstance(error, LogVerificationError) and error.seat == 1


def test_a_checkpoint_for_an_unknown_head_or_another_table_is_detected() -> None:
    log = standard_log()
    msg = pack({"table": TABLE, "hand": 1, "head": bytes(32), "result": None})
    unknown = log.append("checkpoint", {"msg": msg, "sigs": {0: SEATS[0].sign("checkpoint", msg)}})
    expect_error(log.data, LogVerificationError, unknown, "unknown-head")
    log = standard_log()
    msg = pack({"table": bytes(16), "hand": 1, "head": log.writer.head, "result": None})
    wrong = log.append("checkpoint", {"msg": msg, "sigs": {}})
    expect_error(log.data, LogVerificationError, wrong, "wrong-table")


# --------------------------------------------------------------------------- truncation


def test_a_truncated_final_record_is_reported_at_every_cut() -> None:
    log = standard_log()
    data = log.data
    last = len(log.records) - 1
    start = len(data) - len(log.records[last].stored)
    for cut in range(start, len(data)):
        report = verify_log(data[:cut])
        assert report.records == last
        assert report.last_hash == log.records[last - 1].hash
        assert report.valid_length == start
        if cut == start:
            assert report.truncated is None
        else:
            assert report.truncated == Truncation(last, start, cut - start)
    stream = iter_records(data[:-1])
    assert len(list(stream)) == last
    assert stream.truncated == Truncation(last, start, len(data) - 1 - start)


def test_a_tail_that_is_no_record_is_refused() -> None:
    data = standard_log().data
    count = len(standard_log().records)
    with pytest.raises(LogFormatError) as caught:
        verify_log(data + b"\xc1")
    assert (caught.value.record_no, caught.value.code) == (count, "bad-encoding")
    with pytest.raises(LogFormatError) as caught:
        verify_log(data + b"\xa5ab")  # the start of a string, not of a stored record
    assert (caught.value.record_no, caught.value.code) == (count, "not-an-array")


def test_an_empty_or_headless_log_is_refused() -> None:
    expect_error(b"", LogFormatError, 0, "missing-header")
    header = GameLog().data
    expect_error(header[:-3], LogFormatError, 0, "missing-header")


# --------------------------------------------------------------------------- malformed records

MALFORMED: list[tuple[str, Any, int, str]] = [
    (
        "first record is no header",
        lambda: raw_record(header_body(kind="deal")),
        0,
        "missing-header",
    ),
    ("future format", lambda: raw_record(header_body(format=3)), 0, "bad-version"),
    ("format as text", lambda: raw_record(header_body(format="1")), 0, "bad-version"),
    ("header without table", lambda: raw_record(header_body(table=None)), 0, "bad-field"),
    ("short table id", lambda: raw_record(header_body(table=b"t" * 15)), 0, "bad-field"),
    ("no seats", lambda: raw_record(header_body(seats=[])), 0, "bad-field"),
    ("host out of range", lambda: raw_record(header_body(host=4)), 0, "bad-field"),
    ("bool as created", lambda: raw_record(header_body(created=True)), 0, "bad-field"),
    (
        "two seats, one key",
        lambda: raw_record(header_body(seats=[header_fields()["seats"][0]] * 2)),
        0,
        "bad-field",
    ),
    (
        "header with private payloads",
        lambda: raw_record(header_body(), private={1: b"x"}),
        0,
        "bad-field",
    ),
    ("header with priv", lambda: raw_record(header_body(priv={0: bytes(32)})), 0, "bad-field"),
]

MALFORMED_AFTER_HEADER: list[tuple[str, Any, str]] = [
    ("an integer", lambda head: pack(5), "not-an-array"),
    ("an array of 2", lambda head: pack([pack({}), bytes(64)]), "not-an-array"),
    ("invalid msgpack", lambda head: b"\xc1", "bad-encoding"),
    ("an ext value", lambda head: pack(msgpack.ExtType(5, b"x")), "bad-encoding"),
    ("body is not bin", lambda head: pack(["body", bytes(64), {}]), "bad-field"),
    ("short host signature", lambda head: pack([pack({}), bytes(63), {}]), "bad-field"),
    ("body is not a map", lambda head: raw_record(pack([1, 2])), "bad-field"),
    (
        "body with trailing bytes",
        lambda head: raw_record(pack({"seq": 1, "prev": head, "kind": "x"}) + b"\x00"),
        "bad-encoding",
    ),
    (
        "body with a timestamp",
        lambda head: raw_record(
            pack({"seq": 1, "prev": head, "kind": "x", "at": msgpack.Timestamp(1)})
        ),
        "bad-encoding",
    ),
    (
        "body with a non-string key",
        lambda head: raw_record(pack({"seq": 1, "prev": head, "kind": "x", 7: 1})),
        "bad-field",
    ),
    (
        "body repeating a key",
        lambda head: raw_record(
            b"\x84"
            + b"".join(pack(item) for item in ["seq", 1, "prev", head, "kind", "x", "seq", 2])
        ),
        "bad-encoding",
    ),
    (
        "private map repeating a seat",
        lambda head: (
            b"\x93"
            + pack(pack({"seq": 1, "prev": head, "kind": "x"}))
            + pack(bytes(64))
            + b"\x82\x01"
            + pack(b"one")
            + b"\x01"
            + pack(b"two")
        ),
        "bad-encoding",
    ),
    ("seq as text", lambda head: raw_record({"seq": "1", "prev": head, "kind": "x"}), "bad-field"),
    ("negative seq", lambda head: raw_record({"seq": -1, "prev": head, "kind": "x"}), "bad-field"),
    ("short prev", lambda head: raw_record({"seq": 1, "prev": head[1:], "kind": "x"}), "bad-field"),
    ("no kind", lambda head: raw_record({"seq": 1, "prev": head}), "bad-field"),
    ("empty kind", lambda head: raw_record({"seq": 1, "prev": head, "kind": ""}), "bad-field"),
    (
        "a second header",
        lambda head: raw_record(header_body(seq=1, prev=head)),
        "duplicate-header",
    ),
    (
        "act without asig",
        lambda head: raw_record(
            {"seq": 1, "prev": head, "kind": "x", "act": signed_action(1, 0, head)["act"]}
        ),
        "bad-field",
    ),
    (
        "act that is no map",
        lambda head: raw_record(
            {"seq": 1, "prev": head, "kind": "x", "act": pack([1]), "asig": bytes(64)}
        ),
        "bad-field",
    ),
    (
        "act for a seat that does not exist",
        lambda head: raw_record(
            {"seq": 1, "prev": head, "kind": "x", **signed_action(4, 0, head, signer=OUTSIDER)}
        ),
        "bad-field",
    ),
    (
        "priv for a seat that does not exist",
        lambda head: raw_record({"seq": 1, "prev": head, "kind": "x", "priv": {9: bytes(32)}}),
        "bad-field",
    ),
    (
        "private payload keyed by name",
        lambda head: raw_record({"seq": 1, "prev": head, "kind": "x"}, private={"me": b"x"}),  # type: ignore[dict-item]
        "bad-field",
    ),
    (
        "sigs outside a checkpoint",
        lambda head: raw_record({"seq": 1, "prev": head, "kind": "x", "sigs": {}}),
        "bad-field",
    ),
    (
        "checkpoint without msg",
        lambda head: raw_record({"seq": 1, "prev": head, "kind": "checkpoint", "sigs": {}}),
        "bad-field",
    ),
]


@pytest.mark.parametrize(
    ("make", "record_no", "code"),
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_malformed_headers_are_refused(make: Any, record_no: int, code: str) -> None:
    expect_error(make(), LogFormatError, record_no, code)


@pytest.mark.parametrize(
    ("make", "code"),
    [case[1:] for case in MALFORMED_AFTER_HEADER],
    ids=[case[0] for case in MALFORMED_AFTER_HEADER],
)
def test_malformed_records_are_refused(make: Any, code: str) -> None:
    header = GameLog().records[0]
    expect_error(header.stored + make(header.hash), LogFormatError, 1, code)


def test_the_stream_stops_after_an_error() -> None:
    header = GameLog().data
    stream = iter_records(header + b"\xc1")
    next(stream)
    with pytest.raises(LogFormatError):
        next(stream)
    assert list(stream) == []


# --------------------------------------------------------------------------- size limits


def test_an_oversized_record_is_refused_without_reading_it_all() -> None:
    header = GameLog().data
    # A record announcing a 50 MiB body, and a file that would go on forever.
    announced = b"\x93\xc6" + (50 << 20).to_bytes(4, "big")
    file = CountingReader(header + announced, tail=b"\x00")
    with pytest.raises(LogFormatError) as caught:
        verify_log(io.BufferedReader(file))
    assert (caught.value.record_no, caught.value.code) == (1, "too-large")
    assert file.position <= MAX_RECORD_SIZE + 3 * READ_SIZE


def test_a_record_over_a_custom_limit_is_refused() -> None:
    log = GameLog()
    log.append("note", {"text": "x" * 3000})
    with pytest.raises(LogFormatError) as caught:
        verify_log(log.data, max_record_size=2048, read_size=512)
    assert (caught.value.record_no, caught.value.code) == (1, "too-large")
    assert verify_log(log.data, max_record_size=4096).records == 2


def test_an_oversized_header_is_refused() -> None:
    big = raw_record(header_body(rules={"padding": "x" * MAX_HEADER_SIZE}))
    expect_error(big, LogFormatError, 0, "too-large")


def test_the_writer_refuses_oversized_records() -> None:
    log = GameLog()
    before = log.data
    with pytest.raises(ValueError, match="more than"):
        log.writer.append("note", {"text": "x" * MAX_RECORD_SIZE})
    assert log.data == before and log.writer.next_seq == 1
    with pytest.raises(ValueError, match="more than"):
        LogWriter(io.BytesIO(), SEATS[HOST]).write_header(
            header_fields(rules={"padding": "x" * MAX_HEADER_SIZE})
        )
    log.append("note", {"text": "fine"})
    assert verify_log(log.data).records == 2


# --------------------------------------------------------------------------- redaction


def test_redacted_copies_verify_and_hold_only_their_own_payloads() -> None:
    log = standard_log()
    full = verify_log(log.data)
    originals = list(iter_records(log.data))
    for seat in range(4):
        copy = b"".join(redact_for_seat(record.stored, seat) for record in log.records)
        assert copy == b"".join(redact_for_seat(record, seat) for record in originals)
        assert copy == b"".join(redact_for_seat(record, seat) for record in log.records)
        report = verify_log(copy)
        assert report.records == full.records
        assert report.last_hash == full.last_hash
        assert report.payload_seats == {seat}
        assert report.private_present == {seat: full.private_present[seat]}
        others = {s: n for s, n in full.private_present.items() if s != seat}
        assert report.private_absent == others
        for record, original in zip(iter_records(copy), originals, strict=True):
            assert record.body == original.body
            assert record.host_sig == original.host_sig
            expected = {seat: original.private[seat]} if seat in original.private else {}
            assert record.private == expected
        # Redacting a seat's copy again changes nothing.
        again = b"".join(redact_for_seat(record, seat) for record in iter_records(copy))
        assert again == copy


def test_redaction_refuses_what_is_not_a_stored_record() -> None:
    with pytest.raises(ValueError):
        redact_for_seat(pack([1, 2]), 0)


# --------------------------------------------------------------------------- files and durability


def test_a_new_log_file_has_mode_0600(tmp_path: Path) -> None:
    old_umask = os.umask(0)
    try:
        path = tmp_path / "table.cnlog"
        with open_log_for_writing(path) as file:
            LogWriter(file, SEATS[HOST]).write_header(header_fields())
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        open_log_for_writing(path)
    link = tmp_path / "link.cnlog"
    link.symlink_to(tmp_path / "elsewhere.cnlog")
    with pytest.raises(FileExistsError):
        open_log_for_writing(link)
    assert not (tmp_path / "elsewhere.cnlog").exists()


class RecordingFile(io.BytesIO):
    """An in-memory file that records writes, flushes and (fake descriptor) fsyncs."""

    def __init__(self, events: list[tuple[str, int]], descriptor: int | None) -> None:
        super().__init__()
        self.events = events
        self.descriptor = descriptor

    def write(self, data: Any) -> int:
        self.events.append(("write", len(data)))
        return super().write(data)

    def flush(self) -> None:
        self.events.append(("flush", len(self.getvalue())))
        super().flush()

    def fileno(self) -> int:
        if self.descriptor is None:
            return super().fileno()  # raises io.UnsupportedOperation
        return self.descriptor


@pytest.mark.parametrize("descriptor", [None, 1234])
@pytest.mark.parametrize("fsync", [True, False])
def test_the_writer_flushes_and_syncs_before_returning(
    monkeypatch: pytest.MonkeyPatch, descriptor: int | None, fsync: bool
) -> None:
    events: list[tuple[str, int]] = []
    monkeypatch.setattr(os, "fsync", lambda fd: events.append(("fsync", fd)))
    file = RecordingFile(events, descriptor)
    writer = LogWriter(file, SEATS[HOST], fsync=fsync)
    synced = [("fsync", 1234)] if fsync and descriptor is not None else []
    info = writer.write_header(header_fields())
    assert events == [("write", len(info.stored)), ("flush", len(info.stored)), *synced]
    events.clear()
    info = writer.append("note", {"text": "journal before send"})
    assert events[-1 - len(synced)] == ("flush", len(file.getvalue()))
    assert events[len(events) - len(synced) :] == synced
    assert sum(size for name, size in events if name == "write") == len(info.stored)


def test_a_failed_write_stops_the_writer() -> None:
    class FailingFile(io.BytesIO):
        def flush(self) -> None:
            raise OSError("disk full")

    writer = LogWriter(FailingFile(), SEATS[HOST])
    with pytest.raises(OSError, match="disk full"):
        writer.write_header(header_fields())
    with pytest.raises(LogWriterError):
        writer.write_header(header_fields())


def test_resume_after_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "table.cnlog"
    log = standard_log()
    crashed = log.records.pop()  # the record the host was writing when it crashed
    whole = log.data[: -len(crashed.stored)]
    with open_log_for_writing(path) as file:
        file.write(whole)
        file.write(crashed.stored[:17])  # a record cut short by the crash
    with open_log_for_writing(path, resume=True) as file:
        writer = LogWriter.resume(file, SEATS[HOST])
        assert writer.resumed_from is not None
        assert writer.resumed_from.truncated == Truncation(len(log.records), len(whole), 17)
        assert (writer.next_seq, writer.head) == (len(log.records), log.records[-1].hash)
        assert writer.header == verify_log(whole).header
        info = writer.append("note", {"text": "back"})
        assert info.seq == len(log.records)
    report = verify_log(path.read_bytes())
    assert report.truncated is None
    assert report.records == len(log.records) + 1
    assert report.last_hash == info.hash
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_only_the_host_can_resume(tmp_path: Path) -> None:
    path = tmp_path / "table.cnlog"
    path.write_bytes(standard_log().data)
    with (
        open_log_for_writing(path, resume=True) as file,
        pytest.raises(ValueError, match="not the log's host"),
    ):
        LogWriter.resume(file, SEATS[1])


# --------------------------------------------------------------------------- writer input checks


def test_the_writer_refuses_bad_input_and_stays_unchanged() -> None:
    file = io.BytesIO()
    writer = LogWriter(file, SEATS[HOST], fsync=False)
    with pytest.raises(LogWriterError):
        writer.append("note", {})
    with pytest.raises(ValueError, match="not this writer's identity"):
        writer.write_header(header_fields(host=1))
    with pytest.raises(ValueError, match="invalid header"):
        writer.write_header(header_fields(seats=[]))
    with pytest.raises(ValueError, match="fills in"):
        writer.write_header({**header_fields(), "format": 2})
    assert file.getvalue() == b"" and writer.next_seq == 0
    writer.write_header(header_fields())
    with pytest.raises(LogWriterError):
        writer.write_header(header_fields())
    before = file.getvalue()
    refused: list[tuple[str, dict[str, Any], dict[int, bytes] | None]] = [
        ("header", {}, None),
        ("note", {"seq": 5}, None),
        ("note", {"priv": {}}, None),
        ("", {}, None),
        ("note", {}, {4: b"x"}),
        ("note", {"act": b"\x80"}, None),
        ("note", {"msg": b"\x80", "sigs": {}}, None),
        ("checkpoint", {"sigs": {}}, None),
    ]
    for kind, fields, private in refused:
        with pytest.raises(ValueError):
            writer.append(kind, fields, private)
    assert file.getvalue() == before and writer.next_seq == 1
    assert verify_log(file.getvalue()).records == 1


def test_error_text_names_the_record_and_code() -> None:
    error = LogVerificationError(7, "bad-aseq", "seat 2's action has aseq 5, expected 4", 2)
    assert str(error) == "record 7: seat 2's action has aseq 5, expected 4 [bad-aseq]"
    assert isinstance(error, ValueError) and error.seat == 2
    assert LogFormatError(0, "missing-header", "the log is empty").record_no == 0


# --------------------------------------------------------------------------- the spec's test vector


def spec_test_vector() -> dict[str, bytes]:
    text = (Path(__file__).parent.parent / "docs" / "log-format.md").read_text(encoding="utf-8")
    block = text.split("<!-- test-vector:", 1)[1].split("```", 2)[1]
    values: dict[str, str] = {}
    name = ""
    for line in block.splitlines():
        if not line.strip():
            continue
        if line.startswith(" "):
            values[name] += line.strip()
        else:
            name, value = (part.strip() for part in line.split("=", 1))
            values[name] = value
    return {key: bytes.fromhex(value) for key, value in values.items()}


def test_the_spec_test_vector() -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from canasta_net.identity import verify

    vector = spec_test_vector()
    host = Identity(Ed25519PrivateKey.from_private_bytes(vector["host_key"]))
    assert host.public_key == vector["host_pub"]
    assert record_hash(vector["payload"]) == vector["payload_hash"]
    body = pack(
        {
            "seq": 1,
            "prev": vector["prev"],
            "kind": "draw",
            "seat": 1,
            "priv": {1: vector["payload_hash"]},
        }
    )
    assert body == vector["body"]
    assert record_hash(body) == vector["record_hash"]
    verify(vector["host_pub"], "log-record", body, vector["host_sig"])
    assert host.sign("log-record", body) == vector["host_sig"]  # Ed25519 is deterministic
    assert pack([body, vector["host_sig"], {1: vector["payload"]}]) == vector["stored"]
    assert redact_for_seat(vector["stored"], 0) == vector["stored_seat_0"]
    assert redact_for_seat(vector["stored"], 1) == vector["stored"]


# --------------------------------------------------------------------------- own signatures


def verify_with_own(data: bytes, own: list[tuple[Identity, dict[str, bytes]]]) -> LogVerifier:
    """Verify ``data`` as a seat does, having signed and sent ``own`` (key, act message)."""
    verifier = LogVerifier()
    for identity, message in own:
        verifier.signed_here(identity.public_key, message["act"], message["asig"])
    stream = iter_records(data)
    for record in stream:
        if verifier.header is None:
            assert stream.header is not None
            verifier.set_header(stream.header)
        verifier.feed(record)
    return verifier


def test_a_seat_s_own_signature_is_taken_without_a_second_check() -> None:
    # a seat signed its move and sent it: its record, carrying exactly those bytes, needs no
    # second Ed25519 check (about 5 % of a seat's CPU)
    log = standard_log()
    mine = signed_action(2, log.aseq[2], log.writer.head)
    log.aseq[2] += 1
    log.append("action", {"hand": 1, **mine})
    log.action(3)
    assert verify_with_own(log.data, [(SEATS[2], mine)]).own_signatures == 1
    assert verify_with_own(log.data, []).own_signatures == 0


def refused_as_forged(
    log: GameLog, sent: tuple[Identity, dict[str, bytes]], carried: dict[str, bytes]
) -> None:
    """The record carrying ``carried`` fails its author check, though the seat sent ``sent``."""
    n = log.append("action", {"hand": 1, **carried})
    with pytest.raises(LogVerificationError) as caught:
        verify_with_own(log.data, [sent])
    assert (caught.value.record_no, caught.value.code) == (n, "bad-author-signature")


def test_a_record_with_a_seat_s_act_but_other_bytes_is_still_checked() -> None:
    def seat_2_signs(log: GameLog, signer: Identity = SEATS[2]) -> dict[str, bytes]:
        return signed_action(2, log.aseq[2], log.writer.head, signer=signer)

    log = standard_log()
    mine = seat_2_signs(log)  # the seat's act, signed by someone else
    refused_as_forged(log, (SEATS[2], mine), {**mine, "asig": seat_2_signs(log, OUTSIDER)["asig"]})
    log = standard_log()
    mine = seat_2_signs(log)  # the seat's act, its signature altered
    altered = mine["asig"][:-1] + bytes([mine["asig"][-1] ^ 1])
    refused_as_forged(log, (SEATS[2], mine), {**mine, "asig": altered})
    log = standard_log()
    mine = seat_2_signs(log)  # the seat's signature on another act
    other = mine["act"].replace(b"discard 7D", b"discard 8D")
    refused_as_forged(log, (SEATS[2], mine), {**mine, "act": other})
    log = standard_log()
    made_here = seat_2_signs(log, OUTSIDER)  # byte for byte as made, by a key not seat 2's
    refused_as_forged(log, (OUTSIDER, made_here), made_here)
