"""A commit-reveal hand (``docs/deal-commit-reveal.md``) for the host, a seat and the auditor.

The deal: every seat commits to a seed (``commit``), the host writes the fixed list of
commitments with the hand's dealer and initial-meld minimums (``commitments``), every seat reveals
its seed to the host (``reveal``, the seed in the author's private payload), and the host deals
the deck the seeds give (``deal``, each seat's cards in its private payload). Then the seats play
(``action``, new cards in private payloads), and at the hand's end the seeds are published
(``seeds``) so that every copy of the log can check the whole hand.

The host takes messages (:meth:`CommitRevealHand.take`); a follower checks the host's records
(:meth:`CommitRevealHand.follow`) with the same checks. The host's own log holds every seed in the
reveals' private payloads, so its hands are checked as they go; a seat's copy holds only its own
seed, and its hand records wait for the published seeds.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar, NoReturn

from ..deal.commit_reveal import DealError, DealRound, verify_deal
from ..deal.shuffle import SEED_SIZE
from ..deal.shuffle import commitment as make_commitment
from ..effects import Effects, action_effects, public_deal_fields, snapshot
from ..errors import IllegalAction
from ..games import Game
from ..log import StoredRecord
from ..log import records as R
from .protocol import Applied, Entry, HandFault, HandRefused, HandSetup, Step, Violation

_KINDS = frozenset({R.COMMIT, R.COMMITMENTS, R.REVEAL, R.DEAL, R.ACTION, R.HAND_END, R.SEEDS})


class CommitRevealHand:
    """One commit-reveal hand: commitments, list, reveals, deal, play, published seeds."""

    mode: ClassVar[str] = "commit-reveal"
    kinds: ClassVar[frozenset[str]] = _KINDS
    ahead_kinds: ClassVar[frozenset[str]] = frozenset()
    host_sees_cards: ClassVar[bool] = True

    @staticmethod
    def check_game(game: Game) -> None:
        """Every game can be dealt by commit-reveal."""

    def __init__(self, setup: HandSetup) -> None:
        self.game = setup.game
        self.match = setup.match
        self.table_id = setup.table_id
        self.hand_no = setup.hand_no
        self.players: int = setup.game.players
        self.dealer: int = setup.match.dealer
        self.minimums: list[int] = list(setup.match.minimums())
        self.round = DealRound(setup.table_id, setup.hand_no, self.players)
        self._state: Any = None
        self.listed: list[bytes] | None = None  # the commitments as the log fixed them
        self.seeds: dict[int, bytes] = {}  # seeds known so far (a follower's own, or all)
        self.held: list[StoredRecord] = []  # a follower's hand records waiting for the seeds
        # once the seeds came: the held records still to check (:meth:`catch_up`), the observer
        # to tell of each, and the seeds record's number (a fault found after the last one)
        self._unchecked: deque[StoredRecord] = deque()
        self._applied: Applied | None = None
        self._seeds_index = -1
        self.hand_ended = False
        self._published = False

    # ------------------------------------------------------------------ the hand's stage
    @property
    def state(self) -> Any:
        return self._state

    @property
    def begun(self) -> bool:
        return self.listed is not None

    @property
    def dealing(self) -> bool:
        return self._state is None

    @property
    def play_over(self) -> bool:
        return self._state is not None and bool(self._state.is_over)

    @property
    def published(self) -> bool:
        return self._published

    def needs(self, seat: int) -> str:
        if self._state is not None:
            if self._state.is_over:
                return "wait"
            return "act" if self._state.to_move == seat else "wait"
        if not self.round.commitments_complete:
            return "commit" if seat in self.round.missing_commitments() else "wait"
        return "reveal" if seat in self.round.missing_reveals() else "wait"

    def prompt_fields(self, seat: int, need: str) -> dict[str, Any]:
        if need == "act" and self._state is not None:
            return {"legal": [str(a) for a in self._state.legal_actions()]}
        return {}

    def holds_secret(self, seat: int) -> bool:
        # the seat committed to a seed that only it knows and has not revealed it yet, and the
        # hand is not dealt yet (once revealed, the seed is the host's to publish)
        return (
            self._state is None
            and seat not in self.round.missing_commitments()
            and seat in self.round.missing_reveals()
        )

    def forfeitable(self, seat: int) -> bool:
        # a seat that has revealed its seed withheld nothing: it cannot forfeit this hand
        return self._state is None and seat in self.round.missing_reveals()

    def forfeit(self, seat: int) -> None:
        self.round.forfeit(seat)

    def rekey(self, seat: int, key: bytes) -> None:
        """The deal's messages carry no signature of their own: nothing to change."""

    def violation(self) -> Violation | None:
        return None

    def proven_deviation(self, seat: int, type_: str, fields: dict[str, Any]) -> HandRefused | None:
        return None  # a refused commit-reveal message proves nothing: it is simply not logged

    def check_ahead(self, seat: int, type_: str, fields: dict[str, Any]) -> bool:
        return False  # nothing to check ahead: the host checks each message as it comes

    def pending(self) -> int:
        return len(self.held) + len(self._unchecked)

    def stage(self) -> tuple[str, str]:
        committed = self.players - len(self.round.missing_commitments())
        if self.listed is None:
            if not committed:
                return "not-started", ""
            return "dealing", f"{committed} of {self.players} commitments"
        if self._state is None and not self.held and not self._unchecked:
            return "revealing", f"{len(self.seeds)} of {self.players} seeds known"
        if self._state is None or not self._state.is_over:
            return "playing", ""
        return "over", ""

    def unwritten(self) -> list[Entry]:
        if self.listed is None and self.round.commitments_complete:
            self.listed = self.round.commitment_list()
            return [self.commitments_entry()]
        if self.listed is not None and self._state is None and self._deal_state():
            return [self._deal_entry()]
        return []

    # ------------------------------------------------------------------ the records it writes
    def commitments_entry(self) -> Entry:
        """The host's fixed list of commitments, written before any seed is released."""
        return Entry(
            R.COMMITMENTS,
            {
                "hand": self.hand_no,
                "dealer": self.dealer,
                "minimums": self.minimums,
                "commitments": self.round.commitment_list(),
            },
        )

    def _deal_entry(self) -> Entry:
        state = self._state
        return Entry(
            R.DEAL,
            {
                "hand": self.hand_no,
                "pile": list(state.pile),
                **public_deal_fields(state),
                "stock": len(state.stock),
            },
            {seat: {"hand": sorted(state.hands[seat])} for seat in range(self.players)},
        )

    def _play(self, seat: int, action: Any, *, precheck: bool = True) -> Effects:
        """Apply ``seat``'s action to the state (raises IllegalAction, and changes nothing).

        ``precheck``: ask the engine's ``check`` first (the host, whose refusal codes a seat
        reads). A follower leaves it out: the engine's ``apply`` validates the action completely
        itself (the ``GameState`` contract), and a refused record ends the follow anyway."""
        state = self._state
        if precheck:
            state.check(action, seat)
        before = snapshot(state)
        state.apply(action, seat)
        return action_effects(before, state)

    @staticmethod
    def _effects_step(effects: Effects) -> Step:
        step = Step()
        if effects.red_threes is not None:
            step.fields["red_threes"] = effects.red_threes
        step.private = {
            seat: {"drawn": drawn, "picked_up": picked}
            for seat, (drawn, picked) in effects.new_cards.items()
        }
        return step

    # ------------------------------------------------------------------ the host takes messages
    def take(self, seat: int, type_: str, fields: dict[str, Any], secret: bytes | None) -> Step:
        try:
            if type_ == "commit":
                return self._take_commit(seat, fields)
            if type_ == "reveal":
                return self._take_reveal(seat, fields, secret)
            if type_ == "action":
                return self._take_action(seat, fields)
        except DealError as e:
            raise HandRefused(e.code, str(e)) from None
        except R.MessageError as e:
            raise HandRefused(e.code, str(e)) from None
        raise HandRefused("bad-message", f"{type_!r} is not used at a {self.mode} table")

    def _stage_is(self, need: str) -> None:
        stage = (
            "playing"
            if self._state is not None
            else "revealing"
            if self.round.commitments_complete
            else "committing"
        )
        wanted = {"commit": "committing", "reveal": "revealing", "act": "playing"}[need]
        if stage != wanted:
            raise HandRefused("wrong-phase", f"the table is {stage}, not {wanted}")

    def _take_commit(self, seat: int, fields: dict[str, Any]) -> Step:
        self._stage_is("commit")
        self.round.add_commitment(seat, R.typed(fields, "commitment", bytes, "commit"))
        step = Step()
        if self.round.commitments_complete:
            self.listed = self.round.commitment_list()
            step.follow.append(self.commitments_entry())
        return step

    def _take_reveal(self, seat: int, fields: dict[str, Any], seed: bytes | None) -> Step:
        self._stage_is("reveal")
        if not isinstance(seed, bytes) or len(seed) != SEED_SIZE:
            raise HandRefused("seed-size", "a reveal carries the 32-byte seed")
        if R.typed(fields, "commitment", bytes, "reveal") != make_commitment(
            self.table_id, self.hand_no, seat, seed
        ):
            raise HandRefused("reveal-mismatch", f"seat {seat}'s seed does not match")
        self.round.add_reveal(seat, seed)
        self.seeds[seat] = seed
        step = Step(private={seat: {"seed": seed}})
        if not self.round.missing_reveals():
            self._state = self.match.new_hand(self.round.deck(self.game.deck_size))
            step.follow.append(self._deal_entry())
        return step

    def _take_action(self, seat: int, fields: dict[str, Any]) -> Step:
        self._stage_is("act")
        text = R.typed(fields, "action", str, "action")
        try:
            action = self.game.parse_action(text)
        except ValueError as e:  # ActionParseError, or int() on a digit like "²" in parse_action
            raise HandRefused("bad-action", str(e)) from None
        try:
            effects = self._play(seat, action)
        except IllegalAction as e:
            raise HandRefused(e.code, e.message, e.params, e.variant) from None
        return self._effects_step(effects)

    def finish(self) -> tuple[Any, Entry]:
        self._published = True
        seeds = [self.seeds[s] for s in range(self.players)]
        return self._state, Entry(R.SEEDS, {"hand": self.hand_no, "seeds": seeds})

    # ------------------------------------------------------------------ a follower checks records
    def follow(self, record: StoredRecord, applied: Applied) -> None:
        kind = record.kind
        if kind == R.COMMIT:
            self._follow_commit(record)
        elif kind == R.COMMITMENTS:
            self._follow_commitments(record)
        elif kind == R.REVEAL:
            self._follow_reveal(record)
        elif kind == R.SEEDS:
            self._follow_seeds(record, applied)
        else:  # deal, action, hand-end
            if self.listed is None:
                _fault("wrong-phase", f"a {kind} record before the deal")
            if self._state is None and not self._deal_state():
                self.held.append(record)
                return
            self._check(record, applied)

    def _act(self, record: StoredRecord, type_: str) -> dict[str, Any]:
        act = record.action
        if act is None or act.get("type") != type_:
            _fault("bad-record", f"a {record.kind} record needs a signed {type_}")
        if act["hand"] != self.hand_no:
            _fault("wrong-hand", f"signed for hand {R.shown_number(act['hand'])}", act["seat"])
        return act

    def _follow_commit(self, record: StoredRecord) -> None:
        if self.listed is not None:
            _fault("wrong-phase", "a commitment after the list was fixed")
        act = self._act(record, "commit")
        seat, value = act["seat"], act.get("commitment")
        if not isinstance(value, bytes) or seat not in self.round.missing_commitments():
            _fault("bad-commitment", f"seat {seat}'s commitment is malformed", seat)
        try:
            self.round.add_commitment(seat, value)
        except DealError:
            _fault("bad-commitment", f"seat {seat}'s commitment is malformed", seat)

    def _follow_commitments(self, record: StoredRecord) -> None:
        f = record.fields
        listed = [self.round.commitment_of(s) for s in range(self.players)]
        if f.get("hand") != self.hand_no or f.get("commitments") != listed:
            _fault("bad-commitments", "the list differs from the seats' commitments")
        if f.get("dealer") != self.dealer or f.get("minimums") != self.minimums:
            _fault("bad-commitments", "wrong dealer or initial-meld minimums")
        self.listed = listed  # type: ignore[assignment]

    def _follow_reveal(self, record: StoredRecord) -> None:
        if self.listed is None:
            _fault("wrong-phase", "a seed revealed before the commitments were fixed")
        act = self._act(record, "reveal")
        seat = act["seat"]
        payload = record.private.get(seat)
        if payload is None:
            return  # another seat's copy of the log: the seed is published at the hand's end
        seed = _private(payload).get("seed")
        if not isinstance(seed, bytes) or not self._matches(seat, seed):
            _fault("reveal-mismatch", f"seat {seat}'s seed does not match", seat)
        try:
            self.round.add_reveal(seat, seed)
        except DealError as e:
            _fault("wrong-phase", str(e))  # the host took a second reveal: its doing
        self.seeds[seat] = seed

    def _matches(self, seat: int, seed: bytes) -> bool:
        assert self.listed is not None
        return make_commitment(self.table_id, self.hand_no, seat, seed) == self.listed[seat]

    def _deal_state(self) -> bool:
        """With every seed known, deal the deck they give; False while some are unknown."""
        if len(self.seeds) < self.players:
            return False
        assert self.listed is not None
        seeds = [self.seeds[s] for s in range(self.players)]
        try:
            order = verify_deal(
                self.table_id, self.hand_no, self.listed, seeds, self.game.deck_size
            )
        except DealError as e:
            _fault("reveal-mismatch", str(e), getattr(e, "seat", None))
        self._state = self.match.new_hand(order)
        return True

    def _check(self, record: StoredRecord, applied: Applied) -> None:
        kind = record.kind
        if kind == R.DEAL:
            self._check_deal(record)
        elif kind == R.ACTION:
            self._check_action(record)
        else:
            if not self._state.is_over or self.hand_ended:
                _fault("bad-hand-end", "the hand is not over")
            self.hand_ended = True
        applied(record, self._state)

    def _check_deal(self, record: StoredRecord) -> None:
        expected = self._deal_entry()
        f = record.fields
        wanted = {"hand": self.hand_no, **public_deal_fields(self._state)}
        if {k: f.get(k) for k in wanted} != wanted:
            _fault("bad-deal", "the deal differs from the deck the seeds give")
        for seat, payload in record.private.items():
            if _private(payload).get("hand") != expected.private.get(seat, {}).get("hand"):
                _fault("bad-deal", f"seat {seat}'s dealt hand is not the deck's")

    def _check_action(self, record: StoredRecord) -> None:
        state = self._state
        act = self._act(record, "action")
        seat = act["seat"]
        if state.is_over:
            _fault("after-hand-end", "an action after the hand ended", seat)
        if seat != state.to_move:
            _fault("out-of-turn", f"seat {seat} acted on seat {state.to_move}'s turn", seat)
        text = act.get("action")
        try:
            action = self.game.parse_action(text if isinstance(text, str) else "")
            effects = self._play(seat, action, precheck=False)
        except (ValueError, IllegalAction) as e:  # a parse error, or a refused action
            code = getattr(e, "code", "bad-action")
            _fault("illegal-action", f"seat {seat}: {text!r}: {code}: {e}", seat)
        step = self._effects_step(effects)
        if record.fields.get("red_threes") != step.fields.get("red_threes"):
            _fault("bad-effects", "the red threes laid are not the deck's")
        if set(step.private) != set(record.fields.get("priv", {})):
            _fault("bad-effects", "new cards and private payloads do not match")
        for owner, data in step.private.items():
            payload = record.private.get(owner)
            if payload is None:
                continue  # another seat's copy of the log: checked when seeds are public
            got = _private(payload)
            if got.get("drawn") != data["drawn"] or got.get("picked_up") != data["picked_up"]:
                _fault("bad-effects", "the cards given are not the deck's")

    def _follow_seeds(self, record: StoredRecord, applied: Applied) -> None:
        f = record.fields
        seeds = f.get("seeds")
        if (
            f.get("hand") != self.hand_no
            or not isinstance(seeds, list)
            or len(seeds) != self.players
            or not all(isinstance(s, bytes) for s in seeds)
        ):
            _fault("bad-seeds", "the published seeds are malformed")
        if self.listed is None:
            _fault("bad-seeds", "seeds published before the hand ended")
        for seat, seed in enumerate(seeds):
            known = self.seeds.get(seat)
            if known is not None and known != seed:
                _fault("bad-seeds", f"seat {seat}'s published seed is not its reveal")
            if not self._matches(seat, seed):
                _fault("reveal-mismatch", f"seat {seat}'s seed does not match", seat)
            self.seeds[seat] = seed
        self._unchecked = deque(self.held)
        self.held = []
        self._applied = applied
        self._seeds_index = record.index

    def catch_up(self, more: Callable[[], bool] | None = None) -> bool:
        # the hand's records held until its seeds came, checked in order; ``more`` is asked
        # after each one whether to go on now (a seat spreads the work over reactor turns)
        unchecked, applied = self._unchecked, self._applied
        if applied is None:
            return True  # nothing was held back: the seeds have not come
        while unchecked:
            h = unchecked.popleft()
            try:
                if self._state is None:
                    self._deal_state()
                self._check(h, applied)
            except HandFault as fault:
                fault.index = h.index if fault.index is None else fault.index
                raise
            if unchecked and more is not None and not more():
                return False
        self._applied = None
        if not self.hand_ended:
            _fault("bad-seeds", "seeds published before the hand ended", index=self._seeds_index)
        self._published = True
        return True


def _fault(code: str, reason: str, seat: int | None = None, index: int | None = None) -> NoReturn:
    raise HandFault(code, reason, seat, index)


def _private(payload: bytes) -> dict[str, Any]:
    try:
        return R.read_private(payload)
    except R.MessageError as e:
        _fault("bad-private", str(e))
