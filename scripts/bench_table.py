#!/usr/bin/env python3
"""Benchmark: N concurrent all-bot tables through one host process over TLS loopback.

The host process runs N ``TableService`` hosts (each started with ``app.start_host`` on 127.0.0.1,
port 0, with its own host identity and its own log in a temporary directory); the host plays all
seats but ``--remote-seats`` of each table with its own bots (``--bot-delay``, 0 by default; their
moves run in short slices per reactor iteration, ``net_host.BotTurns``). Each remaining seat is
played by a ``PeerSession`` with a bot (``app.bot_player``, greedy by default) that joins over real
TLS (``app.join_table``) and journals its own copy of the log.

Where the remote seats run:

- ``--seats-process`` (the default): in a second process (this script, ``--seat-worker FILE``,
  started by the host process with the tables' ports and fingerprints in FILE). It says "ready" on
  stdout, connects every seat when the host process answers "go" on its stdin, says "done" when all
  its seats' matches are over, then writes its measurements as JSON to a file and exits; the host
  process merges them. Closing its stdin stops it early; the host process kills it if it has not
  exited a few seconds later. Each process has its own reactor and (on a 2-core machine) roughly
  its own core, so the host's figures are not mixed with the seats' record checking.
- ``--seats-in-process``: on the host's reactor, in the host's process (the old behaviour): the
  seats' checking, replay and journaling take CPU and reactor time from the host.

``--host-bot KIND`` gives the host's bots another kind than the remote seats' (``--bot``):
``heuristic``, or ``search:SECONDS``, whose moves are searched in the host's worker processes
(``canasta_net.bot_pool``; the JSON's ``search_pool`` counts the searches run, and those the
heuristic played because the pool was full, late or failed).

Each table stops after ``--hands`` hands (``TableConfig.max_hands``); the whole run is cut off
after ``--seconds``. Everything talks to 127.0.0.1 only.

Prints JSON (and writes it with --out), one entry per pass (``--fsync on``, ``off`` or ``both``,
the default: on, as the real host, then off):

- ``latency_ms.act``: for each game action a remote seat submits, the time from handing its ``act``
  frame to the transport until the same seat receives the ``record`` frame that carries those
  ``act`` bytes: action -> checked -> journaled (fsync) -> broadcast, round trip over TLS loopback
  (measured by the seat alone). ``commit`` and ``reveal`` (the deal's messages) are timed the same
  way; ``turn`` is the host's prompt, from the host handing it to the transport until the seat
  receives it. p50/p90/p99/max in ms. ``act_legs_ms`` splits the act round trip: ``to_host`` (until
  the host starts handling it), ``at_host`` (the host's handling) and ``to_seat`` (until the record
  is back at the seat). ``to_host`` = ``seat_write`` (until the seat's process writes the act to
  its socket: the library does so as it sends, ``framing.send_queued_now``; what the socket does
  not take waits for the reactor's next pass) + ``host_wait`` (loopback, then the host's reactor
  until it handles the act) and ``to_seat`` = ``host_write`` (until the host's process writes the
  record to the socket, after the log's sync; 0 when that happened within the handling) +
  ``seat_wait`` (loopback, then the seat's reactor). ``turn`` and the legs compare the
  two processes' ``time.perf_counter`` readings: on Linux that is CLOCK_MONOTONIC, one clock for
  the machine (``clock`` in the output).
- ``host_ms``: host-side time per message, from the library's timing hook (``PassTiming``, a
  ``canasta_net.timing.Timing`` given to the hosts and the seats): ``handle_act`` (``host.handle``
  of a remote ``act``: submit, journal and publish), ``submit`` (``table.submit``: checks, engine,
  journal, every seat incl. bots), ``journal_sync`` (``log.sync``: flush and fsync), ``publish``
  (``host.publish``: redact, send, views), ``bot_turn`` (``host.bot-turn``: a host bot's whole
  turn). ``peer_ms.record`` (``seat.record``): a remote seat's checking, replaying and journaling
  of one record. The seats' sends and receipts (``seat.send``, ``seat.receive``) and the host's
  prompts (``host.prompt``) time the round trips above.
- ``reactor_ms``: how long each of the host process's reactor iterations spent in timed calls (the
  host bots' turns) and in I/O (``doIteration``, which includes waiting in epoll when there is
  nothing to do); ``gc_pause_ms``: its garbage collector's pauses. ``seats_process`` has the same
  for the seats' process.
- rates: actions/s (every ``action`` record, host bots included), remote actions/s, records/s,
  over the host process's wall time from the first join to the last table's end (and the seats'
  "done"). ``cpu_by_process``: CPU seconds (user + system) of each process over its own window
  (the seats' process: from "go" to its last seat's end; ``cpu_seconds_whole_process`` adds its
  start-up and shutdown); the top-level ``cpu_seconds`` are the host process's. Goal (the issue):
  100 tables, p99 action->broadcast under 10 ms.

Two ways to load the host: **busy** (the default, ``--bot-delay 0``: every table's host bots move
as fast as the host lets them, so the host runs flat out and the figures show its limit) and
**paced** (``--bot-delay 0.1 --ramp 3``, say: each bot move waits, and the tables start spread
over a few seconds, so the host has a steady load and latency is not queueing behind a
saturated process). ``--passes N`` runs the pass(es) N times in one process; each pass reports the
host's resident memory after it (``host_rss_mib_before_gc``, then ``host_rss_mib_after`` a full
garbage collection; the latter for every pass in ``host_rss_mib_after_each_pass``), so growth
across passes shows. ``host_cpu_ms_per_action``
is the host process's CPU over the window per action.

Each process calls ``app.settle_memory`` (a collection, then ``gc.freeze``) once its tables or
seats are set up, as ``canasta host`` and ``canasta join`` do; the host process unfreezes after
each pass.

``--nodelay`` also sets TCP_NODELAY from here (the library's ``FrameProtocol`` sets it itself
now), ``--ramp`` spreads the tables' joins over some seconds, ``--profile FILE`` runs cProfile over
the timed window (the seats' process writes its own, FILE's name with ``-seats``).
"""

from __future__ import annotations

import argparse
import contextlib
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
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any, BinaryIO

