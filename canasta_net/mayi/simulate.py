"""Self-play for May I?: whole deals and games between bots, and a small speed benchmark."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..selfplay import play_to_end
from .actions import MayIAction
from .bots import MayIBot, make_bot
from .match import MayIMatch
from .rules import MayIRules, preset
from .state import DealState


def play_deal(
    state: DealState,
    bots: Sequence[MayIBot],
    on_action: Callable[[DealState, int, MayIAction], None] | None = None,
    max_actions: int = 50_000,
) -> int:
    """Play ``state`` to its end with one bot per seat; return the number of actions."""
    return play_to_end(state, bots, on_action, max_actions)


def play_match(
    rules: MayIRules, bots: Sequence[MayIBot], rng: random.Random, first_dealer: int = 0
) -> tuple[MayIMatch, int]:
    """A whole game (every deal) with shuffles from ``rng``; return it and the action count."""
    match, actions = MayIMatch(rules, first_dealer), 0
    while match.result is None:
        order = list(range(rules.deck_size))
        rng.shuffle(order)
        state = match.new_deal(order)
        actions += play_deal(state, bots)
        match.record_deal(state)
    return match, actions


def benchmark(
    deals: int = 200, players: int = 4, seed: int = 1, bot: str = "random"
) -> dict[str, Any]:
    """Random (or greedy) self-play speed on one core: deals ("hands") and actions per second."""
    rules = preset("may-i", players)
    rng = random.Random(seed)
    bots = [make_bot(bot, random.Random(rng.getrandbits(64))) for _ in range(players)]
    match, played, actions = MayIMatch(rules), 0, 0
    start = time.perf_counter()
    while played < deals:
        if match.result is not None:
            match = MayIMatch(rules, first_dealer=rng.randrange(players))
        order = list(range(rules.deck_size))
        rng.shuffle(order)
        state = match.new_deal(order)
        actions += play_deal(state, bots)
        match.record_deal(state)
        played += 1
    seconds = time.perf_counter() - start
    return {
        "variant": rules.name,
        "players": players,
        "bots": bot,
        "hands": played,
        "actions": actions,
        "seconds": round(seconds, 3),
        "hands_per_second": round(played / seconds, 1) if seconds else 0.0,
        "actions_per_second": round(actions / seconds, 1) if seconds else 0.0,
        "actions_per_hand": round(actions / max(1, played), 1),
    }
