"""The wire protocol's messages, sans-io: schemas, version negotiation, decoding and encoding."""

from __future__ import annotations

import re
import struct
from pathlib import Path
from typing import Any

import msgpack
import pytest

from canasta_net.log.records import MAX_ACT_SIZE
from canasta_net.net import wire
from canasta_net.net.wire import FramingError, WireError
from canasta_net.schema import Bool, Bytes, Int, List, Map, MapOf, Nullable, Schema, Text

Message = dict[str, Any]

SEAT = {
    "seat": 0,
    "name": "host",
    "bot": False,
    "connected": True,
    "taken": True,
    "left": "quit",
    "stand_in_in": 60,
}
TABLE = {
    "name": "t",
    "game": "canasta",
    "variant": "classic",
    "rules": {"players": 4},
    "table_id": b"i" * 16,
    "seats": [SEAT],
    "deal": "commit-reveal",
}
VIEW = {
    "table": "t",
    "phase": "committing",
    "hand_no": 0,
    "scores": [0, 0],
    "seats": [SEAT],
    "state": None,
    "watchers": ["bea"],
}

# One well-formed example of every message, every optional field present.
GOOD: dict[str, Message] = {
    "hello": {
        "t": "hello",
        "min": 1,
        "max": 1,
        "name": "ada",
        "bot": False,
        "password": "sesame",
        "resume": 41,
        "watch": False,
    },
    "commit": {"t": "commit", "act": b"\x80", "asig": b"s" * 64},
    "reveal": {"t": "reveal", "act": b"\x80", "asig": b"s" * 64, "seed": b"x" * 32},
    "act": {"t": "act", "act": b"\x80", "asig": b"s" * 64},
    "checkpoint": {"t": "checkpoint", "hand": 0, "sig": b"s" * 64},
    "fork": {"t": "fork", "record": b"\x93"},
    "welcome": {
        "t": "welcome",
        "version": 1,
        "seat": 2,
        "table": TABLE,
        "aseq": 0,
        "head": b"h" * 32,
    },
    "watching": {"t": "watching", "version": 2, "table": TABLE, "head": b"h" * 32},
    "record": {"t": "record", "seq": 0, "data": b"\x93"},
    "view": {"t": "view", "view": VIEW},
    "turn": {"t": "turn", "need": "act", "hand": 3, "aseq": 17, "legal": ["draw"], "msg": b"m"},
    "seats": {"seats": [SEAT], "t": "seats", "watchers": ["bea"]},
    "error": {
        "t": "error",
        "code": "card-not-in-hand",
        "message": "KH is not in your hand.",
        "args": {"card": "KH"},
        "variant": "none",
    },
    "bye": {"t": "bye", "reason": "the match is over"},
    "ping": {"t": "ping"},
    "pong": {"t": "pong"},
    "ahead": {"t": "ahead", "act": b"\x81\xa4type\xa5stage"},
}

OPTIONAL = {
    ("hello", "password"),
    ("hello", "resume"),
    ("hello", "watch"),
    ("turn", "legal"),
    ("turn", "msg"),
    ("seats", "watchers"),
    ("error", "args"),
    ("error", "variant"),
}

# A value of the wrong type for each kind of field.
WRONG: dict[type, list[Any]] = {
    Int: ["1", 1.0, None, b"\x01", True, False],
    Text: [b"text", 1, None, ["text"]],
    Bytes: ["text", 1, None, bytearray(b"x"), [1]],
    Bool: [0, 1, "true", None],
    Map: [[], "map", None, [("a", 1)]],
    MapOf: [[], "map", None, [("a", 1)]],
    List: [{}, "list", None, b"list", ("a",)],
}

# Every top-level field that has a length limit: (type, field, limit).
LIMITS = [
    ("hello", "name", wire.MAX_NAME),
    ("hello", "password", 200),
    ("commit", "act", MAX_ACT_SIZE),
    ("commit", "asig", 64),
    ("reveal", "act", MAX_ACT_SIZE),
    ("reveal", "asig", 64),
    ("reveal", "seed", 32),
    ("act", "act", MAX_ACT_SIZE),
    ("ahead", "act", MAX_ACT_SIZE),
    ("act", "asig", 64),
    ("checkpoint", "sig", 64),
    ("welcome", "head", 32),
    ("watching", "head", 32),
    ("turn", "need", wire.MAX_TEXT),
    ("turn", "msg", 4096),
    ("error", "code", 64),
    ("error", "message", wire.MAX_TEXT),
    ("error", "variant", 64),
    ("bye", "reason", wire.MAX_TEXT),
]


