"""A log's incomplete tail passes only if a crashed writer could have left it (issue 13, part 2);
no verdict carries Python's error text."""

from __future__ import annotations

import io
import re
from dataclasses import replace
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner
from script_runs import load_script

from canasta_net.canasta.rules import preset
from canasta_net.log import LogFormatError, LogWriter, StoredRecord, iter_records, verify_log
from canasta_net.table.local import bot_identity, recorded_match
from replay.audit import AuditReport, audit_source
from replay.cli import main


@cache
def one_hand(deal: str = "commit-reveal") -> bytes:
    buffer = io.BytesIO()
    recorded_match(preset("classic-2p"), buffer, seed=3, deal=deal).play(max_hands=1)
    return buffer.getvalue()


@cache
def whole_match() -> bytes:
    """A finished match, kept short: its target is reached in one hand."""
    buffer = io.BytesIO()
    recorded_match(replace(preset("classic-2p"), target=500), buffer, seed=3).play()
    return buffer.getvalue()


def records(data: bytes) -> list[StoredRecord]:
    return list(iter_records(data))


def first_n(data: bytes, count: int) -> bytes:
    """The log's first ``count`` records (a log that stops at a record boundary)."""
    last = records(data)[count - 1]
    return data[: last.offset + last.size]


def refused(data: bytes, code: str) -> LogFormatError:
    with pytest.raises(LogFormatError) as caught:
        verify_log(data)
    assert caught.value.code == code, caught.value
    return caught.value


def private_map_at(stored: bytes) -> int:
    """Where a stored record's private map begins: after the array, the body and the signature."""
    size = {0xC4: 1, 0xC5: 2, 0xC6: 4}[stored[1]]
    body = int.from_bytes(stored[2 : 2 + size], "big")
    return 2 + size + body + 2 + 64


def with_payloads(data: bytes, after: int = 10) -> StoredRecord:
    """A record past ``after`` that carries one private payload."""
    return next(r for r in records(data) if r.index > after and len(r.private) == 1)


# --------------------------------------------------------------------------- what a crash leaves


