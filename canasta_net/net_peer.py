"""A seat's network side: keep an own verified copy of the log, answer the host's prompts.

``PeerSession`` is sans-io: it takes host messages and returns the messages to send. It checks
every record the host sends (host signature, chain, and the game itself through the replayer as
each hand's seeds are published), journals it to the seat's own ``.cnlog``, reveals its seed only
after seeing its commitment in the host's signed list, and signs a hand's checkpoint only if its
own replay of the hand agrees. ``PeerProtocol`` and ``PeerClient`` are the thin Twisted layer:
framing, and reconnection with backoff through ``ClientService``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol

from twisted.application.internet import ClientService, backoffPolicy
from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.protocol import Factory, connectionDone
from twisted.logger import Logger
from twisted.python.failure import Failure

from . import records as R
from . import wire
from .blind.errors import BlindError
from .blind.hand import BlindRefused
from .blind.points import card_points
from .blind.schedule import labels_for_rules
from .blind_seat import BlindSeat, HandContext
from .errors import IllegalAction
from .framing import FrameProtocol
from .games import CANASTA, Game, UnknownGame, game_from_header
from .identity import Identity
from .log import (
    Header,
    LogError,
    LogVerifier,
    StoredRecord,
    parse_header,
    parse_stored_record,
)
from .log_replay import Replayer, ReplayError
from .rules import RuleSet
from .seat import SeatSigner, SeedLost
from .seed_store import SeedStore, SeedStoreError, TableSeeds
from .tls import TLSIdentityError

log = Logger()


class Player(Protocol):
    """Who sits at the seat: a person at a terminal, or a bot."""

    def show(self, view: dict[str, Any]) -> None: ...

    def event(self, text: str) -> None: ...

    def choose(self, legal: list[str], view: dict[str, Any]) -> Deferred[str] | str: ...

    def finished(self, reason: str) -> None: ...


def describe_record(record: StoredRecord, names: list[str]) -> str | None:
    """A line for people: what a record says happened (None for bookkeeping records)."""
    f = record.fields
    act = record.action

    def who(s: int) -> str:
        return f"{names[s]} (seat {s})" if 0 <= s < len(names) else f"seat {s}"

    kind = record.kind
    if kind == R.ACTION and act is not None:
        return f"{who(act['seat'])}: {act.get('action')}"
    if kind == R.CHAT and act is not None:
        return f"{who(act['seat'])} says: {act.get('text')}"
    if kind == R.DEAL:
        return f"hand {R.shown_number(f.get('hand', 0))} is dealt"
    if kind == R.HAND_END:
        went = f.get("went_out")
        how = f"{who(went)} went out" if isinstance(went, int) else str(f.get("reason"))
        return f"hand {R.shown_number(f.get('hand', 0))} over: {how}; totals {f.get('totals')}"
    if kind == R.MATCH_END:
        return f"match over: winner team {f.get('winner')}, totals {f.get('totals')}"
    if kind == R.FORFEIT:
        return f"{who(f.get('seat', -1))} forfeits: {f.get('reason')}"
    if kind == "seat-key":
        return f"seat {f['rekey']['seat']} changes hands (stand-in or reclaim)"
    return None


def comings_and_goings(
    before: list[dict[str, Any]], after: list[dict[str, Any]], own_seat: int | None
) -> list[str]:
    """Lines for people: which other seats' players left (and why) or came back, between two of
    the host's seat summaries (``docs/wire-protocol.md``, ``seats``)."""
    lines = []
    for index, entry in enumerate(after):
        if index == own_seat or not isinstance(entry, dict):
            continue
        old = before[index] if index < len(before) and isinstance(before[index], dict) else {}
        left, was_left = entry.get("left"), old.get("left")
        who = f"{entry.get('name')} (seat {index})"
        if isinstance(left, str) and not isinstance(was_left, str):
            line = f"{who} left ({left})"
            wait = entry.get("stand_in_in")
            if isinstance(wait, int) and not isinstance(wait, bool):
                line += f"; a bot stands in after {wait} s unless they return"
            lines.append(line)
        elif left is None and isinstance(was_left, str):
            lines.append(f"{who} is back")
    return lines


