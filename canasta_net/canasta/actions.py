"""Actions as values, each with a canonical text form that parses back to an equal value.

=====================  =================================================================
text                   meaning
=====================  =================================================================
``draw``               draw from the stock (with an empty stock: end the hand)
``take-pile QS QD``    take the discard pile, melding its top card with these hand cards;
                       ``take-pile`` alone adds the top card to the team's meld of its rank
                       (``take-pile onto 2``: to meld number 2, where several could take it)
``take-top 2``         Samba: take the top card alone onto the team's sequence number 2
``meld KH KS 2C``      lay a new meld from the hand
``add 2 KH 2D``        add hand cards to the team's meld number 2 (0-based, as listed)
``merge 1 4``          Samba: merge the team's group 4 into its group 1 (same rank)
``discard 7D``         discard a card (the last card: going out)
``ask-go-out``         "Partner, may I go out?"
``answer yes``         the partner's binding answer (``answer no``)
=====================  =================================================================

Going out is not a separate action: it is the discard of the last card, or a meld that empties the
hand, when the rules allow it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cards import CardParseError, faces_text, parse_faces
from ..errors import ActionParseError, unread_action


@dataclass(frozen=True, slots=True)
class Draw:
    def __str__(self) -> str:
        return "draw"


@dataclass(frozen=True, slots=True)
class TakePile:
    cards: tuple[int, ...] = ()
    meld: int | None = None  # the team meld the top card goes on (where several could)

    def __str__(self) -> str:
        onto = f" onto {self.meld}" if self.meld is not None else ""
        return f"take-pile {faces_text(self.cards)}".rstrip() + onto


@dataclass(frozen=True, slots=True)
class TakeTop:
    """Samba: take only the pile's top card, to extend the team's sequence number ``meld``."""

    meld: int

    def __str__(self) -> str:
        return f"take-top {self.meld}"


@dataclass(frozen=True, slots=True)
class Meld:
    cards: tuple[int, ...]

    def __str__(self) -> str:
        return f"meld {faces_text(self.cards)}"


@dataclass(frozen=True, slots=True)
class AddToMeld:
    meld: int
    cards: tuple[int, ...]

    def __str__(self) -> str:
        return f"add {self.meld} {faces_text(self.cards)}"


@dataclass(frozen=True, slots=True)
class MergeMelds:
    """Samba: merge the team's group number ``second`` into its group number ``first``."""

    first: int
    second: int

    def __str__(self) -> str:
        return f"merge {self.first} {self.second}"


@dataclass(frozen=True, slots=True)
class Discard:
    card: int

    def __str__(self) -> str:
        return f"discard {faces_text((self.card,))}"


@dataclass(frozen=True, slots=True)
class AskGoOut:
    def __str__(self) -> str:
        return "ask-go-out"


@dataclass(frozen=True, slots=True)
class Answer:
    yes: bool

    def __str__(self) -> str:
        return "answer yes" if self.yes else "answer no"


Action = Draw | TakePile | TakeTop | Meld | AddToMeld | MergeMelds | Discard | AskGoOut | Answer

VERBS = (
    "draw",
    "take-pile",
    "take-top",
    "meld",
    "add",
    "merge",
    "discard",
    "ask-go-out",
    "answer",
)


def parse_action(text: str) -> Action:
    """Read an action from its text form (see the module docstring)."""
    words = text.strip().split()
    if not words:
        raise ActionParseError("empty action", "empty")
    verb, args = words[0].lower(), words[1:]
    try:
        if verb == "draw" and not args:
            return Draw()
        if verb == "take-pile":
            meld = None
            if len(args) >= 2 and args[-2].lower() == "onto" and args[-1].isdigit():
                meld, args = int(args[-1]), args[:-2]
            return TakePile(parse_faces(args), meld)
        if verb == "take-top" and len(args) == 1 and args[0].isdigit():
            return TakeTop(int(args[0]))
        if verb == "meld" and args:
            return Meld(parse_faces(args))
        if verb == "add" and len(args) >= 2 and args[0].isdigit():
            return AddToMeld(int(args[0]), parse_faces(args[1:]))
        if verb == "merge" and len(args) == 2 and all(a.isdecimal() for a in args):
            return MergeMelds(int(args[0]), int(args[1]))
        if verb == "discard" and len(args) == 1:
            return Discard(parse_faces(args)[0])
        if verb == "ask-go-out" and not args:
            return AskGoOut()
        if verb == "answer" and len(args) == 1 and args[0].lower() in ("yes", "no"):
            return Answer(args[0].lower() == "yes")
    except CardParseError as e:
        raise ActionParseError(str(e), "not-a-card", card=e.text) from e
    raise unread_action(verb, text.strip(), VERBS)
