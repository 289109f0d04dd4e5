"""Wiring for the commands: a hosted table on a TLS port, and a seat that joins one."""

from __future__ import annotations

import gc
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from twisted.internet.defer import Deferred, ensureDeferred
from twisted.internet.interfaces import IListeningPort
from twisted.logger import Logger

from ..identity import Identity
from ..log import open_log_for_writing
from ..log.durable import INLINE_SYNC_SECONDS, WAIT_SYNC_SECONDS
from ..net.host import (
    DurabilityFactory,
    HostConnection,
    HostFactory,
    ServiceEvents,
    TableConfig,
    TableService,
    group_durability,
    threaded_durability,
)
from ..net.peer import (
    HostSession,
    PeerSession,
    Player,
    SeatClient,
    connect_with_retry,
    in_a_thread,
)
from ..net.tls import client_context_factory, server_context_factory, verified_peer_key
from ..net.tls_endpoints import TLSClientEndpoint, TLSServerEndpoint
from ..table.host import HostTable
from ..timing import NO_TIMING, Timing
from .players import BotPlayer

log = Logger()


def default_log_path(kind: str, name: str) -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in name)[:40]
    return Path(base) / "canasta-net" / "games" / f"{stamp}-{safe}-{kind}.cnlog"


# How a host's logs reach the disk (``start_host(log_sync=...)``; ``scripts/bench_table.py
# --log-sync`` compares them): "group-wait" (the default: one writer thread with group commit
# for every table, the reactor's thread waiting for each sync at most ``WAIT_SYNC_SECONDS``:
# a slow sync no longer stops every table; each log of a pass synced with its own fsync),
# "group-wait-syncfs" (the same, the logs of a pass synced with one syncfs: slower when another
# program writes to the same file system), "group" (the same thread, the reactor's thread
# syncing itself while syncs are fast), "group-thread" (always on the thread, no wait),
# "threads" (a writer thread per table's log), "reactor" (every record synced on the reactor's
# thread).
LOG_SYNC_MODES = ("group", "group-wait", "group-wait-syncfs", "group-thread", "threads", "reactor")


def log_durability(
    reactor: Any, mode: str, *, fsync: bool, timing: Timing
) -> DurabilityFactory | None:
    if mode == "reactor":
        return None
    if mode == "threads":
        return threaded_durability(reactor, fsync=fsync, timing=timing)
    if mode in ("group-wait", "group-wait-syncfs"):
        return group_durability(
            reactor,
            fsync=fsync,
            timing=timing,
            inline_below=None,
            wait=WAIT_SYNC_SECONDS,
            syncfs=mode == "group-wait-syncfs",
        )
    if mode in ("group", "group-thread"):
        inline = INLINE_SYNC_SECONDS if mode == "group" else None
        return group_durability(reactor, fsync=fsync, timing=timing, inline_below=inline)
    raise ValueError(f"unknown log sync mode {mode!r} (one of {', '.join(LOG_SYNC_MODES)})")


def settle_memory() -> None:
    """Once a process has started its tables or its seat: collect what the start-up left
    behind, then move every object still alive (modules, classes, the tables' set-up) out of the
    garbage collector's reach (``gc.freeze``). Its full collections then look only at what play
    made since: at 100 tables in one host process, a full collection stopped every table for
    75-190 ms (bench_table, loaded machine; 50,000 of its 93,000 objects were the start-up's).
    Frozen objects are still freed when nothing refers to them; only a cycle among them that
    play lets go of is kept, and the start-up makes few of those."""
    gc.collect()
    gc.freeze()


def open_new_log(path: Path) -> BinaryIO:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return open_log_for_writing(path)


# Seconds the host waits for its seats to take their ``bye`` before it stops regardless.
BYE_TIMEOUT = 3.0


