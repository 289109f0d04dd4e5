"""A memo for pure, costly checks: off unless switched on; the test suite switches it on.

A test process often plays the host, several seats and the auditor at once. Each of them checks
the same signatures, proofs and deal replays on the same bytes, up to six times per hand. With
the memo on, a check that passed once is not run again for exactly the same inputs.

The key is every argument itself (bytes, ints, strings, and tuples, lists and frozen dataclasses
of them, and the types other modules register with :func:`key_type`: signing keys, the blind
deal's points), compared for equality, never a digest. An argument of any other type makes the call
run in full. Only a call that passed is remembered: a call that raised or returned False (a
tampered input, a bad proof) runs in full every time. Off, the default, a decorated function is
called straight through, and the product never switches it on. The suite switches it on in the
processes its tests start (hosts, seats, audits) too, with ``CANASTA_TEST_MEMO=1`` in their
environment.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Hashable
from typing import Any, Final, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])

# the remembered results by (function, key of the arguments); None: the memo is off
_results: dict[Hashable, Any] | None = None

# entries held before the memo starts afresh (a long test fills it with distinct inputs)
LIMIT: Final = 20_000


class Unkeyable(Exception):
    """An argument the memo cannot key exactly: the call runs in full."""


class _Tag:
    """Marks what a value in a key was, so that values of different types never compare equal
    (``True == 1``, a list and a tuple of the same items)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


_BOOL, _LIST, _TUPLE = (_Tag(n) for n in ("bool", "list", "tuple"))

# how a value of another module's type is keyed (:func:`key_type`): type -> function
_keyers: dict[type, Callable[[Any], Hashable]] = {}
_PLAIN: Final = (bytes, str, int, type(None))
_SCALARS: Final = (*_PLAIN, bool)


# the variable that switches the memo on in a process from its start (the suite's processes)
ENVIRONMENT: Final = "CANASTA_TEST_MEMO"


def enable() -> None:
    """Switch the memo on (empty)."""
    global _results
    _results = {}


def disable() -> None:
    global _results
    _results = None


def clear() -> None:
    """Forget every result (a test starts afresh: what it patches is not bypassed)."""
    if _results is not None:
        _results.clear()


def is_on() -> bool:
    return _results is not None


def _key(value: Any) -> Hashable:
    kind = type(value)
    if kind in _PLAIN:
        return cast(Hashable, value)
    if kind is bool:
        return (_BOOL, value)
    if kind is list or kind is tuple:
        return (_LIST if kind is list else _TUPLE, *(_key(item) for item in value))
    keyer = _keyers.get(kind)
    if keyer is not None:
        return (kind, keyer(value))
    if dataclasses.is_dataclass(value) and kind.__dataclass_params__.frozen:
        return (kind, *(_key(getattr(value, f.name)) for f in dataclasses.fields(value)))
    raise Unkeyable(kind.__name__)


def _kept(result: Any) -> Any:
    """``result`` as the memo keeps it (immutable), or :class:`Unkeyable`."""
    if type(result) in _SCALARS:
        return result
    if type(result) in (list, tuple) and all(type(item) in _SCALARS for item in result):
        return (_LIST if type(result) is list else _TUPLE, tuple(result))
    raise Unkeyable(type(result).__name__)


def _given(kept: Any) -> Any:
    """A kept result as a caller gets it: a list afresh (the caller may change it)."""
    if type(kept) is tuple:
        tag, items = kept
        return list(items) if tag is _LIST else items
    return kept


def key_type(kind: type, keyer: Callable[[Any], Hashable]) -> None:
    """Key the values of ``kind`` by ``keyer(value)``: equal keys for equal values only. A keyer
    that cannot key a value exactly raises :class:`Unkeyable` (the call then runs in full)."""
    _keyers[kind] = keyer


def pure(function: F) -> F:
    """Remember ``function``'s results while the memo is on. ``function`` must be pure: its
    result (or its exception) depends on its arguments alone, it changes none of them, and it
    returns None, a bool, int, bytes or str, or a list or tuple of those."""

    @functools.wraps(function)
    def memoized(*args: Any, **kwargs: Any) -> Any:
        results = _results
        if results is None:
            return function(*args, **kwargs)
        try:
            key = (memoized, _key(args), _key(sorted(kwargs.items())))
        except Unkeyable:
            return function(*args, **kwargs)
        try:
            return _given(results[key])
        except KeyError:
            pass
        result = function(*args, **kwargs)
        if result is False:  # a check that failed (a bad proof) runs in full every time
            return result
        try:
            kept = _kept(result)
        except Unkeyable:
            return result
        if len(results) >= LIMIT:
            results.clear()
        results[key] = kept
        return result

    return cast(F, memoized)


if os.environ.get(ENVIRONMENT) == "1":
    enable()

__all__ = [
    "ENVIRONMENT",
    "LIMIT",
    "Unkeyable",
    "clear",
    "disable",
    "enable",
    "is_on",
    "key_type",
    "pure",
]
