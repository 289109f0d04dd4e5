"""A proof that a deck is a permutation of another raised to a committed key (stage 1).

Statement: a context ``ctx``, input points ``X_0 .. X_{m-1}``, output points ``Y_0 .. Y_{m-1}``
and the seat's deck public key ``K``. Claim: the prover knows k and a permutation π with
``K = [k]G`` and ``Y_i = [k] X_{π(i)}`` for every i.

This is the Terelius–Wikström proof of a shuffle (as in Wikström's Verificatum verifier
specification) with the re-encryption relation replaced by exponentiation: a Pedersen commitment
to the permutation matrix, column by column (``u_i = [r_i]G + h_{π(i)}``); random challenges
``e_i``; the matrix is a permutation matrix because its rows sum to one (``Σu_i - Σh_j = [ā]G``)
and the product of ``e' = Me`` is the product of e (a chain of commitments ``ĉ_j``); and the
deck relation is one equation, ``Σ_j e'_j X_j = [k⁻¹] Σ_i e_i Y_i`` with ``[k⁻¹]K = G``, which
for random e holds only if every ``Y_i = [k] X_{π(i)}``. All of it is one Schnorr-style proof
made non-interactive by Fiat–Shamir. ``docs/blind-proofs.md`` section 5 gives every byte.

Cost for m entries: about 3m base-point and 5m other multiplications to prove, 6m + m to verify;
the proof is 4 + 130m + 160 bytes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as member
from functools import lru_cache
from typing import Final

from .... import memo
from .._encoding import field, u32
from . import group
from .group import Point, Random

GENERATOR_DOMAIN: Final = b"canasta-net/blind/generator/v2"
STATEMENT_DOMAIN: Final = b"canasta-net/blind/shuffle-statement/v2"
E_DOMAIN: Final = b"canasta-net/blind/shuffle-e/v2"
V_DOMAIN: Final = b"canasta-net/blind/shuffle-v/v2"
CHAIN_LABEL: Final = b"chain"


@lru_cache(maxsize=1)
def chain_base() -> Point:
    """ĥ: the start of the product chain."""
    return group.decode(group.hash_to_point(GENERATOR_DOMAIN, CHAIN_LABEL))


def prepare(m: int) -> None:
    """Compute ahead what every proof and check for decks of m entries uses (the generators, the
    chain start): about 35 ms for 108 entries, which the first stage would otherwise wait for."""
    chain_base()
    _minus_generators(m)


@lru_cache(maxsize=4)
def _minus_generators(m: int) -> Point:
    """``-Σ h_j`` for a deck of m entries (the same for every check of that size)."""
    return group.neg(group.add(group.generators(GENERATOR_DOMAIN, m)))


@dataclass(frozen=True)
class ShuffleProof:
    """The proof's fields (``docs/blind-proofs.md`` section 5, "The proof's bytes")."""

    u: tuple[bytes, ...]  # the permutation commitments, m points
    c_hat: tuple[bytes, ...]  # the product chain, m points
    v: int
    s_a: int
    s_b: int
    s_c: int
    s_d: int
    s_e: tuple[int, ...]  # m
    s_hat: tuple[int, ...]  # m

    def encode(self) -> bytes:
        m = len(self.u)
        return b"".join(
            [
                u32(m),
                *self.u,
                *self.c_hat,
                *(group.scalar_bytes(s) for s in (self.v, self.s_a, self.s_b, self.s_c, self.s_d)),
                *(group.scalar_bytes(s) for s in self.s_e),
                *(group.scalar_bytes(s) for s in self.s_hat),
            ]
        )

    @classmethod
    def decode(cls, data: bytes) -> ShuffleProof:
        """The fields of an encoded proof; :class:`group.GroupError` if it is malformed (the
        points are checked by :func:`verify`)."""
        if len(data) < 4:
            raise group.GroupError("a truncated proof")
        m = int.from_bytes(data[:4], "big")
        if len(data) != proof_size(m):
            raise group.GroupError(f"a proof for {m} entries is {proof_size(m)} bytes")
        at = 4
        points = [data[at + 33 * i : at + 33 * (i + 1)] for i in range(2 * m)]
        at += 66 * m
        scalars = [
            group.scalar_from(data[at + 32 * i : at + 32 * (i + 1)]) for i in range(5 + 2 * m)
        ]
        return cls(
            u=tuple(points[:m]),
            c_hat=tuple(points[m:]),
            v=scalars[0],
            s_a=scalars[1],
            s_b=scalars[2],
            s_c=scalars[3],
            s_d=scalars[4],
            s_e=tuple(scalars[5 : 5 + m]),
            s_hat=tuple(scalars[5 + m :]),
        )


