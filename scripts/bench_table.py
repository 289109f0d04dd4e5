#!/usr/bin/env python3
"""Benchmark: N concurrent all-bot tables through one host process over TLS loopback.

One process and one Twisted reactor run N ``TableService`` hosts (each started with
``app.start_host`` on 127.0.0.1, port 0, with its own host identity and its own log in a temporary
directory) and, for each table, ``--remote-seats`` seats played by a ``PeerSession`` with a bot
(``app.bot_player``, greedy by default) that joins over real TLS (``app.join_table``) and journals
its own copy of the log; the host plays the other seats with its own bots (``--bot-delay``, 0 by
default).
Each table stops after ``--hands`` hands (``TableConfig.max_hands``); the whole run is cut off
after ``--seconds``. Everything talks to 127.0.0.1 only.

Prints JSON (and writes it with --out), one entry per pass (``--fsync on``, ``off`` or ``both``,
the default: on, as the real host, then off):

- ``latency_ms.act``: for each game action a remote seat submits, the time from handing its ``act``
  frame to the transport until the same seat receives the ``record`` frame that carries those
  ``act`` bytes: action -> checked -> journaled (fsync) -> broadcast, round trip over TLS loopback.
  ``commit`` and ``reveal`` (the deal's messages) are timed the same way; ``turn`` is the host's
  prompt, from the host handing it to the transport until the seat receives it. p50/p90/p99/max
  in ms. ``act_legs_ms`` splits the act round trip: ``to_host`` (until the host starts handling
  it), ``at_host`` (the host's handling) and ``to_seat`` (until the record is back at the seat).
- ``host_ms``: host-side time per message, from wrappers put around library methods by this script
  (the library is not changed): ``handle_act`` (the whole handling of a remote ``act``: submit,
  journal and publish), ``submit`` (``HostTable.submit``: checks, engine, journal, every seat
  incl. bots), ``journal_sync`` (``LogWriter._sync``: flush and fsync), ``publish``
  (``TableService._publish``: redact, send, views), ``bot_turn`` (a host bot's whole turn).
  ``peer_ms.record``: a remote seat's checking, replaying and journaling of one record.
- ``reactor_ms``: how long each reactor iteration spent in timed calls (the host bots' turns) and
  in I/O (``doIteration``, which includes waiting in epoll when there is nothing to do).
- rates: actions/s (every ``action`` record, host bots included), remote actions/s, records/s,
  over the wall time from the first join to the last table's end; CPU seconds (user + system) over
  the same window. Goal (the issue): 100 tables, p99 action->broadcast under 10 ms.

The peers run in the same process and on the same reactor as the host: their record checking,
replay and journaling take CPU from the host, the more so as ``--remote-seats`` grows.
``--nodelay`` sets TCP_NODELAY on every connection (the library does not), ``--ramp`` spreads the
tables' joins over some seconds, ``--profile FILE`` runs cProfile over the timed window.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import math
import os
import platform
import pstats
import random
import resource
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any, BinaryIO

from twisted.internet import defer, task
from twisted.logger import (
    FilteringLogObserver,
    LogLevel,
    LogLevelFilterPredicate,
    globalLogBeginner,
    textFileLogObserver,
)

from canasta_net.app import HostedTable, bot_player, join_table, open_new_log, start_host
from canasta_net.eventlog import LogWriter, RecordInfo, verify_log
from canasta_net.framing import FrameProtocol
from canasta_net.games import UnknownGame, game_for
from canasta_net.host_table import HostTable
from canasta_net.identity import Identity
from canasta_net.net_host import HostConnection, ServiceEvents, TableConfig, TableService
from canasta_net.net_peer import PeerProtocol, PeerSession

LOOPBACK = "127.0.0.1"
GOAL_TABLES = 100
GOAL_P99_MS = 10.0
TIMED = ("act", "commit", "reveal")  # peer messages whose record comes straight back
SETTLE_SECONDS = 0.2  # after a pass: let closing connections and queued calls run out


# --------------------------------------------------------------------------- figures


def percentiles(samples: list[float]) -> dict[str, Any]:
    """Nearest-rank percentiles of durations in seconds, reported in ms."""
    if not samples:
        return {"count": 0}
    ordered = sorted(samples)
    n = len(ordered)

    def rank(p: float) -> float:
        return round(ordered[max(0, math.ceil(p / 100 * n) - 1)] * 1000, 3)

    return {
        "count": n,
        "mean": round(sum(ordered) / n * 1000, 3),
        "p50": rank(50),
        "p90": rank(90),
        "p99": rank(99),
        "max": round(ordered[-1] * 1000, 3),
    }


def filesystem_of(path: Path) -> str:
    """The type of the file system holding ``path`` (from /proc/mounts; "unknown" elsewhere)."""
    target = str(path.resolve())
    best, kind = "", "unknown"
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return kind
    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            continue
        mount = parts[1]
        inside = target == mount or target.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) > len(best):
            best, kind = mount, parts[2]
    return kind


@dataclass
class PassStats:
    """Everything one pass measures (filled in by the wrappers and the table hooks)."""

    latency: defaultdict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    pending: dict[PeerSession, tuple[str, bytes, float]] = field(default_factory=dict)
    prompts: dict[tuple[bytes, int], float] = field(default_factory=dict)
    at_host: dict[bytes, tuple[float, float]] = field(default_factory=dict)
    legs: defaultdict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    sent: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    refused: int = 0
    handle: defaultdict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    submit: list[float] = field(default_factory=list)
    sync: list[float] = field(default_factory=list)
    publish: list[float] = field(default_factory=list)
    bot_turn: list[float] = field(default_factory=list)
    peer_record: list[float] = field(default_factory=list)
    gc: defaultdict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    timed_calls: list[float] = field(default_factory=list)
    io: list[float] = field(default_factory=list)
    records: int = 0
    actions: int = 0
    recording: bool = False  # the reactor's figures: only between the first join and the end


# --------------------------------------------------------------------------- instrumentation


class Patches:
    """Wrap attributes of library classes (or of the reactor) for one pass, then put them back."""

    def __init__(self) -> None:
        self._undo: list[tuple[Any, str, Any, bool]] = []

    def set(self, owner: Any, name: str, value: Any) -> Any:
        """Replace ``owner.name`` with ``value``; return what it was (as looked up)."""
        own = vars(owner) if isinstance(owner, type) else getattr(owner, "__dict__", {})
        had = name in own
        original = own[name] if had else getattr(owner, name)
        setattr(owner, name, value)
        self._undo.append((owner, name, original, had))
        return original

    def callback(self, callbacks: list[Any], function: Any) -> None:
        """Add ``function`` to a list of callbacks (``gc.callbacks``) until :meth:`restore`."""
        callbacks.append(function)
        self._undo.append((callbacks, "", function, False))

    def restore(self) -> None:
        for owner, name, original, had in reversed(self._undo):
            if isinstance(owner, list):
                owner.remove(original)
            elif had:
                setattr(owner, name, original)
            else:
                delattr(owner, name)
        self._undo.clear()


def instrument(stats: PassStats, reactor: Any) -> Patches:
    """Time the remote seats' round trips and the host's work, without editing the library."""
    clock = time.perf_counter
    patches = Patches()

    # the remote seat: the moment its message is handed to the transport ...
    frame_send: Callable[[Any, Mapping[str, Any]], None] = PeerProtocol.send

    def peer_send(self: PeerProtocol, message: Mapping[str, Any]) -> None:
        t = message.get("t")
        if t in TIMED:
            stats.sent[t] += 1
            stats.pending[self.session] = (t, message["act"], clock())
        frame_send(self, message)

    patches.set(PeerProtocol, "send", peer_send)

    # ... until the same seat receives the record that carries those exact act bytes
    peer_received = PeerProtocol.message_received

    def peer_message_received(self: PeerProtocol, message: dict[str, Any]) -> None:
        now = clock()
        t = message["t"]
        if t == "record":
            pending = stats.pending.get(self.session)
            if pending is not None and pending[1] in message["data"]:
                del stats.pending[self.session]
                kind, act, sent = pending
                stats.latency[kind].append(now - sent)
                host = stats.at_host.pop(act, None)
                if kind == "act" and host is not None:
                    stats.legs["to_host"].append(host[0] - sent)
                    stats.legs["at_host"].append(host[1] - host[0])
                    stats.legs["to_seat"].append(now - host[1])
        elif t == "turn":
            session = self.session
            if session.signer is not None and session.seat is not None:
                prompted = stats.prompts.pop((session.signer.table_id, session.seat), None)
                if prompted is not None:
                    stats.latency["turn"].append(now - prompted)
        elif t == "error" and stats.pending.pop(self.session, None) is not None:
            stats.refused += 1
        peer_received(self, message)

    patches.set(PeerProtocol, "message_received", peer_message_received)

    # the host's prompts: handed to the transport -> received by the seat
    host_send: Callable[[Any, Mapping[str, Any]], None] = HostConnection.send

    def host_connection_send(self: HostConnection, message: Mapping[str, Any]) -> None:
        if message.get("t") == "turn" and self.seat is not None:
            stats.prompts[(self.service.table_id, self.seat)] = clock()
        host_send(self, message)

    patches.set(HostConnection, "send", host_connection_send)

    # the remote seat's own work on each record: checks, replay, its journal
    session_record = PeerSession._record

    def peer_record(self: PeerSession, message: dict[str, Any]) -> None:
        start = clock()
        session_record(self, message)
        stats.peer_record.append(clock() - start)

    patches.set(PeerSession, "_record", peer_record)

    # the host's side
    service_handle = TableService.handle

    def handle(self: TableService, conn: Any, message: dict[str, Any]) -> None:
        t = message["t"]
        if t not in TIMED:
            service_handle(self, conn, message)
            return
        start = clock()
        service_handle(self, conn, message)
        end = clock()
        stats.handle[t].append(end - start)
        stats.at_host[message["act"]] = (start, end)

    patches.set(TableService, "handle", handle)

    table_submit = HostTable.submit

    def submit(
        self: HostTable, seat: int, act: bytes, asig: bytes, seed: bytes | None = None
    ) -> list[RecordInfo]:
        start = clock()
        try:
            return table_submit(self, seat, act, asig, seed)
        finally:
            stats.submit.append(clock() - start)

    patches.set(HostTable, "submit", submit)

    writer_sync = LogWriter._sync

    def sync(self: LogWriter) -> None:
        start = clock()
        writer_sync(self)
        stats.sync.append(clock() - start)

    patches.set(LogWriter, "_sync", sync)

    service_publish = TableService._publish

    def publish(self: TableService, infos: Any) -> None:
        start = clock()
        service_publish(self, infos)
        stats.publish.append(clock() - start)

    patches.set(TableService, "_publish", publish)

    local_turn = TableService._local_turn

    def bot_turn(self: TableService, slot: Any, need: str) -> None:
        start = clock()
        local_turn(self, slot, need)
        stats.bot_turn.append(clock() - start)

    patches.set(TableService, "_local_turn", bot_turn)

    # the reactor: time in timed calls and in I/O, per iteration
    run_until_current = reactor.runUntilCurrent
    do_iteration = reactor.doIteration

    def timed_calls() -> None:
        start = clock()
        run_until_current()
        if stats.recording:
            stats.timed_calls.append(clock() - start)

    def io_step(delay: float | None) -> None:
        start = clock()
        do_iteration(delay)
        if stats.recording:
            stats.io.append(clock() - start)

    patches.set(reactor, "runUntilCurrent", timed_calls)
    patches.set(reactor, "doIteration", io_step)

    # the garbage collector's pauses, per generation
    gc_started = [0.0]

    def gc_pause(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            gc_started[0] = clock()
        elif stats.recording:
            stats.gc[int(info["generation"])].append(clock() - gc_started[0])

    patches.callback(gc.callbacks, gc_pause)
    return patches


def no_nagle(patches: Patches) -> None:
    """TCP_NODELAY on both ends of every table connection (the library leaves Nagle on)."""
    make_connection: Callable[[Any, Any], None] = FrameProtocol.makeConnection

    def make(self: FrameProtocol, transport: Any) -> None:
        make_connection(self, transport)
        transport.setTcpNoDelay(True)

    patches.set(FrameProtocol, "makeConnection", make)


# --------------------------------------------------------------------------- tables


@dataclass
class Peer:
    session: PeerSession
    log_file: BinaryIO
    service: Any = None
    joining: Any = None  # the delayed join, while --ramp holds it back
    done: bool = False


@dataclass
class Table:
    index: int
    hosted: HostedTable | None = None
    peers: list[Peer] = field(default_factory=list)
    started_at: float | None = None
    finished_at: float | None = None


@dataclass
class PassConfig:
    tables: int
    hands: int
    remote_seats: int
    variant: str
    bot: str
    fsync: bool
    deadline: float  # time.perf_counter() value at which the pass is cut off
    bot_delay: float
    ramp: float
    seed: int
    profile: Path | None  # where the raw cProfile data goes (None: no profiling)
    nodelay: bool


async def run_pass(reactor: Any, cfg: PassConfig, where: Path) -> dict[str, Any]:
    """Start the tables, let them play, stop everything; return the pass's figures."""
    stats = PassStats()
    rules = game_for(cfg.variant).rules
    rng = random.Random(cfg.seed)
    tables = [Table(i) for i in range(cfg.tables)]
    all_done: defer.Deferred[None] = defer.Deferred()
    remaining = [cfg.tables * (1 + cfg.remote_seats)]  # hosts and peers still playing

    def one_done() -> None:
        remaining[0] -= 1
        if remaining[0] == 0 and not all_done.called:
            all_done.callback(None)

    def host_events(table: Table) -> ServiceEvents:
        def on_record(info: RecordInfo) -> None:
            stats.records += 1
            if info.kind == "action":
                stats.actions += 1

        def on_started(_: HostTable) -> None:
            table.started_at = time.perf_counter()

        def on_finished(_: HostTable) -> None:
            if table.finished_at is None:
                table.finished_at = time.perf_counter()
                one_done()

        return ServiceEvents(on_record=on_record, on_finished=on_finished, on_started=on_started)

    patches = instrument(stats, reactor)
    if cfg.nodelay:
        no_nagle(patches)
    profiler = cProfile.Profile() if cfg.profile is not None else None
    try:
        for table in tables:
            directory = where / f"table-{table.index:03d}"
            config = TableConfig.simple(
                f"bench-{table.index}",
                rules,
                1 + cfg.remote_seats,
                host_plays=False,
                hold_seconds=3600.0,
                bot_delay=cfg.bot_delay,
                bot_kind=cfg.bot,
                max_hands=cfg.hands,
            )
            table.hosted = await start_host(
                reactor,
                config,
                Identity.generate(),
                bind=LOOPBACK,
                port=0,
                log_path=directory / "host.cnlog",
                events=host_events(table),
                fsync=cfg.fsync,
            )
        clock_start = time.perf_counter()
        stats.recording = True
        cpu_start = resource.getrusage(resource.RUSAGE_SELF)
        if profiler is not None:
            profiler.enable()
        for table in tables:
            hosted = table.hosted
            assert hosted is not None
            host, port = hosted.address
            assert host == LOOPBACK
            for seat in range(cfg.remote_seats):
                delay = cfg.ramp * table.index / cfg.tables
                peer = join_peer(
                    reactor, table, seat, port, hosted, cfg, rng, one_done, where, delay
                )
                table.peers.append(peer)
        timer = reactor.callLater(max(0.0, cfg.deadline - time.perf_counter()), _fire, all_done)
        await all_done
        if timer.active():
            timer.cancel()
        clock_end = time.perf_counter()
        stats.recording = False
        if profiler is not None:
            profiler.disable()
        cpu_end = resource.getrusage(resource.RUSAGE_SELF)
        await shut_down(reactor, tables)
    finally:
        patches.restore()

    finished = [t for t in tables if t.finished_at is not None]
    started = [t.started_at for t in tables if t.started_at is not None]
    seconds = clock_end - clock_start
    user = cpu_end.ru_utime - cpu_start.ru_utime
    system = cpu_end.ru_stime - cpu_start.ru_stime
    remote_actions = len(stats.latency["act"])
    p99 = percentiles(stats.latency["act"]).get("p99")
    hands = sum(
        t.hosted.service.table.match.hands_played
        for t in tables
        if t.hosted is not None and t.hosted.service.table is not None
    )
    verified = sum(1 for t in finished if _verifies(where / f"table-{t.index:03d}" / "host.cnlog"))
    result: dict[str, Any] = {
        "fsync": cfg.fsync,
        "tables": cfg.tables,
        "remote_seats_per_table": cfg.remote_seats,
        "host_bots_per_table": rules.players - cfg.remote_seats,
        "hands_per_table": cfg.hands,
        "completed": len(finished) == cfg.tables and remaining[0] == 0,
        "tables_finished": len(finished),
        "hands_played": hands,
        "seconds": round(seconds, 3),
        "seconds_until_all_started": (
            round(max(started) - clock_start, 3) if len(started) == cfg.tables else None
        ),
        "cpu_seconds": round(user + system, 3),
        "cpu_user_seconds": round(user, 3),
        "cpu_system_seconds": round(system, 3),
        "cpu_share": round((user + system) / seconds, 3) if seconds else None,
        "records": stats.records,
        "records_per_second": round(stats.records / seconds, 1),
        "actions": stats.actions,
        "actions_per_second": round(stats.actions / seconds, 1),
        "remote_actions": remote_actions,
        "remote_actions_per_second": round(remote_actions / seconds, 1),
        "latency_ms": {t: percentiles(stats.latency[t]) for t in (*TIMED, "turn")},
        "act_legs_ms": {leg: percentiles(samples) for leg, samples in stats.legs.items()},
        "host_ms": {
            "handle_act": percentiles(stats.handle["act"]),
            "submit": percentiles(stats.submit),
            "journal_sync": percentiles(stats.sync),
            "publish": percentiles(stats.publish),
            "bot_turn": percentiles(stats.bot_turn),
        },
        "peer_ms": {"record": percentiles(stats.peer_record)},
        "gc_pause_ms": {f"gen{g}": percentiles(stats.gc[g]) for g in sorted(stats.gc)},
        "reactor_ms": {
            "timed_calls": percentiles(stats.timed_calls),
            "io": percentiles(stats.io),
        },
        "remote_messages_sent": dict(stats.sent),
        "unanswered_messages": len(stats.pending),
        "refused_messages": stats.refused,
        "peer_problems": sum(1 for t in tables for p in t.peers if p.session.problem),
        "host_logs_verified": verified,
        "profiled": cfg.profile is not None,
        "tcp_nodelay": cfg.nodelay,
        "meets_goal": bool(
            cfg.tables >= GOAL_TABLES
            and len(finished) == cfg.tables
            and p99 is not None
            and p99 < GOAL_P99_MS
        ),
    }
    if profiler is not None and cfg.profile is not None:
        profiler.dump_stats(cfg.profile)
        result["profile_top"] = profile_top(profiler, 25)
    return result


