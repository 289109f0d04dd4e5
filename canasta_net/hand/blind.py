"""A blind-dealt hand (``docs/blind-deal.md``) behind the hand protocol.

:class:`BlindHandProtocol` wraps :class:`~canasta_net.blind.hand.BlindHand`, the machine that the
host, every seat and the auditor already drive the same way. The host never holds a hidden card:
it validates plays on stand-in cards, and at the hand's end, once every seed is revealed, the hand
is replayed with every card known to score it or to name the seat that broke a rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, NoReturn

from ..canasta.rules import RuleSet
from ..deal.blind.hand import BlindHand, BlindRefused, HandPhase
from ..deal.blind.hand import Violation as BlindViolation
from ..deal.blind.proofs.stages import PROVED_HERE
from ..effects import public_deal_fields
from ..games import Game
from ..log import StoredRecord
from ..log import records as R
from .protocol import Applied, Entry, HandFault, HandRefused, HandSetup, Step, Violation

# the messages a blind-dealt hand's records carry (each record's kind is its message's type)
MESSAGE_TYPES = frozenset(R.BLIND_TYPES | {"reveal", "action"})
# version 2: a refusal of one of these messages with one of these codes shows, from the signed
# message and the log before it alone, that its seat deviated (its announced keys malformed, a
# stage output of the wrong form or whose proof fails against its announced key, a released key
# that is not its announced one): the match ends against it at once (docs/blind-proofs.md)
PROVING_TYPES = frozenset({"announce", "stage", "release"})
PROVING_CODES = frozenset(
    {"bad-keys", "bad-stage-proof", "wrong-deck-size", "duplicate-ciphertext", "wrong-key"}
)
# version 2: a recipient's exposure of a wrong sealed key (docs/blind-proofs.md section 10): never
# a hand record of its own; whatever its verdict, the match ends, and the exposure is the
# forfeit's evidence
EXPOSE = R.EXPOSE
_KINDS = frozenset(MESSAGE_TYPES | {R.DEAL, R.HAND_END, R.SEEDS})


def feed_message(hand: BlindHand, seat: int, type_: str, fields: dict[str, Any], game: Any) -> None:
    """Give a blind hand one seat's signed message (raises BlindRefused, nothing changes)."""
    if type_ == "action":
        text = fields.get("action")
        try:
            action = game.parse_action(text if isinstance(text, str) else "")
        except ValueError as e:
            raise BlindRefused("bad-action", str(e)) from None
        hand.feed_action(seat, action, fields.get("proofs"))
    else:
        hand.feed(seat, type_, fields)


def message_of(kind: str, act: dict[str, Any] | None) -> tuple[int, str, dict[str, Any]] | None:
    """A blind-deal record's signed message: (seat, type, fields), or None for other records."""
    if act is None or kind not in MESSAGE_TYPES:
        return None
    type_ = act.get("type")
    if not isinstance(type_, str) or type_ not in MESSAGE_TYPES:
        return None
    return int(act["seat"]), type_, act


