"""The log synced off the reactor thread (``log/durable.py``): the writer thread's order, its group
commit, draining, its error path, and a host that broadcasts a record only once it is on disk.

Deterministic: no sleeps. The writer thread is joined (``close``) or held on events, and what it
reports "through the reactor" is queued here and run on the test's thread.
"""

from __future__ import annotations

import contextlib
import io
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast

import pytest
from test_eventlog import HOST as HOST_SEAT
from test_eventlog import SEATS, header_fields
from test_table_protocol import HOST, Harness, config, key_of
from twisted.internet.task import Clock

from canasta_net.log import LogWriter, LogWriterError, verify_log
from canasta_net.log import durable as durable_module
from canasta_net.log.durable import (
    PROBE_SECONDS,
    CoalescedCalls,
    GroupCommit,
    GroupDurability,
    LogSyncWorker,
    ReportedDurability,
    ThreadedDurability,
)
from canasta_net.net.host import HostFactory, TableService, reactor_reports, threaded_durability

Call = tuple[Callable[..., object], tuple[Any, ...]]


class Reactor:
    """What the writer thread calls back into: a queue, run on the test's thread."""

    def __init__(self) -> None:
        self.calls: queue.Queue[Call] = queue.Queue()

    def call_from_thread(self, function: Callable[..., object], *args: Any) -> None:
        self.calls.put((function, args))

    def run_calls(self) -> int:
        ran = 0
        while not self.calls.empty():
            function, args = self.calls.get()
            function(*args)
            ran += 1
        return ran


def contents(file: BinaryIO) -> bytes:
    return cast(io.BytesIO, file).getvalue()


def test_one_sync_for_the_records_that_arrived_meanwhile_in_order() -> None:
    reactor = Reactor()
    in_first_sync, release = threading.Event(), threading.Event()
    synced: list[bytes] = []  # the file as each sync saw it

    def sync(file: BinaryIO) -> None:
        synced.append(contents(file))
        if len(synced) == 1:
            in_first_sync.set()
            assert release.wait(10)

    durability = ThreadedDurability(io.BytesIO(), reactor.call_from_thread, sync=sync)
    reached: list[int] = []
    durability.on_durable = reached.append
    durability.append(b"a", 1)
    assert in_first_sync.wait(10)
    for position, data in enumerate((b"b", b"c", b"d"), start=2):
        durability.append(data, position)  # while the thread syncs "a"
    assert durability.durable == 0  # nothing reported yet
    release.set()
    durability.close()
    assert reactor.run_calls() == 2
    assert synced == [b"a", b"abcd"]  # three records, one sync
    assert reached == [1, 4] and durability.durable == 4
    assert not durability.running


def test_close_drains_everything_appended() -> None:
    reactor = Reactor()
    syncs = [0]

    def sync(file: BinaryIO) -> None:
        syncs[0] += 1

    file = io.BytesIO()
    durability = ThreadedDurability(file, reactor.call_from_thread, sync=sync)
    records = [bytes([n]) * 10 for n in range(200)]
    for position, data in enumerate(records, start=1):
        durability.append(data, position)
    durability.close()
    assert file.getvalue() == b"".join(records)
    assert durability.durable == 200  # known at once, before the reports run
    assert 1 <= syncs[0] <= 200
    reactor.run_calls()
    assert durability.durable == 200
    durability.append(b"late", 201)  # a record after close starts the thread again
    durability.close()
    assert file.getvalue().endswith(b"late") and durability.durable == 201


def test_a_failed_sync_reaches_the_owner_and_refuses_later_records() -> None:
    reactor = Reactor()

    def sync(file: BinaryIO) -> None:
        raise OSError(28, "No space left on device")

    durability = ThreadedDurability(io.BytesIO(), reactor.call_from_thread, sync=sync)
    failures: list[BaseException] = []
    durability.on_failure = failures.append
    durability.append(b"a", 1)
    durability.close()
    reactor.run_calls()
    assert [str(e) for e in failures] == ["[Errno 28] No space left on device"]
    assert durability.durable == 0
    with pytest.raises(OSError, match="an earlier write of the log failed"):
        durability.append(b"b", 2)