def join_peer(
    reactor: Any,
    table: Table,
    seat: int,
    port: int,
    hosted: HostedTable,
    cfg: PassConfig,
    rng: random.Random,
    one_done: Callable[[], None],
    where: Path,
    delay: float,
) -> Peer:
    """One remote seat: a bot behind a PeerSession, joining over TLS on 127.0.0.1 after
    ``delay`` seconds."""
    box: list[PeerSession] = []
    peer_box: list[Peer] = []

    def done() -> None:
        peer = peer_box[0]
        if not peer.done:
            peer.done = True
            if peer.service is not None:
                peer.service.stopService()
            one_done()

    player: Any = bot_player(box, cfg.bot, rng.getrandbits(64))
    original_finished = player.finished

    def finished(reason: str) -> None:  # the match is over for this seat
        original_finished(reason)
        done()

    player.finished = finished
    log_file = open_new_log(where / f"table-{table.index:03d}" / f"seat-{seat}.cnlog")
    session = PeerSession(
        Identity.generate(), player, name=f"peer-{seat}", bot=True, log_file=log_file
    )
    box.append(session)
    peer = Peer(session, log_file)
    peer_box.append(peer)

    def connect() -> None:
        peer.joining = None
        if peer.done:
            return
        peer.service = join_table(
            reactor,
            LOOPBACK,
            port,
            session,
            session.identity,
            fingerprint=hosted.service.identity.fingerprint,
        )

    if delay > 0:
        peer.joining = reactor.callLater(delay, connect)
    else:
        connect()
    return peer


