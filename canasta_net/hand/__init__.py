"""A hand of the match as one protocol per deal mode (see :mod:`.protocol`).

``new_hand(deal_mode, setup)`` is the one place a deal mode is chosen; everything else (the host
table, the seats, the replayer) drives the hand it returns through :class:`HandProtocol`.
"""

from __future__ import annotations

from ..games import Game
from .blind import BlindHandProtocol, BlindProofsHandProtocol
from .commit_reveal import CommitRevealHand
from .protocol import (
    Applied,
    Entry,
    HandContext,
    HandFault,
    HandProtocol,
    HandRefused,
    HandSetup,
    Step,
    Violation,
)

HAND_PROTOCOLS: dict[str, type[CommitRevealHand] | type[BlindHandProtocol]] = {
    CommitRevealHand.mode: CommitRevealHand,
    BlindHandProtocol.mode: BlindHandProtocol,
    BlindProofsHandProtocol.mode: BlindProofsHandProtocol,
}


def check_deal_mode(deal_mode: str, game: Game) -> None:
    """Refuse (ValueError, one sentence) a deal mode that does not exist or cannot deal
    ``game``."""
    try:
        protocol = HAND_PROTOCOLS[deal_mode]
    except KeyError:
        raise ValueError(f"unknown deal mode {deal_mode!r}") from None
    protocol.check_game(game)


def new_hand(deal_mode: str, setup: HandSetup) -> HandProtocol:
    """The hand protocol of ``deal_mode`` for one hand (ValueError for an unknown mode)."""
    try:
        protocol = HAND_PROTOCOLS[deal_mode]
    except KeyError:
        raise ValueError(f"unknown deal mode {deal_mode!r}") from None
    return protocol(setup)


__all__ = [
    "HAND_PROTOCOLS",
    "Applied",
    "BlindHandProtocol",
    "BlindProofsHandProtocol",
    "CommitRevealHand",
    "Entry",
    "HandContext",
    "HandFault",
    "HandProtocol",
    "HandRefused",
    "HandSetup",
    "Step",
    "Violation",
    "check_deal_mode",
    "new_hand",
]
