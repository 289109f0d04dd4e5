"""The event log container, ``.cnlog`` format 1: write, read, redact and verify.

A log is a plain concatenation of msgpack objects, one per record. Each stored record is
``[body: bin, host_sig: bin(64), private: map{seat: bin}]``. The ``body`` bin holds the exact bytes
of a msgpack map; those bytes, never a re-encoding of them, are hashed (SHA-256, the record hash)
and signed by the host (signature kind ``log-record``). Each body names the hash of the previous
body, so the records form a chain rooted in the header (record 0). ``docs/log-format.md`` is the
complete specification; this module is its reference implementation.

The container knows nothing about Canasta: record kinds other than ``header`` and ``checkpoint``
and their fields belong to the game layer. What the container checks is structure (every body is
validated against a schema before use), the chain, the host's signature on every record, private
payloads against their hashes, author-signed actions (``act``/``asig``) and checkpoint signatures.

No I/O happens here beyond the file objects handed in: the writer takes a binary file object and
the reader a binary file object, a bytes object or an iterable of byte chunks.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Final, cast

import msgpack
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from canasta_net.identity import PUBLIC_KEY_SIZE, SIGNATURE_SIZE, Identity, signing_input
from canasta_net.schema import (
    Anything,
    Bool,
    Bytes,
    Int,
    List,
    Map,
    MapOf,
    Schema,
    SchemaError,
    Text,
    Tuple,
    kind_of,
    require,
    validate,
)

__all__ = [
    "ACTION_SIGNATURE_KIND",
    "CHECKPOINT_KIND",
    "CHECKPOINT_SIGNATURE_KIND",
    "FORMAT_VERSION",
    "HASH_SIZE",
    "HEADER_KIND",
    "MAX_HEADER_SIZE",
    "MAX_KIND_LENGTH",
    "MAX_RECORD_SIZE",
    "MAX_SEATS",
    "READ_SIZE",
    "RECORD_SIGNATURE_KIND",
    "SEAT_KEY_KIND",
    "TABLE_ID_SIZE",
    "ZERO_HASH",
    "CheckpointInfo",
    "Header",
    "LogError",
    "LogFormatError",
    "LogSource",
    "LogVerificationError",
    "LogVerifier",
    "LogWriter",
    "LogWriterError",
    "RecordInfo",
    "RecordStream",
    "SeatInfo",
    "StoredRecord",
    "Truncation",
    "VerificationReport",
    "decode_log_map",
    "iter_records",
    "iter_verified",
    "open_log_for_writing",
    "parse_header",
    "parse_stored_record",
    "record_hash",
    "redact_for_seat",
    "verify_log",
]

FORMAT_VERSION: Final = 1
#: The largest stored record (the whole outer array, payloads included), in bytes.
MAX_RECORD_SIZE: Final = 1 << 20
#: The largest stored header record, in bytes.
MAX_HEADER_SIZE: Final = 64 << 10
#: The most seats a header may list.
MAX_SEATS: Final = 8
#: The longest record kind, in characters.
MAX_KIND_LENGTH: Final = 64
#: How many bytes the reader asks its file for at a time.
READ_SIZE: Final = 64 << 10

HASH_SIZE: Final = 32
TABLE_ID_SIZE: Final = 16
ZERO_HASH: Final = bytes(HASH_SIZE)

HEADER_KIND: Final = "header"
CHECKPOINT_KIND: Final = "checkpoint"
SEAT_KEY_KIND: Final = "seat-key"
RECORD_SIGNATURE_KIND: Final = "log-record"
ACTION_SIGNATURE_KIND: Final = "seat-action"
CHECKPOINT_SIGNATURE_KIND: Final = "checkpoint"

# Body fields the writer fills in itself; a caller may not supply them.
_WRITER_FIELDS: Final = frozenset({"seq", "prev", "kind", "priv"})
# The header may carry none of the per-record extras.
_HEADER_FORBIDDEN: Final = frozenset({"priv", "act", "asig", "msg", "sigs", "rekey"})
_HEADER_WRITER_FIELDS: Final = _WRITER_FIELDS | {"format"}

# Signing inputs are prefix + message (see identity.signing_input); built once, not per record.
_RECORD_PREFIX: Final = signing_input(RECORD_SIGNATURE_KIND, b"")
_ACTION_PREFIX: Final = signing_input(ACTION_SIGNATURE_KIND, b"")
_CHECKPOINT_PREFIX: Final = signing_input(CHECKPOINT_SIGNATURE_KIND, b"")

_PLAIN_SCALARS: Final = frozenset({str, bytes, int, float, bool, type(None)})
# First bytes of a msgpack array: fixarray, array 16, array 32.
_ARRAY_FIRST_BYTES: Final = frozenset(range(0x90, 0xA0)) | {0xDC, 0xDD}
_DECODE_ERRORS: Final = (ValueError, TypeError, OverflowError)

#: What a reader accepts: a binary file object, the bytes of a whole log, or chunks of it.
LogSource = BinaryIO | Iterable[bytes] | bytes | bytearray | memoryview


# --------------------------------------------------------------------------- errors


class LogError(ValueError):
    """Record {record_no} of the log is refused: {reason}."""

    def __init__(self, record_no: int, code: str, reason: str) -> None:
        super().__init__(f"record {record_no}: {reason} [{code}]")
        self.record_no = record_no
        self.code = code
        self.reason = reason


class LogFormatError(LogError):
    """The log is malformed at record {record_no}: {reason}. It cannot be read past that point.

    Codes: ``missing-header``, ``bad-version``, ``not-an-array``, ``bad-encoding``, ``bad-field``,
    ``duplicate-header``, ``too-large``.
    """


class LogVerificationError(LogError):
    """Record {record_no} of the log fails verification: {reason}.

    ``seat`` names the seat whose signed data fails the check, where one can be named: the host for
    record-level checks (its signature, ``seq``, ``prev``, private payloads, checkpoint contents),
    the author for checks on an author-signed action, the signing seat for a checkpoint signature.
    It is not a verdict by itself: the host signs every record and so vouches for all of it (see
    docs/log-format.md, "Responsibility").

    Codes: ``bad-host-signature``, ``bad-seq``, ``bad-prev``, ``bad-private``,
    ``bad-author-signature``, ``wrong-table``, ``bad-aseq``, ``unknown-head``,
    ``bad-checkpoint-signature``.
    """

    def __init__(self, record_no: int, code: str, reason: str, seat: int | None = None) -> None:
        super().__init__(record_no, code, reason)
        self.seat = seat


class LogWriterError(RuntimeError):
    """The log writer cannot go on: {reason}. Resume from the file with LogWriter.resume."""


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class SeatInfo:
    """One seat as the header lists it."""

    name: str
    key: bytes
    bot: bool


@dataclass(frozen=True)
class Header:
    """The validated header (record 0). ``fields`` is the whole decoded header body."""

    format: int
    software: str
    table: bytes
    variant: str
    rules: dict[str, Any]
    seats: tuple[SeatInfo, ...]
    host: int
    deal: str
    insecure: bool
    created: int
    fields: dict[str, Any] = field(repr=False, compare=False)
    # One Ed25519PublicKey per seat, built once so verification never rebuilds a key per record.
    verifying_keys: tuple[Ed25519PublicKey, ...] = field(repr=False, compare=False)

    @property
    def host_key(self) -> bytes:
        return self.seats[self.host].key


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """One record as read from a log, structurally valid but not yet verified.

    ``body`` is the exact stored body bytes and ``fields`` their decoded map; ``action`` is the
    decoded ``act`` map of an author-signed record and ``checkpoint`` the decoded ``msg`` map of a
    checkpoint (``None`` otherwise). ``offset`` and ``size`` locate the stored record in the file.
    """

    index: int
    offset: int
    size: int
    body: bytes
    fields: dict[str, Any]
    host_sig: bytes
    private: dict[int, bytes]
    hash: bytes
    action: dict[str, Any] | None
    checkpoint: dict[str, Any] | None

    @property
    def kind(self) -> str:
        return cast(str, self.fields["kind"])

    @property
    def seq(self) -> int:
        return cast(int, self.fields["seq"])


@dataclass(frozen=True)
class RecordInfo:
    """What the writer wrote: the record's number, hash, body bytes and stored bytes."""

    seq: int
    kind: str
    hash: bytes
    body: bytes
    stored: bytes


