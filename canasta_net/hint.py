"""A suggested move with a short reason, for any client: the searching bot's choice.

``suggest(state)`` asks the searching bot what the seat to move should play and says why in one
sentence. It reads only what that seat may see (``docs/bots.md``), so a client may call it with
the state it holds for its own seat.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import mayi
from .canasta.bots import search_bot as canasta_search_bot
from .canasta.state import HandState
from .search import SearchBot


@dataclass(frozen=True)
class Suggestion:
    action: Any
    reason: str

    def __str__(self) -> str:
        return f"{self.action}: {self.reason}"


def search_bot_for(
    state: Any, rng: random.Random, budget: float = 0.5, simulations: int | None = None
) -> SearchBot:
    """The searching bot of ``state``'s game."""
    if isinstance(state, HandState):
        return canasta_search_bot(rng, budget, simulations)
    if isinstance(state, mayi.DealState):
        return mayi.bots.search_bot(rng, budget, simulations)
    raise TypeError(f"no game's state: {type(state).__name__}")


def suggest(
    state: Any,
    budget: float = 0.5,
    simulations: int | None = None,
    rng: random.Random | None = None,
) -> Suggestion:
    """The move the searching bot would play for the seat to move in ``state``, and why (in
    this thread: a reactor uses ``canasta_net.bot_pool.BotPool.suggest_later``)."""
    bot = search_bot_for(state, rng or random.Random(), budget, simulations)
    action = bot.choose_in(state)
    return suggestion_of(action, bot.last, bot.deals_tried)


def suggestion_of(action: Any, tried: Sequence[tuple[Any, float]], deals: int) -> Suggestion:
    """A searched ``action`` with its reason: ``tried`` are the candidates' mean values over
    ``deals`` sampled deals (empty: the search did not run, the heuristic chose)."""
    if not tried:
        return Suggestion(action, "the usual play (there was no time to search it)")
    if len(tried) <= 1:
        return Suggestion(action, "the only move worth considering here")
    value = dict((str(a), v) for a, v in tried)[str(action)]
    others = [(str(a), v) for a, v in tried if str(a) != str(action)]
    runner, runner_value = max(others, key=lambda t: t[1])
    if value < runner_value:
        reason = (
            f"the usual play; in {deals} sampled deals '{runner}' did not do better "
            f"by enough to prefer it"
        )
    else:
        reason = (
            f"best of {len(tried)} candidates over {deals} sampled deals: "
            f"{value - runner_value:+.0f} points a deal over '{runner}'"
        )
    return Suggestion(action, reason)
