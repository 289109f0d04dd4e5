"""A hand of the match as one protocol per deal mode (see :mod:`.protocol`).

``new_hand(deal_mode, setup)`` is the one place a deal mode is chosen; everything else (the host
table, the seats, the replayer) drives the hand it returns through :class:`HandProtocol`.
"""

from __future__ import annotations

from typing import Final

from ..games import Game
from .blind import BlindHandProtocol, BlindProofsHandProtocol, CannotDealBlind
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


BLIND_V1: Final = BlindHandProtocol.mode
"""The log's mode string of the blind deal's version 1 (``docs/blind-deal.md``): logs keep it."""
BLIND_V2: Final = BlindProofsHandProtocol.mode
"""The log's mode string of the proof-carrying blind deal (``docs/blind-proofs.md``)."""

DEAL_NAMES: Final[dict[str, str]] = {
    CommitRevealHand.mode: CommitRevealHand.mode,
    "blind": BLIND_V2,
    BLIND_V2: BLIND_V2,
    "blind-v1": BLIND_V1,
}
"""What a user names with ``--deal`` → the deal mode a new table records in its log. ``blind``
is the proof-carrying deal; a log's mode string keeps what it meant when it was written (its
``"blind"`` is version 1), so the names a user types and the log's strings differ there."""


def deal_mode_named(name: str) -> str:
    """The deal mode a new table gets for ``--deal name`` (ValueError for an unknown name)."""
    try:
        return DEAL_NAMES[name]
    except KeyError:
        raise ValueError(f"unknown deal mode {name!r}") from None


def deal_name(deal_mode: str) -> str:
    """The ``--deal`` name of a log's deal mode (the legacy version 1 is ``blind-v1``)."""
    return {BLIND_V1: "blind-v1", BLIND_V2: "blind"}.get(deal_mode, deal_mode)


def deal_name_agrees(name: str, deal_mode: str) -> bool:
    """Whether ``--deal name``, given when a table is resumed, agrees with its log's mode: a
    resumed table keeps its log's version, so plain ``blind`` agrees with either blind mode."""
    if name == "blind" and deal_mode in (BLIND_V1, BLIND_V2):
        return True
    return DEAL_NAMES.get(name) == deal_mode


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
    "BLIND_V1",
    "BLIND_V2",
    "DEAL_NAMES",
    "HAND_PROTOCOLS",
    "Applied",
    "BlindHandProtocol",
    "BlindProofsHandProtocol",
    "CannotDealBlind",
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
    "deal_mode_named",
    "deal_name",
    "deal_name_agrees",
    "new_hand",
]
