"""A third party's check of the blind deal's version 2 proofs, written from the documents alone.

It follows docs/blind-proofs.md (and, for the permutation, docs/blind-deal.md section 4 and the
shuffle of docs/deal-commit-reveal.md, through independent_deal.py) and imports nothing from
canasta_net and no curve library: secp256k1 is computed here with Python integers (slow, simple,
not constant-time: for checking public data only).
"""

from __future__ import annotations

import hashlib
from typing import Any

from independent_deal import shuffled

p = 2**256 - 2**32 - 977
q = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
Gx = 0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798
Gy = 0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8

Point = tuple[int, int] | None  # affine (x, y); None is the identity


class Refused(Exception):
    pass


# --------------------------------------------------------------------- the group (section 2)
def _add(a: Point, b: Point) -> Point:
    if a is None:
        return b
    if b is None:
        return a
    (x1, y1), (x2, y2) = a, b
    if x1 == x2:
        if (y1 + y2) % p == 0:
            return None
        lam = 3 * x1 * x1 * pow(2 * y1, -1, p) % p
    else:
        lam = (y2 - y1) * pow(x2 - x1, -1, p) % p
    x3 = (lam * lam - x1 - x2) % p
    return x3, (lam * (x1 - x3) - y1) % p


def _jacobian_mul(point: Point, s: int) -> Point:
    """[s]point by double-and-add in Jacobian coordinates (y² = x³ + 7, a = 0)."""
    if point is None or s % q == 0:
        return None
    px, py = point
    rx, ry, rz = 0, 1, 0  # identity
    for bit in bin(s % q)[2:]:
        if rz:  # double
            ysq = ry * ry % p
            s4 = 4 * rx * ysq % p
            m3 = 3 * rx * rx % p
            nx = (m3 * m3 - 2 * s4) % p
            ny = (m3 * (s4 - nx) - 8 * ysq * ysq) % p
            rz = 2 * ry * rz % p
            rx, ry = nx, ny
        if bit == "1":  # add the affine point
            if not rz:
                rx, ry, rz = px, py, 1
                continue
            z2 = rz * rz % p
            u2 = px * z2 % p
            s2 = py * z2 * rz % p
            h = (u2 - rx) % p
            r = (s2 - ry) % p
            if h == 0:
                if r == 0:  # doubling the same point: fall back to affine
                    zi = pow(rz, -1, p)
                    a = (rx * zi * zi % p, ry * zi * zi * zi % p)
                    doubled = _add(a, a)
                    if doubled is None:
                        rx, ry, rz = 0, 1, 0
                    else:
                        rx, ry, rz = doubled[0], doubled[1], 1
                    continue
                rx, ry, rz = 0, 1, 0
                continue
            h2 = h * h % p
            h3 = h2 * h % p
            v = rx * h2 % p
            nx = (r * r - h3 - 2 * v) % p
            ry = (r * (v - nx) - ry * h3) % p
            rx = nx
            rz = rz * h % p
    if not rz:
        return None
    zi = pow(rz, -1, p)
    return rx * zi * zi % p, ry * zi * zi * zi % p


def mul(point: Point, s: int) -> Point:
    if s % q == 0:
        raise Refused("multiplication by zero")
    return _jacobian_mul(point, s)


G: Point = (Gx, Gy)


def add(*points: Point) -> Point:
    total: Point = None
    for point in points:
        total = _add(total, point)
    return total


def neg(point: Point) -> Point:
    return None if point is None else (point[0], (-point[1]) % p)


