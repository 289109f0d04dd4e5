"""A seat's secrets for one hand, all derived from one 32-byte seed.

At hand start a seat draws a fresh uniformly random seed and publishes only its commitment (with
its per-hand X25519 public key). From the seed it derives, deterministically:

- its deck key ``k`` (stage 1) and every per-position key ``k_j`` (stage 2), nonzero scalars mod n;
- its stage-1 permutation of the deck (Fisher–Yates with rejection sampling, the commit-reveal
  deal's shuffle fed with a seat-specific seed);
- its per-hand X25519 key pair, which carries the sealed keys of the deal.

At hand end the seed is revealed, so anyone can recompute every one of these and check every
stage output, every sealed key and every published key. Every derivation binds the table id, the
hand number and the seat, so a seed reused by mistake still gives unrelated keys elsewhere.
The bytes are specified in ``docs/blind-deal.md``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from canasta_net.deal import shuffle

from . import points
from ._encoding import (
    ANNOUNCE_DOMAIN,
    COMMIT_DOMAIN,
    DECK_KEY_PURPOSE,
    PERMUTATION_DOMAIN,
    POSITION_KEY_PURPOSE,
    SCALAR_DOMAIN,
    X25519_DOMAIN,
    fields,
    hand_fields,
    u8,
    u32,
)
from .errors import BadParameters

SEED_SIZE = 32
"""Bytes in a seat's per-hand seed."""
COMMITMENT_SIZE = 32
X25519_PUBLIC_SIZE = 32
MAX_DECK_SIZE = 1 << 16
"""A sanity bound on the number of cards (a real deck has 108 or 162)."""


def _check_seed(seed: bytes) -> bytes:
    if len(seed) != SEED_SIZE:
        raise BadParameters(f"a seed is {SEED_SIZE} bytes, not {len(seed)}")
    return bytes(seed)


def _check_deck_size(deck_size: int) -> int:
    if not 2 <= deck_size <= MAX_DECK_SIZE:
        raise BadParameters(f"a deck has 2 .. {MAX_DECK_SIZE} cards, not {deck_size}")
    return deck_size


def _seat_context(table_id: bytes, hand_no: int, seat: int, seed: bytes) -> bytes:
    return hand_fields(table_id, hand_no) + fields(u8(seat), _check_seed(seed))


def derive_scalar(
    table_id: bytes, hand_no: int, seat: int, seed: bytes, purpose: bytes, index: int
) -> int:
    """A scalar in 1 .. n-1 by rejection sampling over SHA-256 outputs.

    For counter c = 0, 1, ...: ``v = SHA256(field(domain) || field(table_id) || field(u64(hand))
    || field(u8(seat)) || field(seed) || field(purpose) || field(u32(index)) || field(u32(c)))``
    read big-endian; the first v with ``1 <= v < n`` is the scalar (the first try fails with
    probability below 2⁻³²).
    """
    prefix = fields(SCALAR_DOMAIN) + _seat_context(table_id, hand_no, seat, seed)
    prefix += fields(purpose, u32(index))
    counter = 0
    while True:
        digest = hashlib.sha256(prefix + fields(u32(counter))).digest()
        value = int.from_bytes(digest, "big")
        if 1 <= value < points.N:
            return value
        counter += 1


def derive_deck_key(table_id: bytes, hand_no: int, seat: int, seed: bytes) -> int:
    """The seat's stage-1 deck key k."""
    return derive_scalar(table_id, hand_no, seat, seed, DECK_KEY_PURPOSE, 0)


def derive_position_key(
    table_id: bytes, hand_no: int, seat: int, seed: bytes, position: int
) -> int:
    """The seat's stage-2 key k_j for deck position ``position``."""
    return derive_scalar(table_id, hand_no, seat, seed, POSITION_KEY_PURPOSE, position)


def permutation_seed(
    table_id: bytes, hand_no: int, seat: int, seed: bytes, deck_size: int
) -> bytes:
    """The 32-byte seed of the seat's stage-1 permutation."""
    context = _seat_context(table_id, hand_no, seat, seed)
    data = fields(PERMUTATION_DOMAIN) + context + fields(u32(_check_deck_size(deck_size)))
    return hashlib.sha256(data).digest()


def derive_permutation(
    table_id: bytes, hand_no: int, seat: int, seed: bytes, deck_size: int
) -> tuple[int, ...]:
    """The seat's stage-1 permutation: output position i takes incoming entry ``perm[i]``.

    The Fisher–Yates shuffle of ``docs/deal-commit-reveal.md`` with :func:`permutation_seed` as
    its deck seed (the same stream, rejection sampling and swaps).
    """
    seed32 = permutation_seed(table_id, hand_no, seat, seed, deck_size)
    return tuple(shuffle.shuffled_order(seed32, deck_size))


