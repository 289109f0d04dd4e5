"""A timing hook: the library says when it does its costly steps; whoever listens measures them.

Modelled on magic-wormhole's ``DebugTiming``: an object is passed in (``timing=`` on the classes
below) and the library calls it at fixed points. It is sans-io: nothing here reads a clock or
writes anywhere unless the object passed in does. The default, :data:`NO_TIMING`, does nothing
(a disabled span costs well under a microsecond), so code that passes nothing behaves as before.

A :class:`Timing` has two calls:

- ``span(name, **details)``: a context manager around a step (its start and end are the
  listener's to note);
- ``mark(name, **details)``: an instant.

The names and their details (the objects themselves, not copies: read, do not keep or change):

==================  =====  ========================================================================
name                kind   where, details
==================  =====  ========================================================================
``seat.send``       span   ``PeerProtocol.send``: a seat hands ``message`` to its ``transport``
                           (details ``message``, ``session``, ``transport``)
``seat.receive``    mark   ``PeerSession.handle``: a message from the host, before it is handled
                           (``message``, ``session``)
``seat.record``     span   ``PeerSession``: its checking, replaying and journaling of one ``record``
                           message (``seq``)
``host.prompt``     mark   ``TableService``: just before it sends a seat its ``turn`` prompt
                           (``table``: the table id, ``seat``)
``host.handle``     span   ``TableService.handle``: its whole handling of one message from a seat
                           (``t``: the message's type, ``act``: its ``act`` bytes or None,
                           ``conn``: the ``HostConnection``)
``host.publish``    span   ``TableService``: every seat's copy of new records and views, sent at
                           once or queued until the log is on disk (``records``: how many)
``host.bot-turn``   span   ``TableService``: a host bot's (or stand-in's) whole turn (``seat``,
                           ``need``)
``table.submit``    span   ``HostTable.submit``: checking one signed message, the engine, the
                           journal (``seat``)
``log.sync``        span   ``log.durable``: writing, flushing (with ``fsync``, syncing) a group of
                           records (``records``: how many; on the log's writer thread when the
                           host syncs off its reactor thread: then the number of logs of one
                           file system synced together)
==================  =====  ========================================================================

:class:`Recorder` keeps the durations per name (tests, simple tools).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, Protocol

__all__ = ["NO_TIMING", "NoTiming", "Recorder", "Timing"]


class Timing(Protocol):
    """What the library calls at the points named in this module's docstring."""

    def span(self, name: str, **details: Any) -> AbstractContextManager[object]:
        """A context manager around one step called ``name``."""
        ...

    def mark(self, name: str, **details: Any) -> None:
        """An instant called ``name``."""
        ...


_NOTHING: AbstractContextManager[object] = nullcontext()  # reusable: it keeps no state


class NoTiming:
    """The default: measures nothing, and costs a call and a constant context manager."""

    def span(self, name: str, **details: Any) -> AbstractContextManager[object]:
        return _NOTHING

    def mark(self, name: str, **details: Any) -> None:
        return None


NO_TIMING: Timing = NoTiming()


class Recorder:
    """Keeps each span's duration and each mark's time, per name, read from ``clock``."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.spans: defaultdict[str, list[float]] = defaultdict(list)  # name -> durations
        self.marks: defaultdict[str, list[float]] = defaultdict(list)  # name -> instants
        self.details: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)  # in call order

    @contextmanager
    def _span(self, name: str, details: dict[str, Any]) -> Iterator[None]:
        self.details[name].append(details)
        start = self.clock()
        try:
            yield
        finally:  # a step that raised took its time too
            self.spans[name].append(self.clock() - start)

    def span(self, name: str, **details: Any) -> AbstractContextManager[object]:
        return self._span(name, details)

    def mark(self, name: str, **details: Any) -> None:
        self.details[name].append(details)
        self.marks[name].append(self.clock())

    def count(self, name: str) -> int:
        """How many spans and marks called ``name`` were seen."""
        return len(self.spans.get(name, ())) + len(self.marks.get(name, ()))