def receive(frame: bytes) -> Message:
    """What a receiver does with a frame: decode it, then check it against its schema."""
    message = wire.decode(frame)
    wire.validate(message)
    return message


def field_node(t: str, field: str) -> Schema:
    return wire.SCHEMAS[t].fields[field]


def all_fields() -> list[tuple[str, str]]:
    return [(t, f) for t, schema in wire.SCHEMAS.items() for f in schema.fields]


def nested_fields(schema: Schema, example: Any, path: str) -> list[tuple[str, list[Any], Schema]]:
    """Every field below the top level of an example: (its path, its keys from the top, node)."""
    out: list[tuple[str, list[Any], Schema]] = []
    if isinstance(schema, Map):
        for key, node in schema.fields.items():
            if key in example:
                out.append((f"{path}.{key}", [key], node))
                out += [
                    (p, [key, *keys], n)
                    for p, keys, n in nested_fields(node, example[key], f"{path}.{key}")
                ]
    elif isinstance(schema, List) and example:
        out.append((f"{path}[0]", [0], schema.item))
        out += [
            (p, [0, *keys], n)
            for p, keys, n in nested_fields(schema.item, example[0], f"{path}[0]")
        ]
    return out


def is_required(schema: Schema, keys: list[Any]) -> bool:
    """Whether the map key at the end of ``keys`` is one its map requires."""
    node = schema
    for key in keys[:-1]:
        node = node.fields[key] if isinstance(node, Map) else node.item  # type: ignore[attr-defined]
    return isinstance(node, Map) and keys[-1] in dict(node.required)


def replaced(message: Any, keys: list[Any], value: Any = None, *, delete: bool = False) -> Any:
    """A deep copy of ``message`` with the value at ``keys`` replaced (or deleted)."""
    copy = copy_value(message)
    target = copy
    for key in keys[:-1]:
        target = target[key]
    if delete:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value
    return copy


def copy_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: copy_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_value(v) for v in value]
    return value


def test_the_examples_cover_every_message_and_field() -> None:
    host_sends = wire.HOST_TO_PEER | wire.HOST_TO_WATCHER
    assert set(GOOD) == set(wire.SCHEMAS) == wire.PEER_TO_HOST | host_sends
    both_ways = wire.PEER_TO_HOST & host_sends
    assert both_ways == {"bye"}  # a seat may leave, as the host may
    # a watcher is never welcomed to a seat, never prompted
    # nor passed a stage output ahead of its record (``ahead``: only seats check them early)
    assert wire.HOST_TO_PEER - {"welcome", "turn", "ahead"} | {"watching"} == wire.HOST_TO_WATCHER
    for t, example in GOOD.items():
        assert set(example) == {"t"} | set(wire.SCHEMAS[t].fields)
        for _, keys, node in nested_fields(wire.SCHEMAS[t], example, t):
            if isinstance(node, Map):
                value = example
                for key in keys:
                    value = value[key]
                assert set(value) == set(node.fields), keys
    optional = {(t, f) for t, schema in wire.SCHEMAS.items() for f, _ in schema.optional}
    assert optional == OPTIONAL
    limited = {
        (t, f)
        for t, f in all_fields()
        if isinstance(node := field_node(t, f), Text | Bytes) and node.max_len is not None
    }
    assert {(t, f) for t, f, _ in LIMITS} == limited - {("record", "data"), ("fork", "record")}


@pytest.mark.parametrize("t", sorted(GOOD))
def test_well_formed_messages_pass_and_round_trip(t: str) -> None:
    message = GOOD[t]
    wire.validate(message)
    assert receive(wire.encode(message)) == message
    assert wire.message(t, **{k: v for k, v in message.items() if k != "t"}) == message


@pytest.mark.parametrize(("t", "field"), sorted(OPTIONAL))
def test_optional_fields_may_be_left_out(t: str, field: str) -> None:
    message = {k: v for k, v in GOOD[t].items() if k != field}
    assert receive(wire.encode(message)) == message


@pytest.mark.parametrize(("t", "field"), [tf for tf in all_fields() if tf not in OPTIONAL])
def test_a_missing_field_is_a_bad_message(t: str, field: str) -> None:
    message = {k: v for k, v in GOOD[t].items() if k != field}
    with pytest.raises(WireError) as info:
        wire.validate(message)
    assert info.value.code == "bad-message"
    assert str(info.value) == f"{t}.{field}: missing"
    with pytest.raises(WireError):
        receive(wire.encode(message))


