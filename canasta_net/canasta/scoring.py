"""Scoring a finished hand, team by team, with every part of the total shown."""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass

from ..cards import SEVEN
from .melds import MeldKind, canasta_bonus
from .state import HandState


@dataclass(frozen=True, slots=True)
class TeamScore:
    """One team's result for a hand. ``total`` is the sum of the other fields."""

    melds: int  # value of every card in the team's melds
    canasta_bonus: int  # natural and mixed canastas
    red_threes: int  # plus or minus, with the all-red-threes bonus
    going_out: int  # 0, the going-out bonus, or the concealed / hand-canasta bonus
    cards_in_hand: int  # minus the value of cards left in the team's hands
    natural_canastas: int = 0
    mixed_canastas: int = 0

    @property
    def total(self) -> int:
        return (
            self.melds + self.canasta_bonus + self.red_threes + self.going_out - self.cards_in_hand
        )

    def to_dict(self) -> dict[str, int]:
        out = asdict(self)
        out["total"] = self.total
        return out


def _special_canasta(state: HandState, team: int) -> bool:
    """Bolivia: a bolivia, an escalera or a natural canasta of sevens."""
    rules = state.rules
    for m in state.melds[team]:
        if not m.is_canasta(rules):
            continue
        if m.kind in (MeldKind.WILDS, MeldKind.SEQUENCE):
            return True
        if m.kind is MeldKind.GROUP and m.rank == SEVEN and m.is_natural():
            return True
    return False


def red_three_score(state: HandState, team: int, seats: list[int] | None = None) -> int:
    """The red threes of ``seats`` (default: the team's), plus or minus by the team's melds."""
    rules = state.rules
    if seats is None:
        seats = [s for s in range(state.players) if state.team_of(s) == team]
    count = sum(len(state.red_threes[s]) for s in seats)
    if not count:
        return 0
    value = (
        rules.red_three_all_bonus
        if count == state.deck.red_threes
        else count * rules.red_three_bonus
    )
    condition = rules.red_three_positive_if
    if condition == "canasta":
        positive = state.canastas(team) >= 1
    elif condition == "two_canastas":
        positive = state.canastas(team) >= 2
    elif condition == "special_canasta":
        positive = _special_canasta(state, team)
    else:
        positive = bool(state.melds[team])
    return value if positive else -value


def score_hand(state: HandState) -> list[TeamScore]:
    """Score every team of a finished hand (any state can be scored, e.g. to show progress).

    In three-handed lone-hand play the result is per seat: each partner receives the
    partnership's score with his own red threes, the lone hand his own.
    """
    scores = _score_sides(state)
    if state.rules.three_player_mode != "lone_hand":
        return scores
    return [
        dataclasses.replace(
            scores[state.team_of(seat)],
            red_threes=red_three_score(state, state.team_of(seat), [seat]),
        )
        for seat in range(state.players)
    ]


def _score_sides(state: HandState) -> list[TeamScore]:
    rules = state.rules
    scores: list[TeamScore] = []
    for team in range(rules.teams):
        meld_points = natural = mixed = bonus = 0
        for m in state.melds[team]:
            meld_points += sum(rules.card_value(f) for f in m.faces)
            if m.is_canasta(rules):
                bonus += canasta_bonus(rules, m)
                if m.is_natural():
                    natural += 1
                else:
                    mixed += 1
        in_hand = sum(
            rules.left_in_hand_cost(f)
            for s in range(state.players)
            if state.team_of(s) == team
            for f in state.hand_faces(s)
        )
        end = state.end
        going_out = (
            end.going_out_bonus
            if end is not None and end.went_out is not None and state.team_of(end.went_out) == team
            else 0
        )
        scores.append(
            TeamScore(
                melds=meld_points,
                canasta_bonus=bonus,
                red_threes=red_three_score(state, team),
                going_out=going_out,
                cards_in_hand=in_hand,
                natural_canastas=natural,
                mixed_canastas=mixed,
            )
        )
    return scores
