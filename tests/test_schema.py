"""The one validator for untrusted data (``canasta_net/schema.py``): each node, the paths its
errors name, and properties over random schemas and random values (hypothesis)."""

from __future__ import annotations

import re
from typing import Any

import msgpack
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from canasta_net.deal.blind.hand import FIELD_SCHEMAS
from canasta_net.log import format as log_format
from canasta_net.net import wire
from canasta_net.schema import (
    CODES,
    Anything,
    Bool,
    Bytes,
    Int,
    List,
    Map,
    MapOf,
    Nullable,
    Schema,
    SchemaError,
    Text,
    Tuple,
    kind_of,
    require,
    validate,
)


def error_of(schema: Schema, value: Any, name: str = "x") -> SchemaError:
    with pytest.raises(SchemaError) as info:
        validate(schema, value, name)
    assert info.value.code in CODES
    return info.value


# --------------------------------------------------------------------------- each node


def test_ints_and_their_ranges() -> None:
    assert validate(Int(), -(2**63)) == -(2**63)
    assert validate(Int(0, 3), 3) == 3
    for flag in (True, False):
        assert str(error_of(Int(), flag)) == "x: must be int, not bool"
    assert error_of(Int(), 1.0).code == "wrong-type"
    error = error_of(Int(0, 3), 4)
    assert (error.code, str(error)) == ("out-of-range", "x: must be an int in 0..3, not 4")
    assert str(error_of(Int(low=0), -1)) == "x: must be a non-negative int, not -1"
    assert str(error_of(Int(low=2), 1)) == "x: must be an int of at least 2, not 1"
    assert str(error_of(Int(high=2), 3)) == "x: must be an int of at most 2, not 3"


def test_bools_are_not_ints() -> None:
    assert validate(Bool(), False) is False
    assert str(error_of(Bool(), 0)) == "x: must be bool, not int"


def test_text_counts_characters() -> None:
    assert validate(Text(3), "ééé") == "ééé"  # 6 bytes of UTF-8, 3 characters
    error = error_of(Text(3), "éééé")
    assert (error.code, str(error)) == ("too-long", "x: too long: 4 characters, at most 3")
    assert error_of(Text(min_len=1), "").code == "too-short"
    assert str(error_of(Text(), b"bytes")) == "x: must be str, not bin"


def test_text_patterns_and_printable_text() -> None:
    hex_id = Text(pattern=re.compile(r"[0-9a-f]+"), means="lower-case hex")
    assert validate(hex_id, "00ff") == "00ff"
    error = error_of(hex_id, "00FF")
    assert (error.code, str(error)) == ("bad-text", "x: must be lower-case hex")
    assert "str matching" in str(error_of(Text(pattern=re.compile("a")), "b"))
    name = Text(20, printable=True)
    assert validate(name, "Ταβλί 🂡") == "Ταβλί 🂡"
    assert str(error_of(name, " padded")) == "x: leading or trailing white space"
    for bad in ("bell\x07", "bidi\u202eevil", "zero\u200bwidth", "line\u2028sep"):
        assert error_of(name, bad).code == "bad-text"
    assert "U+202E" in str(error_of(name, "bidi\u202eevil"))


def test_bytes_of_an_exact_or_a_maximum_size() -> None:
    assert validate(Bytes(size=2), b"ab") == b"ab"
    error = error_of(Bytes(size=2), b"abc")
    assert (error.code, str(error)) == ("wrong-size", "x: must be bin of 2 bytes, not 3")
    assert error_of(Bytes(2), b"abc").code == "too-long"
    assert error_of(Bytes(min_len=1), b"").code == "too-short"
    for wrong in ("ab", bytearray(b"ab"), memoryview(b"ab"), [97, 98]):
        assert error_of(Bytes(), wrong).code == "wrong-type"


def test_lists_and_tuples() -> None:
    assert validate(List(Int(), 2), [1, 2]) == [1, 2]
    assert str(error_of(List(Int(), 2), [1, 2, 3])) == "x: too long: 3 items, at most 2"
    assert str(error_of(List(Int()), [1, "2"])) == "x[1]: must be int, not str"
    assert str(error_of(List(Int()), (1,))) == "x: must be list, not tuple"
    pair = Tuple(Int(), Bytes())
    assert validate(pair, [1, b"k"]) == [1, b"k"]
    assert str(error_of(pair, [1])) == "x: must be list of 2 items, not 1"
    assert str(error_of(pair, [1, "k"])) == "x[1]: must be bin, not str"