class PeerSession:
    """One seat's side of the table protocol (no I/O)."""

    def __init__(
        self,
        identity: Identity,
        player: Player,
        *,
        name: str = "",
        bot: bool = False,
        password: str | None = None,
        log_file: BinaryIO | None = None,
        random_bytes: Callable[[int], bytes] = os.urandom,
        insecure_seed: int | None = None,
        seed_store: SeedStore | None = None,
    ) -> None:
        self.identity = identity
        self.player = player
        self.name = name
        self.bot = bot
        self.password = password
        self.log_file = log_file
        self.random_bytes = random_bytes
        self.insecure_seed = insecure_seed
        self.seed_store = seed_store  # keeps committed seeds until revealed, across a restart
        self.table_seeds: TableSeeds | None = None
        self.seat: int | None = None
        self.signer: SeatSigner | None = None
        self.header: Header | None = None
        self.verifier = LogVerifier()
        self.replayer: Replayer | None = None
        self.game: Game | None = None
        self.last_seq = -1
        self.view: dict[str, Any] = {}
        self.names: list[str] = []
        self.done = False
        self.problem: str | None = None  # set when the host was caught misbehaving
        self.seeds_hash = b""  # the latest seeds record's hash: the head a checkpoint names
        self.blind: BlindSeat | None = None  # at a blind-dealt table: this seat's own cards
        self.seats: list[dict[str, Any]] = []  # the host's latest seat summary

    # ------------------------------------------------------------------ outgoing
    @property
    def rules(self) -> Any:
        """The game's rule set, once seated."""
        return None if self.game is None else self.game.rules

    def hello(self) -> dict[str, Any]:
        message: dict[str, Any] = {
            "t": "hello",
            "min": wire.PROTOCOL_MIN,
            "max": wire.PROTOCOL_MAX,
            "name": self.name[: wire.MAX_NAME],
            "bot": self.bot,
            "resume": self.last_seq,
        }
        if self.password is not None:
            message["password"] = self.password
        return message

    def quit(self, reason: str) -> dict[str, Any] | None:
        """The player leaves the table: the ``bye`` to send the host (None if the session had
        already ended). The host holds the seat, then a stand-in plays it; the others are told.
        """
        if self.done:
            return None
        self.done = True
        return {"t": "bye", "reason": reason[: wire.MAX_TEXT]}

    # ------------------------------------------------------------------ incoming
    def handle(self, message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        if self.problem is not None:
            return  # the seat has left: nothing the host says is taken any more
        try:
            wire.validate(message)
        except wire.WireError as e:
            self._misbehaving(f"a malformed message: {e}")
            return
        t = message["t"]
        if t not in wire.HOST_TO_PEER:
            self._misbehaving(f"it sent a seat's message ({t!r})")
            return
        if t == "welcome":
            self._welcome(message)
        elif t == "record":
            self._record(message)
        elif t == "view":
            self.view = message["view"]
            if self.blind is not None:  # the host cannot see this seat's cards: show our own
                self.view = {**self.view, "state": self.blind.view()}
            self.player.show(self.view)
        elif t == "turn":
            self._turn(message, send)
        elif t == "seats":
            self.names = [s["name"] for s in message["seats"]]
            taken = sum(1 for s in message["seats"] if s["taken"])
            self.player.event(f"seats taken: {taken} of {len(message['seats'])}")
            for line in comings_and_goings(self.seats, message["seats"], self.seat):
                self.player.event(line)
            self.seats = message["seats"]
        elif t == "error":
            self.player.event(f"refused ({message['code']}): {message['message']}")
        elif t == "bye":
            self.done = True
            self.player.finished(message["reason"])

    def _welcome(self, message: dict[str, Any]) -> None:
        table = message["table"]
        try:
            self.game = game_from_header(str(table.get("game", CANASTA)), table["rules"])
        except (UnknownGame, KeyError) as e:
            self._misbehaving(f"the host's rules are unusable: {e}")
            return
        seat = message["seat"]
        self.names = [s.get("name", "") for s in table.get("seats", [])]
        if self.signer is None or self.seat != seat:
            self.seat = seat
            self.signer = SeatSigner(
                self.identity,
                seat,
                table["table_id"],
                message["head"],
                random_bytes=self.random_bytes,
                insecure_seed_value=self.insecure_seed,
                aseq=message["aseq"],
                seed_keeper=self._table_seeds(table["table_id"]),
            )
        else:
            self.signer.aseq = message["aseq"]  # a stand-in may have acted for this seat
        self.player.event(
            f"seated at {table.get('name')!r} as seat {seat} ({table.get('variant')})"
        )
        if table.get("deal") == "blind" and isinstance(self.game.rules, RuleSet):
            # the card points, computed once, before the first hand needs them
            card_points(labels_for_rules(self.game.rules))

    def _table_seeds(self, table_id: bytes) -> TableSeeds | None:
        if self.seed_store is not None:
            self.table_seeds = self.seed_store.for_table(table_id)
        return self.table_seeds

    def _stop_keeping_seeds(self, error: SeedStoreError) -> None:
        """The seed store failed: say so, and play on with seeds held in memory only."""
        self.player.event(f"warning: {error}; this hand's seed is kept in memory only")
        self.table_seeds = None
        if self.signer is not None:
            self.signer.seed_keeper = None
        if self.blind is not None:
            self.blind.seed_keeper = None

    def _misbehaving(self, text: str) -> None:
        """The host broke the protocol: say what, and leave (nothing it sends can be trusted)."""
        self._leave(f"the host misbehaved: {text}")

    def _leave(self, text: str) -> None:
        """Stop playing for a reason the player must hear; the seat's process exits with an
        error, and the host, seeing the seat gone, lets a stand-in take it or records a
        forfeit."""
        if self.problem is None:
            self.problem = text
        if self.done:
            return
        self.done = True
        self.player.event(text)
        self.player.finished(f"leaving the table: {text}")

    def _forget_public_seeds(self, record: StoredRecord) -> None:
        """Seeds the log has just published need no keeping any more."""
        seeds = self.table_seeds
        if seeds is None or record.kind not in (R.SEEDS, R.MATCH_END):
            return
        try:
            if record.kind == R.MATCH_END:
                seeds.forget_all()
            else:
                seeds.forget_through(int(record.fields.get("hand", -1)))
        except SeedStoreError as e:
            self.player.event(f"warning: {e}")

    def _record(self, message: dict[str, Any]) -> None:
        seq, data = message["seq"], message["data"]
        if seq <= self.last_seq:
            return  # already have it (a resend after reconnecting)
        if seq != self.last_seq + 1:
            self._misbehaving(f"record {seq} arrived after {self.last_seq}")
            return
        try:
            record = parse_stored_record(data, seq, self.header)
            if seq == 0:
                self.header = parse_header(record)
                self.verifier.set_header(self.header)
                self.replayer = Replayer(self.header)
                self.names = [s.name for s in self.header.seats]
            self.verifier.feed(record)
        except (LogError, ReplayError) as e:
            self._misbehaving(f"record {seq} fails verification: {e}")
            return
        if self.log_file is not None:
            self.log_file.write(data)
            self.log_file.flush()
        self.last_seq = seq
        if record.kind == R.SEEDS:
            self.seeds_hash = record.hash
        self._forget_public_seeds(record)
        if self.signer is not None:
            self.signer.observe(record.hash)
        if self.replayer is not None and self.problem is None:
            try:
                self.replayer.feed(record)
            except ReplayError as e:
                self._misbehaving(f"record {seq}: {e.reason}")
        self._follow_blind(record)
        line = describe_record(record, self.names)
        if line:
            self.player.event(line)

    def _follow_blind(self, record: StoredRecord) -> None:
        """At a blind-dealt table, follow the hand with this seat's own secrets and cards."""
        header, replayer = self.header, self.replayer
        if header is None or header.deal != "blind" or self.seat is None or replayer is None:
            return
        if self.problem is not None:
            return  # the record failed verification: our view does not take it
        if self.blind is None:
            self._follow_blind_start()
        assert self.blind is not None
        try:
            self.blind.observe(record.kind, record.action)
        except (BlindRefused, BlindError) as e:
            self._misbehaving(f"record {record.index}: {e}")

    def _blind_turn(self, need: str, hand: int, send: Callable[[dict[str, Any]], None]) -> None:
        blind, signer = self.blind, self.signer
        assert blind is not None and signer is not None
        if blind.lost_secrets(hand):
            self._leave(
                f"cannot play hand {R.shown_number(hand)}: this seat's secrets for it are lost "
                "(the process that drew them ended and no seed store kept them); the table "
                "records a forfeit"
            )
            return
        if need == "act":
            legal = blind.legal_actions(hand)
            if not legal:
                return  # our view of the hand is not there yet: the host prompts again
            view = {**self.view, "state": blind.view()}
            d = maybeDeferred(self.player.choose, [str(a) for a in legal], view)

            def chosen(text: str) -> None:
                if self.signer is None or self.done or self.blind is None:
                    return
                try:
                    action = self.blind.resolve(text)
                except (ValueError, IllegalAction) as e:
                    self.player.event(f"refused: {e}")
                    self._blind_turn(need, hand, send)  # ask again
                    return
                act, sig = self.signer.sign(hand, "action", **self.blind.action_fields(action))
                send({"t": "act", "act": act, "asig": sig})

            d.addCallbacks(chosen, lambda f: log.failure("choosing an action failed", f))
            return
        try:
            answer = blind.answer(hand, need)
        except SeedStoreError as e:
            self._stop_keeping_seeds(e)
            answer = blind.answer(hand, need)
        if answer is None:
            return  # our view waits for a record still on its way; the host prompts again
        type_, fields = answer
        act, sig = signer.sign(hand, type_, **fields)
        send({"t": "act", "act": act, "asig": sig})

    def _turn(self, message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        signer = self.signer
        need, hand = message["need"], message["hand"]
        if signer is None or self.problem is not None:
            return
        signer.aseq = message["aseq"]  # the host numbers what it has taken from this seat
        if self.header is not None and self.header.deal == "blind" and need != "checkpoint":
            if self.blind is None:
                self._follow_blind_start()
            self._blind_turn(need, hand, send)
            return
        if need == "commit":
            try:
                act, sig = signer.commit(hand)
            except SeedStoreError as e:
                self._stop_keeping_seeds(e)
                act, sig = signer.commit(hand)
            send({"t": "commit", "act": act, "asig": sig})
        elif need == "reveal":
            listed = getattr(self.replayer.hand, "listed", None) if self.replayer else None
            try:
                secret = signer.known_secret(hand)
            except SeedStoreError as e:
                secret = None
                self.player.event(f"warning: {e}")
            if secret is None:
                self._leave(f"cannot reveal: {SeedLost(hand)}; the table records a forfeit")
                return
            if not listed or not secret.is_published_in(listed):
                self._misbehaving("asked to reveal before the signed list holds my commitment")
                return
            act, sig, seed = signer.reveal(hand)
            send({"t": "reveal", "act": act, "asig": sig, "seed": seed})
        elif need == "act":
            legal = [str(x) for x in message.get("legal", [])]
            d = maybeDeferred(self.player.choose, legal, self.view)

            def chosen(text: str) -> None:
                if self.signer is None or self.done:
                    return
                act, sig = self.signer.action(hand, text)
                send({"t": "act", "act": act, "asig": sig})

            def failed(failure: Failure) -> None:
                log.failure("choosing an action failed", failure)

            d.addCallbacks(chosen, failed)
        elif need == "checkpoint":
            msg = message.get("msg", b"")
            reason = self._checkpoint_problem(msg, hand)
            if reason:
                self._misbehaving(f"refusing to sign hand {R.shown_number(hand)}: {reason}")
                return
            send({"t": "checkpoint", "hand": hand, "sig": signer.sign_checkpoint(msg)})

    def _follow_blind_start(self) -> None:
        """The first hand's first prompt can come before any record of the hand."""
        if self.header is not None and self.replayer is not None and self.seat is not None:
            replayer = self.replayer

            def context() -> HandContext:  # the seats' keys now (a stand-in may hold a seat)
                return HandContext(
                    replayer.match.dealer, replayer.match.minimums(), list(replayer.keys)
                )

            self.blind = BlindSeat(
                self.identity,
                self.seat,
                replayer.game,
                self.header.table,
                context,
                self.random_bytes,
                seed_keeper=self.table_seeds,
            )

    def _checkpoint_problem(self, msg: bytes, hand: int) -> str | None:
        """Why this seat will not sign the checkpoint, or None: its own replay must agree."""
        replayer = self.replayer
        if replayer is None:
            return "no log yet"
        try:
            fields = R.unpack_map(msg, "checkpoint")
        except R.MessageError as e:
            return str(e)
        result = fields.get("result")
        if fields.get("hand") != hand or not replayer.seeds_published:
            return "the hand is not finished in my log"
        if fields.get("head") != self.seeds_hash:  # a chat or seat-key record may follow it
            return "it names another log head"
        if not isinstance(result, dict) or result.get("totals") != replayer.match.scores:
            return "its totals differ from my replay"
        return None


class PeerProtocol(FrameProtocol):
    def __init__(self, session: PeerSession, factory: PeerFactory | None = None) -> None:
        self.session = session
        self.peer_factory = factory

    def connectionMade(self) -> None:  # Twisted's name
        super().connectionMade()
        if self.peer_factory is not None:
            self.peer_factory.current = self
        self.send(self.session.hello())

    def message_received(self, message: dict[str, Any]) -> None:
        self.session.handle(message, self.send)
        if self.session.done:
            self.drop()
            self._session_over()

    def connectionLost(self, reason: Failure = connectionDone) -> None:  # Twisted's name
        if self.peer_factory is not None and self.peer_factory.current is self:
            self.peer_factory.current = None
        if reason.check(TLSIdentityError) and not self.session.done:
            # not the host we meant: retrying cannot help, so stop and say why
            self.session.done = True
            self.session.problem = str(reason.value)
            self.session.player.event(f"refusing the host: {reason.value}")
            self.session.player.finished(f"connection refused: {reason.value}")
        elif not self.session.done:
            self.session.player.event("connection to the host lost; reconnecting")
        if self.session.done:
            self._session_over()

    def _session_over(self) -> None:
        if self.peer_factory is not None and self.peer_factory.over is not None:
            self.peer_factory.over()


class PeerFactory(Factory):
    def __init__(self, session: PeerSession, over: Callable[[], object] | None = None) -> None:
        self.session = session
        self.over = over  # called once the session has ended: no reconnecting after that
        self.current: PeerProtocol | None = None  # the open connection, if any

    def buildProtocol(self, addr: Any) -> PeerProtocol:  # Twisted's name
        protocol = PeerProtocol(self.session, self)
        protocol.factory = self
        return protocol


class SeatClient(ClientService):
    """A seat's connection to its host: reconnects with backoff until the session ends (the
    host's ``bye``, the match over, the seat leaving or refusing the host), then stops for good.
    """

    def __init__(
        self, endpoint: Any, session: PeerSession, *, max_delay: float = 10.0, clock: Any = None
    ) -> None:
        self.session = session
        self.peer_factory = PeerFactory(session, self._session_over)
        super().__init__(
            endpoint,
            self.peer_factory,
            retryPolicy=backoffPolicy(initialDelay=0.3, maxDelay=max_delay),
            clock=clock,
        )

    def _session_over(self) -> None:
        if self.running:
            self.stopService()

    def leave(self, reason: str) -> Deferred[None]:
        """The player leaves: say ``bye`` to the host if connected, then close the connection
        once that is written. Fires when the connection is closed. A seat whose session already
        ended (the host said bye first) just stops."""
        message = self.session.quit(reason)
        protocol = self.peer_factory.current
        if message is not None and protocol is not None and not protocol.dropped:
            protocol.send(message)
        return self.stopService()


def connect_with_retry(
    reactor: Any, endpoint: Any, session: PeerSession, *, max_delay: float = 10.0
) -> SeatClient:
    """Connect, and reconnect with exponential backoff until the session ends."""
    service = SeatClient(endpoint, session, max_delay=max_delay, clock=reactor)
    service.startService()
    return service


__all__ = [
    "PeerFactory",
    "PeerProtocol",
    "PeerSession",
    "Player",
    "SeatClient",
    "comings_and_goings",
    "connect_with_retry",
    "describe_record",
]