def proof_size(m: int) -> int:
    return 4 + 2 * m * group.POINT_SIZE + (5 + 2 * m) * group.SCALAR_SIZE


def _statement_digest(
    ctx: bytes, inputs: Sequence[bytes], outputs: Sequence[bytes], key: bytes
) -> bytes:
    data = (
        field(STATEMENT_DOMAIN)
        + field(ctx)
        + field(u32(len(inputs)))
        + field(key)
        + field(b"".join(inputs))
        + field(b"".join(outputs))
    )
    return hashlib.sha256(data).digest()


def _challenges(digest: bytes, u: Sequence[bytes]) -> tuple[bytes, list[int]]:
    """The e seed and ``e_0 .. e_{m-1}``: SHA-512 of the seed and the index, mod Q."""
    seed = hashlib.sha256(field(E_DOMAIN) + field(digest) + field(b"".join(u))).digest()
    return seed, [group.hash_to_scalar(E_DOMAIN, seed, u32(i)) for i in range(len(u))]


def _v(seed: bytes, c_hat: Sequence[bytes], t: Sequence[Point], t_hat: Sequence[Point]) -> int:
    return group.hash_to_scalar(
        V_DOMAIN,
        seed,
        b"".join(c_hat),
        b"".join(group.encode(p) for p in t),
        b"".join(group.encode(p) for p in t_hat),
    )


def _product(values: Sequence[int]) -> int:
    result = 1
    for v in values:
        result = result * v % group.Q
    return result


@dataclass
class ProverStart:
    """The part of a shuffle proof that does not depend on the decks, worked out before the input
    arrives (off the critical path): every random value, in the order :func:`prove` draws them,
    and the points made of them alone: the permutation commitments ``u_i``, ``T_A``, ``T_B``,
    ``T_C``, ``T_K``. For one proof only: its nonces masked one proof's responses, and two proofs
    from one start would reveal the permutation (:meth:`take` hands it out once)."""

    key: int = member(repr=False)
    permutation: tuple[int, ...] = member(repr=False)
    r: list[int] = member(repr=False)
    r_hat: list[int] = member(repr=False)
    w: tuple[int, int, int, int] = member(repr=False)  # ω_A, ω_B, ω_C, ω_D
    w_e: list[int] = member(repr=False)
    w_hat: list[int] = member(repr=False)
    u: list[bytes] = member(repr=False)
    t_abck: tuple[Point, Point, Point, Point] = member(repr=False)
    used: bool = False

    def __getstate__(self) -> dict[str, object]:  # points go as bytes (a proof's work pickles)
        state = dict(vars(self))
        state["t_abck"] = tuple(group.encode(t) for t in self.t_abck)
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        points = state["t_abck"]
        assert isinstance(points, tuple)
        vars(self).update(state, t_abck=tuple(group.decode(t) for t in points))

    def take(self, key: int, permutation: Sequence[int]) -> ProverStart | None:
        """This start, once, if it was made for that key and permutation; None otherwise."""
        if self.used or self.key != key or self.permutation != tuple(permutation):
            return None
        self.used = True
        return self