async def shut_down(reactor: Any, tables: list[Table]) -> None:
    """Stop every table (finished or cut off by --seconds) and close its files."""
    services = [t.hosted.service for t in tables if t.hosted is not None]
    for service in services:
        service.finished = True
        service.config.max_hands = 0  # a table cut off mid-hand stops at its next deal
        setattr(service, "_pump", _nothing)  # noqa: B010 - and its bots stop now
    stopping = [p.service.stopService() for t in tables for p in t.peers if p.service is not None]
    for t in tables:
        for p in t.peers:
            p.done = True
            if p.joining is not None and p.joining.active():
                p.joining.cancel()
    await defer.DeferredList([d for d in stopping if isinstance(d, defer.Deferred)])
    for t in tables:
        if t.hosted is not None:
            await defer.maybeDeferred(t.hosted.port.stopListening)
    for service in services:
        for slot in service.slots:
            transport: Any = slot.conn.transport if slot.conn is not None else None
            if transport is not None:
                transport.abortConnection()
    await task.deferLater(reactor, SETTLE_SECONDS, lambda: None)
    for service in services:
        for slot in service.slots:
            if slot.hold is not None and slot.hold.active():
                slot.hold.cancel()
    for t in tables:
        if t.hosted is not None:
            t.hosted.log_file.close()
        for p in t.peers:
            p.log_file.close()