@dataclass(frozen=True)
class Truncation:
    """The log ends inside record ``record_no``: ``length`` bytes from ``offset`` are incomplete."""

    record_no: int
    offset: int
    length: int


@dataclass(frozen=True)
class CheckpointInfo:
    """A verified checkpoint: which seats signed (hand, head, result)."""

    record_no: int
    hand: int
    head: bytes
    signers: frozenset[int]


@dataclass(frozen=True)
class VerificationReport:
    """The outcome of a successful :func:`verify_log`.

    ``records`` counts complete records (header included), so the last one has seq
    ``records - 1`` and hash ``last_hash``; ``valid_length`` is their total size in bytes.
    ``truncated`` is set when the log ends inside a further, incomplete record.
    ``private_present[s]`` / ``private_absent[s]``: how many of seat s's committed payloads the file
    holds / lacks. ``last_aseq[s]``: the last action sequence number of seat s.
    """

    header: Header
    records: int
    last_hash: bytes
    valid_length: int
    truncated: Truncation | None
    kinds: dict[str, int]
    private_present: dict[int, int]
    private_absent: dict[int, int]
    last_aseq: dict[int, int]
    checkpoints: tuple[CheckpointInfo, ...]

    @property
    def payload_seats(self) -> frozenset[int]:
        """The seats whose private payloads appear in this copy of the log."""
        return frozenset(seat for seat, count in self.private_present.items() if count)


