"""The games a table can host: the Canasta family (one engine, many rule sets) and "May I?".

Everything outside the engines — the table, the log, the replayer, the bots at a remote seat,
``canasta simulate`` — goes through :class:`Game`, so that neither engine needs to know the
other exists. A log's header names the game (``game``), the preset (``variant``) and the full rule
set (``rules``); :func:`game_from_header` rebuilds the game from them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeAlias, TypeVar

from . import mayi
from .canasta.actions import parse_action as parse_canasta_action
from .canasta.bots import make_bot as make_canasta_bot
from .canasta.match import Match, MatchResult
from .canasta.position import public_view as canasta_public_view
from .canasta.position import seat_view as canasta_seat_view
from .canasta.rules import PRESETS, RuleSet, RuleSetError, preset
from .canasta.scoring import score_hand as score_canasta_hand
from .canasta.state import HandState
from .schema import kind_of

if TYPE_CHECKING:
    from .canasta.actions import Action

CANASTA = "canasta"
MAY_I = "may-i"


class UnknownGame(ValueError):
    """A variant or game that this version does not know."""


# ---------------------------------------------------------------------- what crosses the seam
class GameAction(Protocol):
    """An action of some game: a value whose ``str`` is its canonical text, which the game's
    ``parse_action`` reads back to an equal value. Only the game that made it can apply it."""

    def __str__(self) -> str: ...


ActionT = TypeVar("ActionT")


class GameRules(Protocol):
    """What is read of a rule set outside its engine (a ``RuleSet``, a ``MayIRules``)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def players(self) -> int: ...

    @property
    def deck_size(self) -> int: ...

    def team_of(self, seat: int) -> int: ...

    def to_dict(self) -> dict[str, Any]: ...


class GameEnd(Protocol):
    """How a hand (a deal) ended: a reason code and the seat that went out, if one did."""

    @property
    def reason(self) -> StrEnum: ...

    @property
    def went_out(self) -> int | None: ...


class GameState(Protocol[ActionT]):
    """One hand (a May I? deal) of some game, as the table, the log, the replayer, the bots and
    the tools use it: ``HandState`` and ``DealState`` both are one.

    ``ActionT`` is the engine's own action type: a state applies only its own game's actions.
    Where the game is chosen at run time the seam holds a :data:`AnyGameState`; actions then
    come from the same game's ``parse_action`` or from the state's own ``legal_actions``.
    """

    @property
    def rules(self) -> GameRules: ...

    @property
    def dealer(self) -> int: ...

    @property
    def players(self) -> int: ...

    @property
    def turn_no(self) -> int:
        """Turns completed so far (0-based)."""
        ...

    @property
    def phase(self) -> StrEnum: ...

    @property
    def to_move(self) -> int:
        """The one seat that must act next."""
        ...

    @property
    def is_over(self) -> bool: ...

    @property
    def end(self) -> GameEnd | None:
        """How the hand ended (None while it is under way)."""
        ...

    @property
    def hands(self) -> list[list[int]]:
        """Card ids per seat."""
        ...

    @property
    def stock(self) -> list[int]:
        """Card ids, top at the end."""
        ...

    @property
    def pile(self) -> list[int]:
        """The discard pile's card ids, top at the end."""
        ...

    @property
    def pile_top(self) -> int | None:
        """The top discard's face (None: the pile is empty)."""
        ...

    def faces(self, cards: Iterable[int]) -> list[int]: ...

    def hand_faces(self, seat: int) -> list[int]: ...

    def cards_in_play(self) -> int:
        """Every physical card, wherever it is (the deck's size, in any state)."""
        ...

    def legal_actions(self) -> list[ActionT]: ...

    def check(self, action: ActionT, seat: int | None = None) -> None:
        """Raise ``IllegalAction`` if ``action`` is not legal now; change nothing."""
        ...

    def is_legal(self, action: ActionT, seat: int | None = None) -> bool: ...

    def apply(self, action: ActionT, seat: int | None = None) -> None:
        """Perform ``action``, or raise ``IllegalAction`` and change nothing."""
        ...

    def normalize(self, action: ActionT) -> ActionT:
        """The form of ``action`` that ``legal_actions`` lists."""
        ...

    def copy(self) -> Self: ...


