"""The stable reason codes a refused May I? action carries (see ``docs/may-i.md``).

The engine raises :class:`canasta_net.errors.IllegalAction` with one of these codes and a sentence
for the player, which may be more specific than the summary here.
"""

from __future__ import annotations

from typing import Final

REASONS: Final = {
    # whose turn, which step
    "deal-over": "The deal is over.",
    "not-your-turn": "It is not that seat's turn to act.",
    "wrong-phase": "That action is not possible at this step of the turn.",
    "no-buy-window": "No discard is being offered for sale now.",
    "own-discard": "A player may not buy his own discard.",
    "own-turn": "The player to move passed the discard by drawing from the stock.",
    "buy-limit": "The player has already bought as many discards as a deal allows.",
    # cards
    "card-not-in-hand": "The card is not in the hand.",
    "pile-empty": "The discard pile is empty.",
    "not-top-discard": "That card is not the top discard.",
    # melds
    "not-a-meld": "The cards are neither a set nor a sequence.",
    "set-too-small": "A set needs at least three cards of one rank.",
    "set-too-large": "A set holds at most eight cards.",
    "not-a-sequence": "A sequence is consecutive cards of one suit, without wrapping.",
    "sequence-too-short": "A sequence needs at least four cards.",
    "sequence-too-long": "A sequence holds at most thirteen cards.",
    "contract-not-met": "The lay-down is not exactly this deal's contract.",
    "contract-duplicate-rank": "The sets of a contract must be of different ranks.",
    "contract-duplicate-suit": "The sequences of a contract must be in different suits.",
    "already-down": "The contract is laid: add cards to melds instead of laying new ones.",
    "contract-first": "Lay the contract before adding to melds.",
    "no-such-meld": "There is no such meld on the table.",
    "does-not-fit": "The card does not extend that meld.",
    "meld-full": "The meld already holds as many cards as it may.",
    # going out
    "must-meld-last-card": "In this deal the last card must be melded, not discarded.",
}
