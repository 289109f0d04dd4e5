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
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TypeVar

from twisted.application.internet import ClientService, backoffPolicy
from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.protocol import Factory, connectionDone
from twisted.logger import Logger
from twisted.python.failure import Failure

from ..errors import IllegalAction
from ..games import CANASTA, Game, UnknownGame, game_from_header
from ..hand import HandContext
from ..i18n import N_, Translator, translator
from ..identity import Identity
from ..log import Header, StoredRecord
from ..log import records as R
from ..log.exposure import write_exposure
from ..log.replay import Replayer
from ..log.seed_store import SeedStore, SeedStoreError, TableSeeds
from ..reasons import reason_sentence
from ..safe_text import safe_text
from ..table.blind_seat import Background
from ..table.seat import Decision, SeatAgent, SeatProblem
from ..table.signer import SeatSigner
from ..timing import NO_TIMING, Timing
from . import wire
from .framing import FrameProtocol
from .log_copy import HostFault, LogCopy, LostRecord
from .read_turns import ReadTurns, read_turns
from .tls import TLSIdentityError

log = Logger()

# The host's refusals of a ``hello`` that asking again cannot change (``docs/wire-protocol.md``,
# "Codes"): the seat stops and says why instead of reconnecting. Any other refusal, and a lost
# connection, is worth another try.
FINAL_REFUSALS = frozenset(
    {"version-mismatch", "bad-password", "table-full", "seat-is-local", "locked-out"}
)

T = TypeVar("T")


class Player(Protocol):
    """Who sits at the seat: a person at a terminal, or a bot."""

    def show(self, view: dict[str, Any]) -> None: ...

    def event(self, text: str) -> None: ...

    def choose(self, legal: list[str], view: dict[str, Any]) -> Deferred[str] | str: ...

    def finished(self, reason: str) -> None: ...


class SessionObserver(Protocol):
    """Who follows the session in detail for a person's client (``ui.table_model``): the
    verified records, the host's refusals with their codes, the seats' summary."""

    def welcome(self, game: Game, seat: int | None, names: list[str]) -> None: ...

    def record(self, record: StoredRecord) -> None: ...

    def refused(
        self,
        code: str,
        message: str,
        tried: str | None = None,
        args: Mapping[str, str | int] | None = None,
        variant: str | None = None,
    ) -> None: ...

    def seat_summary(
        self, seats: list[dict[str, Any]], watchers: list[str] | None = None
    ) -> None: ...


# Asked before a seat takes its first step in a new hand (after a hand it saw): a Deferred that
# fires when the person is ready for the next hand (the score sheet read), or None to go on.
HandGate = Callable[[int], "Deferred[None] | None"]


class Audience(Protocol):
    """Whoever is told what happens at the table: a seat's player, or a watcher."""

    def event(self, text: str) -> None: ...

    def finished(self, reason: str) -> None: ...


