"""One validator for untrusted data: decoded msgpack checked against a declarative schema, sans-io.

Everything that arrives from outside (a wire message, a log record, a beacon, a seat's signed
message) is checked here before use. A schema is a tree of small nodes that mirrors the data:

- :class:`Int` (optionally in a range; a bool is never an int), :class:`Bool`, :class:`Text`
  (str, counted in characters), :class:`Bytes` (bin, counted in bytes: an exact or a maximum size);
- :class:`Map`: a map with required and optional keys, each with its own schema (other keys are
  ignored, so a later version may add some); :class:`MapOf`: a map whose every key and value
  follow one schema each (a map of seat number to bin);
- :class:`List`: a list of items of one schema, with a maximum length; :class:`Tuple`: a list of
  a fixed length whose items have a schema each;
- :class:`Nullable` (nil or the inner schema) and :class:`Anything` (left to the caller).

Types are exact: msgpack decodes to exactly ``int``, ``bool``, ``str``, ``bytes``, ``list`` and
``dict``, and a subclass (a bool for an int) is refused. :func:`validate` raises one error,
:class:`SchemaError`, with a stable ``code`` and a sentence that names the path of the bad field
(``welcome.table.table_id: missing``). Each caller turns it into its own error class and code
(``wire.WireError``, ``log.LogFormatError``, ...).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

__all__ = [
    "CODES",
    "Anything",
    "Bool",
    "Bytes",
    "Int",
    "List",
    "Map",
    "MapOf",
    "Nullable",
    "Schema",
    "SchemaError",
    "Text",
    "Tuple",
    "kind_of",
    "require",
    "validate",
]

#: The codes of :class:`SchemaError`, each with what it means.
CODES: Final = {
    "missing": "a required key is absent",
    "wrong-type": "a value is not of the type the schema names",
    "too-long": "a str, bin, list or map is over its maximum length",
    "too-short": "a str, bin, list or map is under its minimum length",
    "wrong-size": "a bin is not of its exact size, or a fixed-length list of its length",
    "out-of-range": "an int is outside its range",
    "bad-text": "a str breaks a rule on its characters or its form",
}

# Characters refused in printable text: controls (terminal escapes), format characters (bidi
# overrides, zero-width), surrogates, line and paragraph separators.
_UNPRINTABLE: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


class SchemaError(ValueError):
    """``{path}: {problem}``: a value breaks its schema; ``code`` is one of :data:`CODES`."""

    def __init__(self, code: str, problem: str) -> None:
        super().__init__(problem)
        self.code = code
        self.problem = problem
        # the path from the value that failed up to the root, filled in as the error rises
        self._segments: list[str | int] = []

    def within(self, segment: str | int) -> SchemaError:
        """The error seen from the container that holds the bad value at ``segment``."""
        self._segments.append(segment)
        return self

    @property
    def path(self) -> str:
        """Where the bad value is: ``welcome.table.seats[2].name`` (empty at the root)."""
        out = ""
        for segment in reversed(self._segments):
            if isinstance(segment, int):
                out += f"[{segment}]"
            else:
                out += f".{segment}" if out else segment
        return out

    def __str__(self) -> str:
        path = self.path
        return f"{path}: {self.problem}" if path else self.problem


def kind_of(value: Any) -> str:
    """A value's type as msgpack names it, for messages."""
    if value is None:
        return "nil"
    name = _KIND_NAMES.get(type(value))
    return name if name is not None else type(value).__name__


_KIND_NAMES: Final[dict[type, str]] = {
    bool: "bool",
    int: "int",
    float: "float",
    str: "str",
    bytes: "bin",
    list: "list",
    dict: "map",
}


def _wrong_type(node: Schema, value: Any) -> SchemaError:
    return SchemaError("wrong-type", f"must be {node.describe()}, not {kind_of(value)}")


def _length_error(count: int, unit: str, low: int, high: int | None) -> SchemaError:
    if high is not None and count > high:
        return SchemaError("too-long", f"too long: {count} {unit}, at most {high}")
    return SchemaError("too-short", f"too short: {count} {unit}, at least {low}")


_ABSENT: Final = object()
# From this many items on, a leaf checks a list's items all at once (below, one by one is faster).
_MANY: Final = 16


def _bounds(low: int, high: int | None) -> str:
    if high is None:
        return f"at least {low}" if low else ""
    return f"at most {high}" if low == 0 else f"{low} to {high}" if low != high else f"{low}"


