"""Cards: faces, physical card ids, the text notation and the predicates the rules use.

A *face* is what is printed on a card (``KH``, ``10S``, ``JK``); two physically identical cards
share a face and are equal for every rule.  A *card id* names one physical card of a deck, so that
a deal can be checked card by card.  Faces are small integers (``suit * 13 + rank``, joker 52) so
that hands can be counted quickly; ids are ``deck * cards_per_deck + face`` (the second joker of a
deck is face 53, printed ``JK`` as well).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from .reasons import refuse

RANK_NAMES: Final = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUIT_NAMES: Final = "CDHS"  # clubs, diamonds, hearts, spades
RED_SUITS: Final = frozenset({1, 2})

ACE: Final = 0
TWO: Final = 1
THREE: Final = 2
SEVEN: Final = 6
KING: Final = 12
JOKER: Final = 52
"""The face of every joker."""
NUM_FACES: Final = 53

_RANK_ALIASES: Final = {"T": "10", "1": "A"}


class CardParseError(ValueError):
    """A card code could not be read; the message says which and what is expected."""


def rank_of(face: int) -> int:
    """Rank index 0 (ace) .. 12 (king); -1 for a joker."""
    return -1 if face == JOKER else face % 13


def suit_of(face: int) -> int:
    """Suit index 0..3 (C, D, H, S); -1 for a joker."""
    return -1 if face == JOKER else face // 13


def make_face(rank: int, suit: int) -> int:
    return suit * 13 + rank


def is_wild(face: int) -> bool:
    """Jokers and twos are wild in every Canasta variant here."""
    return face == JOKER or face % 13 == TWO


def is_three(face: int) -> bool:
    return face != JOKER and face % 13 == THREE


def is_red_three(face: int) -> bool:
    return is_three(face) and face // 13 in RED_SUITS


def is_black_three(face: int) -> bool:
    return is_three(face) and face // 13 not in RED_SUITS


def face_text(face: int) -> str:
    """Canonical text of a face: ``KH``, ``10S``, ``JK``."""
    if face == JOKER:
        return "JK"
    if not 0 <= face < JOKER:
        raise ValueError(f"not a face: {face}")
    return RANK_NAMES[face % 13] + SUIT_NAMES[face // 13]


def parse_face(text: str) -> int:
    """Read ``KH``, ``10S``, ``TS``, ``jk`` (case-insensitive) into a face."""
    t = text.strip().upper()
    if t in ("JK", "JOKER", "*"):
        return JOKER
    if len(t) < 2:
        raise CardParseError(f"{text!r} is not a card (try KH, 10S, TS or JK)")
    rank_text, suit_text = _RANK_ALIASES.get(t[:-1], t[:-1]), t[-1]
    if rank_text not in RANK_NAMES or suit_text not in SUIT_NAMES:
        raise CardParseError(f"{text!r} is not a card (try KH, 10S, TS or JK)")
    return make_face(RANK_NAMES.index(rank_text), SUIT_NAMES.index(suit_text))


def parse_faces(text: str | Iterable[str]) -> tuple[int, ...]:
    words = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return tuple(parse_face(w) for w in words)


def faces_text(faces: Iterable[int]) -> str:
    return " ".join(face_text(f) for f in faces)


def rank_text(rank: int) -> str:
    return "JK" if rank < 0 else RANK_NAMES[rank]


class Deck:
    """The physical cards of a variant: ``decks`` packs of 52 with ``jokers_per_deck`` jokers each.

    Card ids run from 0 to ``size - 1``; ``face[id]`` maps an id to its face.
    """

    __slots__ = ("decks", "face", "jokers_per_deck", "per_deck", "size")

    def __init__(self, decks: int, jokers_per_deck: int) -> None:
        if decks < 1 or not 0 <= jokers_per_deck <= 4:
            raise ValueError("a deck needs at least one pack and 0 to 4 jokers per pack")
        self.decks = decks
        self.jokers_per_deck = jokers_per_deck
        self.per_deck = 52 + jokers_per_deck
        self.size = decks * self.per_deck
        self.face: tuple[int, ...] = tuple(min(i % self.per_deck, JOKER) for i in range(self.size))

    def card_text(self, card_id: int) -> str:
        return face_text(self.face[card_id])

    def faces(self, card_ids: Iterable[int]) -> list[int]:
        face = self.face
        return [face[c] for c in card_ids]

    @property
    def red_threes(self) -> int:
        return 2 * self.decks


def sort_key(face: int) -> tuple[int, int]:
    """Order for showing a hand: jokers and twos last, naturals by rank (ace high) then suit."""
    if face == JOKER:
        return (20, 0)
    rank = face % 13
    if rank == TWO:
        return (19, face // 13)
    return (13 if rank == ACE else rank, face // 13)


_FACES_SORTED: Final = sorted(range(NUM_FACES), key=sort_key)
SORT_ORDER: Final = tuple(_FACES_SORTED.index(f) for f in range(NUM_FACES))
"""Each face's place in ``sort_key`` order, by face: a cheaper key for sorting in hot loops."""


def sorted_faces(faces: Sequence[int]) -> list[int]:
    return sorted(faces, key=sort_key)


def pick_cards(face_of: Sequence[int], hand: Iterable[int], faces: Sequence[int]) -> list[int]:
    """The card ids in ``hand`` that show ``faces`` (lowest id first for each face).

    Raises ``IllegalAction("card-not-in-hand")`` if the hand lacks one of them.
    """
    if len(faces) == 1:  # the common case (a discard): the lowest id of that face
        (f,) = faces
        found = [c for c in hand if face_of[c] == f]
        if found:
            return [min(found)]
        raise refuse("card-not-in-hand", card=face_text(f))
    return pick_in_order(face_of, sorted(hand), faces)


def pick_in_order(face_of: Sequence[int], cards: Iterable[int], faces: Sequence[int]) -> list[int]:
    """The first cards of ``cards`` (in their order) that show ``faces``, or raise."""
    available = list(cards)
    chosen: list[int] = []
    for f in faces:
        for c in available:
            if face_of[c] == f:
                chosen.append(c)
                available.remove(c)
                break
        else:
            raise refuse("card-not-in-hand", card=face_text(f))
    return chosen
