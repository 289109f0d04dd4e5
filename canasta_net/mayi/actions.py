"""May I? actions as values, each with a canonical text form that parses back to an equal value.

================================  ===============================================================
text                              meaning
================================  ===============================================================
``draw``                          take the top card of the stock
``take-discard 9D``               take the top discard (named, so a stale request cannot take
                                  another card)
``meld 7C 7D 7S | 4C 5C 6C 7C``   lay the contract: its melds separated by ``|``
``add 2.0 8C``                    lay off a card on meld 0 of seat 2 (melds numbered per seat,
                                  in the order they were laid)
``discard 9D``                    discard a card (the last card: going out, where allowed)
``may-i 9D``                      in a buy window: ask to buy the discard
``pass``                          in a buy window: do not ask
``allow``                         let the asker buy the discard
``deny 9D``                       refuse, by buying the discard oneself
================================  ===============================================================
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cards import CardParseError, faces_text, parse_face, parse_faces
from ..errors import ActionParseError, unread_action


@dataclass(frozen=True, slots=True)
class Draw:
    def __str__(self) -> str:
        return "draw"


@dataclass(frozen=True, slots=True)
class TakeDiscard:
    card: int

    def __str__(self) -> str:
        return f"take-discard {faces_text((self.card,))}"


@dataclass(frozen=True, slots=True)
class Meld:
    groups: tuple[tuple[int, ...], ...]

    def __str__(self) -> str:
        return "meld " + " | ".join(faces_text(g) for g in self.groups)

    @property
    def cards(self) -> tuple[int, ...]:
        return tuple(f for g in self.groups for f in g)


@dataclass(frozen=True, slots=True)
class AddToMeld:
    owner: int
    meld: int
    card: int

    def __str__(self) -> str:
        return f"add {self.owner}.{self.meld} {faces_text((self.card,))}"


@dataclass(frozen=True, slots=True)
class Discard:
    card: int

    def __str__(self) -> str:
        return f"discard {faces_text((self.card,))}"


@dataclass(frozen=True, slots=True)
class MayI:
    card: int

    def __str__(self) -> str:
        return f"may-i {faces_text((self.card,))}"


@dataclass(frozen=True, slots=True)
class Pass:
    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Allow:
    def __str__(self) -> str:
        return "allow"


@dataclass(frozen=True, slots=True)
class Deny:
    card: int

    def __str__(self) -> str:
        return f"deny {faces_text((self.card,))}"


MayIAction = Draw | TakeDiscard | Meld | AddToMeld | Discard | MayI | Pass | Allow | Deny
BUY_ACTIONS = (MayI, Pass, Allow, Deny)

VERBS = ("draw", "take-discard", "meld", "add", "discard", "may-i", "pass", "allow", "deny")


def _meld_groups(rest: str) -> tuple[tuple[int, ...], ...]:
    parts = rest.split("|")
    if any(not p.split() for p in parts):
        raise ActionParseError(
            "a meld lists its groups separated by '|', none of them empty", "empty-group"
        )
    return tuple(parse_faces(p) for p in parts)


def _seat_meld(text: str) -> tuple[int, int] | None:
    seat, dot, meld = text.partition(".")
    if dot and seat.isdigit() and meld.isdigit():
        return int(seat), int(meld)
    return None


def parse_action(text: str) -> MayIAction:
    """Read an action from its text form (see the module docstring)."""
    stripped = text.strip()
    words = stripped.split()
    if not words:
        raise ActionParseError("empty action", "empty")
    verb, args = words[0].lower(), words[1:]
    one_card = len(args) == 1
    try:
        if verb == "draw" and not args:
            return Draw()
        if verb == "take-discard" and one_card:
            return TakeDiscard(parse_face(args[0]))
        if verb == "meld" and args:
            return Meld(_meld_groups(stripped[len(words[0]) :]))
        if verb == "add" and len(args) == 2 and (where := _seat_meld(args[0])) is not None:
            return AddToMeld(where[0], where[1], parse_face(args[1]))
        if verb == "discard" and one_card:
            return Discard(parse_face(args[0]))
        if verb == "may-i" and one_card:
            return MayI(parse_face(args[0]))
        if verb == "pass" and not args:
            return Pass()
        if verb == "allow" and not args:
            return Allow()
        if verb == "deny" and one_card:
            return Deny(parse_face(args[0]))
    except CardParseError as e:
        raise ActionParseError(str(e), "not-a-card", card=e.text) from e
    raise unread_action(verb, stripped, VERBS)