from twisted.internet import defer, protocol, task, tcp
from twisted.internet.error import ProcessExitedAlready
from twisted.internet.stdio import StandardIO
from twisted.logger import (
    FilteringLogObserver,
    LogLevel,
    LogLevelFilterPredicate,
    globalLogBeginner,
    textFileLogObserver,
)
from twisted.protocols.basic import LineReceiver

from canasta_net.bot_pool import bot_pool
from canasta_net.games import UnknownGame, game_for
from canasta_net.identity import Identity
from canasta_net.log import RecordInfo, verify_log
from canasta_net.net.framing import FrameProtocol
from canasta_net.net.host import ServiceEvents, TableConfig
from canasta_net.net.peer import PeerSession
from canasta_net.search import search_budget
from canasta_net.table.host import HostTable
from canasta_net.ui.app import (
    LOG_SYNC_MODES,
    bot_player,
    join_table,
    open_new_log,
    settle_memory,
    start_host,
)

LOOPBACK = "127.0.0.1"
GOAL_TABLES = 100
GOAL_P99_MS = 10.0
TIMED = ("act", "commit", "reveal")  # peer messages whose record comes straight back
SETTLE_SECONDS = 0.2  # after a pass: let closing connections and queued calls run out
SCRIPT = Path(__file__).resolve()
WORKER_MARGIN = 2.0  # the seats' process stops by itself this long after the pass's deadline
WORKER_GRACE = 10.0  # after its stdin is closed, the seats' process is killed if still running
KILL_WAIT = 5.0  # how long to wait for a killed seats' process to be reaped


# --------------------------------------------------------------------------- figures


def percentiles(samples: Sequence[float]) -> dict[str, Any]:
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
    """Everything one process measures in a pass (filled in by ``PassTiming`` and the reactor
    wrappers)."""

    # the remote seats' side
    latency: defaultdict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    pending: dict[PeerSession, tuple[str, bytes, float]] = field(default_factory=dict)
    acts: list[tuple[bytes, float, float]] = field(default_factory=list)  # act, sent, back
    seat_unwritten: dict[Any, bytes] = field(default_factory=dict)  # socket -> act to go out
    seat_written: dict[bytes, float] = field(default_factory=dict)  # act -> on the socket
    turns: list[tuple[bytes, int, float]] = field(default_factory=list)  # table, seat, received
    sent: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    refused: int = 0
    peer_record: list[float] = field(default_factory=list)
    # the host's side
    prompts: list[tuple[bytes, int, float]] = field(default_factory=list)  # table, seat, sent
    at_host: dict[bytes, tuple[float, float]] = field(default_factory=dict)
    host_unwritten: dict[Any, bytes] = field(default_factory=dict)  # socket -> act's record
    host_written: dict[bytes, float] = field(default_factory=dict)  # act -> its record written
    handle: defaultdict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    submit: list[float] = field(default_factory=list)
    sync: list[float] = field(default_factory=list)
    publish: list[float] = field(default_factory=list)
    bot_turn: list[float] = field(default_factory=list)
    records: int = 0
    actions: int = 0
    # the process's reactor and garbage collector
    gc: defaultdict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    timed_calls: list[float] = field(default_factory=list)
    io: list[float] = field(default_factory=list)
    recording: bool = False  # the reactor's figures: only between the first join and the end


def act_legs(
    acts: Sequence[tuple[bytes, float, float | None, float]],
    at_host: Mapping[bytes, tuple[float, float]],
    host_written: Mapping[bytes, float],
) -> dict[str, list[float]]:
    """Split each act round trip (act, handed to the seat's transport, written to the seat's
    socket, record back at the seat) at the host's start and end of handling those act bytes
    and at the host's writing of the record to the socket."""
    legs: dict[str, list[float]] = {
        name: []
        for name in ("to_host", "at_host", "to_seat", "seat_write", "host_wait", "host_write")
    }
    legs["seat_wait"] = []
    for act, sent, written, back in acts:
        host = at_host.get(act)
        if host is None:
            continue
        legs["to_host"].append(host[0] - sent)
        legs["at_host"].append(host[1] - host[0])
        legs["to_seat"].append(back - host[1])
        if written is not None:
            legs["seat_write"].append(written - sent)
            legs["host_wait"].append(host[0] - written)
        out = host_written.get(act)
        if out is not None:  # written within the handling: host_write is 0, at_host has it
            legs["host_write"].append(max(out - host[1], 0.0))
            legs["seat_wait"].append(back - out)
    return legs


def turn_latency(
    prompts: Sequence[tuple[bytes, int, float]], received: Sequence[tuple[bytes, int, float]]
) -> list[float]:
    """Each prompt a seat receives, timed from the latest prompt the host sent that seat before
    it (one prompt answers one receipt)."""
    events = sorted(
        [(at, 0, table, seat) for table, seat, at in prompts]
        + [(at, 1, table, seat) for table, seat, at in received]
    )
    latest: dict[tuple[bytes, int], float] = {}
    samples = []
    for at, kind, table, seat in events:
        if kind == 0:
            latest[(table, seat)] = at
        else:
            prompted = latest.pop((table, seat), None)
            if prompted is not None:
                samples.append(at - prompted)
    return samples


def rss_mib() -> float | None:
    """This process's resident memory now (Linux), in MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def cpu_figures(start: Any, end: Any, seconds: float) -> dict[str, Any]:
    """CPU seconds between two ``getrusage`` readings, and their share of ``seconds``."""
    user = end.ru_utime - start.ru_utime
    system = end.ru_stime - start.ru_stime
    return {
        "window_seconds": round(seconds, 3),
        "cpu_seconds": round(user + system, 3),
        "cpu_user_seconds": round(user, 3),
        "cpu_system_seconds": round(system, 3),
        "cpu_share": round((user + system) / seconds, 3) if seconds > 0 else None,
    }


def loop_figures(stats: PassStats) -> dict[str, Any]:
    """The process's reactor iterations and garbage collector pauses."""
    return {
        "reactor_ms": {
            "timed_calls": percentiles(stats.timed_calls),
            "io": percentiles(stats.io),
        },
        "gc_pause_ms": {f"gen{g}": percentiles(stats.gc[g]) for g in sorted(stats.gc)},
    }


