"""How a log's bytes reach the disk: at once (:class:`SyncDurability`), synced by one writer
thread for all of a host's logs (:class:`GroupDurability` and :class:`GroupCommit`, what
``canasta host`` uses), or by a writer thread per log (:class:`ThreadedDurability`).

:class:`~canasta_net.log.writer.LogWriter` builds, chains and signs every record on its caller's
thread and hands the stored bytes here, in order, with the record's *position* (its ``seq`` + 1:
the number of records on disk once it is). ``durable`` is the position up to which everything is
on disk. The host sends a record to nobody before ``durable`` covers it.

- :class:`SyncDurability` writes, flushes and (with ``fsync``) syncs each record before
  ``append`` returns: ``durable`` always covers every record. The local table, tests and a
  resuming writer use it.
- :class:`ThreadedDurability` returns at once; a writer thread (a :class:`LogSyncWorker`, which
  a host shares among its tables' logs) writes whatever has arrived meanwhile and syncs it with
  one ``fsync`` (group commit), then tells its owner's thread the new ``durable`` through
  ``call_from_thread`` (Twisted's ``reactor.callFromThread``). A host serving many tables
  thus never waits for a disk on its reactor thread. A failed write or sync is reported the same
  way (``on_failure``); every later ``append`` is refused. ``close`` drains: it returns once
  everything handed over is on disk (or has failed) and the thread has ended. An ``append`` after
  ``close`` starts the thread again.
- :class:`GroupDurability` writes each record on its owner's thread and returns; ONE thread (a
  :class:`GroupCommit`) syncs every log that has records waiting in one pass: one ``syncfs`` for
  the logs on a file system. While syncs are fast, the owner's thread syncs itself (see
  :class:`GroupCommit` for why and when). Reports, failures and ``close`` as above.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import BinaryIO, Protocol

from canasta_net.timing import NO_TIMING, Timing

__all__ = [
    "CoalescedCalls",
    "Durability",
    "GroupCommit",
    "GroupDurability",
    "LogSyncWorker",
    "ReportedDurability",
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


class CoalescedCalls:
    """A ``call_from_thread`` that wakes its owner's thread at most once for what any number of
    threads hand it meanwhile: a host's writer threads each finish a pass every millisecond or
    so, and each wake-up of the reactor (a write to its waker pipe, an epoll return, a pass of
    its loop) costs it more than running the reports. Calls run in the order they were made."""

    def __init__(self, call_from_thread: Callable[..., object]) -> None:
        self._call_from_thread = call_from_thread
        self._lock = threading.Lock()
        self._calls: list[tuple[Callable[..., object], tuple[object, ...]]] = []  # under _lock

    def __call__(self, function: Callable[..., object], *args: object) -> None:
        with self._lock:
            self._calls.append((function, args))
            wake = len(self._calls) == 1  # the first since the owner last ran them
        if wake:
            self._call_from_thread(self._run)

    def _run(self) -> None:
        with self._lock:
            calls, self._calls = self._calls, []
        run_each(calls)


def run_each(calls: Iterable[tuple[Callable[..., object], Sequence[object]]]) -> None:
    """Call each ``(function, args)`` in order; one that raises does not keep the others from
    running (one table's fault must not leave another table's records unsent for good), and the
    first error is raised once all have run, for the caller's owner to log."""
    first: BaseException | None = None
    for function, args in calls:
        try:
            function(*args)
        except BaseException as error:
            if first is None:
                first = error
    if first is not None:
        raise first


class ReportedDurability:
    """What the durabilities synced on another thread share: ``durable`` and ``failure`` as
    known on the owner's thread, and the callbacks a pass's report calls there."""

    def __init__(self, position: int) -> None:
        self._durable = position  # read and written on the owner's thread only
        self._failure: BaseException | None = None
        self.on_durable: Callable[[int], None] | None = None
        self.on_failure: Callable[[BaseException], None] | None = None

    @property
    def durable(self) -> int:
        return self._durable

    @property
    def failure(self) -> BaseException | None:
        return self._failure

    def _reached(self, position: int) -> None:
        if position > self._durable:
            self._durable = position
        if self.on_durable is not None:
            self.on_durable(position)

    def _failed(self, error: BaseException) -> None:
        self._failure = error
        if self.on_failure is not None:
            self.on_failure(error)


