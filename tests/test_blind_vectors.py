"""Blind deal: the test vector of docs/blind-deal.md, checked against the code and against an
independent implementation written from the document alone (pure-Python curve arithmetic)."""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path

import pytest

from canasta_net.deal.blind import (
    SeatSecrets,
    hash_to_x,
    initial_deck,
    replay_deal,
    seal_key,
    stage1,
    stage2,
)
from canasta_net.deal.blind.keys import permutation_seed
from canasta_net.deal.blind.points import scalar_to_bytes
from canasta_net.deal.blind.protocol import StageOutput, encode_deck

DOC = Path(__file__).resolve().parent.parent / "docs" / "blind-deal.md"

P = 2**256 - 2**224 + 2**192 + 2**96 - 1
B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def vector() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- test-vector:", 1)[1].split("```", 2)[1]
    values = {}
    for line in block.strip().splitlines():
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    return values


V = vector()
TABLE = bytes.fromhex(V["table_id"])
HAND = int(V["hand_no"])
SEEDS = [bytes.fromhex(V[f"seed_{s}"]) for s in range(3)]
LABELS = V["labels"].split()


def _field(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def _ctx(seat: int) -> bytes:
    return (
        _field(TABLE)
        + _field(HAND.to_bytes(8, "big"))
        + _field(bytes([seat]))
        + _field(SEEDS[seat])
    )


def ref_scalar(seat: int, purpose: bytes, index: int) -> int:
    counter = 0
    while True:
        data = (
            _field(b"canasta-net/blind/scalar/v1")
            + _ctx(seat)
            + _field(purpose)
            + _field(index.to_bytes(4, "big"))
            + _field(counter.to_bytes(4, "big"))
        )
        v = int.from_bytes(hashlib.sha256(data).digest(), "big")
        if 1 <= v < N:
            return v
        counter += 1


def ref_permutation(seat: int, n: int) -> list[int]:
    seed = hashlib.sha256(
        _field(b"canasta-net/blind/permutation/v1") + _ctx(seat) + _field(n.to_bytes(4, "big"))
    ).digest()
    stream = hashlib.shake_256(_field(b"canasta-net/shuffle/v1") + _field(seed)).digest(4096)
    at, order = 0, list(range(n))
    for i in range(n - 1, 0, -1):
        k, mask = math.ceil(i.bit_length() / 8), 2 ** i.bit_length() - 1
        while True:
            v = int.from_bytes(stream[at : at + k], "big") & mask
            at += k
            if v <= i:
                break
        order[i], order[v] = order[v], order[i]
    return order


def ref_point(x: int) -> tuple[int, int]:
    rhs = (x**3 - 3 * x + B) % P
    y = pow(rhs, (P + 1) // 4, P)
    assert y * y % P == rhs
    return x, y


def ref_mul(k: int, point: tuple[int, int]) -> int:
    """x([k]P) by affine double-and-add: slow, simple, independent of OpenSSL."""
    result: tuple[int, int] | None = None
    addend: tuple[int, int] | None = point
    while k:
        if k & 1:
            result = _add(result, addend)
        addend = _add(addend, addend)
        k >>= 1
    assert result is not None
    return result[0]


def _add(a: tuple[int, int] | None, b: tuple[int, int] | None) -> tuple[int, int] | None:
    if a is None:
        return b
    if b is None:
        return a
    if a[0] == b[0] and (a[1] + b[1]) % P == 0:
        return None
    if a == b:
        slope = (3 * a[0] * a[0] - 3) * pow(2 * a[1], -1, P) % P
    else:
        slope = (b[1] - a[1]) * pow(b[0] - a[0], -1, P) % P
    x = (slope * slope - a[0] - b[0]) % P
    return x, (slope * (a[0] - x) - a[1]) % P


def test_card_points() -> None:
    for label in ("d0:AC", "d1:JK1"):
        assert hash_to_x(label).hex() == V[f"point_{label}"]


def test_seat_secrets() -> None:
    s0 = SeatSecrets.derive(TABLE, HAND, 0, SEEDS[0], len(LABELS))
    assert s0.commitment.hex() == V["commitment_0"]
    assert scalar_to_bytes(s0.deck_key).hex() == V["deck_key_0"]
    assert ref_scalar(0, b"deck", 0) == s0.deck_key
    for j in (0, 5):
        assert scalar_to_bytes(s0.position_keys[j]).hex() == V[f"pos_key_0_{j}"]
        assert ref_scalar(0, b"position", j) == s0.position_keys[j]
    assert permutation_seed(TABLE, HAND, 0, SEEDS[0], 8).hex() == V["perm_seed_0"]
    for seat in range(3):
        secrets = SeatSecrets.derive(TABLE, HAND, seat, SEEDS[seat], len(LABELS))
        expected = [int(v) for v in V[f"perm_{seat}"].split()]
        assert list(secrets.permutation) == expected == ref_permutation(seat, 8)
    assert s0.x25519_public.hex() == V["x25519_pub_0"]
    s1 = SeatSecrets.derive(TABLE, HAND, 1, SEEDS[1], len(LABELS))
    assert s1.x25519_public.hex() == V["x25519_pub_1"]
    reference_commitment = hashlib.sha256(_field(b"canasta-net/blind/commit/v1") + _ctx(0))
    assert reference_commitment.hexdigest() == V["commitment_0"]


def test_stages_and_final_deck() -> None:
    secrets = [SeatSecrets.derive(TABLE, HAND, s, SEEDS[s], len(LABELS)) for s in range(3)]
    outputs, incoming = [], initial_deck(LABELS)
    for function in (stage1, stage2):
        for seat in range(3):
            incoming = function(secrets[seat], incoming, 3)
            outputs.append(incoming)
    assert outputs[0][0].hex() == V["stage1_0_entry0"]
    for step, deck in enumerate(outputs):
        key = f"deck_sha256_{1 + step // 3}_{step % 3}"
        assert hashlib.sha256(encode_deck(deck)).hexdigest() == V[key]
    assert replay_deal(TABLE, HAND, LABELS, SEEDS, outputs) == V["final_labels"].split()
    body = StageOutput(TABLE, HAND, 1, 0, tuple(outputs[0])).body()
    assert hashlib.sha256(body).hexdigest() == V["stage_body_sha256_1_0"]


@pytest.mark.parametrize("position", [0, 7])
def test_curve_arithmetic_independently(position: int) -> None:
    """Stage 1 of seat 0 and the final deck, from the document's formulas in pure Python."""
    s0 = SeatSecrets.derive(TABLE, HAND, 0, SEEDS[0], len(LABELS))
    card = LABELS[s0.permutation[position]]
    x = ref_mul(ref_scalar(0, b"deck", 0), ref_point(int(hash_to_x(card).hex(), 16)))
    out = stage1(s0, initial_deck(LABELS), 3)
    assert out[position] == x.to_bytes(32, "big")
    # Final position j holds [Π k_{s,j}] card_point(final label j).
    final_label = V["final_labels"].split()[position]
    product = 1
    for seat in range(3):
        product = product * ref_scalar(seat, b"position", position) % N
    final_x = ref_mul(product, ref_point(int(hash_to_x(final_label).hex(), 16)))
    secrets = [SeatSecrets.derive(TABLE, HAND, s, SEEDS[s], len(LABELS)) for s in range(3)]
    deck = initial_deck(LABELS)
    for function in (stage1, stage2):
        for seat in range(3):
            deck = function(secrets[seat], deck, 3)
    assert deck[position] == final_x.to_bytes(32, "big")


def test_sealed_key() -> None:
    s0 = SeatSecrets.derive(TABLE, HAND, 0, SEEDS[0], len(LABELS))
    s1 = SeatSecrets.derive(TABLE, HAND, 1, SEEDS[1], len(LABELS))
    sealed = seal_key(
        s0.x25519_private,
        s1.x25519_public,
        TABLE,
        HAND,
        2,
        0,
        1,
        scalar_to_bytes(s0.position_keys[2]),
    )
    assert sealed.hex() == V["sealed_0_to_1_pos_2"]
    assert re.fullmatch(r"[0-9a-f]{96}", V["sealed_0_to_1_pos_2"])
