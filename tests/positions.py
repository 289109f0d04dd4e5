"""Shared helpers for the rule-case tests: positions written the short way."""

from __future__ import annotations

from typing import Any

from canasta_net.position import position_from_dict
from canasta_net.rules import RuleSet, preset
from canasta_net.state import HandState


def short_position(
    rules: str | RuleSet,
    *,
    hands: dict[int, list[str]] | None = None,
    melds: dict[int, list[Any]] | None = None,
    pile: list[str] | None = None,
    stock: list[str] | None = None,
    red_threes: dict[int, list[str]] | None = None,
    turn: int = 0,
    phase: str = "play",
    minimums: list[int] | None = None,
    **extra: Any,
) -> HandState:
    """A position: seats and teams not mentioned hold nothing; melds are laid in earlier turns
    (turn -1) by the team's first seat unless given as dicts. The stock is listed bottom first:
    its last card is drawn first."""
    r = preset(rules) if isinstance(rules, str) else rules
    n, teams = r.players, r.teams
    hands = hands or {}
    melds = melds or {}
    red_threes = red_threes or {}
    data: dict[str, Any] = {
        "rules": rules if isinstance(rules, str) else r.to_dict(),
        "dealer": (turn - 1) % n,
        "turn": turn,
        "phase": phase,
        "minimums": minimums or [r.initial_minimum(0)] * teams,
        "hands": [hands.get(s, []) for s in range(n)],
        "stock": stock or [],
        "pile": pile or [],
        "melds": [
            [
                m if isinstance(m, dict) else {"cards": m, "turn": -1, "seat": t}
                for m in melds.get(t, [])
            ]
            for t in range(teams)
        ],
        "red_threes": [red_threes.get(s, []) for s in range(n)],
    }
    data.update(extra)
    return position_from_dict(data)