def start(key: int, permutation: Sequence[int], rng: Random = os.urandom) -> ProverStart:
    """The input-independent part of a proof for ``key`` and ``permutation``: about a fifth of
    its multiplications (m base-point ones for the ``u_i``, m for ``T_C``)."""
    m = len(permutation)
    h = group.generators(GENERATOR_DOMAIN, m)
    r = [group.random_scalar(rng) for _ in range(m)]
    r_hat = [group.random_scalar(rng) for _ in range(m)]
    w_a, w_b, w_c, w_d = (group.random_scalar(rng) for _ in range(4))
    w_e = [group.random_scalar(rng) for _ in range(m)]
    w_hat = [group.random_scalar(rng) for _ in range(m)]
    u = [group.encode(group.add([group.base(r[i]), h[permutation[i]]])) for i in range(m)]
    t_a = group.base(w_a)
    t_b = group.base(w_b)
    t_c = group.add([group.base(w_c), *(group.mul(h[j], w_e[j]) for j in range(m))])
    t_k = group.mul(group.base(key), w_d)
    return ProverStart(
        key, tuple(permutation), r, r_hat, (w_a, w_b, w_c, w_d), w_e, w_hat, u, (t_a, t_b, t_c, t_k)
    )


def prove(
    ctx: bytes,
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    key: int,
    permutation: Sequence[int],
    rng: Random = os.urandom,
    begun: ProverStart | None = None,
) -> ShuffleProof:
    """The proof that ``outputs[i] = [key] inputs[permutation[i]]`` and the deck public key is
    ``[key]G``. The caller built ``outputs`` that way (nothing here checks it). ``begun``: the
    input-independent part worked out ahead (:func:`start`), used if it was made for this key
    and permutation and never used before; else everything is drawn here (the same random
    values, in the same order, as :func:`start` draws them)."""
    m = len(inputs)
    if sorted(permutation) != list(range(m)) or len(outputs) != m:
        raise ValueError("the permutation and the decks do not fit")
    ready = None if begun is None else begun.take(key, permutation)
    while True:
        try:
            return _prove_once(
                ctx, inputs, outputs, ready or start(key, permutation, rng), permutation
            )
        except group.GroupError:  # an identity met by chance (probability ~m/Q): draw again
            ready = None
            continue


def _prove_once(
    ctx: bytes,
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    begun: ProverStart,
    permutation: Sequence[int],
) -> ShuffleProof:
    q = group.Q
    m = len(inputs)
    key = begun.key
    h_chain = chain_base()
    xs = group.decode_all(inputs)
    ys = group.decode_all(outputs)
    k_pub = group.encode(group.base(key))
    r, r_hat, w_e, w_hat, u = begun.r, begun.r_hat, begun.w_e, begun.w_hat, begun.u
    w_a, w_b, w_c, w_d = begun.w
    t_a, t_b, t_c, t_k = begun.t_abck
    seed, e = _challenges(_statement_digest(ctx, inputs, outputs, k_pub), u)
    inverse = [0] * m
    for i, p in enumerate(permutation):
        inverse[p] = i
    e_prime = [e[inverse[j]] for j in range(m)]
    # the product chain
    c_hat_points: list[Point] = []
    previous = h_chain
    b_bar = 0
    for j in range(m):
        current = group.add([group.base(r_hat[j]), group.mul(previous, e_prime[j])])
        c_hat_points.append(current)
        b_bar = (r_hat[j] + e_prime[j] * b_bar) % q
        previous = current
    a_bar = sum(r) % q
    c_bar = sum(ri * ei for ri, ei in zip(r, e, strict=True)) % q
    kappa = pow(key, -1, q)
    y_hat = group.add([group.mul(ys[i], e[i]) for i in range(m)])
    # the Schnorr commitments (those of the input: T_A, T_B, T_C, T_K are the start's)
    t_d = group.add([*(group.mul(xs[j], w_e[j]) for j in range(m)), group.mul(y_hat, q - w_d)])
    chain_in = [h_chain, *c_hat_points[:-1]]
    t_hat = [group.add([group.base(w_hat[j]), group.mul(chain_in[j], w_e[j])]) for j in range(m)]
    c_hat = [group.encode(p) for p in c_hat_points]
    v = _v(seed, c_hat, (t_a, t_b, t_c, t_d, t_k), t_hat)
    s_e = tuple((w_e[j] + v * e_prime[j]) % q for j in range(m))
    s_hat = tuple((w_hat[j] + v * r_hat[j]) % q for j in range(m))
    scalars = ((w_a + v * a_bar) % q, (w_b + v * b_bar) % q, (w_c + v * c_bar) % q)
    s_d = (w_d + v * kappa) % q
    if not all((*scalars, s_d, *s_e, *s_hat, v)):
        raise group.GroupError("a zero response")  # the verifier could not use it: draw again
    return ShuffleProof(tuple(u), tuple(c_hat), v, *scalars, s_d, s_e, s_hat)


