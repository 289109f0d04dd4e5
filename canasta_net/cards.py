"""Cards: faces, physical card ids, the text notation and the predicates the rules use.

A *face* is what is printed on a card (``KH``, ``10S``, ``JK``); two physically identical cards
share a face and are equal for every rule.  A *card id* names one physical card of a deck, so that
a deal can be checked card by card.  Faces are small integers (``suit * 13 + rank``, joker 52) so
that hands can be counted quickly; ids are ``deck * cards_per_deck + face`` (the second joker of a
deck is face 53, printed ``JK`` as well).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
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
    """A card code could not be read; the message says which and what is expected (English),
    ``text`` is the code as it came (for a client that words it in its reader's language)."""

    def __init__(self, text: str) -> None:
        super().__init__(f"{text!r} is not a card (try KH, 10S, TS or JK)")
        self.text = text


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


# The three predicates below are hot (the engine's listing): each is one test, no call.
_RED_THREES: Final = frozenset(suit * 13 + THREE for suit in RED_SUITS)


def is_three(face: int) -> bool:
    return face % 13 == THREE  # a joker's face (52) has rank 0


def is_red_three(face: int) -> bool:
    return face in _RED_THREES


def is_black_three(face: int) -> bool:
    return face % 13 == THREE and face // 13 not in RED_SUITS


def face_text(face: int) -> str:
    """Canonical text of a face: ``KH``, ``10S``, ``JK``."""
    if face == JOKER:
        return "JK"
    if not 0 <= face < JOKER:
        raise ValueError(f"not a face: {face}")
    return RANK_NAMES[face % 13] + SUIT_NAMES[face // 13]


@dataclass(frozen=True)
class Notation:
    """How players of one language write cards: rank and suit letters (upper case) beside the
    canonical ones, and how a card is shown to them (``docs/i18n.md``)."""

    ranks: Mapping[str, str]  # a letter -> the canonical rank it means
    suits: Mapping[str, str]  # a letter or two -> the canonical suit
    jokers: tuple[str, ...]  # the joker's names (upper case); the first is the one shown
    shown_ranks: Mapping[str, str]  # canonical rank -> the letter shown (digits stay)
    # suit letters read only in lower case: the Polish c (karo) is the canonical C (clubs) in
    # upper case, so that the canonical text, printed in capitals, always reads the same
    lower_suits: Mapping[str, str] = field(default_factory=dict)


SUIT_SYMBOLS: Final = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
_SHOWN_SUITS: Final = {v: k for k, v in SUIT_SYMBOLS.items()}
NOTATIONS: Final[Mapping[str, Notation]] = {
    "en": Notation({}, {}, ("JK",), {}),
    # Russian: валет, дама, король, туз; пики, трефы, черви, бубны
    "ru": Notation(
        {"В": "J", "Д": "Q", "К": "K", "Т": "A"},
        {"П": "S", "Т": "C", "Ч": "H", "Б": "D"},
        ("ДЖ", "ДЖОКЕР"),
        {"J": "В", "Q": "Д", "K": "К", "A": "Т"},
    ),
    # Bulgarian: вале, дама, поп, асо; пика, спатия, купа, каро
    "bg": Notation(
        {"В": "J", "Д": "Q", "П": "K", "А": "A"},
        {"П": "S", "С": "C", "КУ": "H", "КА": "D"},
        ("Ж", "ЖОКЕР"),
        {"J": "В", "Q": "Д", "K": "П", "A": "А"},
    ),
    # Polish: walet, dama, król, as; pik, trefl, kier, karo. Karo's c is read in lower case
    # only ("Kc", "10c"): an upper-case C is the canonical clubs ("KC", as hints print it).
    "pl": Notation(
        {"W": "J", "D": "Q"},
        {"P": "S", "T": "C", "K": "H"},
        ("JK", "JOKER"),
        {"J": "W", "Q": "D"},
        {"c": "D"},
    ),
}
"""Each language's card notation; the canonical letters are read in every language too."""


def parse_face(text: str, lang: str | None = None) -> int:
    """Read ``KH``, ``10S``, ``TS``, ``jk`` (case-insensitive) into a face.

    With ``lang``, also read the way that language's players write cards (``ТП`` in Russian,
    ``К♥``, ``WP`` in Polish, ``ПКУ`` in Bulgarian: :data:`NOTATIONS`); without, only the
    canonical text that the wire and the log carry.
    """
    t = text.strip().upper()
    if t in ("JK", "JOKER", "*"):
        return JOKER
    if len(t) >= 2:  # the canonical text first (the wire, the log): the fast path
        rank_text, suit_text = _RANK_ALIASES.get(t[:-1], t[:-1]), t[-1]
        if (
            rank_text in RANK_NAMES
            and suit_text in SUIT_NAMES
            and (
                lang != "pl" or text.strip()[-1:] != "c"  # Polish karo: a lower-case c
            )
        ):
            return make_face(RANK_NAMES.index(rank_text), SUIT_NAMES.index(suit_text))
    notation = NOTATIONS.get(lang) if lang is not None else None
    if notation is None:
        raise CardParseError(text)
    if t in notation.jokers:
        return JOKER
    for suit_len in (2, 1):
        if len(t) <= suit_len:
            continue
        rank_part, suit_part = t[:-suit_len], t[-suit_len:]
        raw_suit = text.strip()[-suit_len:]
        suit_part = (
            notation.lower_suits.get(raw_suit)
            or notation.suits.get(suit_part)
            or SUIT_SYMBOLS.get(suit_part, suit_part)
        )
        rank_part = notation.ranks.get(rank_part, rank_part)
        rank_part = _RANK_ALIASES.get(rank_part, rank_part)
        if rank_part in RANK_NAMES and len(suit_part) == 1 and suit_part in SUIT_NAMES:
            return make_face(RANK_NAMES.index(rank_part), SUIT_NAMES.index(suit_part))
    raise CardParseError(text)


def parse_faces(text: str | Iterable[str], lang: str | None = None) -> tuple[int, ...]:
    words = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return tuple(parse_face(w, lang) for w in words)


def face_label(face: int, lang: str | None = None) -> str:
    """A face as players of ``lang`` read it (``К♥`` in Russian, ``W♠`` in Polish); the canonical
    text in English or without a language."""
    notation = NOTATIONS.get(lang) if lang is not None else None
    if notation is None or lang == "en":
        return face_text(face)
    if face == JOKER:
        return notation.jokers[0].capitalize()
    rank = RANK_NAMES[face % 13]
    return notation.shown_ranks.get(rank, rank) + _SHOWN_SUITS[SUIT_NAMES[face // 13]]


def card_label(card: str, lang: str | None = None) -> str:
    """A card's canonical text (``KH``) as players of ``lang`` read it; unchanged if not a card."""
    try:
        return face_label(parse_face(card), lang)
    except ValueError:
        return card


def canonical_action(text: str, lang: str | None) -> str:
    """A move as a player of ``lang`` typed it, with every card in the canonical notation that
    goes on the wire and in the log (``сброс`` is not a verb: verbs stay canonical)."""
    words = text.split()
    out = []
    for index, word in enumerate(words):
        if index == 0 or not any(ch.isalpha() or ch in SUIT_SYMBOLS for ch in word):
            out.append(word)  # the verb, a number, a seat.meld index, "|"
            continue
        try:
            out.append(face_text(parse_face(word, lang)))
        except CardParseError:
            out.append(word)  # "yes", "no": not a card; the engine judges the rest
    return " ".join(out)


def action_label(text: str, lang: str | None) -> str:
    """A canonical move (``meld KH KS 2C``) with its cards as players of ``lang`` read them."""
    if lang is None or lang == "en":
        return text
    return " ".join(
        card_label(w, lang) if i and _looks_like_card(w) else w for i, w in enumerate(text.split())
    )


def _looks_like_card(word: str) -> bool:
    try:
        parse_face(word)
    except ValueError:
        return False
    return True


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
