"""The engine's hooks for a searching bot: the lays alone (``legal_lays``) and the meld version.

Along random play of every preset, with copies made and moves tried in them as a search does:
``legal_lays`` lists exactly the lays of ``legal_actions``, in its order; and two states that
show the same ``meld_version`` show the same melds, while a move that changes a meld gives its
state a number no state had.
"""

from __future__ import annotations

import random

import pytest

from canasta_net.canasta.actions import AddToMeld, Meld, MergeMelds
from canasta_net.canasta.rules import PRESETS, preset
from canasta_net.canasta.state import HandState, Phase

VARIANTS = sorted(PRESETS)
LAYS = (Meld, AddToMeld, MergeMelds)


def _melds(state: HandState) -> tuple[object, ...]:
    """What the melds show (the engine's fields of each, team by team)."""
    return tuple(
        tuple((m.kind, m.rank, tuple(m.cards), m.naturals, m.wilds, m.low, m.high) for m in team)
        for team in state.melds
    )


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_lays_alone_are_the_lays_of_the_listing_and_meld_versions_name_the_melds(
    variant: str,
) -> None:
    rules = preset(variant)
    rng = random.Random(f"hooks-{variant}")
    shown: dict[int, tuple[object, ...]] = {}  # each version seen -> the melds it showed
    lays_seen = changes = 0
    for _ in range(2):
        order = list(range(rules.deck_size))
        rng.shuffle(order)
        state = HandState(rules, order, dealer=0)
        assert state.meld_version not in shown  # a new hand: a new number
        while not state.is_over:
            assert shown.setdefault(state.meld_version, _melds(state)) == _melds(state)
            lays = state.legal_lays()
            legal = state.legal_actions()
            assert lays == [a for a in legal if isinstance(a, LAYS)]
            if state.phase not in (Phase.PLAY, Phase.PILE_PENDING):
                assert lays == []
            lays_seen += len(lays)
            # a search's trial: a copy keeps the number, a move changing its melds renews it
            # there only
            before, version = _melds(state), state.meld_version
            trial = state.copy()
            assert trial.meld_version == version
            trial.apply(rng.choice(lays or legal))
            assert state.meld_version == version and _melds(state) == before
            if _melds(trial) != before:
                assert trial.meld_version not in shown
            assert shown.setdefault(trial.meld_version, _melds(trial)) == _melds(trial)
            action = rng.choice(lays) if lays and rng.random() < 0.5 else rng.choice(legal)
            state.apply(action)
            if _melds(state) != before:
                changes += 1
                assert state.meld_version != version
    assert lays_seen and changes