class BlindHandProtocol:
    """One blind-dealt hand, for the host (on stand-in cards) and for any follower."""

    mode: ClassVar[str] = "blind"
    version: ClassVar[int] = 1  # of the blind deal: 2 is docs/blind-proofs.md
    kinds: ClassVar[frozenset[str]] = _KINDS
    ahead_kinds: ClassVar[frozenset[str]] = frozenset()  # no proof to check beside the host
    host_sees_cards: ClassVar[bool] = False

    @staticmethod
    def check_game(game: Game) -> None:
        """The blind deal's schedule and card points are the Canasta family's."""
        _canasta_rules(game)

    def __init__(self, setup: HandSetup) -> None:
        rules = _canasta_rules(setup.game)
        self.game = setup.game
        self.hand_no = setup.hand_no
        self.dealer: int = setup.match.dealer
        self.players: int = setup.game.players
        self.blind = BlindHand(
            rules,
            setup.table_id,
            setup.hand_no,
            self.dealer,
            setup.match.minimums(),
            list(setup.keys),
            version=self.version,
            proven=PROVED_HERE if setup.trust_own_work else None,
        )
        self._dealt = False  # the deal record is written (host) or followed
        self._published = False
        self._records: list[StoredRecord] = []  # a follower's deal and action records, in order

    # ------------------------------------------------------------------ the hand's stage
    @property
    def state(self) -> Any:
        return self.blind.state

    @property
    def begun(self) -> bool:
        return self.blind.phase is not HandPhase.ANNOUNCE

    @property
    def dealing(self) -> bool:
        return self.blind.state is None

    @property
    def play_over(self) -> bool:
        return self.blind.phase is HandPhase.DONE

    @property
    def published(self) -> bool:
        return self._published

    def needs(self, seat: int) -> str:
        return self.blind.needs(seat).kind

    def prompt_fields(self, seat: int, need: str) -> dict[str, Any]:
        return {}  # the host cannot list a seat's actions: it does not know its cards

    def holds_secret(self, seat: int) -> bool:
        blind = self.blind
        if blind.phase is HandPhase.DONE:
            return False
        return blind.phase is not HandPhase.ANNOUNCE or seat in blind.commitments

    def forfeitable(self, seat: int) -> bool:
        return self.blind.phase is not HandPhase.DONE

    def forfeit(self, seat: int) -> None:
        """Nothing to undo: the match ends against the seat."""

    def rekey(self, seat: int, key: bytes) -> None:
        self.blind.keys[seat] = key

    def pending(self) -> int:
        return 0

    def catch_up(self, more: Callable[[], bool] | None = None) -> bool:
        return True  # every record is checked as it comes: nothing waits for a secret

    def stage(self) -> tuple[str, str]:
        blind, players = self.blind, self.players
        phase = blind.phase
        if phase is HandPhase.ANNOUNCE:
            if not blind.commitments:
                return "not-started", ""
            return "dealing", f"{len(blind.commitments)} of {players} announcements"
        if blind.state is None:
            return "dealing", f"the blind deal's {phase.value} step"
        if phase is HandPhase.REVEAL:
            return "revealing", f"{len(blind.seeds)} of {players} seeds revealed"
        if phase is HandPhase.DONE:
            return "over", ""
        return "playing", ""

    def unwritten(self) -> list[Entry]:
        if self.blind.state is not None and not self._dealt:
            self._dealt = True
            return [self._deal_entry()]
        return []

    def _deal_fields(self) -> dict[str, Any]:
        """The ``deal`` record: the hand's dealer and initial-meld minimums (logs before they
        were added lack them), and the deal's public cards."""
        return {
            "hand": self.hand_no,
            "dealer": self.dealer,
            "minimums": list(self.blind.minimums),
            **public_deal_fields(self.blind.state),
        }

    def _deal_entry(self) -> Entry:
        return Entry(R.DEAL, self._deal_fields())

    def violation(self) -> Violation | None:
        if self.blind.phase is not HandPhase.DONE:
            return None
        try:
            self._verify()
        except Violation as v:
            return v
        return None

    def _verify(self, on_position: Any = None) -> Any:
        try:
            return self.blind.verify(on_position)
        except BlindViolation as v:
            raise Violation(v.seat, v.code, v.reason) from None

    # ------------------------------------------------------------------ the host takes messages
    def take(self, seat: int, type_: str, fields: dict[str, Any], secret: bytes | None) -> Step:
        if type_ == "commit":
            raise HandRefused("bad-message", "a blind-dealt table takes no commit")
        if type_ == EXPOSE:
            raise self._exposure(seat, fields)
        try:
            feed_message(self.blind, seat, type_, fields, self.game)
        except BlindRefused as e:
            proves = self._proves(type_, e.code)
            raise HandRefused(e.code, str(e), e.params, e.variant, proves=proves) from None
        step = Step()
        if self.blind.state is not None and not self._dealt:  # the deal is complete
            self._dealt = True
            step.follow.append(self._deal_entry())
        return step

    def _proves(self, type_: str, code: str) -> bool:
        """Whether refusing a ``type_`` message with ``code`` proves its seat deviated (version 2
        only: version 1's stages carry no proof, and its refusals stay as they were)."""
        return self.version == 2 and type_ in PROVING_TYPES and code in PROVING_CODES

    def _exposure(self, accuser: int, fields: dict[str, Any]) -> HandRefused:
        """The verdict on ``accuser``'s exposure, as a refusal that proves who deviated: the
        sender it accuses, or the accuser itself. A malformed one proves nothing."""
        try:
            found = self.blind.exposure_verdict(accuser, fields)
        except BlindRefused as e:
            return HandRefused(e.code, str(e))
        return HandRefused(found.code, found.reason, proves=True, culprit=found.seat)

    def check_ahead(self, seat: int, type_: str, fields: dict[str, Any]) -> bool:
        return type_ == "stage" and self.blind.check_ahead(seat, fields)

    def proven_deviation(self, seat: int, type_: str, fields: dict[str, Any]) -> HandRefused | None:
        if type_ == EXPOSE:
            found = self._exposure(seat, fields)
            return found if found.proves else None
        if type_ not in PROVING_TYPES:
            return None
        try:
            feed_message(self.blind, seat, type_, fields, self.game)
        except BlindRefused as e:
            if self._proves(type_, e.code):
                return HandRefused(e.code, str(e), proves=True)
        return None

    def finish(self) -> tuple[Any, Entry]:
        final = self._verify()
        self._published = True
        seeds = [self.blind.seeds[s] for s in range(self.players)]
        return final, Entry(R.SEEDS, {"hand": self.hand_no, "seeds": seeds})

    # ------------------------------------------------------------------ a follower checks records
    def follow(self, record: StoredRecord, applied: Applied) -> None:
        hand = self.blind
        kind = record.kind
        if kind == R.DEAL:
            state = hand.state
            if state is None:
                _fault("bad-deal", "a deal record before the blind deal is done")
            expected = self._deal_fields()
            for named in ("dealer", "minimums"):  # not in logs written before they were added
                if named not in record.fields:
                    del expected[named]
            if {k: record.fields.get(k) for k in expected} != expected:
                _fault("bad-deal", "the deal's dealer, minimums or public cards are not the hand's")
            self._dealt = True
            self._records.append(record)
            return
        if kind == R.HAND_END:
            self._follow_hand_end(record, applied)
            return
        if kind == R.SEEDS:
            seeds = [hand.seeds.get(s) for s in range(self.players)]
            if hand.phase is not HandPhase.DONE or record.fields.get("seeds") != seeds:
                _fault("bad-seeds", "the published seeds are not the seats' reveals")
            self._published = True
            return
        found = message_of(kind, record.action)
        if found is None or record.action is None or record.action.get("type") != kind:
            _fault("bad-record", f"a {kind} record needs a signed {kind} message")
        seat, type_, fields = found
        if fields.get("hand") != self.hand_no:
            _fault("wrong-hand", f"signed for {_hand_name(fields.get('hand'))}", seat)
        try:
            feed_message(hand, seat, type_, fields, self.game)
        except BlindRefused as e:
            _fault(e.code, f"seat {seat}: {e}", seat)
        if type_ == "action":
            self._records.append(record)

    def _follow_hand_end(self, record: StoredRecord, applied: Applied) -> None:
        """With every seed in: replay the hand with every card known, and report the position
        after the deal and after each action now that the cards are known."""
        records = iter(self._records)
        positions: list[tuple[StoredRecord, Any]] = []

        def on_position(state: Any) -> None:
            positions.append((next(records), state.copy()))

        try:
            final = self._verify(on_position)
        except ValueError as e:
            _fault("bad-hand-end", str(e))
        except Violation as v:
            _fault(v.code, f"seat {v.seat}: {v.reason}", v.seat)
        for replayed, state in positions:
            applied(replayed, state)
        applied(record, final)


class BlindProofsHandProtocol(BlindHandProtocol):
    """The blind deal's version 2 (``docs/blind-proofs.md``): every stage output proved, every
    key checked on sight. A deal mode of its own (``blind-v2``): what ``--deal blind`` gives a new
    table."""

    mode: ClassVar[str] = "blind-v2"
    version: ClassVar[int] = 2
    ahead_kinds: ClassVar[frozenset[str]] = frozenset({"stage"})  # its proof, checked meanwhile


class CannotDealBlind(ValueError):
    """A game the blind deal's schedule and card points do not cover (``game``: its name)."""

    def __init__(self, game: str) -> None:
        super().__init__(f"{game} cannot be dealt blind (the Canasta games only)")
        self.game = game


def _canasta_rules(game: Game) -> RuleSet:
    if not isinstance(game.rules, RuleSet):
        raise CannotDealBlind(game.name)
    return game.rules


def _hand_name(hand: Any) -> str:
    return f"hand {R.shown_number(hand)}" if isinstance(hand, int) else f"hand {hand!r}"


def _fault(code: str, reason: str, seat: int | None = None) -> NoReturn:
    raise HandFault(code, reason, seat)