def test_the_writer_chains_records_at_once_and_the_thread_makes_them_durable() -> None:
    reactor = Reactor()
    file = io.BytesIO()
    writer = LogWriter(file, SEATS[HOST_SEAT], fsync=False)
    writer.use_durability(ThreadedDurability(file, reactor.call_from_thread))
    writer.write_header(header_fields())
    for n in range(20):
        writer.append("note", {"n": n})
    assert writer.next_seq == 21  # chained and signed already, whatever is on disk
    writer.close()
    assert writer.durable == 21
    file.seek(0)
    report = verify_log(file)
    assert report.records == 21 and report.last_hash == writer.head


def test_the_writer_refuses_records_after_the_thread_failed() -> None:
    reactor = Reactor()
    file = io.BytesIO()
    writer = LogWriter(file, SEATS[HOST_SEAT], fsync=False)

    def sync(file: BinaryIO) -> None:
        raise OSError(5, "Input/output error")

    writer.use_durability(ThreadedDurability(file, reactor.call_from_thread, sync=sync))
    writer.write_header(header_fields())
    writer.close()
    reactor.run_calls()
    with pytest.raises(LogWriterError, match="Input/output error"):
        writer.append("note", {})


# --------------------------------------------------------------------------- the network host


class DrainingClock(Clock):
    """The harness's reactor: after each step, the writer threads are joined and what they
    reported runs, until nothing is left (so a test sees every record once it is durable)."""

    def __init__(self) -> None:
        super().__init__()
        self.reactor = Reactor()
        self.threads: list[ThreadedDurability | GroupDurability] = []  # drained each step
        self.triggers: dict[int, Callable[[], object]] = {}  # "before shutdown"

    def addSystemEventTrigger(self, phase: str, event: str, f: Callable[[], object]) -> int:
        assert (phase, event) == ("before", "shutdown")
        self.triggers[id(f)] = f
        return id(f)

    def removeSystemEventTrigger(self, trigger: int) -> None:
        del self.triggers[trigger]

    def callFromThread(self, function: Callable[..., object], *args: Any) -> None:  # Twisted's name
        self.reactor.call_from_thread(function, *args)

    def advance(self, amount: float) -> None:
        super().advance(amount)
        while True:
            for thread in self.threads:
                thread.close()
            if not self.reactor.run_calls():
                return
            super().advance(0)


HostDurability = ThreadedDurability | GroupDurability


def host_harness(
    make: Callable[[BinaryIO, int, DrainingClock], HostDurability],
    log_file: BinaryIO | None = None,
) -> tuple[Harness, DrainingClock]:
    """A network host whose table's log reaches the disk through ``make``'s durability."""
    harness = Harness(config(players=3), log_file=log_file)
    clock = DrainingClock()

    def durability(file: BinaryIO, position: int) -> HostDurability:
        made = make(file, position, clock)
        clock.threads.append(made)
        return made

    harness.clock = clock
    harness.service = TableService(
        harness.cfg,
        HOST,
        clock,
        harness.log,
        fsync=False,
        random_bytes=harness.service.random_bytes,
        table_id=harness.service.table_id,
        durability=durability,
    )
    harness.factory = HostFactory(harness.service, key_of)
    return harness, clock


def threaded_harness(sync: Callable[[BinaryIO], None]) -> tuple[Harness, DrainingClock]:
    return host_harness(
        lambda file, position, clock: ThreadedDurability(
            file, clock.callFromThread, position=position, sync=sync
        )
    )


def play_checking_nothing_is_sent_before_it_is_on_disk(harness: Harness) -> int:
    """Play the match to its end; every record a seat got was on disk when sent. The number of
    records, each received in order and in the (valid) log."""
    service = harness.service
    sent_too_early: list[int] = []

    def watch(message: dict[str, Any]) -> None:  # as the host writes each frame
        if message["t"] == "record":
            table = service.table
            assert table is not None
            if table.writer.durable <= message["seq"]:
                sent_too_early.append(message["seq"])

    a, b = harness.remote("a", connect=False), harness.remote("b", connect=False)
    a.watch = b.watch = watch
    a.connect()
    b.connect()
    harness.run_to_end()
    assert sent_too_early == []
    records = harness.table.writer.next_seq
    assert [m["seq"] for m in a.received if m["t"] == "record"] == list(range(records))
    harness.log.seek(0)
    assert verify_log(harness.log).records == records
    return records