def decode(data: bytes) -> Point:
    if len(data) != 33 or data[0] not in (2, 3):
        raise Refused("not a compressed point")
    x = int.from_bytes(data[1:], "big")
    if x >= p:
        raise Refused("x not below p")
    rhs = (x * x * x + 7) % p
    y = pow(rhs, (p + 1) // 4, p)
    if y * y % p != rhs:
        raise Refused("not on the curve")
    if y % 2 != data[0] - 2:
        y = p - y
    return x, y


def encode(point: Point) -> bytes:
    if point is None:
        raise Refused("the identity has no encoding")
    x, y = point
    return bytes([2 + (y & 1)]) + x.to_bytes(32, "big")


def field(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def hash_to_scalar(domain: bytes, *parts: bytes) -> int:
    data = field(domain) + b"".join(field(part) for part in parts)
    return int.from_bytes(hashlib.sha512(data).digest(), "big") % q


def hash_to_point(domain: bytes, label: bytes) -> bytes:
    c = 0
    while True:
        h = hashlib.sha256(field(domain) + field(label) + field(c.to_bytes(4, "big"))).digest()
        x = int.from_bytes(h, "big")
        if x < p and pow((x**3 + 7) % p, (p - 1) // 2, p) == 1:
            return b"\x02" + h
        c += 1


GENERATORS = b"canasta-net/blind/generator/v2"


def scalar(data: bytes) -> int:
    value = int.from_bytes(data, "big")
    if len(data) != 32 or value >= q:
        raise Refused("not a scalar")
    return value


# --------------------------------------------------------------------- secrets (section 3)
def hand_bytes(table: bytes, hand_no: int) -> bytes:
    return field(table) + field(hand_no.to_bytes(8, "big"))


def derive_scalar(
    table: bytes, hand_no: int, seat: int, seed: bytes, purpose: bytes, i: int
) -> int:
    c = 0
    while True:
        data = (
            field(b"canasta-net/blind/scalar/v2")
            + hand_bytes(table, hand_no)
            + field(bytes([seat]))
            + field(seed)
            + field(purpose)
            + field(i.to_bytes(4, "big"))
            + field(c.to_bytes(4, "big"))
        )
        v = int.from_bytes(hashlib.sha256(data).digest(), "big")
        if 1 <= v < q:
            return v
        c += 1


def permutation(table: bytes, hand_no: int, seat: int, seed: bytes, n: int) -> list[int]:
    """docs/blind-deal.md section 4, "Permutation" (the version 1 derivation, unchanged)."""
    ctx = hand_bytes(table, hand_no) + field(bytes([seat])) + field(seed)
    perm_seed = hashlib.sha256(
        field(b"canasta-net/blind/permutation/v1") + ctx + field(n.to_bytes(4, "big"))
    ).digest()
    return shuffled(perm_seed, n)


# --------------------------------------------------------------------- proofs (sections 4-7)
def verify_dleq(ctx: bytes, b1: bytes, a1: bytes, b2: bytes, a2: bytes, proof: bytes) -> None:
    if len(proof) != 64:
        raise Refused("a DLEQ proof is 64 bytes")
    c, s = scalar(proof[:32]), scalar(proof[32:])
    t1 = add(mul(decode(b1), s), neg(mul(decode(a1), c)))
    t2 = add(mul(decode(b2), s), neg(mul(decode(a2), c)))
    if (
        hash_to_scalar(b"canasta-net/blind/dleq/v2", ctx, b1, a1, b2, a2, encode(t1), encode(t2))
        != c
    ):
        raise Refused("the DLEQ challenge does not match")


def verify_shuffle(ctx: bytes, xs: list[bytes], ys: list[bytes], key: bytes, proof: bytes) -> None:
    m = len(xs)
    if len(ys) != m or int.from_bytes(proof[:4], "big") != m:
        raise Refused("sizes")
    if len(proof) != 4 + 130 * m + 160:
        raise Refused("a proof of the wrong length")
    at = 4
    u = [proof[at + 33 * i : at + 33 * i + 33] for i in range(m)]
    at += 33 * m
    c_hat = [proof[at + 33 * i : at + 33 * i + 33] for i in range(m)]
    at += 33 * m
    sc = [scalar(proof[at + 32 * i : at + 32 * i + 32]) for i in range(5 + 2 * m)]
    v, s_a, s_b, s_c, s_d = sc[:5]
    s_e, s_hat = sc[5 : 5 + m], sc[5 + m :]
    h = [decode(hash_to_point(GENERATORS, b"h" + str(j).encode())) for j in range(m)]
    h_chain = decode(hash_to_point(GENERATORS, b"chain"))
    statement = hashlib.sha256(
        field(b"canasta-net/blind/shuffle-statement/v2")
        + field(ctx)
        + field(m.to_bytes(4, "big"))
        + field(key)
        + field(b"".join(xs))
        + field(b"".join(ys))
    ).digest()
    e_seed = hashlib.sha256(
        field(b"canasta-net/blind/shuffle-e/v2") + field(statement) + field(b"".join(u))
    ).digest()
    e = [
        hash_to_scalar(b"canasta-net/blind/shuffle-e/v2", e_seed, i.to_bytes(4, "big"))
        for i in range(m)
    ]
    up = [decode(x) for x in u]
    cp = [decode(x) for x in c_hat]
    X = [decode(x) for x in xs]
    Y = [decode(y) for y in ys]
    K = decode(key)
    prod = 1
    for ei in e:
        prod = prod * ei % q
    A = add(*up, *(neg(hj) for hj in h))
    B = add(cp[-1], neg(mul(h_chain, prod)))
    C = add(*(mul(up[i], e[i]) for i in range(m)))
    y_hat = add(*(mul(Y[i], e[i]) for i in range(m)))
    t_a = add(mul(G, s_a), neg(mul(A, v)))
    t_b = add(mul(G, s_b), neg(mul(B, v)))
    t_c = add(mul(G, s_c), *(mul(h[j], s_e[j]) for j in range(m)), neg(mul(C, v)))
    t_d = add(*(mul(X[j], s_e[j]) for j in range(m)), neg(mul(y_hat, s_d)))
    t_k = add(mul(K, s_d), neg(mul(G, v)))
    previous = [h_chain, *cp[:-1]]
    t_hat = [add(mul(G, s_hat[j]), mul(previous[j], s_e[j]), neg(mul(cp[j], v))) for j in range(m)]
    again = hash_to_scalar(
        b"canasta-net/blind/shuffle-v/v2",
        e_seed,
        b"".join(c_hat),
        b"".join(encode(t) for t in (t_a, t_b, t_c, t_d, t_k)),
        b"".join(encode(t) for t in t_hat),
    )
    if again != v:
        raise Refused("the shuffle challenge does not match")


def stage_ctx(table: bytes, hand_no: int, stage: int, seat: int) -> bytes:
    return (
        field(b"canasta-net/blind/stage-proof/v2")
        + hand_bytes(table, hand_no)
        + field(bytes([stage]))
        + field(bytes([seat]))
    )


def check_vector(v: dict[str, Any]) -> None:
    """Everything in docs/vectors/blind-proofs.json, recomputed and checked (raises on a fault)."""
    table, hand_no = bytes.fromhex(v["table_id"]), v["hand_no"]
    labels = v["labels"]
    m = len(labels)
    cards = [hash_to_point(b"canasta-net/blind/card-point/v2", lab.encode()) for lab in labels]
    assert [c.hex() for c in cards] == v["card_points"], "card points"
    deck = cards
    for stage in (1, 2):
        for seat, s in enumerate(v["seats"]):
            seed = bytes.fromhex(s["seed"])
            k = derive_scalar(table, hand_no, seat, seed, b"deck", 0)
            ks = [derive_scalar(table, hand_no, seat, seed, b"position", j) for j in range(m)]
            assert encode(mul(G, k)).hex() == s["deck_key"], "deck public key"
            assert [encode(mul(G, kj)).hex() for kj in ks] == s["position_keys"], "position keys"
            out = [bytes.fromhex(x) for x in s[f"stage{stage}"]]
            proof = bytes.fromhex(s[f"stage{stage}_proof"])
            ctx = stage_ctx(table, hand_no, stage, seat)
            if stage == 1:
                perm = permutation(table, hand_no, seat, seed, m)
                assert out == [encode(mul(decode(deck[perm[i]]), k)) for i in range(m)], "stage 1"
                verify_shuffle(ctx, deck, out, bytes.fromhex(s["deck_key"]), proof)
            else:
                ki = pow(k, -1, q)
                assert out == [encode(mul(decode(deck[j]), ks[j] * ki)) for j in range(m)], (
                    "stage 2"
                )
                if int.from_bytes(proof[:4], "big") != m or len(proof) != 4 + 64 * m:
                    raise Refused("a stage-2 proof of the wrong length")
                for j in range(m):
                    verify_dleq(
                        ctx + field(j.to_bytes(4, "big")),
                        bytes.fromhex(s["deck_key"]),
                        bytes.fromhex(s["position_keys"][j]),
                        deck[j],
                        out[j],
                        proof[4 + 64 * j : 4 + 64 * j + 64],
                    )
            deck = out
    final_keys = [
        [
            derive_scalar(table, hand_no, seat, bytes.fromhex(s["seed"]), b"position", j)
            for seat, s in enumerate(v["seats"])
        ]
        for j in range(m)
    ]
    opened = []
    for j in range(m):
        product = 1
        for key in final_keys[j]:
            product = product * key % q
        opened.append(labels[cards.index(encode(mul(decode(deck[j]), pow(product, -1, q))))])
    assert opened == v["final_labels"], "final labels"
    d = v["dleq"]
    verify_dleq(*(bytes.fromhex(d[name]) for name in ("ctx", "b1", "a1", "b2", "a2", "proof")))