@memo.pure
def verify(
    ctx: bytes, inputs: Sequence[bytes], outputs: Sequence[bytes], key: bytes, proof: ShuffleProof
) -> bool:
    """Whether ``proof`` shows that ``outputs`` is ``inputs`` permuted and raised to the
    logarithm of ``key`` (a 33-byte point), under ``ctx``."""
    m = len(inputs)
    if m == 0 or len(outputs) != m or len(proof.u) != m or len(proof.c_hat) != m:
        return False
    if len(proof.s_e) != m or len(proof.s_hat) != m:
        return False
    try:
        return _verify(ctx, inputs, outputs, key, proof)
    except group.GroupError:
        return False


def _verify(
    ctx: bytes, inputs: Sequence[bytes], outputs: Sequence[bytes], key: bytes, proof: ShuffleProof
) -> bool:
    q = group.Q
    m = len(inputs)
    h = group.generators(GENERATOR_DOMAIN, m)
    h_chain = chain_base()
    xs = group.decode_all(inputs)
    ys = group.decode_all(outputs)
    k_point = group.decode(key)
    us = group.decode_all(proof.u)
    cs = group.decode_all(proof.c_hat)
    v = proof.v
    seed, e = _challenges(_statement_digest(ctx, inputs, outputs, key), proof.u)
    # a difference [a]P - [b]Q is computed as [a]P + [q-b]Q: negating a point would cost a
    # square root to decode it again
    big_a = group.add([*us, _minus_generators(m)])
    big_b = group.add([cs[-1], group.mul(h_chain, q - _product(e))])
    big_c = group.add([group.mul(us[i], e[i]) for i in range(m)])
    y_hat = group.add([group.mul(ys[i], e[i]) for i in range(m)])
    t_a = group.add([group.base(proof.s_a), group.mul(big_a, q - v)])
    t_b = group.add([group.base(proof.s_b), group.mul(big_b, q - v)])
    t_c = group.add(
        [
            group.base(proof.s_c),
            *(group.mul(h[j], proof.s_e[j]) for j in range(m)),
            group.mul(big_c, q - v),
        ]
    )
    t_d = group.add(
        [
            *(group.mul(xs[j], proof.s_e[j]) for j in range(m)),
            group.mul(y_hat, q - proof.s_d),
        ]
    )
    t_k = group.add([group.mul(k_point, proof.s_d), group.base(q - v)])
    chain_in = [h_chain, *cs[:-1]]
    t_hat = [
        group.add(
            [
                group.base(proof.s_hat[j]),
                group.mul(chain_in[j], proof.s_e[j]),
                group.mul(cs[j], q - v),
            ]
        )
        for j in range(m)
    ]
    return _v(seed, proof.c_hat, (t_a, t_b, t_c, t_d, t_k), t_hat) == v % q
