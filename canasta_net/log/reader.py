"""Reading a log: its records streamed from a file, bytes or chunks, in bounded memory.

Each record is structurally validated (:mod:`.format`) as it is read; nothing here checks
signatures or the chain (:mod:`.verify` does). The only I/O is ``read`` on a file object the
caller hands in.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, BinaryIO, Final, cast

import msgpack
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from canasta_net.identity import check_signature, signing_input

from .format import (
    _DECODE_ERRORS,
    MAX_HEADER_SIZE,
    MAX_RECORD_SIZE,
    RECORD_SIGNATURE_KIND,
    SEAT_KEY_KIND,
    ZERO_HASH,
    Header,
    LogFormatError,
    StoredRecord,
    Truncation,
    _build_record,
    _check_record,
    _decode_map,
    _parse_header,
    _refuse_ext,
    _unique_map,
)
from .scan import (
    BadBytes,
    TailParts,
    check_tail,
    find_later_record,
    scan_object,
    whole_entries,
)

__all__ = ["READ_SIZE", "LogSource", "RecordStream", "iter_records"]

#: How many bytes the reader asks its file for at a time.
READ_SIZE: Final = 64 << 10

_RECORD_PREFIX: Final = signing_input(RECORD_SIGNATURE_KIND, b"")
_NOT_CHAINED: Final = "its body's 'prev' is not the hash of the last whole record"

#: What a reader accepts: a binary file object, the bytes of a whole log, or chunks of it.
LogSource = BinaryIO | Iterable[bytes] | bytes | bytearray | memoryview


def _chunks(source: LogSource, read_size: int) -> Iterator[bytes]:
    """Cut any source into chunks of at most ``read_size`` bytes."""
    if isinstance(source, bytes | bytearray | memoryview):
        view = memoryview(source)
        for start in range(0, len(view), read_size):
            yield bytes(view[start : start + read_size])
        return
    read = getattr(source, "read", None)
    pieces: Iterable[bytes]
    if callable(read):
        reader = cast(Callable[[int], bytes], read)
        pieces = iter(lambda: reader(read_size), b"")
    else:
        pieces = source
    for piece in pieces:
        if len(piece) <= read_size:
            yield bytes(piece)
        else:
            view = memoryview(piece)
            for start in range(0, len(view), read_size):
                yield bytes(view[start : start + read_size])


class RecordStream(Iterator[StoredRecord]):
    """Stream the records of a log, each structurally validated, without holding the whole log.

    Memory stays bounded by ``max_record_size`` plus ``read_size``: a record is refused as
    ``too-large`` as soon as it has grown past the limit, before the rest of it is read.

    A final record that the log ends inside of (a crash mid-write) is not an error: iteration
    stops after the last complete record and ``truncated`` describes the incomplete tail. The
    tail must be what a crashed writer can leave (docs/log-format.md, "Truncation"): the start of
    one record, following the format's msgpack rules as far as it goes, declaring nothing past
    the size limit, and holding no later record signed by the host. Anything else malformed
    raises :class:`LogFormatError` naming the record and, where it can, the first bad byte.
    ``header`` is set once record 0 has been read; ``valid_length`` is the size of the complete
    records read so far.
    """

    def __init__(
        self,
        source: LogSource,
        *,
        max_record_size: int = MAX_RECORD_SIZE,
        read_size: int = READ_SIZE,
    ) -> None:
        if max_record_size < 1 or read_size < 1:
            raise ValueError("max_record_size and read_size must be positive")
        self.header: Header | None = None
        self.truncated: Truncation | None = None
        self.valid_length = 0
        self._max_record_size = max_record_size
        self._chunks = _chunks(source, read_size)
        self._unpacker = msgpack.Unpacker(
            raw=False,
            strict_map_key=False,
            use_list=True,
            ext_hook=_refuse_ext,
            object_pairs_hook=_unique_map,
            max_buffer_size=max_record_size + read_size,
        )
        self._fed = 0
        self._index = 0
        self._finished = False
        # The chunks that still hold bytes of the current (incomplete) record, so that a
        # truncated tail can be inspected; _pending_start is the offset of _pending[0].
        self._pending: deque[bytes] = deque()
        self._pending_start = 0
        # the key that signs the host's records (the header's, unless a seat-key record changed it)
        self._host_key: Ed25519PublicKey | None = None
        self._last_hash = ZERO_HASH

    def __iter__(self) -> RecordStream:
        return self

    def __next__(self) -> StoredRecord:
        if self._finished:
            raise StopIteration
        try:
            return self._next_record()
        except BaseException:
            self._finished = True
            raise

    def _limit(self) -> int:
        if self._index == 0:
            return min(MAX_HEADER_SIZE, self._max_record_size)
        return self._max_record_size

    def _current_bytes(self) -> bytes:
        """The bytes read so far of the record being read (at most the limit plus one read)."""
        return b"".join(self._pending)[self.valid_length - self._pending_start :]

    def _first_bad_byte(self) -> BadBytes | None:
        """Where the record being read first breaks the format's msgpack rules, if the walk of
        its bytes finds it (it words what the C unpacker only refuses)."""
        try:
            scan_object(self._current_bytes(), 0, self._limit())
        except BadBytes as e:
            return e
        return None

    def _error_at(self, bad: BadBytes, offset: int, prefix: str = "") -> LogFormatError:
        where = f"at offset {offset + bad.offset} (byte {bad.offset} of the record), "
        return LogFormatError(self._index, bad.code, prefix + where + bad.what)

    def _too_large(self, size: int) -> LogFormatError:
        bad = self._first_bad_byte()
        if bad is not None and bad.code == "too-large":
            return self._error_at(bad, self.valid_length)
        return LogFormatError(
            self._index,
            "too-large",
            f"the record at offset {self.valid_length} exceeds {self._limit()} bytes "
            f"({size}+ bytes)",
        )

    def _undecodable(self) -> LogFormatError:
        bad = self._first_bad_byte()
        if bad is not None:
            return self._error_at(bad, self.valid_length)
        return LogFormatError(
            self._index,
            "bad-encoding",
            f"the record at offset {self.valid_length} is not valid msgpack",
        )

    def _next_object(self) -> tuple[bool, Any]:
        """The next complete msgpack object, reading as needed; (False, None) at the end."""
        while True:
            try:
                return True, self._unpacker.unpack()
            except msgpack.OutOfData:
                pass
            except _DECODE_ERRORS:
                raise self._undecodable() from None
            pending = self._fed - self.valid_length
            if pending > self._limit():
                raise self._too_large(pending)
            chunk = next(self._chunks, None)
            if chunk is None:
                return False, None
            try:
                self._unpacker.feed(chunk)
            except msgpack.BufferFull:
                raise self._too_large(pending + len(chunk)) from None
            self._fed += len(chunk)
            self._pending.append(chunk)

    def _next_record(self) -> StoredRecord:
        record_no = self._index
        found, obj = self._next_object()
        if not found:
            self._finish()
            raise StopIteration
        offset = self.valid_length
        end = self._unpacker.tell()
        size = end - offset
        if size > self._limit():
            raise self._too_large(size)
        record = _build_record(obj, record_no, offset, size, self.header)
        if record_no == 0:
            self.header = _parse_header(record.fields)
            self._host_key = self.header.verifying_keys[self.header.host]
        elif record.kind == SEAT_KEY_KIND and self.header is not None:
            rekey = record.fields["rekey"]
            if rekey["seat"] == self.header.host:
                self._host_key = Ed25519PublicKey.from_public_bytes(rekey["key"])
        self.valid_length = end
        self._last_hash = record.hash
        self._index += 1
        pending = self._pending
        while pending and self._pending_start + len(pending[0]) <= end:
            self._pending_start += len(pending.popleft())
        return record

    def _check_tail_parts(self, parts: TailParts, intro: str) -> None:
        """What a cut-off record holds whole must be what the host would have written next: a
        body that is record ``_index``'s, chained to the last record, with its host signature, and
        each whole private payload matching its commitment."""
        assert self._host_key is not None and self.header is not None

        def refuse(offset: int, what: str, code: str = "bad-tail") -> LogFormatError:
            return self._error_at(BadBytes(offset, code, what), self.valid_length, intro)

        if parts.body_prefix is not None:  # a body cut off: its whole entries must fit
            at, prefix = parts.body_prefix
            for entry, key, value in whole_entries(prefix):
                if key == "seq" and (type(value) is not int or value != self._index):
                    raise refuse(at + entry, f"its body says seq {value!r}, not {self._index}")
                if key == "prev" and value != self._last_hash:
                    raise refuse(at + entry, _NOT_CHAINED)
        if parts.body is None:
            return
        at, body = parts.body
        try:
            fields = _decode_map(body, self._index, "the body")
            _check_record(fields, self._index, self.header)
        except LogFormatError as e:
            raise refuse(at, e.reason, e.code) from None
        if fields["seq"] != self._index:
            raise refuse(at, f"its body says seq {fields['seq']}, not {self._index}")
        if fields["prev"] != self._last_hash:
            raise refuse(at, _NOT_CHAINED)
        if parts.signature is not None:
            sig_at, signature = parts.signature
            try:
                check_signature(self._host_key, signature, _RECORD_PREFIX + body)
            except InvalidSignature:
                raise refuse(sig_at, "the host's signature on its body does not verify") from None
        priv: dict[int, bytes] = fields.get("priv", {})
        if parts.private_count is not None and parts.private_count > len(priv):
            assert parts.private_at is not None
            raise refuse(
                parts.private_at,
                f"it declares {parts.private_count} private payloads, but its body commits to "
                f"{len(priv)}",
            )
        for entry, seat, payload in parts.payloads:
            if priv.get(seat) != hashlib.sha256(payload).digest():
                raise refuse(entry, f"the private payload for seat {seat} does not match its body")

    def _finish(self) -> None:
        self._finished = True
        leftover = self._fed - self.valid_length
        if leftover == 0:
            if self._index == 0:
                raise LogFormatError(0, "missing-header", "the log is empty")
            return
        tail = self._current_bytes()
        intro = f"the log ends with {leftover} bytes that cannot be a record cut off by a crash: "
        try:
            parts = check_tail(tail, self._limit())
        except BadBytes as e:
            raise self._error_at(e, self.valid_length, intro) from None
        if self._index == 0:
            raise LogFormatError(
                0, "missing-header", f"the log ends inside its header record ({leftover} bytes)"
            )
        assert self._host_key is not None and self.header is not None
        self._check_tail_parts(parts, intro)
        try:
            later = find_later_record(tail, self._index, self._host_key, _RECORD_PREFIX)
        except BadBytes as e:
            raise self._error_at(e, self.valid_length, intro) from None
        if later is not None:
            raise LogFormatError(
                self._index,
                "hidden-records",
                f"the log ends with {leftover} bytes from offset {self.valid_length} that would "
                f"be one record cut off by a crash, but a whole record {later.seq} signed by the "
                f"host begins inside them at offset {self.valid_length + later.offset}: the bytes "
                "were damaged, not cut off",
            )
        self.truncated = Truncation(self._index, self.valid_length, leftover)


def iter_records(
    source: LogSource,
    *,
    max_record_size: int = MAX_RECORD_SIZE,
    read_size: int = READ_SIZE,
) -> RecordStream:
    """Stream the records of a log: see :class:`RecordStream` (an iterator of StoredRecord)."""
    return RecordStream(source, max_record_size=max_record_size, read_size=read_size)
