"""The table's wire protocol, sans-io: message schemas, validation and version negotiation.

A frame is a 4-byte big-endian length and one msgpack map with a text field ``t`` (the message
type). Whoever receives a message checks it against its nested schema here (:func:`validate`)
before anything else sees it; ``docs/wire-protocol.md`` documents every message. Two levels of
error (as foolscap does): broken framing (an over-long frame, bytes that are not msgpack) drops
that connection only; a message that decodes but breaks its schema gets an ``error`` reply at the
host and the connection lives, while a seat takes a malformed message from the host as host
misbehaviour and leaves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgpack

from ..log.records import MAX_ACT_SIZE
from ..reasons import MAX_ARG_TEXT, MAX_ARGS
from ..schema import Anything, Bool, Bytes, Int, List, Map, MapOf, Nullable, SchemaError, Text

PROTOCOL_MIN: Final = 1
PROTOCOL_MAX: Final = 3
PING_VERSION: Final = 2  # the first version with ``ping``/``pong`` (heartbeats)
# the first version with ``ahead``: a blind-v2 stage output passed on before its record, so that
# a seat checks it while the host does (docs/wire-protocol.md)
AHEAD_VERSION: Final = 3
MAX_FRAME: Final = 2 << 20  # a log record is at most 1 MiB; views and lists are far smaller
MAX_NAME: Final = 40
MAX_TEXT: Final = 4096
MAX_CODE: Final = 64  # an error code, a game's or a deal mode's name
MAX_SEATS: Final = 16  # entries of a seat list
MAX_WATCHERS: Final = 16  # names in a list of watchers (``seats.watchers``)
MAX_PASSWORD: Final = 200
SIGNATURE_SIZE: Final = 64
SEED_SIZE: Final = 32
HASH_SIZE: Final = 32
TABLE_ID_SIZE: Final = 16
MAX_CHECKPOINT_MSG: Final = 4096


class WireError(ValueError):
    """A message broke its schema: answered with an ``error`` message, the connection lives."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class FramingError(ValueError):
    """The byte stream is not frames of msgpack: the connection is dropped."""


_TEXT = Text(MAX_TEXT)
_SIGNED = {"act": Bytes(MAX_ACT_SIZE), "asig": Bytes(SIGNATURE_SIZE)}

#: One seat as the host describes it (``seats``, ``welcome.table.seats``, ``view.seats``).
SEAT_SUMMARY: Final = Map(
    {"seat": Int(low=0), "name": _TEXT, "bot": Bool(), "connected": Bool(), "taken": Bool()},
    # while the seat's player is away: why it left, and the seconds until a stand-in plays
    {"left": _TEXT, "stand_in_in": Int(low=0)},
)
SEAT_LIST: Final = List(SEAT_SUMMARY, MAX_SEATS)
#: The names of the connected watchers (``seats``, ``view``), control characters removed.
WATCHER_LIST: Final = List(Text(MAX_NAME), MAX_WATCHERS)

#: The table a ``welcome`` describes.
TABLE_INFO: Final = Map(
    {
        "name": _TEXT,
        "game": Text(MAX_CODE),
        "variant": _TEXT,
        "rules": MapOf(Text(MAX_TEXT), Anything()),  # the game's own rule set checks the values
        "table_id": Bytes(size=TABLE_ID_SIZE),
        "seats": SEAT_LIST,
        "deal": Text(MAX_CODE),
    }
)

#: A seat's view of the table: its top-level keys; ``state`` is the game's own seat view.
TABLE_VIEW: Final = Map(
    {
        "table": _TEXT,
        "phase": Text(MAX_CODE),
        "hand_no": Int(low=0),
        "scores": List(Int(), MAX_SEATS),
        "seats": SEAT_LIST,
        "state": Nullable(MapOf(Text(MAX_TEXT), Anything())),
    },
    {"watchers": WATCHER_LIST},
)

