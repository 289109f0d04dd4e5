"""Computer analysis of a played game: every decision rated from what its seat could see.

For each action record of the chosen seats that was a real choice (at least two legal actions),
the searching bot (``canasta_net.search.SearchBot``, the same one that plays ``search``) evaluates
the move played and its policy's best few candidates over the same sampled deals, as expected
points for the seat's side (``docs/analysis.md``). The loss is the best candidate's value minus the
played move's; a loss over a threshold earns a mark (``?!``, ``?``, ``??``).

**Information.** A decision is analysed from its *information set* (:func:`information_set`): the
position as a dictionary in which every card hidden from the seat (the other hands, the stock) is
replaced by the sorted multiset of those cards dealt in a fixed order. Two positions that the seat
cannot tell apart give the same information set, so the analysis cannot depend on the face-up log's
hidden cards; the work item that goes to a worker process holds nothing else of the position.
The search then re-deals those cards at random in every sampled deal, as the playing bot does.

**Reproducibility.** Each decision's search is seeded from ``--seed`` and the record number
(:func:`decision_seed`), so a fixed number of sampled deals gives the same numbers whichever worker
analyses it, in whatever order (``--jobs``). A time budget (``--budget``) does not: how many deals
fit in it depends on the machine.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from canasta_net import mayi
from canasta_net.canasta import bots as canasta_bots
from canasta_net.canasta.actions import parse_action as parse_canasta_action
from canasta_net.games import CANASTA, MAY_I
from canasta_net.log import records as R
from canasta_net.search import SearchBot, SearchGame

from .timeline import Step, Timeline

#: The searching bot's side of each game (how to read a position, its policy, its scoring).
SEARCH_GAMES: Final[dict[str, SearchGame]] = {
    CANASTA: canasta_bots.CANASTA_SEARCH,
    MAY_I: mayi.bots.MAYI_SEARCH,
}

#: Sampled deals a decision when no time budget is given: enough to separate a blunder from a
#: good move in most positions, few enough for a whole match in minutes (``docs/analysis.md``).
DEFAULT_SIMULATIONS: Final = 16

#: Marks by loss, in points a hand for the seat's side (the worst first): ``docs/analysis.md``.
#: Canasta's hands are worth hundreds (a natural canasta 500, going out 100); May I?'s penalties
#: tens (an ace 15, a joker 50), so its thresholds are smaller.
THRESHOLDS: Final[dict[str, tuple[tuple[str, float], ...]]] = {
    CANASTA: (("??", 300.0), ("?", 150.0), ("?!", 75.0)),
    MAY_I: (("??", 40.0), ("?", 20.0), ("?!", 10.0)),
}
MARKS: Final = ("?!", "?", "??")


def mark_for(game: str, loss: float) -> str | None:
    """The mark a loss earns in ``game`` (None: no mark)."""
    for glyph, threshold in THRESHOLDS[game]:
        if loss >= threshold:
            return glyph
    return None


def decision_seed(seed: int, record: int) -> int:
    """The search seed of the decision at ``record``: the same whoever analyses it, and when."""
    digest = hashlib.sha256(f"canasta-replay/analysis {seed} {record}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def information_set(game: str, state: Any, seat: int) -> dict[str, Any]:
    """The position as ``seat`` (the seat to move) knows it: the searching bot's own information
    set (``SearchBot.information_set``): the cards hidden from the seat replaced by their sorted
    multiset, dealt to the same places in a fixed order, each place keeping its size and the
    cards it is known to hold. Positions the seat cannot tell apart give equal dictionaries."""
    if state.to_move != seat:
        raise ValueError(f"seat {seat} is not the seat to move")
    return SearchBot(SEARCH_GAMES[game], random.Random(0)).information_set(state)


@dataclass(frozen=True)
class DecisionTask:
    """One decision to analyse: everything a worker process receives (picklable, and nothing of
    the position beyond the seat's information set)."""

    record: int
    seat: int
    game: str
    position: dict[str, Any]  # the information set (``information_set``)
    played: str  # the action played, in canonical text
    seed: int  # ``decision_seed(--seed, record)``
    simulations: int | None  # sampled deals (None: the time budget decides)
    budget: float  # seconds, when ``simulations`` is None


@dataclass(frozen=True)
class DecisionResult:
    """The analysis of one decision; values are points a hand for the seat's side."""

    record: int
    seat: int
    played: str
    candidates: tuple[tuple[str, float], ...]  # every move tried, the best first
    deals: int

    @property
    def played_value(self) -> float:
        return dict(self.candidates)[self.played]

    @property
    def best(self) -> str:
        return self.candidates[0][0]

    @property
    def best_value(self) -> float:
        return self.candidates[0][1]

    @property
    def loss(self) -> float:
        return max(0.0, self.best_value - self.played_value)


def decision_tasks(
    timeline: Timeline,
    seats: Sequence[int] | None,
    *,
    seed: int,
    simulations: int | None,
    budget: float,
) -> list[DecisionTask]:
    """The decisions of ``seats`` (None: every seat) that had a choice, in record order."""
    tasks = []
    for step in timeline.steps:
        seat = decision_seat(step)
        if seat is None or (seats is not None and seat not in seats):
            continue
        assert step.action is not None
        tasks.append(
            decision_task(
                timeline.game.kind,
                step.before,
                step.action,
                step.record,
                seed=seed,
                simulations=simulations,
                budget=budget,
            )
        )
    return tasks


def decision_task(
    game: str,
    state: Any,
    played: str,
    record: int,
    *,
    seed: int,
    simulations: int | None,
    budget: float,
) -> DecisionTask:
    """The work item for the move ``played`` by the seat to move in ``state`` at ``record``: the
    seat's information set, never ``state`` itself."""
    seat = int(state.to_move)
    return DecisionTask(
        record=record,
        seat=seat,
        game=game,
        position=information_set(game, state, seat),
        played=played,
        seed=decision_seed(seed, record),
        simulations=simulations,
        budget=budget,
    )


def decision_seat(step: Step) -> int | None:
    """The seat whose decision an action record is, if it had a choice (None otherwise)."""
    if step.kind != R.ACTION or step.before is None or step.action is None:
        return None
    state = step.before
    if state.is_over or len(state.legal_actions()) < 2:
        return None
    return int(state.to_move)


def analyse(task: DecisionTask) -> DecisionResult:
    """Evaluate the played move and the policy's best candidates with the searching bot, from
    the seat's information set alone (runs in a worker process with ``--jobs``)."""
    search = SEARCH_GAMES[task.game]
    state = search.from_dict(task.position)
    bot = search.bot(random.Random(task.seed), task.budget, task.simulations)
    legal = state.legal_actions()
    tried = bot.candidates_in(state)  # what the bot itself would try
    texts = [str(action) for action in tried]
    if task.played not in texts:
        played = next((a for a in legal if str(a) == task.played), None)
        if played is None:
            # a legal move the listing leaves out (the engine checks it when the log is replayed)
            played = _parse(task.game, task.played)
        tried.append(played)
    values = bot.evaluate(state, tried)
    ranked = sorted(
        ((str(action), round(value, 1)) for action, value in values), key=lambda c: -c[1]
    )
    return DecisionResult(task.record, task.seat, task.played, tuple(ranked), bot.deals_tried)


def _parse(game: str, text: str) -> Any:
    return mayi.parse_action(text) if game == MAY_I else parse_canasta_action(text)


def result_to_dict(result: DecisionResult) -> dict[str, Any]:
    return {
        "record": result.record,
        "seat": result.seat,
        "played": result.played,
        "played_value": result.played_value,
        "best": result.best,
        "best_value": result.best_value,
        "loss": round(result.loss, 1),
        "candidates": [{"action": a, "value": v} for a, v in result.candidates],
        "deals": result.deals,
    }


def result_from_dict(data: Mapping[str, Any]) -> DecisionResult:
    """A decision read back from the analysis file (checked by the caller's schema)."""
    return DecisionResult(
        record=int(data["record"]),
        seat=int(data["seat"]),
        played=str(data["played"]),
        candidates=tuple((str(c["action"]), float(c["value"])) for c in data["candidates"]),
        deals=int(data["deals"]),
    )