def test_maps_with_required_and_optional_keys() -> None:
    seat = Map({"name": Text(8), "bot": Bool()}, {"colour": Text()})
    assert validate(seat, {"name": "ada", "bot": False, 7: "other keys are ignored"})
    assert validate(seat, {"name": "ada", "bot": False, "colour": "red"})
    error = error_of(seat, {"name": "ada"}, "seat")
    assert (error.code, str(error), error.path) == ("missing", "seat.bot: missing", "seat.bot")
    assert str(error_of(seat, {"name": "ada", "bot": 1})) == "x.bot: must be bool, not int"
    assert str(error_of(seat, {"name": "a", "bot": True, "colour": 1})).startswith("x.colour:")
    assert str(error_of(seat, [("name", "ada")])) == "x: must be map, not list"
    assert list(seat.fields) == ["name", "bot", "colour"]


def test_maps_of_one_key_and_one_value_schema() -> None:
    by_seat = MapOf(Int(0, 3), Bytes(size=2), 2, min_len=1)
    assert validate(by_seat, {0: b"ab", 3: b"cd"})
    assert str(error_of(by_seat, {4: b"ab"})) == "x[4]: a key that is not an int in 0..3"
    assert str(error_of(by_seat, {"me": b"ab"})) == "x.me: a key that is not an int in 0..3"
    assert str(error_of(by_seat, {1: b"a"})) == "x[1]: must be bin of 2 bytes, not 1"
    assert error_of(by_seat, {}).code == "too-short"
    assert error_of(by_seat, {0: b"ab", 1: b"ab", 2: b"ab"}).code == "too-long"


def test_nullable_and_anything() -> None:
    assert validate(Nullable(Map({"a": Int()})), None) is None
    assert str(error_of(Nullable(Map({"a": Int()})), [])) == "x: must be map, not list"
    assert validate(Anything(), msgpack.ExtType(1, b"")) is not None


def test_paths_through_nested_containers() -> None:
    welcome = Map({"table": Map({"seats": List(Map({"name": Text()}))})})
    value = {"table": {"seats": [{"name": "a"}, {"name": 2}]}}
    error = error_of(welcome, value, "welcome")
    assert str(error) == "welcome.table.seats[1].name: must be str, not int"
    assert error.problem == "must be str, not int" and error.code == "wrong-type"
    # without a name, the path starts at the first key
    assert str(error_of(welcome, {}, "")) == "table: missing"


def test_require_checks_one_field_of_a_map() -> None:
    fields = {"host": 4, "seats": 2}
    assert require(fields, "seats", Int(1, 8), "header") == 2
    with pytest.raises(SchemaError) as info:
        require(fields, "host", Int(0, 1), "header")
    assert str(info.value) == "header.host: must be an int in 0..1, not 4"
    with pytest.raises(SchemaError) as info:
        require(fields, "deal", Text(), "header")
    assert (info.value.code, str(info.value)) == ("missing", "header.deal: missing")


def test_kind_of_names_msgpack_types() -> None:
    values: tuple[object, ...] = (None, True, 1, 1.5, "s", b"b", [], {})
    assert [kind_of(v) for v in values] == [
        "nil",
        "bool",
        "int",
        "float",
        "str",
        "bin",
        "list",
        "map",
    ]
    assert kind_of(bytearray()) == "bytearray"


# --------------------------------------------------------------------------- random schemas

KEYS = st.sampled_from(["a", "b", "seat", "name", "table_id", "x-y"])


@st.composite
def ints(draw: st.DrawFn) -> Int:
    low = draw(st.none() | st.integers(-5, 5))
    high = draw(st.none() | st.integers(low if low is not None else -5, 10))
    return Int(low, high)


@st.composite
def texts(draw: st.DrawFn) -> Text:
    low = draw(st.integers(0, 3))
    return Text(draw(st.none() | st.integers(low, 8)), min_len=low)


