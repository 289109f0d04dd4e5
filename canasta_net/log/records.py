"""Game-level record kinds of the event log, and the messages seats sign.

The container (:mod:`canasta_net.log`) knows nothing of Canasta; this module names the game's record
kinds and builds and reads their fields. ``docs/log-format.md`` ("Record kinds") specifies them.

A seat's signed message (``act``) is a msgpack map with the container's fields ``table``,
``hand``, ``seat``, ``aseq``, ``head`` plus ``type`` and the type's own fields:

=============  ===============================  ===========================================
``type``       own fields                       meaning
=============  ===============================  ===========================================
``commit``     ``commitment`` (bin 32)          the seat's commitment to its seed for the hand
``reveal``     ``commitment`` (bin 32)          the seat releases its seed to the host
``action``     ``action`` (str)                 a game action in canonical text form
``chat``       ``text`` (str)                   a chat message
=============  ===============================  ===========================================

Blind-dealt tables (``docs/blind-deal.md``) add ``announce``, ``stage``, ``keys``, ``release`` and
``reds``; there ``reveal`` carries the ``seed`` itself and ``action`` its card ``proofs``. Version 2
(``docs/blind-proofs.md``) adds ``expose``: a recipient's X25519 key for the hand, ``sender`` and
``position``, accusing the sender of a wrong sealed key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgpack

from ..schema import Bool, Bytes, Int, Schema, SchemaError, Text, require
from .scan import first_problem

# record kinds written by the host
COMMIT: Final = "commit"
COMMITMENTS: Final = "commitments"
REVEAL: Final = "reveal"
DEAL: Final = "deal"
ACTION: Final = "action"
HAND_END: Final = "hand-end"
SEEDS: Final = "seeds"
CHECKPOINT: Final = "checkpoint"
FORFEIT: Final = "forfeit"
MATCH_END: Final = "match-end"
MATCH_STOP: Final = "match-stop"
CHAT: Final = "chat"
# a connection event (docs/log-format.md, "Connection events"): the host's word, not a move
SEAT_EVENT: Final = "seat-event"

# why a match stopped before its end (a ``match-stop`` record's ``reason``): the table's limit of
# hands was reached, every person at the table left, the host quit
STOP_MAX_HANDS: Final = "max-hands"
STOP_PLAYERS_LEFT: Final = "players-left"
STOP_HOST_QUIT: Final = "host-quit"
STOP_REASONS: Final = frozenset({STOP_MAX_HANDS, STOP_PLAYERS_LEFT, STOP_HOST_QUIT})

# the blind deal's messages (docs/blind-deal.md): an announcement, a stage output, sealed keys,
# released keys, a report of the red threes among positions just received
BLIND_TYPES: Final = frozenset({"announce", "stage", "keys", "release", "reds"})
# version 2 of the blind deal: a recipient exposes its X25519 key for the hand to prove a key
# sealed to it wrong (docs/blind-proofs.md section 10); journaled only as a forfeit's evidence
EXPOSE: Final = "expose"
ACT_TYPES: Final = frozenset({"commit", "reveal", "action", "chat", EXPOSE}) | BLIND_TYPES
MAX_ACT_SIZE: Final = 65536  # a version-2 blind stage of 162 cards with its proof is 26.6 kB
MAX_CHAT_LENGTH: Final = 500
SALT_SIZE: Final = 16
DEAL_MODES: Final = ("commit-reveal", "blind", "blind-v2")


def shown_number(number: int) -> int:
    """The number a person reads for a hand, a turn or a May I? deal that the log and the engine
    count from 0 (the log's ``hand`` field, the engine's ``turn_no``, a deal state's ``deal``).

    Everything people read (the client, the host's printout, refusals, ``canasta-replay``'s
    sentences and positions) counts as players do: the first hand is hand 1. The log's fields and
    the wire keep counting from 0.
    """
    return number + 1


class MessageError(ValueError):
    """A seat's message is malformed; ``code`` is stable."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)  # type: ignore[no-any-return]


def unpack_map(data: bytes, what: str, limit: int = MAX_ACT_SIZE) -> dict[str, Any]:
    """Decode a small msgpack map from an untrusted peer."""
    if not isinstance(data, bytes) or len(data) > limit:
        raise MessageError("bad-message", f"{what}: not bytes, or over {limit} bytes")
    try:
        value = msgpack.unpackb(data, raw=False, strict_map_key=False, max_bin_len=limit)
    except (ValueError, TypeError, msgpack.UnpackException):
        bad = first_problem(data, what, limit)
        where = "" if bad is None else f": at its byte {bad.offset}, {bad.what}"
        raise MessageError("bad-message", f"{what} is not valid msgpack{where}") from None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise MessageError("bad-message", f"{what}: not a map with text keys")
    return value


def make_act(
    table: bytes, hand: int, seat: int, aseq: int, head: bytes, type_: str, **fields: Any
) -> bytes:
    """The exact bytes a seat signs for one message."""
    return pack(
        {"table": table, "hand": hand, "seat": seat, "aseq": aseq, "head": head, "type": type_}
        | fields
    )


def private_payload(salt: bytes, **fields: Any) -> bytes:
    """A private payload: salted, because card payloads are guessable from their hash."""
    return pack({"salt": salt} | fields)


def read_private(data: bytes) -> dict[str, Any]:
    return unpack_map(data, "private payload", limit=1 << 16)


_FIELD_SCHEMAS: Final[dict[type, Schema]] = {str: Text(), bytes: Bytes(), int: Int(), bool: Bool()}


def typed(fields: Mapping[str, Any], key: str, kind: type, what: str) -> Any:
    """The field ``key`` of a seat's message ``what``, if it is of type ``kind`` (str, bytes, int
    or bool), else MessageError ``bad-message`` naming it."""
    try:
        return require(fields, key, _FIELD_SCHEMAS[kind], what)
    except SchemaError as e:
        raise MessageError("bad-message", str(e)) from None


def checkpoint_message(
    table_id: bytes, hand_no: int, head: bytes, hand_end: bytes, totals: Sequence[int]
) -> bytes:
    """The message every seat signs at a hand's end: the hand, the log head it closes (the
    hand's seeds record) and its result (the hand-end record's hash, the running totals)."""
    return pack(
        {
            "table": table_id,
            "hand": hand_no,
            "head": head,
            "result": {"hand_end": hand_end, "totals": list(totals)},
        }
    )
