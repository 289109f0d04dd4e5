"""Blind deal, the curve layer: hash-to-curve, x-only scalar multiplication, validation."""

from __future__ import annotations

import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from hypothesis import given, settings
from hypothesis import strategies as st

from canasta_net.deal.blind import (
    card_labels,
    card_points,
    hash_to_x,
    inverse,
    multiply,
    point_from_x,
)
from canasta_net.deal.blind.errors import BadParameters, BadScalar, InvalidPoint
from canasta_net.deal.blind.points import (
    CURVE,
    B,
    Multiplier,
    N,
    P,
    curve_rhs,
    is_valid_x,
    product,
    scalar_from_bytes,
    scalar_to_bytes,
    square_root,
)

labels_st = st.text(min_size=1, max_size=20)
scalars = st.integers(min_value=1, max_value=N - 1)


def _field(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def reference_hash_to_x(label: str) -> bytes:
    """Written from docs/blind-deal.md alone."""
    counter = 0
    while True:
        data = (
            _field(b"canasta-net/blind/card-point/v1")
            + _field(label.encode("utf-8"))
            + _field(counter.to_bytes(4, "big"))
        )
        digest = hashlib.sha256(data).digest()
        x = int.from_bytes(digest, "big")
        if x < P and pow((x**3 - 3 * x + B) % P, (P - 1) // 2, P) == 1:
            return digest
        counter += 1


def non_curve_x() -> bytes:
    x = 1
    while pow(curve_rhs(x), (P - 1) // 2, P) == 1:
        x += 1
    return x.to_bytes(32, "big")


# 30 labels: each is checked against the slow pure-Python reference (the vectors pin more)
@settings(max_examples=30, deadline=None)
@given(labels_st)
def test_hash_to_curve_is_on_the_curve(label: str) -> None:
    x = hash_to_x(label)
    assert x == reference_hash_to_x(label)
    point_from_x(x)  # validates
    xi = int.from_bytes(x, "big")
    y = square_root(curve_rhs(xi))
    assert (y * y - (xi**3 - 3 * xi + B)) % P == 0


@settings(max_examples=60, deadline=None)
@given(labels_st, labels_st)
def test_hash_to_curve_distinct_for_distinct_labels(a: str, b: str) -> None:
    assert (hash_to_x(a) == hash_to_x(b)) == (a == b)


def test_physical_duplicates_have_distinct_labels_and_points() -> None:
    labels = card_labels(2, 2)
    assert len(labels) == 108 and len(set(labels)) == 108
    assert labels[12] == "d0:KC" and labels[54 + 12] == "d1:KC"
    kh = [i for i, label in enumerate(labels) if label.endswith(":KH")]
    assert len(kh) == 2
    pts = card_points(labels)
    assert pts[kh[0]] != pts[kh[1]]
    assert len(set(pts)) == 108
    assert [label for label in labels if "JK" in label] == ["d0:JK0", "d0:JK1", "d1:JK0", "d1:JK1"]
    assert len(set(card_labels(3, 2))) == 162


def test_card_points_refuse_duplicate_labels() -> None:
    with pytest.raises(BadParameters):
        card_points(["a", "b", "a"])
    with pytest.raises(BadParameters):
        hash_to_x("")


@settings(max_examples=15, deadline=None)
@given(scalars, scalars, labels_st)
def test_encryption_commutes(a: int, b: int, label: str) -> None:
    x = hash_to_x(label)
    assert multiply(b, multiply(a, x)) == multiply(a, multiply(b, x))
    assert multiply(a, multiply(b, x)) == multiply(a * b % N, x)


@settings(max_examples=15, deadline=None)
@given(scalars, labels_st)
def test_inverse_decrypts(k: int, label: str) -> None:
    x = hash_to_x(label)
    assert multiply(inverse(k), multiply(k, x)) == x


def test_x_only_is_well_defined() -> None:
    """x([k]P) == x([k](-P)): both y parities give the same product."""
    x = hash_to_x("d0:AS")
    even = ec.EllipticCurvePublicKey.from_encoded_point(CURVE, b"\x02" + x)
    odd = ec.EllipticCurvePublicKey.from_encoded_point(CURVE, b"\x03" + x)
    key = ec.derive_private_key(123456789, CURVE)
    assert key.exchange(ec.ECDH(), even) == key.exchange(ec.ECDH(), odd)
    multiplier = Multiplier(123456789)
    assert multiplier(x) == multiplier.point(odd)


def test_point_validation() -> None:
    assert is_valid_x(hash_to_x("x"))
    with pytest.raises(InvalidPoint):
        point_from_x(non_curve_x())
    with pytest.raises(InvalidPoint):
        point_from_x(P.to_bytes(32, "big"))  # not below the field prime
    with pytest.raises(InvalidPoint):
        point_from_x(b"\xff" * 32)
    with pytest.raises(InvalidPoint):
        point_from_x(hash_to_x("x")[:31])
    with pytest.raises(InvalidPoint):
        multiply(5, non_curve_x())


def test_scalars() -> None:
    assert scalar_from_bytes(scalar_to_bytes(N - 1)) == N - 1
    for bad in (0, N, N + 1, -1):
        with pytest.raises(BadScalar):
            scalar_to_bytes(bad)
    with pytest.raises(BadScalar):
        scalar_from_bytes(bytes(32))
    with pytest.raises(BadScalar):
        scalar_from_bytes(N.to_bytes(32, "big"))
    with pytest.raises(BadScalar):
        scalar_from_bytes(b"\x01" * 31)
    with pytest.raises(BadScalar):
        inverse(0)
    assert product([2, 3, inverse(6)]) == 1
