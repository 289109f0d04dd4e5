"""The host's network side: seats, connections, stand-in bots, prompts (Twisted, thin).

``TableService`` owns the lobby and, once every seat is taken, the authoritative
:class:`~canasta_net.host_table.HostTable`. Everything the table writes is on disk before this
module sends it: ``HostTable.submit`` returns only records the writer has flushed. Each seat gets
its own redacted copy of every record, its own view, and a prompt when the table waits for it.

Seat 0 is always the host's own identity (the host's player, or a bot signing with the host key).
Bots sign with keys derived from the host's key, so a resumed host can sign for them again.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import math
import os
import random
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO, Literal

from cryptography.hazmat.primitives import serialization
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall
from twisted.internet.protocol import Factory
from twisted.logger import Logger

from . import wire
from .blind_seat import BlindSeat, HandContext, act_of_body
from .bots import Bot
from .framing import FrameProtocol
from .games import Game, game_of_rules
from .host_table import HostTable, SeatEntry, TableError, TablePhase
from .identity import Identity
from .log import LogWriter, RecordInfo, redact_for_seat
from .seat import SeatSigner, keyed_seeds

SlotKind = Literal["host", "player", "bot"]
log = Logger()

MAX_LEFT_REASON = 80  # characters of a leaving seat's own reason passed on to the others


def printable(text: str, limit: int) -> str:
    """``text`` without control characters (it goes to other players' terminals), cut short."""
    return "".join(ch for ch in text if ch.isprintable())[:limit].strip()


@dataclass
class SeatPlan:
    kind: SlotKind
    name: str


@dataclass
class TableConfig:
    name: str
    rules: Any  # a RuleSet (the Canasta family) or MayIRules
    seats: list[SeatPlan]
    password: str | None = None
    hold_seconds: float = 60.0
    bot_delay: float = 0.0
    bot_kind: str = "greedy"
    host_plays: bool = True
    insecure_seed: int | None = None  # deterministic seeds, for tests; marked insecure
    max_hands: int | None = None  # stop after this many hands (the log then ends mid-match)
    deal: str = "commit-reveal"  # or "blind": nobody, host included, sees another seat's cards

    @property
    def game(self) -> Game:
        return game_of_rules(self.rules)

    @classmethod
    def simple(
        cls, name: str, rules: Any, players: int, *, host_plays: bool = True, **kw: Any
    ) -> TableConfig:
        """Seat 0 the host; then ``players - 1`` remote players; bots for the rest."""
        plans = [SeatPlan("host", "host")]
        for seat in range(1, rules.players):
            kind: SlotKind = "player" if seat < players else "bot"
            plans.append(SeatPlan(kind, f"{kind}-{seat}" if kind == "bot" else ""))
        return cls(name, rules, plans, host_plays=host_plays, **kw)


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
    """A seat played inside the host process: a bot with its own signer."""

    identity: Identity
    bot: Bot
    signer: SeatSigner | None = None
    blind: BlindSeat | None = None  # a blind-dealt table: the seat's own secrets and cards


@dataclass
class Slot:
    seat: int
    plan: SeatPlan
    name: str
    key: bytes | None = None
    conn: HostConnection | None = None
    local: LocalSeat | None = None
    player_key: bytes | None = None  # the key of the person whose seat a stand-in holds
    hold: IDelayedCall | None = None
    generation: int = 0
    prompted: tuple[Any, ...] = ()
    wants_back: bool = False
    left: str | None = None  # why the seat's player went away (told to the others); None: here

    @property
    def is_bot(self) -> bool:
        return self.local is not None


@dataclass
class ServiceEvents:
    """Hooks for the embedding program (the CLI prints; tests count)."""

    on_record: Callable[[RecordInfo], None] | None = None
    on_finished: Callable[[HostTable], None] | None = None
    on_started: Callable[[HostTable], None] | None = None


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
    ) -> None:
        self.config = config
        self.identity = identity
        self.reactor = reactor
        self.log_file = log_file
        self.fsync = fsync
        self.random_bytes = random_bytes
        self.events = events or ServiceEvents()
        self.table = table
        self.table_id = table.table_id if table else (table_id or random_bytes(16))
        self.rng = random.Random(self.table_id)
        self.slots = [Slot(s, plan, plan.name) for s, plan in enumerate(config.seats)]
        self._pump_call: IDelayedCall | None = None
        self.finished = False
        self.closed = False  # the host has left (``close``): nothing is played or held any more
        self.closing_reason = ""  # what ``close`` told the seats
        self.connections: set[HostConnection] = set()  # open connections, seated or not
        self._setup_slots()
        if table is not None:
            self._adopt_resumed_table(table)
            self._schedule_pump()
        elif all(s.key is not None for s in self.slots):
            reactor.callLater(0, self._start)  # nobody to wait for: bots only

    # ------------------------------------------------------------------ seats
    def _bot(self) -> Any:
        return self.config.game.make_bot(
            self.config.bot_kind, random.Random(self.rng.getrandbits(64))
        )

    def _setup_slots(self) -> None:
        for slot in self.slots:
            if slot.plan.kind == "host":
                slot.key = self.identity.public_key
                slot.name = slot.name or "host"
                if not self.config.host_plays:
                    slot.local = LocalSeat(self.identity, self._bot())
                    slot.name = "host (bot)"
            elif slot.plan.kind == "bot":
                ident = derived_identity(self.identity, self.table_id, slot.seat, 0)
                slot.key = ident.public_key
                slot.local = LocalSeat(ident, self._bot())
                slot.name = slot.name or f"bot-{slot.seat}"

    def _adopt_resumed_table(self, table: HostTable) -> None:
        for slot, entry in zip(self.slots, table.seats, strict=True):
            slot.name = entry.name
            if slot.local is not None:
                ident = self._local_identity_for(slot.seat, entry.key)
                if ident is None:
                    raise ValueError(f"cannot sign for seat {slot.seat} after resuming")
                slot.local = LocalSeat(ident, slot.local.bot)
                slot.key = entry.key
            else:
                original = table.header_keys[slot.seat]
                slot.key = original
                if entry.key != original:  # a stand-in held the seat when the host stopped
                    ident = self._local_identity_for(slot.seat, entry.key)
                    if ident is not None:
                        slot.local = LocalSeat(ident, self._bot())
                        slot.player_key = original
                        slot.wants_back = False
            if slot.local is not None:
                slot.local.signer = self._signer_for(slot.seat, slot.local.identity)

    def _local_identity_for(self, seat: int, key: bytes) -> Identity | None:
        if key == self.identity.public_key:
            return self.identity
        for generation in range(16):
            ident = derived_identity(self.identity, self.table_id, seat, generation)
            if ident.public_key == key:
                return ident
        return None

    def _signer_for(self, seat: int, identity: Identity) -> SeatSigner:
        assert self.table is not None
        return SeatSigner(
            identity,
            seat,
            self.table_id,
            self.table.head,
            random_bytes=self.random_bytes,
            insecure_seed_value=self.config.insecure_seed,
            aseq=self.table.next_aseq[seat],
            seed_source=keyed_seeds(identity, self.table_id),
        )

    def _blind_seat_for(self, seat: int, identity: Identity) -> BlindSeat | None:
        table = self.table
        if table is None or table.deal_mode != "blind":
            return None

        def context() -> HandContext:
            return HandContext(
                table.match.dealer, table.match.minimums(), [s.key for s in table.seats]
            )

        return BlindSeat(
            identity, seat, self.config.game, self.table_id, context, self.random_bytes
        )

    def seat_summary(self) -> list[dict[str, Any]]:
        return [self._seat_entry(s) for s in self.slots]

    def _seat_entry(self, slot: Slot) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "seat": slot.seat,
            "name": slot.name or "(open)",
            "bot": slot.is_bot,
            "connected": slot.conn is not None or slot.is_bot,
            "taken": slot.key is not None,
        }
        if slot.left is not None:
            entry["left"] = slot.left
        if slot.hold is not None and slot.hold.active():
            # whole seconds from now until a stand-in takes the held seat
            entry["stand_in_in"] = math.ceil(max(0.0, slot.hold.getTime() - self.reactor.seconds()))
        return entry

    @property
    def free_seats(self) -> int:
        return sum(1 for s in self.slots if s.key is None)

    # ------------------------------------------------------------------ connections
    def hello(self, conn: HostConnection, message: dict[str, Any]) -> None:
        if conn.seat is not None:
            raise TableError("already-seated", "this connection already has a seat")
        version = wire.negotiate(message["min"], message["max"])
        password = self.config.password
        if password is not None and not hmac.compare_digest(
            str(message.get("password", "")).encode(), password.encode()
        ):
            raise TableError("bad-password", "wrong table password")
        key = conn.peer_key()
        slot = next((s for s in self.slots if s.key == key or s.player_key == key), None)
        if slot is None:
            if self.table is not None:
                raise TableError("table-full", "the match has started and this key has no seat")
            slot = next((s for s in self.slots if s.key is None), None)
            if slot is None:
                raise TableError("table-full", "every seat is taken")
            slot.key = key
            slot.name = message["name"][: wire.MAX_NAME] or f"player-{slot.seat}"
        if slot.local is not None and slot.player_key != key and slot.key == key:
            raise TableError("seat-is-local", "that key's seat is played by the host")
        if slot.conn is not None and slot.conn is not conn:
            slot.conn.say_bye("the same identity connected again")
            slot.conn.seat = None
        slot.conn = conn
        slot.left = None
        conn.seat = slot.seat
        if slot.hold is not None and slot.hold.active():
            slot.hold.cancel()
        slot.hold = None
        slot.prompted = ()
        if slot.player_key == key:
            slot.wants_back = True  # reclaimed below, once the player has every record
        conn.send(
            {
                "t": "welcome",
                "version": version,
                "seat": slot.seat,
                "table": self.table_info(),
                "aseq": self.table.next_aseq[slot.seat] if self.table else 0,
                "head": self.table.head if self.table else bytes(32),
            }
        )
        if self.table is not None:
            resume = message.get("resume", -1)
            for info in self.table.history[max(0, resume + 1) :]:
                conn.send(
                    {
                        "t": "record",
                        "seq": info.seq,
                        "data": redact_for_seat(info.stored, slot.seat),
                    }
                )
            self._send_view(slot)
            self._try_reclaims()  # after the resync: its seat-key record comes in order
        self._broadcast_seats()
        if self.table is None and all(s.key is not None for s in self.slots):
            self._start()
        self._schedule_pump()

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

    def connection_made(self, conn: HostConnection) -> None:
        self.connections.add(conn)

    def connection_lost(self, conn: HostConnection) -> None:
        self.connections.discard(conn)
        if conn.seat is None:
            return
        slot = self.slots[conn.seat]
        conn.seat = None
        if slot.conn is not conn:
            return
        slot.conn = None
        if self.closed:
            return  # the host is leaving: nobody is held and nobody is left to tell
        if self.table is None:
            if slot.plan.kind == "player":
                slot.key = None
                slot.name = ""
                slot.left = None
            self._broadcast_seats()
            return
        if self.table.phase is not TablePhase.OVER:
            slot.left = slot.left or "connection lost"  # the others are told who went, and why
            if slot.local is None:
                slot.hold = self.reactor.callLater(self.config.hold_seconds, self._stand_in, slot)
        self._broadcast_seats()

    def seat_says_bye(self, conn: HostConnection, reason: str) -> None:
        """A seat's player leaves (its ``bye``): remember why, for the others, and close.

        The seat is then held and stood in for exactly as for a lost connection."""
        if conn.seat is not None and self.slots[conn.seat].conn is conn:
            self.slots[conn.seat].left = printable(reason, MAX_LEFT_REASON) or "left"
        conn.drop()

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
        for conn in list(self.connections):
            conn.say_bye(reason)

    def _stand_in(self, slot: Slot) -> None:
        """The held seat's time ran out: a bot takes it (or, mid-deal, the player forfeits)."""
        slot.hold = None
        table = self.table
        if table is None or table.phase is TablePhase.OVER or slot.conn is not None or self.closed:
            return
        if not table.between_hands(slot.seat):
            # the seat's secrets for the hand left with the player: no stand-in can hold them
            reason = "the player left holding its secrets for the hand"
            self._publish(table.forfeit(slot.seat, reason))
            return
        slot.generation += 1
        ident = derived_identity(self.identity, self.table_id, slot.seat, slot.generation)
        slot.player_key = slot.key
        slot.local = LocalSeat(ident, self._bot())
        infos = table.rekey(slot.seat, ident.public_key)
        slot.local.signer = self._signer_for(slot.seat, ident)
        slot.local.blind = self._blind_seat_for(slot.seat, ident)
        if slot.local.blind is not None and table.phase is not TablePhase.CHECKPOINTING:
            # the hand just begun: the stand-in reads what the others announced so far
            for info in table.history:
                act = act_of_body(info.body)
                if act is not None and act.get("hand") == table.hand_no:
                    slot.local.blind.observe(info.kind, act)
        slot.name = f"{slot.name} (bot stand-in)"
        self._publish(infos)

    def _try_reclaims(self) -> None:
        table = self.table
        if table is None:
            return
        for slot in self.slots:
            if not slot.wants_back or slot.local is None or slot.player_key is None:
                continue
            if not table.between_hands(slot.seat):
                continue  # the stand-in holds this hand's secrets: it plays the hand out
            infos = table.rekey(slot.seat, slot.player_key)
            slot.local = None
            slot.key = slot.player_key
            slot.player_key = None
            slot.wants_back = False
            slot.name = slot.name.removesuffix(" (bot stand-in)")
            self._publish(infos)
            if slot.conn is not None:
                slot.conn.send(
                    {
                        "t": "welcome",
                        "version": wire.PROTOCOL_MAX,
                        "seat": slot.seat,
                        "table": self.table_info(),
                        "aseq": table.next_aseq[slot.seat],
                        "head": table.head,
                    }
                )

    # ------------------------------------------------------------------ starting
    def _start(self) -> None:
        keys = [s.key for s in self.slots]
        assert all(k is not None for k in keys)
        writer = LogWriter(self.log_file, self.identity, fsync=self.fsync)
        entries = [
            SeatEntry(s.name, s.key, s.is_bot)  # type: ignore[arg-type]
            for s in self.slots
        ]
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
        )
        for slot in self.slots:
            if slot.local is not None:
                slot.local.signer = self._signer_for(slot.seat, slot.local.identity)
                slot.local.blind = self._blind_seat_for(slot.seat, slot.local.identity)
        if self.events.on_started:
            self.events.on_started(self.table)
        self._publish(list(self.table.history))

    # ------------------------------------------------------------------ records out
    def _publish(self, infos: Sequence[RecordInfo]) -> None:
        """Send each seat its copy of records already on disk, then fresh views."""
        for info in infos:
            if self.events.on_record:
                self.events.on_record(info)
            act = act_of_body(info.body) if self.config.deal == "blind" else None
            for slot in self.slots:
                if slot.local is not None and slot.local.signer is not None:
                    slot.local.signer.observe(info.hash)
                if slot.local is not None and slot.local.blind is not None:
                    slot.local.blind.observe(info.kind, act)
                if slot.conn is not None:
                    data = redact_for_seat(info.stored, slot.seat)
                    slot.conn.send({"t": "record", "seq": info.seq, "data": data})
        if infos:
            for slot in self.slots:
                self._send_view(slot)
            self._try_reclaims()
        self._schedule_pump()

    def _send_view(self, slot: Slot) -> None:
        if slot.conn is None or self.table is None:
            return
        slot.conn.send({"t": "view", "view": self.view_for(slot.seat)})

    def view_for(self, seat: int) -> dict[str, Any]:
        table = self.table
        assert table is not None
        return {
            "table": self.config.name,
            "phase": table.phase.value,
            "hand_no": table.hand_no,
            "scores": list(table.match.scores),
            "seats": self.seat_summary(),
            # at a blind-dealt table the host holds stand-ins for hidden cards: each seat shows
            # its own view of the hand
            "state": None
            if (state := table.seat_state()) is None
            else self.config.game.seat_view(state, seat),
        }

    def _broadcast_seats(self) -> None:
        summary = self.seat_summary()
        for slot in self.slots:
            if slot.conn is not None:
                slot.conn.send({"t": "seats", "seats": summary})

    # ------------------------------------------------------------------ who acts next
    def _schedule_pump(self) -> None:
        if self._pump_call is None or not self._pump_call.active():
            self._pump_call = self.reactor.callLater(0, self._pump)

    def _pump(self) -> None:
        self._pump_call = None
        table = self.table
        if table is None or self.closed:
            return
        if table.phase is TablePhase.OVER or (
            self.config.max_hands is not None
            and table.phase is TablePhase.COMMITTING
            and table.match.hands_played >= self.config.max_hands
        ):
            self._finish()
            return
        for slot in self.slots:
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
        table = self.table
        if self.closed:
            return  # queued before the host left: its log may be closed already
        if table is None or slot.local is None or table.needs(slot.seat) != need:
            self._schedule_pump()
            return
        signer = slot.local.signer
        assert signer is not None
        hand = table.hand_no
        try:
            if slot.local.blind is not None and need not in ("checkpoint", "wait"):
                infos = self._local_blind_turn(slot, slot.local.blind, signer, need)
            elif need == "commit":
                infos = table.submit(slot.seat, *signer.commit(hand))
            elif need == "reveal":
                act, sig, seed = signer.reveal(hand)
                infos = table.submit(slot.seat, act, sig, seed)
            elif need == "act":
                state = table.state
                assert state is not None
                legal = state.legal_actions()
                action = slot.local.bot.choose(legal, state.hand_faces(slot.seat), state.rules)
                infos = table.submit(slot.seat, *signer.action(hand, str(action)))
            else:
                infos = table.submit_checkpoint(
                    slot.seat, signer.sign_checkpoint(table.checkpoint_msg)
                )
        except TableError as e:  # a bug, not a player's doing: say so loudly, keep serving
            log.failure("a local seat's message was refused: {code}", code=e.code)
            return
        self._publish(infos)

    def _local_blind_turn(
        self, slot: Slot, seat: BlindSeat, signer: SeatSigner, need: str
    ) -> list[RecordInfo]:
        table = self.table
        assert table is not None and slot.local is not None
        hand = table.hand_no
        if need == "act":
            state = seat.hand.state if seat.hand is not None else None
            assert state is not None
            legal = seat.legal_actions(hand)
            action = slot.local.bot.choose(legal, state.hand_faces(slot.seat), state.rules)
            return table.submit(
                slot.seat, *signer.sign(hand, "action", **seat.action_fields(action))
            )
        answer = seat.answer(hand, need)
        if answer is None:
            raise TableError("out-of-step", f"seat {slot.seat}'s view of the hand differs")
        type_, fields = answer
        return table.submit(slot.seat, *signer.sign(hand, type_, **fields))

    def _finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        for slot in self.slots:
            if slot.conn is not None:
                slot.conn.send_bye("the match is over")  # the seat closes the connection
        if self.events.on_finished and self.table is not None:
            self.events.on_finished(self.table)

    # ------------------------------------------------------------------ messages from seats
    def handle(self, conn: HostConnection, message: dict[str, Any]) -> None:
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
            if conn.seat is None:
                raise TableError("no-seat", "say hello first")
            slot = self.slots[conn.seat]
            if slot.local is not None:
                raise TableError("seat-is-local", "a stand-in holds this seat for now")
            table = self.table
            if table is None:
                raise TableError("not-started", "the match has not started")
            if t == "checkpoint":
                if message["hand"] != table.hand_no:
                    raise TableError("wrong-hand", "a checkpoint for another hand")
                infos = table.submit_checkpoint(conn.seat, message["sig"])
            elif t == "reveal":
                infos = table.submit(conn.seat, message["act"], message["asig"], message["seed"])
            else:
                infos = table.submit(conn.seat, message["act"], message["asig"])
        except (TableError, wire.WireError) as e:
            conn.send_error(e.code, str(e))
            if isinstance(e, TableError) and e.code in (
                "bad-password",
                "table-full",
                "version-mismatch",
            ):
                conn.drop()
            if isinstance(e, wire.WireError) and e.code == "version-mismatch":
                conn.drop()
            slot_seat = conn.seat
            if slot_seat is not None:
                self.slots[slot_seat].prompted = ()
                self._schedule_pump()
            return
        self._publish(infos)


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
        self.reactor = reactor
        self.queue: deque[Callable[[], None]] = deque()
        self.call: IDelayedCall | None = None

    def add(self, turn: Callable[[], None]) -> None:
        self.queue.append(turn)
        if self.call is None or not self.call.active():
            self.call = self.reactor.callLater(0, self._run)

    def _run(self) -> None:
        self.call = None
        deadline = time.perf_counter() + self.SLICE
        while self.queue and time.perf_counter() < deadline:
            self.queue.popleft()()
        if self.queue and (self.call is None or not self.call.active()):
            self.call = self.reactor.callLater(0, self._run)


