"""The host's authoritative table, sans-io: seats' signed messages in, log records out.

``HostTable`` owns the match, the current hand (one :class:`~canasta_net.hand.HandProtocol`, of
the table's deal mode) and the log writer. Every accepted message becomes one or more records,
each written and flushed by the writer before ``submit`` returns them: the network layer then
sends each seat its redacted copy (journal first, then send). A refused message raises
:class:`TableError` with a stable code and changes nothing.

The table's lifecycle is an explicit state machine; the hand says which dealing phase it is in::

    COMMITTING --the hand's deal begins--> REVEALING --the deal is done--> PLAYING --hand over-->
    CHECKPOINTING --all signatures--> COMMITTING (next hand) or OVER
    (a forfeit, or a violation the hand's end check finds, ends the match: OVER; so does a stop
    by agreement, ``stop``, from any phase)
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, BinaryIO

from .. import __version__
from ..canasta.rules import RuleSet
from ..games import Game, GameMatch, canasta_game
from ..hand import HAND_PROTOCOLS, Entry, HandProtocol, HandRefused, HandSetup, Violation, new_hand
from ..identity import BadSignature, Identity, verify
from ..log import RECORD_SIGNATURE_KIND as RECORD_KIND
from ..log import (
    SEAT_KEY_KIND,
    LogError,
    LogFormatError,
    LogVerifier,
    LogWriter,
    RecordInfo,
    decode_log_map,
    iter_records,
    parse_stored_record,
    record_hash,
)
from ..log import records as R
from ..log.format import MAX_EVENT_REASON, TIMED_FORMAT
from ..timing import NO_TIMING, Timing

ACTION_KIND = "seat-action"
CHECKPOINT_KIND = "checkpoint"


class TablePhase(StrEnum):
    COMMITTING = "committing"
    REVEALING = "revealing"
    PLAYING = "playing"
    CHECKPOINTING = "checkpointing"
    OVER = "over"


class TableError(ValueError):
    """A seat's message was refused; ``code`` is stable and the table is unchanged."""

    def __init__(
        self,
        code: str,
        message: str,
        seat: int | None = None,
        params: Mapping[str, str | int] | None = None,
        variant: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.seat = seat
        # the engine's parameters of a refused move (None: not the engine's refusal)
        self.params = params
        self.variant = variant


@dataclass(frozen=True)
class SeatEntry:
    name: str
    key: bytes
    bot: bool = False


def header_fields(
    game: Game,
    table_id: bytes,
    seats: Sequence[SeatEntry],
    host_seat: int,
    deal_mode: str,
    insecure: bool,
    created: int,
    first_dealer: int,
) -> dict[str, Any]:
    return {
        "software": f"canasta-net {__version__}",
        "table": table_id,
        "game": game.kind,
        "variant": game.name,
        "rules": game.rules_dict(),
        "seats": [{"name": s.name, "key": s.key, "bot": s.bot} for s in seats],
        "host": host_seat,
        "deal": deal_mode,
        "insecure": insecure,
        "created": created,
        "match": {"first_dealer": first_dealer},
    }


def _check_log_schema(act: bytes, seat: int) -> None:
    """Refuse, before anything changes, a message the log writer would refuse to journal.

    The log's rules are stricter than ``R.unpack_map``: no ext types or repeated keys, and
    ``hand``, ``seat`` and ``aseq`` are integers (a bool or a float compares equal to one).
    """
    try:
        fields = decode_log_map(act, 0, "signed message")
    except LogFormatError as e:
        raise TableError("bad-message", e.reason, seat) from None
    for key in ("hand", "seat", "aseq"):
        value = fields.get(key)
        if type(value) is not int or value < 0:
            raise TableError(
                "bad-message", f"signed message: {key!r} must be a non-negative integer", seat
            )


class HostTable:
    """The authoritative table: validates seats' messages and journals them as records."""

    def __init__(
        self,
        game: Game | RuleSet,
        table_id: bytes,
        seats: Sequence[SeatEntry],
        writer: LogWriter,
        *,
        host_seat: int = 0,
        deal_mode: str = "commit-reveal",
        insecure: bool = False,
        created: int = 0,
        first_dealer: int = 0,
        random_bytes: Callable[[int], bytes] = os.urandom,
        write_header: bool = True,
        table_fields: Mapping[str, Any] | None = None,
        timing: Timing = NO_TIMING,
    ) -> None:
        self.timing = timing
        self.game = game if isinstance(game, Game) else canasta_game(game)
        rules = self.game
        if len(seats) != rules.players:
            raise ValueError(f"{rules.name} needs {rules.players} seats, not {len(seats)}")
        if deal_mode not in HAND_PROTOCOLS:
            raise ValueError(f"unknown deal mode {deal_mode!r}")
        self.rules = self.game.rules
        self.deal_mode = deal_mode
        #: the seats' messages passed on to the other seats before the host's check (``ahead``)
        self.ahead_kinds = HAND_PROTOCOLS[deal_mode].ahead_kinds
        self.table_id = table_id
        self.seats = list(seats)
        self.header_keys = [s.key for s in seats]  # the keys the header lists, before any stand-in
        self.writer = writer
        self.random_bytes = random_bytes
        self.match: GameMatch = self.game.new_match(first_dealer)
        self.known_heads: set[bytes] = set()
        self.next_aseq = [0] * rules.players
        self.hand: HandProtocol | None = None
        self.checkpoint_msg = b""
        self.checkpoint_sigs: dict[int, bytes] = {}
        self.checkpointing = False
        self.over = False
        self.hand_no = -1
        self.history: list[RecordInfo] = []
        if write_header:
            fields = header_fields(
                self.game, table_id, seats, host_seat, deal_mode, insecure, created, first_dealer
            )
            if table_fields:
                fields["table_config"] = dict(table_fields)
            self._remember(writer.write_header(fields))
            self._start_hand()

    # ------------------------------------------------------------------ bookkeeping
    def _remember(self, info: RecordInfo) -> RecordInfo:
        self.known_heads.add(info.hash)
        self.history.append(info)
        return info

    def _append(
        self, kind: str, fields: Mapping[str, Any], private: Mapping[int, bytes] | None = None
    ) -> RecordInfo:
        return self._remember(self.writer.append(kind, fields, private))

    def _write(self, entry: Entry) -> RecordInfo:
        return self._append(entry.kind, entry.fields, self._private(entry.private))

    def _private(self, data: Mapping[int, Mapping[str, Any]]) -> dict[int, bytes] | None:
        """Each seat's private data, salted and packed for its own payload."""
        return {
            seat: R.private_payload(self.random_bytes(R.SALT_SIZE), **fields)
            for seat, fields in data.items()
        } or None

    @property
    def head(self) -> bytes:
        return self.writer.head

    @property
    def phase(self) -> TablePhase:
        """Where the table is: dealing (committing, revealing), playing, checkpointing, over."""
        if self.over:
            return TablePhase.OVER
        if self.checkpointing:
            return TablePhase.CHECKPOINTING
        hand = self.hand
        assert hand is not None
        if not hand.dealing:
            return TablePhase.PLAYING
        return TablePhase.REVEALING if hand.begun else TablePhase.COMMITTING

    @property
    def state(self) -> Any:
        """The current hand's engine state (stand-in cards where the host is blind)."""
        return None if self.hand is None or self.over else self.hand.state

    @property
    def hand_start(self) -> int:
        """The number of the first record of the hand under way (after the last checkpoint)."""
        for info in reversed(self.history):
            if info.kind == R.CHECKPOINT:
                return info.seq + 1
        return 1

    def _hand_setup(self, hand_no: int) -> HandSetup:
        # the stages of the seats this process plays were proved here: not checked twice
        keys = [s.key for s in self.seats]
        return HandSetup(self.game, self.match, self.table_id, hand_no, keys, trust_own_work=True)

    def _start_hand(self) -> None:
        self.hand_no += 1
        self.hand = new_hand(self.deal_mode, self._hand_setup(self.hand_no))
        self.checkpointing = False

    def between_hands(self, seat: int) -> bool:
        """Whether ``seat`` holds no secret of a hand in play, so that another key (a stand-in,
        or the player reclaiming) may take the seat now."""
        if self.over or self.checkpointing or self.hand is None:
            return True
        return not self.hand.holds_secret(seat)

    # ------------------------------------------------------------------ inbound messages
    def submit(
        self,
        seat: int,
        act: bytes,
        asig: bytes,
        seed: bytes | None = None,
        *,
        signed_here: bool = False,
    ) -> list[RecordInfo]:
        """Accept one signed message from ``seat``; return the records written for it.

        ``signed_here``: a seat agent of this process signed it just now with a key the host
        holds (its bots, stand-ins, the host's own seat), so its signature is not checked again:
        an Ed25519 check costs about five signatures, and most of a busy host's messages are its
        own bots'. Every other check still runs, and every reader of the log checks every
        signature."""
        with self.timing.span("table.submit", seat=seat):
            return self._submit(seat, act, asig, seed, signed_here)

    def _submit(
        self, seat: int, act: bytes, asig: bytes, seed: bytes | None, signed_here: bool
    ) -> list[RecordInfo]:
        if not 0 <= seat < len(self.seats):
            raise TableError("unknown-seat", f"no seat {seat}")
        try:
            fields = R.unpack_map(act, "signed message")
            _check_log_schema(act, seat)
            if fields.get("table") != self.table_id:
                raise TableError("wrong-table", "the message names another table", seat)
            if fields.get("seat") != seat:
                raise TableError("wrong-seat", "the message is signed for another seat", seat)
            if fields.get("aseq") != self.next_aseq[seat]:
                raise TableError(
                    "bad-aseq",
                    f"expected sequence number {self.next_aseq[seat]}, got {fields.get('aseq')!r}",
                    seat,
                )
            head = fields.get("head")
            if not isinstance(head, bytes) or head not in self.known_heads:
                raise TableError("unknown-head", "the message names an unknown log head", seat)
            type_ = fields.get("type")
            if not isinstance(type_, str) or type_ not in R.ACT_TYPES:
                raise TableError("bad-message", f"unknown message type {type_!r}", seat)
            if type_ != "chat" and fields.get("hand") != self.hand_no:
                raise TableError(
                    "wrong-hand", f"the message is for hand {R.shown_number(fields['hand'])}", seat
                )
            try:
                if not signed_here:
                    verify(self.seats[seat].key, ACTION_KIND, act, asig)
            except BadSignature:
                raise TableError("bad-signature", "the signature does not verify", seat) from None
            if type_ == "chat":
                return self._chat(seat, fields, act, asig)
            return self._hand_message(seat, type_, fields, act, asig, seed)
        except R.MessageError as e:
            raise TableError(e.code, str(e), seat) from None

    def take_message(
        self, seat: int, message: Mapping[str, Any], *, signed_here: bool = False
    ) -> list[RecordInfo]:
        """One of a seat's wire messages (``commit``, ``reveal``, ``act``, ``chat``,
        ``checkpoint``; ``docs/wire-protocol.md``), already checked against its schema
        (``signed_here``: see ``submit``)."""
        t = message["t"]
        if t == "checkpoint":
            if message["hand"] != self.hand_no:
                raise TableError("wrong-hand", "a checkpoint for another hand", seat)
            return self.submit_checkpoint(seat, message["sig"])
        return self.submit(
            seat, message["act"], message["asig"], message.get("seed"), signed_here=signed_here
        )

    def check_lost_record(self, data: bytes) -> int:
        """A seat's proof that this log lost, or contradicts, a record the host signed and sent
        it (a crash cut the log back, or an older copy replaced it): a stored record signed with
        the host's key whose predecessor is in this log but which itself is not. Returns its
        number; raises TableError ``bad-evidence`` if the record proves nothing of the kind."""
        header = self.writer.header
        try:
            record = parse_stored_record(data, 1, header)
            seq, prev = record.fields["seq"], record.fields["prev"]
            verify(header.host_key if header else b"", RECORD_KIND, record.body, record.host_sig)
        except (LogError, BadSignature, KeyError) as e:
            raise TableError("bad-evidence", f"not a record this host signed: {e}") from None
        if not 1 <= seq <= len(self.history) or self.history[seq - 1].hash != prev:
            raise TableError("bad-evidence", "the record does not follow this table's log")
        if seq < len(self.history) and self.history[seq].hash == record.hash:
            raise TableError("bad-evidence", f"this log holds record {seq} as it is")
        return int(seq)

    def _hand_message(
        self,
        seat: int,
        type_: str,
        fields: dict[str, Any],
        act: bytes,
        asig: bytes,
        seed: bytes | None,
    ) -> list[RecordInfo]:
        """A verified, in-sequence message for the hand: the records the hand says to write."""
        hand = self.hand
        if hand is None or self.over or self.checkpointing:
            raise TableError("wrong-phase", f"the table is {self.phase.value}", seat)
        try:
            step = hand.take(seat, type_, fields, seed)
        except HandRefused as e:
            if e.proves:  # the signed message shows a seat cheated: the match ends at once
                # against it: the message's own seat, or the one it shows deviating (an exposed
                # wrong sealed key names its sender)
                self.next_aseq[seat] += 1
                culprit = seat if e.culprit is None else e.culprit
                hand.forfeit(culprit)
                evidence = {"act": act, "asig": asig}
                return self._forfeit_records(culprit, f"violation: {e.code}: {e}", evidence)
            raise TableError(e.code, str(e), seat, e.params, e.variant) from None
        self.next_aseq[seat] += 1
        body: dict[str, Any] = {"act": act, "asig": asig, **step.fields}
        out = [self._append(type_, body, self._private(step.private))]
        out.extend(self._write(entry) for entry in step.follow)
        if hand.play_over:
            out.extend(self._end_hand())
        return out

    def _chat(self, seat: int, fields: dict[str, Any], act: bytes, asig: bytes) -> list[RecordInfo]:
        text = R.typed(fields, "text", str, "chat")
        if len(text) > R.MAX_CHAT_LENGTH:
            raise TableError("bad-message", f"chat over {R.MAX_CHAT_LENGTH} characters", seat)
        self.next_aseq[seat] += 1
        return [self._append(R.CHAT, {"act": act, "asig": asig})]

    # ------------------------------------------------------------------ hand end
    def _end_hand(self) -> list[RecordInfo]:
        """Score the finished hand, publish its secrets, and ask every seat to sign the result
        (or, where the hand's end check names a seat that broke a rule, end the match)."""
        hand = self.hand
        assert hand is not None
        try:
            final, secrets = hand.finish()
        except Violation as v:  # the hand is not scored
            return self._forfeit_records(v.seat, f"violation: {v.code}: {v.reason}")
        team_scores = [score.to_dict() for score in self.match.record_hand(final)]
        end = final.end
        assert end is not None
        hand_end = self._append(
            R.HAND_END,
            {
                "hand": self.hand_no,
                "reason": end.reason.value,
                "went_out": end.went_out,
                "scores": team_scores,
                "totals": list(self.match.scores),
            },
        )
        seeds = self._write(secrets)
        self._await_checkpoint(hand_end.hash, seeds.hash)
        return [hand_end, seeds]

    def _await_checkpoint(self, hand_end: bytes, head: bytes) -> None:
        self.checkpoint_msg = R.checkpoint_message(
            self.table_id, self.hand_no, head, hand_end, self.match.scores
        )
        self.checkpoint_sigs = {}
        self.checkpointing = True

    def submit_checkpoint(self, seat: int, signature: bytes) -> list[RecordInfo]:
        """A seat's signature over :attr:`checkpoint_msg`; the record is written once all sign."""
        if self.phase is not TablePhase.CHECKPOINTING:
            raise TableError(
                "wrong-phase", f"the table is {self.phase.value}, not checkpointing", seat
            )
        if not 0 <= seat < len(self.seats):
            raise TableError("unknown-seat", f"no seat {seat}")
        try:
            verify(self.seats[seat].key, CHECKPOINT_KIND, self.checkpoint_msg, signature)
        except BadSignature:
            raise TableError(
                "bad-signature", "the checkpoint signature does not verify", seat
            ) from None
        self.checkpoint_sigs[seat] = signature
        if len(self.checkpoint_sigs) < len(self.seats):
            return []
        out = [
            self._append(
                R.CHECKPOINT, {"msg": self.checkpoint_msg, "sigs": dict(self.checkpoint_sigs)}
            )
        ]
        result = self.match.result
        if result is not None:
            out.append(
                self._append(
                    R.MATCH_END,
                    {"winner": result.winner, "totals": list(result.scores), "hands": result.hands},
                )
            )
            self.over = True
        else:
            self._start_hand()
        return out

    def forfeit(self, seat: int, reason: str) -> list[RecordInfo]:
        """Record that ``seat`` withheld its part of the hand: the match ends against it."""
        hand = self.hand
        if self.over or self.checkpointing or hand is None or not hand.forfeitable(seat):
            raise TableError("wrong-phase", "nothing is waited for from the seat", seat)
        hand.forfeit(seat)
        return self._forfeit_records(seat, reason)

    def _forfeit_records(
        self, seat: int, reason: str, evidence: Mapping[str, bytes] | None = None
    ) -> list[RecordInfo]:
        """The match ends against ``seat`` (-1: a fault no seat can be named for). ``evidence``:
        the signed message that proves its violation (``act``, ``asig``: the seat's own, or
        another seat's exposure of a wrong key it sealed), journaled in the forfeit record so
        that every follower checks it."""
        winner = self.game.forfeit_winner(self.match.scores, seat) if seat >= 0 else None
        forfeit = {"hand": self.hand_no, "seat": seat, "reason": reason, **(evidence or {})}
        out = [
            self._append(R.FORFEIT, forfeit),
            self._append(
                R.MATCH_END,
                {
                    "winner": winner,
                    "totals": list(self.match.scores),
                    "hands": self.match.hands_played,
                },
            ),
        ]
        self.over = True
        return out

    def stop(self, reason: str) -> list[RecordInfo]:
        """The match stops by agreement before its end (``reason``: one of ``R.STOP_REASONS``):
        a ``match-stop`` record says why, after how many hands, with the totals, and whether a
        hand was under way. Nothing is played afterwards. A match already over writes nothing."""
        if reason not in R.STOP_REASONS:
            raise ValueError(f"unknown reason to stop {reason!r}")
        if self.over or self.hand is None:
            return []
        stop = self._append(
            R.MATCH_STOP,
            {
                "reason": reason,
                "hand": self.hand_no,
                "hands": self.match.hands_played,
                "totals": list(self.match.scores),
                "mid_hand": self.hand.stage()[0] != "not-started",
            },
        )
        self.over = True
        return [stop]

    def rekey(self, seat: int, key: bytes) -> list[RecordInfo]:
        """From now on ``seat`` signs with ``key`` (a stand-in bot, or the player reclaiming)."""
        if self.seats[seat].key == key:
            return []
        self.seats[seat] = SeatEntry(self.seats[seat].name, key, self.seats[seat].bot)
        # the checkpoint record is verified with the new key: the new holder signs it again
        self.checkpoint_sigs.pop(seat, None)
        if not self.checkpointing and self.hand is not None:
            self.hand.rekey(seat, key)  # the hand under way: the new key signs its part
        return [self._append(SEAT_KEY_KIND, {"rekey": {"seat": seat, "key": key}})]

    def seat_event(
        self, seat: int, event: str, reason: str | None = None, hold: float | None = None
    ) -> list[RecordInfo]:
        """Record a connection event (``docs/log-format.md``, "Connection events"): ``seat``'s
        player connected, was lost, is held for ``hold`` seconds, was stood in for, reclaimed its
        seat; or the host (its own seat) ``resumed`` from its log. Not a move: the hand under way
        is untouched. Nothing is written to a format-1 log or after the match's end."""
        header = self.writer.header
        if self.over or header is None or header.format < TIMED_FORMAT:
            return []
        fields: dict[str, Any] = {"seat": seat, "event": event}
        if reason:
            fields["reason"] = reason[:MAX_EVENT_REASON]
        if hold is not None:
            fields["hold"] = max(0, int(hold * 1000))
        return [self._append(R.SEAT_EVENT, fields)]

    def needs(self, seat: int) -> str:
        """What the table waits for from ``seat``: a hand message type (``commit``, ``act``...),
        ``checkpoint`` or ``wait``."""
        if self.over or self.hand is None:
            return "wait"
        if self.checkpointing:
            return "wait" if seat in self.checkpoint_sigs else "checkpoint"
        return self.hand.needs(seat)

    def prompt_fields(self, seat: int, need: str) -> dict[str, Any]:
        """What a prompt for ``need`` carries besides the need: the legal actions where the
        host can list them, the message to sign at a checkpoint."""
        if need == "checkpoint":
            return {"msg": self.checkpoint_msg}
        return {} if self.hand is None else self.hand.prompt_fields(seat, need)

    def local_prompt(self, need: str) -> dict[str, Any]:
        """A prompt's fields for a seat the host plays itself: it reads the host's state (or its
        own view of a blind hand), so no legal list is made for it."""
        return {"msg": self.checkpoint_msg} if need == "checkpoint" else {}

    def seat_state(self) -> Any:
        """The state seats' views are drawn from, or None where the host cannot see the cards
        (each seat then shows its own view of the hand)."""
        hand = self.hand
        if hand is None or not hand.host_sees_cards or self.over:
            return None
        return hand.state

    # ------------------------------------------------------------------ resuming after a crash
    @classmethod
    def resume(
        cls,
        file: BinaryIO,
        host_identity: Identity,
        *,
        random_bytes: Callable[[int], bytes] = os.urandom,
        fsync: bool = True,
        timing: Timing = NO_TIMING,
        clock: Callable[[], float] = time.time,
    ) -> HostTable:
        """Rebuild the table exactly from its own log and continue writing it.

        The log is followed through the replayer, which drives the same hand protocol the table
        does: the table takes over its match and its hand at the very record the host last
        wrote, then writes what the crash kept it from writing (the list of commitments, the
        deal, the hand's end, its checkpoint's message).
        """
        from ..log.replay import Replayer

        writer = LogWriter.resume(file, host_identity, fsync=fsync, timing=timing, clock=clock)
        report = writer.resumed_from
        assert report is not None
        header = report.header
        file.seek(0)
        data = file.read(report.valid_length)
        file.seek(report.valid_length)
        replayer = Replayer(header)
        verifier = LogVerifier()
        verifier.set_header(header)
        history: list[RecordInfo] = []
        for record in iter_records(data):
            verifier.feed(record)
            replayer.feed(record)
            stored = data[record.offset : record.offset + record.size]
            history.append(RecordInfo(record.seq, record.kind, record.hash, record.body, stored))
        seats = [
            SeatEntry(s.name, key, s.bot)
            for s, key in zip(header.seats, verifier.seat_keys, strict=True)
        ]
        table = cls(
            replayer.game,
            header.table,
            seats,
            writer,
            host_seat=header.host,
            deal_mode=header.deal,
            insecure=header.insecure,
            random_bytes=random_bytes,
            write_header=False,
            timing=timing,
        )
        table.header_keys = [s.key for s in header.seats]
        table.match = replayer.match
        table.history = history
        table.known_heads = {info.hash for info in history}
        table.next_aseq = [verifier.last_aseq.get(s, -1) + 1 for s in range(table.game.players)]
        table.hand_no = replayer.hand_no
        table.hand = replayer.hand
        if replayer.over:
            table.over = True
        elif replayer.seeds_hash is not None and replayer.hand_end_hash is not None:
            table._await_checkpoint(replayer.hand_end_hash, replayer.seeds_hash)
        elif replayer.hand_end_hash is not None:  # crashed between the hand's end and its seeds
            _, secrets = replayer.hand.finish()
            seeds = table._write(secrets)
            table._await_checkpoint(replayer.hand_end_hash, seeds.hash)
        else:
            for entry in replayer.hand.unwritten():  # crashed before the host's next record
                table._write(entry)
            if replayer.hand.play_over:  # crashed between the last action and the hand's end
                table._end_hand()
        return table


__all__ = ["HostTable", "SeatEntry", "TableError", "TablePhase", "header_fields", "record_hash"]
