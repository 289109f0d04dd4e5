"""Redaction: a seat's copy of a stored record, holding only that seat's private payload, and a
watcher's copy, holding none.

A record's body is what every seat receives, so it never holds a card or a secret hidden from
anyone at the table (`docs/log-format.md`): a dealt hand, a drawn card, a seed revealed to the
host travel only in the private payloads, each for its own seat, until the hand's ``seeds``
record publishes the seeds. At a blind-dealt table there are no private payloads at all; the
sealed keys in the bodies open only with their recipient's secret. A copy without any private
payload therefore shows exactly what the public may see at that point of the log.
"""

from __future__ import annotations

from .format import MAX_RECORD_SIZE, RecordInfo, StoredRecord, _pack, _unpack

__all__ = ["redact_for_seat", "redact_public"]


def redact_for_seat(record: bytes | StoredRecord | RecordInfo, seat: int) -> bytes:
    """A seat's copy of a stored record: the same body and host signature, only its own payload.

    Only the outer array is re-encoded; the body bytes are carried over untouched, so the copy's
    hash, signature and chain are those of the original.
    """
    body, host_sig, private = _parts(record)
    kept = {seat: private[seat]} if seat in private else {}
    return _pack([body, host_sig, kept])


def redact_public(record: bytes | StoredRecord | RecordInfo) -> bytes:
    """A watcher's copy of a stored record: the same body and host signature, no private payload
    (what a seat's copy would be for a seat that holds nothing). It verifies and chains as the
    original does, and replays as any seat's copy does, hands once their seeds are published."""
    body, host_sig, _ = _parts(record)
    return _pack([body, host_sig, {}])


def _parts(record: bytes | StoredRecord | RecordInfo) -> tuple[bytes, bytes, dict[int, bytes]]:
    """A stored record's body, host signature and private payloads."""
    if isinstance(record, StoredRecord):
        return record.body, record.host_sig, record.private
    stored = record.stored if isinstance(record, RecordInfo) else record
    if len(stored) > MAX_RECORD_SIZE:
        raise ValueError(f"a stored record is at most {MAX_RECORD_SIZE} bytes")
    obj = _unpack(stored)
    if (
        type(obj) is not list
        or len(obj) != 3
        or type(obj[0]) is not bytes
        or type(obj[1]) is not bytes
        or type(obj[2]) is not dict
    ):
        raise ValueError("not a stored record [body, host_sig, private]")
    body, host_sig, private = obj
    return body, host_sig, private
