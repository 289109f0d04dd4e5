"""The memo of pure checks (``canasta_net.memo``): off in the product, exact when on."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from canasta_net import memo
from canasta_net.identity import Identity, check_signature, signing_input


@pytest.fixture
def calls() -> Iterator[list[tuple[object, ...]]]:
    yield []
    memo.enable()  # the suite's state (conftest), whatever a test switched


@dataclass(frozen=True)
class Frozen:
    data: bytes


@dataclass
class Unfrozen:
    data: bytes


def _counted(calls: list[tuple[object, ...]]) -> Callable[..., list[int]]:
    @memo.pure
    def check(*args: object) -> list[int]:
        calls.append(args)
        if args and args[0] == b"bad":
            raise ValueError("refused")
        return [len(args)]

    return check


def test_a_result_is_kept_only_for_equal_inputs_of_the_same_types(
    calls: list[tuple[object, ...]],
) -> None:
    check = _counted(calls)
    assert memo.is_on()
    for args in [(b"a", 1), (b"a", True), (b"a", [1]), (b"a", (1,)), (b"b", 1), (Frozen(b"x"),)]:
        check(*args)
        check(*args)
    assert len(calls) == 6  # each once: 1 and True, a list and a tuple are told apart
    check(b"a", 1, 2)
    assert len(calls) == 7


def test_a_call_that_raised_or_an_unkeyable_argument_always_runs(
    calls: list[tuple[object, ...]],
) -> None:
    check = _counted(calls)
    for _ in range(2):
        with pytest.raises(ValueError):
            check(b"bad")
        check(bytearray(b"x"))
        check(Unfrozen(b"x"))
        check(1.0)
    assert len(calls) == 8


def test_a_check_that_returned_false_always_runs(calls: list[tuple[object, ...]]) -> None:
    @memo.pure
    def check(proof: bytes) -> bool:
        calls.append((proof,))
        return proof == b"good"

    for _ in range(2):
        assert check(b"good") and not check(b"bad")
    assert calls == [(b"good",), (b"bad",), (b"bad",)]


def test_a_kept_list_is_given_afresh_and_clear_and_off_run_the_call(
    calls: list[tuple[object, ...]],
) -> None:
    check = _counted(calls)
    first = check(b"a")
    first.append(99)
    assert check(b"a") == [1] and len(calls) == 1
    memo.clear()
    check(b"a")
    memo.disable()
    check(b"a")
    check(b"a")
    assert len(calls) == 4


def test_a_signature_that_passed_does_not_let_a_changed_one_pass() -> None:
    identity = Identity.from_seed(bytes(32))
    key = identity.private_key.public_key()
    signed = signing_input("test", b"message")
    signature = identity.private_key.sign(signed)
    check_signature(key, signature, signed)
    check_signature(key, signature, signed)  # kept
    with pytest.raises(InvalidSignature):
        check_signature(key, signature, signed + b"!")
    with pytest.raises(InvalidSignature):
        check_signature(key, bytes([signature[0] ^ 1]) + signature[1:], signed)
    other = Identity.from_seed(bytes([1]) * 32).private_key.public_key()
    with pytest.raises(InvalidSignature):
        check_signature(other, signature, signed)


def test_the_product_never_switches_the_memo_on_and_the_suites_processes_have_it_on() -> None:
    code = (
        "import canasta_net.ui.cli, canasta_net.net.host, canasta_net.log.replay, replay\n"
        "from canasta_net import memo\n"
        "print(memo.is_on())\n"
    )
    product = {k: v for k, v in os.environ.items() if k != memo.ENVIRONMENT}
    for env, on in ((product, "False"), (os.environ, "True")):
        found = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True
        )
        assert found.stdout.strip() == on, found.stderr


def test_group_points_are_keyed_by_their_value(calls: list[tuple[object, ...]]) -> None:
    """The blind deal's points (libsecp256k1 objects): one point decoded twice is one key, two
    points are two, and another C object is not keyed at all."""
    from canasta_net.deal.blind.proofs import group

    check = _counted(calls)
    point = group.base(7)
    again = group.mul(group.base(1), 7)  # the same point, made another way
    assert again is not point
    check(point)
    check(again)
    assert len(calls) == 1
    check(group.base(8))
    assert len(calls) == 2
    buffer = group._ffi.new("unsigned char[64]")
    check(buffer)
    check(buffer)
    assert len(calls) == 4  # an unsigned char[64] is not a point: never remembered


def test_public_keys_are_keyed_by_their_bytes(calls: list[tuple[object, ...]]) -> None:
    """A signing key (``identity`` registers how): one key made twice is one key, two are two."""
    check = _counted(calls)
    raw = Identity.from_seed(bytes(32)).private_key.public_key().public_bytes_raw()
    check(Ed25519PublicKey.from_public_bytes(raw))
    check(Ed25519PublicKey.from_public_bytes(raw))
    assert len(calls) == 1
    check(Identity.from_seed(bytes([1]) * 32).private_key.public_key())
    assert len(calls) == 2
