"""The host's network side: seats, connections, stand-in bots, prompts (Twisted, thin).

``TableService`` owns the lobby and, once every seat is taken, the authoritative
:class:`~canasta_net.table.host.HostTable`. Everything the table writes is on disk before this
module sends it. The table's writer builds and signs records at once; their bytes reach the disk
through the writer's durability (``log.durable``: one writer thread with group commit across
the tables for :func:`~canasta_net.ui.app.start_host`, at once by default). Everything the table
would send after a record (the records, the views, a reconnecting seat's resync, the next
prompts) waits in an outbox until the log is on disk up to that record. Each seat gets its own
redacted copy of every record, its own view, and a prompt when the table waits for it.

Seat 0 is always the host's own identity (the host's player, or a bot signing with the host key).
Bots sign with keys derived from the host's key, so a resumed host can sign for them again.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import itertools
import os
import random
import sys
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from cryptography.hazmat.primitives import serialization
from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.interfaces import IDelayedCall, IHandshakeListener
from twisted.internet.protocol import Factory
from twisted.logger import Logger
from zope.interface import implementer

from ..bot_pool import bot_pool
from ..canasta.bots import Bot
from ..canasta.rules import RuleSet
from ..hand import HandContext
from ..identity import Identity
from ..log import LogWriter, RecordInfo, redact_for_seat, redact_public
from ..log import records as R
from ..log.durable import (
    INLINE_SYNC_SECONDS,
    SYNCFS,
    CoalescedCalls,
    GroupCommit,
    GroupDurability,
    ThreadedDurability,
)
from ..search import SearchBot
from ..selfplay import choose_for
from ..table.blind_seat import Background, work_before_hand
from ..table.config import SeatPlan, SlotKind, TableConfig, TablePassword
from ..table.host import HostTable, SeatEntry, TableError, TablePhase
from ..table.lobby import SeatLife, SeatState
from ..table.local import bot_move
from ..table.seat import Decision, SeatAgent, SeatProblem, WrittenRecord
from ..table.signer import keyed_seeds
from ..timing import NO_TIMING, Timing
from . import wire
from .framing import FrameProtocol
from .limits import (
    LOCKED_OUT,
    RATE_LIMITED,
    HandshakeGate,
    HostLimits,
    PasswordGuard,
    TokenBucket,
    UnauthenticatedBudget,
    is_chat,
)
from .password_checks import PasswordChecks

log = Logger()
# Connections accepted, refused and dropped, with why (``canasta host -v`` shows them).
connection_log = Logger(namespace="canasta_net.net.host.connections")

# Refusals after which the host closes the connection (``too-many-watchers``: a watcher's hello
# beyond ``HostLimits.max_watchers``).
CLOSING_CODES = frozenset(
    {"bad-password", "table-full", "version-mismatch", LOCKED_OUT, "too-many-watchers"}
)

MAX_LEFT_REASON = 80  # characters of a leaving seat's own reason passed on to the others


def printable(text: str, limit: int) -> str:
    """``text`` without control characters (it goes to other players' terminals), cut short."""
    return "".join(ch for ch in text if ch.isprintable())[:limit].strip()


def derived_identity(host: Identity, table_id: bytes, seat: int, generation: int) -> Identity:
    """A bot's key, derived from the host's key so that a resumed host can sign for it again."""
    secret = host.private_key.private_bytes(
        serialization.Encoding.Raw,
        serialization.PrivateFormat.Raw,
        serialization.NoEncryption(),
    )
    seed = hmac.new(
        secret, b"canasta-net bot key\x00" + table_id + bytes([seat, generation]), hashlib.sha256
    )
    return Identity.from_seed(seed.digest())


@dataclass
class LocalSeat:
    """A seat played inside the host process: a bot with its own seat agent (its key, its
    secrets and, at a blind-dealt table, its own cards: nothing more)."""

    identity: Identity
    bot: Bot
    agent: SeatAgent | None = None


@dataclass
class Slot:
    """One seat as the host's network side holds it: its lifecycle (``lobby.SeatLife``), the
    connection of its player, the bot the host plays it with, the timer of its hold."""

    seat: int
    plan: SeatPlan
    life: SeatLife
    conn: HostConnection | None = None
    local: LocalSeat | None = None
    hold: IDelayedCall | None = None
    prompted: tuple[Any, ...] = ()
    leaving: str | None = None  # the reason its player's ``bye`` gave, until the connection ends
    thinking: tuple[Any, ...] | None = None  # the turn its searching bot is thinking about

    @property
    def key(self) -> bytes | None:
        """The key of whoever owns the seat (the person, even while a stand-in plays it)."""
        return self.life.owner

    @property
    def name(self) -> str:
        return self.life.name

    @property
    def is_bot(self) -> bool:
        return self.local is not None


GIL_SWITCH_SECONDS = 0.001

# Makes the durability of a table's log from the log file and the number of records already on
# disk (its reports come back through the reactor).
DurabilityFactory = Callable[[BinaryIO, int], ThreadedDurability | GroupDurability]


_reactor_reports: dict[int, tuple[Any, CoalescedCalls]] = {}
_reactor_groups: dict[
    tuple[int, int, float | None, float | None, bool], tuple[Any, GroupCommit]
] = {}


def reactor_reports(reactor: Any) -> CoalescedCalls:
    """The one ``call_from_thread`` of every table's log writers on ``reactor``. The process's
    switch interval is lowered to ``GIL_SWITCH_SECONDS`` here, for every kind of writer thread
    (see ``threaded_durability``)."""
    if sys.getswitchinterval() > GIL_SWITCH_SECONDS:
        sys.setswitchinterval(GIL_SWITCH_SECONDS)
    key = id(reactor)
    if key not in _reactor_reports or _reactor_reports[key][0] is not reactor:
        _reactor_reports[key] = (reactor, CoalescedCalls(reactor.callFromThread))
    return _reactor_reports[key][1]


def group_durability(
    reactor: Any,
    *,
    fsync: bool = True,
    timing: Timing = NO_TIMING,
    inline_below: float | None = INLINE_SYNC_SECONDS,
    wait: float | None = None,
    syncfs: bool = False,
) -> DurabilityFactory:
    """Every table's log on ``reactor`` written on the reactor's thread and synced by ONE
    writer thread with group commit across the tables (``GroupCommit``: a pass syncs every log
    with records waiting, each with its own ``fsync``; with ``syncfs``, the logs on one file
    system with one ``syncfs``), or by the reactor's thread itself while a sync takes less
    than ``inline_below`` seconds; with ``wait``, every sync is the thread's and the reactor's
    thread waits for it at most ``wait`` seconds (``GroupCommit.wait``). What ``canasta host``
    uses. One group per reactor (and ``timing``, ``inline_below``, ``wait`` and ``syncfs``: a
    benchmark's passes each have their own). The process's
    switch interval is lowered as for ``threaded_durability`` (``reactor_reports``: the thread
    takes the interpreter lock after each sync, to report)."""
    key = (id(reactor), id(timing), inline_below, wait, syncfs)
    if key not in _reactor_groups or _reactor_groups[key][0] is not reactor:
        group = GroupCommit(
            reactor_reports(reactor),
            timing=timing,
            inline_below=inline_below,
            wait=wait,
            syncfs=SYNCFS if syncfs else None,
        )
        _reactor_groups[key] = (reactor, group)
    group = _reactor_groups[key][1]

    def make(file: BinaryIO, position: int) -> GroupDurability:
        return GroupDurability(file, group, fsync=fsync, position=position)

    return make


def threaded_durability(
    reactor: Any, *, fsync: bool = True, timing: Timing = NO_TIMING
) -> DurabilityFactory:
    """A writer thread for each table's log, syncing it in groups and reporting through
    ``reactor``; the thread ends when the table closes its log (its match is over, or the host
    left), and a later record starts it again.

    One thread per log, not a few shared by a process's tables: each thread syncs one log after
    another, so four shared by 100 tables (measured, busy ``bench_table``) tripled the act round
    trip's p50. Every table's threads on a reactor wake it through one ``CoalescedCalls``
    (``reactor_reports``): once for whatever they reported meanwhile, not once per sync.

    Each writer thread takes the GIL a few times per sync; while the reactor is busy it waits up
    to the interpreter's switch interval each time (5 ms by default), which would add to every
    record's way out. The host process lowers the interval to ``GIL_SWITCH_SECONDS`` in
    ``reactor_reports`` (two indicative runs of 20 busy tables on a loaded machine: the act round
    trip's p50 went from 97-135 ms to 82-84 ms)."""
    report = reactor_reports(reactor)

    def make(file: BinaryIO, position: int) -> ThreadedDurability:
        # no shared worker: the log's own thread, ended by ``close`` (threads left idle after
        # their tables ended held memory: host RSS grew by 23 MiB from one 100-table pass to
        # the next)
        return ThreadedDurability(
            file, report, fsync=fsync, position=position, timing=timing, name="canasta-log-writer"
        )

    return make


@dataclass
class ServiceEvents:
    """Hooks for the embedding program (the CLI prints; tests count)."""

    on_record: Callable[[RecordInfo], None] | None = None
    on_finished: Callable[[HostTable], None] | None = None
    on_started: Callable[[HostTable], None] | None = None
    on_stopped: Callable[[str], None] | None = None  # the match cannot go on (the reason)


class TableService:
    """Lobby, seats and the authoritative table for one match."""

    def __init__(
        self,
        config: TableConfig,
        identity: Identity,
        reactor: Any,
        log_file: BinaryIO,
        *,
        table: HostTable | None = None,
        fsync: bool = True,
        random_bytes: Callable[[int], bytes] = os.urandom,
        events: ServiceEvents | None = None,
        table_id: bytes | None = None,
        timing: Timing = NO_TIMING,
        limits: HostLimits | None = None,
        durability: DurabilityFactory | None = None,
        background: Background | None = None,
    ) -> None:
        # runs the host's own seats' work ahead beside the host's check of the message it needs
        # (a blind-v2 stage: another thread); None: the work is done when it is asked for
        self.background = background
        self.config = config
        self.limits = limits or HostLimits()
        self.unauthenticated: UnauthenticatedBudget[HostConnection] = UnauthenticatedBudget(
            self.limits
        )
        self.password_guard = PasswordGuard(self.limits)
        self.password_checks = PasswordChecks(reactor)
        self.handshakes: HandshakeGate[HostConnection] = HandshakeGate(
            self.limits, reactor.seconds()
        )
        self._handshake_call: IDelayedCall | None = None
        self.chat_buckets: dict[int, TokenBucket] = {}
        self.timing = timing  # told of prompts, handling, publishing, bot turns (``..timing``)
        self.identity = identity
        self.reactor = reactor
        self.log_file = log_file
        self.fsync = fsync
        self.random_bytes = random_bytes
        self.events = events or ServiceEvents()
        self.table = table
        self.table_id = table.table_id if table else (table_id or random_bytes(16))
        self.rng = random.Random(self.table_id)
        self.slots = [
            Slot(s, plan, SeatLife(s, plan.kind, plan.name)) for s, plan in enumerate(config.seats)
        ]
        self._pump_call: IDelayedCall | None = None
        self.finished = False
        self.closed = False  # the host has left (``close``): nothing is played or held any more
        self.closing_reason = ""  # what ``close`` told the seats
        self.stopped: str | None = None  # why the match could not go on, if it could not
        self.connections: set[HostConnection] = set()  # open connections, seated or not
        self.said_bye: set[int] = set()  # seats whose person left with a bye, not come back
        # connections that follow the table with no seat, in the order they came
        self.watchers: list[HostConnection] = []
        self._watchers_seen = itertools.count(1)  # numbers the names of unnamed watchers
        # what waits for the log to be on disk: (records it needs there, what to do then)
        self._durability = durability
        self._log_thread: ThreadedDurability | GroupDurability | None = None
        self._shutdown_trigger: Any = None
        self._outbox: deque[tuple[int, Callable[[], None]]] = deque()
        self._setup_slots()
        if table is not None:
            self._adopt_writer(table.writer)
            self._adopt_resumed_table(table)
            # the host's word that it restarted here from its log (the seats reconnect next)
            self._publish(self._seat_event(0, "resumed"))  # seat 0 is the host's
            self._schedule_pump()
        else:
            self._work_before_first_hand()
            if all(s.key is not None for s in self.slots):
                reactor.callLater(0, self._start)  # nobody to wait for: bots only

    def _work_before_first_hand(self) -> None:
        """A new ``blind-v2`` table: the seats the host plays begin their part of the first hand
        (``BlindSeat.work_before``) while the others take their seats; their agents, made when
        the match starts, take it up."""
        rules = self.config.game.rules
        if self.background is None or self.config.deal != "blind-v2":
            return
        if not isinstance(rules, RuleSet):  # the blind deal deals Canasta only
            return
        for slot in self.slots:
            if slot.local is not None:
                seed = keyed_seeds(slot.local.identity, self.table_id)(0)
                work_before_hand(self.table_id, 0, slot.seat, seed, rules, self.background)

    # ------------------------------------------------------------------ seats
    def _bot(self) -> Any:
        return self.config.game.make_bot(
            self.config.bot_kind, random.Random(self.rng.getrandbits(64))
        )

    def _setup_slots(self) -> None:
        for slot in self.slots:
            life = slot.life
            if slot.plan.kind == "host":
                life.take(self.identity.public_key, life.name or "host")
                if not self.config.host_plays:
                    slot.local = LocalSeat(self.identity, self._bot())
                    life.kind, life.name = "bot", "host (bot)"
            elif slot.plan.kind == "bot":
                ident = derived_identity(self.identity, self.table_id, slot.seat, 0)
                life.take(ident.public_key, life.name or f"bot-{slot.seat}")
                slot.local = LocalSeat(ident, self._bot())

    def _adopt_resumed_table(self, table: HostTable) -> None:
        for slot, entry in zip(self.slots, table.seats, strict=True):
            life = slot.life
            original = table.header_keys[slot.seat]
            if life.state is SeatState.OPEN:
                life.take(original, entry.name)
            life.owner, life.name = original, entry.name
            if slot.local is not None:
                ident = self._local_identity_for(slot.seat, entry.key)
                if ident is None:
                    raise ValueError(f"cannot sign for seat {slot.seat} after resuming")
                slot.local = LocalSeat(ident, slot.local.bot)
            elif entry.key != original:  # a stand-in held the seat when the host stopped
                stand_in = self._generation_of(slot.seat, entry.key)
                if stand_in is not None:
                    ident = derived_identity(self.identity, self.table_id, slot.seat, stand_in)
                    slot.local = LocalSeat(ident, self._bot())
                    life.resumed_with_stand_in(stand_in)
            if slot.local is not None:
                slot.local.agent = self._agent_for(slot.seat, slot.local.identity)

    def _generation_of(self, seat: int, key: bytes) -> int | None:
        """Which of the keys the host derives for ``seat`` ``key`` is (0: the seat's bot; 1 on:
        its stand-ins), or None."""
        for generation in range(16):
            if derived_identity(self.identity, self.table_id, seat, generation).public_key == key:
                return generation
        return None

    def _local_identity_for(self, seat: int, key: bytes) -> Identity | None:
        if key == self.identity.public_key:
            return self.identity
        generation = self._generation_of(seat, key)
        return (
            None
            if generation is None
            else derived_identity(self.identity, self.table_id, seat, generation)
        )

    def _agent_for(self, seat: int, identity: Identity) -> SeatAgent:
        """The agent of a seat the host plays, caught up with the hand under way: its seeds are
        derived from its key, so a resumed host can reveal what it committed to before."""
        table = self.table
        assert table is not None

        def context() -> HandContext:  # the seats' keys now (a stand-in may hold a seat)
            return HandContext(
                table.match.dealer, table.match.minimums(), [s.key for s in table.seats]
            )

        agent = SeatAgent(
            identity,
            seat,
            self.config.game,
            self.table_id,
            table.head,
            table.deal_mode,
            context,
            aseq=table.next_aseq[seat],
            random_bytes=self.random_bytes,
            insecure_seed_value=self.config.insecure_seed,
            seed_source=keyed_seeds(identity, self.table_id),
            state=lambda: table.state,
        )
        for info in table.history[table.hand_start :]:
            agent.observe(WrittenRecord(info))
        # the seat's part of the hand it will be dealt next: the one starting now (a new table's
        # first, whose work began as the host started listening), or the next one
        between = table.phase is TablePhase.CHECKPOINTING or table.hand_no < 0
        next_hand = table.hand_no + 1 if between else table.hand_no
        if self.background is not None and self._deals(next_hand):
            agent.work_before(next_hand, self.background)
        return agent

    def _deals(self, hand: int) -> bool:
        """Whether the table may still deal hand ``hand``: the match is not over, and the table's
        limit of hands (``max_hands``) not reached."""
        table = self.table
        if table is None or table.phase is TablePhase.OVER or table.match.result is not None:
            return False
        return self.config.max_hands is None or hand < self.config.max_hands

    def _work_before(self, hand: int) -> None:
        """The next hand is ``hand``: the seats the host plays begin their part of it (a
        ``blind-v2`` seat's secrets, proof starts, and seat 0's first stage) in the background;
        not for a hand the table will not deal (the match is over, or its limit of hands
        reached)."""
        if self.background is None or not self._deals(hand):
            return
        for slot in self.slots:
            if slot.local is not None and slot.local.agent is not None:
                slot.local.agent.work_before(hand, self.background)

    def seat_summary(self) -> list[dict[str, Any]]:
        now = self.reactor.seconds()
        return [slot.life.summary(slot.conn is not None or slot.is_bot, now) for slot in self.slots]

    @property
    def free_seats(self) -> int:
        return sum(1 for s in self.slots if not s.life.taken)

    # ------------------------------------------------------------------ connections
    def hello(
        self, conn: HostConnection, message: dict[str, Any], *, password_checked: bool = False
    ) -> None:
        if conn.seat is not None or conn.watching is not None:
            raise TableError("already-seated", "this connection already has a seat")
        version = wire.negotiate(message["min"], message["max"])
        key = conn.peer_key()
        password = self.config.password
        # The host's own seat needs none (TLS proved its key); a resumed host has only the hash.
        if password is not None and key != self.identity.public_key and not password_checked:
            # the hello goes on once the password is checked, off the reactor's thread
            self._check_password(conn, key, password, str(message.get("password", "")), message)
            return
        if message.get("watch") is True:
            self._watch(conn, key, message, version)
            return
        slot = next((s for s in self.slots if s.key == key), None)
        if slot is None:
            if self.table is not None:
                raise TableError("table-full", "the match has started and this key has no seat")
            slot = next((s for s in self.slots if s.life.state is SeatState.OPEN), None)
            if slot is None:
                raise TableError("table-full", "every seat is taken")
            slot.life.take(key, message["name"][: wire.MAX_NAME] or f"player-{slot.seat}")
        if slot.life.kind == "bot":
            raise TableError("seat-is-local", "that key's seat is played by the host")
        if slot.conn is not None and slot.conn is not conn:
            slot.conn.say_bye("the same identity connected again")
            slot.conn.seat = None
        slot.conn = conn
        conn.seat = slot.seat
        self.said_bye.discard(slot.seat)  # its player is back
        self.unauthenticated.release(conn)
        conn.seated(version)
        if slot.hold is not None and slot.hold.active():
            slot.hold.cancel()
        slot.hold = None
        slot.prompted = ()
        slot.life.come_back()  # a stand-in's seat is reclaimed below, once it has every record
        messages: list[dict[str, Any]] = [
            {
                "t": "welcome",
                "version": version,
                "seat": slot.seat,
                "table": self.table_info(),
                "aseq": self.table.next_aseq[slot.seat] if self.table else 0,
                "head": self.table.head if self.table else bytes(32),
            }
        ]
        if self.table is not None:
            resume = message.get("resume", -1)
            start = max(0, resume + 1)
            if start > len(self.table.history):
                # the seat holds records this log lost (a crash cut it back): show it the last
                # record this log has, so that it can tell where the two part (``fork``)
                start = len(self.table.history) - 1
            messages.extend(
                {"t": "record", "seq": info.seq, "data": redact_for_seat(info.stored, slot.seat)}
                for info in self.table.history[start:]
            )
            messages.append({"t": "view", "view": self.view_for(slot.seat)})
        # the resync names records still on their way to the disk: it goes once they are there
        self._when_durable(functools.partial(self._send_all, conn, messages))
        if self.table is not None:
            # after the resync, so the seat reads its own coming back in order
            self._publish(self._seat_event(slot.seat, "connected"))
            self._try_reclaims()  # after the resync: its seat-key record comes in order
        self._broadcast_seats()
        if self.table is None and all(s.key is not None for s in self.slots):
            self._start()
        self._schedule_pump()

    def _watch(
        self, conn: HostConnection, key: bytes, message: dict[str, Any], version: int
    ) -> None:
        """A watcher: never a seat, never prompted. It gets every record with no private payload
        and the public view (no hand), and every seat is told who watches (``seats``)."""
        again = [w for w in self.watchers if w.key == key]  # the same identity, reconnecting
        if len(self.watchers) - len(again) >= self.limits.max_watchers:
            raise TableError(
                "too-many-watchers", f"this table has its {self.limits.max_watchers} watchers"
            )
        for old in again:
            self.watchers.remove(old)
            old.say_bye("the same identity connected again")
        name = printable(message["name"], wire.MAX_NAME) or f"watcher-{next(self._watchers_seen)}"
        conn.watching, conn.key = name, key
        self.watchers.append(conn)
        self.unauthenticated.release(conn)
        conn.seated(version)  # big frames, heartbeats: as for a seat
        messages: list[dict[str, Any]] = [
            {
                "t": "watching",
                "version": version,
                "table": self.table_info(),
                "head": self.table.head if self.table else bytes(32),
            }
        ]
        if self.table is not None:
            start = max(0, message.get("resume", -1) + 1)
            messages.extend(
                {"t": "record", "seq": info.seq, "data": redact_public(info.stored)}
                for info in self.table.history[start:]
            )
            messages.append({"t": "view", "view": self.view_for(None)})
        resync = functools.partial(self._send_all, conn, messages)
        self._when_durable(resync)
        if self.finished:
            self._when_durable(functools.partial(conn.send_bye, "the match is over"))
        self._broadcast_seats()

    def watcher_names(self) -> list[str]:
        """The names of the connected watchers, as every seat is told them."""
        return [str(conn.watching) for conn in self.watchers][: wire.MAX_WATCHERS]

    def table_info(self) -> dict[str, Any]:
        return {
            "name": self.config.name,
            "game": self.config.game.kind,
            "variant": self.config.rules.name,
            "rules": self.config.game.rules_dict(),
            "table_id": self.table_id,
            "seats": self.seat_summary(),
            "deal": self.config.deal,
        }

    def _check_password(
        self,
        conn: HostConnection,
        key: bytes,
        password: TablePassword,
        attempt: str,
        hello: dict[str, Any],
    ) -> None:
        """Check a joining seat's password, then go on with its ``hello``.

        Wrong passwords make the address and the key wait longer and longer, then lock them out
        (``limits.PasswordGuard``); a refused try is not even checked. A check is one scrypt
        (tens of milliseconds, 16 MiB): it runs on the password checker (``PasswordChecks``: a
        worker thread), never on the reactor's thread, where it would hold up every seated
        player's move; a connection waits for one check at a time, and few wait at once."""
        refusal = self.password_guard.check(self.reactor.seconds(), conn.address, key)
        if refusal is not None:
            raise TableError(refusal.code, refusal.text)
        checking = self.password_checks.check(conn, functools.partial(password.matches, attempt))
        if checking is None:
            raise TableError(RATE_LIMITED, "too many password checks at once: try again soon")

        def checked(right: bool) -> None:
            if self.closed or conn not in self.connections:
                return  # gone meanwhile: nothing to answer
            try:
                if not right:
                    self.password_guard.failed(self.reactor.seconds(), conn.address, key)
                    raise TableError("bad-password", "wrong table password")
                self.password_guard.succeeded(conn.address, key)
                self.hello(conn, hello, password_checked=True)
            except (TableError, wire.WireError) as e:
                self._refuse(conn, "hello", e)

        def failed(failure: Any) -> None:  # the check, or the hello after it, broke: a bug
            log.failure("a password check failed", failure)
            if not self.closed and conn in self.connections:
                self._refuse(conn, "hello", TableError(RATE_LIMITED, "try again soon"))

        checking.addCallback(checked).addErrback(failed)

    def _check_chat_rate(self, seat: int, message: dict[str, Any]) -> None:
        """A seat's chat beyond its bucket is refused: not logged, synced or sent to anyone."""
        if message["t"] != "act" or not is_chat(message["act"]):
            return
        now = self.reactor.seconds()
        limits = self.limits
        bucket = self.chat_buckets.setdefault(
            seat, TokenBucket(limits.chat_burst, limits.chat_per_second, now)
        )
        if not bucket.take(now):
            raise TableError(RATE_LIMITED, f"too many chats: wait {bucket.wait():.1f} s")

    def connection_made(self, conn: HostConnection) -> None:
        self.connections.add(conn)
        connection_log.info(
            "accepted a connection from {address}", event="accepted", address=conn.address
        )
        for old, why in self.unauthenticated.admit(conn, conn.address):
            self.handshakes.discard(old)
            old.abort("busy", why)
        if not self.handshakes.arrive(conn, self.reactor.seconds()):
            conn.hold_handshake()
            self._schedule_handshakes()

    def _schedule_handshakes(self) -> None:
        """One timer for every connection waiting for its handshake's turn (``HandshakeGate``)."""
        wait = self.handshakes.wait()
        if wait is None or (self._handshake_call is not None and self._handshake_call.active()):
            return
        self._handshake_call = self.reactor.callLater(wait, self._start_handshakes)

    def _start_handshakes(self) -> None:
        self._handshake_call = None
        for conn in self.handshakes.due(self.reactor.seconds()):
            conn.start_handshake()
        self._schedule_handshakes()

    def connection_lost(self, conn: HostConnection, reason: Any = None) -> None:
        self.connections.discard(conn)
        self.unauthenticated.release(conn)
        self.handshakes.discard(conn)
        if conn in self.watchers:
            self.watchers.remove(conn)
            if not self.closed:
                self._broadcast_seats()  # every seat sees who stopped watching
        if conn.drop_reason is not None:
            connection_log.info(
                "dropped the connection from {address} (seat {seat}): {why}",
                event="dropped",
                address=conn.address,
                seat=conn.seat,
                why=conn.drop_reason,
            )
        else:
            connection_log.info(
                "the connection from {address} (seat {seat}) closed: {why}",
                event="closed",
                address=conn.address,
                seat=conn.seat,
                why=getattr(reason, "getErrorMessage", lambda: "closed")(),
            )
        if conn.seat is None:
            return
        slot = self.slots[conn.seat]
        conn.seat = None
        if slot.conn is not conn:
            return
        slot.conn = None
        if self.closed:
            return  # the host is leaving: nobody is held and nobody is left to tell
        reason, slot.leaving = slot.leaving or "connection lost", None
        if self.table is None:
            if slot.plan.kind == "player":
                slot.life.release()
            self._broadcast_seats()
            return
        if self.table.phase is not TablePhase.OVER:
            # held for its player (the others are told who went, and why), then stood in for
            slot.life.leave(reason, self.reactor.seconds(), self.config.hold_seconds)
            events = self._seat_event(slot.seat, "lost", reason)
            if slot.life.state is SeatState.AWAY:
                slot.hold = self.reactor.callLater(self.config.hold_seconds, self._stand_in, slot)
                events += self._seat_event(slot.seat, "held", hold=self.config.hold_seconds)
            self._publish(events)
        self._broadcast_seats()

    def _seat_event(
        self, seat: int, event: str, reason: str | None = None, hold: float | None = None
    ) -> list[RecordInfo]:
        """Journal a connection event while the match is played (``HostTable.seat_event``);
        nothing once the host has finished or left, so a stopped log ends where it stopped."""
        if self.table is None or self.finished or self.closed:
            return []
        return self.table.seat_event(seat, event, reason, hold)

    def seat_says_bye(self, conn: HostConnection, reason: str) -> None:
        """A seat's player leaves (its ``bye``): remember why, for the others, and close.

        The seat is then held and stood in for exactly as for a lost connection."""
        if conn.seat is not None and self.slots[conn.seat].conn is conn:
            self.slots[conn.seat].leaving = printable(reason, MAX_LEFT_REASON) or "left"
            self.said_bye.add(conn.seat)
            if self._everyone_left():
                self.stop_match(R.STOP_PLAYERS_LEFT)  # no person is left to play for
        conn.drop("the peer said bye")

    def _everyone_left(self) -> bool:
        """Whether every seat a person plays has said bye during the match (and not come back):
        then the match stops by agreement instead of bots playing it out."""
        people = [
            slot.seat
            for slot in self.slots
            if slot.plan.kind == "player" or (slot.plan.kind == "host" and self.config.host_plays)
        ]
        return bool(people) and self.table is not None and set(people) <= self.said_bye

    def close(self, reason: str) -> None:
        """The host leaves: every open connection is told why (``bye``) and closed once that is
        written. Nothing is played, held or stood in for afterwards; the log stays as it is."""
        if not self.closed:
            self.closed, self.closing_reason = True, reason
        for slot in self.slots:
            if slot.hold is not None and slot.hold.active():
                slot.hold.cancel()
            slot.hold = None
        if self._pump_call is not None and self._pump_call.active():
            self._pump_call.cancel()
        self._pump_call = None
        if self._handshake_call is not None and self._handshake_call.active():
            self._handshake_call.cancel()
        self._handshake_call = None
        # the host's last records (a stop among them) reach the seats before the byes: the
        # writer drains first, and what then is on disk goes out; anything a failed write kept
        # from the disk goes to nobody (the log is as it is)
        self.close_log()
        durable = self.table.writer.durable if self.table is not None else 0
        outbox, self._outbox = self._outbox, deque()
        for needed, action in outbox:
            if needed > durable:
                break
            action()
        for conn in list(self.connections):
            conn.say_bye(reason)
        self._remove_shutdown_trigger()

    def _remove_shutdown_trigger(self) -> None:
        """Nothing is left to drain at the reactor's shutdown (and the reactor no longer keeps
        this service, its table and its history alive: a host serving table after table grew by
        about 0.2 MiB a table)."""
        if self._shutdown_trigger is not None:
            self.reactor.removeSystemEventTrigger(self._shutdown_trigger)
            self._shutdown_trigger = None

    def close_log(self) -> None:
        """Wait until every record written is on disk (the writer thread drained and ended).
        A record written later starts the thread again."""
        if self.table is not None:
            self.table.writer.close()

    def stop_match(self, reason: str) -> None:
        """The match stops by agreement before its end (the host quits, every person left): the
        table writes a ``match-stop`` record saying why, and every seat gets it. Nothing is
        written once the match is over or the host has left."""
        table = self.table
        if table is None or self.closed or table.phase is TablePhase.OVER:
            return
        self._publish(table.stop(reason))

    def stop(self, reason: str) -> None:
        """The match cannot go on: every seat is told why, and the embedding program too."""
        log.error("the table stops: {reason}", reason=reason)
        self.stopped = reason
        self.close(f"the table stops: {reason}")
        if self.events.on_stopped is not None:
            self.events.on_stopped(reason)

    def _stand_in(self, slot: Slot) -> None:
        """The held seat's time ran out: a bot takes it (or, mid-deal, the player forfeits)."""
        slot.hold = None
        table = self.table
        if table is None or table.phase is TablePhase.OVER or slot.conn is not None or self.closed:
            return
        if slot.life.expire(holds_secret=not table.between_hands(slot.seat)) == "forfeit":
            # the seat's secrets for the hand left with the player: no stand-in can hold them
            reason = "the player left holding its secrets for the hand"
            self._publish(table.forfeit(slot.seat, reason))
            return
        ident = derived_identity(self.identity, self.table_id, slot.seat, slot.life.stand_ins)
        slot.local = LocalSeat(ident, self._bot())
        infos = self._seat_event(slot.seat, "stand-in") + table.rekey(slot.seat, ident.public_key)
        # the stand-in reads the hand so far (what the others announced, the list it reveals to)
        slot.local.agent = self._agent_for(slot.seat, ident)
        self._publish(infos)

    def _try_reclaims(self) -> None:
        table = self.table
        if table is None:
            return
        for slot in self.slots:
            if slot.life.state is not SeatState.RECLAIMING or slot.key is None:
                continue
            if not table.between_hands(slot.seat):
                continue  # the stand-in holds this hand's secrets: it plays the hand out
            slot.life.reclaimed()
            slot.local = None
            self._publish(
                self._seat_event(slot.seat, "reclaimed") + table.rekey(slot.seat, slot.key)
            )
            if slot.conn is not None:
                welcome = {
                    "t": "welcome",
                    "version": slot.conn.version or wire.PROTOCOL_MAX,
                    "seat": slot.seat,
                    "table": self.table_info(),
                    "aseq": table.next_aseq[slot.seat],
                    "head": table.head,
                }
                self._when_durable(functools.partial(self._send_all, slot.conn, [welcome]))

    # ------------------------------------------------------------------ starting
    def _start(self) -> None:
        if self.closed:
            return  # the host left (or could not listen) before the match began
        keys = [s.key for s in self.slots]
        assert all(k is not None for k in keys)
        writer = LogWriter(
            self.log_file,
            self.identity,
            fsync=self.fsync,
            timing=self.timing,
            clock=self.reactor.seconds,  # the log's times are the host's clock
        )
        self._adopt_writer(writer)
        entries = [SeatEntry(s.name, s.key, s.is_bot) for s in self.slots if s.key is not None]
        self.table = HostTable(
            self.config.game,
            self.table_id,
            entries,
            writer,
            host_seat=0,
            deal_mode=self.config.deal,
            insecure=self.config.insecure_seed is not None,
            created=int(self.reactor.seconds()),
            random_bytes=self.random_bytes,
            table_fields=self.config.to_log_fields(),
            timing=self.timing,
        )
        for slot in self.slots:
            if slot.local is not None:
                slot.local.agent = self._agent_for(slot.seat, slot.local.identity)
        if self.events.on_started:
            self.events.on_started(self.table)
        self._publish(list(self.table.history))

    # ------------------------------------------------------------------ records out
    def _adopt_writer(self, writer: LogWriter) -> None:
        """The table's writer: the table checks what it journals, so the writer does not check it
        again (``LogWriter.check_records``); with a durability, the log syncs on its thread."""
        writer.check_records = False
        if self._durability is None:
            return
        durability = self._durability(self.log_file, writer.next_seq)
        durability.on_durable = self._log_durable
        durability.on_failure = self._log_failed
        writer.use_durability(durability)
        self._log_thread = durability
        if hasattr(self.reactor, "addSystemEventTrigger"):  # a stopping reactor drains it first
            self._shutdown_trigger = self.reactor.addSystemEventTrigger(
                "before", "shutdown", self._drain_at_shutdown
            )

    def _drain_at_shutdown(self) -> None:
        self._shutdown_trigger = None  # fired: it is not to be removed
        self.close_log()

    def _when_durable(self, action: Callable[[], None]) -> None:
        """Run ``action`` once every record written so far is on disk, after whatever waits
        already (at once with a log synced as it is written)."""
        table = self.table
        needed = 0 if table is None else table.writer.next_seq
        if not self._outbox and (table is None or table.writer.durable >= needed):
            action()
        else:
            self._outbox.append((needed, action))

    def _log_durable(self, position: int) -> None:
        """The writer thread: the log is on disk up to ``position`` records."""
        outbox = self._outbox
        while outbox and outbox[0][0] <= position and not self.closed:
            outbox.popleft()[1]()
        if not outbox:
            self._schedule_pump()

    def _log_failed(self, error: BaseException) -> None:
        if self.stopped is None:
            self.stop(
                f"the log could not be written ({error}); the records not on disk were sent to "
                "nobody: resume from the log"
            )

    @staticmethod
    def _send_all(conn: HostConnection, messages: Sequence[dict[str, Any]]) -> None:
        conn.send_many(messages)

    def _publish(self, infos: Sequence[RecordInfo]) -> None:
        """Send each seat its copy of the records once they are on disk, then fresh views.

        The views are drawn now (the state these records leave) for the seats connected now; a
        seat that connects meanwhile has all of them in its resync."""
        if self.timing is NO_TIMING:  # no span to build when nobody measures
            self._queue_records(infos)
            return
        with self.timing.span("host.publish", records=len(infos)):
            self._queue_records(infos)

    def _queue_records(self, infos: Sequence[RecordInfo]) -> None:
        if not infos:
            self._when_durable(self._schedule_pump)
            return
        # The seats the host plays read the records at once, in the order they are written: a
        # bot's turn queued before them may run before they are on disk, and must answer the
        # table as it is (what the bot then signs is itself sent to nobody before it is on disk).
        for info in infos:
            written = WrittenRecord(info)  # decoded only if a seat the host plays looks inside
            for slot in self.slots:
                if slot.local is not None and slot.local.agent is not None:
                    slot.local.agent.observe(written)
            if info.kind == R.HAND_END:  # the next hand's own part, for the seats it plays
                self._work_before(int(written.fields["hand"]) + 1)
        summary = self.seat_summary()
        targets = [
            (slot, slot.conn, self._view_message(slot.seat, summary))
            for slot in self.slots
            if slot.conn is not None
        ]
        # the public view is drawn only for a table somebody watches (half the views otherwise)
        watching = list(self.watchers)
        watchers = (watching, self._view_message(None, summary) if watching else None)
        self._when_durable(functools.partial(self._send_records, infos, targets, watchers))

    def _send_records(
        self,
        infos: Sequence[RecordInfo],
        targets: Sequence[tuple[Slot, HostConnection | None, dict[str, Any] | None]],
        watchers: tuple[list[HostConnection], dict[str, Any] | None] = ([], None),
    ) -> None:
        # the watchers of then who still watch (one who came meanwhile has these in its resync)
        watching = [conn for conn in watchers[0] if conn in self.watchers]
        # each connection's messages go in one write: one TLS record and one send, not one each
        outgoing: dict[HostConnection, list[dict[str, Any]]] = {}
        for info in infos:
            if self.events.on_record:
                self.events.on_record(info)
            for slot, conn, _ in targets:
                if slot.conn is conn and conn is not None:
                    data = redact_for_seat(info.stored, slot.seat)
                    outgoing.setdefault(conn, []).append(
                        {"t": "record", "seq": info.seq, "data": data}
                    )
            if watching:
                public = {"t": "record", "seq": info.seq, "data": redact_public(info.stored)}
                for conn in watching:
                    outgoing.setdefault(conn, []).append(public)
        for slot, conn, view in targets:
            if slot.conn is conn and conn is not None and view is not None:
                outgoing.setdefault(conn, []).append(view)
        if watchers[1] is not None:
            for conn in watching:
                outgoing.setdefault(conn, []).append(watchers[1])
        for conn, messages in outgoing.items():
            conn.send_many(messages)
        self._try_reclaims()
        self._schedule_pump()

    def _view_message(
        self, seat: int | None, summary: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        if self.table is None:
            return None
        return {"t": "view", "view": self.view_for(seat, summary)}

    def view_for(
        self, seat: int | None, summary: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """Seat ``seat``'s view of the table, or (None) a watcher's: the public view, no hand
        (``summary``: the seats' summary, if already made)."""
        table = self.table
        assert table is not None
        game = self.config.game
        if seat is None:
            # no hand is shown, so the host's state serves in both deal modes: at a blind-dealt
            # table its hidden cards are stand-ins, and only hands hold hidden cards
            state = table.state
            hand = None if state is None else game.public_view(state)
        else:
            # at a blind-dealt table the host holds stand-ins for hidden cards: each seat shows
            # its own view of the hand
            state = table.seat_state()
            hand = None if state is None else game.seat_view(state, seat)
        return {
            "table": self.config.name,
            "phase": table.phase.value,
            "hand_no": table.hand_no,
            "scores": list(table.match.scores),
            "seats": self.seat_summary() if summary is None else summary,
            "state": hand,
            "watchers": self.watcher_names(),
        }

    def _broadcast_seats(self) -> None:
        message = {"t": "seats", "seats": self.seat_summary(), "watchers": self.watcher_names()}
        for conn in [slot.conn for slot in self.slots] + list(self.watchers):
            if conn is not None:  # after the records on their way to the disk
                self._when_durable(functools.partial(conn.send, message))

    # ------------------------------------------------------------------ who acts next
    def _schedule_pump(self) -> None:
        if self._pump_call is None or not self._pump_call.active():
            self._pump_call = self.reactor.callLater(0, self._pump)

    def _pump(self) -> None:
        self._pump_call = None
        table = self.table
        if table is None or self.closed:
            return
        if self._outbox:
            return  # records on their way to the disk: the seats' next move waits for them
        if (
            self.config.max_hands is not None
            and table.phase is TablePhase.COMMITTING
            and table.match.hands_played >= self.config.max_hands
        ):
            self._publish(table.stop(R.STOP_MAX_HANDS))  # the table's own limit: an agreed stop
            if self._outbox:
                return  # the stop goes out once on disk; the pump then runs again and finishes
        if table.phase is TablePhase.OVER:
            self._finish()
            return
        for slot in self.slots:
            if slot.local is not None and slot.local.agent is not None:
                exposure = slot.local.agent.exposure()  # a wrong key sealed to a seat it plays
                if exposure is not None:
                    self._take_local_message(slot, exposure)
                    return
            need = table.needs(slot.seat)
            if need == "wait":
                continue
            if slot.local is not None:
                turn = functools.partial(self._local_turn, slot, need)
                if self.config.bot_delay:
                    self.reactor.callLater(self.config.bot_delay, bot_turns(self.reactor).add, turn)
                else:
                    bot_turns(self.reactor).add(turn)
                return
            if slot.conn is not None:
                # re-prompt only once the seat's own last message was taken (or refused)
                marker = (need, table.hand_no, table.next_aseq[slot.seat])
                if slot.prompted != marker:
                    slot.prompted = marker
                    self.timing.mark("host.prompt", table=self.table_id, seat=slot.seat)
                    slot.conn.send(self._prompt(slot.seat, need))

    def _prompt(self, seat: int, need: str) -> dict[str, Any]:
        table = self.table
        assert table is not None
        message: dict[str, Any] = {
            "t": "turn",
            "need": need,
            "hand": table.hand_no,
            "aseq": table.next_aseq[seat],
        }
        message.update(table.prompt_fields(seat, need))
        return message

    def _local_turn(self, slot: Slot, need: str) -> None:
        if self.timing is NO_TIMING:
            self._take_local_turn(slot, need)
            return
        with self.timing.span("host.bot-turn", seat=slot.seat, need=need):
            self._take_local_turn(slot, need)

    def _take_local_turn(self, slot: Slot, need: str) -> None:
        table = self.table
        if self.closed:
            return  # queued before the host left: its log may be closed already
        if slot.thinking is not None:
            return  # its search's answer brings the move
        if table is None or slot.local is None or table.needs(slot.seat) != need:
            self._schedule_pump()
            return
        agent = slot.local.agent
        assert agent is not None
        try:
            reply = agent.reply(need, table.hand_no, table.local_prompt(need))
            if isinstance(reply, Decision) and searches(slot.local.bot, reply):
                self._think(slot, need, reply)
                return
            if isinstance(reply, Decision):
                reply = agent.act(reply.hand, bot_move(slot.local.bot, reply, self.config.game))
            if reply is None:
                raise TableError("out-of-step", f"seat {slot.seat}'s view of the hand differs")
            infos = table.take_message(slot.seat, reply, signed_here=True)
        except (TableError, SeatProblem) as e:  # a bug, not a player's doing: say so loudly
            log.failure("a local seat could not answer: {error}", error=e)
            return
        self._own_work_ahead(agent, reply)
        self._publish(infos)

    def _own_work_ahead(self, agent: SeatAgent, message: dict[str, Any]) -> None:
        """A seat the host plays has had its message taken: it may start the work that message
        makes possible (a blind-v2 seat 0's stage 1, on the initial deck, once it has announced),
        as a remote seat does when its own record comes back."""
        act = message.get("act")
        if self.background is None or not isinstance(act, bytes):
            return
        try:
            fields = R.unpack_map(act, "signed message")
        except R.MessageError:
            return
        type_ = fields.get("type")
        if isinstance(type_, str):
            agent.work_ahead(type_, fields, self.background)

    def _take_local_message(self, slot: Slot, message: dict[str, Any]) -> None:
        """A message a seat the host plays sends unprompted (its exposure of a wrong sealed
        key), taken like a remote seat's."""
        table = self.table
        assert table is not None
        try:
            infos = table.take_message(slot.seat, message, signed_here=True)
        except TableError as e:
            log.failure("a local seat's message was refused: {error}", error=e)
            return
        self._publish(infos)

    def _think(self, slot: Slot, need: str, decision: Decision) -> None:
        """A searching bot's move, searched in the reactor's worker processes: the reactor goes
        on serving meanwhile, and the move is played if the table still waits for it."""
        table, local = self.table, slot.local
        assert table is not None and local is not None and local.agent is not None
        agent = local.agent

        def turn() -> tuple[Any, ...]:
            return (need, table.hand_no, table.next_aseq[slot.seat], table.head)

        slot.thinking = asked = turn()

        def chosen(action: Any) -> None:
            slot.thinking = None
            if self.closed or slot.local is not local or self.table is not table:
                return
            if table.needs(slot.seat) != need or turn() != asked:
                self._schedule_pump()  # the table moved on meanwhile: ask again
                return
            try:
                infos = table.take_message(
                    slot.seat, agent.act(decision.hand, str(action)), signed_here=True
                )
            except (TableError, SeatProblem) as e:
                log.failure("a local seat could not answer: {error}", error=e)
                return
            self._publish(infos)

        bot = local.bot
        assert isinstance(bot, SearchBot)

        def failed(failure: Any) -> None:  # a bug: say so, and let the heuristic play
            slot.thinking = None
            log.failure("a search failed", failure)
            chosen(choose_for(bot.fallback, decision.state))

        d = maybeDeferred(bot_pool(self.reactor).choose, bot, decision.state)
        d.addCallbacks(chosen, failed)

    def _finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        self.close_log()  # everything is on disk already: the idle writer thread ends
        self._remove_shutdown_trigger()
        for slot in self.slots:
            if slot.conn is not None:
                slot.conn.send_bye("the match is over")  # the seat closes the connection
        for watcher in self.watchers:
            watcher.send_bye("the match is over")
        if self.events.on_finished and self.table is not None:
            self.events.on_finished(self.table)

    # ------------------------------------------------------------------ messages from seats
    def handle(self, conn: HostConnection, message: dict[str, Any]) -> None:
        """One message from a seat's connection, already checked against its schema."""
        if self.timing is NO_TIMING:
            self._handle(conn, message)
            return
        with self.timing.span("host.handle", t=message["t"], act=message.get("act"), conn=conn):
            self._handle(conn, message)

    def _handle(self, conn: HostConnection, message: dict[str, Any]) -> None:
        t = message["t"]
        if self.closed:
            conn.say_bye(self.closing_reason)
            return
        if t == "bye":
            self.seat_says_bye(conn, message["reason"])
            return
        try:
            if t == "hello":
                self.hello(conn, message)
                return
            if t not in wire.PEER_TO_HOST:
                raise TableError("unexpected-message", f"a host does not accept {t!r}")
            if conn.watching is not None:
                raise TableError("watching", "a watcher plays no seat: it may only say bye")
            if conn.seat is None:
                raise TableError("no-seat", "say hello first")
            self._check_chat_rate(conn.seat, message)
            slot = self.slots[conn.seat]
            if slot.local is not None:
                raise TableError("seat-is-local", "a stand-in holds this seat for now")
            table = self.table
            if table is None:
                raise TableError("not-started", "the match has not started")
            if t == "fork":
                seq = table.check_lost_record(message["record"])
                self.stop(
                    f"this host's log lost record {seq}, which seat {conn.seat} holds as the host "
                    "signed and sent it (a crash cut the log back, or an older copy replaced "
                    "it): the match cannot go on from this log; keep every seat's copy"
                )
                return
            if t == "act":
                self._work_ahead(conn.seat, message["act"])
            infos = table.take_message(conn.seat, message)
        except (TableError, wire.WireError) as e:
            self._refuse(conn, t, e)
            return
        self._publish(infos)

    def _work_ahead(self, seat: int, act: bytes) -> None:
        """A seat's message about to be checked: the seats the host plays start the work they
        will need once it is taken (a blind-v2 stage that is one's input: its own stage, in
        another thread, used only after the host's check passed and only for that input), and
        a message of the hand protocol's ``ahead_kinds`` (a blind-v2 stage output) goes at once
        to the other remote seats that speak version 3 (``ahead``), which check it while the
        host does and then take its record without a second check. Only for the message the
        table waits for, with the seat's next number, so that a seat cannot make the host
        work, or pass on, messages it will refuse."""
        table = self.table
        assert table is not None
        try:
            fields = R.unpack_map(act, "signed message")
        except R.MessageError:
            return
        type_ = fields.get("type")
        if (
            not isinstance(type_, str)
            or fields.get("aseq") != table.next_aseq[seat]
            or table.needs(seat) != type_
        ):
            return
        if type_ in table.ahead_kinds:
            for slot in self.slots:
                conn = slot.conn
                if (
                    conn is not None
                    and slot.seat != seat
                    and slot.local is None
                    and conn.version >= wire.AHEAD_VERSION
                ):
                    conn.send({"t": "ahead", "act": act})
        if self.background is None:
            return
        for slot in self.slots:
            if slot.local is not None and slot.local.agent is not None:
                slot.local.agent.work_ahead(type_, fields, self.background)

    def _refuse(self, conn: HostConnection, t: str, e: TableError | wire.WireError) -> None:
        """Answer a refused message of type ``t``: an error, or (a refused hello) a goodbye."""
        if e.code in CLOSING_CODES or (t == "hello" and e.code == RATE_LIMITED):
            connection_log.info(
                "refused {address}: {code}: {why}",
                event="refused",
                address=conn.address,
                code=e.code,
                why=str(e),
            )
            conn.refuse(e.code, str(e))
        elif isinstance(e, TableError):
            conn.send_error(e.code, str(e), e.params, e.variant)
        else:
            conn.send_error(e.code, str(e))
        slot_seat = conn.seat
        if slot_seat is not None:
            self.slots[slot_seat].prompted = ()
            self._schedule_pump()


class BotTurns:
    """Host bots' moves, run a few milliseconds' worth per reactor iteration.

    A host may run many tables whose bots never wait; if each bot move were its own timed call,
    a person's action would queue behind every table's bots. Here the network is read between
    slices, so a person's move waits at most one slice.
    """

    # Seconds of bot moves per reactor iteration. One move (with its fsync) takes 0.5–5 ms, so
    # this is about one move: measured, a 2 ms slice kept 100 tables' p99 at 20 ms, 0.5 ms at 8.
    SLICE = 0.0005

    def __init__(self, reactor: Any) -> None:
        # nothing here holds the reactor strongly (not even a pending call of it, whose
        # canceller is the reactor's): the registry below must not keep a reactor (a test's
        # Clock, and every table whose heartbeats it still holds) alive after its last user
        self._reactor = weakref.ref(reactor)
        self.queue: deque[Callable[[], None]] = deque()
        self.scheduled = False  # a call of _run is pending

    def add(self, turn: Callable[[], None]) -> None:
        self.queue.append(turn)
        self._schedule()

    def _schedule(self) -> None:
        reactor = self._reactor()
        if not self.scheduled and reactor is not None:
            self.scheduled = True
            reactor.callLater(0, self._run)

    def _run(self) -> None:
        self.scheduled = False
        deadline = time.perf_counter() + self.SLICE
        while self.queue and time.perf_counter() < deadline:
            self.queue.popleft()()
        if self.queue:
            self._schedule()


def searches(bot: Any, decision: Decision) -> bool:
    """Whether ``bot`` searches this decision in worker processes (it has the seat's state)."""
    return isinstance(bot, SearchBot) and decision.state is not None


# each reactor's queue, for as long as the reactor lives
_bot_turns: weakref.WeakKeyDictionary[Any, BotTurns] = weakref.WeakKeyDictionary()


def bot_turns(reactor: Any) -> BotTurns:
    """The reactor's one queue of host-bot moves."""
    turns = _bot_turns.get(reactor)
    if turns is None:
        turns = _bot_turns[reactor] = BotTurns(reactor)
    return turns


@implementer(IHandshakeListener)
class HostConnection(FrameProtocol):
    """One peer's connection to the host, and its limits (``limits.HostLimits``): a deadline for
    the TLS handshake and ``hello``, small frames until then, heartbeats once seated, and a cap on
    what it may leave unread. While the transport's buffer to the peer is full the host reads
    nothing more from it (the transport pauses this producer); past the cap it is dropped."""

    FRAMES_PER_TURN = 32  # frames handled per reactor iteration before other peers' turn

    def __init__(self, service: TableService, key_source: Callable[[Any], bytes]) -> None:
        self.service = service
        self.key_source = key_source
        self.limits = service.limits
        self.seat: int | None = None
        self.watching: str | None = None  # a watcher's name: it follows the table, no seat
        self.key: bytes | None = None  # a watcher's key (a seat's is its slot's)
        self.version = 0  # negotiated at hello
        self.said_bye = False
        self.lost: Deferred[None] = Deferred()  # fires when the connection is gone
        self.address = "?"
        self.drop_reason: str | None = None  # why the host ended it, for the connection log
        self.MAX_LENGTH = self.limits.max_hello_frame  # until hello: a hello is small
        self.output_paused = False  # the transport's buffer to the peer is full
        self.unsent = 0  # bytes written while it was full
        self.last_heard = 0.0
        self.ping_sent: float | None = None  # when the unanswered ping went out
        self._deadline: IDelayedCall | None = None  # the handshake's or hello's
        self._heartbeat: IDelayedCall | None = None
        self._frames_this_turn = 0
        self._turn_over = False  # this reactor iteration's share of frames is used up
        self.handshake_held = False  # not read until its handshake's turn (``HandshakeGate``)

    def peer_key(self) -> bytes:
        return self.key_source(self.transport)

    def send_bye(self, reason: str) -> None:
        """Tell the seat why the host ends this connection (once per connection)."""
        if not self.said_bye and not self.dropped:
            self.said_bye = True
            self.send({"t": "bye", "reason": reason})

    def say_bye(self, reason: str) -> None:
        """``send_bye``, then close once it is written (the transport flushes before closing)."""
        self.send_bye(reason)
        self.drop(f"bye: {reason}")

    def drop(self, why: str = "") -> None:
        if self.drop_reason is None and why:
            self.drop_reason = why
        super().drop()

    def abort(self, code: str, why: str) -> None:
        """End the connection now, without waiting to flush what it has not read."""
        if self.drop_reason is None:
            self.drop_reason = f"{code}: {why}"
        self.dropped = True
        transport: Any = self.transport
        if transport is not None:
            transport.abortConnection()

    def refuse(self, code: str, why: str) -> None:
        """Tell the peer why in an ``error``, then close (aborted if it will not read it)."""
        if self.dropped:
            return
        self.send_error(code, why)
        self.drop(f"{code}: {why}")
        self._cancel_deadline()
        self._deadline = self._later(self.limits.refusal_grace, self.abort, code, why)

    def message_received(self, message: dict[str, Any]) -> None:
        try:
            wire.validate(message)
        except wire.WireError as e:
            # off-schema: refused before the table sees it; the prompt the seat holds stays good
            self.send_error(e.code, str(e))
            return
        if message["t"] == "pong":
            return  # it was heard (``dataReceived``): that is all a pong says
        self.service.handle(self, message)

    # ------------------------------------------------------------------ limits
    def _later(self, delay: float, f: Callable[..., Any], *args: Any) -> IDelayedCall:
        call: IDelayedCall = self.service.reactor.callLater(delay, f, *args)
        return call

    def _cancel_deadline(self) -> None:
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = None

    def hold_handshake(self) -> None:
        """Read nothing (its ClientHello waits in the kernel) until ``start_handshake``."""
        self.handshake_held = True
        self._pause_reading()

    def start_handshake(self) -> None:
        self.handshake_held = False
        self._resume_reading()

    def handshakeCompleted(self) -> None:  # Twisted's name (IHandshakeListener)
        self._cancel_deadline()
        if self.seat is None and not self.dropped:
            self._deadline = self._later(
                self.limits.hello_timeout,
                self.refuse,
                "timeout",
                f"no hello within {self.limits.hello_timeout:g} s of the TLS handshake",
            )

    def seated(self, version: int) -> None:
        """Given a seat: frames of any size, no hello deadline, heartbeats from version 2."""
        self.version = version
        self.MAX_LENGTH = wire.MAX_FRAME
        self._cancel_deadline()
        if version >= wire.PING_VERSION and self._heartbeat is None:
            self._heartbeat = self._later(self.limits.ping_interval, self._beat)

    def _beat(self) -> None:
        """Ping a seat it has not heard from lately; drop it if a ping went unanswered."""
        self._heartbeat = None
        if self.dropped:
            return
        now = self.service.reactor.seconds()
        limits = self.limits
        if self.ping_sent is not None and now - self.ping_sent >= limits.silence_limit:
            self.abort("silent", f"no answer to a ping for {now - self.ping_sent:.0f} s")
            return
        if self.ping_sent is None and now - self.last_heard >= limits.ping_interval:
            self.ping_sent = now
            self.send({"t": "ping"})
        self._heartbeat = self._later(limits.ping_interval, self._beat)

    def dataReceived(self, data: bytes) -> None:  # Twisted's name
        if data:
            self.last_heard = self.service.reactor.seconds()
            self.ping_sent = None
        super().dataReceived(data)
        budget = self.service.unauthenticated
        if self in budget and not budget.hold(self, len(self._unprocessed)):
            self.abort(
                "busy", "too many bytes held in partial frames of connections without a seat"
            )

    def pauseProducing(self) -> None:  # Twisted's name: the buffer to the peer is full
        self.output_paused = True
        self._pause_reading()  # and read nothing more from it meanwhile

    def resumeProducing(self) -> None:  # Twisted's name: the buffer drained
        self.output_paused, self.unsent = False, 0
        self._resume_reading()

    def stringReceived(self, frame: bytes) -> None:  # Twisted's name
        super().stringReceived(frame)
        # A fair share: a peer that sends frames back to back gets FRAMES_PER_TURN handled per
        # reactor iteration, so the other seats' messages are read in between.
        self._frames_this_turn += 1
        if self._frames_this_turn >= self.FRAMES_PER_TURN and not self._turn_over:
            self._turn_over = True
            self._pause_reading()
            self._later(0, self._next_turn)

    def _next_turn(self) -> None:
        self._turn_over, self._frames_this_turn = False, 0
        self._resume_reading()

    def _pause_reading(self) -> None:
        self.paused = True  # the frame loop stops after this frame; the rest stays buffered
        transport: Any = self.transport  # TCP, or TLS passing it on: an IPushProducer
        if transport is not None:
            transport.pauseProducing()

    def _resume_reading(self) -> None:
        if self.dropped or self.output_paused or self._turn_over or self.handshake_held:
            return
        if not self.paused:
            return
        self.paused = False
        transport: Any = self.transport
        if transport is not None:
            transport.resumeProducing()
        self.dataReceived(b"")  # the frames that arrived meanwhile

    def sendString(self, string: bytes) -> None:  # Twisted's name
        if self._over_unsent(len(string) + 4):
            return
        super().sendString(string)

    def write_frames(self, frames: Sequence[bytes]) -> None:
        if self._over_unsent(sum(len(f) + 4 for f in frames)):
            return
        super().write_frames(frames)

    def _over_unsent(self, size: int) -> bool:
        """Count ``size`` more bytes sent while the peer reads nothing; over the limit, the
        connection is aborted (and nothing more is sent)."""
        if self.output_paused:
            self.unsent += size
            if self.unsent > self.limits.max_unsent:
                self.abort(
                    "slow-reader", f"over {self.limits.max_unsent} bytes sent to it are unread"
                )
                return True
        return False

    def connectionMade(self) -> None:  # Twisted's name
        super().connectionMade()
        transport: Any = self.transport
        peer = transport.getPeer() if transport is not None else None
        self.address = str(getattr(peer, "host", peer))
        self.last_heard = self.service.reactor.seconds()
        if transport is not None:
            transport.registerProducer(self, True)
        self._deadline = self._later(
            self.limits.tls_timeout,
            self.abort,
            "timeout",
            f"no finished TLS handshake within {self.limits.tls_timeout:g} s",
        )
        self.service.connection_made(self)

    def connectionLost(self, reason: Any = None) -> None:  # Twisted's name
        self._cancel_deadline()
        if self._heartbeat is not None and self._heartbeat.active():
            self._heartbeat.cancel()
        self._heartbeat = None
        self.service.connection_lost(self, reason)
        if not self.lost.called:
            self.lost.callback(None)


class HostFactory(Factory):
    def __init__(self, service: TableService, key_source: Callable[[Any], bytes]) -> None:
        self.service = service
        self.key_source = key_source

    def buildProtocol(self, addr: Any) -> HostConnection:  # Twisted's name
        protocol = HostConnection(self.service, self.key_source)
        protocol.factory = self
        return protocol


__all__ = [
    "HostConnection",
    "HostFactory",
    "SeatPlan",
    "SlotKind",
    "TableConfig",
    "TablePassword",
    "TableService",
    "derived_identity",
    "group_durability",
    "threaded_durability",
]
