"""A match: hands until a team reaches the target, the deal rotating, scores accumulating."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .rules import RuleSet
from .scoring import TeamScore, score_hand
from .state import HandState


class MatchOver(ValueError):
    """No further hand can be dealt: the match has ended."""


@dataclass(frozen=True, slots=True)
class MatchResult:
    """``winner`` is a team index, or None for a draw."""

    winner: int | None
    scores: tuple[int, ...]
    hands: int

    def describe(self, team_names: Sequence[str] | None = None) -> str:
        names = list(team_names or [f"team {t}" for t in range(len(self.scores))])
        score_text = ", ".join(f"{n} {s}" for n, s in zip(names, self.scores, strict=True))
        if self.winner is None:
            return f"draw after {self.hands} hands: {score_text}"
        return f"{names[self.winner]} wins after {self.hands} hands: {score_text}"


@dataclass
class Match:
    rules: RuleSet
    first_dealer: int = 0
    scores: list[int] = field(default_factory=list)
    hand_scores: list[list[TeamScore]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.scores:
            self.scores = [0] * self.rules.teams

    @property
    def hands_played(self) -> int:
        return len(self.hand_scores)

    @property
    def dealer(self) -> int:
        """The deal rotates clockwise, one seat a hand."""
        return (self.first_dealer + self.hands_played) % self.rules.players

    def minimums(self) -> list[int]:
        return [self.rules.initial_minimum(s) for s in self.scores]

    def new_hand(self, deck_order: Sequence[int]) -> HandState:
        if self.result is not None:
            raise MatchOver("the match is over")
        return HandState(self.rules, deck_order, self.dealer, self.minimums())

    def record_hand(self, state: HandState) -> list[TeamScore]:
        if not state.is_over:
            raise ValueError("the hand is not over yet")
        team_scores = score_hand(state)
        for team, score in enumerate(team_scores):
            self.scores[team] += score.total
        self.hand_scores.append(team_scores)
        return team_scores

    @property
    def result(self) -> MatchResult | None:
        """The outcome once a team has reached the target (or the match's hands are played),
        else None (play another hand)."""
        if self.rules.match_hands:
            if self.hands_played < self.rules.match_hands:
                return None
        elif max(self.scores) < self.rules.target:
            return None
        best = max(self.scores)
        leaders = [t for t, s in enumerate(self.scores) if s == best]
        if len(leaders) > 1:
            if self.rules.tie_policy == "play_on":
                return None
            return MatchResult(None, tuple(self.scores), self.hands_played)
        return MatchResult(leaders[0], tuple(self.scores), self.hands_played)