def _nothing() -> None:
    pass


def _fire(d: defer.Deferred[None]) -> None:
    if not d.called:
        d.callback(None)


def _verifies(path: Path) -> bool:
    try:
        verify_log(path.read_bytes())
    except Exception:
        return False
    return True


def profile_top(profiler: cProfile.Profile, count: int) -> list[dict[str, Any]]:
    """The functions with the most own time (and the listing on stderr)."""
    stream = io.StringIO()
    stats = pstats.Stats(profiler, stream=stream)
    stats.sort_stats("cumulative").print_stats(count)
    stats.sort_stats("tottime").print_stats(count)
    print(stream.getvalue(), file=sys.stderr)
    rows = []
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in table.values())
    for (filename, line, name), (_, calls, tottime, cumtime, _) in sorted(
        table.items(), key=lambda item: -item[1][2]
    )[:count]:
        rows.append(
            {
                "function": f"{Path(filename).name}:{line}({name})",
                "calls": calls,
                "tottime_s": round(tottime, 4),
                "share": round(tottime / total, 3) if total else None,
                "cumtime_s": round(cumtime, 4),
            }
        )
    return rows


# --------------------------------------------------------------------------- main


def count_errors(counter: list[int]) -> Callable[[dict[str, Any]], None]:
    def observe(event: dict[str, Any]) -> None:
        level = event.get("log_level")
        if level in (LogLevel.error, LogLevel.critical) or "log_failure" in event:
            counter[0] += 1

    return observe


