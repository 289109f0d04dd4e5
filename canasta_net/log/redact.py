"""Redaction: a seat's copy of a stored record, holding only that seat's private payload."""

from __future__ import annotations

from .format import MAX_RECORD_SIZE, RecordInfo, StoredRecord, _pack, _unpack

__all__ = ["redact_for_seat"]


def redact_for_seat(record: bytes | StoredRecord | RecordInfo, seat: int) -> bytes:
    """A seat's copy of a stored record: the same body and host signature, only its own payload.

    Only the outer array is re-encoded; the body bytes are carried over untouched, so the copy's
    hash, signature and chain are those of the original.
    """
    if isinstance(record, StoredRecord):
        body, host_sig, private = record.body, record.host_sig, record.private
    else:
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
    kept = {seat: private[seat]} if seat in private else {}
    return _pack([body, host_sig, kept])