_bot_turns: dict[int, BotTurns] = {}


def bot_turns(reactor: Any) -> BotTurns:
    """The reactor's one queue of host-bot moves."""
    key = id(reactor)
    if key not in _bot_turns or _bot_turns[key].reactor is not reactor:
        _bot_turns[key] = BotTurns(reactor)
    return _bot_turns[key]


class HostConnection(FrameProtocol):
    """One peer's connection to the host."""

    def __init__(self, service: TableService, key_source: Callable[[Any], bytes]) -> None:
        self.service = service
        self.key_source = key_source
        self.seat: int | None = None
        self.said_bye = False
        self.lost: Deferred[None] = Deferred()  # fires when the connection is gone

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
        self.drop()

    def message_received(self, message: dict[str, Any]) -> None:
        try:
            wire.validate(message)
        except wire.WireError as e:
            # off-schema: refused before the table sees it; the prompt the seat holds stays good
            self.send_error(e.code, str(e))
            return
        self.service.handle(self, message)

    def connectionMade(self) -> None:  # Twisted's name
        super().connectionMade()
        self.service.connection_made(self)

    def connectionLost(self, reason: Any = None) -> None:  # Twisted's name
        self.service.connection_lost(self)
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
    "TableConfig",
    "TableService",
    "derived_identity",
]