# --------------------------------------------------------------------------- encoding helpers


def record_hash(body: bytes) -> bytes:
    """The hash of a record: SHA-256 of its exact body bytes."""
    return hashlib.sha256(body).digest()


def _refuse_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"msgpack ext type {code} is not allowed in a log")


def _unique_map(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """Build a decoded map, refusing duplicate keys.

    msgpack decoders disagree on duplicate keys (first or last wins), so a map with one could
    mean different things to different verifiers; and in the unsigned ``private`` map a duplicate
    could silently stand one seat's payload in for another's.
    """
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("a msgpack map repeats a key")
    return result


def _pack(value: Any) -> bytes:
    return cast(bytes, msgpack.packb(value, use_bin_type=True))


def _unpack(data: bytes) -> Any:
    """Decode exactly one msgpack object (trailing bytes are an error); bin stays bytes."""
    return msgpack.unpackb(
        data,
        raw=False,
        strict_map_key=False,
        ext_hook=_refuse_ext,
        object_pairs_hook=_unique_map,
    )


def _is_plain(value: Any) -> bool:
    """True if ``value`` holds only nil, bool, int, float, str, bin, arrays and maps.

    The timestamp extension bypasses ``ext_hook``, so this walk is what refuses it (and any other
    non-plain value). Iterative: nesting depth is bounded by msgpack, not by Python's stack.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.keys())
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind not in _PLAIN_SCALARS:
            return False
    return True


def _decode_map(data: bytes, record_no: int, what: str) -> dict[str, Any]:
    """Decode ``data`` as a msgpack map with str keys and plain values."""
    try:
        value = _unpack(data)
    except _DECODE_ERRORS as e:
        raise LogFormatError(
            record_no, "bad-encoding", f"{what} is not valid msgpack: {e}"
        ) from None
    if type(value) is not dict:
        raise LogFormatError(record_no, "bad-field", f"{what} is not a msgpack map")
    if not all(type(key) is str for key in value):
        raise LogFormatError(record_no, "bad-field", f"{what} has a key that is not a string")
    if not _is_plain(value):
        raise LogFormatError(
            record_no, "bad-encoding", f"{what} holds an ext value (only plain msgpack is allowed)"
        )
    return cast(dict[str, Any], value)


def decode_log_map(data: bytes, record_no: int, what: str) -> dict[str, Any]:
    """Decode a map exactly as the log's reader does (no ext types, no repeated keys, no
    trailing bytes): what a host checks before it accepts bytes it must later journal."""
    return _decode_map(data, record_no, what)


def _bad(record_no: int, reason: str) -> LogFormatError:
    return LogFormatError(record_no, "bad-field", reason)


def _checked(schema: Schema, value: Any, record_no: int, name: str) -> Any:
    """``value`` if it follows ``schema``, else LogFormatError ``bad-field`` naming the field."""
    try:
        return validate(schema, value, name)
    except SchemaError as e:
        raise _bad(record_no, str(e)) from None


def _describe(value: Any) -> str:
    if type(value) is bytes:
        return f"{len(value)} bytes"
    return kind_of(value)


# --------------------------------------------------------------------------- schema

_COUNT: Final = Int(low=0)  # seq, hand, aseq, a time
_HASH: Final = Bytes(size=HASH_SIZE)
_TABLE_ID: Final = Bytes(size=TABLE_ID_SIZE)
_COMMON_FIELDS: Final = {"seq": _COUNT, "prev": _HASH, "kind": Text(MAX_KIND_LENGTH, min_len=1)}
_COMMON: Final = Map(_COMMON_FIELDS)
_HEADER: Final = Map(
    _COMMON_FIELDS
    | {
        "software": Text(),
        "table": _TABLE_ID,
        "variant": Text(),
        "rules": MapOf(Text(), Anything()),
        "seats": List(
            Map({"name": Text(), "key": Bytes(size=PUBLIC_KEY_SIZE), "bot": Bool()}),
            MAX_SEATS,
            min_len=1,
        ),
        "host": _COUNT,  # and below the number of seats
        "deal": Text(),
        "insecure": Bool(),
        "created": _COUNT,
    }
)
_STORED: Final = Tuple(Bytes(), Bytes(size=SIGNATURE_SIZE), Anything())
_SIGNED: Final = Map({"act": Bytes(), "asig": Bytes(size=SIGNATURE_SIZE)})
_CHECKPOINT_MSG: Final = Map(
    {"table": _TABLE_ID, "hand": _COUNT, "head": _HASH, "result": Anything()}
)


@dataclass(frozen=True)
class _SeatSchemas:
    """The schemas that name seats, for a log of ``seats`` seats."""

    action: Map  # a decoded ``act``
    rekey: Map
    priv: MapOf  # seat -> hash of its private payload
    checkpoint: Map  # the checkpoint's message and its seats' signatures
    private: MapOf  # seat -> private payload (the stored record's unsigned part)


@functools.lru_cache(maxsize=MAX_SEATS)
def _seat_schemas(seats: int) -> _SeatSchemas:
    seat = Int(0, seats - 1)
    return _SeatSchemas(
        action=Map(
            {"table": _TABLE_ID, "hand": _COUNT, "seat": seat, "aseq": _COUNT, "head": _HASH}
        ),
        rekey=Map({"seat": seat, "key": Bytes(size=PUBLIC_KEY_SIZE)}),
        priv=MapOf(seat, _HASH, min_len=1),
        checkpoint=Map({"msg": Bytes(), "sigs": MapOf(seat, Bytes(size=SIGNATURE_SIZE))}),
        private=MapOf(seat, Bytes()),
    )


def _check_common(fields: dict[str, Any], record_no: int) -> str:
    """Check the fields every body has; return the kind."""
    _checked(_COMMON, fields, record_no, "body")
    return cast(str, fields["kind"])


def _parse_header(fields: dict[str, Any]) -> Header:
    """Validate a decoded header body (record 0)."""
    kind = fields.get("kind")
    if kind != HEADER_KIND:
        raise LogFormatError(
            0, "missing-header", f"the first record has kind {kind!r}, not {HEADER_KIND!r}"
        )
    version = fields.get("format")
    if type(version) is not int or version != FORMAT_VERSION:
        raise LogFormatError(
            0,
            "bad-version",
            f"log format {version!r} is not supported (this reader reads format {FORMAT_VERSION})",
        )
    forbidden = sorted(_HEADER_FORBIDDEN & fields.keys())
    if forbidden:
        raise _bad(0, f"the header may not carry fields {forbidden}")
    _checked(_HEADER, fields, 0, "header")
    seats = tuple(
        SeatInfo(name=seat["name"], key=seat["key"], bot=seat["bot"]) for seat in fields["seats"]
    )
    if len({seat.key for seat in seats}) != len(seats):
        raise _bad(0, "two seats have the same public key")
    try:
        keys = tuple(Ed25519PublicKey.from_public_bytes(seat.key) for seat in seats)
    except ValueError as e:
        raise _bad(0, f"a seat key is not an Ed25519 public key: {e}") from None
    try:
        host = require(fields, "host", Int(0, len(seats) - 1), "header")
    except SchemaError as e:
        raise _bad(0, str(e)) from None
    return Header(
        format=version,
        software=fields["software"],
        table=fields["table"],
        variant=fields["variant"],
        rules=fields["rules"],
        seats=seats,
        host=host,
        deal=fields["deal"],
        insecure=fields["insecure"],
        created=fields["created"],
        fields=fields,
        verifying_keys=keys,
    )


def _check_record(
    fields: dict[str, Any], record_no: int, header: Header
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Validate a decoded body after the header; return its decoded (action, checkpoint)."""
    kind = _check_common(fields, record_no)
    if kind == HEADER_KIND:
        raise LogFormatError(record_no, "duplicate-header", "a second header record")
    schemas = _seat_schemas(len(header.seats))
    if "priv" in fields:
        _checked(schemas.priv, fields["priv"], record_no, "body.priv")
    action = None
    if "act" in fields or "asig" in fields:
        _checked(_SIGNED, fields, record_no, "body")
        action = _decode_map(fields["act"], record_no, "the action ('act')")
        _checked(schemas.action, action, record_no, "act")
    if kind == SEAT_KEY_KIND:
        if "rekey" not in fields:
            raise _bad(record_no, f"a {SEAT_KEY_KIND!r} record needs a 'rekey' map")
        _checked(schemas.rekey, fields["rekey"], record_no, "body.rekey")
        if action is not None:
            raise _bad(record_no, f"a {SEAT_KEY_KIND!r} record is the host's alone")
    elif "rekey" in fields:
        raise _bad(record_no, f"field 'rekey' belongs to {SEAT_KEY_KIND!r} records only")
    checkpoint = None
    if kind == CHECKPOINT_KIND:
        _checked(schemas.checkpoint, fields, record_no, "body")
        checkpoint = _decode_map(fields["msg"], record_no, "the checkpoint message ('msg')")
        _checked(_CHECKPOINT_MSG, checkpoint, record_no, "msg")
    elif "msg" in fields or "sigs" in fields:
        raise _bad(record_no, f"fields 'msg' and 'sigs' belong to {CHECKPOINT_KIND!r} records only")
    return action, checkpoint


