"""Chaum–Pedersen proofs of discrete-logarithm equality, non-interactive (Fiat–Shamir).

The statement: four points ``B1, A1, B2, A2`` and a context ``ctx``; the claim: one secret x
gives both ``A1 = [x]B1`` and ``A2 = [x]B2``. The proof is ``(c, s)``, 64 bytes
(``docs/blind-proofs.md``, section 4):

    prover:   w random;  T1 = [w]B1;  T2 = [w]B2;
              c = H(field(DLEQ_DOMAIN) || field(ctx) || field(B1) || field(A1) || field(B2)
                    || field(A2) || field(T1) || field(T2))  (SHA-512 mod Q);  s = w + c·x
    verifier: T1 = [s]B1 - [c]A1;  T2 = [s]B2 - [c]A2;  accept iff c is the same hash

Sound (a cheater without such an x passes with probability about 1/Q per hash it can try) and
zero-knowledge for an honest verifier, in the random-oracle model.
"""

from __future__ import annotations

import os
from typing import Final

from .... import memo
from . import group
from .group import Point, Random

DLEQ_DOMAIN: Final = b"canasta-net/blind/dleq/v2"
PROOF_SIZE: Final = 2 * group.SCALAR_SIZE


Encoded = tuple[bytes, bytes, bytes, bytes]
"""The statement's points ``B1, A1, B2, A2`` as their 33-byte encodings (a caller that has them,
the stages' points are sent as such, saves encoding them again)."""


def _challenge(ctx: bytes, statement: Encoded, t1: Point, t2: Point) -> int:
    return group.hash_to_scalar(DLEQ_DOMAIN, ctx, *statement, group.encode(t1), group.encode(t2))


def _encoded(points: tuple[Point, Point, Point, Point], given: Encoded | None) -> Encoded:
    if given is not None:
        return given
    b1, a1, b2, a2 = (group.encode(p) for p in points)
    return b1, a1, b2, a2


def prove(
    ctx: bytes,
    b1: Point,
    a1: Point,
    b2: Point,
    a2: Point,
    x: int,
    rng: Random = os.urandom,
    begun: tuple[int, Point] | None = None,
    encoded: Encoded | None = None,
) -> bytes:
    """The 64-byte proof that ``a1 = [x]b1`` and ``a2 = [x]b2`` (the caller knows x).
    ``begun``: a nonce w and ``[w]b1``, drawn and computed ahead (``b1`` is often known before
    ``b2``), for this proof only; else w is drawn here. ``encoded``: the four points' encodings,
    if the caller has them (they must be those very points)."""
    statement = _encoded((b1, a1, b2, a2), encoded)
    while True:
        if begun is not None:
            (w, t1), begun = begun, None
        else:
            w = group.random_scalar(rng)
            t1 = group.mul(b1, w)
        c = _challenge(ctx, statement, t1, group.mul(b2, w))
        s = (w + c * x) % group.Q
        if c and s:  # else the verifier would multiply by zero: draw again (probability 2/Q)
            return group.scalar_bytes(c) + group.scalar_bytes(s)


@memo.pure
def verify(
    ctx: bytes,
    b1: Point,
    a1: Point,
    b2: Point,
    a2: Point,
    proof: bytes,
    encoded: Encoded | None = None,
) -> bool:
    """Whether ``proof`` shows ``log_b1(a1) == log_b2(a2)`` under ``ctx``. ``encoded`` as for
    :func:`prove`."""
    if len(proof) != PROOF_SIZE:
        return False
    try:
        c = group.scalar_from(proof[:32])
        s = group.scalar_from(proof[32:])
        # [s]B - [c]A as [s]B + [q-c]A: a negated product would cost a square root to decode
        t1 = group.add([group.mul(b1, s), group.mul(a1, group.Q - c)])
        t2 = group.add([group.mul(b2, s), group.mul(a2, group.Q - c)])
    except group.GroupError:
        return False
    return _challenge(ctx, _encoded((b1, a1, b2, a2), encoded), t1, t2) == c