async def run(reactor: Any, args: argparse.Namespace) -> dict[str, Any]:
    fsyncs = {"on": [True], "off": [False], "both": [True, False]}[args.fsync]
    load = [round(x, 2) for x in os.getloadavg()]  # other work on the machine skews the figures
    deadline = time.perf_counter() + args.seconds
    runs: list[dict[str, Any]] = []
    errors = [0]
    observers: list[Any] = [
        count_errors(errors),
        FilteringLogObserver(
            textFileLogObserver(sys.stderr),
            [LogLevelFilterPredicate(defaultLogLevel=LogLevel.warn)],
        ),
    ]
    globalLogBeginner.beginLoggingTo(observers, redirectStandardIO=False)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-table-") as where:
        base = Path(where)
        fs = filesystem_of(base)
        for number, fsync in enumerate(fsyncs):
            left = deadline - time.perf_counter()
            if left <= 1:
                runs.append({"fsync": fsync, "skipped": "no time left under --seconds"})
                continue
            cfg = PassConfig(
                tables=args.tables,
                hands=args.hands,
                remote_seats=args.remote_seats,
                variant=args.variant,
                bot=args.bot,
                fsync=fsync,
                deadline=time.perf_counter() + left / (len(fsyncs) - number),  # a fair share
                bot_delay=args.bot_delay,
                ramp=args.ramp,
                seed=args.seed,
                profile=(
                    None
                    if args.profile is None
                    else args.profile.with_name(
                        f"{args.profile.stem}-fsync-{'on' if fsync else 'off'}{args.profile.suffix}"
                    )
                ),
                nodelay=args.nodelay,
            )
            before = errors[0]
            directory = base / ("fsync" if fsync else "nofsync")
            directory.mkdir()
            figures = await run_pass(reactor, cfg, directory)
            figures["logged_errors"] = errors[0] - before
            runs.append(figures)
            act = figures["latency_ms"]["act"]
            print(
                f"fsync {'on' if fsync else 'off'}: {figures['tables_finished']}/{args.tables} "
                f"tables, {figures['actions_per_second']} actions/s, act p50 {act.get('p50')} ms "
                f"p99 {act.get('p99')} ms",
                file=sys.stderr,
            )
    return {
        "benchmark": "table-host",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "twisted": version("twisted"),
        "pyopenssl": version("pyopenssl"),
        "cryptography": version("cryptography"),
        "reactor": type(reactor).__name__,
        "log_filesystem": fs,
        "load_average_at_start": load,
        "address": LOOPBACK,
        "variant": args.variant,
        "bot": args.bot,
        "bot_delay": args.bot_delay,
        "ramp_seconds": args.ramp,
        "tables": args.tables,
        "hands_per_table": args.hands,
        "remote_seats_per_table": args.remote_seats,
        "seconds_cap": args.seconds,
        "tcp_nodelay": args.nodelay,
        "goal": {"tables": GOAL_TABLES, "p99_ms": GOAL_P99_MS},
        "runs": runs,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=100, help="concurrent tables (N)")
    parser.add_argument("--hands", type=int, default=1, help="hands per table (max_hands)")
    parser.add_argument(
        "--remote-seats", type=int, default=1, help="seats per table played over TLS (K)"
    )
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--bot", default="greedy", choices=["greedy", "random"])
    parser.add_argument(
        "--fsync", default="both", choices=["on", "off", "both"], help="the host logs' fsync"
    )
    parser.add_argument(
        "--bot-delay", type=float, default=0.0, help="the host bots' delay per move (seconds)"
    )
    parser.add_argument(
        "--ramp",
        type=float,
        default=0.0,
        help="spread the tables' joins over this many seconds (so that with --bot-delay the "
        "tables do not all move at the same instant)",
    )
    parser.add_argument(
        "--seconds", type=float, default=55.0, help="cap on the whole run (shared by the passes)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seeds the bots (deals stay random)")
    parser.add_argument("--dir", type=Path, help="where the logs go (default: the temp dir)")
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="cProfile the timed window: the top functions go to stderr and into the JSON, the "
        "raw data to FILE (one file per pass: FILE's name gets -fsync-on / -fsync-off)",
    )
    parser.add_argument(
        "--nodelay",
        action="store_true",
        help="set TCP_NODELAY on every connection (patched in here; the library does not)",
    )
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    try:
        players = game_for(args.variant).players
    except UnknownGame as e:
        parser.error(str(e))
    if not 1 <= args.remote_seats < players:
        parser.error(f"--remote-seats must be 1 to {players - 1} for {args.variant}")
    if args.tables < 1 or args.hands < 1:
        parser.error("--tables and --hands must be at least 1")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    async def body(reactor: Any) -> None:
        text = json.dumps(await run(reactor, args), indent=2)
        print(text)
        if args.out:
            args.out.write_text(text + "\n")

    task.react(lambda reactor: defer.ensureDeferred(body(reactor)))  # exits with its status
    return 0


if __name__ == "__main__":
    sys.exit(main())
