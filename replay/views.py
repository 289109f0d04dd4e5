"""Whose eyes the table is seen through: one seat, a spectator, or everything face up.

Every view is built from the game's ``seat_view`` (``Game.seat_view``: the Canasta engine's
``position.seat_view`` or May I?'s ``mayi.seat_view``), which never holds another seat's hidden
card; the public view drops the seat's own hand from it, and only the face-up view (``all``) adds
every hand, the whole pile and the stock. (May I?'s seat view holds the whole discard pile, which
is public in that game; its stock and the other hands are not.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from canasta_net.cards import face_text
from canasta_net.games import Game
from canasta_net.i18n import Translator
from canasta_net.log import Header

from .wording import Words

SEAT: Final = "seat"
PUBLIC: Final = "public"
ALL: Final = "all"

PerspectiveKind = Literal["seat", "public", "all"]


@dataclass(frozen=True)
class Perspective:
    kind: PerspectiveKind
    seat: int | None = None

    def __post_init__(self) -> None:
        if (self.kind == SEAT) != (self.seat is not None):
            raise ValueError("a seat perspective names its seat, and only it does")

    def sees_hand_of(self, seat: int) -> bool:
        """Whether this perspective may see ``seat``'s hidden cards (its hand, its draws)."""
        return self.kind == ALL or (self.kind == SEAT and self.seat == seat)

    def describe(self, header: Header, tr: Translator | None = None) -> str:
        """Whose view this is, in the language of ``tr`` (English by default)."""
        w = Words(tr)
        if self.kind == SEAT:
            assert self.seat is not None
            return w.tr.gettext("{seat}'s view").format(seat=w.seat(header, self.seat))
        if self.kind == PUBLIC:
            return w.tr.gettext("the public view (a spectator's)")
        return w.tr.gettext("every card face up")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat}


def table_view(game: Game, state: Any, perspective: Perspective) -> dict[str, Any]:
    """The table as ``perspective`` may see it (see ``docs/replay.md`` for the fields)."""
    if perspective.kind == SEAT:
        assert perspective.seat is not None
        return game.seat_view(state, perspective.seat)
    view = game.seat_view(state, 0)
    del view["seat"], view["hand"]
    if perspective.kind == ALL:
        # each hand as its own seat sees it (the game's order), the pile and the stock in order
        view["hands"] = [game.seat_view(state, s)["hand"] for s in range(state.players)]
        view["pile"] = _texts(state, state.pile)
        view["stock"] = _texts(state, state.stock)
    return view


def public_view(game: Game, state: Any) -> dict[str, Any]:
    return table_view(game, state, Perspective(PUBLIC))


def _texts(state: Any, cards: list[int]) -> list[str]:
    return [face_text(f) for f in state.faces(cards)]