@pytest.mark.parametrize(("t", "field"), all_fields())
def test_a_field_of_the_wrong_type_is_a_bad_message(t: str, field: str) -> None:
    for value in WRONG[type(field_node(t, field))]:
        with pytest.raises(WireError) as info:
            wire.validate(GOOD[t] | {field: value})
        assert info.value.code == "bad-message", value
        assert str(info.value).startswith(f"{t}.{field}: must be "), value


NESTED = [
    (t, path, keys, node)
    for t in sorted(GOOD)
    for path, keys, node in nested_fields(wire.SCHEMAS[t], GOOD[t], t)
    if len(keys) > 1
]


@pytest.mark.parametrize(("t", "path", "keys", "node"), NESTED, ids=[n[1] for n in NESTED])
def test_every_nested_field_is_checked_and_named(
    t: str, path: str, keys: list[Any], node: Schema
) -> None:
    if isinstance(keys[-1], str) and is_required(wire.SCHEMAS[t], keys):
        with pytest.raises(WireError) as info:
            wire.validate(replaced(GOOD[t], keys, delete=True))
        assert info.value.code == "bad-message" and str(info.value) == f"{path}: missing"
    for value in WRONG.get(type(node), []):
        if isinstance(node, Nullable) and value is None:
            continue
        with pytest.raises(WireError) as info:
            wire.validate(replaced(GOOD[t], keys, value))
        assert info.value.code == "bad-message"
        assert str(info.value).startswith(f"{path}: "), (value, str(info.value))


@pytest.mark.parametrize(
    ("message", "text"),
    [
        # the two host messages that used to raise inside the seat (KeyError, TypeError)
        (
            replaced(GOOD["welcome"], ["table", "table_id"], delete=True),
            "welcome.table.table_id: missing",
        ),
        (GOOD["seats"] | {"seats": [1, 2]}, "seats.seats[0]: must be map, not int"),
        (
            replaced(GOOD["welcome"], ["table", "seats", 0, "name"], 7),
            "welcome.table.seats[0].name",
        ),
        (replaced(GOOD["view"], ["view", "scores", 1], "0"), "view.view.scores[1]: must be int"),
        (replaced(GOOD["view"], ["view", "state"], []), "view.view.state: must be map"),
        (GOOD["turn"] | {"legal": ["draw", 7]}, "turn.legal[1]: must be str"),
        (replaced(GOOD["welcome"], ["table", "table_id"], b"i" * 15), "welcome.table.table_id"),
        (replaced(GOOD["welcome"], ["table", "rules"], {1: 2}), "welcome.table.rules[1]: a key"),
        (GOOD["seats"] | {"seats": [SEAT] * (wire.MAX_SEATS + 1)}, "seats.seats: too long"),
        (GOOD["welcome"] | {"seat": -1}, "welcome.seat: must be a non-negative int, not -1"),
    ],
)
def test_nested_fields_off_schema_are_bad_messages(message: Message, text: str) -> None:
    with pytest.raises(WireError) as info:
        receive(wire.encode(message))
    assert info.value.code == "bad-message" and str(info.value).startswith(text)


def test_a_view_state_is_a_map_the_game_fills_in() -> None:
    state = {"hand": ["KH"], "melds": [[{"cards": ["QS"] * 3}]], "end": None}
    wire.validate(replaced(GOOD["view"], ["view", "state"], state))


def test_bools_are_not_integers_and_integers_are_not_bools() -> None:
    for t, field in all_fields():
        if isinstance(field_node(t, field), Int):
            for flag in (True, False):
                with pytest.raises(WireError, match="int, not bool"):
                    receive(wire.encode(GOOD[t] | {field: flag}))
    for number in (0, 1):
        with pytest.raises(WireError, match="must be bool, not int"):
            receive(wire.encode(GOOD["hello"] | {"bot": number}))
    # through msgpack a bool stays a bool: true is not 1
    assert msgpack.packb(True) != msgpack.packb(1)


def test_negative_and_huge_integers_are_integers_to_the_schema() -> None:
    # ranges of what a seat sends are the table's business (a seat number, a sequence number)
    for value in (-1, 2**63, -(2**63)):
        wire.validate(GOOD["checkpoint"] | {"hand": value})
        wire.validate(GOOD["hello"] | {"resume": value})


@pytest.mark.parametrize(("t", "field", "limit"), LIMITS)
def test_over_long_fields_are_bad_messages(t: str, field: str, limit: int) -> None:
    filler: Any = "x" if isinstance(field_node(t, field), Text) else b"x"
    wire.validate(GOOD[t] | {field: filler * limit})  # at the limit: fine
    with pytest.raises(WireError, match="too long") as info:
        wire.validate(GOOD[t] | {field: filler * (limit + 1)})
    assert info.value.code == "bad-message"