@dataclass
class HostedTable:
    service: TableService
    port: IListeningPort
    log_path: Path
    log_file: BinaryIO
    reactor: Any
    _closing: Deferred[None] | None = field(default=None, init=False)

    @property
    def address(self) -> tuple[str, int]:
        addr: Any = self.port.getHost()
        return str(addr.host), int(addr.port)

    def close(self, reason: str) -> Deferred[None]:
        """The host leaves: stop listening, send every seat ``bye`` with ``reason`` and wait
        (at most ``BYE_TIMEOUT`` seconds) until each connection has closed, so that the byes are
        on the wire before the reactor stops. A later call waits for the first one."""
        if self._closing is None:
            self._closing = ensureDeferred(self._close(reason))
            self._closing.addErrback(lambda failure: log.failure("closing the table", failure))
        waiting: Deferred[None] = Deferred()

        def done(result: object) -> object:
            waiting.callback(None)
            return result

        self._closing.addBoth(done)
        return waiting

    async def _close(self, reason: str) -> None:
        stopping = self.port.stopListening()
        self.service.close(reason)
        open_connections = set(self.service.connections)
        if open_connections:
            all_gone: Deferred[None] = Deferred()

            def gone(_: object, conn: HostConnection) -> None:
                open_connections.discard(conn)
                if not open_connections and not all_gone.called:
                    all_gone.callback(None)

            def timed_out() -> None:
                if not all_gone.called:
                    all_gone.callback(None)

            for conn in list(open_connections):
                conn.lost.addCallback(gone, conn)
            timer = self.reactor.callLater(BYE_TIMEOUT, timed_out)
            await all_gone
            if timer.active():
                timer.cancel()
            for conn in open_connections:  # a seat that does not read is not waited for
                transport: Any = conn.transport
                if transport is not None:
                    transport.abortConnection()
        if stopping is not None:
            await stopping


async def start_host(
    reactor: Any,
    config: TableConfig,
    identity: Identity,
    *,
    bind: str,
    port: int,
    log_path: Path,
    resume: bool = False,
    events: ServiceEvents | None = None,
    fsync: bool = True,
    timing: Timing = NO_TIMING,
    log_sync: str = "group-wait",
) -> HostedTable:
    """Open (or resume) the log, then listen with TLS on ``bind:port``. ``timing`` is told of
    the host's steps (``canasta_net.timing``); ``log_sync``: how the log reaches the disk
    (``LOG_SYNC_MODES``)."""
    durability = log_durability(reactor, log_sync, fsync=fsync, timing=timing)
    table: HostTable | None = None
    if resume:
        log_file = open_log_for_writing(log_path, resume=True)
        table = HostTable.resume(
            log_file, identity, fsync=fsync, timing=timing, clock=reactor.seconds
        )
        config.rules = table.rules
    else:
        log_file = open_new_log(log_path)
    service = TableService(
        config,
        identity,
        reactor,
        log_file,
        table=table,
        fsync=fsync,
        events=events,
        timing=timing,
        durability=durability,
        # its own blind-v2 seats work their stage out while it checks their input
        background=in_a_thread,
    )
    endpoint = TLSServerEndpoint(reactor, port, server_context_factory(identity), interface=bind)
    try:
        listening = await endpoint.listen(HostFactory(service, verified_peer_key))
    except BaseException:
        # the port is taken (or not ours): no table was hosted, so no log is left behind, and
        # trying again with the same --log works
        service.close("the host could not listen")
        log_file.close()
        if not resume:
            log_path.unlink(missing_ok=True)
        raise
    return HostedTable(service, listening, log_path, log_file, reactor)


def join_table(
    reactor: Any,
    host: str,
    port: int,
    session: HostSession,
    identity: Identity,
    *,
    fingerprint: str | None,
    decide: Callable[[str], bool] | None = None,
) -> SeatClient:
    """Connect a seat, or a watcher (``net.spectator.SpectatorSession``), to a host, checking
    its fingerprint, and reconnect with backoff until the session ends."""
    creator = client_context_factory(identity, fingerprint, decide=decide)
    endpoint = TLSClientEndpoint(reactor, host, port, creator)
    return connect_with_retry(reactor, endpoint, session)


def bot_player(session_holder: list[PeerSession], kind: str, seed: int | None) -> Player:
    """A bot for a joining seat; it learns the game from the host's welcome."""
    return BotPlayer(
        kind, random.Random(seed), lambda: session_holder[0].game if session_holder else None
    )