class HostSession(Protocol):
    """A peer's side of one host, sans-io (a seat's ``PeerSession``, a watcher's
    ``SpectatorSession``): what the thin Twisted layer below drives and reconnects."""

    done: bool  # the session is over: no reconnecting
    problem: str | None  # why it ended badly, if it did

    @property
    def player(self) -> Audience: ...

    @property
    def timing(self) -> Timing: ...

    def hello(self) -> dict[str, Any]: ...

    def handle(self, message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None: ...

    def quit(self, reason: str) -> dict[str, Any] | None: ...


def describe_record(
    record: StoredRecord, names: list[str], tr: Translator | None = None
) -> str | None:
    """A line for people, in their language (``tr``; English without): what a record says
    happened (None for bookkeeping records). Names, chats and reasons in it came from others:
    the line is safe for a terminal (``safe_text``). Moves stay in their canonical text."""
    line = _record_line(record, names, tr or translator("en"))
    return None if line is None else safe_text(line)


def _record_line(record: StoredRecord, names: list[str], tr: Translator) -> str | None:
    f = record.fields
    act = record.action
    _ = tr.gettext

    def who(s: int) -> str:
        seat = _("seat {seat}").format(seat=s)
        return (
            _("{name} ({seat})").format(name=names[s], seat=seat) if 0 <= s < len(names) else seat
        )

    kind = record.kind
    if kind == R.ACTION and act is not None:
        return f"{who(act['seat'])}: {act.get('action')}"
    if kind == R.CHAT and act is not None:
        return _("{who} says: {text}").format(who=who(act["seat"]), text=act.get("text"))
    hand = R.shown_number(f.get("hand", 0))
    if kind == R.DEAL:
        return _("hand {number} is dealt").format(number=hand)
    if kind == R.HAND_END:
        went = f.get("went_out")
        how = (
            _("{name} went out").format(name=who(went))
            if isinstance(went, int)
            else str(f.get("reason"))
        )
        return _("hand {number} over: {how}; totals {totals}").format(
            number=hand, how=how, totals=f.get("totals")
        )
    if kind == R.MATCH_END:
        return _("match over: winner team {team}, totals {totals}").format(
            team=f.get("winner"), totals=f.get("totals")
        )
    if kind == R.FORFEIT:
        return _("{who} forfeits: {reason}").format(
            who=who(f.get("seat", -1)), reason=f.get("reason")
        )
    if kind == R.MATCH_STOP:
        hands = int(f.get("hands") or 0)
        played = tr.ngettext("{n} hand", "{n} hands", hands).format(n=hands)
        return _("match stopped ({reason}) after {played}, totals {totals}").format(
            reason=f.get("reason"), played=played, totals=f.get("totals")
        )
    if kind == "seat-key":
        return _("seat {seat} changes hands (stand-in or reclaim)").format(seat=f["rekey"]["seat"])
    if kind == R.SEAT_EVENT:
        return _describe_seat_event(f, who, tr)
    return None


# What a seat-event record says, for the events the ``seats`` messages do not already tell
# people (who left, who came back: ``comings_and_goings``).
_SEAT_EVENT_TEXT = {
    "stand-in": N_("the host says {who} is played by a bot stand-in from now on"),
    "reclaimed": N_("the host says {who} is played by its player again"),
}


def _describe_seat_event(
    fields: dict[str, Any], who: Callable[[int], str], tr: Translator
) -> str | None:
    """The host's word on a seat's connection (``seat-event``), as the host states it."""
    event = fields.get("event")
    if event == "resumed":
        return tr.gettext("the host says it restarted and resumed the table from its log")
    text = _SEAT_EVENT_TEXT.get(str(event))
    return None if text is None else tr.gettext(text).format(who=who(fields["seat"]))


def comings_and_goings(
    before: list[dict[str, Any]],
    after: list[dict[str, Any]],
    own_seat: int | None,
    tr: Translator | None = None,
) -> list[str]:
    """Lines for people: which other seats' players left (and why) or came back, between two of
    the host's seat summaries (``docs/wire-protocol.md``, ``seats``)."""
    _ = (tr or translator("en")).gettext
    lines = []
    for index, entry in enumerate(after):
        if index == own_seat or not isinstance(entry, dict):
            continue
        old = before[index] if index < len(before) and isinstance(before[index], dict) else {}
        left, was_left = entry.get("left"), old.get("left")
        seat = _("seat {seat}").format(seat=index)
        who = _("{name} ({seat})").format(name=entry.get("name"), seat=seat)
        if isinstance(left, str) and not isinstance(was_left, str):
            line = _("{who} left ({reason})").format(who=who, reason=left)
            wait = entry.get("stand_in_in")
            if isinstance(wait, int) and not isinstance(wait, bool):
                line += "; " + _("a bot stands in after {seconds} s unless they return").format(
                    seconds=wait
                )
            lines.append(safe_text(line))
        elif left is None and isinstance(was_left, str):
            lines.append(safe_text(_("{who} is back").format(who=who)))
    return lines


def watchers_coming_and_going(
    before: list[str], after: list[str], tr: Translator | None = None
) -> list[str]:
    """Lines for people: who started or stopped watching the table, between two of the host's
    lists of watchers (``seats.watchers``; names may repeat)."""
    _ = (tr or translator("en")).gettext
    arrived, gone = list(after), []
    for name in before:
        if name in arrived:
            arrived.remove(name)
        else:
            gone.append(name)
    lines = [_("{name} is watching").format(name=name) for name in arrived]
    lines += [_("{name} stopped watching").format(name=name) for name in gone]
    return [safe_text(line) for line in lines]


def reader_translator(player: Any) -> Translator:
    """The language of the person at this seat: their client's translator (English for a bot
    or a client without one)."""
    tr = getattr(player, "tr", None)
    return tr if isinstance(tr, Translator) else translator("en")


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
        exposure_file: Path | None = None,
        random_bytes: Callable[[int], bytes] = os.urandom,
        insecure_seed: int | None = None,
        seed_store: SeedStore | None = None,
        timing: Timing = NO_TIMING,
        observer: SessionObserver | None = None,
        hand_gate: HandGate | None = None,
        background: Background | None = None,
    ) -> None:
        self.identity = identity
        self._own_key = identity.public_key  # raw: the key this seat signs its messages with
        # runs a seat's work ahead beside the check of the record it needs (another thread: the
        # curve arithmetic gives the GIL back); None: the work is done when it is asked for
        self.background = background
        self.observer = observer  # a person's client following the session in detail
        self.hand_gate = hand_gate  # holds the next hand until the person is ready
        self._started_hand = -1  # the latest hand this seat took a step in
        self._held: tuple[dict[str, Any], Callable[[dict[str, Any]], None]] | None = None
        self.timing = timing  # told of sends, receipts and record checking (``..timing``)
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
        self.agent: SeatAgent | None = None  # the seat's own driver, once seated
        self.copy = LogCopy(log_file)  # the seat's own verified copy of the host's log
        self.game: Game | None = None
        self.view: dict[str, Any] = {}
        self.names: list[str] = []
        self.done = False
        self.problem: str | None = None  # set when the host was caught misbehaving
        # the seat's signed exposure of a wrong key sealed to it (blind-v2), kept: with this
        # seat's copy of the log it names the sender even if the host ignores it
        # (``log.replay.exposure_verdict``, docs/blind-proofs.md section 10)
        self.exposure: dict[str, Any] | None = None
        # where the exposure is kept durably beside ``log_file`` (``log.exposure``), so that it
        # outlives the process: ``canasta-replay audit`` finds it next to the log
        self.exposure_file = exposure_file
        self.seats: list[dict[str, Any]] = []  # the host's latest seat summary
        self.watchers: list[str] = []  # who watches the table, as the host last said
        # Seconds one call may spend checking a hand's records when its seeds come (None: all
        # at once). The connection layer sets it (:meth:`spread_checks`) and then calls
        # :meth:`work` while the session is :attr:`busy`: a seat's whole hand, checked in one
        # reactor turn, would hold up every other connection of its process for tens of ms.
        self.check_slice: float | None = None
        # while a hand's records are checked in slices: the seeds record (the rest of its
        # handling waits too) with where to answer it, and the messages that came meanwhile,
        # handled in order after it
        self._checking: tuple[StoredRecord, Callable[[dict[str, Any]], None]] | None = None
        #: A hand's records are being checked in slices: messages wait (:meth:`work`).
        self.busy = False
        # an ``ahead`` acted on since the last record: an honest host sends one a stage, before
        # its record, so a second one (another deck each time) would only restart our work
        self._ahead_taken = False
        self._waiting: deque[tuple[dict[str, Any], Callable[[dict[str, Any]], None]]] = deque()

    # ------------------------------------------------------------------ the seat's log
    @property
    def header(self) -> Header | None:
        return self.copy.header

    @property
    def replayer(self) -> Replayer | None:
        return self.copy.replayer

    @property
    def last_seq(self) -> int:
        """The number of the last record this seat holds (-1: none)."""
        return self.copy.last_seq

    # ------------------------------------------------------------------ outgoing
    @property
    def signer(self) -> SeatSigner | None:
        """The seat's signer (its key and message numbering), once seated."""
        return None if self.agent is None else self.agent.signer

    def chat(self, text: str) -> dict[str, Any] | None:
        """A chat message to send the host (None before the seat is taken)."""
        if self.agent is None:
            return None
        hand = self.view.get("hand_no", 0)
        return self._signed_here(
            self.agent.chat(max(0, hand if isinstance(hand, int) else 0), text[: R.MAX_CHAT_LENGTH])
        )

    def _signed_here(self, message: dict[str, Any]) -> dict[str, Any]:
        """A message this seat signed, on its way to the host: the record that carries it
        exactly as signed needs no second check of the signature (``LogCopy.signed_here``)."""
        act, asig = message.get("act"), message.get("asig")
        if isinstance(act, bytes) and isinstance(asig, bytes):
            self.copy.signed_here(self._own_key, act, asig)
        return message

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
    def spread_checks(self, seconds: float) -> None:
        """Check a hand's held records in slices of about ``seconds``; the caller then calls
        :meth:`work` (in a later reactor turn) as long as :attr:`busy`."""
        self.check_slice = seconds

    def work(self) -> None:
        """Check a further slice of the hand's held records; once all are, finish the seeds
        record and handle the messages that waited, in order."""
        checking = self._checking
        if checking is None:
            return
        if self.problem is None:
            try:
                if not self.copy.catch_up(self._slice_left()):
                    return
            except HostFault as e:
                self._misbehaving(e.text)
        self._checking, self.busy = None, False
        self._record_checked(*checking)
        waiting = self._waiting
        while waiting and not self.busy:
            message, send = waiting.popleft()
            self._handle(message, send)

    def _slice_left(self) -> Callable[[], bool] | None:
        """Whether the current slice has time left (None: no slices)."""
        if self.check_slice is None:
            return None
        end = time.perf_counter() + self.check_slice
        return lambda: time.perf_counter() < end

    def handle(self, message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        self.timing.mark("seat.receive", message=message, session=self)
        if self.busy:
            self._waiting.append((message, send))  # after the hand's check, in order
            return
        self._handle(message, send)

    def _handle(self, message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
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
            self._welcome(message, send)
        elif t == "record":
            with self.timing.span("seat.record", seq=message["seq"]):
                self._record(message, send)
        elif t == "view":
            self.view = message["view"]
            own = None if self.agent is None else self.agent.view()
            if own is not None:  # the host cannot see this seat's cards: show our own view
                self.view = {**self.view, "state": own}
            self.player.show(self.view)
        elif t == "turn":
            self._turn(message, send)
        elif t == "seats":
            self.names = [s["name"] for s in message["seats"]]
            taken = sum(1 for s in message["seats"] if s["taken"])
            tr = reader_translator(self.player)
            self.player.event(
                tr.gettext("seats taken: {taken} of {seats}").format(
                    taken=taken, seats=len(message["seats"])
                )
            )
            for line in comings_and_goings(self.seats, message["seats"], self.seat, tr):
                self.player.event(line)
            watchers = message.get("watchers", [])
            for line in watchers_coming_and_going(self.watchers, watchers, tr):
                self.player.event(line)
            self.seats, self.watchers = message["seats"], watchers
            if self.observer is not None:
                self.observer.seat_summary(self.seats, list(watchers))
        elif t == "ahead":
            with self.timing.span("seat.ahead"):
                self._ahead(message["act"])
        elif t == "ping":
            send({"t": "pong"})  # the host checks that a seated peer is still there
        elif t == "error":
            refusal = safe_text(f"refused ({message['code']}): {message['message']}")
            tr = reader_translator(self.player)
            worded = reason_sentence(
                message["code"], message.get("args"), message.get("variant"), tr.gettext
            )
            said = worded if worded is not None else message["message"]
            self.player.event(
                safe_text(
                    tr.gettext("refused ({code}): {reason}").format(
                        code=message["code"], reason=said
                    )
                )
            )
            if self.observer is not None:
                # the parameters (a newer host's) let the client word it in its own language
                self.observer.refused(
                    message["code"],
                    message["message"],
                    args=message.get("args"),
                    variant=message.get("variant"),
                )
            if self._refused_for_good(message["code"]):
                self._leave(f"the host {refusal}")
        elif t == "bye":
            self.done = True
            self.player.finished(message["reason"])

    def _ahead(self, act: bytes) -> None:
        """Another seat's blind-v2 stage output as it reached the host, before the host checked
        and journaled it (wire ``ahead``): start this seat's own next stage on it if it is the
        input (used only once its record has checked), and check it now, beside the host's own
        check, so that its record, bringing exactly these bytes, is taken without a second
        check. A hint only: nothing is sent or refused on it; its record decides. At most one
        is acted on between two records (a hostile host that sends one deck after another would
        otherwise make the seat start its stage, in a thread, for each)."""
        replayer = self.copy.replayer
        if self.agent is None or self.problem is not None or replayer is None:
            return
        if self._ahead_taken:
            return
        try:
            fields = R.unpack_map(act, "a stage output ahead of its record")
        except R.MessageError:
            return
        seat = fields.get("seat")
        if (
            fields.get("type") != "stage"
            or type(seat) is not int
            or fields.get("table") != replayer.table
            or fields.get("hand") != replayer.hand_no
        ):
            return
        self._ahead_taken = True
        if self.background is not None:
            self.agent.work_ahead("stage", fields, self.background)
        replayer.hand.check_ahead(seat, "stage", fields)

    def _refused_for_good(self, code: str) -> bool:
        """Whether the host refused this seat's ``hello`` so that reconnecting would be refused
        again. ``seat-is-local`` also answers a seated seat's message while a stand-in still
        holds the seat, which passes: it is final only before the seat was ever taken."""
        if code == "seat-is-local":
            return self.agent is None
        return code in FINAL_REFUSALS

    def _welcome(self, message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        lost = self.copy.lost_since(message["head"])
        if lost is not None:
            # the host's log ends at a record this seat holds, short of this seat's last one
            self._fork(lost, send)
            return
        table = message["table"]
        try:
            self.game = game_from_header(str(table.get("game", CANASTA)), table["rules"])
        except (UnknownGame, KeyError) as e:
            self._misbehaving(f"the host's rules are unusable: {e}")
            return
        seat = message["seat"]
        self.names = [s.get("name", "") for s in table.get("seats", [])]
        if self.agent is None or self.seat != seat:
            self.seat = seat
            try:
                self.agent = SeatAgent(
                    self.identity,
                    seat,
                    self.game,
                    table["table_id"],
                    message["head"],
                    table["deal"],
                    self._hand_context,
                    aseq=message["aseq"],
                    random_bytes=self.random_bytes,
                    insecure_seed_value=self.insecure_seed,
                    seed_keeper=self._table_seeds(table["table_id"]),
                    checkpoint_check=self._checkpoint_problem,
                    warn=self._seed_store_failed,
                )
            except ValueError as e:
                self._misbehaving(f"the host's table is unusable: {e}")
                return
        else:
            self.agent.aseq = message["aseq"]  # a stand-in may have acted for this seat
        if self.background is not None and self.copy.replayer is None:
            # a table this seat holds nothing of yet: its first hand is next, and the seat's own
            # part of it may be worked out while the others take their seats
            self.agent.work_before(0, self.background)
        self.player.event(
            reader_translator(self.player)
            .gettext("seated at {table!r} as seat {seat} ({variant})")
            .format(table=table.get("name"), seat=seat, variant=table.get("variant"))
        )
        if self.observer is not None:
            self.observer.welcome(self.game, seat, list(self.names))

    def _another_hand(self) -> bool:
        """Whether the table deals another hand, as far as this seat's log says: the match is
        not over, and the table's limit of hands (its header's ``max_hands``) not reached."""
        replayer = self.replayer
        if replayer is None:
            return True
        if replayer.match.result is not None:
            return False
        config = replayer.header.fields.get("table_config")
        limit = config.get("max_hands") if isinstance(config, dict) else None
        return not (type(limit) is int and replayer.match.hands_played >= limit)

    def _hand_context(self) -> HandContext:
        """The hand about to start, as this seat's verified log says: the dealer, the minimums,
        each seat's key now (a stand-in may hold a seat)."""
        replayer = self.replayer
        if replayer is None:
            raise SeatProblem("prompted for a hand before the log's header", host_fault=True)
        return HandContext(replayer.match.dealer, replayer.match.minimums(), list(replayer.keys))

    def _table_seeds(self, table_id: bytes) -> TableSeeds | None:
        if self.seed_store is not None:
            self.table_seeds = self.seed_store.for_table(table_id)
        return self.table_seeds

    def _seed_store_failed(self, text: str) -> None:
        """The seed store failed: say so; the seat plays on with seeds held in memory only."""
        self.player.event(text)
        self.table_seeds = None

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
        said = reader_translator(self.player).gettext("leaving the table: {reason}")
        self.player.finished(said.format(reason=text))

    def _keep_exposure(self, exposure: dict[str, Any]) -> None:
        """Write the seat's signed exposure beside its copy of the log, durably, before it is
        sent: a host that ignores it cannot make it vanish with the seat's process."""
        if self.exposure_file is None:
            return
        try:
            write_exposure(
                self.exposure_file, exposure["act"], exposure["asig"], log_file=self.copy.log_file
            )
        except OSError as e:
            warning = reader_translator(self.player).gettext("warning: {problem}")
            self.player.event(warning.format(problem=f"{self.exposure_file}: {e.strerror or e}"))

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
            warning = reader_translator(self.player).gettext("warning: {problem}")
            self.player.event(warning.format(problem=e))

    def _fork(self, seq: int, send: Callable[[dict[str, Any]], None]) -> None:
        """The host's log lost (or contradicts) record ``seq`` of this seat's copy, which the
        host signed and sent: show the host the record, and leave. The match cannot go on from
        a log that rewrites what was played; this seat's copy keeps it."""
        evidence = self.copy.evidence(seq)
        if evidence is not None:
            send({"t": "fork", "record": evidence})
        self._leave(
            f"the host's log has lost record {seq}, which the host signed and sent this seat "
            f"(this seat's copy holds records 0 to {self.last_seq}): a crash cut its log back, "
            "or an older copy replaced it. The match cannot go on from that log; keep this "
            "seat's copy of it"
        )

    def _record(self, message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        deal = None if self.agent is None else self.agent.deal_mode
        try:
            record = self.copy.take(message["seq"], message["data"], deal)
        except LostRecord as e:
            self._fork(e.seq, send)  # the host now says something else was a record it sent
            return
        except HostFault as e:
            self._misbehaving(e.text)
            return
        if record is None:
            return  # a resend of a record this seat holds
        self._ahead_taken = False  # the next stage may come ahead of its record
        if record.index == 0:
            self.names = self.copy.names
        self._forget_public_seeds(record)
        if self.problem is None:
            if self.agent is not None and self.background is not None:
                # used only once it checks
                self.agent.work_ahead(record.kind, record.action, self.background)
            try:
                self.copy.replay(record, catch_up_later=self.check_slice is not None)
            except HostFault as e:
                self._misbehaving(e.text)
            replayer = self.copy.replayer
            if record.kind == R.SEEDS and replayer is not None and replayer.catching_up:
                self._checking, self.busy = (record, send), True  # held records: ``work``
                self.work()  # a first slice now
                return
        self._record_checked(record, send)

    def _record_checked(self, record: StoredRecord, send: Callable[[dict[str, Any]], None]) -> None:
        """A record taken and checked (with its hand's held records): the seat follows it."""
        if self.agent is not None and self.problem is None:
            try:
                self.agent.observe(record)
            except SeatProblem as e:
                self._misbehaving(f"record {record.index}: {e.text}")
            exposure = self.agent.exposure() if self.problem is None else None
            if exposure is not None:  # a wrong key sealed to this seat: it shows the host now
                self.exposure = exposure
                self._keep_exposure(exposure)
                send(self._signed_here(exposure))
        if self.observer is not None:
            self.observer.record(record)
        line = describe_record(record, self.names, reader_translator(self.player))
        if line:
            self.player.event(line)

    def _held_for_next_hand(
        self, message: dict[str, Any], send: Callable[[dict[str, Any]], None]
    ) -> bool:
        """Whether this prompt waits for the person to be ready for its hand (``hand_gate``):
        the first step of a hand after one this seat took part in. A prompt that comes while
        one waits replaces it; the latest is answered once the person is ready."""
        if self._held is not None:
            self._held = (message, send)
            return True
        hand = message["hand"]
        if not isinstance(hand, int) or hand <= self._started_hand:
            return False
        first = self._started_hand < 0
        self._started_hand = hand
        if first or self.hand_gate is None or message["need"] in ("checkpoint", "wait"):
            return False
        waiting = self.hand_gate(hand)
        if waiting is None:
            return False
        self._held = (message, send)

        def ready(_: object) -> None:
            held, self._held = self._held, None
            if held is not None and not self.done:
                self._turn(*held)

        waiting.addCallback(ready)
        return True

    def _turn(self, message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
        agent = self.agent
        if agent is None or self.problem is not None:
            return
        agent.aseq = message["aseq"]  # the host numbers what it has taken from this seat
        if self._held_for_next_hand(message, send):
            return
        try:
            reply = agent.reply(message["need"], message["hand"], message)
        except SeatProblem as e:
            (self._misbehaving if e.host_fault else self._leave)(e.text)
            return
        if reply is None:
            return  # the seat's view waits for a record still on its way; the host asks again
        if not isinstance(reply, Decision):
            send(self._signed_here(reply))
            if (
                message["need"] == "checkpoint"
                and self.background is not None
                and self._another_hand()
            ):  # the hand is over: the next one's own part, while the seats sign and read
                agent.work_before(message["hand"] + 1, self.background)
            return
        view = self.view if reply.view is None else {**self.view, "state": reply.view}
        d = maybeDeferred(self.player.choose, reply.legal, view)

        def chosen(text: str) -> None:
            if self.agent is not agent or self.done:
                return
            try:
                answer = agent.act(reply.hand, text)
            except (ValueError, IllegalAction) as e:
                tr = reader_translator(self.player)
                said = str(e)
                if isinstance(e, IllegalAction):
                    said = reason_sentence(e.code, e.params, e.variant, tr.gettext) or said
                self.player.event(tr.gettext("refused: {reason}").format(reason=said))
                if self.observer is not None:
                    if isinstance(e, IllegalAction):
                        self.observer.refused(e.code, str(e), text, e.params, e.variant)
                    else:
                        self.observer.refused(getattr(e, "code", "bad-action"), str(e), text)
                self._turn(message, send)  # ask again
                return
            send(self._signed_here(answer))

        def failed(failure: Failure) -> None:
            log.failure("choosing an action failed", failure)

        d.addCallbacks(chosen, failed)

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
        if fields.get("head") != self.copy.seeds_hash:  # a chat or seat-key record may follow it
            return "it names another log head"
        if not isinstance(result, dict) or result.get("totals") != replayer.match.scores:
            return "its totals differ from my replay"
        return None


# Seconds a seat spends checking a hand's held records in one reactor turn when the hand's seeds
# come (then the next slice in the next turn): the whole hand at once took ~20 ms a seat.
CHECK_SLICE = 0.002
# A prompt's bytes in a frame (``wire.encode`` of ``{"t": "turn", ...}``: msgpack's short strings).
_PROMPT = b"\xa1t\xa4turn"


class PeerProtocol(FrameProtocol):
    """One connection to the host, for a seat or a watcher: its session says hello, takes each
    message, and says when it is over.

    It reads in turns with the process's other connections (``read_turns``): once the
    process's share of a reactor iteration is spent, it stops reading until its turn comes in a
    later one. A seat's session checks a hand's records in slices, one a turn; meanwhile the
    connection reads nothing more (the host's messages wait, in order)."""

    def __init__(self, session: HostSession, factory: PeerFactory | None = None) -> None:
        self.session = session
        self.peer_factory = factory
        # a seat's session checks a hand's records in slices, one a reactor turn (a watcher's
        # checks them at once)
        self.checking = session if isinstance(session, PeerSession) else None
        # the seat sent the host something it answers with a record or an error (a move):
        # the connection goes first when turns are given
        self.awaiting = False
        self._turns: ReadTurns | None = None
        self._granted = False  # its turn: the next message is handled, share or not
        # the buffer last searched for a prompt, and whether it held one: every iteration sorts
        # the waiting connections by urgency, and searching each one's unread bytes every time
        # was 8 % of the seats' process at 100 tables (bench_table, cProfile)
        self._searched: bytes | None = None
        self._prompt_held = False
        if self.checking is not None:
            self.checking.spread_checks(CHECK_SLICE)

    def connectionMade(self) -> None:  # Twisted's name
        super().connectionMade()
        self.turns.join(self)
        if self.peer_factory is not None:
            self.peer_factory.current = self
        self.send(self.session.hello())

    def send(self, message: Mapping[str, Any]) -> None:
        session = self.session
        if message.get("t") not in ("hello", "pong", "bye"):
            self.awaiting = True
            self.turns.end_share()
        with session.timing.span(
            "seat.send", message=message, session=session, transport=self.transport
        ):
            super().send(message)

    # ------------------------------------------------------------------ reading in turns
    @property
    def turns(self) -> ReadTurns:
        if self._turns is None:
            self._turns = read_turns(self._clock())
        return self._turns

    @property
    def urgency(self) -> int:
        """0: the seat waits for the host's answer to its move; 1: it holds a prompt (the bytes
        of ``"t": "turn"``; a record's data that happens to hold them only gets the connection
        an earlier turn); 2: neither (``read_turns``)."""
        if self.awaiting:
            return 0
        held = self._unprocessed
        if held is not self._searched:  # bytes do not change: a buffer is searched once
            self._searched, self._prompt_held = held, _PROMPT in held
        return 1 if self._prompt_held else 2

    def dataReceived(self, data: bytes) -> None:  # Twisted's name
        if not self.paused and not self._granted and not self.turns.has_room():
            self._wait_turn()  # kept, unread, for a later turn
        super().dataReceived(data)

    def stringReceived(self, frame: bytes) -> None:  # Twisted's name
        turns = self.turns
        start = turns.timer()
        self._granted = False
        super().stringReceived(frame)
        turns.spend(turns.timer() - start)
        if not self.paused and (self._checking_held() or not turns.has_room()):
            self._wait_turn()

    def message_received(self, message: dict[str, Any]) -> None:
        if message.get("t") in ("record", "error"):
            self.awaiting = False
        self.session.handle(message, self.send)
        if self.session.done:
            self._session_over_here()

    def _checking_held(self) -> bool:
        return self.checking is not None and self.checking.busy

    def _wait_turn(self) -> None:
        if self.dropped or self.transport is None:
            return
        self.pauseProducing()  # what comes meanwhile waits in the transport and in our buffer
        self.turns.wait(self)

    def take_turn(self) -> None:
        """This connection's turn (``read_turns``): a slice of the hand's check, or else the
        messages it holds while the process's share of the iteration lasts."""
        if self.dropped or self.transport is None or self.session.done:
            return
        if self._checking_held():
            assert self.checking is not None
            turns = self.turns
            start = turns.timer()
            self.checking.work()
            turns.spend(turns.timer() - start)
            if self.session.done:
                self._session_over_here()
                return
            if self._checking_held():
                turns.wait(self)
                return
        self._granted = True  # a turn handles one message at least
        self.resumeProducing()  # and what else it holds, until the share is spent
        self._granted = False

    def _session_over_here(self) -> None:
        self.drop()
        self._session_over()

    def _clock(self) -> Any:
        if self.peer_factory is not None and self.peer_factory.clock is not None:
            return self.peer_factory.clock
        from twisted.internet import reactor

        return reactor

    def connectionLost(self, reason: Failure = connectionDone) -> None:  # Twisted's name
        if self._turns is not None:
            self._turns.forget(self)
        if self.peer_factory is not None and self.peer_factory.current is self:
            self.peer_factory.current = None
        if reason.check(TLSIdentityError) and not self.session.done:
            # not the host we meant: retrying cannot help, so stop and say why
            self.session.done = True
            self.session.problem = str(reason.value)
            _ = reader_translator(self.session.player).gettext
            self.session.player.event(
                _("refusing the host: {problem}").format(problem=reason.value)
            )
            self.session.player.finished(
                _("connection refused: {problem}").format(problem=reason.value)
            )
        elif not self.session.done:
            _ = reader_translator(self.session.player).gettext
            self.session.player.event(_("connection to the host lost; reconnecting"))
        if self.session.done:
            self._session_over()

    def _session_over(self) -> None:
        if self.peer_factory is not None and self.peer_factory.over is not None:
            self.peer_factory.over()


class PeerFactory(Factory):
    def __init__(
        self,
        session: HostSession,
        over: Callable[[], object] | None = None,
        clock: Any = None,
    ) -> None:
        self.session = session
        self.over = over  # called once the session has ended: no reconnecting after that
        self.clock = clock  # schedules a seat's next slice of checking (None: the reactor)
        self.current: PeerProtocol | None = None  # the open connection, if any

    def buildProtocol(self, addr: Any) -> PeerProtocol:  # Twisted's name
        protocol = PeerProtocol(self.session, self)
        protocol.factory = self
        return protocol


class SeatClient(ClientService):
    """A seat's (or a watcher's) connection to its host: reconnects with backoff until the
    session ends (the host's ``bye``, the match over, the seat leaving or refusing the host), then
    stops for good.
    """

    def __init__(
        self, endpoint: Any, session: HostSession, *, max_delay: float = 10.0, clock: Any = None
    ) -> None:
        self.session = session
        self.peer_factory = PeerFactory(session, self._session_over, clock)
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


def in_a_thread(work: Callable[[], T]) -> Callable[[], T]:
    """A :data:`Background` that runs ``work`` in a thread of its own (a seat's next stage,
    worked out while the reactor's thread checks its input: both spend most of their time in
    libsecp256k1, outside the GIL; or its part of the next hand); the getter waits for it."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as e:  # given to whoever asks for the result
            future.set_exception(e)

    threading.Thread(target=run, name="canasta-stage-ahead", daemon=True).start()
    return future.result


def connect_with_retry(
    reactor: Any, endpoint: Any, session: HostSession, *, max_delay: float = 10.0
) -> SeatClient:
    """Connect, and reconnect with exponential backoff until the session ends."""
    service = SeatClient(endpoint, session, max_delay=max_delay, clock=reactor)
    service.startService()
    return service


__all__ = [
    "Audience",
    "HandGate",
    "HostSession",
    "PeerFactory",
    "PeerProtocol",
    "PeerSession",
    "Player",
    "SeatClient",
    "SessionObserver",
    "comings_and_goings",
    "connect_with_retry",
    "describe_record",
    "in_a_thread",
    "reader_translator",
    "watchers_coming_and_going",
]
