"""The ``.cnlog`` format 1: limits, errors, values, schemas and the parsing of one record.

A log is a plain concatenation of msgpack objects, one per record. Each stored record is
``[body: bin, host_sig: bin(64), private: map{seat: bin}]``. The ``body`` bin holds the exact bytes
of a msgpack map; those bytes, never a re-encoding of them, are hashed (SHA-256, the record hash)
and signed by the host (signature kind ``log-record``). Each body names the hash of the previous
body, so the records form a chain rooted in the header (record 0). ``docs/log-format.md`` is the
complete specification.

This module checks structure: every body is decoded (plain msgpack only, no repeated keys) and
validated against a schema before use. It is pure: no I/O, no signatures checked (that is
:mod:`.verify`). The names with a leading underscore that the sibling modules import
(``_pack``, ``_unpack``, ``_decode_map``, ``_parse_header``, ``_check_record``, ``_build_record``,
...) are shared inside :mod:`canasta_net.log` only.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from typing import Any, Final, cast

import msgpack
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from canasta_net.identity import PUBLIC_KEY_SIZE, SIGNATURE_SIZE
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
)

from .scan import first_problem

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
    "RECORD_SIGNATURE_KIND",
    "SEAT_EVENTS",
    "SEAT_EVENT_KIND",
    "SEAT_KEY_KIND",
    "SUPPORTED_FORMATS",
    "TABLE_ID_SIZE",
    "ZERO_HASH",
    "CheckpointInfo",
    "Header",
    "LogError",
    "LogFormatError",
    "LogVerificationError",
    "RecordInfo",
    "SeatInfo",
    "StoredRecord",
    "Truncation",
    "VerificationReport",
    "decode_log_map",
    "parse_header",
    "parse_stored_record",
    "record_hash",
]

#: The format the writer writes; a reader reads every format in SUPPORTED_FORMATS.
FORMAT_VERSION: Final = 2
#: Format 1 has no ``time``; format 2 adds the host's clock to every record after the header.
SUPPORTED_FORMATS: Final = frozenset({1, 2})
#: The first format whose records carry ``time`` (ms since the Unix epoch, the host's clock).
TIMED_FORMAT: Final = 2
#: The largest stored record (the whole outer array, payloads included), in bytes.
MAX_RECORD_SIZE: Final = 1 << 20
#: The largest stored header record, in bytes.
MAX_HEADER_SIZE: Final = 64 << 10
#: The most seats a header may list.
MAX_SEATS: Final = 8
#: The longest record kind, in characters.
MAX_KIND_LENGTH: Final = 64

HASH_SIZE: Final = 32
TABLE_ID_SIZE: Final = 16
ZERO_HASH: Final = bytes(HASH_SIZE)

HEADER_KIND: Final = "header"
CHECKPOINT_KIND: Final = "checkpoint"
SEAT_KEY_KIND: Final = "seat-key"
#: A connection event the host reports (its word only: nothing in the log proves it).
SEAT_EVENT_KIND: Final = "seat-event"
SEAT_EVENTS: Final = ("connected", "lost", "held", "stand-in", "reclaimed", "resumed")
MAX_EVENT_REASON: Final = 200
RECORD_SIGNATURE_KIND: Final = "log-record"
ACTION_SIGNATURE_KIND: Final = "seat-action"
CHECKPOINT_SIGNATURE_KIND: Final = "checkpoint"

# The header may carry none of the per-record extras.
_HEADER_FORBIDDEN: Final = frozenset({"priv", "act", "asig", "msg", "sigs", "rekey"})

_PLAIN_SCALARS: Final = frozenset({str, bytes, int, float, bool, type(None)})
_STR_ONLY: Final = frozenset({str})
_DECODE_ERRORS: Final = (ValueError, TypeError, OverflowError)


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
    ``duplicate-header``, ``too-large``; for a tail that a crash cannot have left, ``bad-tail``
    and ``hidden-records`` (docs/log-format.md, "Truncation").
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
    ``bad-checkpoint-signature``, ``bad-time``.
    """

    def __init__(self, record_no: int, code: str, reason: str, seat: int | None = None) -> None:
        super().__init__(record_no, code, reason)
        self.seat = seat


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
    #: ``fields["kind"]`` (checked when the record was read), kept as an attribute: every step
    #: of a seat's record path asks for it, and a property is a call each time
    kind: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", self.fields["kind"])

    @property
    def seq(self) -> int:
        seq: int = self.fields["seq"]
        return seq


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
    #: Format 2: the ``time`` of the last record (ms, the host's clock); None in format 1.
    last_time: int | None = None

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
    if type(value) is not dict and type(value) is not list:
        return type(value) in _PLAIN_SCALARS
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            groups: tuple[Any, ...] = (item.keys(), item.values())
        else:
            groups = (item,)
        for group in groups:
            # a record's maps hold scalars mostly: their types all at once, at C speed; a
            # group holding anything else is walked item by item
            if _PLAIN_SCALARS.issuperset(map(type, group)):
                continue
            for child in group:
                kind = type(child)
                if kind is dict or kind is list:
                    stack.append(child)
                elif kind not in _PLAIN_SCALARS:
                    return False
    return True