def _build_record(
    obj: Any, record_no: int, offset: int, size: int, header: Header | None
) -> StoredRecord:
    """Validate one decoded stored record (record 0 is the header) and describe it."""
    if type(obj) is not list or len(obj) != 3:
        raise LogFormatError(
            record_no,
            "not-an-array",
            f"a stored record must be an array [body, host_sig, private], not {_describe(obj)}"
            + (f" of {len(obj)}" if type(obj) is list else ""),
        )
    _checked(_STORED, obj, record_no, "record")
    body, host_sig, private = obj
    fields = _decode_map(body, record_no, "the record body")
    action = checkpoint = None
    if record_no == 0:
        _parse_header(fields)
        if private != {}:
            raise _bad(0, "the header record may not carry private payloads")
    else:
        if header is None:
            raise LogFormatError(record_no, "missing-header", "no header before this record")
        _checked(_seat_schemas(len(header.seats)).private, private, record_no, "private")
        action, checkpoint = _check_record(fields, record_no, header)
    return StoredRecord(
        index=record_no,
        offset=offset,
        size=size,
        body=body,
        fields=fields,
        host_sig=host_sig,
        private=private,
        hash=hashlib.sha256(body).digest(),
        action=action,
        checkpoint=checkpoint,
    )


def parse_stored_record(
    data: bytes, record_no: int, header: Header | None, max_record_size: int = MAX_RECORD_SIZE
) -> StoredRecord:
    """Read one stored record received on its own (e.g. over the wire) as record ``record_no``."""
    limit = MAX_HEADER_SIZE if record_no == 0 else max_record_size
    if len(data) > limit:
        raise LogFormatError(record_no, "too-large", f"record of {len(data)} bytes over {limit}")
    try:
        obj = _unpack(data)
    except _DECODE_ERRORS as e:
        raise LogFormatError(record_no, "bad-encoding", f"not one msgpack object: {e}") from None
    return _build_record(obj, record_no, 0, len(data), header)


