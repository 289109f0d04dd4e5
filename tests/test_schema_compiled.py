"""A ``Map`` checks a value with one compiled test first and walks it field by field only where
that test fails: the test must accept exactly what the walk accepts. Each real schema (every wire
message, every kind of log record's parts) is tried on real values and on each of them broken in
one place (a field removed, or replaced by a value of another type or size); the compiled test
and the walk must agree on every one.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from test_game_log import semantic_log

from canasta_net.log import format as log_format
from canasta_net.log import iter_records
from canasta_net.net import wire
from canasta_net.schema import Map, SchemaError, _compiled

ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    3,
    2**70,
    1.5,
    "",
    "x",
    "x" * 5000,
    " padded ",
    "\x1b[2J",
    b"",
    b"x" * 16,
    b"x" * 32,
    b"x" * 33,
    b"x" * 64,
    [],
    [1, 2],
    ["x"],
    {},
    {"x": 1},
    {1: b"x" * 32},
]


def walk_accepts(schema: Map, value: Any) -> bool:
    try:
        schema.walk(value)
    except SchemaError:
        return False
    return True


def broken_once(value: Any) -> Iterator[Any]:
    """``value`` broken in one place: each key removed, each value replaced by each odd value
    (at every depth)."""
    yield from ODD_VALUES
    if type(value) is dict:
        for key in list(value):
            removed = dict(value)
            del removed[key]
            yield removed
            for inner in broken_once(value[key]):
                changed = dict(value)
                changed[key] = inner
                yield changed
    elif type(value) is list:
        for index, item in enumerate(value[:3]):
            for inner in broken_once(item):
                changed_list = list(value)
                changed_list[index] = inner
                yield changed_list


def samples() -> list[tuple[str, Map, Any]]:
    """Real values for each real schema: a seat's messages from a recorded match's log, and the
    log's record bodies, signed messages and checkpoints."""
    records = list(iter_records(semantic_log().data))
    header = records[0]
    seats = log_format._seat_schemas(len(header.fields["seats"]))
    out: list[tuple[str, Map, Any]] = [("header", log_format._HEADER, header.fields)]
    for record in records[1:60] + records[-12:]:
        out.append(("common", log_format._COMMON, record.fields))
        out.append(("time", log_format._TIME, record.fields))
        if record.action is not None:
            out.append(("signed", log_format._SIGNED, record.fields))
            out.append(("action", seats.action, record.action))
        if record.checkpoint is not None:
            out.append(("checkpoint", seats.checkpoint, record.fields))
            out.append(("checkpoint msg", log_format._CHECKPOINT_MSG, record.checkpoint))
        data = record.body
        out.append(("record", wire.SCHEMAS["record"], {"t": "record", "seq": 3, "data": data}))
    seat_list: list[dict[str, Any]] = [
        {"seat": n, "name": "ann", "bot": False, "connected": True, "taken": True} for n in range(4)
    ]
    seat_list[1] |= {"left": "gone", "stand_in_in": 30}
    table = {
        "name": "t",
        "game": "canasta",
        "variant": "classic",
        "rules": {"players": 4},
        "table_id": b"t" * 16,
        "seats": seat_list,
        "deal": "commit-reveal",
    }
    view = {
        "table": "t",
        "phase": "playing",
        "hand_no": 0,
        "scores": [0, 0],
        "seats": seat_list,
        "state": {"hand": []},
        "watchers": ["bob"],
    }
    messages: dict[str, dict[str, Any]] = {
        "welcome": {"version": 2, "seat": 1, "table": table, "aseq": 0, "head": b"h" * 32},
        "view": {"view": view},
        "turn": {"need": "act", "hand": 0, "aseq": 3, "legal": ["draw"], "msg": b"m"},
        "seats": {"seats": seat_list, "watchers": ["bob"]},
        "error": {"code": "bad", "message": "no", "args": {"n": "1"}, "variant": "classic"},
        "hello": {"min": 1, "max": 2, "name": "ann", "bot": False, "password": "pw", "watch": True},
        "reveal": {"act": b"a", "asig": b"s" * 64, "seed": b"s" * 32},
        "checkpoint": {"hand": 0, "sig": b"s" * 64},
        "bye": {"reason": "done"},
    }
    for t, fields in messages.items():
        out.append((t, wire.SCHEMAS[t], {"t": t, **fields}))
    return out


SAMPLES = samples()


@pytest.mark.parametrize("name, schema, value", SAMPLES[:1] + SAMPLES[-12:], ids=lambda x: "")
def test_the_compiled_test_accepts_the_real_values(name: str, schema: Map, value: Any) -> None:
    assert walk_accepts(schema, value), name
    assert _compiled(schema)(value), name  # the fast path is taken for what really comes


def test_the_compiled_test_and_the_walk_agree_on_every_value_broken_once() -> None:
    tried = 0
    seen: set[tuple[int, str]] = set()
    for name, schema, value in SAMPLES:
        accepts = _compiled(schema)
        for broken in broken_once(copy.deepcopy(value)):
            shape = (id(schema), repr(broken)[:2000])
            if shape in seen:
                continue
            seen.add(shape)
            tried += 1
            assert accepts(broken) == walk_accepts(schema, broken), (name, broken)
    assert tried > 5000
