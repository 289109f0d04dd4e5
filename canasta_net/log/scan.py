"""Where msgpack bytes break the log format's rules: the first bad byte, named for people.

The reader decodes records with msgpack's C unpacker, which can say that bytes are bad but not
where, nor in words a person disputing a game can use. This module walks the same bytes by hand
under the format's own rules (``docs/log-format.md``, "msgpack rules" and "Truncation"):

- on the incomplete tail a log ends with, to decide whether it could be what a crashed writer
  leaves (:func:`check_tail`), and whether complete host-signed records hide inside it
  (:func:`find_later_record`);
- on a record or a nested body the unpacker refused, to name its first bad byte
  (:func:`first_problem`).

Pure and iterative (nesting depth costs no Python stack); linear in the bytes it reads.
"""

from __future__ import annotations

import codecs
import re
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import msgpack
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from canasta_net.identity import SIGNATURE_SIZE, check_signature

__all__ = [
    "DECODE_BUDGET",
    "MAX_DEPTH",
    "BadBytes",
    "LaterRecord",
    "TailParts",
    "check_tail",
    "find_later_record",
    "first_problem",
    "scan_object",
    "whole_entries",
]

#: The deepest nesting of arrays and maps the reader decodes (msgpack's own limit).
MAX_DEPTH: Final = 1024
#: How many times its own length :func:`find_later_record` may decode of a tail.
DECODE_BUDGET: Final = 8

_EXT_TYPES: Final = frozenset({0xC7, 0xC8, 0xC9, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8})
_BIN_TYPES: Final = {0xC4: 1, 0xC5: 2, 0xC6: 4}  # type byte -> size of its length
_STR_TYPES: Final = {0xD9: 1, 0xDA: 2, 0xDB: 4}
_ARRAY_TYPES: Final = {0xDC: 2, 0xDD: 4}
_MAP_TYPES: Final = {0xDE: 2, 0xDF: 4}
# Fixed-size scalars: type byte -> total size including the type byte.
_FIXED: Final = {
    0xC0: 1,
    0xC2: 1,
    0xC3: 1,
    0xCA: 5,
    0xCB: 9,
    0xCC: 2,
    0xCD: 3,
    0xCE: 5,
    0xCF: 9,
    0xD0: 2,
    0xD1: 3,
    0xD2: 5,
    0xD3: 9,
}
_UINT_TYPES: Final = frozenset({0xCC, 0xCD, 0xCE, 0xCF})
# The first byte of a stored record: an array (fixarray, array 16, array 32).
_RECORD_START: Final = re.compile(rb"[\x93\xdc\xdd]")


class BadBytes(Exception):
    """The byte at ``offset`` breaks the format's rules: ``what`` says how, for people.

    ``code`` is the log error code it stands for: ``bad-encoding`` (not plain msgpack),
    ``too-large`` (a declared length past the record size limit), ``not-an-array`` or
    ``bad-field`` (a stored record's outer array or one of its three parts is of the wrong type).
    """

    def __init__(self, offset: int, code: str, what: str) -> None:
        super().__init__(f"at offset {offset}: {what}")
        self.offset = offset
        self.code = code
        self.what = what


def _hex(byte: int) -> str:
    return f"0x{byte:02x}"


class _Open:
    """An array or map still being read: how many items it lacks, and a map's keys so far."""

    __slots__ = ("keys", "remaining")

    def __init__(self, remaining: int, is_map: bool) -> None:
        self.remaining = remaining
        self.keys: set[Any] | None = set() if is_map else None


def _length(data: bytes, at: int, size: int) -> int | None:
    """The big-endian length of ``size`` bytes at ``at``, or None if the data ends first."""
    if at + size > len(data):
        return None
    return int.from_bytes(data[at : at + size], "big")


