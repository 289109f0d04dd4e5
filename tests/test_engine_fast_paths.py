"""The engine's fast paths agree with its full checks.

Listing legal actions skips checks that a candidate passes by construction; these tests list
every position reached by random self-play both ways, for every preset, and require the same list
in the same order.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canasta_net.rules import PRESETS, preset
from canasta_net.state import HandState

VARIANTS = sorted(PRESETS)


def _play_and_compare(variant: str, seed: int, max_steps: int = 2000) -> int:
    """Play one hand at random, comparing the fast and the full listing at every step; return
    the number of steps."""
    rules = preset(variant)
    rng = random.Random(seed)
    order = list(range(rules.deck_size))
    rng.shuffle(order)
    state = HandState(rules, order, dealer=rng.randrange(rules.players))
    steps = 0
    while not state.is_over and steps < max_steps:
        legal = state.legal_actions()
        assert legal == state.legal_actions_fully_checked(), f"step {steps}, {state.phase}"
        state.apply(rng.choice(legal))
        steps += 1
    assert state.legal_actions() == state.legal_actions_fully_checked()
    return steps


@pytest.mark.parametrize("variant", VARIANTS)
def test_fast_listing_agrees_with_full_check(variant: str) -> None:
    for seed in range(6):
        assert _play_and_compare(variant, seed) > 0


@settings(max_examples=40, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32 - 1))
def test_fast_listing_agrees_with_full_check_anywhere(variant: str, seed: int) -> None:
    _play_and_compare(variant, seed)