def test_the_host_sends_a_record_only_once_it_is_on_disk() -> None:
    syncs = [0]

    def sync(file: BinaryIO) -> None:
        syncs[0] += 1

    harness, _ = threaded_harness(sync)
    records = play_checking_nothing_is_sent_before_it_is_on_disk(harness)
    assert 0 < syncs[0] <= records


def test_a_log_that_cannot_be_written_stops_the_table_before_the_record_goes_out() -> None:
    syncs = [0]

    def sync(file: BinaryIO) -> None:
        syncs[0] += 1
        if syncs[0] == 3:
            raise OSError(28, "No space left on device")

    harness, _ = threaded_harness(sync)
    a, b = harness.remote("a"), harness.remote("b")
    harness.run()
    service = harness.service
    assert service.stopped is not None
    assert "the log could not be written" in service.stopped
    assert "No space left on device" in service.stopped
    for peer in (a, b):
        byes = [m["reason"] for m in peer.received if m["t"] == "bye"]
        assert byes and "the log could not be written" in byes[0]
        # the records of the failed sync (and anything after) went to nobody
        table = service.table
        assert table is not None
        seen = [m["seq"] for m in peer.received if m["t"] == "record"]
        assert seen and max(seen) < table.writer.durable


def test_closing_the_host_drains_the_log() -> None:
    gate = threading.Event()

    def sync(file: BinaryIO) -> None:
        assert gate.wait(10)  # the disk is slow: held until the test lets it go

    harness, _ = threaded_harness(sync)
    a = harness.remote("a")
    harness.remote("b")  # every seat taken: the table starts and writes its first records
    table = harness.table
    assert table.writer.durable == 0 < table.writer.next_seq
    assert not [m for m in a.collect() if m["t"] == "record"]  # nothing is on disk yet
    gate.set()
    harness.service.close("the host quit")  # returns once the writer thread has drained
    assert table.writer.durable == table.writer.next_seq
    harness.log.seek(0)
    assert verify_log(harness.log).records == table.writer.next_seq
    # what waited for the disk went out before the bye: the seat has every record, then the bye
    a.collect()
    kinds = [m["t"] for m in a.received]
    assert kinds[-1] == "bye" and kinds.count("record") == table.writer.next_seq


def test_the_seats_the_host_plays_read_records_before_they_are_on_disk() -> None:
    """A bot's turn queued earlier may run while records are still on their way to the disk: its
    agent must have read them (else it signs for an older head or position: out of step)."""
    disk = threading.Event()
    disk.set()

    def sync(file: BinaryIO) -> None:
        assert disk.wait(10)

    harness, _ = threaded_harness(sync)
    harness.remote("a")
    harness.remote("b")
    found = harness.run(lambda peer, message: message["t"] == "turn")
    assert found is not None
    peer, prompt = found
    disk.clear()  # from now on the disk is slow
    peer.pending.pop(0)
    replies: list[dict[str, Any]] = []
    peer.session.handle(prompt, replies.append)
    for reply in replies:
        peer.send(reply)  # the host journals it; its sync is held
    table = harness.table
    assert table.writer.durable < table.writer.next_seq
    local = [slot.local for slot in harness.service.slots if slot.local is not None]
    assert local
    for seat in local:
        assert seat.agent is not None and seat.agent.signer.head == table.head
    disk.set()
    harness.service.close("the host quit")