AnyGameState: TypeAlias = "GameState[Any]"
"""A state of a game chosen at run time: its action type is known only to its own engine."""


class HandScore(Protocol):
    """One team's (May I?: one seat's) score for a hand."""

    @property
    def total(self) -> int: ...

    def to_dict(self) -> dict[str, int]: ...


class GameBot(Protocol[ActionT]):
    """A bot of some game: it picks one of the legal actions it is shown."""

    name: str

    def choose(self, legal: Sequence[ActionT], hand: Sequence[int], rules: Any) -> ActionT: ...


class GameMatch(Protocol):
    """What the table and the replayer need of a match, whatever the game."""

    @property
    def dealer(self) -> int: ...

    @property
    def scores(self) -> list[int]: ...

    @property
    def hands_played(self) -> int: ...

    @property
    def result(self) -> MatchResult | None: ...

    def minimums(self) -> list[int]: ...

    def new_hand(self, deck_order: Sequence[int]) -> AnyGameState: ...

    def record_hand(self, state: AnyGameState) -> list[HandScore]:
        """Score a finished hand into the match, per team (or seat)."""
        ...


def _canasta_state(state: AnyGameState) -> HandState:
    if not isinstance(state, HandState):
        raise TypeError(f"not a Canasta hand: {type(state).__name__}")
    return state


def _mayi_state(state: AnyGameState) -> mayi.DealState:
    if not isinstance(state, mayi.DealState):
        raise TypeError(f"not a May I? deal: {type(state).__name__}")
    return state


# ---------------------------------------------------------------------- the two matches
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
    def result(self) -> MatchResult | None:
        return self.match.result

    def minimums(self) -> list[int]:
        return self.match.minimums()

    def new_hand(self, deck_order: Sequence[int]) -> HandState:
        return self.match.new_hand(deck_order)

    def record_hand(self, state: AnyGameState) -> list[HandScore]:
        return list(self.match.record_hand(_canasta_state(state)))


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

    def new_hand(self, deck_order: Sequence[int]) -> mayi.DealState:
        return self.match.new_deal(deck_order)

    def record_hand(self, state: AnyGameState) -> list[HandScore]:
        return [SeatPoints(points) for points in self.match.record_deal(_mayi_state(state))]


# ---------------------------------------------------------------------- one engine per game
class GameEngine(Protocol):
    """One game's side of the seam, bound to its rule set: everything :class:`Game` asks of
    a game that differs between the games. A new game is a new engine, never an ``if``."""

    @property
    def kind(self) -> str:
        """The game's name in a log header (``canasta``, ``may-i``)."""
        ...

    @property
    def rules(self) -> GameRules: ...

    @property
    def teams(self) -> int:
        """The sides that score: teams, or (May I?) every seat."""
        ...

    @property
    def lowest_wins(self) -> bool: ...

    def team_of(self, seat: int) -> int: ...

    def parse_action(self, text: str) -> GameAction: ...

    def new_match(self, first_dealer: int) -> GameMatch: ...

    def seat_view(self, state: AnyGameState, seat: int) -> dict[str, Any]: ...

    def public_view(self, state: AnyGameState) -> dict[str, Any]: ...

    def make_bot(self, kind: str, rng: random.Random) -> GameBot[Any]: ...

    def score_hand(self, state: AnyGameState) -> list[HandScore]: ...


@dataclass(frozen=True)
class CanastaEngine:
    """The Canasta family: one engine, many rule sets."""

    rules: RuleSet

    @property
    def kind(self) -> str:
        return CANASTA

    @property
    def teams(self) -> int:
        return self.rules.teams

    @property
    def lowest_wins(self) -> bool:
        return False

    def team_of(self, seat: int) -> int:
        return self.rules.team_of(seat)

    def parse_action(self, text: str) -> GameAction:
        return parse_canasta_action(text)

    def new_match(self, first_dealer: int) -> GameMatch:
        return CanastaMatch(self.rules, first_dealer)

    def seat_view(self, state: AnyGameState, seat: int) -> dict[str, Any]:
        return canasta_seat_view(_canasta_state(state), seat)

    def public_view(self, state: AnyGameState) -> dict[str, Any]:
        return canasta_public_view(_canasta_state(state))

    def make_bot(self, kind: str, rng: random.Random) -> GameBot[Any]:
        return make_canasta_bot(kind, rng)

    def score_hand(self, state: AnyGameState) -> list[HandScore]:
        return list(score_canasta_hand(_canasta_state(state)))


