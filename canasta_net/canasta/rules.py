"""Rule sets: every number and switch of a variant, as data, with named presets.

Code branches on a rule's meaning (``rules.draw_count``), never on a preset's name.  The presets
and the choices behind them are described in ``docs/rules.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..cards import ACE, JOKER, KING, SEVEN, TWO, is_black_three, is_red_three, rank_of

WildRule = Literal["official", "naturals_outnumber", "naturals_at_least"]
TiePolicy = Literal["draw", "play_on"]
RedThreePositiveIf = Literal["melded", "canasta", "two_canastas", "special_canasta"]
ThreePlayerMode = Literal["standard", "lone_hand"]

WILD_RULES: tuple[WildRule, ...] = ("official", "naturals_outnumber", "naturals_at_least")


class RuleSetError(ValueError):
    """A rule set is inconsistent or names an unknown option."""


@dataclass(frozen=True)
class RuleSet:
    """All the parameters of a Canasta variant. See ``docs/rules.md`` for each knob."""

    name: str
    description: str
    players: int = 4
    partnerships: bool = True
    # -- cards
    decks: int = 2
    jokers_per_deck: int = 2
    hand_size: int = 11
    draw_count: int = 1
    joker_value: int = 50
    ace_value: int = 20
    two_value: int = 20
    high_value: int = 10  # eight to king
    low_value: int = 5  # four to seven
    black_three_value: int = 5
    # -- melds
    wild_rule: WildRule = "official"
    min_naturals_in_group: int = 2
    max_wilds_in_group: int = 3
    canasta_size: int = 7
    black_threes_only_going_out: bool = True
    one_group_per_rank: bool = True  # False: a team may hold several groups of a rank
    merge_groups: bool = False  # Samba: two groups of one rank may be merged into one
    sequences: bool = False  # runs of one suit, 4 up to ace (Samba, Bolivia)
    sequence_min: int = 3
    sequence_max: int = 7  # a sequence of this size is closed (a samba / escalera)
    wild_melds: bool = False  # melds of wild cards only (Bolivia)
    max_meld_size: int = 0  # 0: unlimited; Bolivia closes every canasta at 7
    wilds_on_canasta: bool = True  # False: no wild card may be added to a canasta (Samba)
    # -- bonuses
    natural_canasta_bonus: int = 500
    mixed_canasta_bonus: int = 300
    sequence_canasta_bonus: int = 0  # a samba / escalera
    wild_canasta_bonus: int = 0  # a bolivia
    natural_sevens_bonus: int = 0  # 0: as any natural canasta
    mixed_sevens_bonus: int = 0  # 0: as any mixed canasta
    red_three_bonus: int = 100
    red_three_all_bonus: int = 800
    red_three_positive_if: RedThreePositiveIf = "melded"
    going_out_bonus: int = 100
    concealed_bonus: int = 200
    hand_canasta_bonus: int = 0  # 0: none; Vienna pays 1000 for a concealed hand canasta
    concealed_requires_own_canasta: bool = True
    concealed_after_pile_take: bool = True
    # -- going out
    canastas_to_go_out: int = 1
    going_out_allowed: bool = True  # False: the hand runs to the end of the stock (Bolivia)
    first_canasta_bonus_cards: int = 0  # Bolivia: 11 cards from the stock to the first canasta
    black_three_left_penalty: int = 0  # 0: a black three left in hand costs its value
    seven_left_penalty: int = 0  # 0: a seven left in hand costs its value
    # -- the initial meld: (lowest cumulative score, minimum), ascending
    initial_minimums: tuple[tuple[int, int], ...] = (
        (-(10**9), 15),
        (0, 50),
        (1500, 90),
        (3000, 120),
    )
    # -- the discard pile
    upcard_turns_on_black_three: bool = True
    black_three_freezes_pile: bool = False
    one_card_pile_rule: bool = True
    completed_canasta_blocks_pile: bool = False
    pile_take_with_wild: bool = True
    forced_pile_take_at_stock_end: bool = True
    pile_always_frozen: bool = False  # Samba: only a natural pair takes the pile
    take_top_to_sequence: bool = False  # Samba: the top card alone may extend a sequence
    pile_onto_sequence: bool = False  # Bolivia: the whole pile, its top card put on a sequence
    # -- the match
    target: int = 5000
    match_hands: int = 0  # >0: a match is this many hands, whatever the scores (Bolivia: 4)
    tie_policy: TiePolicy = "draw"
    three_player_mode: ThreePlayerMode = "standard"
    # derived tables, filled in __post_init__
    # card_value(face) by face, for the engine's hot loops (an index costs less than a call)
    card_values: tuple[int, ...] = field(default=(), init=False, repr=False, compare=False)
    # max_wilds(n) for every n a group of one rank can hold (its naturals are the deck's at most)
    max_wilds_table: tuple[int, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.validate()
        values = tuple(self._value_of(f) for f in range(JOKER + 1))
        object.__setattr__(self, "card_values", values)
        table = tuple(self._max_wilds_of(n) for n in range(4 * self.decks + 1))
        object.__setattr__(self, "max_wilds_table", table)

    def validate(self) -> None:
        if not 2 <= self.players <= 6:
            raise RuleSetError(f"{self.players} players: a table seats 2 to 6")
        if self.partnerships and self.players % 2:
            raise RuleSetError("partnerships need an even number of players")
        if self.wild_rule not in WILD_RULES:
            raise RuleSetError(f"unknown wild_rule {self.wild_rule!r}")
        if self.tie_policy not in ("draw", "play_on"):
            raise RuleSetError(f"unknown tie_policy {self.tie_policy!r}")
        if self.three_player_mode not in ("standard", "lone_hand"):
            raise RuleSetError(f"unknown three_player_mode {self.three_player_mode!r}")
        if self.three_player_mode == "lone_hand" and (self.players != 3 or self.partnerships):
            raise RuleSetError("lone-hand play is for three players, each for himself")
        if self.hand_size * self.players + 1 > self.decks * (52 + self.jokers_per_deck):
            raise RuleSetError("not enough cards to deal")
        if self.draw_count < 1 or self.canasta_size < 3 or self.canastas_to_go_out < 1:
            raise RuleSetError("draw_count, canasta_size and canastas_to_go_out must be positive")
        if self.target <= 0 and self.match_hands <= 0:
            raise RuleSetError("a match needs a target score or a number of hands")
        if self.red_three_positive_if not in (
            "melded",
            "canasta",
            "two_canastas",
            "special_canasta",
        ):
            raise RuleSetError(f"unknown red_three_positive_if {self.red_three_positive_if!r}")
        scores = [s for s, _ in self.initial_minimums]
        if not scores or scores != sorted(scores):
            raise RuleSetError("initial_minimums must be ascending by score")

    # ---- derived facts -------------------------------------------------------------------
    @property
    def teams(self) -> int:
        return self.players // 2 if self.partnerships else self.players

    def team_of(self, seat: int) -> int:
        return seat % self.teams

    def partner_of(self, seat: int) -> int | None:
        """The seat's partner (partnerships are always pairs), or None when playing alone."""
        return (seat + self.teams) % self.players if self.partnerships else None

    @property
    def deck_size(self) -> int:
        return self.decks * (52 + self.jokers_per_deck)

    def card_value(self, face: int) -> int:
        return self.card_values[face]

    def left_in_hand_cost(self, face: int) -> int:
        """What a card left in a hand at the end costs (Bolivia charges black threes, sevens)."""
        if self.black_three_left_penalty and is_black_three(face):
            return self.black_three_left_penalty
        if self.seven_left_penalty and face != JOKER and rank_of(face) == SEVEN:
            return self.seven_left_penalty
        return self.card_values[face]

    @property
    def natural_values(self) -> list[int]:
        """One card's value by rank (0 ace .. 12 king): face r is rank r of clubs."""
        return list(self.card_values[:13])

    def _value_of(self, face: int) -> int:
        if face == JOKER:
            return self.joker_value
        rank = rank_of(face)
        if rank == ACE:
            return self.ace_value
        if rank == TWO:
            return self.two_value
        if is_black_three(face):
            return self.black_three_value
        if is_red_three(face):
            return 0
        return self.high_value if 7 <= rank <= KING else self.low_value

    def max_wilds(self, naturals: int) -> int:
        """How many wild cards a group with this many natural cards may hold."""
        table = self.max_wilds_table
        return table[naturals] if 0 <= naturals < len(table) else self._max_wilds_of(naturals)

    def _max_wilds_of(self, naturals: int) -> int:
        if naturals < self.min_naturals_in_group:
            return -1
        if self.wild_rule == "naturals_outnumber":
            return min(self.max_wilds_in_group, naturals - 1)
        if self.wild_rule == "naturals_at_least":
            return min(self.max_wilds_in_group, naturals)
        return self.max_wilds_in_group

    def initial_minimum(self, score: int) -> int:
        minimum = self.initial_minimums[0][1]
        for threshold, value in self.initial_minimums:
            if score >= threshold:
                minimum = value
        return minimum

    # ---- (de)serialisation -----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        out["initial_minimums"] = [list(p) for p in self.initial_minimums]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleSet:
        known = {f.name for f in dataclasses.fields(cls) if f.init}
        unknown = set(data) - known
        if unknown:
            raise RuleSetError(f"unknown rule knobs: {', '.join(sorted(unknown))}")
        kwargs = dict(data)
        if "initial_minimums" in kwargs:
            kwargs["initial_minimums"] = tuple(
                (int(s), int(m)) for s, m in kwargs["initial_minimums"]
            )
        try:
            return cls(**kwargs)
        except TypeError as e:
            raise RuleSetError(str(e)) from e

    def with_changes(self, **changes: Any) -> RuleSet:
        return dataclasses.replace(self, **changes)


