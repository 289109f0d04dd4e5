"""A game of May I?: five deals (one per contract), the deal rotating, penalty points adding up;
the lowest total wins."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .rules import MayIRules
from .scoring import deal_scores as score_deal
from .state import DealState


class MatchOver(ValueError):
    """No further deal can be dealt: the game has ended."""


@dataclass(frozen=True, slots=True)
class MatchResult:
    """``winner`` is the seat with the lowest total, or None when several share it (a draw)."""

    winner: int | None
    scores: tuple[int, ...]
    deals: int
    leaders: tuple[int, ...] = ()

    def describe(self, names: Sequence[str] | None = None) -> str:
        seat_names = list(names or [f"seat {s}" for s in range(len(self.scores))])
        score_text = ", ".join(f"{n} {s}" for n, s in zip(seat_names, self.scores, strict=True))
        if self.winner is None:
            tied = " and ".join(seat_names[s] for s in self.leaders)
            return f"draw between {tied} after {self.deals} deals: {score_text}"
        return f"{seat_names[self.winner]} wins after {self.deals} deals: {score_text}"


@dataclass
class MayIMatch:
    """The running score of a game; ``new_deal`` deals the next contract from a deck order."""

    rules: MayIRules
    first_dealer: int = 0
    scores: list[int] = field(default_factory=list)
    deal_scores: list[list[int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.scores:
            self.scores = [0] * self.rules.players
        if len(self.scores) != self.rules.players:
            raise ValueError("one score per seat")

    @property
    def deals_played(self) -> int:
        return len(self.deal_scores)

    @property
    def dealer(self) -> int:
        """The deal rotates one seat a deal, in turn order."""
        return (self.first_dealer + self.deals_played) % self.rules.players

    def new_deal(self, deck_order: Sequence[int]) -> DealState:
        if self.result is not None:
            raise MatchOver("the game is over: all deals have been played")
        return DealState(self.rules, deck_order, self.dealer, self.deals_played)

    def record_deal(self, state: DealState) -> list[int]:
        """Add a finished deal's penalty points; return them."""
        if not state.is_over:
            raise ValueError("the deal is not over yet")
        if state.deal != self.deals_played or state.rules != self.rules:
            raise ValueError(f"that is not deal {self.deals_played} of this game")
        if state.dealer != self.dealer:  # "the deal rotates": each deal has its one dealer
            raise ValueError(f"deal {state.deal} is dealt by seat {self.dealer}")
        points = score_deal(state)
        for seat, p in enumerate(points):
            self.scores[seat] += p
        self.deal_scores.append(points)
        return points

    @property
    def result(self) -> MatchResult | None:
        """The outcome once every deal has been played, else None."""
        if self.deals_played < self.rules.deals:
            return None
        best = min(self.scores)
        leaders = tuple(s for s, total in enumerate(self.scores) if total == best)
        winner = leaders[0] if len(leaders) == 1 else None
        return MatchResult(winner, tuple(self.scores), self.deals_played, leaders)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "first_dealer": self.first_dealer,
            "scores": list(self.scores),
            "deal_scores": [list(d) for d in self.deal_scores],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MayIMatch:
        rules = MayIRules.from_dict(data["rules"])
        deal_points = [[int(p) for p in d] for d in data.get("deal_scores", [])]
        if any(len(d) != rules.players for d in deal_points) or len(deal_points) > rules.deals:
            raise ValueError("deal_scores: one list of points per deal played, one per seat")
        totals = [sum(d[s] for d in deal_points) for s in range(rules.players)]
        scores = [int(s) for s in data.get("scores", totals)]
        if scores != totals:
            raise ValueError("the scores are not the sum of the deals' points")
        return cls(rules, int(data.get("first_dealer", 0)), scores, deal_points)