# --------------------------------------------------------------------------- instrumentation


class Patches:
    """Wrap attributes of Twisted's classes, the reactor (or ``FrameProtocol`` for --nodelay) for
    one pass, then put them back."""

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


class _Timed:
    """A span whose start and end go to ``done`` (one per step: spans may nest)."""

    __slots__ = ("_clock", "_done", "_start")

    def __init__(self, clock: Callable[[], float], done: Callable[[float, float], None]) -> None:
        self._clock = clock
        self._done = done
        self._start = 0.0

    def __enter__(self) -> _Timed:
        self._start = self._clock()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done(self._start, self._clock())


class _SeatSend:
    """``seat.send``: a timed message's send time and an act's socket are noted before it goes to
    the transport, so that ``write_some_data`` can tell when it is written."""

    __slots__ = ("_act", "_clock", "_kind", "_session", "_stats", "_transport")

    def __init__(
        self, stats: PassStats, clock: Callable[[], float], details: Mapping[str, Any]
    ) -> None:
        self._stats = stats
        self._clock = clock
        message = details["message"]
        self._kind = message.get("t")
        self._act = message.get("act")
        self._session = details["session"]
        self._transport = details["transport"]

    def __enter__(self) -> _SeatSend:
        if self._kind in TIMED:
            self._stats.sent[self._kind] += 1
            self._stats.pending[self._session] = (self._kind, self._act, self._clock())
        if self._kind == "act":
            # noted before the send: the library hands a frame to the socket as it sends it
            sock = socket_of(self._transport)
            if sock is not None:
                self._stats.seat_unwritten[sock] = self._act
        return self

    def __exit__(self, *exc: object) -> None:
        pass


_host_timings: list[PassTiming] = []


def _host_timing(stats: PassStats) -> PassTiming:
    """The host's timing, ONE object for every pass of this process, routed to this pass's
    ``stats``. The host's log group is made once per reactor and timing (``group_durability``)
    and keeps both for the process's life: a new timing per pass would start a new group (and
    its writer thread) each pass and keep every earlier pass's samples alive, which showed as
    host memory growing by about 4 MiB a pass."""
    if not _host_timings:
        _host_timings.append(PassTiming(stats))
    timing = _host_timings[0]
    timing.stats = stats
    return timing


class PassTiming:
    """This script's ``canasta_net.timing.Timing``: the library's named steps, routed to the
    pass's figures. Passed to the remote seats (``PeerSession(timing=...)``) and to the hosts
    (``start_host(timing=...)``); in one process, one object serves both."""

    def __init__(self, stats: PassStats) -> None:
        self.stats = stats
        self.clock = time.perf_counter

    def span(self, name: str, **details: Any) -> contextlib.AbstractContextManager[object]:
        stats, clock = self.stats, self.clock
        # the remote seat: the moment its message is handed to the transport ...
        if name == "seat.send":
            return _SeatSend(stats, clock, details)
        # the remote seat's own work on each record: checks, replay, its journal
        if name == "seat.record":
            return _Timed(clock, lambda start, end: stats.peer_record.append(end - start))
        # the host's work per message
        if name == "host.handle":
            kind = details["t"]
            if kind not in TIMED:
                return _UNTIMED
            act, conn = details["act"], details["conn"]
            # noted before the handling: its record may reach the socket within it (a sync on
            # the reactor's thread, then the record sent at once)
            sock = socket_of(conn.transport)
            if sock is not None:
                stats.host_unwritten[sock] = act

            def handled(start: float, end: float) -> None:
                stats.handle[kind].append(end - start)
                stats.at_host[act] = (start, end)

            return _Timed(clock, handled)
        samples = {
            "table.submit": stats.submit,
            "log.sync": stats.sync,
            "host.publish": stats.publish,
            "host.bot-turn": stats.bot_turn,
        }.get(name)
        if samples is None:
            return _UNTIMED
        return _Timed(clock, lambda start, end: samples.append(end - start))

    def mark(self, name: str, **details: Any) -> None:
        stats = self.stats
        if name == "seat.receive":
            self._received(details["message"], details["session"])
        elif name == "host.prompt":
            # handed to the transport (-> received by the seat, on its side)
            stats.prompts.append((details["table"], details["seat"], self.clock()))

    def _received(self, message: Mapping[str, Any], session: PeerSession) -> None:
        """... until the same seat receives the record that carries those exact act bytes."""
        now = self.clock()
        stats = self.stats
        t = message.get("t")
        if t == "record":
            pending = stats.pending.get(session)
            if pending is not None and pending[1] in message["data"]:
                del stats.pending[session]
                kind, act, sent = pending
                stats.latency[kind].append(now - sent)
                if kind == "act":
                    stats.acts.append((act, sent, now))
        elif t == "turn":
            if session.signer is not None and session.seat is not None:
                stats.turns.append((session.signer.table_id, session.seat, now))
        elif t == "error" and stats.pending.pop(session, None) is not None:
            stats.refused += 1


_UNTIMED: contextlib.AbstractContextManager[object] = contextlib.nullcontext()