CLASSIC = RuleSet(
    name="classic",
    description="Classic Canasta, 4 players in two partnerships, 108 cards, game to 5000",
)
CLASSIC_2P = CLASSIC.with_changes(
    name="classic-2p",
    description="Classic Canasta for 2: 15 cards, draw two, two canastas to go out",
    players=2,
    partnerships=False,
    hand_size=15,
    draw_count=2,
    canastas_to_go_out=2,
)
CLASSIC_3P = CLASSIC.with_changes(
    name="classic-3p",
    description="Classic Canasta for 3, each for himself: 13 cards, otherwise as classic",
    players=3,
    partnerships=False,
    hand_size=13,
)
CUTTHROAT = CLASSIC_3P.with_changes(
    name="classic-3p-lone",
    description="Canasta for 3, lone hand: the first to take the pile plays alone against two",
    three_player_mode="lone_hand",
    draw_count=2,
    target=7500,
)
VIENNA = CLASSIC.with_changes(
    name="vienna",
    description="Vienna (Austrian) Canasta: red threes need a canasta, hand canasta 1000",
    wild_rule="naturals_at_least",
    red_three_positive_if="canasta",
    completed_canasta_blocks_pile=True,
    hand_canasta_bonus=1000,
    concealed_requires_own_canasta=False,
    concealed_after_pile_take=False,
    one_card_pile_rule=False,
)