@st.composite
def bytes_nodes(draw: st.DrawFn) -> Bytes:
    if draw(st.booleans()):
        return Bytes(size=draw(st.integers(0, 4)))
    low = draw(st.integers(0, 3))
    return Bytes(draw(st.none() | st.integers(low, 8)), min_len=low)


LEAVES = st.one_of(ints(), texts(), bytes_nodes(), st.just(Bool()), st.just(Anything()))


@st.composite
def lists(draw: st.DrawFn, items: st.SearchStrategy[Schema]) -> List:
    low = draw(st.integers(0, 2))
    return List(draw(items), draw(st.none() | st.integers(low, 4)), min_len=low)


@st.composite
def maps(draw: st.DrawFn, values: st.SearchStrategy[Schema]) -> Map:
    keys = draw(st.lists(KEYS, unique=True, max_size=4))
    split = draw(st.integers(0, len(keys)))
    required = {k: draw(values) for k in keys[:split]}
    optional = {k: draw(values) for k in keys[split:]}
    return Map(required, optional)


@st.composite
def maps_of(draw: st.DrawFn, values: st.SearchStrategy[Schema]) -> MapOf:
    key = draw(st.sampled_from([Int(0, 7), Text(8)]))
    return MapOf(
        key, draw(values), draw(st.none() | st.integers(2, 4)), min_len=draw(st.integers(0, 2))
    )


SCHEMAS = st.recursive(
    LEAVES,
    lambda children: st.one_of(
        lists(children),
        st.lists(children, min_size=1, max_size=3).map(lambda items: Tuple(*items)),
        maps(children),
        maps_of(children),
        children.map(Nullable),
    ),
    max_leaves=10,
)

MSGPACK_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=10)
    | st.binary(max_size=10),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=4) | st.integers(0, 9), children, max_size=4)
    ),
    max_leaves=12,
)


def values_for(schema: Schema) -> st.SearchStrategy[Any]:
    """Values that follow ``schema`` (other keys may ride along in maps)."""
    if isinstance(schema, Int):  # within msgpack's integers
        low = -(2**63) if schema.low is None else schema.low
        return st.integers(low, 2**64 - 1 if schema.high is None else schema.high)
    if isinstance(schema, Bool):
        return st.booleans()
    if isinstance(schema, Text):
        return st.text(min_size=schema.min_len, max_size=schema.max_len)
    if isinstance(schema, Bytes):
        if schema.size is not None:
            return st.binary(min_size=schema.size, max_size=schema.size)
        return st.binary(min_size=schema.min_len, max_size=schema.max_len)
    if isinstance(schema, List):
        return st.lists(values_for(schema.item), min_size=schema.min_len, max_size=schema.max_len)
    if isinstance(schema, Tuple):
        return st.tuples(*(values_for(item) for item in schema.items)).map(list)
    if isinstance(schema, Map):
        fields = st.fixed_dictionaries(
            {k: values_for(v) for k, v in schema.required},
            optional={k: values_for(v) for k, v in schema.optional},
        )
        extra = st.dictionaries(st.integers(100, 110), MSGPACK_VALUES, max_size=2)
        return st.tuples(fields, extra).map(lambda pair: pair[1] | pair[0])
    if isinstance(schema, MapOf):
        return st.dictionaries(
            values_for(schema.key),
            values_for(schema.value),
            min_size=schema.min_len,
            max_size=schema.max_len,
        )
    if isinstance(schema, Nullable):
        return st.none() | values_for(schema.inner)
    assert isinstance(schema, Anything)
    return MSGPACK_VALUES


# Values of a type each kind of node refuses.
WRONG: dict[type, list[Any]] = {
    Int: ["1", True, 1.5, None, b"\x01"],
    Bool: [0, 1, "true", None],
    Text: [b"text", 1, None, ["t"]],
    Bytes: ["text", bytearray(b"x"), None, 7],
    List: [{}, "list", None, (1,)],
    Tuple: [{}, "list", None, (1,)],
    Map: [[], "map", None, 0],
    MapOf: [[], "map", None, 0],
}

Location = tuple[tuple[str | int, ...], Schema, Any]