class LogSyncWorker:
    """A writer thread that serves many logs (one per table), so that a host with a hundred
    tables runs a few writer threads, not a hundred contending for the interpreter.

    Each pass takes every log with records waiting, writes each one's records and syncs each
    touched log once (group commit per log), then tells the owner's thread what became durable in
    ONE ``call_from_thread`` for the whole pass. A private worker (a durability made without one)
    serves one log and ends when that log is closed; a shared one lives as long as the process
    (its thread is a daemon, idle when nothing is to be written).
    """

    def __init__(self, call_from_thread: Callable[..., object], *, name: str) -> None:
        self._call_from_thread = call_from_thread
        self._name = name
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._ready: dict[ThreadedDurability, None] = {}  # under _lock: an ordered set
        self._stopping = False  # under _lock
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def submit(self, durability: ThreadedDurability) -> None:
        """``durability`` has records waiting: write them on the next pass."""
        with self._lock:
            self._ready[durability] = None
            self._stopping = False
            self._wake.notify()
            if self._thread is None or not self._thread.is_alive():
                # a daemon: a process that ends without ``close`` must not hang on it (what it
                # had not synced yet was sent to nobody)
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def stop(self) -> None:
        """End the thread once nothing is waiting (a private worker's log was closed)."""
        with self._lock:
            self._stopping = True
            self._wake.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        with self._lock:
            if self._thread is thread and not self._ready:
                self._thread = None

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._ready and not self._stopping:
                    self._wake.wait()
                if not self._ready:
                    return
                ready, self._ready = list(self._ready), {}
            reports = [report for d in ready if (report := d._write_waiting()) is not None]
            if reports:
                self._call_from_thread(_deliver, reports)


def _deliver(reports: Sequence[tuple[ReportedDurability, int | BaseException]]) -> None:
    """On the owner's thread: what one pass of a writer thread made durable, or which logs
    failed."""
    run_each(
        (durability._failed, (outcome,))
        if isinstance(outcome, BaseException)
        else (durability._reached, (outcome,))
        for durability, outcome in reports
    )


class ThreadedDurability(ReportedDurability):
    """A log written on a writer thread with group commit (see the module's docstring).

    ``call_from_thread`` runs a callable on the owner's thread (``reactor.callFromThread``);
    ``on_durable(position)`` and ``on_failure(error)`` are then called there. ``sync`` (default:
    flush and, with ``fsync``, ``os.fsync``) is called once per group, on the writer thread: tests
    pass their own to count or to fail. ``worker``: a :class:`LogSyncWorker` shared with other
    logs; without one the log has a thread of its own, ended by ``close``.
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
        worker: LogSyncWorker | None = None,
    ) -> None:
        self._file = file
        self._sync = sync or (lambda f: flush_and_sync(f, fsync))
        self._timing = timing
        self._private = worker is None
        self._worker = worker or LogSyncWorker(call_from_thread, name=name)
        super().__init__(position)
        self._lock = threading.Lock()
        self._drained = threading.Condition(self._lock)
        self._queue: list[tuple[bytes, int]] = []  # under _lock
        self._writing = False  # under _lock: the worker holds a group of this log
        self._dead = False  # under _lock: a write failed, nothing more is written
        self._synced = position  # under _lock: what the worker has synced

    @property
    def running(self) -> bool:
        """Whether a writer thread is at work for this log (its own, or the shared one)."""
        return self._worker.running if self._private else bool(self._queue or self._writing)

    def append(self, data: bytes, position: int) -> None:
        if self._failure is not None:
            raise OSError(f"an earlier write of the log failed ({self._failure!r})")
        with self._lock:
            self._queue.append((data, position))
        self._worker.submit(self)

    def close(self) -> None:
        """Drain: everything appended is on disk (or failed) when this returns, and a log's own
        thread has ended. The last reports still reach ``on_durable`` / ``on_failure`` through
        ``call_from_thread``; ``durable`` is brought up to date here as well."""
        with self._lock:
            while (self._queue or self._writing) and not self._dead:
                self._drained.wait()
            self._durable = max(self._durable, self._synced)
        if self._private:
            self._worker.stop()

    def _write_waiting(self) -> tuple[ThreadedDurability, int | BaseException] | None:
        """On the worker's thread: write what waits and sync it once; what to report."""
        with self._lock:
            if self._dead or not self._queue:
                self._queue.clear()
                self._drained.notify_all()
                return None
            group, self._queue = self._queue, []
            self._writing = True
        try:
            with self._timing.span("log.sync", records=len(group)):
                for data, _ in group:
                    write_all(self._file, data)
                self._sync(self._file)
        except BaseException as e:  # reported on the owner's thread; nothing more written
            with self._lock:
                self._dead, self._writing = True, False
                self._queue.clear()
                self._drained.notify_all()
            return self, e
        with self._lock:
            self._synced = group[-1][1]
            self._writing = False
            if not self._queue:
                self._drained.notify_all()
        return self, group[-1][1]


