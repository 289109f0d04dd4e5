"""Byte encodings shared by the blind deal: length-prefixed fields, fixed-width integers, domains.

Every hashed or signed input of the blind deal is a concatenation of *fields*, each its length (4
bytes, big-endian) followed by its bytes, exactly as in the commit-reveal deal
(``docs/deal-commit-reveal.md``). Integers are fixed-width big-endian and are fields like any
other, so two different inputs never give the same bytes. ``docs/blind-deal.md`` lists every
domain string below; this module and that document must agree.
"""

from __future__ import annotations

from typing import Final

from .errors import BadParameters

VERSION: Final = 1
"""The version of ``docs/blind-deal.md`` that this package implements."""

CARD_POINT_DOMAIN: Final = b"canasta-net/blind/card-point/v1"
COMMIT_DOMAIN: Final = b"canasta-net/blind/commit/v1"
ANNOUNCE_DOMAIN: Final = b"canasta-net/blind/announce/v1"
SCALAR_DOMAIN: Final = b"canasta-net/blind/scalar/v1"
PERMUTATION_DOMAIN: Final = b"canasta-net/blind/permutation/v1"
X25519_DOMAIN: Final = b"canasta-net/blind/x25519/v1"
STAGE_DOMAIN: Final = b"canasta-net/blind/stage/v1"
SEAL_KEY_DOMAIN: Final = b"canasta-net/blind/seal-key/v1"
SEAL_AD_DOMAIN: Final = b"canasta-net/blind/seal-ad/v1"
KEY_MESSAGE_DOMAIN: Final = b"canasta-net/blind/key-message/v1"
RELEASE_DOMAIN: Final = b"canasta-net/blind/release/v1"

DECK_KEY_PURPOSE: Final = b"deck"
POSITION_KEY_PURPOSE: Final = b"position"

MAX_SEATS: Final = 256
"""A seat number is one byte."""
MAX_POSITIONS: Final = 1 << 32
"""A position is four bytes."""


def field(data: bytes) -> bytes:
    """One length-prefixed field: 4-byte big-endian length, then the bytes."""
    if len(data) >= 1 << 32:
        raise BadParameters("a field must be shorter than 2**32 bytes")
    return len(data).to_bytes(4, "big") + data


def fields(*parts: bytes) -> bytes:
    return b"".join(field(part) for part in parts)


def u8(value: int) -> bytes:
    if not 0 <= value < MAX_SEATS:
        raise BadParameters(f"seat or stage {value} is outside 0..{MAX_SEATS - 1}")
    return value.to_bytes(1, "big")


def u32(value: int) -> bytes:
    if not 0 <= value < 1 << 32:
        raise BadParameters(f"{value} is outside 0..2**32-1")
    return value.to_bytes(4, "big")


def u64(value: int) -> bytes:
    if not 0 <= value < 1 << 64:
        raise BadParameters(f"hand number {value} is outside 0..2**64-1")
    return value.to_bytes(8, "big")


def hand_fields(table_id: bytes, hand_no: int) -> bytes:
    """``field(table_id) || field(u64(hand_no))``: the context bound into every blind-deal input."""
    return field(bytes(table_id)) + field(u64(hand_no))
