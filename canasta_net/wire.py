"""The table's wire protocol, sans-io: message schemas, validation and version negotiation.

A frame is a 4-byte big-endian length and one msgpack map with a text field ``t`` (the message
type). Every decoded message is checked against its schema here before anything else sees it;
``docs/wire-protocol.md`` documents every message. Two levels of error (as foolscap does): a
message that decodes but breaks its schema gets an ``error`` reply and the connection lives;
broken framing (an over-long frame, bytes that are not msgpack) drops that connection only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgpack

from .records import MAX_ACT_SIZE

PROTOCOL_MIN: Final = 1
PROTOCOL_MAX: Final = 1
MAX_FRAME: Final = 2 << 20  # a log record is at most 1 MiB; views and lists are far smaller
MAX_NAME: Final = 40
MAX_TEXT: Final = 4096


class WireError(ValueError):
    """A message broke its schema: answered with an ``error`` message, the connection lives."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class FramingError(ValueError):
    """The byte stream is not frames of msgpack: the connection is dropped."""


# field kinds: (python type, max length or None)
_B = (bytes, MAX_FRAME)
_S = (str, MAX_TEXT)
_I = (int, None)
_BOOL = (bool, None)
_MAP = (dict, None)
_LIST = (list, None)
_OPT = "optional"

SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    # peer -> host
    "hello": {
        "min": _I,
        "max": _I,
        "name": (str, MAX_NAME),
        "bot": _BOOL,
        "password": ((str, 200), _OPT),
        "resume": (_I, _OPT),
    },
    "commit": {"act": (bytes, MAX_ACT_SIZE), "asig": (bytes, 64)},
    "reveal": {"act": (bytes, MAX_ACT_SIZE), "asig": (bytes, 64), "seed": (bytes, 32)},
    "act": {"act": (bytes, MAX_ACT_SIZE), "asig": (bytes, 64)},
    "checkpoint": {"hand": _I, "sig": (bytes, 64)},
    # host -> peer
    "welcome": {"version": _I, "seat": _I, "table": _MAP, "aseq": _I, "head": (bytes, 32)},
    "record": {"seq": _I, "data": _B},
    "view": {"view": _MAP},
    "turn": {
        "need": _S,
        "hand": _I,
        "aseq": _I,
        "legal": (_LIST, _OPT),
        "msg": ((bytes, 4096), _OPT),
    },
    "seats": {"seats": _LIST},
    "error": {"code": (str, 64), "message": _S},
    # both ways: the host ends the connection, or a seat's player leaves the table
    "bye": {"reason": _S},
}

PEER_TO_HOST: Final = frozenset({"hello", "commit", "reveal", "act", "checkpoint", "bye"})
HOST_TO_PEER: Final = frozenset({"welcome", "record", "view", "turn", "seats", "error", "bye"})
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
    """Decode one frame: FramingError if it is not a msgpack map, WireError if off-schema."""
    try:
        message = msgpack.unpackb(
            frame, raw=False, strict_map_key=False, max_bin_len=MAX_FRAME, max_str_len=MAX_FRAME
        )
    except (ValueError, TypeError, msgpack.UnpackException) as e:
        raise FramingError(f"a frame that is not msgpack: {e}") from None
    if not isinstance(message, dict):
        raise FramingError("a frame that is not a msgpack map")
    validate(message)
    return message


def validate(message: Mapping[str, Any]) -> None:
    t = message.get("t")
    if not isinstance(t, str) or t not in SCHEMAS:
        raise WireError("unknown-message", f"unknown message type {t!r}")
    for field, spec in SCHEMAS[t].items():
        optional = isinstance(spec, tuple) and len(spec) == 2 and spec[1] == _OPT
        kind, limit = spec[0] if optional else spec
        if field not in message:
            if optional:
                continue
            raise WireError("bad-message", f"{t}: missing field {field!r}")
        value = message[field]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise WireError("bad-message", f"{t}: field {field!r} must be {kind.__name__}")
        if limit is not None and len(value) > limit:
            raise WireError("bad-message", f"{t}: field {field!r} is too long")


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