def test_logs_sharing_a_worker_are_written_and_reported_together() -> None:
    # a host's tables share a few writer threads: one pass writes every log that has records
    # waiting, syncs each once, and reports them all in one call to the reactor
    reactor = Reactor()
    gate = threading.Event()
    synced: list[bytes] = []

    def sync(file: BinaryIO) -> None:
        synced.append(contents(file))
        assert gate.wait(10)

    worker = LogSyncWorker(reactor.call_from_thread, name="test-writer")
    files = [io.BytesIO(), io.BytesIO()]
    logs = [
        ThreadedDurability(f, reactor.call_from_thread, sync=sync, worker=worker) for f in files
    ]
    reached: list[tuple[int, int]] = []
    for n, log in enumerate(logs):
        log.on_durable = lambda position, n=n: reached.append((n, position))
    logs[0].append(b"a", 1)
    logs[1].append(b"x", 1)
    logs[1].append(b"y", 2)
    gate.set()
    logs[0].close()  # drains this log; the shared thread goes on for the others
    logs[1].close()
    assert worker.running
    reactor.run_calls()
    assert sorted(reached) == [(0, 1), (1, 2)] or sorted(reached) == [(0, 1), (1, 1), (1, 2)]
    assert [f.getvalue() for f in files] == [b"a", b"xy"]
    assert [log.durable for log in logs] == [1, 2]
    logs[0].append(b"b", 2)  # a closed log may be written again
    logs[0].close()
    assert files[0].getvalue() == b"ab" and logs[0].durable == 2


