"""What an action did to the hidden and public cards: the one place the host and the replayer
compute it, so that what the host journals and what an auditor expects cannot drift apart.

Works for every game's state: ``hands``, ``pile`` and ``stock`` always; ``red_threes`` and a
pending pile (``t.pending_pile``) where the game has them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Snapshot:
    hands: list[set[int]]
    red_threes: list[int] | None
    pile: set[int]


@dataclass(frozen=True)
class Effects:
    new_cards: dict[int, tuple[list[int], list[int]]]  # seat -> (drawn from stock, from pile)
    red_threes: list[list[int]] | None  # red threes laid, per seat, when any were


def _pile_cards(state: Any) -> set[int]:
    pending = getattr(getattr(state, "t", None), "pending_pile", [])
    return set(state.pile) | set(pending)


def snapshot(state: Any) -> Snapshot:
    reds = getattr(state, "red_threes", None)
    return Snapshot(
        [set(hand) for hand in state.hands],
        None if reds is None else [len(r) for r in reds],
        _pile_cards(state),
    )


def action_effects(before: Snapshot, state: Any) -> Effects:
    new_cards: dict[int, tuple[list[int], list[int]]] = {}
    for seat, hand in enumerate(state.hands):
        new = [c for c in hand if c not in before.hands[seat]]
        if new:
            drawn = [c for c in new if c not in before.pile]
            picked = [c for c in new if c in before.pile]
            new_cards[seat] = (drawn, picked)
    red_threes = None
    if before.red_threes is not None:
        laid = [reds[n:] for reds, n in zip(state.red_threes, before.red_threes, strict=True)]
        if any(laid):
            red_threes = laid
    return Effects(new_cards, red_threes)


def public_deal_fields(state: Any) -> dict[str, Any]:
    """The public part of a fresh deal: the pile (upcards), red threes laid, the stock's size."""
    fields: dict[str, Any] = {"pile": list(state.pile), "stock": len(state.stock)}
    reds = getattr(state, "red_threes", None)
    if reds is not None:
        fields["red_threes"] = [list(r) for r in reds]
    return fields
