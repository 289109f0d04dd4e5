"""P-256 for the blind deal: cards as points, x-only scalar multiplication, validation.

A card ciphertext is the 32-byte big-endian x coordinate of a point on P-256. Only x is ever sent:
``x([k]P) == x([k](-P))``, so multiplying "the point with this x" by a scalar is well defined on x
alone, and so are encryption (multiply by k) and decryption (multiply by k⁻¹ mod n).

Scalar multiplication goes through ``cryptography``'s ECDH API only:
``ec.derive_private_key(k, SECP256R1()).exchange(ec.ECDH(), peer)`` returns ``x([k]peer)``, and
``EllipticCurvePublicKey.from_encoded_point`` builds (and validates) ``peer`` from a compressed
encoding ``0x02 || x``. P-256 has cofactor 1, so every point on the curve other than the point at
infinity is in the prime-order group; the point at infinity has no x coordinate, so no 32-byte
value can encode it.

Hash-to-curve is try-and-increment (``docs/blind-deal.md``, "Card points"). The square test uses
Python integers (``p ≡ 3 mod 4``); the scalar multiplications never do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Final

from cryptography.hazmat.primitives.asymmetric import ec

from ._encoding import CARD_POINT_DOMAIN, field, u32
from .errors import BadParameters, BadScalar, InvalidPoint

P: Final = 2**256 - 2**224 + 2**192 + 2**96 - 1
"""The P-256 field prime."""
B: Final = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
"""The curve is y² = x³ - 3x + B over GF(P)."""
N: Final = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
"""The (prime) order of the group; scalars live in 1 .. N-1."""
X_SIZE: Final = 32
"""Bytes in a card ciphertext (an x coordinate)."""
SCALAR_SIZE: Final = 32
"""Bytes in an encoded key (a scalar)."""
CURVE: Final = ec.SECP256R1()
_ECDH: Final = ec.ECDH()
_MAX_TRIES: Final = 1 << 16


def curve_rhs(x: int) -> int:
    """``x³ - 3x + B mod P``: a square exactly when x is the x coordinate of a point."""
    return (x * x * x - 3 * x + B) % P


def square_root(value: int) -> int:
    """A square root of a square ``value`` mod P (``P ≡ 3 mod 4``, so it is ``value^((P+1)/4)``)."""
    root = pow(value, (P + 1) // 4, P)
    if root * root % P != value % P:
        raise ValueError("not a square mod P")
    return root


def label_bytes(label: str) -> bytes:
    if not label:
        raise BadParameters("a card label must not be empty")
    return label.encode("utf-8")


def hash_to_x(label: str) -> bytes:
    """The card point of ``label``: its 32-byte x coordinate (try-and-increment).

    For counter c = 0, 1, ...: ``x = SHA256(field(domain) || field(utf8(label)) || field(u32(c)))``
    read big-endian; the first x below P with ``x³ - 3x + B`` a nonzero square is the card's.
    Each try succeeds with probability about 1/2.
    """
    prefix = field(CARD_POINT_DOMAIN) + field(label_bytes(label))
    for counter in range(_MAX_TRIES):
        digest = hashlib.sha256(prefix + field(u32(counter))).digest()
        # x below P with x³ - 3x + B a nonzero square is exactly an x OpenSSL decompresses (in C:
        # a seventh of the time of Euler's criterion in Python; zero is no y: the group's order
        # is odd)
        if is_valid_x(digest):
            return digest
    raise AssertionError("hash-to-curve found no point")  # probability 2**-65536


@lru_cache(maxsize=16)
def _card_points(labels: tuple[str, ...]) -> tuple[bytes, ...]:
    points = tuple(hash_to_x(label) for label in labels)
    if len(set(labels)) != len(labels):
        raise BadParameters("card labels must be distinct: every physical card has its own")
    if len(set(points)) != len(points):
        raise AssertionError("two labels hash to one point")  # a SHA-256 collision
    return points


def card_points(labels: Sequence[str]) -> tuple[bytes, ...]:
    """The card points of ``labels``, in label order (cached: a deck's points never change)."""
    return _card_points(tuple(labels))


def point_from_x(x: bytes) -> ec.EllipticCurvePublicKey:
    """The point with x coordinate ``x`` (either one: only x matters), validated.

    Raises :class:`InvalidPoint` unless ``x`` is 32 bytes, below P, and on the curve.
    """
    if not isinstance(x, bytes | bytearray) or len(x) != X_SIZE:
        raise InvalidPoint(f"an x coordinate is {X_SIZE} bytes")
    if int.from_bytes(x, "big") >= P:
        raise InvalidPoint("the x coordinate is not below the field prime")
    try:
        return ec.EllipticCurvePublicKey.from_encoded_point(CURVE, b"\x02" + bytes(x))
    except ValueError:
        raise InvalidPoint("the x coordinate is not on P-256") from None


def is_valid_x(x: bytes) -> bool:
    try:
        point_from_x(x)
    except InvalidPoint:
        return False
    return True


def check_scalar(k: int) -> int:
    if not 1 <= k < N:
        raise BadScalar("a key must be an integer in 1 .. n-1")
    return k


def scalar_to_bytes(k: int) -> bytes:
    """A key as 32 big-endian bytes."""
    return check_scalar(k).to_bytes(SCALAR_SIZE, "big")


def scalar_from_bytes(data: bytes) -> int:
    """A key from 32 big-endian bytes; raises :class:`BadScalar` unless it is in 1 .. n-1."""
    if len(data) != SCALAR_SIZE:
        raise BadScalar(f"a key is {SCALAR_SIZE} bytes, not {len(data)}")
    return check_scalar(int.from_bytes(data, "big"))


def inverse(k: int) -> int:
    """``k⁻¹ mod N``: the scalar that undoes multiplication by ``k``."""
    return pow(check_scalar(k), -1, N)


def product(scalars: Iterable[int]) -> int:
    """The product of ``scalars`` mod N: multiplying by it is multiplying by each in turn."""
    result = 1
    for k in scalars:
        result = result * check_scalar(k) % N
    return result


class Multiplier:
    """Multiplication by one scalar k, with the ECDH key built once for many points."""

    __slots__ = ("_key",)

    def __init__(self, k: int) -> None:
        self._key = ec.derive_private_key(check_scalar(k), CURVE)

    def point(self, point: ec.EllipticCurvePublicKey) -> bytes:
        """``x([k]point)`` for an already validated point."""
        return self._key.exchange(_ECDH, point)

    def __call__(self, x: bytes) -> bytes:
        """``x([k]P)`` where P has x coordinate ``x`` (validated: :class:`InvalidPoint`)."""
        return self._key.exchange(_ECDH, point_from_x(x))


def multiply(k: int, x: bytes) -> bytes:
    """``x([k]P)`` for the point P with x coordinate ``x``."""
    return Multiplier(k)(x)