def _check_utf8(data: bytes, start: int, stop: int, complete: bool) -> None:
    """Refuse invalid UTF-8 in ``data[start:stop]`` (a str's bytes, all of them if
    ``complete``, else the ones the data holds: a sequence cut at the end is not an error)."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        decoder.decode(data[start:stop], final=complete)
    except UnicodeDecodeError as e:
        raise BadBytes(start + e.start, "bad-encoding", "a str holds invalid UTF-8") from None


def scan_object(
    data: bytes,
    start: int,
    limit: int,
    *,
    origin: int | None = None,
    within: str = "",
    within_end: int | None = None,
) -> int | None:
    """Walk the one msgpack object that begins at ``data[start]``.

    Return the offset just past it, or None if the data ends first (every byte up to there
    follows the rules). Raise :class:`BadBytes` at the first byte that breaks them: a type byte
    msgpack does not define, an ext type, invalid UTF-8 in a str, an array or map used as a map
    key, a repeated map key, nesting deeper than :data:`MAX_DEPTH`, or a length (of a bin, str,
    array or map) that would take the record past its size ``limit`` (``too-large``; the record
    begins at ``origin``, ``start`` by default). If the object lies ``within`` a bin (``"the
    body"``) that ends at ``within_end``, a length past that end is ``bad-encoding``, unless it
    also passes the limit.
    """
    limit_end = (start if origin is None else origin) + limit
    bound = limit_end if within_end is None else min(within_end, limit_end)

    def past(at: int, what: str, end: int) -> BadBytes:
        if end > limit_end:
            return BadBytes(
                at,
                "too-large",
                f"{what}, which would take the record past its limit of {limit} bytes",
            )
        return BadBytes(at, "bad-encoding", f"{what}, more than {within} holds")

    size = len(data)
    pos = start
    stack: list[_Open] = []
    owed = 0  # items the open containers still lack: each takes at least one more byte
    while True:
        if pos >= size:
            return None
        at = pos
        byte = data[pos]
        top = stack[-1] if stack else None
        is_key = top is not None and top.keys is not None and top.remaining % 2 == 0
        if top is not None:
            owed -= 1  # this item is no longer owed: it is being read
        count = -1  # items of an array or map that starts here
        if byte <= 0x7F or byte >= 0xE0:
            pos += 1
        elif byte in _FIXED:
            pos += _FIXED[byte]
        elif byte <= 0x8F:
            count, pos = 2 * (byte & 0x0F), pos + 1
        elif byte <= 0x9F:
            count, pos = byte & 0x0F, pos + 1
        elif byte <= 0xBF or byte in _STR_TYPES or byte in _BIN_TYPES:
            header = 1 if byte <= 0xBF else 1 + (_STR_TYPES.get(byte) or _BIN_TYPES[byte])
            declared = byte & 0x1F if byte <= 0xBF else _length(data, pos + 1, header - 1)
            if declared is None:
                return None
            length = declared
            content = pos + header
            what = "bin" if byte in _BIN_TYPES else "str"
            if content + length + owed > bound:
                raise past(at, f"a {what} declares {length} bytes", content + length + owed)
            if what == "str":
                _check_utf8(data, content, min(content + length, size), content + length <= size)
            pos = content + length
        elif byte in _ARRAY_TYPES or byte in _MAP_TYPES:
            is_map = byte in _MAP_TYPES
            header = 1 + (_MAP_TYPES.get(byte) or _ARRAY_TYPES[byte])
            items = _length(data, pos + 1, header - 1)
            if items is None:
                return None
            count, pos = (2 * items if is_map else items), pos + header
        elif byte in _EXT_TYPES:
            raise BadBytes(at, "bad-encoding", f"an ext type ({_hex(byte)}), which logs never use")
        else:  # 0xc1, the one type byte msgpack never uses
            raise BadBytes(at, "bad-encoding", f"the byte {_hex(byte)}, which msgpack never uses")
        if count >= 0:
            if is_key:
                raise BadBytes(at, "bad-encoding", "an array or map used as a map key")
            if pos + count + owed > bound:
                if byte in _MAP_TYPES or 0x80 <= byte <= 0x8F:
                    raise past(at, f"a map declares {count // 2} entries", pos + count + owed)
                raise past(at, f"an array declares {count} items", pos + count + owed)
            if count:
                if len(stack) >= MAX_DEPTH:
                    raise BadBytes(at, "bad-encoding", f"nesting deeper than {MAX_DEPTH} levels")
                stack.append(_Open(count, 0x80 <= byte <= 0x8F or byte in _MAP_TYPES))
                owed += count
                continue
        elif pos + owed > bound:
            raise past(at, f"a value of {pos - at} bytes", pos + owed)
        elif pos > size:
            return None
        elif is_key:
            assert top is not None and top.keys is not None
            key = msgpack.unpackb(data[at:pos], raw=False)
            if key in top.keys:
                raise BadBytes(at, "bad-encoding", "a map repeats a key")
            top.keys.add(key)
        # one item is complete: close every container it completes
        while stack:
            stack[-1].remaining -= 1
            if stack[-1].remaining:
                break
            stack.pop()
        if not stack:
            return pos


def first_problem(data: bytes, within: str, limit: int) -> BadBytes | None:
    """The first bad byte of ``data``, bytes that should hold exactly one msgpack object (``within``
    names them: "the body", "the action") inside a record of at most ``limit`` bytes; None if the
    walk finds none (the caller then words it generally)."""
    try:
        end = scan_object(data, 0, limit, within=within, within_end=len(data))
    except BadBytes as e:
        return e
    if end is None:
        return BadBytes(len(data), "bad-encoding", f"{within} ends inside a msgpack value")
    if end != len(data):
        return BadBytes(end, "bad-encoding", f"bytes follow the one msgpack value {within} holds")
    return None


# --------------------------------------------------------------------------- the tail


def _part_type(data: bytes, at: int, types: dict[int, int], what: str) -> int:
    if data[at] not in types:
        raise BadBytes(at, "bad-field", what)
    return types[data[at]]


@dataclass
class TailParts:
    """The parts of a cut-off record that its bytes hold whole, each with its offset in them:
    for the reader to check against the log (a whole body must be the next record's, a whole
    signature must verify, a whole payload must match its commitment)."""

    body: tuple[int, bytes] | None = None
    body_prefix: tuple[int, bytes] | None = None  # the start of a body cut off
    signature: tuple[int, bytes] | None = None
    private_at: int | None = None  # where the private map begins
    private_count: int | None = None  # how many payloads it declares
    # (offset of the entry, seat, payload) for each whole payload
    payloads: list[tuple[int, int, bytes]] = field(default_factory=list)


def check_tail(data: bytes, limit: int) -> TailParts:
    """Accept ``data`` only if it could be the start of one stored record that a writer was
    cut off while writing: an array of 3 (body bin, 64-byte signature bin, private map of seat
    numbers to bins) whose bytes, as far as they go, follow the format's msgpack rules, body
    included, and declare nothing that would take the record past ``limit`` bytes. Raise
    :class:`BadBytes` at the first byte that rules this out; return the parts held whole.
    ``data`` is not empty and shorter than a whole record."""
    parts = TailParts()
    size = len(data)
    if 0x90 <= data[0] <= 0x9F and data[0] != 0x93:
        raise BadBytes(
            0, "not-an-array", f"a stored record is an array of 3, not of {data[0] & 0x0F}"
        )
    if data[0] == 0x93:
        pos = 1
    elif data[0] in (0xDC, 0xDD):
        header = 3 if data[0] == 0xDC else 5
        count = _length(data, 1, header - 1)
        if count is None:
            return parts
        if count != 3:
            raise BadBytes(0, "not-an-array", f"a stored record is an array of 3, not of {count}")
        pos = header
    else:
        raise BadBytes(
            0, "not-an-array", f"a stored record begins with an array, not {_hex(data[0])}"
        )
    # the body: a bin holding one msgpack map
    if pos >= size:
        return parts
    header = 1 + _part_type(data, pos, _BIN_TYPES, "the record's body is not a bin")
    length = _length(data, pos + 1, header - 1)
    if length is None:
        return parts
    body = pos + header
    # the body, a 64-byte signature (66 bytes with its header) and a private map (1 byte at least)
    if body + length + 2 + SIGNATURE_SIZE + 1 > limit:
        raise BadBytes(
            pos,
            "too-large",
            f"the body declares {length} bytes, which would take the record past its limit of "
            f"{limit} bytes",
        )
    if body < size and not (0x80 <= data[body] <= 0x8F or data[body] in _MAP_TYPES):
        raise BadBytes(body, "bad-field", "the record's body is not a msgpack map")
    body_end = body + length
    try:
        end = scan_object(
            data[body : min(body_end, size)],
            0,
            limit,
            origin=-body,
            within="the body",
            within_end=length,
        )
    except BadBytes as e:
        raise BadBytes(body + e.offset, e.code, e.what) from None
    if end is not None and end < min(body_end, size) - body:
        raise BadBytes(body + end, "bad-encoding", "bytes follow the body's msgpack map")
    if body_end > size:
        parts.body_prefix = (body, data[body:])
        return parts
    if end is None:
        raise BadBytes(body_end, "bad-encoding", "the body ends inside its msgpack map")
    parts.body = (body, data[body:body_end])
    # the host's signature: a bin of exactly 64 bytes
    pos = body_end
    if pos >= size:
        return parts
    header = 1 + _part_type(data, pos, _BIN_TYPES, "the host's signature is not a bin")
    length = _length(data, pos + 1, header - 1)
    if length is None:
        return parts
    if length != SIGNATURE_SIZE:
        raise BadBytes(
            pos, "bad-field", f"the host's signature declares {length} bytes, not {SIGNATURE_SIZE}"
        )
    if pos + header + length > size:
        return parts
    parts.signature = (pos, data[pos + header : pos + header + length])
    pos += header + length
    if pos >= size:
        return parts
    # the private map: seat numbers to bins
    if not (0x80 <= data[pos] <= 0x8F or data[pos] in _MAP_TYPES):
        raise BadBytes(pos, "bad-field", "the record's private payloads are not a map")
    end = scan_object(data, pos, limit, origin=0)
    _private_entries(data, pos, parts)
    if end is not None:  # the unpacker found the record incomplete; the walk disagrees
        raise BadBytes(end, "bad-encoding", "the record is complete here yet was read as cut short")
    return parts


def whole_entries(body: bytes) -> Iterator[tuple[int, Any, Any]]:
    """The (offset, key, value) of each entry at the top of the msgpack map that ``body`` holds
    or begins, as far as the entries are whole (``body`` has passed :func:`scan_object`)."""
    if not body:
        return
    pos = 1 if body[0] <= 0x8F else 1 + _MAP_TYPES[body[0]]
    while True:
        key_end = scan_object(body, pos, sys.maxsize)
        value_end = None if key_end is None else scan_object(body, key_end, sys.maxsize)
        if key_end is None or value_end is None:
            return
        key = msgpack.unpackb(body[pos:key_end], raw=False)
        value = msgpack.unpackb(body[key_end:value_end], raw=False, strict_map_key=False)
        yield pos, key, value
        pos = value_end


def _private_entries(data: bytes, pos: int, parts: TailParts) -> None:
    """In a private map already walked, each key is a seat number and each value a bin; note
    the map's size and its whole entries in ``parts``."""
    byte = data[pos]
    parts.private_at = pos
    if byte <= 0x8F:
        parts.private_count, pos = byte & 0x0F, pos + 1
    else:
        parts.private_count = _length(data, pos + 1, _MAP_TYPES[byte])
        pos += 1 + _MAP_TYPES[byte]
    while pos < len(data):
        entry = pos
        key = data[pos]
        if not (key <= 0x7F or key in _UINT_TYPES):
            raise BadBytes(pos, "bad-field", "a private payload's key is not a seat number")
        size = 1 if key <= 0x7F else _FIXED[key]
        seat = key if key <= 0x7F else _length(data, pos + 1, size - 1)
        pos += size
        if pos >= len(data) or seat is None:
            return
        if data[pos] not in _BIN_TYPES:
            raise BadBytes(pos, "bad-field", "a private payload is not a bin")
        found = _bin_at(data, pos)
        if found is None:
            return
        parts.payloads.append((entry, seat, data[found[0] : found[1]]))
        pos = found[1]


@dataclass(frozen=True)
class LaterRecord:
    """A record the host signed, found whole inside bytes that were read as one cut-off record."""

    offset: int  # from the start of the bytes searched
    seq: int


def _signed_body_at(data: bytes, at: int) -> tuple[bytes, bytes] | None:
    """The body and host signature of a stored record beginning at ``at``, if both are whole."""
    pos = at + 1
    if data[at] != 0x93:
        header = 3 if data[at] == 0xDC else 5
        if _length(data, at + 1, header - 1) != 3:
            return None
        pos = at + header
    body = _bin_at(data, pos)
    if body is None:
        return None
    signature = _bin_at(data, body[1])
    if signature is None or signature[1] - signature[0] != SIGNATURE_SIZE:
        return None
    return data[body[0] : body[1]], data[signature[0] : signature[1]]


def _bin_at(data: bytes, pos: int) -> tuple[int, int] | None:
    """Where the content of a whole bin beginning at ``pos`` starts and ends, if it is one."""
    if pos >= len(data) or data[pos] not in _BIN_TYPES:
        return None
    size = _BIN_TYPES[data[pos]]
    length = _length(data, pos + 1, size)
    if length is None or pos + 1 + size + length > len(data):
        return None
    return pos + 1 + size, pos + 1 + size + length


def find_later_record(
    data: bytes, after_seq: int, host_key: Ed25519PublicKey, signing_prefix: bytes
) -> LaterRecord | None:
    """The first record inside ``data`` (past its first byte) whose body and host signature are
    whole, whose signature verifies under ``host_key`` and whose ``seq`` is over ``after_seq``.

    A writer cut off while writing record ``after_seq`` cannot have left one (it signs each record
    before the next, and a seat's own bytes inside a record cannot carry the host's signature on a
    later one), so finding one means that the bytes were damaged, not cut off.

    Bodies that overlap could make the search quadratic, so the bytes it decodes are bounded
    (:data:`DECODE_BUDGET` times the data's length): bytes that hold more record-shaped pieces
    than that are no crash's either, and :class:`BadBytes` (``bad-tail``) says so.
    """
    budget = DECODE_BUDGET * len(data)
    for match in _RECORD_START.finditer(data, 1):
        found = _signed_body_at(data, match.start())
        if found is None:
            continue
        body, signature = found
        budget -= len(body)
        if budget < 0:
            raise BadBytes(
                match.start(),
                "bad-tail",
                "the bytes hold more pieces shaped like records than one cut-off record could",
            )
        try:
            fields = msgpack.unpackb(body, raw=False, strict_map_key=False)
        except (ValueError, TypeError, OverflowError, struct.error):
            continue
        seq = fields.get("seq") if type(fields) is dict else None
        if type(seq) is not int or seq <= after_seq:
            continue
        try:
            check_signature(host_key, signature, signing_prefix + body)
        except InvalidSignature:
            continue
        return LaterRecord(match.start(), seq)
    return None
