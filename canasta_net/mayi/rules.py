"""The rule set of "May I?": every number and switch as data, with the named preset ``may-i``.

Code branches on a rule's meaning (``rules.buy_limit``, ``contract.discard_out``), never on the
preset's name.  The choices behind the preset are described in ``docs/may-i.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..cards import ACE, NUM_FACES, rank_of


class MayIRulesError(ValueError):
    """A May I? rule set is inconsistent or names an unknown option."""


@dataclass(frozen=True, slots=True)
class Contract:
    """What a player's first lay-down must be in one deal, and how the deal may be gone out of.

    ``discard_out``: the last card may be discarded (else it must be melded).
    """

    sets: int
    sequences: int
    discard_out: bool = True

    def __str__(self) -> str:
        parts = []
        if self.sets:
            parts.append(f"{self.sets} set{'s' if self.sets > 1 else ''}")
        if self.sequences:
            parts.append(f"{self.sequences} sequence{'s' if self.sequences > 1 else ''}")
        return " + ".join(parts)

    @property
    def melds(self) -> int:
        return self.sets + self.sequences

    def to_list(self) -> list[Any]:
        return [self.sets, self.sequences, self.discard_out]


DEFAULT_CONTRACTS: tuple[Contract, ...] = (
    Contract(2, 0),
    Contract(1, 1),
    Contract(0, 2),
    Contract(3, 0),
    Contract(2, 1, discard_out=False),
)


@dataclass(frozen=True)
class MayIRules:
    """All the parameters of a May I? game (see ``docs/may-i.md`` for each knob)."""

    name: str = "may-i"
    description: str = "May I?: contract rummy for 3 to 5, five deals, lowest total wins"
    players: int = 4
    decks: int = 2
    hand_size: int = 10
    contracts: tuple[Contract, ...] = DEFAULT_CONTRACTS
    min_set: int = 3
    max_set: int = 8
    min_sequence: int = 4
    max_sequence: int = 13
    ace_value: int = 15
    high_value: int = 10  # ten, jack, queen, king; two to nine score their face value
    buy_limit: int = 3  # buys per player per deal
    buy_penalty_cards: int = 1  # cards from the stock that come with a bought discard
    # times per deal the discard pile (all but its top) is turned over, unshuffled, to make a new
    # stock; when the stock runs out once more the deal ends and everyone scores his hand
    stock_turnovers: int = 1
    # a safety net against endless swapping of discards: after this many turns the deal ends as
    # if the stock had run out (0: no limit)
    turn_limit: int = 300
    # whether the card after the deal is turned face up to start the discard pile (the upcard).
    # Seed 003: no; the player left of the dealer draws from the stock and his discard starts
    # the pile. Logs written before this knob existed dealt an upcard (``from_dict``).
    upcard: bool = False
    _values: tuple[int, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        self.validate()
        object.__setattr__(self, "_values", tuple(self._value_of(f) for f in range(NUM_FACES)))

    def validate(self) -> None:
        if not 3 <= self.players <= 5:
            raise MayIRulesError(f"{self.players} players: May I? seats 3 to 5")
        if self.decks < 1 or self.hand_size < 1:
            raise MayIRulesError("at least one pack and one card each")
        if self.hand_size * self.players + 1 > self.deck_size:
            raise MayIRulesError("not enough cards to deal")
        if not self.contracts or any(c.melds < 1 or c.sets < 0 for c in self.contracts):
            raise MayIRulesError("every deal needs a contract of at least one meld")
        if not 2 <= self.min_set <= self.max_set or not 3 <= self.min_sequence <= 13:
            raise MayIRulesError("meld sizes: sets of 2 or more, sequences of 3 to 13")
        if not self.min_sequence <= self.max_sequence <= 13:
            raise MayIRulesError("a sequence holds at most 13 cards")
        if not isinstance(self.upcard, bool):
            raise MayIRulesError("upcard is true or false")
        if min(self.buy_limit, self.buy_penalty_cards, self.stock_turnovers, self.turn_limit) < 0:
            raise MayIRulesError(
                "buy_limit, buy_penalty_cards, stock_turnovers and turn_limit must be >= 0"
            )

    # ---- derived facts ---------------------------------------------------------------------
    @property
    def teams(self) -> int:
        """Everyone plays for himself: each seat is its own side (as the table and log expect)."""
        return self.players

    @property
    def partnerships(self) -> bool:
        return False

    def team_of(self, seat: int) -> int:
        return seat

    @property
    def deck_size(self) -> int:
        return self.decks * 52

    @property
    def jokers_per_deck(self) -> int:
        return 0

    @property
    def deals(self) -> int:
        return len(self.contracts)

    def contract(self, deal: int) -> Contract:
        """The contract of deal ``deal`` (0-based)."""
        return self.contracts[deal]

    def card_value(self, face: int) -> int:
        return self._values[face]

    def _value_of(self, face: int) -> int:
        rank = rank_of(face)
        if rank < 0:
            return 0
        if rank == ACE:
            return self.ace_value
        return self.high_value if rank >= 9 else rank + 1

    # ---- (de)serialisation -------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        out.pop("_values", None)
        out["contracts"] = [c.to_list() for c in self.contracts]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MayIRules:
        known = {f.name for f in dataclasses.fields(cls) if f.init and f.name != "_values"}
        unknown = set(data) - known
        if unknown:
            raise MayIRulesError(f"unknown rule knobs: {', '.join(sorted(unknown))}")
        kwargs = dict(data)
        # a rule set written before the ``upcard`` knob existed dealt an upcard
        kwargs.setdefault("upcard", True)
        try:
            if "contracts" in kwargs:
                kwargs["contracts"] = tuple(
                    Contract(int(c[0]), int(c[1]), bool(c[2]) if len(c) > 2 else True)
                    for c in kwargs["contracts"]
                )
            return cls(**kwargs)
        except (TypeError, IndexError, ValueError) as e:
            if isinstance(e, MayIRulesError):
                raise
            raise MayIRulesError(str(e)) from e

    def with_changes(self, **changes: Any) -> MayIRules:
        return dataclasses.replace(self, **changes)


MAY_I = MayIRules()

PRESETS: dict[str, MayIRules] = {MAY_I.name: MAY_I}


def preset(name: str, players: int | None = None) -> MayIRules:
    """A named May I? rule set, optionally for another number of players (3 to 5)."""
    try:
        rules = PRESETS[name]
    except KeyError:
        raise MayIRulesError(
            f"unknown variant {name!r}; known: {', '.join(sorted(PRESETS))}"
        ) from None
    return rules if players is None else rules.with_changes(players=players)