def derive_x25519(table_id: bytes, hand_no: int, seat: int, seed: bytes) -> X25519PrivateKey:
    """The seat's per-hand X25519 key: its 32 private bytes are a SHA-256 of the seed (clamped by
    X25519 itself), so the sealed keys of the hand can be opened by anyone once seeds are public.
    """
    data = fields(X25519_DOMAIN) + _seat_context(table_id, hand_no, seat, seed)
    return X25519PrivateKey.from_private_bytes(hashlib.sha256(data).digest())


def x25519_private_bytes(private_key: X25519PrivateKey) -> bytes:
    """The 32 private bytes of a per-hand X25519 key (a recipient exposes them to prove that a
    key sealed to it is wrong: docs/blind-proofs.md section 10)."""
    return private_key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )


def x25519_public_bytes(private_key: X25519PrivateKey) -> bytes:
    return private_key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )


def commitment(table_id: bytes, hand_no: int, seat: int, seed: bytes) -> bytes:
    """``SHA256(field(domain) || field(table_id) || field(u64(hand)) || field(u8(seat)) ||
    field(seed))``: what a seat publishes at hand start, before any stage."""
    data = fields(COMMIT_DOMAIN) + _seat_context(table_id, hand_no, seat, seed)
    return hashlib.sha256(data).digest()


def announcement(
    table_id: bytes, hand_no: int, seat: int, seed_commitment: bytes, x25519_public: bytes
) -> bytes:
    """The bytes a seat signs (kind ``blind-announce``) at hand start: its commitment and its
    per-hand X25519 public key, bound to the table, hand and seat."""
    if len(seed_commitment) != COMMITMENT_SIZE or len(x25519_public) != X25519_PUBLIC_SIZE:
        raise BadParameters("a commitment and an X25519 public key are 32 bytes each")
    return (
        fields(ANNOUNCE_DOMAIN)
        + hand_fields(table_id, hand_no)
        + fields(u8(seat), seed_commitment, x25519_public)
    )


@dataclass(frozen=True)
class SeatSecrets:
    """Everything one seat derives from its seed for one hand. Keep it private until hand end.

    Build it with :meth:`derive` (from a known seed, e.g. for the audit) or :meth:`generate`.
    """

    table_id: bytes
    hand_no: int
    seat: int
    deck_size: int
    seed: bytes = field(repr=False)
    deck_key: int = field(repr=False)
    permutation: tuple[int, ...] = field(repr=False)
    position_keys: tuple[int, ...] = field(repr=False)
    x25519_private: X25519PrivateKey = field(repr=False, compare=False)

    @classmethod
    def derive(
        cls, table_id: bytes, hand_no: int, seat: int, seed: bytes, deck_size: int
    ) -> SeatSecrets:
        table_id, seed = bytes(table_id), _check_seed(seed)
        _check_deck_size(deck_size)
        return cls(
            table_id=table_id,
            hand_no=hand_no,
            seat=seat,
            deck_size=deck_size,
            seed=seed,
            deck_key=derive_deck_key(table_id, hand_no, seat, seed),
            permutation=derive_permutation(table_id, hand_no, seat, seed, deck_size),
            position_keys=tuple(
                derive_position_key(table_id, hand_no, seat, seed, j) for j in range(deck_size)
            ),
            x25519_private=derive_x25519(table_id, hand_no, seat, seed),
        )

    @classmethod
    def generate(
        cls,
        table_id: bytes,
        hand_no: int,
        seat: int,
        deck_size: int,
        random_bytes: Callable[[int], bytes] = os.urandom,
    ) -> SeatSecrets:
        """Fresh secrets from a new seed drawn with ``random_bytes`` (``os.urandom`` in play)."""
        return cls.derive(table_id, hand_no, seat, random_bytes(SEED_SIZE), deck_size)

    @property
    def commitment(self) -> bytes:
        return commitment(self.table_id, self.hand_no, self.seat, self.seed)

    @property
    def x25519_public(self) -> bytes:
        return x25519_public_bytes(self.x25519_private)

    def announcement(self) -> bytes:
        """What the seat signs (kind ``blind-announce``) and sends at hand start."""
        return announcement(
            self.table_id, self.hand_no, self.seat, self.commitment, self.x25519_public
        )

    def position_key(self, position: int) -> int:
        if not 0 <= position < self.deck_size:
            raise BadParameters(f"position {position} is outside 0..{self.deck_size - 1}")
        return self.position_keys[position]