@dataclass(frozen=True)
class MayIEngine:
    """May I?: every seat for himself, lowest total wins."""

    rules: mayi.MayIRules

    @property
    def kind(self) -> str:
        return MAY_I

    @property
    def teams(self) -> int:
        return self.rules.players

    @property
    def lowest_wins(self) -> bool:
        return True

    def team_of(self, seat: int) -> int:
        return seat

    def parse_action(self, text: str) -> GameAction:
        return mayi.parse_action(text)

    def new_match(self, first_dealer: int) -> GameMatch:
        return MayIMatchAdapter(self.rules, first_dealer)

    def seat_view(self, state: AnyGameState, seat: int) -> dict[str, Any]:
        return mayi.seat_view(_mayi_state(state), seat)

    def public_view(self, state: AnyGameState) -> dict[str, Any]:
        return mayi.public_view(_mayi_state(state))

    def make_bot(self, kind: str, rng: random.Random) -> GameBot[Any]:
        return mayi.make_bot(kind, rng)

    def score_hand(self, state: AnyGameState) -> list[HandScore]:
        return [SeatPoints(points) for points in mayi.deal_scores(_mayi_state(state))]


# ---------------------------------------------------------------------- the game
@dataclass(frozen=True)
class Game:
    """A game and its rule set, as everything outside the engines sees it."""

    engine: GameEngine

    @property
    def kind(self) -> str:
        return self.engine.kind

    @property
    def rules(self) -> GameRules:
        return self.engine.rules

    @property
    def name(self) -> str:
        return self.rules.name

    @property
    def description(self) -> str:
        return self.rules.description

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def deck_size(self) -> int:
        return self.rules.deck_size

    @property
    def teams(self) -> int:
        return self.engine.teams

    @property
    def lowest_wins(self) -> bool:
        return self.engine.lowest_wins

    def team_of(self, seat: int) -> int:
        return self.engine.team_of(seat)

    def rules_dict(self) -> dict[str, Any]:
        return dict(self.rules.to_dict())

    def parse_action(self, text: str) -> GameAction:
        return self.engine.parse_action(text)

    def new_match(self, first_dealer: int = 0) -> GameMatch:
        return self.engine.new_match(first_dealer)

    def seat_view(self, state: AnyGameState, seat: int) -> dict[str, Any]:
        return {"game": self.kind, **self.engine.seat_view(state, seat)}

    def public_view(self, state: AnyGameState) -> dict[str, Any]:
        """What someone watching the table may see: no seat's hand (``seat`` is None)."""
        return {"game": self.kind, **self.engine.public_view(state)}

    def make_bot(self, kind: str, rng: random.Random) -> GameBot[Any]:
        return self.engine.make_bot(kind, rng)

    def score_hand(self, state: AnyGameState) -> list[HandScore]:
        """A finished hand's scores, per team (or seat), as ``GameMatch.record_hand`` gives them,
        without recording them in any match (for what-if lines)."""
        return self.engine.score_hand(state)

    def cards_in_play(self, state: AnyGameState) -> int:
        return state.cards_in_play()

    def forfeit_winner(self, scores: Sequence[int], forfeiting_seat: int) -> int | None:
        """The team that wins when a seat forfeits: the best of the others, if only one."""
        loser = self.team_of(forfeiting_seat)
        others = [t for t in range(self.teams) if t != loser]
        if len(others) != 1:
            return None
        return others[0]


def canasta_game(rules: RuleSet) -> Game:
    return Game(CanastaEngine(rules))


