"""A seat's side of blind-dealt hands (``docs/blind-deal.md``), sans-io.

:class:`BlindSeat` holds the seat's secrets for the current hand and its own
:class:`~canasta_net.deal.blind.hand.BlindHand` (which opens the positions dealt to it), follows the
table's signed messages as they arrive in the log, and answers what the hand needs from the seat.
The seat agent (``table.seat.BlindPart``) holds one, at a remote peer and at the host's own seats
alike, so a seat played inside the host process holds its own cards and nothing more.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from ..canasta.actions import Action
from ..canasta.rules import RuleSet
from ..deal.blind.hand import BlindHand, WrongSealedKey
from ..deal.blind.keys import SEED_SIZE, SeatSecrets
from ..deal.blind.points import card_points
from ..deal.blind.proofs import shuffle
from ..deal.blind.proofs.stages import WorkBefore, work_before
from ..deal.blind.proofs.stages import card_points as proved_card_points
from ..deal.blind.protocol import KeyMessage
from ..deal.blind.schedule import labels_for_rules
from ..hand.blind import feed_message, message_of
from ..hand.protocol import HandContext
from ..identity import Identity
from ..log import records as R
from .signer import SeedKeeper


def act_of_body(body: bytes) -> dict[str, Any] | None:
    """The signed message inside a record body written by this process's own host, if any."""
    fields = R.unpack_map(body, "record", limit=1 << 20)
    act = fields.get("act")
    return R.unpack_map(act, "signed message") if isinstance(act, bytes) else None


StageWork = tuple[list[bytes], bytes]
T = TypeVar("T")


class Background(Protocol):
    """Runs a piece of work (a call that pickles), possibly in another thread or process, and
    returns how to get its result (waiting for it if need be)."""

    def __call__(self, work: Callable[[], T], /) -> Callable[[], T]: ...


# work begun before a hand, by (table, hand, seat, seed): a seat's agent takes up what its host
# began before the agent existed (its seats' first hand, as the host starts listening)
_begun: dict[tuple[bytes, int, int, bytes], Callable[[], WorkBefore]] = {}
_BEGUN_MAX = 64


def begin_work_before(
    table_id: bytes, hand_no: int, seat: int, seed: bytes, rules: RuleSet, run: Background
) -> Callable[[], WorkBefore]:
    """Begin, with ``run``, seat ``seat``'s part of hand ``hand_no`` with ``seed``
    (``stages.work_before``), or take up the same work begun already: once per hand, seat and
    seed; how to get its result."""
    begun = _begun.pop((bytes(table_id), hand_no, seat, bytes(seed)), None)
    return begun if begun is not None else _run(table_id, hand_no, seat, seed, rules, run)


def work_before_hand(
    table_id: bytes, hand_no: int, seat: int, seed: bytes, rules: RuleSet, run: Background
) -> None:
    """Begin, with ``run``, seat ``seat``'s part of hand ``hand_no`` before any agent of the seat
    exists (a host, for the seats it plays, whose seeds it derives, as it starts listening): the
    seat's :class:`BlindSeat` takes it up when it begins that hand with that seed."""
    if len(_begun) >= _BEGUN_MAX:
        _begun.pop(next(iter(_begun)))
    key = (bytes(table_id), hand_no, seat, bytes(seed))
    _begun[key] = _run(table_id, hand_no, seat, seed, rules, run)


def _run(
    table_id: bytes, hand_no: int, seat: int, seed: bytes, rules: RuleSet, run: Background
) -> Callable[[], WorkBefore]:
    labels = tuple(labels_for_rules(rules))
    return run(functools.partial(work_before, table_id, hand_no, seat, seed, labels))


