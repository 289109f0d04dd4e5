"""Which physical card is which label, and which deck position goes to whom.

Both are fixed by the rule numbers alone, never chosen by the host: a position's owner is known
before any card is dealt, so the host cannot steer a position to a seat.
"""

from __future__ import annotations

from dataclasses import dataclass

from canasta_net.canasta.rules import RuleSet
from canasta_net.cards import JOKER, Deck, face_text

from .errors import BadParameters


def card_labels(decks: int, jokers_per_deck: int) -> tuple[str, ...]:
    """The label of every physical card, indexed by card id (see ``canasta_net/cards.py``).

    Card id ``i`` is card ``i mod per_pack`` of pack ``i div per_pack``; its label is
    ``d<pack>:<face>`` (``d0:KH``, ``d1:10S``), and a pack's jokers are ``d<pack>:JK0``,
    ``d<pack>:JK1``... so two physical king of hearts are ``d0:KH`` and ``d1:KH``.
    """
    deck = Deck(decks, jokers_per_deck)
    labels = []
    for card in range(deck.size):
        pack, index = divmod(card, deck.per_deck)
        text = face_text(deck.face[card])
        if deck.face[card] == JOKER:
            text += str(index - JOKER)
        labels.append(f"d{pack}:{text}")
    return tuple(labels)


def labels_for_rules(rules: RuleSet) -> tuple[str, ...]:
    return card_labels(rules.decks, rules.jokers_per_deck)


@dataclass(frozen=True)
class DealSchedule:
    """Deck positions by use. Position p is the p-th card of the deck order, as the engine deals:
    one card at a time to each seat starting left of the dealer, ``hand_size`` rounds, then the
    upcard, then the stock in order. The stock is consumed strictly in order, whatever takes the
    next card (a draw, an extra upcard turned over a wild or three, a red-three replacement).
    """

    players: int
    hand_size: int
    dealer: int
    deck_size: int
    hands: tuple[tuple[int, ...], ...]
    """``hands[seat]``: the seat's positions in the order they are dealt."""
    upcard: int
    stock: tuple[int, ...]
    """The positions of the stock after the upcard, top (next drawn) first."""

    def owner(self, position: int) -> int | None:
        """The seat dealt ``position``, or ``None`` for the upcard and the stock."""
        if not 0 <= position < self.deck_size:
            raise BadParameters(f"position {position} is outside 0..{self.deck_size - 1}")
        if position >= self.upcard:
            return None
        return (self.dealer + 1 + position % self.players) % self.players

    def next_stock_position(self, taken: int) -> int:
        """The position of the stock card taken after ``taken`` stock cards have gone (whether
        drawn, turned up or given for a red three)."""
        if not 0 <= taken < len(self.stock):
            raise BadParameters(f"the stock has {len(self.stock)} cards; {taken} are taken")
        return self.stock[taken]


def deal_schedule(players: int, hand_size: int, dealer: int, deck_size: int) -> DealSchedule:
    if not 2 <= players <= 256 or hand_size < 1:
        raise BadParameters("a deal needs 2..256 players and a positive hand size")
    dealt = players * hand_size
    if dealt + 1 > deck_size:
        raise BadParameters(f"{deck_size} cards cannot deal {players} hands of {hand_size}")
    dealer %= players
    hands: list[list[int]] = [[] for _ in range(players)]
    for position in range(dealt):
        hands[(dealer + 1 + position % players) % players].append(position)
    return DealSchedule(
        players=players,
        hand_size=hand_size,
        dealer=dealer,
        deck_size=deck_size,
        hands=tuple(tuple(hand) for hand in hands),
        upcard=dealt,
        stock=tuple(range(dealt + 1, deck_size)),
    )


def schedule_for_rules(rules: RuleSet, dealer: int) -> DealSchedule:
    return deal_schedule(rules.players, rules.hand_size, dealer, rules.deck_size)