def test_limits_count_characters_for_text_and_bytes_for_bin() -> None:
    wire.validate(GOOD["hello"] | {"name": "é" * wire.MAX_NAME})  # 80 bytes of UTF-8, 40 chars
    with pytest.raises(WireError):
        wire.validate(GOOD["hello"] | {"name": "é" * (wire.MAX_NAME + 1)})


def test_a_record_may_carry_a_whole_log_record() -> None:
    data = b"r" * (1 << 20)
    message = GOOD["record"] | {"data": data}
    assert receive(wire.encode(message))["data"] == data


@pytest.mark.parametrize(
    "message",
    [
        {},
        {"t": "fly"},
        {"t": 1},
        {"t": None},
        {"t": b"hello"},
        {"type": "hello"},
        {"t": "Hello"},
        {"t": ["hello"]},
    ],
)
def test_an_unknown_message_type(message: Message) -> None:
    with pytest.raises(WireError) as info:
        receive(wire.encode(message))
    assert info.value.code == "unknown-message"


def test_extra_fields_are_ignored() -> None:
    message = GOOD["bye"] | {"later": [1, 2], "t2": "x"}
    assert receive(wire.encode(message)) == message
    # in nested maps too: a later version may add fields to the table or a seat
    message = replaced(GOOD["welcome"], ["table", "seats", 0, "colour"], "red")
    assert receive(wire.encode(message)) == message


def test_wire_errors_are_value_errors_with_a_code() -> None:
    error = WireError("bad-message", "text")
    assert isinstance(error, ValueError) and error.code == "bad-message" and str(error) == "text"
    assert issubclass(FramingError, ValueError) and not issubclass(FramingError, WireError)


# --------------------------------------------------------------------------- decoding


@pytest.mark.parametrize(
    "frame",
    [
        b"",
        b"\xc1",  # never used by msgpack
        b"\x93\x01",  # an array cut short
        b"\xdb\xff\xff\xff\xff",  # a str claiming 4 GiB
        b"\x81\xa1t",  # a map cut short
        msgpack.packb([{"t": "bye", "reason": "x"}]),  # an array, not a map
        msgpack.packb("bye"),
        msgpack.packb(7),
        msgpack.packb(None),
        msgpack.packb({"t": "bye", "reason": "x"}) + b"\x00",  # trailing bytes
        msgpack.packb({"t": "bye", "reason": "x"}) * 2,  # two messages in one frame
        b"\xa2\xff\xfe",  # a str that is not UTF-8
        b"\x81\xa1t\xa3bye" + b"\x91" * 2000 + b"\x90",  # nested beyond msgpack's limit
    ],
)
def test_frames_that_are_not_one_msgpack_map_are_framing_errors(frame: bytes) -> None:
    with pytest.raises(FramingError):
        wire.decode(frame)


def test_ext_types_in_a_map_are_off_schema_or_framing_errors() -> None:
    frame = msgpack.packb({"t": "bye", "reason": msgpack.ExtType(5, b"x")})
    with pytest.raises((FramingError, WireError)):
        receive(frame)


def test_map_keys_need_not_be_strings() -> None:
    frame = msgpack.packb({"t": "bye", "reason": "x", 1: 2}, use_bin_type=True)
    message: dict[Any, Any] = receive(frame)
    assert message[1] == 2


def test_bin_and_str_stay_apart() -> None:
    # a str where bin is expected (an old client without use_bin_type) is off-schema
    frame = msgpack.packb({"t": "record", "seq": 0, "data": "text"}, use_bin_type=True)
    with pytest.raises(WireError):
        receive(frame)
    # without use_bin_type bytes travel as str (raw): off-schema, or not even UTF-8
    frame = msgpack.packb({"t": "record", "seq": 0, "data": b"ab"}, use_bin_type=False)
    with pytest.raises(WireError):
        receive(frame)
    frame = msgpack.packb({"t": "record", "seq": 0, "data": b"\x93"}, use_bin_type=False)
    with pytest.raises(FramingError):
        wire.decode(frame)


# --------------------------------------------------------------------------- encoding