def instrument_loop(stats: PassStats, reactor: Any, patches: Patches) -> None:
    """The process's reactor (time in timed calls and in I/O, per iteration) and its GC pauses."""
    clock = time.perf_counter
    run_until_current = reactor.runUntilCurrent
    do_iteration = reactor.doIteration

    def timed_calls() -> None:
        recording, start = stats.recording, clock()
        run_until_current()
        if recording and stats.recording:
            stats.timed_calls.append(clock() - start)

    def io_step(delay: float | None) -> None:
        # only iterations wholly inside the window (not the wait for the other process's word)
        recording, start = stats.recording, clock()
        do_iteration(delay)
        if recording and stats.recording:
            stats.io.append(clock() - start)

    patches.set(reactor, "runUntilCurrent", timed_calls)
    patches.set(reactor, "doIteration", io_step)

    # Twisted queues what a protocol writes and sends it when epoll next reports the socket
    # writable, i.e. in a later reactor iteration: note when an act (at a seat) or its record (at
    # the host) actually reaches the socket
    write_some = tcp.Connection.writeSomeData

    def write_some_data(self: Any, data: bytes) -> Any:
        written = write_some(self, data)
        if stats.seat_unwritten:
            act = stats.seat_unwritten.pop(self, None)
            if act is not None:
                stats.seat_written[act] = clock()
        if stats.host_unwritten:
            act = stats.host_unwritten.pop(self, None)
            if act is not None:
                stats.host_written[act] = clock()
        return written

    patches.set(tcp.Connection, "writeSomeData", write_some_data)

    gc_started = [0.0]

    def gc_pause(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            gc_started[0] = clock()
        elif stats.recording:
            stats.gc[int(info["generation"])].append(clock() - gc_started[0])

    patches.callback(gc.callbacks, gc_pause)


def socket_of(transport: Any) -> Any:
    """The TCP connection under a (TLS) transport, or None."""
    while transport is not None and not isinstance(transport, tcp.Connection):
        transport = getattr(transport, "transport", None)
    return transport


def no_nagle(patches: Patches) -> None:
    """TCP_NODELAY on this process's end of every table connection (set from here as well)."""
    make_connection: Callable[[Any, Any], None] = FrameProtocol.makeConnection

    def make(self: FrameProtocol, transport: Any) -> None:
        make_connection(self, transport)
        transport.setTcpNoDelay(True)

    patches.set(FrameProtocol, "makeConnection", make)


# --------------------------------------------------------------------------- remote seats


@dataclass
class Peer:
    session: PeerSession
    log_file: BinaryIO
    table: int
    seat: int
    port: int
    fingerprint: str
    service: Any = None
    joining: Any = None  # the delayed join, while --ramp holds it back
    done: bool = False
    finished: bool = False  # its player was told the match is over


def make_peer(
    table: int,
    seat: int,
    port: int,
    fingerprint: str,
    bot: str,
    rng: random.Random,
    where: Path,
    one_done: Callable[[], None],
    timing: PassTiming,
) -> Peer:
    """One remote seat: a bot behind a PeerSession, with its own log (not connected yet)."""
    box: list[PeerSession] = []
    player: Any = bot_player(box, bot, rng.getrandbits(64))
    original_finished = player.finished
    log_file = open_new_log(where / f"table-{table:03d}" / f"seat-{seat}.cnlog")
    session = PeerSession(
        Identity.generate(), player, name=f"peer-{seat}", bot=True, log_file=log_file, timing=timing
    )
    box.append(session)
    peer = Peer(session, log_file, table, seat, port, fingerprint)

    def finished(reason: str) -> None:  # the match is over for this seat
        original_finished(reason)
        peer.finished = True
        if not peer.done:
            peer.done = True
            if peer.service is not None:
                peer.service.stopService()
            one_done()

    player.finished = finished
    return peer


def start_peer(reactor: Any, peer: Peer, delay: float) -> None:
    """Join the seat's table over TLS on 127.0.0.1 after ``delay`` seconds."""

    def connect() -> None:
        peer.joining = None
        if peer.done:
            return
        peer.service = join_table(
            reactor,
            LOOPBACK,
            peer.port,
            peer.session,
            peer.session.identity,
            fingerprint=peer.fingerprint,
        )

    if delay > 0:
        peer.joining = reactor.callLater(delay, connect)
    else:
        connect()


async def stop_seats(peers: Sequence[Peer]) -> None:
    """Stop every seat's connection (and its reconnecting) and any join still held back."""
    stopping = [p.service.stopService() for p in peers if p.service is not None]
    for p in peers:
        p.done = True
        if p.joining is not None and p.joining.active():
            p.joining.cancel()
    await defer.DeferredList([d for d in stopping if isinstance(d, defer.Deferred)])


def close_seat_logs(peers: Sequence[Peer]) -> None:
    for p in peers:
        p.log_file.close()


def seat_figures(stats: PassStats, peers: Sequence[Peer]) -> dict[str, Any]:
    """What the seats measured, as JSON (raw samples: the host's side is joined to them later)."""
    return {
        "seats": len(peers),
        "seats_finished": sum(1 for p in peers if p.finished),
        "latency_s": {kind: stats.latency[kind] for kind in TIMED},
        "acts": [
            [act.hex(), sent, stats.seat_written.get(act), back] for act, sent, back in stats.acts
        ],
        "turns": [[table.hex(), seat, at] for table, seat, at in stats.turns],
        "record_s": stats.peer_record,
        "sent": dict(stats.sent),
        "unanswered": len(stats.pending),
        "refused": stats.refused,
        "problems": sum(1 for p in peers if p.session.problem),
    }


def no_seat_figures(count: int) -> dict[str, Any]:
    """In place of the seats' process's figures when it wrote none."""
    figures = seat_figures(PassStats(), [])
    figures["seats"] = count
    return figures


# --------------------------------------------------------------------------- the seats' process


class WorkerControl(LineReceiver):
    """The seats' process's end of its stdin/stdout: "go" comes in; "ready"/"done" go out."""

    delimiter = b"\n"

    def __init__(self) -> None:
        self.go: defer.Deferred[None] = defer.Deferred()
        self.closed: defer.Deferred[None] = defer.Deferred()

    def lineReceived(self, line: bytes) -> None:  # Twisted's name
        if line.strip() == b"go":
            _fire(self.go)

    def connectionLost(self, reason: Any = None) -> None:  # Twisted's name
        _fire(self.closed)  # the host process closed our stdin (or is gone): stop

    def say(self, word: bytes) -> None:
        if self.transport is not None and not self.closed.called:
            self.transport.write(word + self.delimiter)


async def seat_worker(reactor: Any, spec_path: Path) -> None:
    """Run the remote seats listed in ``spec_path`` (written by the host process), time them the
    same way as in one process, write the figures to the file the spec names."""
    spec = json.loads(spec_path.read_text())
    deadline = time.perf_counter() + float(spec["seconds"])
    errors = [0]
    begin_logging(errors)
    stats = PassStats()
    timing = PassTiming(stats)
    patches = Patches()
    instrument_loop(stats, reactor, patches)
    if spec["nodelay"]:
        no_nagle(patches)
    control = WorkerControl()
    StandardIO(control, reactor=reactor)  # type: ignore[no-untyped-call]
    where = Path(spec["where"])
    rng = random.Random(spec["seed"])
    all_done: defer.Deferred[None] = defer.Deferred()
    tables = spec["tables"]
    remaining = [len(tables) * spec["remote_seats"]]

    def one_done() -> None:
        remaining[0] -= 1
        if remaining[0] == 0:
            _fire(all_done)

    peers = [
        make_peer(
            t["index"], seat, t["port"], t["fingerprint"], spec["bot"], rng, where, one_done, timing
        )
        for t in tables
        for seat in range(spec["remote_seats"])
    ]
    profile = None if spec["profile"] is None else Path(spec["profile"])
    profiler = cProfile.Profile() if profile is not None else None
    started = False
    settle_memory()  # as `canasta join` does once its seat is set up
    try:
        control.say(b"ready")
        await wait_any(reactor, [control.go, control.closed], deadline)
        started = control.go.called and not control.closed.called
        clock_start = time.perf_counter()
        cpu_start = resource.getrusage(resource.RUSAGE_SELF)
        if started:
            stats.recording = True
            if profiler is not None:
                profiler.enable()
            for peer in peers:
                start_peer(reactor, peer, spec["ramp"] * peer.table / len(tables))
            await wait_any(reactor, [all_done, control.closed], deadline)
        clock_end = time.perf_counter()
        stats.recording = False
        if profiler is not None:
            profiler.disable()
        cpu_end = resource.getrusage(resource.RUSAGE_SELF)
        control.say(b"done")
        await stop_seats(peers)
        await task.deferLater(reactor, SETTLE_SECONDS, lambda: None)
        close_seat_logs(peers)
    finally:
        patches.restore()
    figures = seat_figures(stats, peers)
    figures["process"] = {
        "pid": os.getpid(),
        "started": started,
        "cut_off": started and not all_done.called,
        **cpu_figures(cpu_start, cpu_end, clock_end - clock_start),
        **loop_figures(stats),
        "logged_errors": errors[0],
    }
    if profiler is not None and profile is not None:
        profiler.dump_stats(profile)
        figures["process"]["profile_top"] = profile_top(profiler, 25)
    results = Path(spec["results"])
    partial = results.with_name(results.name + ".part")
    partial.write_text(json.dumps(figures))
    os.replace(partial, results)
    if control.transport is not None:
        control.transport.loseConnection()


class SeatsProcess(protocol.ProcessProtocol):
    """The host process's handle on the seats' process."""

    def __init__(self) -> None:
        self.ready: defer.Deferred[None] = defer.Deferred()
        self.done: defer.Deferred[None] = defer.Deferred()
        self.ended: defer.Deferred[None] = defer.Deferred()
        self.exit_code: int | None = None
        self.signal: int | None = None
        self.killed = False
        self.pid: int | None = None
        self._buffer = b""

    def outReceived(self, data: bytes) -> None:  # Twisted's name
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            word = line.strip()
            if word == b"ready":
                _fire(self.ready)
            elif word == b"done":
                _fire(self.done)
            elif word:
                print(f"seats' process said: {line!r}", file=sys.stderr)

    def processEnded(self, reason: Any) -> None:  # Twisted's name
        self.exit_code = getattr(reason.value, "exitCode", None)
        self.signal = getattr(reason.value, "signal", None)
        for d in (self.ready, self.done, self.ended):
            _fire(d)

    @property
    def running(self) -> bool:
        return not self.ended.called

    def tell(self, word: bytes) -> None:
        if self.running and self.transport is not None:
            self.transport.write(word + b"\n")

    def close_stdin(self) -> None:
        if self.running and self.transport is not None:
            self.transport.closeStdin()

    def kill(self) -> None:
        if self.running and self.transport is not None:
            self.killed = True
            with contextlib.suppress(ProcessExitedAlready):
                self.transport.signalProcess("KILL")


async def wait_any(reactor: Any, deferreds: Sequence[defer.Deferred[Any]], deadline: float) -> None:
    """Wait until one of ``deferreds`` has fired or ``time.perf_counter()`` passes ``deadline``
    (the deferreds' own results are left alone)."""
    if any(d.called for d in deferreds):
        return
    waiter: defer.Deferred[None] = defer.Deferred()

    def fired(result: Any) -> Any:
        _fire(waiter)
        return result

    for d in deferreds:
        d.addBoth(fired)
    timer = reactor.callLater(max(0.0, deadline - time.perf_counter()), _fire, waiter)
    await waiter
    if timer.active():
        timer.cancel()


# --------------------------------------------------------------------------- tables


@dataclass
class Table:
    index: int
    hosted: Any = None  # app.HostedTable, once listening
    started_at: float | None = None
    finished_at: float | None = None


@dataclass
class PassConfig:
    tables: int
    hands: int
    remote_seats: int
    variant: str
    bot: str
    host_bot: str  # the host's bots (``search:S`` searches in the host's worker pool)
    fsync: bool
    log_sync: str  # how the host's logs reach the disk (``app.LOG_SYNC_MODES``)
    deadline: float  # time.perf_counter() value at which the pass is cut off
    bot_delay: float
    ramp: float
    seed: int
    profile: Path | None  # where the raw cProfile data goes (None: no profiling)
    nodelay: bool
    seats_process: bool  # the remote seats in their own process (else on the host's reactor)
    search_workers: int | None = None  # the host's search worker processes (None: the pool's)


def halt_hosts(tables: Sequence[Table]) -> None:
    """Stop every table's play (finished or cut off by --seconds)."""
    for t in tables:
        if t.hosted is None:
            continue
        service = t.hosted.service
        service.finished = True
        service.config.max_hands = 0  # a table cut off mid-hand stops at its next deal
        setattr(service, "_pump", _nothing)  # noqa: B010 - and its bots stop now


async def close_hosts(reactor: Any, tables: Sequence[Table]) -> None:
    """Stop listening, drop the tables' connections, close their logs."""
    services = [t.hosted.service for t in tables if t.hosted is not None]
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
    for service in services:
        close_log = getattr(service, "close_log", None)  # the log's writer thread drains first
        if close_log is not None:
            close_log()
    for t in tables:
        if t.hosted is not None:
            t.hosted.log_file.close()


async def run_pass(reactor: Any, cfg: PassConfig, where: Path) -> dict[str, Any]:
    """Start the tables and the seats, let them play, stop everything; return the figures."""
    stats = PassStats()
    rules = game_for(cfg.variant).rules
    tables = [Table(i) for i in range(cfg.tables)]
    all_done: defer.Deferred[None] = defer.Deferred()
    # what must end before the window closes: every table, and every seat (in-process) or the
    # seats' process's "done"
    remaining = [cfg.tables + (1 if cfg.seats_process else cfg.tables * cfg.remote_seats)]

    def one_done() -> None:
        remaining[0] -= 1
        if remaining[0] == 0:
            _fire(all_done)

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

    if cfg.search_workers is not None and search_budget(cfg.host_bot) is not None:
        # before its first search: the workers start with it (and its limit follows)
        bot_pool(reactor).workers = cfg.search_workers
    timing = _host_timing(stats)  # the hosts' steps, and the seats' when they run here
    patches = Patches()
    instrument_loop(stats, reactor, patches)
    if cfg.nodelay:
        no_nagle(patches)
    profiler = cProfile.Profile() if cfg.profile is not None else None
    seats: SeatsProcess | None = None
    peers: list[Peer] = []
    seats_figures: dict[str, Any] | None = None
    children_start = resource.getrusage(resource.RUSAGE_CHILDREN)
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
                bot_kind=cfg.host_bot,
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
                timing=timing,
                log_sync=cfg.log_sync,
            )
            host, _ = table.hosted.address
            assert host == LOOPBACK
        if cfg.seats_process:
            seats = spawn_seats(reactor, cfg, tables, where)
            await wait_any(reactor, [seats.ready], cfg.deadline)
        else:
            rng = random.Random(cfg.seed)
            for table in tables:
                _, port = table.hosted.address
                fingerprint = table.hosted.service.identity.fingerprint
                for seat in range(cfg.remote_seats):
                    peers.append(
                        make_peer(
                            table.index,
                            seat,
                            port,
                            fingerprint,
                            cfg.bot,
                            rng,
                            where,
                            one_done,
                            timing,
                        )
                    )
        settle_memory()  # as `canasta host` does once its table is up (unfrozen after the pass)
        clock_start = time.perf_counter()
        stats.recording = True
        cpu_start = resource.getrusage(resource.RUSAGE_SELF)
        if profiler is not None:
            profiler.enable()
        if seats is not None:
            if seats.ready.called and seats.running:
                seats.tell(b"go")
                seats.done.addCallback(lambda _: one_done())
                seats.ended.addCallback(lambda _: _fire(all_done))  # it died: nothing more to do
            else:
                _fire(all_done)  # it never got ready (or died): no pass
        for peer in peers:
            start_peer(reactor, peer, cfg.ramp * peer.table / cfg.tables)
        await wait_any(reactor, [all_done], cfg.deadline)
        clock_end = time.perf_counter()
        stats.recording = False
        if profiler is not None:
            profiler.disable()
        cpu_end = resource.getrusage(resource.RUSAGE_SELF)
        halt_hosts(tables)
        if seats is not None:
            seats.close_stdin()  # "stop now", if it has not stopped by itself
            await wait_any(reactor, [seats.ended], time.perf_counter() + WORKER_GRACE)
            if seats.running:
                seats.kill()
                await wait_any(reactor, [seats.ended], time.perf_counter() + KILL_WAIT)
        else:
            await stop_seats(peers)
        await close_hosts(reactor, tables)
        gc.unfreeze()  # the pass's tables are gone: what they kept is the collector's again
        close_seat_logs(peers)
    finally:
        patches.restore()
        if seats is not None and seats.running:
            seats.kill()
    children_end = resource.getrusage(resource.RUSAGE_CHILDREN)

    if seats is None:
        seats_figures = seat_figures(stats, peers)
    else:
        results = where / "seats-result.json"
        try:
            seats_figures = json.loads(results.read_text())
        except (OSError, ValueError) as e:
            print(f"no figures from the seats' process: {e}", file=sys.stderr)
            seats_figures = no_seat_figures(cfg.tables * cfg.remote_seats)

    finished = [t for t in tables if t.finished_at is not None]
    started = [t.started_at for t in tables if t.started_at is not None]
    seconds = clock_end - clock_start
    host_cpu = cpu_figures(cpu_start, cpu_end, seconds)
    acts = [(bytes.fromhex(a), *times) for a, *times in seats_figures["acts"]]
    turns = [(bytes.fromhex(t), seat, at) for t, seat, at in seats_figures["turns"]]
    latency = {kind: seats_figures["latency_s"].get(kind, []) for kind in TIMED}
    remote_actions = len(latency["act"])
    p99 = percentiles(latency["act"]).get("p99")
    hands = sum(
        t.hosted.service.table.match.hands_played
        for t in tables
        if t.hosted is not None and t.hosted.service.table is not None
    )
    verified = sum(1 for t in finished if _verifies(where / f"table-{t.index:03d}" / "host.cnlog"))
    pool = bot_pool(reactor) if search_budget(cfg.host_bot) is not None else None
    seats_finished = seats_figures["seats_finished"] == cfg.tables * cfg.remote_seats
    cpu_by_process: dict[str, Any]
    if seats is None:
        cpu_by_process = {"host_and_seats": {"pid": os.getpid(), **host_cpu}}
    else:
        whole = cpu_figures(children_start, children_end, 0.0)["cpu_seconds"]
        own = seats_figures.get("process", {})
        cpu_by_process = {
            "host": {"pid": os.getpid(), **host_cpu},
            "seats": {
                "pid": seats.pid,
                **{k: own.get(k) for k in host_cpu},
                "cpu_seconds_whole_process": whole,
                "exit_code": seats.exit_code,
                "signal": seats.signal,
                "killed": seats.killed,
            },
        }
    result: dict[str, Any] = {
        "fsync": cfg.fsync,
        "log_sync": cfg.log_sync,
        "seats_run": "process" if cfg.seats_process else "in-process",
        "tables": cfg.tables,
        "remote_seats_per_table": cfg.remote_seats,
        "host_bots_per_table": rules.players - cfg.remote_seats,
        "hands_per_table": cfg.hands,
        "completed": len(finished) == cfg.tables and remaining[0] == 0 and seats_finished,
        "tables_finished": len(finished),
        "seats_finished": seats_figures["seats_finished"],
        "hands_played": hands,
        "seconds": round(seconds, 3),
        "seconds_until_all_started": (
            round(max(started) - clock_start, 3) if len(started) == cfg.tables else None
        ),
        "cpu_seconds": host_cpu["cpu_seconds"],
        "cpu_user_seconds": host_cpu["cpu_user_seconds"],
        "cpu_system_seconds": host_cpu["cpu_system_seconds"],
        "cpu_share": host_cpu["cpu_share"],
        "cpu_by_process": cpu_by_process,
        "host_cpu_ms_per_action": (
            round(host_cpu["cpu_seconds"] / stats.actions * 1000, 3) if stats.actions else None
        ),
        "records": stats.records,
        "records_per_second": round(stats.records / seconds, 1) if seconds > 0 else None,
        "actions": stats.actions,
        "actions_per_second": round(stats.actions / seconds, 1) if seconds > 0 else None,
        "remote_actions": remote_actions,
        "remote_actions_per_second": round(remote_actions / seconds, 1) if seconds > 0 else None,
        "latency_ms": {
            **{kind: percentiles(latency[kind]) for kind in TIMED},
            "turn": percentiles(turn_latency(stats.prompts, turns)),
        },
        "act_legs_ms": {
            leg: percentiles(samples)
            for leg, samples in act_legs(acts, stats.at_host, stats.host_written).items()
        },
        "host_ms": {
            "handle_act": percentiles(stats.handle["act"]),
            "submit": percentiles(stats.submit),
            "journal_sync": percentiles(stats.sync),
            "publish": percentiles(stats.publish),
            "bot_turn": percentiles(stats.bot_turn),
        },
        "peer_ms": {"record": percentiles(seats_figures["record_s"])},
        **loop_figures(stats),
        "remote_messages_sent": seats_figures["sent"],
        "unanswered_messages": seats_figures["unanswered"],
        "refused_messages": seats_figures["refused"],
        "peer_problems": seats_figures["problems"],
        "host_logs_verified": verified,
        # the host's searches so far (cumulative over passes): searched in a worker, or played by
        # the heuristic because the queue was full, the deadline passed or a worker failed
        "search_pool": {"workers": pool.workers, **pool.counts} if pool is not None else None,
        "profiled": cfg.profile is not None,
        "tcp_nodelay": cfg.nodelay,
        "meets_goal": bool(
            cfg.tables >= GOAL_TABLES
            and len(finished) == cfg.tables
            and p99 is not None
            and p99 < GOAL_P99_MS
        ),
    }
    if seats is not None:
        own = seats_figures.get("process", {})
        result["seats_process"] = {
            "figures": bool(own),
            "started": own.get("started"),
            "cut_off": own.get("cut_off"),
            "reactor_ms": own.get("reactor_ms"),
            "gc_pause_ms": own.get("gc_pause_ms"),
            "logged_errors": own.get("logged_errors"),
        }
        if "profile_top" in own:
            result["seats_process"]["profile_top"] = own["profile_top"]
    if profiler is not None and cfg.profile is not None:
        profiler.dump_stats(cfg.profile)
        result["profile_top"] = profile_top(profiler, 25)
    return result