class Schema:
    """A node of a schema. :meth:`check` raises :class:`SchemaError`, relative to the node."""

    __slots__ = ()

    def check(self, value: Any) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        """What the node accepts, in a few words (``int in 0..3``)."""
        raise NotImplementedError

    def check_items(self, values: list[Any]) -> None:
        """Check every item of a list, naming the first bad one by its index (a leaf node
        first tries all of them at once, at C speed: a prompt lists hundreds of actions)."""
        check = self.check
        for index, element in enumerate(values):
            try:
                check(element)
            except SchemaError as e:
                raise e.within(index) from None

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.describe()}>"


class Anything(Schema):
    """Any value: the caller checks it (a game's own fields, a view's contents)."""

    __slots__ = ()

    def check(self, value: Any) -> None:
        return

    def check_items(self, values: list[Any]) -> None:
        return

    def describe(self) -> str:
        return "anything"


class Bool(Schema):
    __slots__ = ()

    def check(self, value: Any) -> None:
        if type(value) is not bool:
            raise _wrong_type(self, value)

    def describe(self) -> str:
        return "bool"


class Int(Schema):
    """An int in ``low..high`` (both included, either open); never a bool."""

    __slots__ = ("high", "low")

    def __init__(self, low: int | None = None, high: int | None = None) -> None:
        self.low = low
        self.high = high

    def check(self, value: Any) -> None:
        if type(value) is not int:
            raise _wrong_type(self, value)
        if (self.low is not None and value < self.low) or (
            self.high is not None and value > self.high
        ):
            raise SchemaError("out-of-range", f"must be {self.describe()}, not {value}")

    def check_items(self, values: list[Any]) -> None:
        if len(values) < _MANY or (
            set(map(type, values)) != {int}
            or (self.low is not None and min(values) < self.low)
            or (self.high is not None and max(values) > self.high)
        ):
            super().check_items(values)  # one by one: few items, or one is bad (named)

    def describe(self) -> str:
        low, high = self.low, self.high
        if low is None and high is None:
            return "int"
        if high is None:
            return "a non-negative int" if low == 0 else f"an int of at least {low}"
        if low is None:
            return f"an int of at most {high}"
        return f"an int in {low}..{high}"


class Text(Schema):
    """A str of ``min_len..max_len`` characters.

    ``pattern``: the whole str must match it (``means`` says what it is, for messages).
    ``printable``: no control or invisible character and no white space at either end (text
    shown to people, from strangers on the LAN).
    """

    __slots__ = ("max_len", "means", "min_len", "pattern", "printable")

    def __init__(
        self,
        max_len: int | None = None,
        *,
        min_len: int = 0,
        pattern: re.Pattern[str] | None = None,
        means: str | None = None,
        printable: bool = False,
    ) -> None:
        self.max_len = max_len
        self.min_len = min_len
        self.pattern = pattern
        self.means = means
        self.printable = printable

    def check(self, value: Any) -> None:
        if type(value) is not str:
            raise _wrong_type(self, value)
        count = len(value)
        if (self.max_len is not None and count > self.max_len) or count < self.min_len:
            raise _length_error(count, "characters", self.min_len, self.max_len)
        if self.pattern is not None and not self.pattern.fullmatch(value):
            raise SchemaError("bad-text", f"must be {self.describe()}")
        if self.printable:
            if value != value.strip():
                raise SchemaError("bad-text", "leading or trailing white space")
            for ch in value:
                if unicodedata.category(ch) in _UNPRINTABLE:
                    raise SchemaError("bad-text", f"control or invisible character U+{ord(ch):04X}")

    def check_items(self, values: list[Any]) -> None:
        if len(values) < _MANY or (
            self.pattern is not None
            or self.printable
            or set(map(type, values)) != {str}
            or (self.max_len is not None and max(map(len, values)) > self.max_len)
            or (self.min_len and min(map(len, values)) < self.min_len)
        ):
            super().check_items(values)  # one by one: few items, or one is bad (named)

    def describe(self) -> str:
        if self.means is not None:
            return self.means
        if self.pattern is not None:
            return f"str matching {self.pattern.pattern}"
        size = _bounds(self.min_len, self.max_len)
        return f"str of {size} characters" if size else "str"


class Bytes(Schema):
    """A bin of exactly ``size`` bytes, or of ``min_len..max_len`` bytes."""

    __slots__ = ("max_len", "min_len", "size")

    def __init__(
        self, max_len: int | None = None, *, size: int | None = None, min_len: int = 0
    ) -> None:
        self.max_len = max_len
        self.min_len = min_len
        self.size = size

    def check(self, value: Any) -> None:
        if type(value) is not bytes:
            raise _wrong_type(self, value)
        if self.size is not None:
            if len(value) != self.size:
                raise SchemaError("wrong-size", f"must be {self.describe()}, not {len(value)}")
            return
        count = len(value)
        if (self.max_len is not None and count > self.max_len) or count < self.min_len:
            raise _length_error(count, "bytes", self.min_len, self.max_len)

    def describe(self) -> str:
        if self.size is not None:
            return f"bin of {self.size} bytes"
        size = _bounds(self.min_len, self.max_len)
        return f"bin of {size} bytes" if size else "bin"


