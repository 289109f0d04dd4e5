"""How a log's bytes reach the disk: at once (:class:`SyncDurability`) or on a writer thread that
syncs in groups (:class:`ThreadedDurability`).

:class:`~canasta_net.log.writer.LogWriter` builds, chains and signs every record on its caller's
thread and hands the stored bytes here, in order, with the record's *position* (its ``seq`` + 1:
the number of records on disk once it is). ``durable`` is the position up to which everything is
on disk. The host sends a record to nobody before ``durable`` covers it.

- :class:`SyncDurability` writes, flushes and (with ``fsync``) syncs each record before
  ``append`` returns: ``durable`` always covers every record. The local table, tests and a
  resuming writer use it.
- :class:`ThreadedDurability` returns at once; its thread writes whatever has arrived meanwhile and
  syncs it with one ``fsync`` (group commit), then tells its owner's thread the new ``durable``
  through ``call_from_thread`` (Twisted's ``reactor.callFromThread``). A host serving many tables
  thus never waits for a disk on its reactor thread. A failed write or sync is reported the same
  way (``on_failure``); every later ``append`` is refused. ``close`` drains: it returns once
  everything handed over is on disk (or has failed) and the thread has ended. An ``append`` after
  ``close`` starts the thread again.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import BinaryIO, Protocol

from canasta_net.timing import NO_TIMING, Timing

__all__ = [
    "Durability",
    "SyncDurability",
    "ThreadedDurability",
    "flush_and_sync",
    "write_all",
]


def write_all(file: BinaryIO, data: bytes) -> None:
    view = memoryview(data)
    written = 0
    while written < len(data):
        count = file.write(view[written:])
        if not count:
            raise OSError(f"short write to the log ({written} of {len(data)} bytes)")
        written += count


def flush_and_sync(file: BinaryIO, fsync: bool) -> None:
    """Flush ``file`` and, with ``fsync``, sync it (an in-memory file: flushing is all there is)."""
    file.flush()
    if not fsync:
        return
    try:
        fd = file.fileno()
    except (AttributeError, OSError, ValueError):
        return
    os.fsync(fd)


class Durability(Protocol):
    """Where a :class:`~canasta_net.log.writer.LogWriter` hands its stored records."""

    @property
    def durable(self) -> int:
        """The position (records counted from the header) up to which the log is on disk."""
        ...

    @property
    def failure(self) -> BaseException | None:
        """The error that stopped the writing, if one did (then ``append`` refuses)."""
        ...

    def append(self, data: bytes, position: int) -> None:
        """Write ``data`` (one stored record) so that ``position`` becomes durable."""
        ...

    def close(self) -> None:
        """Return once everything appended is on disk (or has failed)."""
        ...


class SyncDurability:
    """Each record written, flushed and synced before ``append`` returns."""

    def __init__(
        self, file: BinaryIO, *, fsync: bool = True, position: int = 0, timing: Timing = NO_TIMING
    ) -> None:
        self._file = file
        self._fsync = fsync
        self._timing = timing
        self._durable = position
        self._failure: BaseException | None = None

    @property
    def durable(self) -> int:
        return self._durable

    @property
    def failure(self) -> BaseException | None:
        return self._failure

    def append(self, data: bytes, position: int) -> None:
        try:
            write_all(self._file, data)
            self.sync()
        except BaseException as e:
            self._failure = e
            raise
        self._durable = position

    def sync(self) -> None:
        with self._timing.span("log.sync", records=1):
            flush_and_sync(self._file, self._fsync)

    def close(self) -> None:
        return None


class ThreadedDurability:
    """A writer thread with group commit (see the module's docstring).

    ``call_from_thread`` runs a callable on the owner's thread (``reactor.callFromThread``);
    ``on_durable(position)`` and ``on_failure(error)`` are then called there. ``sync`` (default:
    flush and, with ``fsync``, ``os.fsync``) is called once per group, on the writer thread: tests
    pass their own to count or to fail.
    """

    def __init__(
        self,
        file: BinaryIO,
        call_from_thread: Callable[..., object],
        *,
        fsync: bool = True,
        position: int = 0,
        sync: Callable[[BinaryIO], None] | None = None,
        timing: Timing = NO_TIMING,
        name: str = "canasta-log-writer",
    ) -> None:
        self._file = file
        self._call_from_thread = call_from_thread
        self._sync = sync or (lambda f: flush_and_sync(f, fsync))
        self._timing = timing
        self._name = name
        self._durable = position  # read and written on the owner's thread only
        self._failure: BaseException | None = None
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._queue: list[tuple[bytes, int]] = []  # under _lock
        self._synced = position  # under _lock: what the thread has synced
        self._closing = False  # under _lock
        self._thread: threading.Thread | None = None
        self.on_durable: Callable[[int], None] | None = None
        self.on_failure: Callable[[BaseException], None] | None = None

    @property
    def durable(self) -> int:
        return self._durable

    @property
    def failure(self) -> BaseException | None:
        return self._failure

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def append(self, data: bytes, position: int) -> None:
        if self._failure is not None:
            raise OSError(f"an earlier write of the log failed ({self._failure!r})")
        with self._lock:
            self._queue.append((data, position))
            self._closing = False
            self._wake.notify()
        if self._thread is None:
            # a daemon: a process that ends without ``close`` must not hang on it (what it had
            # not synced yet was sent to nobody)
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Drain: everything appended is on disk (or failed) and the thread has ended when this
        returns. Its last reports still reach ``on_durable`` / ``on_failure`` through
        ``call_from_thread``; ``durable`` is brought up to date here as well."""
        thread = self._thread
        if thread is None:
            return
        with self._lock:
            self._closing = True
            self._wake.notify()
        thread.join()
        self._thread = None
        with self._lock:
            self._durable = max(self._durable, self._synced)

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._closing:
                    self._wake.wait()
                if not self._queue:
                    return
                group, self._queue = self._queue, []
            try:
                with self._timing.span("log.sync", records=len(group)):
                    for data, _ in group:
                        write_all(self._file, data)
                    self._sync(self._file)
            except BaseException as e:  # reported on the owner's thread; nothing more written
                self._call_from_thread(self._failed, e)
                with self._lock:
                    self._queue.clear()
                return
            with self._lock:
                self._synced = group[-1][1]
            self._call_from_thread(self._reached, group[-1][1])

    def _reached(self, position: int) -> None:
        if position > self._durable:
            self._durable = position
        if self.on_durable is not None:
            self.on_durable(position)

    def _failed(self, error: BaseException) -> None:
        self._failure = error
        if self.on_failure is not None:
            self.on_failure(error)