# What Samba and Bolivia share: three packs, fifteen cards, draw two, groups of at least two
# naturals and at most two wild cards, several groups of a rank, sequences worth 1500 when closed.
_THREE_DECKS = CLASSIC.with_changes(
    name="three-decks",
    description="the three-deck games' common ground (not a preset)",
    decks=3,
    jokers_per_deck=2,
    hand_size=15,
    draw_count=2,
    wild_rule="official",
    max_wilds_in_group=2,
    one_group_per_rank=False,
    sequences=True,
    sequence_canasta_bonus=1500,
    pile_take_with_wild=False,
    one_card_pile_rule=False,
)
SAMBA = _THREE_DECKS.with_changes(
    name="samba",
    description="Samba: 162 cards, draw two, sequences (a samba: 1500), two canastas to go out",
    merge_groups=True,
    wilds_on_canasta=False,
    red_three_all_bonus=1000,
    red_three_positive_if="two_canastas",
    going_out_bonus=200,
    concealed_bonus=200,
    canastas_to_go_out=2,
    initial_minimums=((-(10**9), 15), (0, 50), (1500, 90), (3000, 120), (7000, 150)),
    pile_always_frozen=True,
    take_top_to_sequence=True,
    target=10000,
)
SAMBA_2P = SAMBA.with_changes(
    name="samba-2p", description="Samba for 2, each for himself", players=2, partnerships=False
)
SAMBA_3P = SAMBA.with_changes(
    name="samba-3p", description="Samba for 3, each for himself", players=3, partnerships=False
)
BOLIVIA = _THREE_DECKS.with_changes(
    name="bolivia",
    description="Bolivia: 162 cards, escaleras and bolivias, no going out, a match of 4 hands",
    wild_melds=True,
    max_meld_size=7,
    black_threes_only_going_out=False,
    wild_canasta_bonus=2000,
    natural_sevens_bonus=1500,
    mixed_sevens_bonus=1000,
    red_three_all_bonus=2000,
    red_three_positive_if="special_canasta",
    going_out_allowed=False,
    first_canasta_bonus_cards=11,
    black_three_left_penalty=200,
    seven_left_penalty=500,
    initial_minimums=((-(10**9), 60), (3500, 100), (7000, 140), (10500, 180)),
    forced_pile_take_at_stock_end=False,
    pile_onto_sequence=True,
    target=0,
    match_hands=4,
)

PRESETS: dict[str, RuleSet] = {
    r.name: r
    for r in (
        CLASSIC,
        CLASSIC_2P,
        CLASSIC_3P,
        CUTTHROAT,
        VIENNA,
        SAMBA,
        SAMBA_2P,
        SAMBA_3P,
        BOLIVIA,
    )
}


def preset(name: str) -> RuleSet:
    try:
        return PRESETS[name]
    except KeyError:
        raise RuleSetError(
            f"unknown variant {name!r}; known: {', '.join(sorted(PRESETS))}"
        ) from None