def test_coalesced_calls_wake_the_owner_once_for_what_arrived_meanwhile() -> None:
    # every pass of every writer thread reports to the reactor; one wake-up of the reactor runs
    # all the reports that arrived since it last ran them, in order
    reactor = Reactor()
    calls = CoalescedCalls(reactor.call_from_thread)
    ran: list[int] = []
    threads = [threading.Thread(target=calls, args=(ran.append, n)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    calls(ran.append, 3)
    assert reactor.calls.qsize() == 1
    assert reactor.run_calls() == 1
    assert sorted(ran[:3]) == [0, 1, 2] and ran[3] == 3
    calls(ran.append, 4)  # after a run: the next call wakes the owner again
    assert reactor.run_calls() == 1 and ran[-1] == 4


def test_a_report_that_raises_keeps_no_other_table_s_records_from_going_out() -> None:
    # the reports of one wake-up (and of one pass) belong to many tables: a fault in one table's
    # callback must not drop the others' reports (their records would never be sent), and the
    # fault still reaches the reactor's log
    reactor = Reactor()
    calls = CoalescedCalls(reactor.call_from_thread)
    ran: list[int] = []

    def fails(_: int) -> None:
        raise RuntimeError("one table's fault")

    calls(ran.append, 0)
    calls(fails, 1)
    calls(ran.append, 2)
    with pytest.raises(RuntimeError, match="one table's fault"):
        reactor.run_calls()
    assert ran == [0, 2]
    faulty, other = ReportedDurability(0), ReportedDurability(0)
    faulty.on_durable = fails
    reached: list[int] = []
    other.on_durable = reached.append
    with pytest.raises(RuntimeError, match="one table's fault"):
        durable_module._deliver([(faulty, 1), (other, 3)])
    assert reached == [3] and other.durable == 3 and faulty.durable == 1


def test_the_writers_of_every_table_on_a_reactor_wake_it_through_one_coalescing_caller() -> None:
    reactor = Clock()  # any object a reactor's ``callFromThread`` can be looked up on
    reactor.callFromThread = Reactor().call_from_thread  # type: ignore[attr-defined]
    tables = [threaded_durability(reactor) for _ in range(3)]  # one factory per table
    made = [make(io.BytesIO(), 0) for make in tables]
    assert all(isinstance(d, ThreadedDurability) for d in made)
    reports = {id(cast(ThreadedDurability, d)._worker._call_from_thread) for d in made}
    assert reports == {id(reactor_reports(reactor))}


def test_a_finished_table_is_no_longer_kept_by_the_reactor_shutdown_trigger() -> None:
    # Before: the trigger that drains the log at the reactor's shutdown stayed registered after
    # the match ended, so the reactor kept every finished table (its service, table and
    # history): a host's RSS grew by 22 MiB from one pass of 100 tables to the next.
    harness, clock = threaded_harness(lambda file: None)
    harness.remote("a")
    harness.remote("b")
    harness.run_to_end()
    assert harness.service.finished and harness.service.table is not None
    assert clock.triggers == {}


# --------------------------------------------------------------------------- group commit


class Disk:
    """The group's sync calls, counted; each may be held (``gate``) or fail (``fail``)."""

    def __init__(self) -> None:
        self.syncfs_calls: list[int] = []
        self.fsync_calls: list[int] = []
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()
        self.fail_syncfs: OSError | None = None
        self.fail_fsync: dict[int, OSError] = {}

    def syncfs(self, fd: int) -> None:
        self.entered.set()
        assert self.gate.wait(10)
        self.syncfs_calls.append(fd)
        if self.fail_syncfs is not None:
            raise self.fail_syncfs

    def fsync(self, fd: int) -> None:
        self.entered.set()
        assert self.gate.wait(10)
        self.fsync_calls.append(fd)
        if fd in self.fail_fsync:
            raise self.fail_fsync[fd]


Opener = Callable[[str], BinaryIO]


@pytest.fixture
def opener(tmp_path: Path) -> Iterator[Opener]:
    """Opens real files (a log on disk has a descriptor to sync) and closes them afterwards."""
    with contextlib.ExitStack() as stack:
        yield lambda name: cast(BinaryIO, stack.enter_context((tmp_path / name).open("w+b")))


def group_logs(
    opener: Opener, count: int, disk: Disk, reactor: Reactor
) -> tuple[GroupCommit, list[GroupDurability], list[BinaryIO]]:
    group = GroupCommit(
        reactor.call_from_thread, syncfs=disk.syncfs, fsync=disk.fsync, inline_below=None
    )
    files = [opener(f"log{n}") for n in range(count)]
    return group, [GroupDurability(f, group) for f in files], files


def test_logs_of_many_tables_are_synced_together_with_one_syncfs(
    tmp_path: Path, opener: Opener
) -> None:
    # a pass makes every log that moved meanwhile durable with ONE sync of their file system,
    # reported to the reactor in one call; a record is written (visible in the file) at once
    reactor, disk = Reactor(), Disk()
    disk.gate.clear()
    group, logs, files = group_logs(opener, 3, disk, reactor)
    reached: list[tuple[int, int]] = []
    for n, log in enumerate(logs):
        log.on_durable = lambda position, n=n: reached.append((n, position))
    logs[0].append(b"first", 1)
    assert disk.entered.wait(10)  # the thread syncs log 0 alone, held
    for n, log in enumerate(logs):  # meanwhile every table moves
        log.append(b"r%d" % n, 2 if n == 0 else 1)
    logs[2].append(b"again", 2)
    assert [(tmp_path / f"log{n}").read_bytes() for n in range(3)] == [
        b"firstr0",
        b"r1",
        b"r2again",
    ]
    assert [log.durable for log in logs] == [0, 0, 0]
    disk.gate.set()
    for log in logs:
        log.close()
    assert disk.fsync_calls == [files[0].fileno()]  # the lone log: its own fsync
    assert len(disk.syncfs_calls) == 1  # then the three together: one syncfs
    assert group.passes == 2
    assert reactor.run_calls() == 2  # one report a pass
    assert sorted(reached) == [(0, 1), (0, 2), (1, 1), (2, 2)]
    assert [log.durable for log in logs] == [2, 1, 2]


def test_by_default_a_pass_syncs_each_log_with_its_own_fsync(opener: Opener) -> None:
    # Before, a group made without saying syncfs used the file system's syncfs, which also
    # writes back what every other program wrote there: with another process writing 50 MB/s
    # beside the logs, 100 busy tables' p99 doubled (bench_table --disk-neighbor)
    reactor, disk = Reactor(), Disk()
    disk.gate.clear()
    group = GroupCommit(reactor.call_from_thread, fsync=disk.fsync, inline_below=None)
    files = [opener(f"log{n}") for n in range(3)]
    logs = [GroupDurability(f, group) for f in files]
    logs[0].append(b"first", 1)
    assert disk.entered.wait(10)  # the lone log's sync, held
    for n, log in enumerate(logs):
        log.append(b"r%d" % n, 2 if n == 0 else 1)
    disk.gate.set()
    for log in logs:
        log.close()
    assert disk.syncfs_calls == []
    assert sorted(disk.fsync_calls) == sorted([files[0].fileno(), *(f.fileno() for f in files)])
    assert group.passes == 2 and [log.durable for log in logs] == [2, 1, 1]


def test_a_failed_syncfs_falls_back_to_each_log_s_own_fsync(opener: Opener) -> None:
    # the file system's sync failed (maybe another file's error): each log is synced alone and
    # only the one whose own sync fails stops; the others are durable
    reactor, disk = Reactor(), Disk()
    disk.gate.clear()
    _, logs, files = group_logs(opener, 3, disk, reactor)
    disk.fail_syncfs = OSError(5, "Input/output error")
    disk.fail_fsync[files[1].fileno()] = OSError(28, "No space left on device")
    failures: list[str] = []
    logs[1].on_failure = lambda error: failures.append(str(error))
    for log in logs:
        log.append(b"x", 1)
    disk.gate.set()
    for log in logs:
        log.close()
    reactor.run_calls()
    assert len(disk.syncfs_calls) == 1 and len(disk.fsync_calls) == 3
    assert failures == ["[Errno 28] No space left on device"]
    assert [log.durable for log in logs] == [1, 0, 1]
    with pytest.raises(OSError, match="an earlier write of the log failed"):
        logs[1].append(b"y", 2)
    logs[0].append(b"y", 2)  # the others go on
    logs[0].close()
    assert logs[0].durable == 2


def test_without_syncfs_each_log_is_synced_alone(opener: Opener) -> None:
    reactor, disk = Reactor(), Disk()
    group = GroupCommit(reactor.call_from_thread, syncfs=None, fsync=disk.fsync, inline_below=None)
    files = [opener(f"log{n}") for n in range(2)]
    logs = [GroupDurability(f, group) for f in files]
    disk.gate.clear()
    logs[0].append(b"a", 1)
    assert disk.entered.wait(10)
    logs[0].append(b"b", 2)
    logs[1].append(b"c", 1)
    disk.gate.set()
    for log in logs:
        log.close()
    reactor.run_calls()
    assert sorted(disk.fsync_calls) == sorted([files[0].fileno()] * 2 + [files[1].fileno()])
    assert [log.durable for log in logs] == [2, 1]


def test_a_log_without_fsync_is_durable_once_written() -> None:
    reactor, disk = Reactor(), Disk()
    group = GroupCommit(
        reactor.call_from_thread, syncfs=disk.syncfs, fsync=disk.fsync, inline_below=None
    )
    file = io.BytesIO()
    log = GroupDurability(file, group)  # no descriptor: nothing to sync
    log.append(b"a", 1)
    assert log.durable == 1 and file.getvalue() == b"a"
    assert not group.running and disk.fsync_calls == disk.syncfs_calls == []


def test_a_write_that_fails_raises_at_once_and_refuses_later_records(opener: Opener) -> None:
    reactor, disk = Reactor(), Disk()
    group = GroupCommit(
        reactor.call_from_thread, syncfs=disk.syncfs, fsync=disk.fsync, inline_below=None
    )
    file = opener("log")
    log = GroupDurability(file, group)
    file.close()
    with pytest.raises(ValueError):
        log.append(b"a", 1)
    with pytest.raises(OSError, match="an earlier write of the log failed"):
        log.append(b"b", 2)
    assert log.durable == 0


@pytest.mark.parametrize(
    ("inline", "wait"),
    [(False, None), (True, None), (False, 5.0), (False, 0.0)],
    ids=["on-the-thread", "inline", "waiting-in-time", "waiting-too-short"],
)
def test_the_host_sends_a_record_only_once_the_group_synced_it(
    opener: Opener, inline: bool, wait: float | None
) -> None:
    # the network host with the group commit (what ``canasta host`` uses) on a real file; with
    # a wait, the reactor takes up the syncs the thread makes in time (all, or none at all)
    reactor, disk = Reactor(), Disk()
    group = GroupCommit(
        reactor.call_from_thread,
        syncfs=disk.syncfs,
        fsync=disk.fsync,
        inline_below=0.001 if inline else None,
        wait=wait,
    )
    harness, clock = host_harness(
        lambda file, position, clock: GroupDurability(file, group, position=position),
        log_file=opener("host.log"),
    )
    clock.reactor = reactor  # the group reports through the test's reactor
    records = play_checking_nothing_is_sent_before_it_is_on_disk(harness)
    assert 0 < len(disk.fsync_calls) + len(disk.syncfs_calls) <= records
    # inline: most syncs (a loaded machine may measure one slow and use the thread a while)
    assert (group.inline_syncs > 0) == inline
    assert inline or group.passes > 0
    assert (group.taken_up > 0) == (wait == 5.0) or wait == 0.0  # (0: a rare sync in time)


class SlowClock:
    """``perf_counter`` for a group: each sync of the fake disk takes ``sync_seconds``."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sync_seconds = 0.0001

    def __call__(self) -> float:
        return self.now


def test_a_fast_disk_is_synced_inline_and_a_slow_one_on_the_thread(opener: Opener) -> None:
    reactor, disk, clock = Reactor(), Disk(), SlowClock()

    def fsync(fd: int) -> None:
        disk.fsync(fd)
        clock.now += clock.sync_seconds

    group = GroupCommit(
        reactor.call_from_thread, syncfs=disk.syncfs, fsync=fsync, clock=clock, inline_below=0.001
    )
    log = GroupDurability(opener("log"), group)
    for position in range(1, 4):  # a fast disk: durable when append returns, no thread
        log.append(b"x", position)
        assert log.durable == position
    assert group.inline_syncs == 3 and not group.running
    clock.sync_seconds = 0.005  # the disk slows down: after a few syncs, the thread takes over
    position = 3
    while group.inline:
        position += 1
        log.append(b"y", position)
        assert log.durable == position
    assert 4 <= position <= 6
    position += 1
    log.append(b"z", position)
    assert log.durable == position - 1  # on its way: the reactor did not wait
    log.close()
    reactor.run_calls()
    assert log.durable == position and group.passes == 1
    for _ in range(3):  # the thread's syncs say nothing of the disk: no inline sync meanwhile
        position += 1
        log.append(b"t", position)
        log.close()
        reactor.run_calls()
    assert group.inline_syncs == position - 4 and not group.inline
    clock.now += PROBE_SECONDS  # still slow: tried inline again, back to the thread soon
    tried = 0
    while group.inline or tried == 0:
        position += 1
        log.append(b"s", position)
        assert log.durable == position  # synced inline: measured
        tried += 1
    assert 1 <= tried <= 3
    position += 1
    log.append(b"s", position)  # the thread again
    assert log.durable == position - 1
    log.close()
    reactor.run_calls()
    clock.sync_seconds = 0.0001  # fast again: inline from the next try on
    clock.now += PROBE_SECONDS
    for _ in range(10):
        position += 1
        log.append(b"w", position)
        assert log.durable == position
    assert group.inline


def test_a_log_with_records_on_the_thread_s_way_is_not_synced_inline(opener: Opener) -> None:
    # an inline sync would make the later record durable while the host's outbox still waits for
    # the thread's report of the earlier one: such a log keeps going through the thread
    reactor, disk = Reactor(), Disk()
    group = GroupCommit(reactor.call_from_thread, syncfs=disk.syncfs, fsync=disk.fsync)
    log = GroupDurability(opener("log"), group)
    group.measured(1.0)  # a slow sync: through the thread (the next probe a second away)
    assert not group.inline
    disk.gate.clear()
    log.append(b"a", 1)
    assert disk.entered.wait(10)
    group.inline = True  # the disk got fast meanwhile
    log.append(b"b", 2)
    assert log.durable == 0 and group.inline_syncs == 0
    disk.gate.set()
    log.close()
    reactor.run_calls()
    assert log.durable == 2 and group.inline_syncs == 0
    log.append(b"c", 3)  # nothing on its way any more: inline
    assert log.durable == 3 and group.inline_syncs == 1


def test_a_log_whose_report_is_still_on_its_way_is_not_synced_inline(opener: Opener) -> None:
    # The thread has synced "a" and its report waits for the owner's thread; "b" synced inline
    # meanwhile was durable before the report came, and the report (of "a" only) then freed
    # nothing in the host's outbox, which waited for "b": the table hung for good (seen at a
    # blind hand's end in bench_deal_loopback, with the disk's speed around the inline limit).
    reactor, disk = Reactor(), Disk()
    group = GroupCommit(reactor.call_from_thread, syncfs=disk.syncfs, fsync=disk.fsync)
    log = GroupDurability(opener("log"), group)
    reached: list[int] = []
    log.on_durable = reached.append
    group.measured(1.0)  # a slow sync: through the thread
    log.append(b"a", 1)
    deadline = time.monotonic() + 10
    while reactor.calls.empty():  # the thread's pass is over; its report is not delivered yet
        assert time.monotonic() < deadline
        time.sleep(0.001)
    group.inline = True  # the disk got fast meanwhile
    log.append(b"b", 2)
    assert group.inline_syncs == 0
    reactor.run_calls()
    log.close()
    reactor.run_calls()
    assert log.durable == 2 and reached[-1] == 2


def test_a_log_whose_sync_failed_is_not_synced_again(opener: Opener) -> None:
    # a record that reaches the thread after a failed sync (before the owner heard of it) is not
    # synced and reported durable: the failed sync's data may be lost although a later one passes
    reactor, disk = Reactor(), Disk()
    group = GroupCommit(reactor.call_from_thread, syncfs=None, fsync=disk.fsync, inline_below=None)
    file, other_file = opener("log"), opener("other")
    log, other = GroupDurability(file, group), GroupDurability(other_file, group)
    disk.fail_fsync[file.fileno()] = OSError(5, "Input/output error")
    reached: list[int] = []
    log.on_durable = reached.append
    log.append(b"a", 1)
    log.close()  # the failed pass is over; its report waits for the owner
    del disk.fail_fsync[file.fileno()]  # the disk answers again
    log.append(b"b", 2)
    other.append(b"x", 1)  # another table's log: once it is synced, the pass with "b" is over
    other.close()
    reactor.run_calls()
    assert disk.fsync_calls == [file.fileno(), other_file.fileno()]  # "b" was not synced
    assert reached == [] and log.durable == 0 and log.failure is not None


# --------------------------------------------------------------------------- a bounded wait


def waiting_log(opener: Opener, disk: Disk, reactor: Reactor) -> GroupDurability:
    group = GroupCommit(
        reactor.call_from_thread, syncfs=disk.syncfs, fsync=disk.fsync, inline_below=None, wait=5.0
    )
    return GroupDurability(opener("log"), group)


def test_a_sync_done_within_the_wait_is_taken_up_at_once_and_never_reported(
    opener: Opener,
) -> None:
    # the thread syncs; the owner's thread, waiting, takes the sync up as an inline one: the
    # record is durable when append returns, and no report wakes the owner's thread for it
    reactor, disk = Reactor(), Disk()
    log = waiting_log(opener, disk, reactor)
    reached: list[int] = []
    log.on_durable = reached.append
    log.append(b"a", 1)
    assert log.durable == 1 and disk.fsync_calls == [log.fd]
    log.append(b"b", 2)
    assert log.durable == 2
    log.close()
    assert reactor.run_calls() == 0 and reached == []


def test_a_sync_past_the_wait_is_left_to_the_report(opener: Opener) -> None:
    # the disk holds the sync past the wait: append returns with the record not yet durable,
    # and the thread's report brings it (exactly once: never both taken up and reported)
    reactor, disk = Reactor(), Disk()
    log = waiting_log(opener, disk, reactor)
    log._group.wait = 0.01
    reached: list[int] = []
    log.on_durable = reached.append
    disk.gate.clear()
    log.append(b"a", 1)
    assert log.durable == 0 and disk.entered.is_set()
    log.append(b"b", 2)  # something on its way: no wait at all
    assert log.durable == 0
    disk.gate.set()
    log.close()
    reactor.run_calls()
    assert log.durable == 2 and reached and reached[-1] == 2


def test_a_sync_that_fails_within_the_wait_is_reported_as_a_failure(opener: Opener) -> None:
    reactor, disk = Reactor(), Disk()
    log = waiting_log(opener, disk, reactor)
    disk.fail_fsync[log.fd or -1] = OSError(5, "Input/output error")
    failures: list[str] = []
    log.on_failure = lambda error: failures.append(str(error))
    log.append(b"a", 1)
    assert log.durable == 0  # not taken up
    log.close()
    reactor.run_calls()
    assert failures == ["[Errno 5] Input/output error"] and log.durable == 0
    with pytest.raises(OSError, match="an earlier write of the log failed"):
        log.append(b"b", 2)