def game_of_rules(rules: RuleSet | mayi.MayIRules) -> Game:
    """The game a rule set belongs to."""
    if isinstance(rules, mayi.MayIRules):
        return Game(MayIEngine(rules))
    return Game(CanastaEngine(rules))


def game_for(variant: str, players: int | None = None) -> Game:
    """The game of a preset name (``classic``, ``samba``, ``may-i``...)."""
    if variant in mayi.PRESETS:
        try:
            return Game(MayIEngine(mayi.preset(variant, players)))
        except mayi.MayIRulesError as e:
            raise UnknownGame(str(e)) from None
    try:
        rules = preset(variant)
    except RuleSetError as e:
        raise UnknownGame(f"{e}; also {', '.join(mayi.PRESETS)}") from None
    if players is not None and players != rules.players:
        raise UnknownGame(f"{variant} is played by {rules.players}")
    return Game(CanastaEngine(rules))


_ENGINES_FROM_DICT: dict[str, Callable[[dict[str, Any]], GameEngine]] = {
    CANASTA: lambda rules: CanastaEngine(RuleSet.from_dict(rules)),
    MAY_I: lambda rules: MayIEngine(mayi.MayIRules.from_dict(rules)),
}
"""Each game's engine from a log header's rule set, by the header's ``game``."""


def game_from_header(kind: str, rules: dict[str, Any]) -> Game:
    """Rebuild a game from a log header's ``game`` and ``rules``."""
    # a header's value is checked, but a kind that is not a str must not raise TypeError here
    engine_from_dict = _ENGINES_FROM_DICT.get(kind) if isinstance(kind, str) else None
    if engine_from_dict is None:
        raise UnknownGame(f"unknown game {kind!r}")
    try:
        return Game(engine_from_dict(rules))
    # the rule sets' own errors are ValueErrors too; the others are Python's, on a wrong type
    except (ValueError, TypeError, AttributeError, KeyError, IndexError) as e:
        raise UnknownGame(f"unusable rule set: {_rule_problem(kind, rules, e)}") from None


def _rule_problem(kind: str, rules: dict[str, Any], error: Exception) -> str:
    """What is wrong with a header's rule set, in words: a rule of the wrong type (named against
    the game's default rules), else the rule set's own sentence; never Python's error text."""
    reference = (preset("classic") if kind == CANASTA else mayi.MayIRules()).to_dict()
    for key, value in rules.items():
        expected = reference.get(key)
        if expected is not None and type(value) is not type(expected):
            return f"the rule {key!r} is {kind_of(value)}, not {kind_of(expected)}"
    own = isinstance(error, RuleSetError | mayi.MayIRulesError)
    if own and error.__cause__ is None and error.__context__ is None:
        return str(error)
    return "a rule has a value this program cannot use"


def all_variants() -> list[tuple[str, str]]:
    """Every preset with its one-line description."""
    out = [(name, rules.description) for name, rules in PRESETS.items()]
    out += [(name, rules.description) for name, rules in mayi.PRESETS.items()]
    return sorted(out)


if TYPE_CHECKING:

    def _both_engines_fit_the_seam(
        hand: HandState, deal: mayi.DealState, rules: RuleSet, mayi_rules: mayi.MayIRules
    ) -> None:
        """Never called: mypy --strict proves here that each engine's objects are what the seam's
        Protocols say, with each engine's own action type (tests/test_game_protocol.py plays
        through them)."""
        canasta_state: GameState[Action] = hand
        mayi_state: GameState[mayi.MayIAction] = deal
        game_rules: list[GameRules] = [rules, mayi_rules]
        matches: list[GameMatch] = [CanastaMatch(rules, 0), MayIMatchAdapter(mayi_rules, 0)]
        engines: list[GameEngine] = [CanastaEngine(rules), MayIEngine(mayi_rules)]
        canasta_bot: GameBot[Action] = make_canasta_bot("greedy", random.Random(0))
        mayi_bot: GameBot[mayi.MayIAction] = mayi.make_bot("greedy", random.Random(0))
        del canasta_state, mayi_state, game_rules, matches, engines, canasta_bot, mayi_bot