def test_encode_refuses_a_message_over_the_frame_limit() -> None:
    overhead = len(wire.encode({"t": "record", "seq": 0, "data": b""}))
    fits = {"t": "record", "seq": 0, "data": b"x" * (wire.MAX_FRAME - overhead - 4)}
    assert len(wire.encode(fits)) <= wire.MAX_FRAME
    with pytest.raises(ValueError, match="exceeds the frame limit"):
        wire.encode({"t": "record", "seq": 0, "data": b"x" * wire.MAX_FRAME})


def test_encode_uses_bin_for_bytes() -> None:
    data = wire.encode({"t": "record", "seq": 0, "data": b"ab"})
    assert b"\xc4\x02ab" in data  # bin 8
    assert msgpack.unpackb(data, raw=False) == {"t": "record", "seq": 0, "data": b"ab"}


def test_message_builds_and_validates() -> None:
    assert wire.message("bye", reason="done") == {"t": "bye", "reason": "done"}
    with pytest.raises(WireError):
        wire.message("bye")
    with pytest.raises(WireError):
        wire.message("nope", reason="x")


def test_limits() -> None:
    assert wire.MAX_FRAME == 2 * 1024 * 1024
    assert (wire.PROTOCOL_MIN, wire.PROTOCOL_MAX) == (1, 3)
    blind = {"announce", "stage", "keys", "release", "reds"}
    assert {"commit", "reveal", "act", "checkpoint", "wait"} | blind == wire.NEEDS
    # a frame's length prefix is 4 bytes, big-endian: the framing layer's MAX_LENGTH
    from canasta_net.net.framing import FrameProtocol

    assert FrameProtocol.MAX_LENGTH == wire.MAX_FRAME
    assert struct.calcsize(FrameProtocol.structFormat) == 4 and FrameProtocol.structFormat == "!I"


# --------------------------------------------------------------------------- versions


@pytest.mark.parametrize(
    ("low", "high", "agreed"),
    [(1, 1, 1), (0, 1, 1), (1, 5, 3), (0, 9, 3), (-3, 1, 1), (2, 2, 2), (1, 2, 2), (3, 3, 3)],
)
def test_negotiate_picks_the_highest_common_version(low: int, high: int, agreed: int) -> None:
    assert wire.negotiate(low, high) == agreed


@pytest.mark.parametrize(("low", "high"), [(4, 4), (4, 9), (0, 0), (-1, 0), (3, 1), (1, 0)])
def test_negotiate_refuses_ranges_without_a_common_version(low: int, high: int) -> None:
    with pytest.raises(WireError) as info:
        wire.negotiate(low, high)
    assert info.value.code == "version-mismatch"
    assert "1-3" in str(info.value) and f"{low}-{high}" in str(info.value)


# --------------------------------------------------------------------------- the document

ROOT = Path(__file__).resolve().parent.parent


def codes_in(path: Path, pattern: str) -> set[str]:
    return set(re.findall(pattern, path.read_text(encoding="utf-8")))


def test_the_document_lists_every_code_the_host_can_send() -> None:
    doc = (ROOT / "docs" / "wire-protocol.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"`([a-z]+(?:-[a-z]+)*)`", doc))
    src = ROOT / "canasta_net"
    raised = codes_in(src / "net" / "wire.py", r'WireError\(\s*"([a-z-]+)"')
    raised |= codes_in(src / "net" / "host.py", r'TableError\(\s*"([a-z-]+)"')
    raised |= codes_in(src / "table" / "host.py", r'TableError\(\s*"([a-z-]+)"')
    for module in ("protocol.py", "commit_reveal.py", "blind.py"):
        raised |= codes_in(src / "hand" / module, r'HandRefused\(\s*"([a-z-]+)"')
    raised |= codes_in(src / "deal" / "blind" / "hand.py", r'BlindRefused\(\s*"([a-z-]+)"')
    # the deal's refusals that a seat's commitment or reveal can meet
    raised |= {
        "duplicate-commitment",
        "bad-commitment-size",
        "seed-size",
        "reveal-mismatch",
        "already-revealed",
    }
    rules = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    reasons = rules.split("## Reason codes", 1)[1].split("\n## ", 1)[0]
    engine = set(re.findall(r"`([a-z]+(?:-[a-z]+)+)`", reasons))
    assert len(engine) > 20 and len(raised) > 20
    assert raised - documented == set()
    assert engine - documented == set()
    for t, schema in wire.SCHEMAS.items():
        assert f"### `{t}`" in doc or f"`{t}`" in doc
        for field in schema.fields:
            assert f"`{field}`" in doc, (t, field)
        for path, _, _ in nested_fields(schema, GOOD[t], t):
            assert f"`{path.rsplit('.', 1)[-1].split('[')[0]}`" in doc, path