class List(Schema):
    """A list of ``min_len..max_len`` items, each of schema ``item``."""

    __slots__ = ("item", "max_len", "min_len")

    def __init__(self, item: Schema, max_len: int | None = None, *, min_len: int = 0) -> None:
        self.item = item
        self.max_len = max_len
        self.min_len = min_len

    def check(self, value: Any) -> None:
        if type(value) is not list:
            raise _wrong_type(self, value)
        count = len(value)
        if (self.max_len is not None and count > self.max_len) or count < self.min_len:
            raise _length_error(count, "items", self.min_len, self.max_len)
        self.item.check_items(value)

    def describe(self) -> str:
        size = _bounds(self.min_len, self.max_len)
        return f"list of {size} items" if size else "list"


class Tuple(Schema):
    """A list of exactly ``len(items)`` values, the n-th of schema ``items[n]``."""

    __slots__ = ("items",)

    def __init__(self, *items: Schema) -> None:
        self.items = items

    def check(self, value: Any) -> None:
        if type(value) is not list:
            raise _wrong_type(self, value)
        if len(value) != len(self.items):
            raise SchemaError("wrong-size", f"must be {self.describe()}, not {len(value)}")
        for index, node in enumerate(self.items):
            try:
                node.check(value[index])
            except SchemaError as e:
                raise e.within(index) from None

    def describe(self) -> str:
        return f"list of {len(self.items)} items"


class Map(Schema):
    """A map holding every key of ``required`` and any of ``optional``, each value of its own
    schema. Other keys (of any type) are ignored."""

    __slots__ = ("_accepts", "optional", "required")

    def __init__(
        self, required: Mapping[str, Schema], optional: Mapping[str, Schema] | None = None
    ) -> None:
        self.required: tuple[tuple[str, Schema], ...] = tuple(required.items())
        self.optional: tuple[tuple[str, Schema], ...] = tuple((optional or {}).items())
        self._accepts: Callable[[Any], bool] | None = None  # compiled at the first check

    @property
    def fields(self) -> dict[str, Schema]:
        """Every key the map knows, required first."""
        return dict(self.required + self.optional)

    def check(self, value: Any) -> None:
        # Every message and record passes through here: first one compiled test of the whole
        # map (no call per field), and only where it fails the walk below, which names the bad
        # field. The test never accepts what the walk refuses (``_compiled``; tested).
        accepts = self._accepts
        if accepts is None:
            accepts = self._accepts = _compiled(self)
        if not accepts(value):
            self.walk(value)

    def walk(self, value: Any) -> None:
        """Check ``value`` field by field, raising SchemaError at the first bad one."""
        if type(value) is not dict:
            raise _wrong_type(self, value)
        for key, node in self.required:
            item = value.get(key, _ABSENT)
            if item is _ABSENT:
                raise SchemaError("missing", "missing").within(key)
            try:
                node.check(item)
            except SchemaError as e:
                raise e.within(key) from None
        for key, node in self.optional:
            item = value.get(key, _ABSENT)
            if item is not _ABSENT:
                try:
                    node.check(item)
                except SchemaError as e:
                    raise e.within(key) from None

    def describe(self) -> str:
        return "map"


class MapOf(Schema):
    """A map of at most ``max_len`` entries, every key of schema ``key`` and every value of
    schema ``value``."""

    __slots__ = ("key", "max_len", "min_len", "value")

    def __init__(
        self, key: Schema, value: Schema, max_len: int | None = None, *, min_len: int = 0
    ) -> None:
        self.key = key
        self.value = value
        self.max_len = max_len
        self.min_len = min_len

    def check(self, value: Any) -> None:
        if type(value) is not dict:
            raise _wrong_type(self, value)
        count = len(value)
        if (self.max_len is not None and count > self.max_len) or count < self.min_len:
            raise _length_error(count, "entries", self.min_len, self.max_len)
        keys = list(value)
        try:
            self.key.check_items(keys)
        except SchemaError as e:
            key = keys[cast(int, e._segments[-1])]  # the index of the first bad key
            where = key if type(key) in (str, int) else repr(key)
            raise SchemaError(e.code, f"a key that is not {self.key.describe()}").within(
                where
            ) from None
        if type(self.value) is Anything:
            return
        for key, item in value.items():
            try:
                self.value.check(item)
            except SchemaError as e:
                raise e.within(key if type(key) in (str, int) else repr(key)) from None

    def describe(self) -> str:
        return f"map of {self.key.describe()} to {self.value.describe()}"


