"""Engine-only self-play: whole matches between bots, counting speed, stalls and errors."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .canasta.bots import NoLegalAction
from .canasta.state import HandState
from .errors import IllegalAction
from .games import game_of_rules
from .log.records import shown_number
from .selfplay import play_to_end


@dataclass
class SimulationReport:
    variant: str
    bots: list[str]
    hands: int = 0
    matches: int = 0
    actions: int = 0
    stalls: int = 0
    errors: int = 0
    seconds: float = 0.0
    end_reasons: Counter[str] = field(default_factory=Counter)
    error_samples: list[str] = field(default_factory=list)

    @property
    def hands_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds else 0.0

    @property
    def actions_per_second(self) -> float:
        return self.actions / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "bots": self.bots,
            "hands": self.hands,
            "matches": self.matches,
            "actions": self.actions,
            "stalls": self.stalls,
            "errors": self.errors,
            "seconds": round(self.seconds, 3),
            "hands_per_second": round(self.hands_per_second, 1),
            "actions_per_second": round(self.actions_per_second, 1),
            "end_reasons": dict(self.end_reasons),
            "error_samples": self.error_samples[:5],
        }


def cards_in_play(state: HandState) -> int:
    return state.cards_in_play()


def play_hand(
    state: Any,
    bots: Sequence[Any],
    on_action: Callable[[Any, int, Any], None] | None = None,
    max_actions: int = 20000,
) -> int:
    """Play ``state`` to its end with one bot per seat; return the number of actions."""
    return play_to_end(state, bots, on_action, max_actions)


def simulate(
    rules: Any,
    hands: int,
    seed: int = 0,
    bot_kinds: Sequence[str] = ("random",),
    progress: Callable[[int], None] | None = None,
) -> SimulationReport:
    """Play ``hands`` hands in consecutive matches; count stalls and errors instead of raising.

    ``rules`` is any game's rule set (a Canasta ``RuleSet`` or ``MayIRules``).
    """
    game = game_of_rules(rules)
    rng = random.Random(seed)
    kinds = [bot_kinds[i % len(bot_kinds)] for i in range(game.players)]
    bots = [game.make_bot(k, random.Random(rng.getrandbits(64))) for k in kinds]
    report = SimulationReport(game.name, kinds)
    match = game.new_match()
    start = time.perf_counter()
    while report.hands < hands:
        if match.result is not None:
            report.matches += 1
            match = game.new_match(first_dealer=rng.randrange(game.players))
        order = list(range(game.deck_size))
        rng.shuffle(order)
        state = match.new_hand(order)
        try:
            report.actions += play_hand(state, bots)
            if game.cards_in_play(state) != game.deck_size:
                raise AssertionError("cards not conserved")
        except NoLegalAction as e:
            report.stalls += 1
            report.error_samples.append(f"hand {shown_number(report.hands)}: stall: {e}")
            match = game.new_match()
        except (IllegalAction, AssertionError, ValueError) as e:
            report.errors += 1
            report.error_samples.append(
                f"hand {shown_number(report.hands)}: {type(e).__name__}: {e}"
            )
            match = game.new_match()
        else:
            match.record_hand(state)
            assert state.end is not None
            report.end_reasons[state.end.reason.value] += 1
        report.hands += 1
        if progress is not None:
            progress(report.hands)
    report.seconds = time.perf_counter() - start
    if match.result is not None:
        report.matches += 1
    return report
