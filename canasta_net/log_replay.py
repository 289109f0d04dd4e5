"""Replay a game log through the rules engine, checking every game-level claim on the way.

The container verifier (``eventlog.LogVerifier``) checks bytes, signatures and the chain; the
:class:`Replayer` checks what the records *say*: that each hand's deck comes from seeds matching
the seats' commitments, that the deal and every drawn card are the deck's, that every action was
the turn of its author and legal, and that every score and total is the engine's. The host, the
auditor (``canasta-replay audit``) and a resuming host all use this one replayer.

Replaying streams: a hand is replayed as soon as its deck is known, which in the host's own log
is at the deal (the seeds are in the reveal payloads) and in a seat's log at the hand's end (the
published seeds); records of a hand whose deck is not known yet are held until then.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn

from . import records as R
from .blind.hand import BlindHand, BlindRefused, Violation
from .blind_seat import BLIND_RECORD_KINDS, blind_act, feed_blind
from .commit_reveal import DealError, verify_deal
from .effects import action_effects, public_deal_fields, snapshot
from .errors import IllegalAction
from .eventlog import SEAT_KEY_KIND, Header, LogSource, StoredRecord, Truncation, iter_verified
from .games import CANASTA, GameMatch, UnknownGame, game_from_header
from .match import MatchResult as ForfeitResult
from .shuffle import commitment as make_commitment

BLIND_RECORDS = frozenset(BLIND_RECORD_KINDS | {R.DEAL, R.HAND_END, R.SEEDS})


class ReplayError(ValueError):
    """A record's game content is wrong: ``seat`` is the seat to blame where one can be named
    (the author of an illegal action, a seat whose seed does not match; otherwise the host)."""

    def __init__(self, record_no: int, code: str, reason: str, seat: int | None = None) -> None:
        super().__init__(f"record {record_no}: {reason}")
        self.record_no = record_no
        self.code = code
        self.reason = reason
        self.seat = seat


@dataclass
class HandReplay:
    """One hand as replayed."""

    hand_no: int
    dealer: int
    state: Any = None  # the game's hand state (a HandState for the Canasta family)
    scores: list[Any] = field(default_factory=list)  # per team: ``total`` and ``to_dict()``
    actions: int = 0
    checkpoint_signers: frozenset[int] = frozenset()


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

    @property
    def state(self) -> Any:
        """The state of the last hand replayed (the final position)."""
        for hand in reversed(self.hands):
            if hand.state is not None:
                return hand.state
        return None


class Replayer:
    """Feed verified records in order; raises :class:`ReplayError` at the first false claim."""

    def __init__(self, header: Header) -> None:
        self.header = header
        kind = header.fields.get("game", CANASTA)
        try:
            self.game = game_from_header(kind if isinstance(kind, str) else "", header.rules)
        except UnknownGame as e:
            raise ReplayError(0, "bad-rules", f"the header's game is unusable: {e}") from None
        self.rules: Any = self.game.rules
        if self.rules.players != len(header.seats):
            raise ReplayError(0, "bad-rules", "the rule set and the seats disagree")
        match_info = header.fields.get("match") or {}
        first_dealer = match_info.get("first_dealer", 0) if isinstance(match_info, dict) else 0
        if not isinstance(first_dealer, int) or not 0 <= first_dealer < self.rules.players:
            raise ReplayError(0, "bad-rules", "the header's first dealer is not a seat")
        self.table = header.table
        self.match: GameMatch = self.game.new_match(first_dealer)
        self.hands: list[HandReplay] = []
        self.result: Any = None
        self.forfeit: tuple[int, str] | None = None
        self.over = False
        self.blind_mode = header.deal == "blind"
        self.keys = [s.key for s in header.seats]  # each seat's key now (a stand-in's, a while)
        self._reset_hand(0)

    # ------------------------------------------------------------------ per-hand state
    def _reset_hand(self, hand_no: int) -> None:
        self.hand_no = hand_no
        self.commits: dict[int, bytes] = {}
        self.commitments: list[bytes] | None = None
        self.seeds: dict[int, bytes] = {}
        self.held: list[StoredRecord] = []
        self.current: HandReplay | None = None
        self.hand_over = False
        self.seeds_published = False
        self.blind: BlindHand | None = None

    @property
    def pending(self) -> int:
        return len(self.held)

    def _fail(
        self, record: StoredRecord, code: str, reason: str, seat: int | None = None
    ) -> NoReturn:
        raise ReplayError(record.index, code, reason, self.header.host if seat is None else seat)

    def _act(self, record: StoredRecord, type_: str) -> dict[str, Any]:
        act = record.action
        if act is None or act.get("type") != type_:
            self._fail(record, "bad-record", f"a {record.kind} record needs a signed {type_}")
        assert act is not None
        if act["hand"] != self.hand_no:
            self._fail(record, "wrong-hand", f"signed for hand {act['hand']}", act["seat"])
        return act

    # ------------------------------------------------------------------ feeding
    def feed(self, record: StoredRecord) -> None:
        if record.index == 0:
            return
        if self.over:
            self._fail(record, "after-end", "a record after the end of the match")
        kind = record.kind
        if self.blind_mode and kind in BLIND_RECORDS:
            self._on_blind(record)
            return
        handler = {
            R.COMMIT: self._on_commit,
            R.COMMITMENTS: self._on_commitments,
            R.REVEAL: self._on_reveal,
            R.DEAL: self._on_hand_record,
            R.ACTION: self._on_hand_record,
            R.HAND_END: self._on_hand_record,
            R.SEEDS: self._on_seeds,
            R.CHECKPOINT: self._on_checkpoint,
            R.FORFEIT: self._on_forfeit,
            R.MATCH_END: self._on_match_end,
            R.CHAT: self._on_chat,
            SEAT_KEY_KIND: self._on_seat_key,
        }.get(kind)
        if handler is None:
            self._fail(record, "unknown-kind", f"unknown record kind {kind!r}")
            return
        handler(record)

    def _on_seat_key(self, record: StoredRecord) -> None:
        """A stand-in took over a seat, or its player reclaimed it: the verifier switched keys
        (and a blind-dealt hand's messages are signed with the new key from now on)."""
        rekey = record.fields.get("rekey")
        if self.blind_mode and isinstance(rekey, dict):
            seat, key = rekey.get("seat"), rekey.get("key")
            if isinstance(seat, int) and isinstance(key, bytes) and 0 <= seat < len(self.keys):
                self.keys[seat] = key
                if self.blind is not None and not self.hand_over:
                    self.blind.keys[seat] = key

    def _on_chat(self, record: StoredRecord) -> None:
        act = record.action
        if act is None or act.get("type") != "chat" or not isinstance(act.get("text"), str):
            self._fail(record, "bad-record", "a chat record needs a signed chat message")

    def _on_commit(self, record: StoredRecord) -> None:
        if self.commitments is not None:
            self._fail(record, "wrong-phase", "a commitment after the list was fixed")
        act = self._act(record, "commit")
        seat, value = act["seat"], act.get("commitment")
        if not isinstance(value, bytes) or len(value) != 32 or seat in self.commits:
            self._fail(record, "bad-commitment", f"seat {seat}'s commitment is malformed", seat)
        self.commits[seat] = value

    def _on_commitments(self, record: StoredRecord) -> None:
        f = record.fields
        expected = [self.commits.get(s) for s in range(self.rules.players)]
        if f.get("hand") != self.hand_no or f.get("commitments") != expected:
            self._fail(record, "bad-commitments", "the list differs from the seats' commitments")
        if f.get("dealer") != self.match.dealer or f.get("minimums") != self.match.minimums():
            self._fail(record, "bad-commitments", "wrong dealer or initial-meld minimums")
        self.commitments = expected  # type: ignore[assignment]
        self.current = HandReplay(self.hand_no, self.match.dealer)
        self.hands.append(self.current)

    def _on_reveal(self, record: StoredRecord) -> None:
        if self.commitments is None:
            self._fail(record, "wrong-phase", "a seed revealed before the commitments were fixed")
        act = self._act(record, "reveal")
        seat = act["seat"]
        payload = record.private.get(seat)
        if payload is None:
            return  # another seat's copy of the log: the seed is published at the hand's end
        try:
            seed = R.read_private(payload).get("seed")
        except R.MessageError as e:
            self._fail(record, "bad-private", str(e))
            return
        if (
            not isinstance(seed, bytes)
            or make_commitment(self.table, self.hand_no, seat, seed)
            != (self.commitments or [])[seat]
        ):
            self._fail(record, "reveal-mismatch", f"seat {seat}'s seed does not match", seat)
        self.seeds[seat] = seed

    def _on_hand_record(self, record: StoredRecord) -> None:
        if self.commitments is None:
            self._fail(record, "wrong-phase", f"a {record.kind} record before the deal")
        if self.current is not None and self.current.state is None:
            if len(self.seeds) == self.rules.players:
                self._start_state(record)
            else:
                self.held.append(record)
                return
        self._replay(record)

    def _start_state(self, record: StoredRecord) -> None:
        assert self.current is not None and self.commitments is not None
        seeds = [self.seeds[s] for s in range(self.rules.players)]
        try:
            order = verify_deal(
                self.table, self.hand_no, self.commitments, seeds, self.rules.deck_size
            )
        except DealError as e:
            self._fail(record, "reveal-mismatch", str(e), getattr(e, "seat", None))
            return
        self.current.state = self.match.new_hand(order)

    def _replay(self, record: StoredRecord) -> None:
        kind = record.kind
        if kind == R.DEAL:
            self._check_deal(record)
        elif kind == R.ACTION:
            self._apply_action(record)
        else:
            self._check_hand_end(record)

    def _check_deal(self, record: StoredRecord) -> None:
        state = self._state()
        f = record.fields
        expected = {"hand": self.hand_no, **public_deal_fields(state)}
        if {k: f.get(k) for k in expected} != expected or (
            "red_threes" in f and ("red_threes" not in expected)
        ):
            self._fail(record, "bad-deal", "the deal differs from the deck the seeds give")
        for seat, payload in record.private.items():
            try:
                hand = R.read_private(payload).get("hand")
            except R.MessageError as e:
                self._fail(record, "bad-private", str(e))
            if hand != sorted(state.hands[seat]):
                self._fail(record, "bad-deal", f"seat {seat}'s dealt hand is not the deck's")

    def _state(self) -> Any:
        assert self.current is not None and self.current.state is not None
        return self.current.state

    def _apply_action(self, record: StoredRecord) -> None:
        state = self._state()
        act = self._act(record, "action")
        seat = act["seat"]
        if state.is_over:
            self._fail(record, "after-hand-end", "an action after the hand ended", seat)
        if seat != state.to_move:
            self._fail(
                record, "out-of-turn", f"seat {seat} acted on seat {state.to_move}'s turn", seat
            )
        text = act.get("action")
        try:
            action = self.game.parse_action(text if isinstance(text, str) else "")
            before = snapshot(state)
            state.apply(action, seat)
        except (ValueError, IllegalAction) as e:  # a parse error, or a refused action
            code = getattr(e, "code", "bad-action")
            self._fail(record, "illegal-action", f"seat {seat}: {text!r}: {code}: {e}", seat)
        assert self.current is not None
        self.current.actions += 1
        effects = action_effects(before, state)
        if record.fields.get("red_threes") != effects.red_threes:
            self._fail(record, "bad-effects", "the red threes laid are not the deck's")
        owners = record.fields.get("priv", {})
        if set(effects.new_cards) != set(owners):
            self._fail(record, "bad-effects", "new cards and private payloads do not match")
        for owner, (drawn, picked) in effects.new_cards.items():
            payload = record.private.get(owner)
            if payload is None:
                continue  # another seat's copy of the log: checked when seeds are public
            try:
                data = R.read_private(payload)
            except R.MessageError as e:
                self._fail(record, "bad-private", str(e))
            if data.get("drawn") != drawn or data.get("picked_up") != picked:
                self._fail(record, "bad-effects", "the cards given are not the deck's")

    def _check_hand_end(self, record: StoredRecord) -> None:
        state = self._state()
        assert self.current is not None
        if not state.is_over or self.hand_over:
            self._fail(record, "bad-hand-end", "the hand is not over")
        assert state.end is not None
        scores = self.match.record_hand(state)
        self.current.scores = scores
        self.hand_over = True
        self._hand_end_hash = record.hash
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

    def _on_seeds(self, record: StoredRecord) -> None:
        f = record.fields
        seeds = f.get("seeds")
        if (
            f.get("hand") != self.hand_no
            or not isinstance(seeds, list)
            or len(seeds) != self.rules.players
            or not all(isinstance(s, bytes) for s in seeds)
        ):
            self._fail(record, "bad-seeds", "the published seeds are malformed")
        for seat, seed in enumerate(seeds):
            known = self.seeds.get(seat)
            if known is not None and known != seed:
                self._fail(record, "bad-seeds", f"seat {seat}'s published seed is not its reveal")
            if (
                make_commitment(self.table, self.hand_no, seat, seed)
                != (self.commitments or [])[seat]
            ):
                self._fail(record, "reveal-mismatch", f"seat {seat}'s seed does not match", seat)
            self.seeds[seat] = seed
        held, self.held = self.held, []
        for h in held:
            if self.current is not None and self.current.state is None:
                self._start_state(h)
            self._replay(h)
        if not self.hand_over:
            self._fail(record, "bad-seeds", "seeds published before the hand ended")
        self.seeds_published = True
        self._seeds_hash = record.hash

    # ------------------------------------------------------------------ blind-dealt hands
    def _blind_hand(self) -> BlindHand:
        if self.blind is None:
            self.blind = BlindHand(
                self.rules,
                self.table,
                self.hand_no,
                self.match.dealer,
                self.match.minimums(),
                list(self.keys),
            )
            self.current = HandReplay(self.hand_no, self.match.dealer)
            self.hands.append(self.current)
            self.commitments = []
        return self.blind

    def _on_blind(self, record: StoredRecord) -> None:
        """A blind-dealt hand: follow it as the host did; replay it fully at its end."""
        hand = self._blind_hand()
        kind = record.kind
        if kind == R.DEAL:
            expected = (
                None
                if hand.state is None
                else {"hand": self.hand_no, **public_deal_fields(hand.state)}
            )
            if expected is None or {k: record.fields.get(k) for k in expected} != expected:
                self._fail(record, "bad-deal", "the deal's public cards are not the hand's")
            return
        if kind == R.HAND_END:
            try:
                final = hand.verify()
            except ValueError as e:
                self._fail(record, "bad-hand-end", str(e))
            except Violation as v:
                self._fail(record, v.code, f"seat {v.seat}: {v.reason}", v.seat)
            assert self.current is not None
            self.current.state = final
            self.current.actions = sum(1 for e in hand.events if e.action is not None)
            self._check_hand_end(record)
            return
        if kind == R.SEEDS:
            seeds = [hand.seeds.get(s) for s in range(self.rules.players)]
            if not self.hand_over or record.fields.get("seeds") != seeds:
                self._fail(record, "bad-seeds", "the published seeds are not the seats' reveals")
            self.seeds_published = True
            self._seeds_hash = record.hash
            return
        act = record.action
        found = blind_act(kind, act)
        if found is None or act is None or act.get("type") != kind:
            self._fail(record, "bad-record", f"a {kind} record needs a signed {kind} message")
            return
        seat, type_, fields = found
        if fields.get("hand") != self.hand_no:
            self._fail(record, "wrong-hand", f"signed for hand {fields.get('hand')}", seat)
        try:
            feed_blind(hand, seat, type_, fields, self.game)
        except BlindRefused as e:
            self._fail(record, e.code, f"seat {seat}: {e}", seat)

    def blind_violation(self) -> Violation | None:
        """For a forfeit record after a blind hand: the violation the hand-end replay finds."""
        if self.blind is None or self.blind.phase.value != "done":
            return None
        try:
            self.blind.verify()
        except Violation as v:
            return v
        return None

    def _on_checkpoint(self, record: StoredRecord) -> None:
        cp = record.checkpoint
        assert cp is not None
        if not self.seeds_published or cp["hand"] != self.hand_no:
            self._fail(record, "bad-checkpoint", "a checkpoint out of place")
        result = cp.get("result")
        if (
            cp["head"] != self._seeds_hash
            or not isinstance(result, dict)
            or result.get("hand_end") != self._hand_end_hash
            or result.get("totals") != self.match.scores
        ):
            self._fail(record, "bad-checkpoint", "the checkpoint's result is not the engine's")
        assert self.current is not None
        self.current.checkpoint_signers = frozenset(record.fields["sigs"])
        self._reset_hand(self.hand_no + 1)

    def _on_forfeit(self, record: StoredRecord) -> None:
        f = record.fields
        seat = f.get("seat")
        if (
            f.get("hand") != self.hand_no
            or not isinstance(seat, int)
            or (self.current and self.current.state)
        ):
            self._fail(record, "bad-forfeit", "a forfeit out of place")
        reason = str(f.get("reason", ""))
        if self.blind_mode and reason.startswith("violation"):
            found = self.blind_violation()
            if found is None or found.seat != seat:
                self._fail(record, "bad-forfeit", "the hand's replay finds no such violation")
        self.forfeit = (seat, reason)

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

    Raises ``eventlog.LogError`` for a container failure and :class:`ReplayError` for a false
    game claim, each with the record number.
    """
    from .eventlog import LogVerifier, RecordStream

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
    )
