"""Replay a game log through the rules engine, checking every game-level claim on the way.

The container verifier (``log.LogVerifier``) checks bytes, signatures and the chain; the
:class:`Replayer` checks what the records *say*: that each hand's deck comes from seeds matching
the seats' commitments, that the deal and every drawn card are the deck's, that every action was
the turn of its author and legal, and that every score and total is the engine's. The host, the
auditor (``canasta-replay audit``) and a resuming host all use this one replayer.

Replaying streams: a hand is replayed as soon as its deck is known, which in the host's own log
is at the deal (the seeds are in the reveal payloads) and in a seat's log at the hand's end (the
published seeds); records of a hand whose deck is not known yet are held until then.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any, Final, NoReturn

from ..canasta.match import MatchResult as ForfeitResult
from ..games import CANASTA, AnyGameState, GameMatch, HandScore, UnknownGame, game_from_header
from ..hand import HAND_PROTOCOLS, Applied, HandFault, HandProtocol, HandSetup, new_hand
from . import SEAT_KEY_KIND, Header, LogSource, StoredRecord, Truncation, iter_verified
from . import records as R


class ReplayError(ValueError):
    """A record's game content is wrong: ``seat`` is the seat to blame where one can be named
    (the author of an illegal action, a seat whose seed does not match; otherwise the host)."""

    def __init__(self, record_no: int, code: str, reason: str, seat: int | None = None) -> None:
        super().__init__(f"record {record_no}: {reason}")
        self.record_no = record_no
        self.code = code
        self.reason = reason
        self.seat = seat


@dataclass(frozen=True)
class Claim:
    """A record whose truth rests on one party's word: the log holds nothing that proves it.

    ``record`` is the record's number, ``kind`` its kind, ``claimant`` the seat whose word it is
    (the host, for every record the host alone signs), ``claim`` what it says, in words, and
    ``countersigned`` the seats that signed it too. A claim the same log contradicts is not a
    claim but a false record (:class:`ReplayError`, code ``contradicted-claim``).
    """

    record: int
    kind: str
    claimant: int
    claim: str
    countersigned: frozenset[int] = frozenset()

    def to_dict(self) -> dict[str, Any]:
        return {
            "record": self.record,
            "kind": self.kind,
            "claimant": self.claimant,
            "claim": self.claim,
            "countersigned": sorted(self.countersigned),
        }


@dataclass(frozen=True)
class MatchStop:
    """A ``match-stop`` record as checked: why the match stopped before its end, after how many
    hands, whether a hand was under way, and whether the log itself proves the stop agreed
    (the table's hand limit reached, the last hand checkpointed by every seat)."""

    record: int
    reason: str
    hands: int
    mid_hand: bool
    proven: bool


@dataclass
class HandReplay:
    """One hand as replayed."""

    hand_no: int
    dealer: int
    state: AnyGameState | None = None  # the hand's state after the last record replayed
    scores: list[HandScore] = field(default_factory=list)  # per team (May I?: per seat)
    actions: int = 0
    checkpoint_signers: frozenset[int] = frozenset()


@dataclass(frozen=True)
class SeatEvent:
    """A connection event the host recorded (``seat-event``): its word, nothing the log proves.
    ``time`` is the record's time in ms (None in format 1, which has no such records anyway)."""

    record_no: int
    time: int | None
    seat: int
    event: str
    reason: str | None


@dataclass
class ReplayResult:
    header: Header
    rules: Any  # the game's rule set (a RuleSet for the Canasta family)
    match: GameMatch
    hands: list[HandReplay]
    records: int
    truncated: Truncation | None
    result: Any  # the match's result (from a match-end record, checked against the engine)
    forfeit: tuple[int, str] | None
    pending: int  # records of an unfinished hand that could not be replayed (no seeds)
    claims: list[Claim] = field(default_factory=list)
    stop: MatchStop | None = None

    @property
    def state(self) -> AnyGameState | None:
        """The state of the last hand replayed (the final position)."""
        for hand in reversed(self.hands):
            if hand.state is not None:
                return hand.state
        return None


_SEAT_EVENT_CLAIMS: Final = {
    "lost": "lost its connection",
    "stand-in": "was away, so a stand-in took its seat",
}
"""The connection events an audit lists as claims: the ones a dispute about stalling or about a
bot playing a person's cards turns on."""


class Replayer:
    """Feed verified records in order; raises :class:`ReplayError` at the first false claim.

    Each hand is followed by the hand protocol of the log's deal mode (``canasta_net.hand``), the
    same object the host drove when it wrote the log; the replayer itself checks what belongs to
    the match (scores, checkpoints, forfeits, the match's end). Tools observe the game through
    :meth:`observe`: each hand record once its content is checked, with the table after it.
    """

    def __init__(self, header: Header, *, trust_own_work: bool = False) -> None:
        """``trust_own_work``: the replayer follows the log for a seat or host of this process,
        and may skip re-checking the blind-v2 stage outputs this process proved itself
        (``HandSetup.trust_own_work``); an audit leaves it off."""
        self.header = header
        self.trust_own_work = trust_own_work
        kind = header.fields.get("game", CANASTA)
        try:
            self.game = game_from_header(kind if isinstance(kind, str) else "", header.rules)
        except UnknownGame as e:
            raise ReplayError(0, "bad-rules", f"the header's game is unusable: {e}") from None
        self.rules: Any = self.game.rules
        if self.rules.players != len(header.seats):
            raise ReplayError(0, "bad-rules", "the rule set and the seats disagree")
        if header.deal not in HAND_PROTOCOLS:
            raise ReplayError(0, "bad-rules", f"unknown deal mode {header.deal!r}")
        match_info = header.fields.get("match") or {}
        first_dealer = match_info.get("first_dealer", 0) if isinstance(match_info, dict) else 0
        if not isinstance(first_dealer, int) or not 0 <= first_dealer < self.rules.players:
            raise ReplayError(0, "bad-rules", "the header's first dealer is not a seat")
        self.table = header.table
        self.match: GameMatch = self.game.new_match(first_dealer)
        self.hands: list[HandReplay] = []
        self.result: Any = None
        self.forfeit: tuple[int, str] | None = None
        self.stop: MatchStop | None = None  # a match stopped by agreement (``match-stop``)
        self.claims: list[Claim] = []  # records the log cannot prove, in log order
        self.over = False
        self.keys = [s.key for s in header.seats]  # each seat's key now (a stand-in's, a while)
        self._observers: list[Applied] = []
        #: The host's connection events so far, in log order (not game moves: the hand ignores
        #: them; an auditor lists them as the host's unproven word).
        self.seat_events: list[SeatEvent] = []
        try:
            self._start_hand(0)
        except ValueError as e:
            raise ReplayError(0, "bad-rules", str(e)) from None

    def observe(self, observer: Applied) -> None:
        """Call ``observer(record, state)`` for each deal, action and hand-end record once its
        content is checked, with the hand's state just after it. The state is the replayer's
        own: copy it to keep it. A seat's copy of a hand is checked when the hand's seeds are
        published, so its records are reported then, in order."""
        self._observers.append(observer)

    # ------------------------------------------------------------------ per-hand state
    def _start_hand(self, hand_no: int) -> None:
        self.hand_no = hand_no
        self.hand: HandProtocol = new_hand(
            self.header.deal,
            HandSetup(
                self.game,
                self.match,
                self.table,
                hand_no,
                list(self.keys),
                trust_own_work=self.trust_own_work,
            ),
        )
        self.current: HandReplay | None = None
        self.hand_end_hash: bytes | None = None
        self.seeds_hash: bytes | None = None
        # the record publishing the hand's secrets, while the records held for them are checked
        self._seeds_record: StoredRecord | None = None
        self.revealed: dict[int, int] = {}  # seat -> the record of its signed reveal this hand

    @property
    def pending(self) -> int:
        """Records of an unfinished hand that could not be checked yet (no seeds)."""
        return self.hand.pending()

    @property
    def seeds_published(self) -> bool:
        return self.seeds_hash is not None

    @property
    def hand_over(self) -> bool:
        return self.hand_end_hash is not None

    def _fail(
        self, record: StoredRecord, code: str, reason: str, seat: int | None = None
    ) -> NoReturn:
        raise ReplayError(record.index, code, reason, self.header.host if seat is None else seat)

    # ------------------------------------------------------------------ feeding
    def feed(self, record: StoredRecord, *, catch_up_later: bool = False) -> None:
        """Check the next record. A record that publishes a hand's secrets also checks the
        hand's records that waited for them, unless ``catch_up_later``: then :meth:`catch_up`
        checks them (a seat spreads that work over reactor turns); feeding the next record
        first finishes them."""
        if self._seeds_record is not None:
            self.catch_up()
        if record.index == 0:
            return
        if self.over:
            self._fail(record, "after-end", "a record after the end of the match")
        kind = record.kind
        if kind in self.hand.kinds:
            self._follow_hand(record)
            self._note_reveal(record)
            if record.kind == R.SEEDS:
                self._seeds_record = record
                if not catch_up_later:
                    self.catch_up()
            return
        handler = {
            R.CHECKPOINT: self._on_checkpoint,
            R.FORFEIT: self._on_forfeit,
            R.MATCH_END: self._on_match_end,
            R.MATCH_STOP: self._on_match_stop,
            R.CHAT: self._on_chat,
            SEAT_KEY_KIND: self._on_seat_key,
            R.SEAT_EVENT: self._on_seat_event,
        }.get(kind)
        if handler is None:
            self._fail(record, "unknown-kind", f"unknown record kind {kind!r}")
        handler(record)

    def _follow_hand(self, record: StoredRecord) -> None:
        hand = self.hand
        try:
            hand.follow(record, self._applied)
        except HandFault as f:
            index = record.index if f.index is None else f.index
            raise ReplayError(
                index, f.code, f.reason, self.header.host if f.seat is None else f.seat
            ) from None
        if self.current is None and hand.begun:
            self.current = HandReplay(self.hand_no, hand.dealer)
            self.hands.append(self.current)

    @property
    def catching_up(self) -> bool:
        """Whether a hand's held records are still to check (``feed(catch_up_later=True)``)."""
        return self._seeds_record is not None

    def catch_up(self, more: Callable[[], bool] | None = None) -> bool:
        """Check the current hand's records that waited for its published secrets: all of them,
        or while ``more()`` says to go on (asked after each). True once none is left; until
        then the hand's secrets do not count as published (:attr:`seeds_published`)."""
        seeds = self._seeds_record
        if seeds is None:
            return True
        try:
            done = self.hand.catch_up(more)
        except HandFault as f:
            index = seeds.index if f.index is None else f.index
            raise ReplayError(
                index, f.code, f.reason, self.header.host if f.seat is None else f.seat
            ) from None
        if done:
            self._seeds_record = None
            self.seeds_hash = seeds.hash
        return done

    def _note_reveal(self, record: StoredRecord) -> None:
        """Remember a seat's own signed reveal of this hand: it disproves a claim that the seat
        withheld it (in every copy of the log, whether or not the seed itself is in it)."""
        act = record.action
        if act is not None and act.get("type") == "reveal" and act.get("hand") == self.hand_no:
            self.revealed.setdefault(act["seat"], record.index)

    def claim(self, record: StoredRecord, claim: str, countersigned: frozenset[int]) -> None:
        """Name ``record`` as the host's word alone (a record kind that makes a claim the log
        cannot prove calls this once, where it is checked)."""
        self.claims.append(Claim(record.index, record.kind, self.header.host, claim, countersigned))

    def _applied(self, record: StoredRecord, state: AnyGameState) -> None:
        """A hand record is checked (now, or when its hand's seeds came): score a hand's end."""
        current = self.current
        if current is None:
            current = self.current = HandReplay(self.hand_no, self.hand.dealer)
            self.hands.append(current)
        current.state = state
        if record.kind == R.ACTION:
            current.actions += 1
        elif record.kind == R.HAND_END:
            self._check_hand_end(record, state)
        for observer in self._observers:
            observer(record, state)

    def _check_hand_end(self, record: StoredRecord, state: AnyGameState) -> None:
        assert self.current is not None and state.end is not None
        scores = self.match.record_hand(state)
        self.current.scores = scores
        self.hand_end_hash = record.hash
        f = record.fields
        if (
            f.get("hand") != self.hand_no
            or f.get("reason") != state.end.reason.value
            or f.get("went_out") != state.end.went_out
        ):
            self._fail(record, "bad-hand-end", "the hand's end is not the engine's")
        if f.get("scores") != [s.to_dict() for s in scores]:
            self._fail(record, "wrong-score", "the hand's scores are not the engine's")
        if f.get("totals") != self.match.scores:
            self._fail(record, "wrong-score", "the running totals are not the engine's")

    def _on_seat_key(self, record: StoredRecord) -> None:
        """A stand-in took over a seat, or its player reclaimed it: the verifier switched keys
        (and the hand under way takes the new key for the seat's messages from now on)."""
        rekey = record.fields.get("rekey")
        if isinstance(rekey, dict):
            seat, key = rekey.get("seat"), rekey.get("key")
            if isinstance(seat, int) and isinstance(key, bytes) and 0 <= seat < len(self.keys):
                self.keys[seat] = key
                if not self.hand_over:
                    self.hand.rekey(seat, key)

    def _on_seat_event(self, record: StoredRecord) -> None:
        """The host says a seat's connection came or went (the container checked its fields);
        it changes nothing in the hand, whatever point of it the record falls at."""
        f = record.fields
        stamp, reason = f.get("time"), f.get("reason")
        self.seat_events.append(
            SeatEvent(
                record.index,
                stamp if isinstance(stamp, int) else None,
                f["seat"],
                f["event"],
                reason if isinstance(reason, str) else None,
            )
        )
        # what a dispute may turn on, and only the host's word: that the seat was gone, and that
        # a bot therefore took its cards (the stand-in's moves themselves are proven by its key)
        claimed = _SEAT_EVENT_CLAIMS.get(f["event"])
        if claimed is not None:
            why = f" ({reason})" if isinstance(reason, str) and reason else ""
            self.claim(record, f"seat {f['seat']} {claimed}{why}", frozenset())

    def _on_chat(self, record: StoredRecord) -> None:
        act = record.action
        if act is None or act.get("type") != "chat" or not isinstance(act.get("text"), str):
            self._fail(record, "bad-record", "a chat record needs a signed chat message")

    def _on_checkpoint(self, record: StoredRecord) -> None:
        cp = record.checkpoint
        assert cp is not None
        if self.seeds_hash is None or cp["hand"] != self.hand_no:
            self._fail(record, "bad-checkpoint", "a checkpoint out of place")
        result = cp.get("result")
        if (
            cp["head"] != self.seeds_hash
            or not isinstance(result, dict)
            or result.get("hand_end") != self.hand_end_hash
            or result.get("totals") != self.match.scores
        ):
            self._fail(record, "bad-checkpoint", "the checkpoint's result is not the engine's")
        assert self.current is not None
        self.current.checkpoint_signers = frozenset(record.fields["sigs"])
        self._start_hand(self.hand_no + 1)

    def _on_forfeit(self, record: StoredRecord) -> None:
        f = record.fields
        seat = f.get("seat")
        if (
            f.get("hand") != self.hand_no
            or not isinstance(seat, int)
            or (self.current is not None and self.current.state is not None)
        ):
            self._fail(record, "bad-forfeit", "a forfeit out of place")
        reason = str(f.get("reason", ""))
        if record.action is not None:
            self._check_evidence(record, seat, reason)
        elif reason.startswith("violation"):
            found = self.hand.violation()
            if found is None or found.seat != seat:
                self._fail(record, "bad-forfeit", "the hand's replay finds no such violation")
        else:
            self._check_withheld(record, seat, reason)
        self.forfeit = (seat, reason)

    def _check_evidence(self, record: StoredRecord, seat: int, reason: str) -> None:
        """A forfeit with a signed message as evidence (the verifier checked its signature,
        sequence number and head: it is the message its author sent after the log's records up
        to that head): the hand must refuse it with the code the reason names, as a refusal
        that proves the forfeiting seat deviated. The author is the seat itself, or (version 2
        of the blind deal) a recipient whose exposure shows the seat sealed it a wrong key; an
        exposure whose accusation is false proves its own author deviated."""
        act = record.action
        assert act is not None
        type_, author = act.get("type"), act.get("seat")
        if act.get("hand") != self.hand_no or not isinstance(type_, str):
            self._fail(record, "bad-forfeit", "the forfeit's evidence is not of this hand")
        assert isinstance(author, int)  # the log's schema of an act
        if author != seat and type_ != R.EXPOSE:
            self._fail(record, "bad-forfeit", "the forfeit's evidence is not the seat's message")
        found = self.hand.proven_deviation(author, type_, act)
        culprit = None if found is None else author if found.culprit is None else found.culprit
        if found is None or culprit != seat or not reason.startswith(f"violation: {found.code}"):
            self._fail(
                record, "bad-forfeit", "the forfeit's evidence shows no such violation by the seat"
            )

    def _check_withheld(self, record: StoredRecord, seat: int, reason: str) -> None:
        """A forfeit for withholding is the host's word: the log cannot show a message that was
        never sent. It is false where the log holds the seat's own signed reveal of the hand;
        otherwise it is named as a claim (no seat countersigns a forfeit yet: see
        docs/log-format.md, "Claims")."""
        shown = R.shown_number(self.hand_no)
        revealed = self.revealed.get(seat)
        if revealed is not None:
            self._fail(
                record,
                "contradicted-claim",
                f"the host says seat {seat} withheld its part of hand {shown} ({reason}), but "
                f"record {revealed} holds that seat's own signed reveal for the hand",
            )
        self.claim(record, f"seat {seat} withheld its part of hand {shown} ({reason})", frozenset())

    def _on_match_stop(self, record: StoredRecord) -> None:
        """The match stopped before its end by agreement; the stop is proven where it is the
        table's own limit of hands (the header's ``table_config``), reached at a checkpoint every
        seat signed. Any other stop is the host's claim."""
        f = record.fields
        reason, mid_hand = f.get("reason"), f.get("mid_hand")
        if (
            self.forfeit is not None
            or not isinstance(reason, str)
            or not isinstance(mid_hand, bool)
            or f.get("hand") != self.hand_no
            or mid_hand != (self.hand.stage()[0] != "not-started")
        ):
            self._fail(record, "bad-match-stop", "a match-stop out of place")
        if self.match.result is not None and not mid_hand:
            self._fail(record, "bad-match-stop", "the match is over: its end is due, not a stop")
        hands_field = f.get("hands")
        if (
            type(hands_field) is not int
            or hands_field != self.match.hands_played
            or f.get("totals") != self.match.scores
        ):
            self._fail(record, "bad-match-stop", "the stop's hands or totals are not the engine's")
        signers = self.hands[-1].checkpoint_signers if self.hands else frozenset()
        config = self.header.fields.get("table_config")
        limit = config.get("max_hands") if isinstance(config, dict) else None
        proven = (
            reason == R.STOP_MAX_HANDS
            and not mid_hand
            and type(limit) is int
            and limit == self.match.hands_played
            and len(signers) == len(self.keys)
        )
        hands = self.match.hands_played
        self.stop = MatchStop(record.index, reason, hands, mid_hand, proven)
        if not proven:
            during = f", during hand {R.shown_number(self.hand_no)}" if mid_hand else ""
            self.claim(
                record,
                f"the match stopped by agreement ({reason}) after {hands} "
                f"{'hand' if hands == 1 else 'hands'}{during}",
                signers if not mid_hand else frozenset(),
            )
        self.over = True

    def _on_match_end(self, record: StoredRecord) -> None:
        f = record.fields
        result = self.match.result
        if self.forfeit is None:
            if result is None or self.hand_over:
                self._fail(record, "bad-match-end", "the match is not over")
            assert result is not None
            if f.get("winner") != result.winner or f.get("totals") != list(result.scores):
                self._fail(record, "bad-match-end", "the match result is not the engine's")
            self.result = result
        else:
            self.result = ForfeitResult(
                f.get("winner"), tuple(self.match.scores), self.match.hands_played
            )
        self.over = True


def replay_records(source: LogSource) -> Iterator[tuple[StoredRecord, Replayer]]:
    """Verify and replay a log record by record (for tools that show progress or step)."""
    replayer: Replayer | None = None
    for record, verifier in iter_verified(source):
        if replayer is None:
            assert verifier.header is not None
            replayer = Replayer(verifier.header)
        replayer.feed(record)
        yield record, replayer


def replay_log(source: LogSource) -> ReplayResult:
    """Verify and replay a whole log; return the match and the final position.

    Raises ``log.LogError`` for a container failure and :class:`ReplayError` for a false
    game claim, each with the record number.
    """
    from . import LogVerifier, RecordStream

    stream = RecordStream(source)
    verifier = LogVerifier()
    replayer: Replayer | None = None
    for record in stream:
        if verifier.header is None:
            assert stream.header is not None
            verifier.set_header(stream.header)
        verifier.feed(record)
        if replayer is None:  # only once the header's signature has verified
            assert verifier.header is not None
            replayer = Replayer(verifier.header)
        replayer.feed(record)
    assert replayer is not None and verifier.header is not None
    return ReplayResult(
        header=verifier.header,
        rules=replayer.rules,
        match=replayer.match,
        hands=replayer.hands,
        records=verifier.records,
        truncated=stream.truncated,
        result=replayer.result,
        forfeit=replayer.forfeit,
        pending=replayer.pending,
        claims=list(replayer.claims),
        stop=replayer.stop,
    )


@dataclass(frozen=True)
class ExposureVerdict:
    """Who an exposure of a wrong sealed key shows deviating (``docs/blind-proofs.md`` section
    10): ``seat`` (the sender it accuses, or the accuser itself), with the code and why."""

    accuser: int
    seat: int
    code: str
    reason: str


def exposure_verdict(source: LogSource, act: bytes, asig: bytes) -> ExposureVerdict:
    """Check a seat's signed ``expose`` (``act``, ``asig``) against a copy of the log that the
    host may never have shown it in: the copy is verified and replayed, the exposure must be
    signed by its seat's key, name this table, the copy's last hand and one of its records as
    ``head``; then the hand's own verdict (the one the host should have journaled) names the
    seat. So a seat whose exposure a host ignored shows, with its own copy, that the sender
    cheated. Raises ``log.LogError`` or :class:`ReplayError` for a copy that does not check, and
    ValueError (one sentence) for an exposure that proves nothing."""
    replayer: Replayer | None = None
    heads: set[bytes] = set()
    for record, replayed in replay_records(source):
        heads.add(record.hash)
        replayer = replayed
    if replayer is None:
        raise ValueError("the log holds no record")
    return exposure_verdict_at(replayer, heads, act, asig)


def exposure_verdict_at(
    replayer: Replayer, heads: Collection[bytes], act: bytes, asig: bytes
) -> ExposureVerdict:
    """:func:`exposure_verdict` for a log already replayed: ``replayer`` at its end, ``heads``
    the hashes of its records (the auditor's single pass)."""
    from ..identity import BadSignature, verify
    from . import ACTION_SIGNATURE_KIND

    try:
        fields = R.unpack_map(act, "the exposure's act")
    except R.MessageError as e:
        raise ValueError(str(e)) from None
    accuser = fields.get("seat")
    if fields.get("type") != R.EXPOSE or type(accuser) is not int:
        raise ValueError("the message is not an exposure")
    if not 0 <= accuser < len(replayer.keys):
        raise ValueError(f"the exposure names seat {accuser}, which the table does not have")
    if fields.get("table") != replayer.table or fields.get("hand") != replayer.hand_no:
        raise ValueError("the exposure is for another table or hand than the log's last")
    if fields.get("head") not in heads:
        raise ValueError("the exposure names a head that is no record of the log")
    try:
        verify(replayer.keys[accuser], ACTION_SIGNATURE_KIND, act, asig)
    except BadSignature:
        raise ValueError(f"the exposure is not signed by seat {accuser}") from None
    found = replayer.hand.proven_deviation(accuser, R.EXPOSE, fields)
    if found is None:  # malformed, at a table without proofs, or out of the hand's phase
        raise ValueError("the exposure proves nothing in this hand")
    culprit = accuser if found.culprit is None else found.culprit
    return ExposureVerdict(accuser, culprit, found.code, str(found))