class Nullable(Schema):
    """Nil, or a value of schema ``inner``."""

    __slots__ = ("inner",)

    def __init__(self, inner: Schema) -> None:
        self.inner = inner

    def check(self, value: Any) -> None:
        if value is not None:
            self.inner.check(value)

    def describe(self) -> str:
        return f"{self.inner.describe()} or nil"


def _compiled(node: Map) -> Callable[[Any], bool]:
    """One Python function that tells whether a value follows ``node``, without a call per
    field: the map's keys and its scalar leaves (``Int``, ``Bool``, ``Bytes``, plain ``Text``,
    ``Nullable`` and nested ``Map``) as one expression; any other node (lists, text with a
    pattern or printable, ``MapOf``, ``Tuple``) is asked through its own ``check``. It must
    accept exactly the values ``node.walk`` accepts (a value it wrongly refused would only
    take the slow walk; one it wrongly accepted would skip a check)."""
    nodes: dict[str, Any] = {"_follows": _follows}
    source = f"def accepts(v):\n    return {_expression(node, 'v', nodes)}\n"
    exec(compile(source, "<schema>", "exec"), nodes)  # the source is built from our own nodes
    accepts: Callable[[Any], bool] = nodes["accepts"]
    return accepts


def _follows(node: Schema, value: Any) -> bool:
    try:
        node.check(value)
    except SchemaError:
        return False
    return True


def _length(value: str, low: int, high: int | None) -> str:
    """The expression bounding ``len(value)`` (empty if it is not bounded)."""
    parts = [f"len({value}) >= {low!r}"] if low else []
    if high is not None:
        parts.append(f"len({value}) <= {high!r}")
    return " and ".join(parts)


def _expression(node: Schema, value: str, nodes: dict[str, Any]) -> str:
    """A Python expression that is true if the value the expression ``value`` names follows
    ``node`` (``value`` is evaluated only after its container's type and key are checked)."""
    kind = type(node)
    parts: list[str]
    if kind is Anything:
        return "True"
    if kind is Bool:
        return f"type({value}) is bool"
    if isinstance(node, Int) and kind is Int:
        parts = [f"type({value}) is int"]
        if node.low is not None:
            parts.append(f"{value} >= {node.low!r}")
        if node.high is not None:
            parts.append(f"{value} <= {node.high!r}")
        return "(" + " and ".join(parts) + ")"
    if isinstance(node, Bytes) and kind is Bytes:
        if node.size is not None:
            return f"(type({value}) is bytes and len({value}) == {node.size!r})"
        length = _length(value, node.min_len, node.max_len)
        return f"(type({value}) is bytes{' and ' + length if length else ''})"
    if isinstance(node, Text) and kind is Text and node.pattern is None and not node.printable:
        length = _length(value, node.min_len, node.max_len)
        return f"(type({value}) is str{' and ' + length if length else ''})"
    if isinstance(node, Nullable) and kind is Nullable:
        return f"({value} is None or {_expression(node.inner, value, nodes)})"
    if isinstance(node, Map) and kind is Map:
        parts = [f"type({value}) is dict"]
        for key, child in node.required:
            item = f"{value}[{key!r}]"
            parts += [f"{key!r} in {value}", _expression(child, item, nodes)]
        for key, child in node.optional:
            item = f"{value}[{key!r}]"
            parts.append(f"({key!r} not in {value} or {_expression(child, item, nodes)})")
        return "(" + " and ".join(parts) + ")"
    name = f"_node{len(nodes)}"
    nodes[name] = node
    return f"_follows({name}, {value})"


def validate(schema: Schema, value: Any, name: str = "") -> Any:
    """Return ``value`` if it follows ``schema``, else raise :class:`SchemaError` whose path
    starts with ``name`` (what the value is: ``welcome``, ``header``, ``table name``)."""
    try:
        schema.check(value)
    except SchemaError as e:
        raise (e.within(name) if name else e) from None
    return value


def require(fields: Mapping[str, Any], key: str, schema: Schema, name: str = "") -> Any:
    """The value at ``key`` of an already checked map, if it follows ``schema`` (a check that
    depends on other fields: a seat number below the header's count of seats)."""
    if key not in fields:
        error = SchemaError("missing", "missing").within(key)
        raise (error.within(name) if name else error)
    try:
        schema.check(fields[key])
    except SchemaError as e:
        e.within(key)
        raise (e.within(name) if name else e) from None
    return fields[key]
