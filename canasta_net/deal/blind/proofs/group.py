"""secp256k1 for the proof-carrying blind deal (``docs/blind-proofs.md``, section 2).

Zero-knowledge proofs need point *addition* (a Schnorr check is ``[s]G == T + [c]A``); the blind
deal's version 1 group, P-256 through ``cryptography``'s ECDH API, offers only x-only scalar
multiplication. This module is secp256k1 through ``coincurve`` (libsecp256k1, shipped inside the
wheel): a prime-order group (cofactor 1) with multiplication, addition and base-point
multiplication.

Timing: libsecp256k1's base-point multiplication (:func:`base`) and its ECDH multiplication are
constant-time; its multiplication of any point (``secp256k1_ec_pubkey_tweak_mul``, :func:`mul`)
is not in this version: it takes about 10 µs for a multiplier of 1, 19 µs for one below 2⁶⁴ and
45 µs for a random one. :func:`mul` serves public multipliers (every check), one-use random
nonces (each proof's) and stage 2's per-position exponents ``k_j·k⁻¹`` (each used for one
multiplication, independent of the others: only their times' sum over a stage is seen, which says
next to nothing of any one of them); :func:`mul_secret` multiplies by a
secret through the ECDH routine, in constant time: a seat's deck key, which multiplies every
entry of its stage 1 (a stage's total time would otherwise say something of that one key).

A point is sent as its 33-byte SEC1 compressed encoding (``0x02``/``0x03`` || x); the point at
infinity has none, so a decoded point is always a group element other than the identity. A scalar
is an integer mod ``Q``, sent as 32 bytes big-endian. Points are held as libsecp256k1's own
``secp256k1_pubkey`` (decoding costs a square root: a proof decodes each point once).
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Final, TypeAlias

from coincurve.context import GLOBAL_CONTEXT

from .... import memo
from .._encoding import field, u32

# coincurve's own build of libsecp256k1 (no type stubs), called directly: every operation here is
# one C call on libsecp256k1's 64-byte ``secp256k1_pubkey`` (coincurve's ``PublicKey`` wrapper
# costs a few microseconds more a call, its parsing a second check of the encoding: about a tenth
# of a proof's check)
_libsecp256k1: Any = importlib.import_module("coincurve._libsecp256k1")
_ffi, _lib = _libsecp256k1.ffi, _libsecp256k1.lib
_CTX: Final = GLOBAL_CONTEXT.ctx
_COMPRESSED: Final = _lib.SECP256K1_EC_COMPRESSED

P: Final = 2**256 - 2**32 - 977
"""The secp256k1 field prime; the curve is y² = x³ + 7 over GF(P)."""
Q: Final = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
"""The prime order of the group."""
POINT_SIZE: Final = 33
SCALAR_SIZE: Final = 32
G_BYTES: Final = bytes.fromhex("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
_MAX_TRIES: Final = 1 << 16

Point: TypeAlias = Any
"""A group element other than the identity: libsecp256k1's ``secp256k1_pubkey *`` (a cffi
object), never changed once made (every operation makes a new one). Only this module looks
inside."""
Random = Callable[[int], bytes]

_POINT_TYPE: Final = _ffi.typeof("secp256k1_pubkey *")


def _memo_key(value: Any) -> bytes:
    """A point as the tests' memo keys it: libsecp256k1's 64 bytes of it, which it stores
    normalised (one point, one value)."""
    if _ffi.typeof(value) is not _POINT_TYPE:
        raise memo.Unkeyable(_ffi.typeof(value).cname)
    return bytes(_ffi.buffer(value))


memo.key_type(type(_ffi.new("secp256k1_pubkey *")), _memo_key)


class GroupError(ValueError):
    """A point that does not decode, or an operation whose result would be the identity."""


def _parse(data: bytes) -> Point | None:
    """libsecp256k1's parse of a SEC1 encoding (a compressed one costs a square root); None if
    it is no point of the curve."""
    point = _ffi.new("secp256k1_pubkey *")
    if not _lib.secp256k1_ec_pubkey_parse(_CTX, point, data, len(data)):
        return None
    return point


def decode(data: bytes) -> Point:
    """A point from its 33-byte compressed encoding; :class:`GroupError` if it is none.

    Decoding costs a square root (about a fifth of a multiplication), and a deck's entries are
    decoded by everyone who checks a stage and again by the next stage's prover and checkers:
    recently decoded points are kept (a point is immutable: every operation makes a new one)."""
    key = bytes(data)
    known = _decoded.get(key)
    if known is not None:
        return known
    if len(key) != POINT_SIZE or key[0] not in (2, 3):
        raise GroupError("a point is 33 bytes: 0x02 or 0x03, then x")
    if int.from_bytes(key[1:], "big") >= P:
        raise GroupError("a point's x is not below the field prime")
    point = _parse(key)
    if point is None:
        raise GroupError("not a point of secp256k1")
    if len(_decoded) >= _DECODED_MAX:
        _decoded.clear()
    _decoded[key] = point
    return point


# encoding -> decoded point, for the last few decks seen (about ten decks of 162 cards)
_decoded: dict[bytes, Point] = {}
_DECODED_MAX: Final = 4096


def decode_all(entries: Sequence[bytes]) -> list[Point]:
    return [decode(e) for e in entries]


def encode(point: Point) -> bytes:
    out = _ffi.new("unsigned char[33]")
    size = _ffi.new("size_t *", POINT_SIZE)
    _lib.secp256k1_ec_pubkey_serialize(_CTX, out, size, point, _COMPRESSED)
    return bytes(_ffi.buffer(out, POINT_SIZE))


G: Final = decode(G_BYTES)
"""The standard generator."""


def scalar_bytes(s: int) -> bytes:
    """A scalar mod Q as 32 bytes big-endian."""
    if not 0 <= s < Q:
        raise GroupError("a scalar is an integer in 0 .. Q-1")
    return s.to_bytes(SCALAR_SIZE, "big")


def scalar_from(data: bytes) -> int:
    if len(data) != SCALAR_SIZE:
        raise GroupError(f"a scalar is {SCALAR_SIZE} bytes")
    s = int.from_bytes(data, "big")
    if s >= Q:
        raise GroupError("a scalar is below the group order")
    return s


def mul(point: Point, s: int) -> Point:
    """``[s]point``; :class:`GroupError` if ``s ≡ 0`` (the identity has no encoding)."""
    s %= Q
    if s == 0:
        raise GroupError("multiplication by zero")
    product = _ffi.new("secp256k1_pubkey *", point[0])
    _lib.secp256k1_ec_pubkey_tweak_mul(_CTX, product, s.to_bytes(SCALAR_SIZE, "big"))
    return product


def mul_secret(point: Point, s: int) -> Point:
    """``[s]point`` in time independent of ``s`` (libsecp256k1's ECDH multiplication, its hash
    replaced by a copy of the point); :class:`GroupError` if ``s ≡ 0``."""
    s %= Q
    if s == 0:
        raise GroupError("multiplication by zero")
    out = _ffi.new("unsigned char[65]")
    done = _lib.secp256k1_ecdh(
        _CTX,
        out,
        point,
        s.to_bytes(SCALAR_SIZE, "big"),
        _copy_point_c,
        _ffi.NULL,
    )
    product = _parse(bytes(out)) if done == 1 else None
    if product is None:  # s is below Q and not 0, and the point is on the curve: never
        raise GroupError("the constant-time multiplication failed")
    return product


def _copy_point(out: Any, x32: Any, y32: Any, _data: Any) -> int:
    """ECDH's "hash": the product itself, uncompressed (0x04, x, y: read back without the
    square root a compressed point costs)."""
    out[0] = 4
    _ffi.memmove(out + 1, x32, 32)
    _ffi.memmove(out + 33, y32, 32)
    return 1


# libsecp256k1's ECDH with the hash above
_copy_point_c = _ffi.callback(
    "int(unsigned char *, const unsigned char *, const unsigned char *, void *)", _copy_point
)


def base(s: int) -> Point:
    """``[s]G``."""
    s %= Q
    if s == 0:
        raise GroupError("multiplication by zero")
    point = _ffi.new("secp256k1_pubkey *")
    _lib.secp256k1_ec_pubkey_create(_CTX, point, s.to_bytes(SCALAR_SIZE, "big"))
    return point


def add(points: Sequence[Point]) -> Point:
    """The sum of ``points``; :class:`GroupError` if it is the identity."""
    if len(points) == 1:
        return points[0]
    total = _ffi.new("secp256k1_pubkey *")
    if not _lib.secp256k1_ec_pubkey_combine(_CTX, total, list(points), len(points)):
        raise GroupError("the sum is the identity")
    return total


def neg(point: Point) -> Point:
    """``-point``: the same x, the other y."""
    negated = _ffi.new("secp256k1_pubkey *", point[0])
    _lib.secp256k1_ec_pubkey_negate(_CTX, negated)
    return negated


def hash_to_scalar(domain: bytes, *parts: bytes) -> int:
    """``SHA512(field(domain) || field(part) || ...)`` read big-endian, mod Q (bias 2⁻²⁵⁶)."""
    h = hashlib.sha512(field(domain))
    for part in parts:
        h.update(field(part))
    return int.from_bytes(h.digest(), "big") % Q


def hash_to_point(domain: bytes, label: bytes) -> bytes:
    """A point nobody knows the logarithm of (try-and-increment), as 33 bytes.

    For c = 0, 1, ...: ``x = SHA256(field(domain) || field(label) || field(u32(c)))``; the first
    x below P with x³ + 7 a square mod P gives the point ``0x02 || x``.
    """
    prefix = field(domain) + field(label)
    for counter in range(_MAX_TRIES):
        digest = hashlib.sha256(prefix + field(u32(counter))).digest()
        # x³ + 7 is a square mod P exactly when libsecp256k1 decompresses 0x02 || x (in C: a
        # tenth of the time of Euler's criterion in Python)
        if int.from_bytes(digest, "big") < P and _parse(b"\x02" + digest) is not None:
            return b"\x02" + digest
    raise AssertionError("hash-to-point found no point")  # probability 2**-65536


@lru_cache(maxsize=8)
def generators(domain: bytes, count: int) -> tuple[Point, ...]:
    """The independent generators ``h_0 .. h_{count-1}`` of ``docs/blind-proofs.md``."""
    return tuple(decode(hash_to_point(domain, b"h" + str(j).encode())) for j in range(count))


def random_scalar(rng: Random = os.urandom) -> int:
    """A uniform nonzero scalar from 64 random bytes (bias 2⁻²⁵⁶)."""
    while True:
        s = int.from_bytes(rng(64), "big") % Q
        if s:
            return s