def _not_msgpack(data: bytes, record_no: int, what: str) -> LogFormatError:
    """The error for bytes the unpacker refused, naming their first bad byte if a walk finds it."""
    bad = first_problem(data, what, MAX_RECORD_SIZE)
    if bad is None:
        return LogFormatError(record_no, "bad-encoding", f"{what} is not valid msgpack")
    reason = f"{what} is not valid msgpack: at its byte {bad.offset}, {bad.what}"
    return LogFormatError(record_no, bad.code, reason)


def _decode_map(data: bytes, record_no: int, what: str) -> dict[str, Any]:
    """Decode ``data`` as a msgpack map with str keys and plain values."""
    try:
        value = _unpack(data)
    except _DECODE_ERRORS:
        raise _not_msgpack(data, record_no, what) from None
    if type(value) is not dict:
        raise LogFormatError(record_no, "bad-field", f"{what} is not a msgpack map")
    if not _STR_ONLY.issuperset(map(type, value)):
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
        schema.check(value)
    except SchemaError as e:
        raise _bad(record_no, str(e.within(name))) from None
    return value


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
_TIME: Final = Map({"time": _COUNT})  # format 2: every record after the header
_SIGNED: Final = Map({"act": Bytes(), "asig": Bytes(size=SIGNATURE_SIZE)})
_CHECKPOINT_MSG: Final = Map(
    {"table": _TABLE_ID, "hand": _COUNT, "head": _HASH, "result": Anything()}
)


@dataclass(frozen=True)
class _SeatSchemas:
    """The schemas that name seats, for a log of ``seats`` seats."""

    action: Map  # a decoded ``act``
    rekey: Map
    seat_event: Map
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
        seat_event=Map(
            {"seat": seat, "event": Text(32)},
            {"reason": Text(MAX_EVENT_REASON), "hold": _COUNT},
        ),
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
    if type(version) is not int or version not in SUPPORTED_FORMATS:
        raise LogFormatError(
            0,
            "bad-version",
            f"log format {version!r} is not supported (this reader reads formats "
            f"{', '.join(map(str, sorted(SUPPORTED_FORMATS)))})",
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
    keys = []
    for number, seat in enumerate(seats):
        try:
            keys.append(Ed25519PublicKey.from_public_bytes(seat.key))
        except ValueError:
            raise _bad(0, f"seat {number}'s key is not an Ed25519 public key") from None
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
        verifying_keys=tuple(keys),
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
    if kind == SEAT_EVENT_KIND:
        _check_seat_event(fields, record_no, schemas, action)
    if header.format >= TIMED_FORMAT:
        _checked(_TIME, fields, record_no, "body")
    checkpoint = None
    if kind == CHECKPOINT_KIND:
        _checked(schemas.checkpoint, fields, record_no, "body")
        checkpoint = _decode_map(fields["msg"], record_no, "the checkpoint message ('msg')")
        _checked(_CHECKPOINT_MSG, checkpoint, record_no, "msg")
    elif "msg" in fields or "sigs" in fields:
        raise _bad(record_no, f"fields 'msg' and 'sigs' belong to {CHECKPOINT_KIND!r} records only")
    return action, checkpoint


def _check_seat_event(
    fields: dict[str, Any],
    record_no: int,
    schemas: _SeatSchemas,
    action: dict[str, Any] | None,
) -> None:
    """A connection event: the host's word about a seat (``resumed``: about itself)."""
    _checked(schemas.seat_event, fields, record_no, "body")
    if fields["event"] not in SEAT_EVENTS:
        raise _bad(record_no, f"unknown seat event {fields['event']!r}")
    if action is not None:
        raise _bad(record_no, f"a {SEAT_EVENT_KIND!r} record is the host's alone")


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
    except _DECODE_ERRORS:
        raise _not_msgpack(data, record_no, "the stored record") from None
    return _build_record(obj, record_no, 0, len(data), header)


def parse_header(record: StoredRecord) -> Header:
    """The header of a log whose record 0 is ``record``."""
    return _parse_header(record.fields)
