"""The host's authoritative table, sans-io: seats' signed messages in, log records out.

``HostTable`` owns the match, the current hand's deal round and engine state, and the log writer.
Every accepted message becomes one or more records, each written and flushed by the writer before
``submit`` returns them: the network layer then sends each seat its redacted copy (journal first,
then send). A refused message raises :class:`TableError` with a stable code and changes nothing.

The hand lifecycle is an explicit state machine::

    COMMITTING --all commitments--> REVEALING --all seeds--> PLAYING --hand over-->
    CHECKPOINTING --all signatures--> COMMITTING (next hand) or OVER
    (a forfeit in COMMITTING or REVEALING ends the match: OVER)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, BinaryIO

from . import __version__
from . import records as R
from .commit_reveal import DealRound, HandNumbers
from .dealing import DEALT, CommitRevealDealer, DealRefused, HandDealer
from .effects import action_effects, public_deal_fields, snapshot
from .errors import IllegalAction
from .eventlog import (
    SEAT_KEY_KIND,
    LogFormatError,
    LogVerifier,
    LogWriter,
    RecordInfo,
    decode_log_map,
    iter_records,
    record_hash,
)
from .games import Game, GameMatch, canasta_game
from .identity import BadSignature, Identity, verify
from .rules import RuleSet
from .state import HandState

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

    def __init__(self, code: str, message: str, seat: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.seat = seat


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
    ) -> None:
        self.game = game if isinstance(game, Game) else canasta_game(game)
        rules = self.game
        if len(seats) != rules.players:
            raise ValueError(f"{rules.name} needs {rules.players} seats, not {len(seats)}")
        if deal_mode not in R.DEAL_MODES:
            raise ValueError(f"unknown deal mode {deal_mode!r}")
        self.rules = self.game.rules
        self.deal_mode = deal_mode
        self.table_id = table_id
        self.seats = list(seats)
        self.header_keys = [s.key for s in seats]  # the keys the header lists, before any stand-in
        self.writer = writer
        self.random_bytes = random_bytes
        self.match: GameMatch = self.game.new_match(first_dealer)
        self.hand_numbers = HandNumbers(table_id)
        self.known_heads: set[bytes] = set()
        self.next_aseq = [0] * rules.players
        self.state: HandState | None = None
        self.dealer: HandDealer | None = None
        self.checkpoint_msg = b""
        self.checkpoint_sigs: dict[int, bytes] = {}
        self.phase = TablePhase.COMMITTING
        self.hand_no = -1
        self.history: list[RecordInfo] = []
        if write_header:
            info = writer.write_header(
                header_fields(
                    self.game,
                    table_id,
                    seats,
                    host_seat,
                    deal_mode,
                    insecure,
                    created,
                    first_dealer,
                )
            )
            self._remember(info)
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

    @property
    def head(self) -> bytes:
        return self.writer.head

    def _salt(self) -> bytes:
        return self.random_bytes(R.SALT_SIZE)

    @property
    def round(self) -> DealRound | None:
        """The commit-reveal round of the current hand (None once the match is over)."""
        return getattr(self.dealer, "round", None)

    def _new_dealer(self, hand_no: int) -> CommitRevealDealer:
        return CommitRevealDealer(
            self.hand_numbers.start_round(hand_no, self.game.players),
            self.table_id,
            hand_no,
            lambda: {"dealer": self.match.dealer, "minimums": self.match.minimums()},
        )

    def _start_hand(self) -> None:
        self.hand_no += 1
        self.dealer = self._new_dealer(self.hand_no)
        self.phase = TablePhase(self.dealer.stage)
        self.state = None

    # ------------------------------------------------------------------ inbound messages
    def submit(
        self, seat: int, act: bytes, asig: bytes, seed: bytes | None = None
    ) -> list[RecordInfo]:
        """Accept one signed message from ``seat``; return the records written for it."""
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
                    "wrong-hand", f"the message is for hand {fields.get('hand')!r}", seat
                )
            try:
                verify(self.seats[seat].key, ACTION_KIND, act, asig)
            except BadSignature:
                raise TableError("bad-signature", "the signature does not verify", seat) from None
            out = self._dispatch(seat, type_, fields, act, asig, seed)
        except R.MessageError as e:
            raise TableError(e.code, str(e), seat) from None
        return out

    def _dispatch(
        self,
        seat: int,
        type_: str,
        fields: dict[str, Any],
        act: bytes,
        asig: bytes,
        seed: bytes | None,
    ) -> list[RecordInfo]:
        """A verified, in-sequence message of ``type_``: the records it makes."""
        if type_ in ("commit", "reveal"):
            return self._deal_message(seat, type_, fields, act, asig, seed)
        if type_ == "action":
            return self._action(seat, fields, act, asig)
        if type_ == "chat":
            return self._chat(seat, fields, act, asig)
        raise TableError("bad-message", f"{type_!r} is not used at a {self.deal_mode} table", seat)

    def _accept(self, seat: int) -> None:
        self.next_aseq[seat] += 1

    def _require(self, phase: TablePhase, seat: int) -> None:
        if self.phase is not phase:
            raise TableError(
                "wrong-phase", f"the table is {self.phase.value}, not {phase.value}", seat
            )

    def _deal_message(
        self,
        seat: int,
        type_: str,
        fields: dict[str, Any],
        act: bytes,
        asig: bytes,
        seed: bytes | None,
    ) -> list[RecordInfo]:
        """A seat's part of the deal (its commitment, its seed...), as the deal mode says."""
        if self.dealer is None or self.phase not in (TablePhase.COMMITTING, TablePhase.REVEALING):
            raise TableError("wrong-phase", f"the table is {self.phase.value}, not dealing", seat)
        try:
            step = self.dealer.accept(seat, type_, fields, seed, self._salt)
        except DealRefused as e:
            raise TableError(e.code, str(e), seat) from None
        self._accept(seat)
        out = [self._append(type_, {"act": act, "asig": asig}, step.private)]
        out.extend(self._append(kind, body) for kind, body in step.follow)
        if self.dealer.stage == DEALT:
            out.append(self._deal())
        else:
            self.phase = TablePhase(self.dealer.stage)
        return out

    def _deal(self) -> RecordInfo:
        assert self.dealer is not None
        order = self.dealer.deck(self.game.deck_size)
        self.state = self.match.new_hand(order)
        state = self.state
        self.phase = TablePhase.PLAYING
        return self._append(
            R.DEAL,
            {
                "hand": self.hand_no,
                "pile": list(state.pile),
                **public_deal_fields(state),
                "stock": len(state.stock),
            },
            {
                seat: R.private_payload(self._salt(), hand=sorted(state.hands[seat]))
                for seat in range(self.game.players)
            },
        )

    def _action(
        self, seat: int, fields: dict[str, Any], act: bytes, asig: bytes
    ) -> list[RecordInfo]:
        self._require(TablePhase.PLAYING, seat)
        state = self.state
        assert state is not None
        text = R.typed(fields, "action", str, "action")
        try:
            action = self.game.parse_action(text)
        except ValueError as e:  # ActionParseError, or int() on a digit like "²" in parse_action
            raise TableError("bad-action", str(e), seat) from None
        try:
            state.check(action, seat)
        except IllegalAction as e:
            raise TableError(e.code, e.message, seat) from None
        before = snapshot(state)
        state.apply(action, seat)
        self._accept(seat)
        effects = action_effects(before, state)
        body: dict[str, Any] = {"act": act, "asig": asig}
        if effects.red_threes is not None:
            body["red_threes"] = effects.red_threes
        private = {
            s: R.private_payload(self._salt(), drawn=drawn, picked_up=picked)
            for s, (drawn, picked) in effects.new_cards.items()
        } or None
        out = [self._append(R.ACTION, body, private)]
        if state.is_over:
            out.extend(self._end_hand())
        return out

    def _chat(self, seat: int, fields: dict[str, Any], act: bytes, asig: bytes) -> list[RecordInfo]:
        text = R.typed(fields, "text", str, "chat")
        if len(text) > R.MAX_CHAT_LENGTH:
            raise TableError("bad-message", f"chat over {R.MAX_CHAT_LENGTH} characters", seat)
        self._accept(seat)
        return [self._append(R.CHAT, {"act": act, "asig": asig})]

    # ------------------------------------------------------------------ hand end
    def _end_hand(self) -> list[RecordInfo]:
        state, dealer = self.state, self.dealer
        assert state is not None and dealer is not None
        return self._close_hand(state, dealer.end_of_hand())

    def _close_hand(
        self, state: HandState, secrets_record: tuple[str, dict[str, Any]]
    ) -> list[RecordInfo]:
        """Score the finished hand, publish its secrets, and ask every seat to sign the result."""
        assert state.end is not None
        team_scores = [score.to_dict() for score in self.match.record_hand(state)]
        end = state.end
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
        seeds = self._append(*secrets_record)
        self.checkpoint_msg = R.pack(
            {
                "table": self.table_id,
                "hand": self.hand_no,
                "head": seeds.hash,
                "result": {"hand_end": hand_end.hash, "totals": list(self.match.scores)},
            }
        )
        self.checkpoint_sigs = {}
        self.phase = TablePhase.CHECKPOINTING
        return [hand_end, seeds]

    def submit_checkpoint(self, seat: int, signature: bytes) -> list[RecordInfo]:
        """A seat's signature over :attr:`checkpoint_msg`; the record is written once all sign."""
        self._require(TablePhase.CHECKPOINTING, seat)
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
            self.phase = TablePhase.OVER
        else:
            self._start_hand()
        return out

    def forfeit(self, seat: int, reason: str) -> list[RecordInfo]:
        """Record that ``seat`` withheld its commitment or seed: the match ends against it."""
        if self.phase not in (TablePhase.COMMITTING, TablePhase.REVEALING):
            raise TableError("wrong-phase", "a seat forfeits only by withholding its seed", seat)
        assert self.dealer is not None
        self.dealer.forfeit(seat)
        return self._forfeit_records(seat, reason)

    def _forfeit_records(self, seat: int, reason: str) -> list[RecordInfo]:
        """The match ends against ``seat`` (-1: a fault no seat can be named for)."""
        winner = self.game.forfeit_winner(self.match.scores, seat) if seat >= 0 else None
        out = [
            self._append(R.FORFEIT, {"hand": self.hand_no, "seat": seat, "reason": reason}),
            self._append(
                R.MATCH_END,
                {
                    "winner": winner,
                    "totals": list(self.match.scores),
                    "hands": self.match.hands_played,
                },
            ),
        ]
        self.phase = TablePhase.OVER
        return out

    def rekey(self, seat: int, key: bytes) -> list[RecordInfo]:
        """From now on ``seat`` signs with ``key`` (a stand-in bot, or the player reclaiming)."""
        if self.seats[seat].key == key:
            return []
        self.seats[seat] = SeatEntry(self.seats[seat].name, key, self.seats[seat].bot)
        # the checkpoint record is verified with the new key: the new holder signs it again
        self.checkpoint_sigs.pop(seat, None)
        return [self._append(SEAT_KEY_KIND, {"rekey": {"seat": seat, "key": key}})]

    def needs(self, seat: int) -> str:
        """What the table waits for from ``seat``: commit, reveal, act, checkpoint or wait."""
        if self.phase in (TablePhase.COMMITTING, TablePhase.REVEALING):
            assert self.dealer is not None
            return self.dealer.needs(seat)
        if self.phase is TablePhase.PLAYING:
            assert self.state is not None
            return "act" if self.state.to_move == seat else "wait"
        if self.phase is TablePhase.CHECKPOINTING:
            return "wait" if seat in self.checkpoint_sigs else "checkpoint"
        return "wait"

    # ------------------------------------------------------------------ resuming after a crash
    @classmethod
    def resume(
        cls,
        file: BinaryIO,
        host_identity: Identity,
        *,
        random_bytes: Callable[[int], bytes] = os.urandom,
        fsync: bool = True,
    ) -> HostTable:
        """Rebuild the table exactly from its own log and continue writing it.

        The host's log holds every private payload, so every hand's deck is known from the
        seats' reveals: the current hand is restored at the very record the host last wrote.
        """
        from .log_replay import Replayer  # the replayer imports this module's neighbours

        writer = LogWriter.resume(file, host_identity, fsync=fsync)
        report = writer.resumed_from
        assert report is not None
        header = report.header
        if header.deal != "commit-reveal":
            raise ValueError(
                f"resuming a {header.deal}-dealt table is not supported: its seats' secrets "
                "are not in the host's log"
            )
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
        rules = replayer.game
        seats = [
            SeatEntry(s.name, key, s.bot)
            for s, key in zip(header.seats, verifier.seat_keys, strict=True)
        ]
        table = cls(
            rules,
            header.table,
            seats,
            writer,
            host_seat=header.host,
            deal_mode=header.deal,
            insecure=header.insecure,
            random_bytes=random_bytes,
            write_header=False,
        )
        table.header_keys = [s.key for s in header.seats]
        table.match = replayer.match
        table.history = history
        table.known_heads = {info.hash for info in history}
        table.next_aseq = [verifier.last_aseq.get(s, -1) + 1 for s in range(rules.players)]
        table.hand_numbers = HandNumbers(header.table, range(replayer.hand_no))
        table.hand_no = replayer.hand_no
        if replayer.over:
            table.phase = TablePhase.OVER
            return table
        dealer = table._new_dealer(replayer.hand_no)
        table.dealer = dealer
        for seat, value in sorted(replayer.commits.items()):
            dealer.round.add_commitment(seat, value)
        if replayer.seeds_published:
            table.state = replayer.current.state if replayer.current else None
            for seat, seed in sorted(replayer.seeds.items()):
                dealer.round.add_reveal(seat, seed)
            hand_end = next(i for i in reversed(history) if i.kind == R.HAND_END)
            table.checkpoint_msg = R.pack(
                {
                    "table": table.table_id,
                    "hand": table.hand_no,
                    "head": history[-1].hash,
                    "result": {"hand_end": hand_end.hash, "totals": list(table.match.scores)},
                }
            )
            table.phase = TablePhase.CHECKPOINTING
        elif replayer.current is not None and replayer.current.state is not None:
            for seat, seed in sorted(replayer.seeds.items()):
                dealer.round.add_reveal(seat, seed)
            table.state = replayer.current.state
            table.phase = TablePhase.PLAYING
            if table.state.is_over:  # crashed between the last action and the hand's end
                table._end_hand()
        elif replayer.commitments is not None:
            for seat, seed in sorted(replayer.seeds.items()):
                dealer.round.add_reveal(seat, seed)
            table.phase = TablePhase.REVEALING
            if not dealer.round.missing_reveals():  # crashed before writing the deal
                table._deal()
        else:
            table.phase = TablePhase.COMMITTING
            if dealer.round.commitments_complete:  # crashed before writing the list
                table._remember(table.writer.append(*dealer.commitments_record()))
                table.phase = TablePhase.REVEALING
        return table


__all__ = ["HostTable", "SeatEntry", "TableError", "TablePhase", "header_fields", "record_hash"]
