"""Errors the rules engine raises. Each illegal action carries a stable reason code."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final


class IllegalAction(ValueError):
    """The action breaks a rule; ``code`` is stable, ``str(error)`` is a sentence for a player
    (English). ``params`` (the move's parameters) and ``variant`` (which of the code's sentences)
    let a client word it in its reader's language (:mod:`canasta_net.reasons`, where the engine
    raises it with :func:`~canasta_net.reasons.refuse`).

    The state the action was applied to is unchanged.
    """

    def __init__(
        self,
        code: str,
        message: str,
        params: Mapping[str, str | int] | None = None,
        variant: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.params = dict(params or {})
        self.variant = variant

    def __repr__(self) -> str:
        return f"IllegalAction({self.code!r}, {self.message!r})"


class ActionParseError(ValueError):
    """The text of an action could not be read; ``str(error)`` says why (English).

    ``key`` names the cause and ``params`` its parameters (text), so that a client words it in
    its reader's language (``reasons.parse_error_sentence``): ``empty``, ``not-a-card``
    (``card``), ``unknown-action`` (``verb``, ``verbs``), ``unreadable`` (``text``, ``verb``),
    ``empty-group``.
    """

    def __init__(self, message: str, key: str = "unreadable", **params: str) -> None:
        super().__init__(message)
        self.key = key
        self.params = params


def unread_action(verb: str, text: str, verbs: Sequence[str]) -> ActionParseError:
    """The error for an action text no form of its game reads: an unknown verb, or a known one
    whose arguments do not fit (either game's parser)."""
    if verb not in verbs:
        return ActionParseError(
            f"unknown action {verb!r}; actions: {', '.join(verbs)}",
            "unknown-action",
            verb=verb,
            verbs=", ".join(verbs),
        )
    return ActionParseError(
        f"cannot read {text!r}: see 'help' for the form of {verb!r}",
        "unreadable",
        text=text,
        verb=verb,
    )


class PositionError(ValueError):
    """A position dictionary is malformed or inconsistent."""


# Stable reason codes (documented in docs/rules.md).
REASONS: Final = {
    "wrong-phase": "That action is not possible at this point of the turn.",
    "hand-over": "The hand is over.",
    "not-your-turn": "It is not that seat's turn.",
    "card-not-in-hand": "The card is not in the hand.",
    "too-few-cards": "A meld needs at least three cards.",
    "mixed-ranks": "All natural cards of a group must have the same rank.",
    "too-few-naturals": "A meld needs more natural cards.",
    "too-many-wilds": "The meld would hold too many wild cards.",
    "wild-only-meld": "Wild cards cannot form a meld on their own.",
    "not-meldable": "That card cannot be melded.",
    "black-threes-only-going-out": "Black threes may be melded only when going out.",
    "black-three-meld-closed": "Nothing may be added to a meld of black threes.",
    "meld-rank-exists": "The team already has a meld of that rank: add to it.",
    "no-such-meld": "The team has no such meld.",
    "wrong-rank": "The cards do not match the meld's rank.",
    "initial-meld-too-low": "The initial meld does not reach the minimum.",
    "initial-meld-unreachable": "That lay leaves no way to reach the initial-meld minimum.",
    "initial-meld-pending": "Finish the initial meld before picking up the pile.",
    "must-keep-a-card": "That would leave you unable to discard without going out.",
    "no-canasta-to-go-out": "Going out needs a canasta.",
    "cannot-discard-three": "Red threes cannot be discarded.",
    "pile-empty": "The discard pile is empty.",
    "pile-blocked": "The pile cannot be taken while that card is on top.",
    "pile-frozen": "The pile is frozen: take it only with two natural cards of the top's rank.",
    "pile-take-cards": "Those cards do not take the pile.",
    "one-card-pile": "A player holding one card may not take a one-card pile.",
    "must-take-pile": "The stock is empty and the pile must be taken.",
    "ask-not-allowed": "You may not ask to go out now.",
    "must-go-out": "Your partner said yes: you must go out this turn.",
    "may-not-go-out": "Your partner said no: you may not go out this turn.",
    "nothing-to-answer": "Nobody has asked to go out.",
    "not-a-sequence": "A sequence is natural cards of one suit in a row, from 4 up to the ace.",
    "meld-too-large": "The meld would hold more cards than the rules allow.",
    "meld-closed": "Nothing more may be added to that meld.",
    "wild-on-canasta": "Wild cards may not be added to a canasta.",
    "not-in-this-game": "That action does not exist in this game.",
    "no-going-out": "Nobody goes out in this game.",
}