SCHEMAS: Final[dict[str, Map]] = {
    # peer -> host
    "hello": Map(
        {"min": Int(), "max": Int(), "name": Text(MAX_NAME), "bot": Bool()},
        # ``watch``: follow the table's public side, no seat (``watching`` answers, not welcome)
        {"password": Text(MAX_PASSWORD), "resume": Int(), "watch": Bool()},
    ),
    "commit": Map(_SIGNED),
    "reveal": Map(_SIGNED | {"seed": Bytes(SEED_SIZE)}),
    "act": Map(_SIGNED),
    "checkpoint": Map({"hand": Int(), "sig": Bytes(SIGNATURE_SIZE)}),
    # a record the host signed and sent this seat that the host's log lost or contradicts
    "fork": Map({"record": Bytes(MAX_FRAME)}),
    "pong": Map({}),  # the answer to ``ping`` (version 2)
    # host -> peer
    "welcome": Map(
        {
            "version": Int(),
            "seat": Int(low=0),
            "table": TABLE_INFO,
            "aseq": Int(),
            "head": Bytes(HASH_SIZE),
        }
    ),
    # the answer to a watcher's hello: the table, and the host's latest record's hash
    "watching": Map({"version": Int(), "table": TABLE_INFO, "head": Bytes(HASH_SIZE)}),
    "record": Map({"seq": Int(), "data": Bytes(MAX_FRAME)}),
    "view": Map({"view": TABLE_VIEW}),
    "turn": Map(
        {"need": _TEXT, "hand": Int(), "aseq": Int()},
        {"legal": List(_TEXT), "msg": Bytes(MAX_CHECKPOINT_MSG)},
    ),
    "seats": Map({"seats": SEAT_LIST}, {"watchers": WATCHER_LIST}),
    # ``args``/``variant``: an engine refusal's parameters, for the seat's client to word it
    # in its reader's language (canasta_net/reasons.py); an older host sends neither
    "error": Map(
        {"code": Text(MAX_CODE), "message": _TEXT},
        {
            "args": MapOf(Text(MAX_CODE), Text(MAX_ARG_TEXT), MAX_ARGS),
            "variant": Text(MAX_CODE),
        },
    ),
    "ping": Map({}),  # are you there? (version 2: a seat answers ``pong``)
    # version 3: a seat's signed stage output (blind-v2) as it reached the host, before the host
    # checked and journaled it: a hint the seat may check early; the record decides
    "ahead": Map({"act": Bytes(MAX_ACT_SIZE)}),
    # both ways: the host ends the connection, or a seat's player leaves the table
    "bye": Map({"reason": _TEXT}),
}

PEER_TO_HOST: Final = frozenset(
    {"hello", "commit", "reveal", "act", "checkpoint", "fork", "bye", "pong"}
)
HOST_TO_PEER: Final = frozenset(
    {"welcome", "record", "view", "turn", "seats", "error", "bye", "ping", "ahead"}
)
# what a host sends a watcher: no welcome (it has no seat) and no prompt
HOST_TO_WATCHER: Final = frozenset({"watching", "record", "view", "seats", "error", "bye", "ping"})
NEEDS: Final = frozenset(
    {
        "commit",
        "reveal",
        "act",
        "checkpoint",
        "wait",
        "announce",
        "stage",
        "keys",
        "release",
        "reds",
    }
)


def encode(message: Mapping[str, Any]) -> bytes:
    """The msgpack bytes of one message (the framing layer adds the length prefix)."""
    data: bytes = msgpack.packb(dict(message), use_bin_type=True)
    if len(data) > MAX_FRAME:
        raise ValueError(f"message of {len(data)} bytes exceeds the frame limit")
    return data


def decode(frame: bytes) -> dict[str, Any]:
    """Decode one frame to a msgpack map, or raise FramingError. The receiver then checks it
    against its schema with :func:`validate`."""
    try:
        message = msgpack.unpackb(
            frame, raw=False, strict_map_key=False, max_bin_len=MAX_FRAME, max_str_len=MAX_FRAME
        )
    except (ValueError, TypeError, msgpack.UnpackException) as e:
        raise FramingError(f"a frame that is not msgpack: {e}") from None
    if not isinstance(message, dict):
        raise FramingError("a frame that is not a msgpack map")
    return message


def validate(message: Mapping[str, Any]) -> None:
    """Check a decoded message against its type's nested schema: WireError ``unknown-message``
    (no such type) or ``bad-message``, whose text names the bad field
    (``welcome.table.table_id: missing``)."""
    t = message.get("t")
    if type(t) is not str or t not in SCHEMAS:
        raise WireError("unknown-message", f"unknown message type {t!r}")
    try:
        SCHEMAS[t].check(message)
    except SchemaError as e:
        raise WireError("bad-message", str(e.within(t))) from None


def negotiate(peer_min: int, peer_max: int) -> int:
    """The highest version both sides speak, or WireError('version-mismatch')."""
    best = min(PROTOCOL_MAX, peer_max)
    if best < max(PROTOCOL_MIN, peer_min):
        raise WireError(
            "version-mismatch",
            f"this host speaks versions {PROTOCOL_MIN}-{PROTOCOL_MAX}, "
            f"the peer {peer_min}-{peer_max}",
        )
    return best


def message(t: str, **fields: Any) -> dict[str, Any]:
    out = {"t": t, **fields}
    validate(out)
    return out