class BlindSeat:
    """One seat's secrets and view of the current blind-dealt hand."""

    def __init__(
        self,
        identity: Identity,
        seat: int,
        game: Any,
        table_id: bytes,
        context: Callable[[], HandContext],
        random_bytes: Callable[[int], bytes] = os.urandom,
        seed_keeper: SeedKeeper | None = None,
        seed_source: Callable[[int], bytes] | None = None,
        version: int = 1,
    ) -> None:
        self.version = version  # of the blind deal (2: docs/blind-proofs.md)
        self.identity = identity
        self.seat = seat
        self.game = game
        self.rules: RuleSet = game.rules
        self.table_id = table_id
        self.context = context
        self.random_bytes = random_bytes
        self.seed_keeper = seed_keeper  # keeps the hand's seed on disk until it is published
        # a seat inside the host: seeds derived from its key, the same again after a restart
        self.seed_source = seed_source
        self.hand: BlindHand | None = None
        self.not_ours: set[int] = set()  # hands a stand-in played for this seat
        self._seen: list[tuple[int, str, dict[str, Any]]] = []  # the current hand's messages
        self._seed_kept = False  # the current hand's seed is fresh and written to the keeper
        self._seed_read_back = False  # the current hand's seed came from the keeper
        # version 2: a key sealed to this seat that is wrong (its hand, the sender's message):
        # the seat exposes its X25519 key for the hand to prove it, and plays no further part in
        # the hand (docs/blind-proofs.md section 10, "A wrong sealed key")
        self.accusation: tuple[int, KeyMessage] | None = None
        self._exposed = False
        # version 2: the next hand's work begun before it (its number, seed and result)
        self._before: tuple[int, bytes, Callable[[], WorkBefore]] | None = None
        if version == 1:  # computed once per process, before any hand
            card_points(labels_for_rules(self.rules))
        else:  # version 2's own (version 1's, on another curve, it never needs)
            labels = tuple(labels_for_rules(self.rules))
            proved_card_points(labels)
            # the proofs' generators too (about 35 ms for 108 cards): the hand's first steps,
            # its announcement and its first stage, would otherwise wait for them
            shuffle.prepare(len(labels))

    def _hand(self, hand_no: int) -> BlindHand:
        """The seat's view of the hand. A restarted seat takes up a hand it had announced
        itself in with the seed it kept; its own announcement in the log tells if it is that."""
        if self.hand is None or self.hand.hand_no != hand_no:
            if self.seed_source is not None:
                self._seed_read_back, self._seed_kept, self._seen = False, True, []
                self.hand = self._new_hand(hand_no, self.seed_source(hand_no))
                return self.hand
            kept = self.seed_keeper.get(hand_no) if self.seed_keeper is not None else None
            self._seed_read_back = kept is not None
            self._seed_kept = False
            self._seen = []
            self.hand = self._new_hand(hand_no, kept or self._fresh_seed(hand_no))
        return self.hand

    def _fresh_seed(self, hand_no: int) -> bytes:
        """A seed nobody has seen for ``hand_no``: the one drawn for the work begun before the
        hand, if any (never announced: that work was for this hand only), else a new one."""
        if self._before is not None and self._before[0] == hand_no:
            return self._before[1]
        return self.random_bytes(SEED_SIZE)

    def work_before(self, hand_no: int, run: Background) -> None:
        """Begin, with ``run`` (in another thread), the part of hand ``hand_no`` this seat can
        work out before the hand begins (version 2: ``stages.work_before``), with the seed it
        will announce in that hand; once per hand, and only for a hand still to come. The hand
        takes it up when it begins (waiting for it if it is not done), if it is that hand and
        that seed; nothing of it is sent before the table asks."""
        if self.version != 2 or hand_no in self.not_ours:
            return
        if self.hand is not None and self.hand.hand_no >= hand_no:
            return  # under way already, or over
        if self._before is not None and self._before[0] == hand_no:
            return
        seed = (
            self.seed_source(hand_no)
            if self.seed_source is not None
            else self.random_bytes(SEED_SIZE)
        )
        self._before = (
            hand_no,
            seed,
            begin_work_before(self.table_id, hand_no, self.seat, seed, self.rules, run),
        )

    def _take_before(self, hand_no: int, seed: bytes) -> WorkBefore | None:
        """The work begun before hand ``hand_no``, once, if it was begun with ``seed`` (work for
        a later hand is kept for it; for this or an earlier one it is dropped)."""
        before = self._before
        if before is None or before[0] > hand_no:
            return None
        self._before = None
        if before[0] != hand_no or before[1] != seed:
            return None
        try:
            return before[2]()
        except Exception:  # the hand works it out itself, as without it
            return None

    def _new_hand(self, hand_no: int, seed: bytes) -> BlindHand:
        ctx = self.context()
        secrets = SeatSecrets.derive(self.table_id, hand_no, self.seat, seed, self.rules.deck_size)
        return BlindHand(
            self.rules,
            self.table_id,
            hand_no,
            ctx.dealer,
            ctx.minimums,
            ctx.keys,
            viewer=self.seat,
            secrets=secrets,
            identity=self.identity,
            trusted=True,  # its owner verified the log (or wrote it) before showing it
            version=self.version,
            before=self._take_before(hand_no, seed),
        )

    def _announcing(self, hand_no: int) -> BlindHand:
        """The hand, about to announce this seat's commitment: always with a fresh seed, kept
        before it is used. A seed read back from the keeper is never announced again (the host
        may never have logged it, or may replay an old table id to learn it a second time)."""
        hand = self._hand(hand_no)
        if self._seed_kept:
            return hand
        if self._seed_read_back:
            hand = self._new_hand(hand_no, self.random_bytes(SEED_SIZE))
            for seat, type_, fields in self._seen:  # the others' announcements so far
                feed_message(hand, seat, type_, fields, self.game)
            self.hand, self._seed_read_back = hand, False
        assert hand.secrets is not None
        if self.seed_keeper is not None:
            self.seed_keeper.put(hand_no, hand.secrets.seed)
        self._seed_kept = True
        return hand

    def lost_secrets(self, hand_no: int) -> bool:
        """Whether the host asks this seat for a hand whose announcement is not its own: a
        restarted seat whose seed for the hand is gone (a stand-in's hands never prompt it)."""
        return hand_no in self.not_ours

    def observe(self, kind: str, act: dict[str, Any] | None) -> None:
        """A record the host wrote (its signed message, if any): follow the hand."""
        found = message_of(kind, act)
        if found is None:
            return
        seat, type_, fields = found
        hand_no = int(fields["hand"])
        if hand_no in self.not_ours or self._accusing(hand_no):
            return  # a hand this seat accuses a sender in follows no further in its view
        hand = self._hand(hand_no)
        if type_ == "announce" and seat == self.seat:
            assert hand.secrets is not None
            if fields.get("commitment") != hand.secrets.commitment:
                # another key (a stand-in) held the seat for this hand: not ours to follow
                self.not_ours.add(hand_no)
                self.hand = None
                return
        if self._seed_read_back:
            if type_ == "announce" and seat == self.seat:  # the kept seed is the one in the log
                self._seed_read_back, self._seed_kept, self._seen = False, True, []
            else:  # kept to rebuild the hand if the kept seed turns out not to be in the log
                self._seen.append((seat, type_, fields))
        try:
            feed_message(hand, seat, type_, fields, self.game)
        except WrongSealedKey as e:  # only this seat sees it: it shows everyone (exposure)
            self.accusation = (hand_no, e.message)
            return
        if type_ in ("announce", "stage") and hand.needs(self.seat).kind == "wait":
            hand.prepare()  # while another seat computes its stage

    def work_ahead(self, kind: str, act: dict[str, Any] | None, run: Background) -> None:
        """Before a record is checked (or, at the host, as the seat's own message is taken):
        start working out, with ``run`` (in another thread), the stage this seat will be asked
        for next (version 2): its own stage when the record is the stage output that stage takes
        as input; or, when the record is this seat's own announcement and its stage 1 is the
        deal's first, that stage on the initial deck (which needs nobody's message), while the
        others announce. The seat still sends it only when prompted, after the records before
        it have checked and been followed."""
        found = message_of(kind, act)
        if found is None or self.hand is None:
            return
        seat, type_, fields = found
        hand = self.hand
        if fields.get("hand") != hand.hand_no or self._accusing(hand.hand_no):
            return
        if type_ == "stage":
            ahead = hand.next_stage_input(fields)
        elif type_ == "announce" and seat == self.seat and hand.secrets is not None:
            own = fields.get("commitment") == hand.secrets.commitment
            ahead = hand.first_stage_input() if own else None
        else:
            return
        if ahead is None:
            return
        stage, incoming = ahead
        if hand.has_stage_ahead(stage, incoming):  # started already, from the host's ``ahead``
            return
        hand.stage_ahead(stage, incoming, run(hand.stage_work(stage, incoming)))

    def _accusing(self, hand_no: int) -> bool:
        return self.accusation is not None and self.accusation[0] == hand_no

    def exposure(self) -> tuple[int, dict[str, Any]] | None:
        """Once, after a wrong key was sealed to this seat: the hand and the ``expose`` fields
        that prove it to everyone (its X25519 private key for the hand, the sender, the
        position). The host then ends the match against whichever seat the exposure shows
        deviated; a host that ignores it leaves the seat waiting, with its copy of the log
        holding the sender's signed key message and its seed store the seed."""
        if self.accusation is None or self._exposed or self.hand is None:
            return None
        hand_no, message = self.accusation
        if self.hand.hand_no != hand_no:
            return None
        self._exposed = True
        return hand_no, self.hand.exposure(message)

    def answer(self, hand_no: int, need: str) -> tuple[str, dict[str, Any]] | None:
        """The message (type, fields) for a deal step the hand waits for, or None if this seat's
        own view of the hand waits for nothing of that kind (or it accuses a sender in it)."""
        if self._accusing(hand_no):
            return None
        hand = self._announcing(hand_no) if need == "announce" else self._hand(hand_no)
        wanted = hand.needs(self.seat)
        if wanted.kind != need or need == "act":
            return None
        return need, hand.respond(wanted)

    def prepare(self) -> None:
        """Work ahead while the seat waits (its stage-2 keys, its sealed deal keys)."""
        if self.hand is not None:
            self.hand.prepare()

    def legal_actions(self, hand_no: int) -> list[Action]:
        if self._accusing(hand_no):
            return []
        hand = self._hand(hand_no)
        if hand.state is None or hand.needs(self.seat).kind != "act":
            return []
        return hand.state.legal_actions()

    def resolve(self, text: str) -> Action:
        """A person's action text as the legal action it means (any suit order, any form the
        engine normalizes); raises ValueError or IllegalAction (with the engine's reason)."""
        assert self.hand is not None and self.hand.state is not None
        state = self.hand.state
        action = state.normalize(self.game.parse_action(text))
        state.check(action, self.seat)
        return action

    def action_fields(self, action: Action) -> dict[str, Any]:
        assert self.hand is not None
        return {"action": str(action), "proofs": self.hand.proofs_for(action)}

    def view(self) -> dict[str, Any] | None:
        """The seat's own view of the hand (its cards, the public ones, counts of the rest)."""
        if self.hand is None or self.hand.state is None:
            return None
        view: dict[str, Any] = self.game.seat_view(self.hand.state, self.seat)
        return view


__all__ = [
    "Background",
    "BlindSeat",
    "StageWork",
    "act_of_body",
    "begin_work_before",
    "work_before_hand",
]