def test_a_true_truncation_is_still_read_as_a_crash_at_every_cut() -> None:
    record = with_payloads(one_hand())
    whole = one_hand()[: record.offset]
    stored = one_hand()[record.offset : record.offset + record.size]
    ends = [*range(1, 12), *range(record.size - 12, record.size)]
    for cut in [*ends, *range(12, record.size - 12, 7)]:
        report = verify_log(whole + stored[:cut])
        assert report.truncated is not None, cut
        assert (report.truncated.offset, report.truncated.length) == (record.offset, cut)
    audit = audit_source(whole + stored[: record.size // 2])
    assert audit.verdict == "incomplete" and audit.exit_code == 0, audit.summary
    assert "as a crash while writing would leave it" in audit.summary


def test_one_deleted_byte_cannot_hide_the_records_after_it() -> None:
    # the case: one byte deleted near the start of a record's body (here byte 3 of
    # record 8, in its first key) turned the rest of the file into one "crashed record"; every
    # deletion in the record's first bytes and a sample of the rest must be refused
    data = first_n(one_hand(), 60)
    record = records(data)[8]
    framing = range(record.offset, record.offset + 8)
    positions = [*framing, *range(record.offset + 8, record.offset + record.size, 9)]
    for position in positions:
        damaged = data[:position] + data[position + 1 :]
        with pytest.raises(LogFormatError):
            verify_log(damaged)
    # a byte of its body's first key deleted: refused at that record, not taken for a crash
    with pytest.raises(LogFormatError) as caught:
        verify_log(data[: record.offset + 3] + data[record.offset + 4 :])
    assert caught.value.record_no == 8 and caught.value.code in ("bad-field", "bad-tail")


def test_a_length_stretched_over_later_records_is_refused() -> None:
    # a payload length enlarged to cover the rest of the file: every byte of the tail follows the
    # msgpack rules, but whole records signed by the host lie inside it
    data = one_hand()
    record = with_payloads(data)
    payload = next(iter(record.private.values()))
    stored = data[record.offset : record.offset + record.size]
    header = stored.rindex(payload) - 2
    assert stored[header : header + 2] == bytes([0xC4, len(payload)])
    stretched = (len(data) - record.offset + 100).to_bytes(2, "big")
    damaged = (
        data[: record.offset + header] + b"\xc5" + stretched + data[record.offset + header + 2 :]
    )
    error = refused(damaged, "hidden-records")
    assert error.record_no == record.index
    assert f"a whole record {record.index + 1} signed by the host" in error.reason


@pytest.mark.parametrize(
    "tail",
    [
        b"\x93\xc6\xff\xff\xff\xff",  # the body: bin 32
        b"\x93\xc5\x01\x00\x85\xdb\xff\xff\xff\xf0",  # a str 32 key in the body
        b"\x93\xc5\x01\x00\x85\xa3seq\xdd\xff\xff\xff\xf0",  # an array 32 in the body
        b"\x93\xc5\x01\x00\x85\xa3seq\xdf\xff\xff\xff\xf0",  # a map 32 in the body
    ],
)
def test_a_huge_length_in_a_tail_is_too_large_whatever_its_type(tail: bytes) -> None:
    error = refused(one_hand() + tail, "too-large")
    assert "past its limit of 1048576 bytes" in error.reason


def test_a_huge_private_map_in_a_tail_is_too_large() -> None:
    data = one_hand()
    record = with_payloads(data)
    stored = data[record.offset : record.offset + record.size]
    cut = data[: record.offset] + stored[: private_map_at(stored)] + b"\xdf\x00\x10\x00\x00"
    refused(cut, "too-large")


def the_next_record_up_to_its_payloads() -> tuple[bytes, StoredRecord]:
    """A log cut just before one record's private map: the record's body and signature whole."""
    data = one_hand()
    record = with_payloads(data)
    stored = data[record.offset : record.offset + record.size]
    return data[: record.offset] + stored[: private_map_at(stored)], record


def test_an_ext_type_in_a_tail_is_refused() -> None:
    cut, _ = the_next_record_up_to_its_payloads()
    error = refused(cut + b"\x81\x01\xd4\x01", "bad-encoding")
    assert "ext type" in error.reason and f"at offset {len(cut) + 2}" in error.reason
    refused(one_hand() + b"\x93\xc5\x01\x00\x85\xa3seq\xd4\x01", "bad-encoding")  # in the body


def test_invalid_utf8_in_a_tail_is_refused() -> None:
    error = refused(one_hand() + b"\x93\xc5\x01\x00\x85\xa3s\xffq", "bad-encoding")
    assert "invalid UTF-8" in error.reason
    assert f"at offset {len(one_hand()) + 7}" in error.reason


def test_a_tail_that_is_not_the_next_record_is_refused() -> None:
    data = one_hand()
    count = len(records(data))
    earlier = records(data)[5]
    copy = data[earlier.offset : earlier.offset + 20]  # a copy of record 5, cut in its body
    error = refused(data + copy, "bad-tail")
    assert f"says seq 5, not {count}" in error.reason
    cut, _ = the_next_record_up_to_its_payloads()
    forged = bytearray(cut)
    forged[-1] ^= 1  # the host's signature on the cut record's whole body
    assert "signature" in refused(bytes(forged), "bad-tail").reason
    assert "declares 2 private payloads" in refused(cut + b"\x82\x00", "bad-tail").reason
    deal = next(r for r in records(data) if len(r.private) == 2)
    stored = data[deal.offset : deal.offset + deal.size]
    private = private_map_at(stored)
    wrong = data[: deal.offset] + stored[:private] + b"\x82\x00\xc4\x01\x00"
    assert "does not match" in refused(wrong, "bad-tail").reason  # a whole payload, not its hash


# --------------------------------------------------------------------------- after the match's end


def test_a_partial_record_after_match_end_is_invalid(tmp_path: Path) -> None:
    data = whole_match()
    assert records(data)[-1].kind == "match-end"
    report = audit_source(data + b"\x93\xc5\x01")
    assert report.verdict == "invalid" and report.failure is not None, report.summary
    assert report.failure.code == "data-after-end"
    path = tmp_path / "after-end.cnlog"
    path.write_bytes(data + b"\x93\xc5\x01")
    result = CliRunner().invoke(main, ["audit", "--require-complete", str(path)])
    assert result.exit_code == 1, result.output
    assert "data-after-end" in result.output


# --------------------------------------------------------------------------- words for people

PYTHON_TEXT = re.compile(
    r"Error\b|Exception|Traceback|unhashable|NoneType|'dict'|'list'|'bytes'|\bobject\b"
    r"|codec can't|:\.$|: \.|^\W*$"
)


def assert_plain_words(report: AuditReport) -> None:
    texts = [report.summary]
    if report.failure is not None:
        texts.append(report.failure.reason)
        if report.failure.responsibility:  # empty for a file this program cannot check at all
            texts.append(report.failure.responsibility)
    for text in texts:
        assert not PYTHON_TEXT.search(text), text


def test_msgpack_errors_are_worded_for_people() -> None:
    target = next(r for r in records(one_hand()) if r.index > 10 and not r.private)
    data = first_n(one_hand(), target.index + 1)
    assert data.endswith(b"\x80")  # the record's empty private map
    before, after = data[:-1], one_hand()[len(data) :]
    cases = [
        (b"\x81\x80\xc4\x00", 1, "an array or map used as a map key"),  # "unhashable type"
        (b"\x81\x01\xc1", 2, "the byte 0xc1, which msgpack never uses"),  # "Not valid msgpack:."
        (b"\x81\x01\xd4\x01\x00", 2, "an ext type (0xd4)"),
        (b"\x82\x01\xc4\x00\x01\xc4\x00", 4, "a map repeats a key"),
    ]
    for private, delta, words in cases:
        report = audit_source(before + private + after)
        assert report.verdict == "invalid" and report.failure is not None, private
        assert report.failure.record == target.index, report.failure
        assert words in report.failure.reason, report.failure
        assert f"at offset {len(before) + delta} " in report.failure.reason.lower()
        assert_plain_words(report)


def load_fuzz_script() -> ModuleType:
    return load_script("fuzz_log")


def test_a_short_fuzz_run_finds_no_damage_passing_as_a_crash() -> None:
    # what scripts/fuzz_log.py does with thousands of mutants, on small logs
    fuzz = load_fuzz_script()
    tally = fuzz.run(count=80, seed=2, quick=True)
    assert tally.count == 80
    assert tally.violations == [], fuzz.table(tally)
    assert tally.outcomes["invalid"] > 50 and tally.outcomes["truncated"] > 0


def test_a_rule_of_the_wrong_type_is_named_not_pythons_error() -> None:
    # a host-signed header whose rule set holds a str where an int belongs
    header = records(one_hand())[0]
    fields = {k: v for k, v in header.fields.items() if k not in ("seq", "prev", "kind", "format")}
    buffer = io.BytesIO()
    writer = LogWriter(buffer, bot_identity(3, 0), fsync=False)
    writer.write_header(fields | {"rules": fields["rules"] | {"decks": "two"}})
    report = audit_source(buffer.getvalue())
    assert report.verdict == "unsupported", report.summary
    assert "the rule 'decks' is str, not int" in report.summary  # was "'>' not supported ..."
    assert_plain_words(report)


def test_a_tail_crafted_to_make_the_search_slow_is_refused_quickly() -> None:
    # thousands of record-shaped pieces whose bodies all end at one signature: decoding each
    # body would take time quadratic in the tail; the search's budget refuses the tail instead
    pieces = 3000
    end = 6 * pieces + 60_000
    inner = bytearray()
    for _ in range(pieces):
        inner += b"\x93\xc6" + (end - (len(inner) + 6)).to_bytes(4, "big")
    inner += b"\x90" * (end - len(inner)) + b"\xc4\x40" + bytes(64) + b"\x81"
    outer = (
        b"\x93\xc6" + (200_000).to_bytes(4, "big") + b"\x81\xa1x\xc6" + (190_000).to_bytes(4, "big")
    )
    error = refused(one_hand() + outer + bytes(inner), "bad-tail")
    assert "pieces shaped like records" in error.reason
