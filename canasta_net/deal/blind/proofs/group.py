"""secp256k1 for the proof-carrying blind deal (``docs/blind-proofs.md``, section 2).

Zero-knowledge proofs need point *addition* (a Schnorr check is ``[s]G == T + [c]A``); the blind
deal's version 1 group, P-256 through ``cryptography``'s ECDH API, offers only x-only scalar
multiplication. This module is secp256k1 through ``coincurve`` (libsecp256k1, shipped inside the
wheel): a prime-order group (cofactor 1) with multiplication, addition and base-point
multiplication.

Timing: libsecp256k1's base-point multiplication (:func:`base`) and its ECDH multiplication are
constant-time; the multiplication coincurve offers for any point (``PublicKey.multiply``, the
library's ``tweak_mul``, :func:`mul`) is not in this version: it takes about 10 µs for a
multiplier of 1, 19 µs for one below 2⁶⁴ and 45 µs for a random one. :func:`mul` serves public
multipliers (every check) and one-use random nonces (each proof's, whose times only add up over
a stage); :func:`mul_secret` multiplies by a secret through the ECDH routine, in constant time:
a seat's deck key, which multiplies every entry of its stage 1 (a stage's total time would
otherwise say something of that one key).

A point is sent as its 33-byte SEC1 compressed encoding (``0x02``/``0x03`` || x); the point at
infinity has none, so a decoded point is always a group element other than the identity. A scalar
is an integer mod ``Q``, sent as 32 bytes big-endian. Points are held as ``coincurve.PublicKey``
objects (decoding costs a square root: a proof decodes each point once).
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Final

from coincurve import PublicKey
from coincurve.context import GLOBAL_CONTEXT

from .._encoding import field, u32

P: Final = 2**256 - 2**32 - 977
"""The secp256k1 field prime; the curve is y² = x³ + 7 over GF(P)."""
Q: Final = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
"""The prime order of the group."""
POINT_SIZE: Final = 33
SCALAR_SIZE: Final = 32
G_BYTES: Final = bytes.fromhex("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
G: Final = PublicKey(G_BYTES)
"""The standard generator."""
_MAX_TRIES: Final = 1 << 16

Point = PublicKey
Random = Callable[[int], bytes]


class GroupError(ValueError):
    """A point that does not decode, or an operation whose result would be the identity."""


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
    try:
        point = PublicKey(key)
    except ValueError:
        raise GroupError("not a point of secp256k1") from None
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
    return point.format(compressed=True)


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
    return point.multiply(s.to_bytes(SCALAR_SIZE, "big"))


def mul_secret(point: Point, s: int) -> Point:
    """``[s]point`` in time independent of ``s`` (libsecp256k1's ECDH multiplication, its hash
    replaced by a copy of the point); :class:`GroupError` if ``s ≡ 0``."""
    s %= Q
    if s == 0:
        raise GroupError("multiplication by zero")
    out = _ffi.new("unsigned char[65]")
    done = _lib.secp256k1_ecdh(
        GLOBAL_CONTEXT.ctx,
        out,
        point.public_key,
        s.to_bytes(SCALAR_SIZE, "big"),
        _copy_point_c,
        _ffi.NULL,
    )
    if done != 1:  # s is below Q and not 0, and the point is on the curve: never
        raise GroupError("the constant-time multiplication failed")
    return PublicKey(bytes(out))


def _copy_point(out: Any, x32: Any, y32: Any, _data: Any) -> int:
    """ECDH's "hash": the product itself, uncompressed (0x04, x, y: read back without the
    square root a compressed point costs)."""
    out[0] = 4
    _ffi.memmove(out + 1, x32, 32)
    _ffi.memmove(out + 33, y32, 32)
    return 1


# coincurve's own build of libsecp256k1 (no type stubs): its ECDH, with the hash above
_libsecp256k1: Any = importlib.import_module("coincurve._libsecp256k1")
_ffi, _lib = _libsecp256k1.ffi, _libsecp256k1.lib
_copy_point_c = _ffi.callback(
    "int(unsigned char *, const unsigned char *, const unsigned char *, void *)", _copy_point
)


def base(s: int) -> Point:
    """``[s]G``."""
    s %= Q
    if s == 0:
        raise GroupError("multiplication by zero")
    return PublicKey.from_valid_secret(s.to_bytes(SCALAR_SIZE, "big"))


def add(points: Sequence[Point]) -> Point:
    """The sum of ``points``; :class:`GroupError` if it is the identity."""
    if len(points) == 1:
        return points[0]
    try:
        return PublicKey.combine_keys(list(points))
    except ValueError:
        raise GroupError("the sum is the identity") from None


def neg(point: Point) -> Point:
    """``-point``: the same x, the other y (the compressed prefix flips)."""
    data = encode(point)
    return decode(bytes([data[0] ^ 1]) + data[1:])


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
        x = int.from_bytes(digest, "big")
        if x < P and pow((x * x * x + 7) % P, (P - 1) // 2, P) == 1:
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