def parse_header(record: StoredRecord) -> Header:
    """The header of a log whose record 0 is ``record``."""
    return _parse_header(record.fields)


# --------------------------------------------------------------------------- reading


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
    stops after the last complete record and ``truncated`` describes the incomplete tail. Anything
    else malformed raises :class:`LogFormatError` naming the record. ``header`` is set once
    record 0 has been read; ``valid_length`` is the size of the complete records read so far.
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

    def _too_large(self, size: int) -> LogFormatError:
        return LogFormatError(
            self._index, "too-large", f"the record exceeds {self._limit()} bytes ({size}+ bytes)"
        )

    def _next_object(self) -> tuple[bool, Any]:
        """The next complete msgpack object, reading as needed; (False, None) at the end."""
        while True:
            try:
                return True, self._unpacker.unpack()
            except msgpack.OutOfData:
                pass
            except _DECODE_ERRORS as e:
                raise LogFormatError(
                    self._index, "bad-encoding", f"not valid msgpack: {e}"
                ) from None
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
        self.valid_length = end
        self._index += 1
        pending = self._pending
        while pending and self._pending_start + len(pending[0]) <= end:
            self._pending_start += len(pending.popleft())
        return record

    def _finish(self) -> None:
        self._finished = True
        leftover = self._fed - self.valid_length
        if leftover == 0:
            if self._index == 0:
                raise LogFormatError(0, "missing-header", "the log is empty")
            return
        tail_start = self.valid_length - self._pending_start
        first_byte = b"".join(self._pending)[tail_start]
        if first_byte not in _ARRAY_FIRST_BYTES:
            raise LogFormatError(
                self._index,
                "not-an-array",
                f"the log ends with {leftover} bytes that do not begin a stored record",
            )
        if self._index == 0:
            raise LogFormatError(
                0, "missing-header", f"the log ends inside its header record ({leftover} bytes)"
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


# --------------------------------------------------------------------------- verification


class LogVerifier:
    """Verifies records one at a time, in order: what :func:`verify_log` does, incrementally.

    A seat uses it on each record the host sends; the replayer and auditor use it while they
    stream a file. ``feed`` raises :class:`LogVerificationError` at the first bad record; the
    verifier must not be fed further records after that.
    """

    def __init__(self) -> None:
        self.seen: set[bytes] = set()
        self.last_hash = ZERO_HASH
        self.kinds: Counter[str] = Counter()
        self.present: Counter[int] = Counter()
        self.absent: Counter[int] = Counter()
        self.last_aseq: dict[int, int] = {}
        self.checkpoints: list[CheckpointInfo] = []
        self.header: Header | None = None
        self._keys: tuple[Ed25519PublicKey, ...] = ()
        self.seat_keys: list[bytes] = []  # each seat's current key (raw)
        self._host = 0
        self._table = b""

    @property
    def records(self) -> int:
        return len(self.seen)

    def set_header(self, header: Header) -> None:
        self.header = header
        self._keys = header.verifying_keys
        self.seat_keys = [seat.key for seat in header.seats]
        self._host = header.host
        self._table = header.table

    def feed(self, record: StoredRecord) -> None:
        """Verify ``record`` (the next one in the log); raise LogVerificationError if it fails."""
        if self.header is None:
            raise LogFormatError(record.index, "missing-header", "no header before this record")
        n = record.index
        fields = record.fields
        keys, host, table, seen = self._keys, self._host, self._table, self.seen
        try:
            keys[host].verify(record.host_sig, _RECORD_PREFIX + record.body)
        except InvalidSignature:
            raise LogVerificationError(
                n, "bad-host-signature", "the host's signature on the record does not verify", host
            ) from None
        if fields["seq"] != n:
            raise LogVerificationError(
                n, "bad-seq", f"record {n} carries seq {fields['seq']}", host
            )
        if fields["prev"] != self.last_hash:
            raise LogVerificationError(
                n, "bad-prev", "'prev' is not the hash of the previous record", host
            )
        priv = fields.get("priv")
        if priv is not None:
            private = record.private
            if not private.keys() <= priv.keys():
                extra = sorted(private.keys() - priv.keys())
                raise LogVerificationError(
                    n, "bad-private", f"private payloads for seats {extra} have no hash", host
                )
            for seat, digest in priv.items():
                payload = private.get(seat)
                if payload is None:
                    self.absent[seat] += 1
                elif hashlib.sha256(payload).digest() != digest:
                    raise LogVerificationError(
                        n,
                        "bad-private",
                        f"seat {seat}'s private payload does not match its hash",
                        host,
                    )
                else:
                    self.present[seat] += 1
        elif record.private:
            raise LogVerificationError(
                n, "bad-private", "private payloads in a record without 'priv'", host
            )
        action = record.action
        if action is not None:
            author = action["seat"]
            try:
                keys[author].verify(fields["asig"], _ACTION_PREFIX + fields["act"])
            except InvalidSignature:
                raise LogVerificationError(
                    n,
                    "bad-author-signature",
                    f"seat {author}'s signature on its action does not verify",
                    author,
                ) from None
            if action["table"] != table:
                raise LogVerificationError(
                    n, "wrong-table", f"seat {author}'s action names another table", author
                )
            expected = self.last_aseq.get(author, -1) + 1
            if action["aseq"] != expected:
                raise LogVerificationError(
                    n,
                    "bad-aseq",
                    f"seat {author}'s action has aseq {action['aseq']}, expected {expected}",
                    author,
                )
            self.last_aseq[author] = expected
            if action["head"] not in seen:
                raise LogVerificationError(
                    n,
                    "unknown-head",
                    f"seat {author}'s action names a head that is no earlier record",
                    author,
                )
        checkpoint = record.checkpoint
        if checkpoint is not None:
            if checkpoint["table"] != table:
                raise LogVerificationError(
                    n, "wrong-table", "the checkpoint names another table", host
                )
            if checkpoint["head"] not in seen:
                raise LogVerificationError(
                    n, "unknown-head", "the checkpoint names a head that is no earlier record", host
                )
            signed = _CHECKPOINT_PREFIX + fields["msg"]
            sigs: dict[int, bytes] = fields["sigs"]
            for seat, signature in sigs.items():
                try:
                    keys[seat].verify(signature, signed)
                except InvalidSignature:
                    raise LogVerificationError(
                        n,
                        "bad-checkpoint-signature",
                        f"seat {seat}'s checkpoint signature does not verify",
                        seat,
                    ) from None
            self.checkpoints.append(
                CheckpointInfo(n, checkpoint["hand"], checkpoint["head"], frozenset(sigs))
            )
        rekey = fields.get("rekey")
        if rekey is not None:
            # From this record on, the seat's messages are signed by the new key (a bot standing
            # in for a dropped player, or the player reclaiming the seat).
            new_keys = list(self._keys)
            new_keys[rekey["seat"]] = Ed25519PublicKey.from_public_bytes(rekey["key"])
            self._keys = tuple(new_keys)
            self.seat_keys[rekey["seat"]] = rekey["key"]
        self.kinds[fields["kind"]] += 1
        self.last_hash = record.hash
        seen.add(record.hash)

    def report(self, stream: RecordStream) -> VerificationReport:
        if self.header is None:
            raise LogFormatError(0, "missing-header", "the log is empty")
        return VerificationReport(
            header=self.header,
            records=len(self.seen),
            last_hash=self.last_hash,
            valid_length=stream.valid_length,
            truncated=stream.truncated,
            kinds=dict(self.kinds),
            private_present=dict(self.present),
            private_absent=dict(self.absent),
            last_aseq=dict(self.last_aseq),
            checkpoints=tuple(self.checkpoints),
        )


def iter_verified(
    source: LogSource,
    *,
    max_record_size: int = MAX_RECORD_SIZE,
    read_size: int = READ_SIZE,
) -> Iterator[tuple[StoredRecord, LogVerifier]]:
    """Stream the records of a log, each verified before it is yielded (with the verifier)."""
    stream = RecordStream(source, max_record_size=max_record_size, read_size=read_size)
    verifier = LogVerifier()
    for record in stream:
        if verifier.header is None:
            verifier.set_header(cast(Header, stream.header))
        verifier.feed(record)
        yield record, verifier


def verify_log(
    source: LogSource,
    *,
    max_record_size: int = MAX_RECORD_SIZE,
    read_size: int = READ_SIZE,
) -> VerificationReport:
    """Verify a whole log, streaming, and report on it.

    Raises :class:`LogFormatError` or :class:`LogVerificationError` (both :class:`LogError`) at
    the first record that fails. A truncated final record is reported, not raised.
    """
    stream = RecordStream(source, max_record_size=max_record_size, read_size=read_size)
    verifier = LogVerifier()
    for record in stream:
        if verifier.header is None:
            verifier.set_header(cast(Header, stream.header))
        verifier.feed(record)
    return verifier.report(stream)


# --------------------------------------------------------------------------- redaction


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


# --------------------------------------------------------------------------- writing


def open_log_for_writing(
    path: str | os.PathLike[str], mode: int = 0o600, *, resume: bool = False
) -> BinaryIO:
    """Open a log file for a writer.

    A new log is created exclusively (never over an existing file, never through a symlink) with
    exactly ``mode``, whatever the umask. ``resume=True`` opens an existing log for reading and
    appending, for :meth:`LogWriter.resume`.
    """
    if resume:
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
        return cast(BinaryIO, os.fdopen(fd, "a+b"))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        raise
    fsync_directory(os.path.dirname(os.path.abspath(path)))
    return cast(BinaryIO, os.fdopen(fd, "wb"))


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """Make a new file's directory entry durable (best effort: not every platform allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(file: BinaryIO, data: bytes) -> None:
    view = memoryview(data)
    written = 0
    while written < len(data):
        count = file.write(view[written:])
        if not count:
            raise OSError(f"short write to the log ({written} of {len(data)} bytes)")
        written += count


class LogWriter:
    """The host's side of a log: build, sign and durably append records.

    Every record is written, flushed and (with ``fsync``, when the file has a descriptor) synced
    to disk before :meth:`write_header` / :meth:`append` returns, so the host can journal a record
    before sending it to anyone. A refused record (:class:`ValueError`) leaves the log unchanged.
    If a write fails the writer refuses any further record (:class:`LogWriterError`): resume from
    the file instead.
    """

    def __init__(
        self,
        file: BinaryIO,
        host_identity: Identity,
        *,
        fsync: bool = True,
        max_record_size: int = MAX_RECORD_SIZE,
    ) -> None:
        self._file = file
        self._identity = host_identity
        self._fsync = fsync
        self._max_record_size = max_record_size
        self._header: Header | None = None
        self._next_seq = 0
        self._head = ZERO_HASH
        self._failure: str | None = None
        #: The verification report of the log this writer resumed, if it did.
        self.resumed_from: VerificationReport | None = None

    @property
    def header(self) -> Header | None:
        return self._header

    @property
    def next_seq(self) -> int:
        """The seq the next record will carry (the number of records written)."""
        return self._next_seq

    @property
    def head(self) -> bytes:
        """The hash of the last record written (32 zero bytes before the header)."""
        return self._head

    @classmethod
    def resume(
        cls,
        file: BinaryIO,
        host_identity: Identity,
        *,
        fsync: bool = True,
        max_record_size: int = MAX_RECORD_SIZE,
    ) -> LogWriter:
        """Continue an existing log (a host restarting after a crash).

        The whole log is verified first. An incomplete final record is cut off (it was never
        acknowledged, since nothing is sent before it is on disk); ``resumed_from`` reports it.
        ``file`` must be readable, seekable and writable at its end (``open_log_for_writing(path,
        resume=True)``).
        """
        file.seek(0)
        report = verify_log(file, max_record_size=max_record_size)
        if report.header.host_key != host_identity.public_key:
            raise ValueError("this identity is not the log's host: its key does not sign the log")
        writer = cls(file, host_identity, fsync=fsync, max_record_size=max_record_size)
        if report.truncated is not None:
            file.truncate(report.valid_length)
            writer._sync()
        file.seek(report.valid_length)
        writer._header = report.header
        writer._next_seq = report.records
        writer._head = report.last_hash
        writer.resumed_from = report
        return writer

    def write_header(self, fields: Mapping[str, Any]) -> RecordInfo:
        """Write record 0. ``fields``: software, table, variant, rules, seats, host, deal,
        insecure, created and any further header fields; seq, prev, kind and format are filled in.
        """
        if self._next_seq != 0:
            raise LogWriterError("the header is already written")
        reserved = sorted(_HEADER_WRITER_FIELDS & fields.keys())
        if reserved:
            raise ValueError(f"the writer fills in {reserved} itself")
        body = _pack(
            {"seq": 0, "prev": ZERO_HASH, "kind": HEADER_KIND, "format": FORMAT_VERSION, **fields}
        )
        try:
            header = _parse_header(_decode_map(body, 0, "the header"))
        except LogFormatError as e:
            raise ValueError(f"refusing to write an invalid header: {e.reason}") from None
        if header.host_key != self._identity.public_key:
            raise ValueError("the host seat's key is not this writer's identity")
        info = self._write(0, HEADER_KIND, body, {}, min(MAX_HEADER_SIZE, self._max_record_size))
        self._header = header
        return info

    def append(
        self, kind: str, fields: Mapping[str, Any], private: Mapping[int, bytes] | None = None
    ) -> RecordInfo:
        """Write the next record: ``kind`` with ``fields`` (which may include ``act``/``asig``,
        or ``msg``/``sigs`` for a checkpoint) and optional per-seat private payloads, which the
        caller must already have salted (see docs/log-format.md).
        """
        header = self._header
        if header is None:
            raise LogWriterError("write the header first")
        reserved = sorted(_WRITER_FIELDS & fields.keys())
        if reserved:
            raise ValueError(f"the writer fills in {reserved} itself")
        payloads: dict[int, bytes] = {}
        for seat, payload in sorted((private or {}).items()):
            if type(seat) is not int or not 0 <= seat < len(header.seats):
                raise ValueError(f"private payload for {seat!r}, which is not a seat")
            if not isinstance(payload, bytes | bytearray | memoryview):
                raise ValueError(f"seat {seat}'s private payload is not bytes")
            payloads[seat] = bytes(payload)
        seq = self._next_seq
        body_fields: dict[str, Any] = {"seq": seq, "prev": self._head, "kind": kind, **fields}
        if payloads:
            body_fields["priv"] = {seat: record_hash(data) for seat, data in payloads.items()}
        body = _pack(body_fields)
        try:
            _check_record(_decode_map(body, seq, "the record body"), seq, header)
        except LogFormatError as e:
            raise ValueError(f"refusing to write an invalid record: {e.reason}") from None
        return self._write(seq, kind, body, payloads, self._max_record_size)

    def _write(
        self, seq: int, kind: str, body: bytes, payloads: dict[int, bytes], limit: int
    ) -> RecordInfo:
        if self._failure is not None:
            raise LogWriterError(f"an earlier write failed ({self._failure})")
        signature = self._identity.sign(RECORD_SIGNATURE_KIND, body)
        stored = _pack([body, signature, payloads])
        if len(stored) > limit:
            raise ValueError(f"the record is {len(stored)} bytes, more than {limit}")
        try:
            _write_all(self._file, stored)
            self._sync()
        except BaseException as e:
            self._failure = repr(e)
            raise
        digest = record_hash(body)
        self._head = digest
        self._next_seq = seq + 1
        return RecordInfo(seq=seq, kind=kind, hash=digest, body=body, stored=stored)

    def _sync(self) -> None:
        self._file.flush()
        if not self._fsync:
            return
        try:
            fd = self._file.fileno()
        except (AttributeError, OSError, ValueError):
            return  # an in-memory file: flushing is all there is
        os.fsync(fd)
