"""Shared helpers for the rule-case tests: short positions, and actions that must be legal or
refused with a given reason code."""

from __future__ import annotations

from typing import Any

import pytest

from canasta_net.canasta.actions import Action, AddToMeld, Meld, TakePile, parse_action
from canasta_net.canasta.position import position_from_dict, position_to_dict
from canasta_net.canasta.rules import RuleSet, preset
from canasta_net.canasta.state import HandState, Phase
from canasta_net.errors import REASONS, IllegalAction


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


def _key(action: Action) -> object:
    if isinstance(action, Meld):
        return ("meld", tuple(sorted(action.cards)))
    if isinstance(action, TakePile):
        return ("take-pile", tuple(sorted(action.cards)), action.meld)
    if isinstance(action, AddToMeld):
        return ("add", action.meld, tuple(sorted(action.cards)))
    return action


def _listed(state: HandState, action: Action) -> bool:
    keys = {_key(a) for a in state.legal_actions()}
    return _key(state.normalize(action)) in keys


def act(state: HandState, *texts: str, seat: int | None = None) -> None:
    """Apply actions that must be legal (and listed among the legal actions)."""
    for text in texts:
        action = parse_action(text)
        assert state.is_legal(action, seat), f"{text!r} should be legal"
        assert _listed(state, action), f"{text!r} is legal but not listed"
        state.apply(action, seat)


def rejects(state: HandState, text: str, code: str, seat: int | None = None) -> IllegalAction:
    """The action is refused with ``code``, the state is unchanged, and it is not listed."""
    assert code in REASONS, code
    action = parse_action(text)
    before = position_to_dict(state)
    with pytest.raises(IllegalAction) as info:
        state.apply(action, seat)
    assert info.value.code == code, f"{text!r}: {info.value.code} ({info.value})"
    assert position_to_dict(state) == before
    assert not state.is_legal(action, seat)
    if seat is None:
        assert not _listed(state, action)
    return info.value


def phase_of(state: HandState) -> Phase:
    """The phase, read through a call so that type checkers do not narrow it across actions."""
    return state.phase


def faces(state: HandState, seat: int) -> list[str]:
    return sorted(state.deck.card_text(c) for c in state.hands[seat])


def texts(state: HandState, cards: list[int]) -> list[str]:
    return sorted(state.deck.card_text(c) for c in cards)