def spawn_seats(
    reactor: Any, cfg: PassConfig, tables: Sequence[Table], where: Path
) -> SeatsProcess:
    """Start the seats' process (this script, --seat-worker) for the listening tables."""
    spec = {
        "tables": [
            {
                "index": t.index,
                "port": t.hosted.address[1],
                "fingerprint": t.hosted.service.identity.fingerprint,
            }
            for t in tables
        ],
        "remote_seats": cfg.remote_seats,
        "bot": cfg.bot,
        "ramp": cfg.ramp,
        "seed": cfg.seed,
        "nodelay": cfg.nodelay,
        "where": str(where),
        "results": str(where / "seats-result.json"),
        "seconds": max(0.0, cfg.deadline - time.perf_counter()) + WORKER_MARGIN,
        "profile": (
            None
            if cfg.profile is None
            else str(cfg.profile.with_name(f"{cfg.profile.stem}-seats{cfg.profile.suffix}"))
        ),
    }
    spec_path = where / "seats.json"
    spec_path.write_text(json.dumps(spec, indent=1))
    seats = SeatsProcess()
    argv = [sys.executable, str(SCRIPT), "--seat-worker", str(spec_path)]
    process = reactor.spawnProcess(
        seats, sys.executable, argv, env=dict(os.environ), childFDs={0: "w", 1: "r", 2: 2}
    )
    seats.pid = process.pid
    return seats


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


