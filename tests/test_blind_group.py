"""The proof-carrying blind deal's group (``canasta_net.deal.blind.proofs.group``): the
constant-time multiplication a seat uses for its secret deck key agrees with the public one, and
refuses what the other refuses. Its time is the benchmark's (``scripts/bench_blind_proofs.py``
prints it for a multiplier of 1, one below 2⁶⁴ and a random one), never asserted here."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canasta_net.deal.blind.proofs import group

POINT = group.base(0x1234_5678_9ABC_DEF0)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=group.Q - 1))
def test_the_constant_time_product_is_the_product(s: int) -> None:
    assert group.encode(group.mul_secret(POINT, s)) == group.encode(group.mul(POINT, s))


@pytest.mark.parametrize("s", [1, 2, 2**64 - 1, 2**255, group.Q - 1, group.Q + 5])
def test_the_edges_agree_too(s: int) -> None:
    point = group.decode(group.encode(group.base(random.Random(s).randrange(1, group.Q))))
    assert group.encode(group.mul_secret(point, s)) == group.encode(group.mul(point, s))


@pytest.mark.parametrize("s", [0, group.Q, 2 * group.Q])
def test_a_multiplier_of_zero_is_refused(s: int) -> None:
    with pytest.raises(group.GroupError, match="multiplication by zero"):
        group.mul_secret(POINT, s)