def locations(schema: Schema, value: Any, path: tuple[str | int, ...] = ()) -> list[Location]:
    """Every value inside ``value`` that ``schema`` names: (its path, its node, its container
    key kind), the root included."""
    out: list[Location] = [(path, schema, value)]
    if isinstance(schema, Nullable):
        return out if value is None else out + locations(schema.inner, value, path)[1:]
    if isinstance(schema, List):
        for index, item in enumerate(value):
            out += locations(schema.item, item, (*path, index))
    elif isinstance(schema, Tuple):
        for index, (node, item) in enumerate(zip(schema.items, value, strict=True)):
            out += locations(node, item, (*path, index))
    elif isinstance(schema, Map):
        for key, node in schema.fields.items():
            if key in value:
                out += locations(node, value[key], (*path, key))
    elif isinstance(schema, MapOf):
        for key, item in value.items():
            out += locations(schema.value, item, (*path, key))
    return out


def rendered(name: str, path: tuple[str | int, ...]) -> str:
    return name + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def changed(value: Any, path: tuple[str | int, ...], new: Any, *, delete: bool = False) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    if delete and not rest:
        del copy[head]
    else:
        copy[head] = changed(copy[head], rest, new, delete=delete)
    return copy


def innermost(node: Schema) -> Schema:
    while isinstance(node, Nullable):
        node = node.inner
    return node


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_values_made_for_a_schema_pass_it(data: st.DataObject) -> None:
    schema = data.draw(SCHEMAS)
    value = data.draw(values_for(schema))
    assert validate(schema, value, "root") is value


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_one_value_of_a_wrong_type_is_named_by_its_path(data: st.DataObject) -> None:
    schema = data.draw(SCHEMAS)
    value = data.draw(values_for(schema))
    candidates = [loc for loc in locations(schema, value) if type(innermost(loc[1])) in WRONG]
    assume(candidates)
    path, node, _ = data.draw(st.sampled_from(candidates))
    wrong = data.draw(st.sampled_from(WRONG[type(innermost(node))]))
    assume(wrong is not None or not isinstance(node, Nullable))
    with pytest.raises(SchemaError) as info:
        validate(schema, changed(value, path, wrong), "root")
    assert info.value.code == "wrong-type"
    assert info.value.path == rendered("root", path)
    assert str(info.value).startswith(rendered("root", path) + ": must be ")


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_missing_required_key_is_named_by_its_path(data: st.DataObject) -> None:
    # a map at the root with a required key at least; more maps may hide anywhere below it
    schema = Map({"key": data.draw(SCHEMAS)}, {"maybe": data.draw(SCHEMAS)})
    value = data.draw(values_for(schema))
    required = [
        (path, key)
        for path, node, here in locations(schema, value)
        if isinstance(innermost(node), Map) and here is not None
        for key, _ in innermost(node).required  # type: ignore[attr-defined]
    ]
    path, key = data.draw(st.sampled_from(required))
    with pytest.raises(SchemaError) as info:
        validate(schema, changed(value, (*path, key), None, delete=True), "root")
    assert info.value.code == "missing"
    assert str(info.value) == rendered("root", (*path, key)) + ": missing"


# --------------------------------------------------------------------------- the real schemas

REAL_SCHEMAS: list[tuple[str, Schema]] = [
    *wire.SCHEMAS.items(),
    *FIELD_SCHEMAS.items(),
    ("header", log_format._HEADER),
    ("action", log_format._seat_schemas(4).action),
    ("checkpoint", log_format._seat_schemas(4).checkpoint),
]


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(REAL_SCHEMAS), MSGPACK_VALUES)
def test_any_value_passes_or_fails_with_a_schema_error(
    named: tuple[str, Schema], value: Any
) -> None:
    name, schema = named
    try:
        validate(schema, value, name)
    except SchemaError as e:
        assert e.code in CODES and str(e).startswith(name)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_values_made_for_the_wire_schemas_pass_after_a_msgpack_round_trip(
    data: st.DataObject,
) -> None:
    t = data.draw(st.sampled_from(sorted(wire.SCHEMAS)))
    message = data.draw(values_for(wire.SCHEMAS[t])) | {"t": t}
    received = wire.decode(wire.encode(message))
    wire.validate(received)