def begin_logging(errors: list[int]) -> None:
    """Warnings and worse to stderr; errors counted in ``errors[0]``."""
    observers: list[Any] = [
        count_errors(errors),
        FilteringLogObserver(
            textFileLogObserver(sys.stderr),
            [LogLevelFilterPredicate(defaultLogLevel=LogLevel.warn)],
        ),
    ]
    globalLogBeginner.beginLoggingTo(observers, redirectStandardIO=False)


# the --disk-neighbor: writes MB_PER_S into PATH (never synced), starting over at 512 MiB
NEIGHBOR = """
import sys, time
path, rate = sys.argv[1], float(sys.argv[2]) * 1e6
chunk, written, start = b"x" * (1 << 20), 0, time.monotonic()
with open(path, "wb") as file:
    while True:
        file.write(chunk)
        written += len(chunk)
        if file.tell() >= 512 << 20:
            file.seek(0)
            file.truncate()
        ahead = written / rate - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)
"""


@contextlib.contextmanager
def disk_neighbor(path: Path, mb_per_s: float) -> Iterator[None]:
    """While inside: another process writing ``mb_per_s`` MB a second into ``path`` (none if
    0). A file system's sync waits for what others wrote too (``syncfs`` for all of it)."""
    if mb_per_s <= 0:
        yield
        return
    writer = subprocess.Popen([sys.executable, "-c", NEIGHBOR, str(path), str(mb_per_s)])
    try:
        yield
    finally:
        writer.kill()
        writer.wait()
        path.unlink(missing_ok=True)


