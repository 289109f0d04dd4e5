"""Deterministic deck derivation for the commit-reveal deal (version 1).

Everything here is a pure function of its arguments: the same seeds always give the same deck, so
every peer and any third-party auditor can recompute a hand's deck once the seeds are published.
The byte-exact specification, with a test vector, is ``docs/deal-commit-reveal.md``; this module
and that document must agree.

Encoding: every hashed input is a sequence of *fields*, each written as its length (4 bytes,
big-endian) followed by its bytes. Integers are fixed-width big-endian (hand number: 8 bytes; seat:
1 byte; seed count: 4 bytes) and are length-prefixed like any other field, so no two different
inputs can produce the same byte string.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

COMMIT_DOMAIN = b"canasta-net/commit/v1"
DECK_DOMAIN = b"canasta-net/deck/v1"
SHUFFLE_DOMAIN = b"canasta-net/shuffle/v1"
INSECURE_SEED_DOMAIN = b"canasta-net/insecure-test-seed/v1"

SEED_SIZE = 32
"""Bytes in a seat's secret seed."""
COMMITMENT_SIZE = 32
"""Bytes in a commitment (a SHA-256 digest)."""
DECK_SEED_SIZE = 32
"""Bytes in a deck seed (a SHA-256 digest)."""
MAX_SEATS = 256
"""A seat number is one byte, so seats are numbered 0..255."""

_FIRST_STREAM_READ = 512
"""Bytes of XOF output read at first; enough for a 162-card deck almost always."""


def _field(data: bytes) -> bytes:
    """One length-prefixed field: 4-byte big-endian length, then the bytes."""
    if len(data) >= 1 << 32:
        raise ValueError("a hashed field must be shorter than 2**32 bytes")
    return len(data).to_bytes(4, "big") + data


def _hand_no_bytes(hand_no: int) -> bytes:
    if not 0 <= hand_no < 1 << 64:
        raise ValueError(f"hand number {hand_no} is outside 0..2**64-1")
    return hand_no.to_bytes(8, "big")


def _seat_byte(seat: int) -> bytes:
    if not 0 <= seat < MAX_SEATS:
        raise ValueError(f"seat {seat} is outside 0..{MAX_SEATS - 1}")
    return seat.to_bytes(1, "big")


def _check_seed(seed: bytes) -> None:
    if len(seed) != SEED_SIZE:
        raise ValueError(f"a seed must be exactly {SEED_SIZE} bytes, not {len(seed)}")


def commitment(table_id: bytes, hand_no: int, seat: int, seed: bytes) -> bytes:
    """The 32-byte commitment a seat publishes before revealing ``seed``.

    Binding the table, hand and seat into the hash means a commitment (or its seed) can never be
    replayed at another table, in another hand, or by another seat.
    """
    _check_seed(seed)
    encoded = b"".join(
        (
            _field(COMMIT_DOMAIN),
            _field(table_id),
            _field(_hand_no_bytes(hand_no)),
            _field(_seat_byte(seat)),
            _field(seed),
        )
    )
    return hashlib.sha256(encoded).digest()


def deck_seed(table_id: bytes, hand_no: int, seeds: Sequence[bytes]) -> bytes:
    """The 32-byte seed of the hand's shuffle, from every seat's seed in seat order.

    It depends on every seed, so no seat (short of all of them together) can steer the deck.
    """
    if not 1 <= len(seeds) <= MAX_SEATS:
        raise ValueError(f"a deal needs 1..{MAX_SEATS} seeds, not {len(seeds)}")
    for seed in seeds:
        _check_seed(seed)
    parts = [
        _field(DECK_DOMAIN),
        _field(table_id),
        _field(_hand_no_bytes(hand_no)),
        _field(len(seeds).to_bytes(4, "big")),
    ]
    parts.extend(_field(seed) for seed in seeds)
    return hashlib.sha256(b"".join(parts)).digest()


class _ByteStream:
    """The SHAKE-256 output for one deck seed, read front to back.

    SHAKE-256 output of length L is a prefix of its output of any greater length, so reading a
    bigger digest when we run out continues the very same stream: the chunk size is an
    implementation detail that does not change a single dealt card.
    """

    def __init__(self, seed: bytes) -> None:
        self._xof = hashlib.shake_256(_field(SHUFFLE_DOMAIN) + _field(seed))
        self._buffer = self._xof.digest(_FIRST_STREAM_READ)
        self._position = 0

    def read(self, count: int) -> bytes:
        end = self._position + count
        while end > len(self._buffer):
            self._buffer = self._xof.digest(2 * len(self._buffer))
        chunk = self._buffer[self._position : end]
        self._position = end
        return chunk


def _uniform_at_most(stream: _ByteStream, bound: int) -> int:
    """A uniform integer in [0, bound] by rejection sampling, so that no value is favoured.

    Read the fewest bytes that can hold ``bound`` as a big-endian integer, keep only the low
    ``bound.bit_length()`` bits, and try again with fresh bytes if the result exceeds ``bound``.
    Each attempt succeeds with probability above 1/2.
    """
    byte_count = (bound.bit_length() + 7) // 8
    mask = (1 << bound.bit_length()) - 1
    while True:
        candidate = int.from_bytes(stream.read(byte_count), "big") & mask
        if candidate <= bound:
            return candidate


def shuffled_order(deck_seed: bytes, n: int) -> list[int]:
    """A permutation of ``range(n)`` determined by ``deck_seed``: position p holds card order[p].

    Fisher–Yates: start from ``[0, 1, ..., n-1]``; for i from n-1 down to 1, draw j uniform in
    [0, i] from the stream and swap positions i and j.
    """
    if len(deck_seed) != DECK_SEED_SIZE:
        raise ValueError(f"a deck seed must be {DECK_SEED_SIZE} bytes, not {len(deck_seed)}")
    if n < 1:
        raise ValueError(f"a deck needs at least one card, not {n}")
    order = list(range(n))
    stream = _ByteStream(deck_seed)
    for i in range(n - 1, 0, -1):
        j = _uniform_at_most(stream, i)
        order[i], order[j] = order[j], order[i]
    return order


def derive_deck(table_id: bytes, hand_no: int, seeds: Sequence[bytes], n: int) -> list[int]:
    """The hand's deck order from all seats' seeds: ``shuffled_order(deck_seed(...), n)``."""
    return shuffled_order(deck_seed(table_id, hand_no, seeds), n)


def insecure_seed(test_seed: int | str, table_id: bytes, hand_no: int, seat: int) -> bytes:
    """A predictable 32-byte seed for tests and ``--seed`` runs, never for real play.

    Anyone who knows ``test_seed`` knows every deck, so a log of a game dealt this way must be
    marked insecure (the caller records that in the log header). ``5`` and ``"5"`` give different
    seeds: the type is part of the input.
    """
    if isinstance(test_seed, bool) or not isinstance(test_seed, int | str):
        raise TypeError("a test seed is an int or a str")
    tagged = (b"int:" if isinstance(test_seed, int) else b"str:") + str(test_seed).encode("utf-8")
    encoded = b"".join(
        (
            _field(INSECURE_SEED_DOMAIN),
            _field(tagged),
            _field(table_id),
            _field(_hand_no_bytes(hand_no)),
            _field(_seat_byte(seat)),
        )
    )
    return hashlib.sha256(encoded).digest()
