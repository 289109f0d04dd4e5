"""The ``blind`` deal mode: host-blind dealing by commutative encryption on P-256 (sans-io).

Nobody, host included, learns another seat's cards, and nobody can stack the deck unless every
seat colludes. ``docs/blind-deal.md`` (version 1) specifies every byte and the message flow.

- :mod:`~canasta_net.blind.points`: card labels → P-256 points, x-only scalar multiplication
  through ``cryptography``'s ECDH API, validation.
- :mod:`~canasta_net.blind.keys`: a seat's per-hand secrets derived from its seed; commitments.
- :mod:`~canasta_net.blind.protocol`: stage 1, stage 2, opening, sealed keys, signed messages.
- :mod:`~canasta_net.blind.schedule`: card labels and which position goes to whom.
- :mod:`~canasta_net.blind.audit`: the hand-end replay that names a seat that deviated.
- :mod:`~canasta_net.blind.local`: the whole deal in one process (tests, benchmark, reference).
- :mod:`~canasta_net.blind.proofs`: version 2 (``docs/blind-proofs.md``, deal mode ``blind-v2``):
  secp256k1, every stage output proved; :class:`~canasta_net.blind.hand.BlindHand` with
  ``version=2`` uses it.
"""

from __future__ import annotations

from ._encoding import VERSION
from .audit import (
    attribute_failed_open,
    audit_key_message,
    check_open,
    check_reveal,
    decode_final_deck,
    replay_deal,
    replay_deal_ids,
)
from .errors import (
    BadDeck,
    BadKeySignature,
    BadParameters,
    BadReleaseSignature,
    BadScalar,
    BadStageSignature,
    BlindError,
    DuplicateCiphertext,
    InvalidCiphertext,
    InvalidPoint,
    NotACard,
    RevealMismatch,
    SealedKeyError,
    StageMismatch,
    WrongCard,
    WrongDeckSize,
    WrongPublishedKey,
)
from .keys import SEED_SIZE, SeatSecrets, commitment
from .points import card_points, hash_to_x, inverse, multiply, point_from_x
from .protocol import (
    ANNOUNCE_SIGNATURE_KIND,
    KEY_SIGNATURE_KIND,
    RELEASE_SIGNATURE_KIND,
    STAGE_SIGNATURE_KIND,
    CardIndex,
    KeyMessage,
    KeyRelease,
    StageOutput,
    check_deck,
    initial_deck,
    make_key_message,
    open_position,
    open_public,
    open_sealed,
    position_key,
    producer_of_input,
    receive_key_message,
    seal_key,
    stage1,
    stage2,
    verify_play,
)
from .schedule import DealSchedule, card_labels, deal_schedule, labels_for_rules, schedule_for_rules

__all__ = [
    "ANNOUNCE_SIGNATURE_KIND",
    "KEY_SIGNATURE_KIND",
    "RELEASE_SIGNATURE_KIND",
    "SEED_SIZE",
    "STAGE_SIGNATURE_KIND",
    "VERSION",
    "BadDeck",
    "BadKeySignature",
    "BadParameters",
    "BadReleaseSignature",
    "BadScalar",
    "BadStageSignature",
    "BlindError",
    "CardIndex",
    "DealSchedule",
    "DuplicateCiphertext",
    "InvalidCiphertext",
    "InvalidPoint",
    "KeyMessage",
    "KeyRelease",
    "NotACard",
    "RevealMismatch",
    "SealedKeyError",
    "SeatSecrets",
    "StageMismatch",
    "StageOutput",
    "WrongCard",
    "WrongDeckSize",
    "WrongPublishedKey",
    "attribute_failed_open",
    "audit_key_message",
    "card_labels",
    "card_points",
    "check_deck",
    "check_open",
    "check_reveal",
    "commitment",
    "deal_schedule",
    "decode_final_deck",
    "hash_to_x",
    "initial_deck",
    "inverse",
    "labels_for_rules",
    "make_key_message",
    "multiply",
    "open_position",
    "open_public",
    "open_sealed",
    "point_from_x",
    "position_key",
    "producer_of_input",
    "receive_key_message",
    "replay_deal",
    "replay_deal_ids",
    "schedule_for_rules",
    "seal_key",
    "stage1",
    "stage2",
    "verify_play",
]
