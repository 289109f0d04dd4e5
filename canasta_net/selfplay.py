"""Bots playing a hand to its end: the loop every game's self-play shares."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


class NoLegalAction(RuntimeError):
    """The engine listed no legal action for a position that is not over (a stall)."""


def choose_for(bot: Any, state: Any) -> Any:
    """Ask ``bot`` for the move of the seat to move in ``state`` (any game's state): a bot with
    a ``choose_in(state)`` method chooses from the state itself, any other from its legal list."""
    choose_in = getattr(bot, "choose_in", None)
    if choose_in is not None:
        return choose_in(state)
    return choose_from_list(bot, state)


def choose_from_list(bot: Any, state: Any) -> Any:
    """Ask ``bot`` to choose among the legal actions listed in ``state``."""
    legal = state.legal_actions()
    if not legal:
        raise NoLegalAction(f"no legal action in phase {state.phase.value}")
    return bot.choose(legal, state.hand_faces(state.to_move), state.rules)


def play_to_end(
    state: Any,
    bots: Sequence[Any],
    on_action: Callable[[Any, int, Any], None] | None = None,
    max_actions: int = 50_000,
) -> int:
    """Play ``state`` to its end with one bot per seat; return the number of actions."""
    actions = 0
    while not state.is_over:
        seat = state.to_move
        action = choose_for(bots[seat], state)
        state.apply(action, seat)
        actions += 1
        if on_action is not None:
            on_action(state, seat, action)
        if actions >= max_actions:
            raise NoLegalAction(f"the hand did not end after {max_actions} actions")
    return actions