# -------------------------------------------------------------------------- group commit
def _load_syncfs() -> Callable[[int], None] | None:
    """Linux's ``syncfs(fd)`` (one call writes back and waits for everything dirty on the file
    system holding ``fd``: every log of a host in one sync), or None where libc lacks it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).syncfs  # releases the GIL while it runs
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int]
    function.restype = ctypes.c_int

    def syncfs(fd: int) -> None:
        if function(fd) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"syncfs: {os.strerror(errno)}")

    return syncfs


SYNCFS = _load_syncfs()

# A log is synced on its owner's thread while a sync takes less than this (smoothed), else on
# the group's thread: see ``GroupCommit``.
INLINE_SYNC_SECONDS = 0.002
# With ``GroupCommit(wait=...)``: how long the owner's thread waits for the thread's sync of a
# log with nothing else on its way, before it leaves the record to the thread's report.
WAIT_SYNC_SECONDS = 0.002
# While logs go through the thread, the owner's thread tries syncing again this often, to learn
# whether the disk is fast again: a pass's ``syncfs`` also writes other files' data (its time
# says little of one log's ``fsync``), and a single sync tried while the thread's keep the disk
# busy is slow because of them (measured: a host stayed on the thread for a whole run).
PROBE_SECONDS = 2.0


class GroupCommit:
    """One writer thread that syncs every log of a host: group commit across logs.

    A log's records are written (into the operating system's cache, a copy of a few hundred
    bytes) on the owner's thread as they are made (:class:`GroupDurability`); the thread only
    makes them durable. Each pass takes every log with records waiting and syncs each with its
    own ``fsync``, one after another; then it tells the owner's thread, in one
    ``call_from_thread``, how far each log is on disk.

    ``syncfs=SYNCFS`` syncs the logs of a pass on one file system with ONE ``syncfs`` instead (a
    lone log still with its own ``fsync``). It is not the default: ``syncfs`` writes back
    everything dirty on the file system, other programs' files too, so its time follows what
    the rest of the machine writes. Measured (``bench_table.py --disk-neighbor 50``: another
    process writing 50 MB/s on the same file system, 100 busy tables, fsync on), the act round
    trip's p99 was 32 and 35 ms with ``syncfs`` against 16 and 19 ms with a ``fsync`` per log,
    the longest sync 304-452 ms against 172 ms; with no such writer the two were alike.

    Why one thread and not a thread per log: with a hundred tables, a hundred writer threads
    handed the interpreter lock around the reactor's thread and each record's way out paid a
    hand-off (measured, ``bench_table`` at 100 paced tables: the act round trip's p50 two to
    three times longer than syncing on the reactor's thread). This thread takes the lock twice a
    pass, whatever the number of logs, and waits in the kernel in between.

    Where ``syncfs`` is missing (not Linux) or fails, each log of the pass is synced with its own
    ``fsync`` (a failed ``syncfs`` may be another file's error: each log learns its own).
    ``syncfs`` and ``fsync`` are injectable for tests. The thread is a daemon that lives as long
    as the process, idle when nothing is waiting.

    **While the disk is fast, the owner's thread syncs.** A sync of a few hundred microseconds
    costs the reactor less than handing it to a thread and hearing back (a wake-up of each
    thread, the interpreter lock taken back, a pass of the reactor's loop: measured at 100 paced
    tables on a disk that syncs in 0.15-0.25 ms, the act round trip's p50 was 4-8 ms syncing on
    the reactor's thread against 13-18 ms through writer threads). So a log with nothing on its
    way to the disk is synced in ``append`` while the smoothed time of such a sync
    (:attr:`sync_estimate`) stays under ``inline_below`` seconds; once syncs get slower (a busy
    or slow disk, where one table's sync would hold every other table up), every log goes
    through the thread; after ``PROBE_SECONDS`` the logs are synced inline again, from an
    estimate of half the limit, so that two or three slow syncs send them back to the thread.
    ``inline_below=None``: always through the thread.
    """

    def __init__(
        self,
        call_from_thread: Callable[..., object],
        *,
        name: str = "canasta-log-sync",
        syncfs: Callable[[int], None] | None = None,
        fsync: Callable[[int], None] = os.fsync,
        timing: Timing = NO_TIMING,
        inline_below: float | None = INLINE_SYNC_SECONDS,
        clock: Callable[[], float] = time.perf_counter,
        wait: float | None = None,
    ) -> None:
        self._call_from_thread = call_from_thread
        #: With a wait (seconds): every sync is the thread's, and the owner's thread waits for
        #: it at most this long; a sync done in time is taken up at once, as an inline one's
        #: would be (see ``GroupDurability.append``); None: inline syncs as above.
        self.wait = wait
        self.taken_up = 0  # syncs the owner's thread took up within its wait (tests, benchmarks)
        self._name = name
        self._syncfs = syncfs
        self._fsync = fsync
        self._timing = timing
        self._clock = clock
        self._inline_below = inline_below
        # Seconds one log's sync on the owner's thread takes, smoothed (the owner's thread only).
        self.sync_estimate = 0.0
        self._next_probe = 0.0  # while on the thread: when one log is synced inline again
        #: Whether a log with nothing on its way syncs on the owner's thread (see the class).
        self.inline = inline_below is not None
        self.inline_syncs = 0  # for tests and benchmarks
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._ready: dict[GroupDurability, int] = {}  # under _lock: log -> position written
        self._thread: threading.Thread | None = None
        self.passes = 0  # how many syncs were made (for tests and benchmarks)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def measured(self, seconds: float) -> None:
        """One inline sync took ``seconds``: update the estimate and where syncs are made."""
        estimate = self.sync_estimate = self.sync_estimate * 0.8 + seconds * 0.2
        if self._inline_below is None:
            return
        if self.inline and estimate > self._inline_below:
            self.inline = False
            self._next_probe = self._clock() + PROBE_SECONDS
        elif not self.inline and estimate < self._inline_below / 2:
            self.inline = True

    def sync_inline_now(self) -> bool:
        """Whether a log with nothing on its way syncs on the owner's thread now: while syncs
        are fast, and again, to measure them, ``PROBE_SECONDS`` after they were not."""
        if self.inline:
            return True
        if self._inline_below is None or self._clock() < self._next_probe:
            return False
        self.inline, self.sync_estimate = True, self._inline_below / 2
        return True

    def sync_here(self, durability: GroupDurability) -> None:
        """On the owner's thread: sync ``durability`` now (it has nothing on its way)."""
        assert durability.fd is not None
        with self._timing.span("log.sync", records=1):
            start = self._clock()
            self._fsync(durability.fd)
            self.measured(self._clock() - start)
        self.inline_syncs += 1

    def submit(self, durability: GroupDurability, position: int) -> None:
        """``durability`` is written up to ``position``: make that durable on the next pass."""
        with self._lock:
            self._ready[durability] = position
            self._wake.notify()
            if self._thread is None or not self._thread.is_alive():
                # a daemon: a process that ends without draining must not hang on it (what was
                # not synced yet was sent to nobody)
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._ready:
                    self._wake.wait()
                batch, self._ready = self._ready, {}
            reports = self._sync_batch(batch)
            self.passes += 1
            # a log whose owner waits for this very sync takes it up there (no report, no
            # wake-up of the owner's thread for it)
            reports = [(d, outcome) for d, outcome in reports if not d._synced_to(outcome)]
            if reports:
                self._call_from_thread(_deliver, reports)

    def _sync_batch(
        self, batch: dict[GroupDurability, int]
    ) -> list[tuple[GroupDurability, int | BaseException]]:
        by_device: dict[int | None, list[tuple[GroupDurability, int]]] = {}
        for durability, position in batch.items():
            # a log whose sync failed is synced no more: a later sync may succeed although the
            # failed one's data is lost (the kernel reports a write-back error once)
            if not durability.dead:
                by_device.setdefault(durability.device, []).append((durability, position))
        reports: list[tuple[GroupDurability, int | BaseException]] = []
        for logs in by_device.values():
            with self._timing.span("log.sync", records=len(logs)):
                fd = logs[0][0].fd
                if fd is not None and len(logs) > 1 and self._syncfs is not None:
                    try:
                        self._syncfs(fd)
                    except OSError:
                        pass  # each log below learns its own outcome
                    else:
                        reports.extend(logs)
                        continue
                for durability, position in logs:
                    try:
                        durability.sync_alone(self._fsync)
                    except BaseException as e:  # reported on the owner's thread
                        reports.append((durability, e))
                    else:
                        reports.append((durability, position))
        return reports


class GroupDurability(ReportedDurability):
    """A log written on its owner's thread and synced by a :class:`GroupCommit` shared with the
    host's other logs. ``append`` writes and flushes the record into the operating system's
    cache at once (a failed write raises here, as with :class:`SyncDurability`) and returns; the
    group's thread makes it durable and ``on_durable(position)`` (or ``on_failure(error)``) is
    then called on the owner's thread. ``fsync=False`` (or a file without a descriptor):
    durable once flushed, as with :class:`SyncDurability`, without a callback."""

    def __init__(
        self,
        file: BinaryIO,
        group: GroupCommit,
        *,
        fsync: bool = True,
        position: int = 0,
    ) -> None:
        self._file = file
        self._group = group
        self._fsync = fsync
        try:
            self.fd: int | None = file.fileno()
            self.device: int | None = os.fstat(self.fd).st_dev
        except (AttributeError, OSError, ValueError):  # an in-memory file: nothing to sync
            self.fd, self.device = None, None
        super().__init__(position)
        self._written = position  # the owner's thread: what has been handed to the file
        self._lock = threading.Lock()
        self._drained = threading.Condition(self._lock)
        self._synced = position  # under _lock: what the group's thread has synced
        self._dead = False  # under _lock: a sync failed
        # under _lock: the position the owner's thread waits for (``_wait_for_sync``), and
        # whether the group's thread handed that sync over to it instead of reporting it
        self._waiting: int | None = None
        self._handed = False

    def append(self, data: bytes, position: int) -> None:
        if self._failure is not None:
            raise OSError(f"an earlier write of the log failed ({self._failure!r})")
        try:
            write_all(self._file, data)
            self._file.flush()
        except BaseException as e:
            self._failure = e
            raise
        written_before, self._written = self._written, position
        if not self._fsync or self.fd is None:  # durable once written, as SyncDurability's
            with self._lock:
                self._synced = position
            self._durable = position
            return
        # Nothing of this log on the thread's way, as the owner's thread knows it: the thread's
        # report of a sync may still be on its way here after ``_synced`` moved, and a record
        # synced inline meanwhile would be durable before an outbox waiting for that report
        # heard of it (the report, older, then freed nothing: a host hung for good).
        idle = self._durable >= written_before
        if self._group.wait is not None:
            self._group.submit(self, position)
            if idle and self._wait_for_sync(position, self._group.wait):
                self._durable = position
                self._group.taken_up += 1
            return
        if idle and self._group.sync_inline_now():
            try:
                self._group.sync_here(self)
            except BaseException as e:
                self._failure = e
                raise
            with self._lock:
                self._synced = position
            self._durable = position
            return
        self._group.submit(self, position)

    @property
    def dead(self) -> bool:
        """A sync of this log failed (known on the group's thread before the owner's)."""
        return self._dead

    def sync_alone(self, fsync: Callable[[int], None]) -> None:
        """On the group's thread: sync this log by itself."""
        assert self.fd is not None
        fsync(self.fd)

    def close(self) -> None:
        """Return once everything appended is on disk (or a sync failed); ``durable`` is
        brought up to date here as well (the last reports still reach ``on_durable``)."""
        with self._lock:
            while self._synced < self._written and not self._dead:
                self._drained.wait()
            self._durable = max(self._durable, self._synced)

    def _wait_for_sync(self, position: int, seconds: float) -> bool:
        """On the owner's thread, with nothing else of this log on its way: wait at most
        ``seconds`` for the group's thread to sync up to ``position``. True: it did, and handed
        the sync over (no report of it will come); False: the report will come as usual."""
        with self._lock:
            self._waiting, self._handed = position, False
            self._drained.wait_for(lambda: self._handed or self._dead, timeout=seconds)
            # under the lock the group's thread either handed the sync over already or will
            # see nobody waiting and report it: never both, never neither
            handed, self._waiting, self._handed = self._handed, None, False
            return handed

    def _synced_to(self, outcome: int | BaseException) -> bool:
        """On the group's thread, right after a pass: wake a ``close`` or an owner that waits.
        True: the owner's thread waits for exactly this and takes it up (do not report it)."""
        with self._lock:
            handed = False
            if isinstance(outcome, BaseException):
                self._dead = True
            else:
                self._synced = max(self._synced, outcome)
                if self._waiting is not None and outcome >= self._waiting:
                    self._handed = handed = True
            self._drained.notify_all()
            return handed