async def run(reactor: Any, args: argparse.Namespace) -> dict[str, Any]:
    fsyncs = {"on": [True], "off": [False], "both": [True, False]}[args.fsync] * args.passes
    load = [round(x, 2) for x in os.getloadavg()]  # other work on the machine skews the figures
    rss_start = rss_mib()
    deadline = time.perf_counter() + args.seconds
    runs: list[dict[str, Any]] = []
    errors = [0]
    begin_logging(errors)
    with (
        tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-table-") as where,
        disk_neighbor(Path(where) / "neighbor.bin", args.disk_neighbor),
    ):
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
                host_bot=args.host_bot or args.bot,
                search_workers=args.search_workers,
                fsync=fsync,
                log_sync=args.log_sync,
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
                seats_process=args.seats == "process",
            )
            before = errors[0]
            directory = base / f"{number}-{'fsync' if fsync else 'nofsync'}"
            directory.mkdir()
            figures = await run_pass(reactor, cfg, directory)
            figures["host_rss_mib_before_gc"] = rss_mib()
            gc.collect()  # what a pass leaves behind, not what the collector has yet to free
            figures["host_rss_mib_after"] = rss_mib()
            seat_errors = (figures.get("seats_process") or {}).get("logged_errors") or 0
            figures["logged_errors"] = errors[0] - before + seat_errors
            runs.append(figures)
            act = figures["latency_ms"]["act"]
            cpu = ", ".join(
                f"{name} {part['cpu_seconds']} s"
                for name, part in figures["cpu_by_process"].items()
            )
            print(
                f"fsync {'on' if fsync else 'off'}: {figures['tables_finished']}/{args.tables} "
                f"tables, {figures['actions_per_second']} actions/s, act p50 {act.get('p50')} ms "
                f"p99 {act.get('p99')} ms; CPU {cpu}, "
                f"{figures['host_cpu_ms_per_action']} ms/action; "
                f"RSS {figures['host_rss_mib_after']} MiB",
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
        "clock": time.get_clock_info("perf_counter").implementation,
        "log_filesystem": fs,
        "disk_neighbor_mb_per_s": args.disk_neighbor,
        "load_average_at_start": load,
        "host_rss_mib_at_start": rss_start,
        "host_rss_mib_after_each_pass": [r.get("host_rss_mib_after") for r in runs],
        "address": LOOPBACK,
        "seats_run": args.seats,
        "variant": args.variant,
        "bot": args.bot,
        "host_bot": args.host_bot or args.bot,
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
    parser.add_argument(
        "--bot", default="greedy", choices=["greedy", "random"], help="the remote seats' bot"
    )
    parser.add_argument(
        "--host-bot",
        help="the host's bots (default: --bot): random, greedy, heuristic, search:SECONDS (these "
        "search in the host's worker processes, canasta_net.bot_pool)",
    )
    parser.add_argument(
        "--search-workers",
        type=int,
        help="the host's search worker processes for --host-bot search:S (default: the pool's, "
        "one per CPU)",
    )
    parser.add_argument(
        "--fsync", default="both", choices=["on", "off", "both"], help="the host logs' fsync"
    )
    parser.add_argument(
        "--log-sync",
        default="group-wait",
        choices=LOG_SYNC_MODES,
        help="how the host's logs reach the disk: group-wait (canasta host's: one writer thread "
        "with group commit, the reactor waiting for each sync at most 2 ms), group-wait-syncfs "
        "(the same, one syncfs a pass instead of an fsync per log), group (the same, "
        "the reactor syncing itself while syncs are fast), group-thread (always "
        "on the thread), threads (a writer thread per log), reactor (each record synced on the "
        "reactor's thread)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--seats-process",
        dest="seats",
        action="store_const",
        const="process",
        default="process",
        help="run the remote seats in a second process (the default)",
    )
    where.add_argument(
        "--seats-in-process",
        dest="seats",
        action="store_const",
        const="in-process",
        help="run the remote seats on the host's reactor, in the host's process",
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
    parser.add_argument(
        "--passes",
        type=int,
        default=1,
        help="run the --fsync pass(es) this many times in one process (host memory across passes)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seeds the bots (deals stay random)")
    parser.add_argument("--dir", type=Path, help="where the logs go (default: the temp dir)")
    parser.add_argument(
        "--disk-neighbor",
        type=float,
        default=0.0,
        metavar="MB_PER_S",
        help="another process writes this many MB a second (never synced) into a file beside "
        "the logs for the whole run, as a download or a build would on a player's machine",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="cProfile the timed window: the top functions go to stderr and into the JSON, the "
        "raw data to FILE (one file per pass: FILE's name gets -fsync-on / -fsync-off; the seats' "
        "process adds -seats)",
    )
    parser.add_argument(
        "--nodelay",
        action="store_true",
        help="also set TCP_NODELAY on every connection from here (the library sets it itself)",
    )
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument(
        "--seat-worker",
        type=Path,
        metavar="SPEC",
        help="internal: be the seats' process for the tables in this JSON file (--seats-process "
        "starts it)",
    )
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.seat_worker is not None:
        spec = args.seat_worker
        task.react(lambda reactor: defer.ensureDeferred(seat_worker(reactor, spec)))
        return 0
    try:
        players = game_for(args.variant).players
    except UnknownGame as e:
        parser.error(str(e))
    if not 1 <= args.remote_seats < players:
        parser.error(f"--remote-seats must be 1 to {players - 1} for {args.variant}")
    if args.host_bot is not None:
        try:
            game_for(args.variant).make_bot(args.host_bot, random.Random(0))
        except ValueError as e:
            parser.error(f"--host-bot: {e}")
    if args.tables < 1 or args.hands < 1 or args.passes < 1:
        parser.error("--tables, --hands and --passes must be at least 1")

    async def body(reactor: Any) -> None:
        text = json.dumps(await run(reactor, args), indent=2)
        print(text)
        if args.out:
            args.out.write_text(text + "\n")

    task.react(lambda reactor: defer.ensureDeferred(body(reactor)))  # exits with its status
    return 0


if __name__ == "__main__":
    sys.exit(main())
