"""The games a table can host: the Canasta family (one engine, many rule sets) and "May I?".

Everything outside the engines — the table, the log, the replayer, the bots at a remote seat,
``canasta simulate`` — goes through :class:`Game`, so that neither engine needs to know the
other exists. A log's header names the game (``game``), the preset (``variant``) and the full rule
set (``rules``); :func:`game_from_header` rebuilds the game from them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from . import mayi
from .canasta.actions import parse_action as parse_canasta_action
from .canasta.bots import make_bot as make_canasta_bot
from .canasta.match import Match, MatchResult
from .canasta.position import seat_view as canasta_seat_view
from .canasta.rules import PRESETS, RuleSet, RuleSetError, preset
from .canasta.scoring import score_hand as score_canasta_hand

CANASTA = "canasta"
MAY_I = "may-i"


class UnknownGame(ValueError):
    """A variant or game that this version does not know."""


class GameMatch(Protocol):
    """What the table and the replayer need of a match, whatever the game."""

    @property
    def dealer(self) -> int: ...

    @property
    def scores(self) -> list[int]: ...

    @property
    def hands_played(self) -> int: ...

    @property
    def result(self) -> Any: ...

    def minimums(self) -> list[int]: ...

    def new_hand(self, deck_order: Sequence[int]) -> Any: ...

    def record_hand(self, state: Any) -> list[Any]:
        """Score a finished hand into the match: per team (or seat), objects with ``total``
        and ``to_dict()``."""
        ...


@dataclass(frozen=True)
class SeatPoints:
    """A May I? seat's penalty points for a deal."""

    total: int

    def to_dict(self) -> dict[str, int]:
        return {"total": self.total}


class CanastaMatch:
    def __init__(self, rules: RuleSet, first_dealer: int) -> None:
        self.match = Match(rules, first_dealer)

    @property
    def dealer(self) -> int:
        return self.match.dealer

    @property
    def scores(self) -> list[int]:
        return self.match.scores

    @property
    def hands_played(self) -> int:
        return self.match.hands_played

    @property
    def result(self) -> Any:
        return self.match.result

    def minimums(self) -> list[int]:
        return self.match.minimums()

    def new_hand(self, deck_order: Sequence[int]) -> Any:
        return self.match.new_hand(deck_order)

    def record_hand(self, state: Any) -> list[Any]:
        return list(self.match.record_hand(state))


class MayIMatchAdapter:
    def __init__(self, rules: mayi.MayIRules, first_dealer: int) -> None:
        self.match = mayi.MayIMatch(rules, first_dealer)

    @property
    def dealer(self) -> int:
        return self.match.dealer

    @property
    def scores(self) -> list[int]:
        return self.match.scores

    @property
    def hands_played(self) -> int:
        return self.match.deals_played

    @property
    def result(self) -> MatchResult | None:
        """As for Canasta (winner, totals, hands); each seat is its own side, lowest wins."""
        result = self.match.result
        if result is None:
            return None
        return MatchResult(result.winner, result.scores, result.deals)

    def minimums(self) -> list[int]:
        return []

    def new_hand(self, deck_order: Sequence[int]) -> Any:
        return self.match.new_deal(deck_order)

    def record_hand(self, state: Any) -> list[Any]:
        return [SeatPoints(points) for points in self.match.record_deal(state)]


@dataclass(frozen=True)
class Game:
    kind: str
    rules: Any  # RuleSet or mayi.MayIRules

    @property
    def name(self) -> str:
        return str(self.rules.name)

    @property
    def description(self) -> str:
        return str(self.rules.description)

    @property
    def players(self) -> int:
        return int(self.rules.players)

    @property
    def deck_size(self) -> int:
        return int(self.rules.deck_size)

    @property
    def teams(self) -> int:
        return int(self.rules.teams) if self.kind == CANASTA else self.players

    @property
    def lowest_wins(self) -> bool:
        return self.kind == MAY_I

    def team_of(self, seat: int) -> int:
        return int(self.rules.team_of(seat)) if self.kind == CANASTA else seat

    def rules_dict(self) -> dict[str, Any]:
        return dict(self.rules.to_dict())

    def parse_action(self, text: str) -> Any:
        if self.kind == MAY_I:
            return mayi.parse_action(text)
        return parse_canasta_action(text)

    def new_match(self, first_dealer: int = 0) -> GameMatch:
        if self.kind == MAY_I:
            return MayIMatchAdapter(self.rules, first_dealer)
        return CanastaMatch(self.rules, first_dealer)

    def seat_view(self, state: Any, seat: int) -> dict[str, Any]:
        view = mayi.seat_view(state, seat) if self.kind == MAY_I else canasta_seat_view(state, seat)
        return {"game": self.kind, **view}

    def make_bot(self, kind: str, rng: random.Random) -> Any:
        if self.kind == MAY_I:
            return mayi.make_bot(kind, rng)
        return make_canasta_bot(kind, rng)

    def score_hand(self, state: Any) -> list[Any]:
        """A finished hand's scores, per team (or seat), as ``GameMatch.record_hand`` gives them,
        without recording them in any match (for what-if lines)."""
        if self.kind == MAY_I:
            return [SeatPoints(points) for points in mayi.deal_scores(state)]
        return list(score_canasta_hand(state))

    def cards_in_play(self, state: Any) -> int:
        return int(state.cards_in_play())

    def forfeit_winner(self, scores: Sequence[int], forfeiting_seat: int) -> int | None:
        """The team that wins when a seat forfeits: the best of the others, if only one."""
        loser = self.team_of(forfeiting_seat)
        others = [t for t in range(self.teams) if t != loser]
        if len(others) != 1:
            return None
        return others[0]


def canasta_game(rules: RuleSet) -> Game:
    return Game(CANASTA, rules)


def game_of_rules(rules: Any) -> Game:
    """The game a rule set belongs to."""
    return Game(MAY_I, rules) if isinstance(rules, mayi.MayIRules) else Game(CANASTA, rules)


def game_for(variant: str, players: int | None = None) -> Game:
    """The game of a preset name (``classic``, ``samba``, ``may-i``...)."""
    if variant in mayi.PRESETS:
        try:
            return Game(MAY_I, mayi.preset(variant, players))
        except mayi.MayIRulesError as e:
            raise UnknownGame(str(e)) from None
    try:
        rules = preset(variant)
    except RuleSetError as e:
        raise UnknownGame(f"{e}; also {', '.join(mayi.PRESETS)}") from None
    if players is not None and players != rules.players:
        raise UnknownGame(f"{variant} is played by {rules.players}")
    return Game(CANASTA, rules)


def game_from_header(kind: str, rules: dict[str, Any]) -> Game:
    """Rebuild a game from a log header's ``game`` and ``rules``."""
    try:
        if kind == MAY_I:
            return Game(MAY_I, mayi.MayIRules.from_dict(rules))
        if kind == CANASTA:
            return Game(CANASTA, RuleSet.from_dict(rules))
    except (ValueError, TypeError) as e:  # the rule sets' own errors are ValueErrors too
        raise UnknownGame(f"unusable rule set: {e}") from None
    raise UnknownGame(f"unknown game {kind!r}")


def all_variants() -> list[tuple[str, str]]:
    """Every preset with its one-line description."""
    out = [(name, rules.description) for name, rules in PRESETS.items()]
    out += [(name, rules.description) for name, rules in mayi.PRESETS.items()]
    return sorted(out)
