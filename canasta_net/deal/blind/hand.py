"""One blind-dealt hand as a state machine, sans-io (``docs/blind-deal.md`` section 9).

The host, every seat and the auditor drive the same :class:`BlindHand` with the same signed
messages (``announce``, ``stage``, ``keys``, ``release``, ``reds``, ``action``, ``reveal``), so
they agree on what the hand waits for next. Each holds only what it may know:

- the host and the auditor (``viewer=None``) know the public cards: upcards, red threes, and every
  card proved when it left a hand;
- a seat (``viewer=seat`` with its :class:`SeatSecrets`) also opens the positions dealt to it.

The engine runs on **stand-in cards**: every position the holder of this object cannot open holds
some card not known to be elsewhere (never a red three in a hand), and a proved card is swapped in
when its position opens. Guards that read the hidden rest of a hand are skipped for hands held
as stand-ins (``HandState.hidden_hands``); :meth:`BlindHand.verify` replays the hand at its end
with every card known and names the seat that broke a rule.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from ...canasta.actions import Action, Draw
from ...canasta.rules import RuleSet
from ...canasta.state import HandState, upcard_turns_again
from ...cards import Deck, is_red_three
from ...errors import IllegalAction
from ...identity import Identity
from ...schema import Bytes, Int, List, Map, Schema, SchemaError, Tuple, validate
from . import points
from .audit import audit_key_message, check_open, check_reveal, replay_deal_ids
from .errors import BadParameters, BlindError, NotACard, SealedKeyError, WrongPublishedKey
from .keys import SEED_SIZE, SeatSecrets, derive_x25519, x25519_private_bytes
from .proofs import group as group2
from .proofs import shuffle as shuffle2
from .proofs import stages as stages2
from .proofs.stages import ProvenStages, PublicKeys, StageSecrets, WorkBefore
from .protocol import (
    KEYS_SIGNED_HERE,
    CardIndex,
    KeyMessage,
    KeyRelease,
    StageOutput,
    decode_deck,
    encode_deck,
    initial_deck,
    make_key_message,
    open_sealed,
    receive_key_message,
    seal_key,
    sign_key_message,
    stage1,
    stage2,
    stage2_multipliers,
)
from .schedule import DealSchedule, labels_for_rules, schedule_for_rules

BLIND_ACT_TYPES = frozenset({"announce", "stage", "keys", "release", "reds", "reveal"})


class HandPhase(StrEnum):
    ANNOUNCE = "announce"
    STAGES = "stages"
    DEAL_KEYS = "deal-keys"
    UPCARD = "upcard"
    DEAL_REDS = "deal-reds"
    PLAY = "play"
    DRAW = "draw"
    REVEAL = "reveal"
    DONE = "done"


class BlindRefused(ValueError):
    """A message the hand refuses; ``code`` is stable and nothing changed (``params`` and
    ``variant``: the engine's, where the engine refused the action)."""

    def __init__(
        self,
        code: str,
        message: str,
        params: Mapping[str, str | int] | None = None,
        variant: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.params = params
        self.variant = variant


class WrongSealedKey(BlindRefused):
    """Version 2, in a seat's own view: a key sealed to it (``message``) is not the sender's
    announced one, or is no key. Only this seat can see it; it proves it to everyone by exposing
    its X25519 key for the hand (:meth:`BlindHand.exposure`, ``docs/blind-proofs.md`` section
    10)."""

    def __init__(self, message: KeyMessage, error: BlindError) -> None:
        super().__init__(error.code, str(error))
        self.message = message


class Violation(Exception):
    """Found by the hand-end replay: ``seat`` broke a rule or the protocol (``code``)."""

    def __init__(self, seat: int, code: str, reason: str) -> None:
        super().__init__(f"seat {seat}: {code}: {reason}")
        self.seat = seat
        self.code = code
        self.reason = reason


@dataclass(frozen=True)
class Need:
    """What the hand waits for from one seat."""

    kind: str  # announce, stage, keys, release, reds, act, reveal or wait
    positions: tuple[int, ...] = ()
    to: int | None = None


WAIT = Need("wait")


@dataclass
class Delivery:
    """Positions being opened to ``recipient``: every other seat sends its keys, then the
    recipient reports the red threes among them."""

    recipient: int
    positions: tuple[int, ...]
    sent: set[int] = field(default_factory=set)


@dataclass
class Event:
    """What the hand-end replay re-checks: an action, or the red threes reported on positions."""

    seat: int
    action: Action | None = None
    reds: tuple[int, ...] = ()  # positions reported as red threes
    checked: tuple[int, ...] = ()  # positions the report covers


# The shape of each signed message's own fields (``docs/blind-deal.md`` section 15); what the
# values mean (positions of the deck, keys that open them) is checked by the hand as it takes them.
_PROOF: Final = Tuple(Int(), List(Bytes()))  # [position, [key of seat 0, ..., key of seat S-1]]
_PROOFS: Final = List(_PROOF)
FIELD_SCHEMAS: Final[dict[str, Map]] = {
    "announce": Map({"commitment": Bytes(size=32), "x25519": Bytes(size=32)}),
    "stage": Map({"stage": Int(), "deck": Bytes(), "sig": Bytes()}),
    # [position, recipient, ciphertext, signature]
    "keys": Map({"keys": List(Tuple(Int(), Int(), Bytes(), Bytes()))}),
    "release": Map({"releases": List(Tuple(Int(), Bytes(), Bytes()))}),  # [position, key, sig]
    "reds": Map({"proofs": _PROOFS}),
    "reveal": Map({"seed": Bytes(size=SEED_SIZE)}),
}
# version 2 (docs/blind-proofs.md): the announcement carries the seat's public keys, and a stage
# output its proof instead of a separate signature (the act's signature covers it)
FIELD_SCHEMAS_V2: Final[dict[str, Map]] = {
    **FIELD_SCHEMAS,
    "announce": Map({"commitment": Bytes(size=32), "x25519": Bytes(size=32), "keys": Bytes()}),
    "stage": Map({"stage": Int(), "deck": Bytes(), "proof": Bytes()}),
}
# version 2: a recipient's exposure of its per-hand X25519 private key, accusing the sender of
# the key it sealed to it for a position (docs/blind-proofs.md section 10, "A wrong sealed key")
EXPOSE_SCHEMA: Final = Map({"x25519": Bytes(size=32), "sender": Int(), "position": Int()})
# the code of an exposure's verdict against the accuser (the sender's deviations keep theirs:
# ``wrong-key``, ``sealed-key-error``)
FALSE_ACCUSATION: Final = "false-accusation"


def _checked(schema: Schema, value: Any, what: str) -> Any:
    try:
        return validate(schema, value, what)
    except SchemaError as e:
        raise BlindRefused("bad-message", str(e)) from None


class BlindHand:
    """One hand under the blind deal, as the host, a seat or the auditor follows it."""

    def __init__(
        self,
        rules: RuleSet,
        table_id: bytes,
        hand_no: int,
        dealer: int,
        minimums: Sequence[int],
        identity_keys: Sequence[bytes],
        *,
        viewer: int | None = None,
        secrets: SeatSecrets | None = None,
        identity: Identity | None = None,
        trusted: bool = False,
        version: int = 1,
        proven: ProvenStages | None = None,
        before: WorkBefore | None = None,
    ) -> None:
        """``before``: version 2, a seat's view: its part of the hand worked out before the hand
        began (``stages.work_before``), used if it was made for this hand, seat and seed."""
        if version not in (1, 2):
            raise ValueError(f"no blind deal version {version}")
        # version 2: secp256k1, every stage output proved (docs/blind-proofs.md)
        self.version = version
        self.rules = rules
        # ``trusted``: the messages come from a log this process has verified already (a seat's
        # replayer, or the host's own records): signatures and deck forms are not checked twice
        self.trusted = trusted
        # version 2: the stage outputs this process proved itself, whose proofs a check may
        # skip (a seat's own outputs coming back in its copy of the log; ``ProvenStages``); set,
        # the follower also takes the key messages this process signed as verified
        # (``protocol.SignedHere``)
        self.proven = proven
        # version 2: the stage step whose output was last checked ahead of its record (wire
        # ``ahead``): one check a step, however many the host sends
        self.ahead_step: int | None = None
        self.table_id = bytes(table_id)
        self.hand_no = hand_no
        self.dealer = dealer
        self.minimums = list(minimums)
        self.keys = list(identity_keys)
        self.seats = rules.players
        self.viewer = viewer
        self.secrets = secrets
        self.identity = identity
        self.labels = labels_for_rules(rules)
        self.size = len(self.labels)
        self.face: Sequence[int] = Deck(rules.decks, rules.jokers_per_deck).face
        self.schedule: DealSchedule = schedule_for_rules(rules, dealer)
        self.dealt = self.schedule.upcard
        self.phase = HandPhase.ANNOUNCE
        self.commitments: dict[int, bytes] = {}
        self.x25519: dict[int, bytes] = {}
        self.stage_outputs: list[list[bytes]] = []
        self.stage_sigs: list[bytes] = []
        self.deal_keys_from: set[int] = set()
        self.key_messages: list[KeyMessage] = []
        self.releases: dict[int, dict[int, KeyRelease]] = {}
        self.release_position: int | None = None
        self.consumed = 0  # positions taken from the upcard on (upcards, replacements, draws)
        self.holder: dict[int, int] = {}  # a hidden position in a hand -> the seat holding it
        self.fixed: dict[int, int] = {}  # position -> card id, known to this holder
        self.public: set[int] = set()  # positions opened to everyone
        self.received: dict[int, dict[int, int]] = {}  # viewer: position -> seat -> key
        self.delivery: Delivery | None = None
        self.report_positions: tuple[int, ...] = ()
        self.reds_round = 0  # deal: index (from the dealer's left) of the seat reporting
        self.pending_draw: list[int] = []  # positions a draw has taken so far
        self.pending_reds: list[int] = []
        self.pending_action: tuple[Action, list[tuple[int, int]]] | None = None
        self.events: list[Event] = []
        self.state: HandState | None = None
        self.pos_card: list[int] = []
        self.seeds: dict[int, bytes] = {}
        self._prepared: dict[str, Any] = {}  # see prepare()
        self.public_keys: dict[int, PublicKeys] = {}  # version 2: each seat's announced keys
        self.secrets2: StageSecrets | None = None
        if version == 2:
            self.initial: list[bytes] = list(stages2.card_points(tuple(self.labels)))
            # the proofs' generators, once per process, now rather than in the first stage's
            # check or proof (on the deal's critical path)
            shuffle2.prepare(self.size)
            self._ids2 = {x: i for i, x in enumerate(self.initial)}
            if secrets is not None and before is not None:
                self._take_before(before, secrets)
            if secrets is not None and self.secrets2 is None:
                self.secrets2 = StageSecrets.derive(
                    self.table_id, hand_no, secrets.seat, secrets.seed, self.size
                )
        for s in range(self.seats):
            for p in self.schedule.hands[s]:
                self.holder[p] = s
        if (viewer is None) != (secrets is None) or (secrets is not None and identity is None):
            raise ValueError("a seat's view needs its seat, secrets and identity together")

    def _take_before(self, before: WorkBefore, secrets: SeatSecrets) -> None:
        """Take up the seat's work done before the hand (version 2) if it is this hand's, this
        seat's and this seed's: its stage secrets, its proofs' starts and, for seat 0, its stage
        1 on the initial deck (as :meth:`stage_ahead` keeps a stage worked out ahead)."""
        fits = before.fits(self.table_id, self.hand_no, secrets.seat, secrets.seed, self.size)
        if not fits or before.initial != tuple(self.initial):
            return
        self.secrets2 = before.secrets
        for start in before.starts:
            self._prepared[f"start{start.stage}"] = start
            self._prepared[f"started{start.stage}"] = True
        if before.first_stage is not None:
            self._prepared["started1"] = True
            first = before.first_stage
            self.stage_ahead(1, list(self.initial), lambda: first)

    # ------------------------------------------------------------------ helpers
    @functools.cached_property
    def cards(self) -> CardIndex:
        """Version 1's card points (P-256) and their ids, worked out when first needed: a
        version-2 hand has its own (``initial``) and never needs them."""
        return CardIndex(self.labels)

    @property
    def final_deck(self) -> list[bytes]:
        return self.stage_outputs[-1]

    @property
    def stock_left(self) -> int:
        return self.size - self.dealt - self.consumed

    def _next_positions(self, count: int) -> tuple[int, ...]:
        start = self.dealt + self.consumed
        return tuple(range(start, start + min(count, self.stock_left)))

    def _deal_order(self) -> list[int]:
        return [(self.dealer + 1 + k) % self.seats for k in range(self.seats)]

    def _ours(self, seat: int) -> bool:
        return self.viewer is not None and seat == self.viewer

    # ------------------------------------------------------------------ what the hand waits for
    def needs(self, seat: int) -> Need:
        phase = self.phase
        if phase is HandPhase.ANNOUNCE:
            return WAIT if seat in self.commitments else Need("announce")
        if phase is HandPhase.STAGES:
            step = len(self.stage_outputs)
            return Need("stage") if step % self.seats == seat else WAIT
        if phase is HandPhase.DEAL_KEYS:
            return WAIT if seat in self.deal_keys_from else Need("keys")
        if phase is HandPhase.UPCARD:
            assert self.release_position is not None
            taken = self.releases.get(self.release_position, {})
            return WAIT if seat in taken else Need("release", (self.release_position,))
        if phase in (HandPhase.DEAL_REDS, HandPhase.DRAW):
            delivery = self.delivery
            if delivery is not None:
                if seat == delivery.recipient or seat in delivery.sent:
                    return WAIT
                return Need("keys", delivery.positions, delivery.recipient)
            if seat == self._reporting_seat():
                return Need("reds", self.report_positions)
            return WAIT
        if phase is HandPhase.PLAY:
            assert self.state is not None
            return Need("act") if self.state.to_move == seat else WAIT
        if phase is HandPhase.REVEAL:
            return WAIT if seat in self.seeds else Need("reveal")
        return WAIT

    def _reporting_seat(self) -> int:
        if self.phase is HandPhase.DEAL_REDS:
            return self._deal_order()[self.reds_round]
        assert self.state is not None
        return self.state.to_move

    # ------------------------------------------------------------------ messages in
    def feed(self, seat: int, type_: str, fields: dict[str, Any]) -> None:
        """Take ``seat``'s verified signed message (its fields), or raise BlindRefused."""
        need = self.needs(seat)
        wanted = "act" if type_ == "action" else type_
        if need.kind != wanted:
            raise BlindRefused(
                "wrong-phase", f"the hand waits for {need.kind!r} from seat {seat}, not {type_!r}"
            )
        schema = (FIELD_SCHEMAS_V2 if self.version == 2 else FIELD_SCHEMAS).get(type_)
        if schema is not None:
            _checked(schema, fields, type_)
        try:
            handler = {
                "announce": self._announce,
                "stage": self._stage,
                "keys": self._keys,
                "release": self._release,
                "reds": self._reds,
                "reveal": self._reveal,
            }.get(type_)
            if handler is not None:
                handler(seat, fields, need)
            else:
                raise BlindRefused("bad-message", "an action goes through feed_action")
        except BlindError as e:
            raise BlindRefused(e.code, str(e)) from None
        except (TypeError, ValueError, KeyError, IndexError) as e:
            if isinstance(e, BlindRefused):
                raise
            raise BlindRefused("bad-message", f"{type_}: {e}") from None

    def _announce(self, seat: int, fields: dict[str, Any], need: Need) -> None:
        if self.version == 2:
            try:
                keys = PublicKeys.decode(fields["keys"])
            except group2.GroupError as e:
                raise BlindRefused("bad-keys", f"seat {seat}'s announced keys: {e}") from None
            if len(keys.position_keys) != self.size:
                raise BlindRefused("bad-keys", f"seat {seat} announced keys for another deck")
            self.public_keys[seat] = keys
        self.commitments[seat] = fields["commitment"]
        self.x25519[seat] = fields["x25519"]
        if len(self.commitments) == self.seats:
            self.phase = HandPhase.STAGES

    def _stage(self, seat: int, fields: dict[str, Any], need: Need) -> None:
        if self.version == 2:
            self._stage2(seat, fields)
            return
        step = len(self.stage_outputs)
        stage = 1 + step // self.seats
        deck_bytes, sig = fields["deck"], fields["sig"]
        if fields["stage"] != stage:
            raise BlindRefused("bad-message", f"stage: expected the stage-{stage} deck")
        output = StageOutput(
            self.table_id, self.hand_no, stage, seat, tuple(decode_deck(deck_bytes)), sig
        )
        if not self.trusted:
            output.check(self.keys[seat], self.table_id, self.hand_no, self.size)
        elif len(output.deck) != self.size:
            raise BlindRefused("bad-deck", "a stage output of the wrong size")
        self.stage_outputs.append(list(output.deck))
        self.stage_sigs.append(sig)
        if len(self.stage_outputs) == 2 * self.seats:
            self.phase = HandPhase.DEAL_KEYS

    def _stage2(self, seat: int, fields: dict[str, Any]) -> None:
        """Version 2: the output must come with a proof that it is its input permuted and raised
        to the seat's announced key (stage 1), or raised position by position to its announced
        position keys (stage 2); a failure names the seat before any key is released."""
        step = len(self.stage_outputs)
        stage = 1 + step // self.seats
        if fields["stage"] != stage:
            raise BlindRefused("bad-message", f"stage: expected the stage-{stage} deck")
        data = fields["deck"]
        size = group2.POINT_SIZE
        if len(data) != self.size * size:
            raise BlindRefused("wrong-deck-size", f"seat {seat}'s stage-{stage} output size")
        deck = [data[i : i + size] for i in range(0, len(data), size)]
        if not self.trusted:
            self._check_next_stage(seat, deck, fields["proof"])
        self.stage_outputs.append(deck)
        self.stage_sigs.append(b"")
        if len(self.stage_outputs) == 2 * self.seats:
            self.phase = HandPhase.DEAL_KEYS

    def _decode_key_messages(
        self, seat: int, fields: dict[str, Any], expected: set[tuple[int, int]]
    ) -> list[KeyMessage]:
        messages = []
        for position, recipient, ciphertext, sig in fields["keys"]:
            message = KeyMessage(
                self.table_id, self.hand_no, position, seat, recipient, ciphertext, sig
            )
            if not self.trusted:
                body = message.body()
                KeyMessage.decode(body, sig)  # well formed
                # a follower that trusts its own work takes the key messages this process
                # signed, exactly as signed, as verified (``SignedHere``)
                own = self.proven is not None and (self.keys[seat], body, sig) in KEYS_SIGNED_HERE
                if not own:
                    message.verify(self.keys[seat], body)
            messages.append(message)
        got = {(m.position, m.recipient) for m in messages}
        if got != expected or len(messages) != len(expected):
            raise BlindRefused(
                "wrong-keys", "the key messages do not cover exactly the positions asked for"
            )
        return messages

    def _keys(self, seat: int, fields: dict[str, Any], need: Need) -> None:
        if self.phase is HandPhase.DEAL_KEYS:
            expected = {
                (p, owner)
                for owner in range(self.seats)
                if owner != seat
                for p in self.schedule.hands[owner]
            }
        else:
            assert self.delivery is not None
            expected = {(p, self.delivery.recipient) for p in self.delivery.positions}
        messages = self._decode_key_messages(seat, fields, expected)
        if self.viewer is not None:
            mine = [m for m in messages if m.recipient == self.viewer]
            received = {p: dict(keys) for p, keys in self.received.items()}  # if one is refused
            try:
                for m in mine:
                    self._receive(m)
            except (BlindError, BlindRefused):
                self.received = received
                raise
        self.key_messages.extend(messages)
        if self.phase is HandPhase.DEAL_KEYS:
            self.deal_keys_from.add(seat)
            if len(self.deal_keys_from) == self.seats:
                self._open_own(self.schedule.hands[self.viewer] if self.viewer is not None else ())
                self._start_upcard()
            return
        delivery = self.delivery
        assert delivery is not None
        delivery.sent.add(seat)
        if len(delivery.sent) == self.seats - 1:
            for p in delivery.positions:
                self.holder[p] = delivery.recipient
            if self._ours(delivery.recipient):
                self._open_own(delivery.positions)
            self.report_positions = delivery.positions
            self.delivery = None

    def _receive(self, message: KeyMessage) -> None:
        assert self.secrets is not None
        if self.version == 2:
            self._receive2(message)
            return
        key = receive_key_message(
            message, self.secrets, self.keys[message.sender], self.x25519[message.sender]
        )
        self.received.setdefault(message.position, {})[message.sender] = key

    def _receive2(self, message: KeyMessage) -> None:
        """Version 2: a sealed key is checked against the sender's announced position key as soon
        as it is opened: a wrong one names the sender, to this seat (:class:`WrongSealedKey`),
        which can show it to everyone by exposing its X25519 key (:meth:`exposure`)."""
        assert self.secrets is not None
        sender, position = message.sender, message.position
        # its signature is checked already: by _decode_key_messages, or (``trusted``) by the log
        try:
            plain = open_sealed(
                self.secrets.x25519_private,
                self.x25519[sender],
                self.table_id,
                self.hand_no,
                position,
                sender,
                message.recipient,
                message.ciphertext,
            )
            key = stages2.sealed_key(
                message, plain, self.public_keys[sender].position_keys[position]
            )
        except (SealedKeyError, WrongPublishedKey) as e:
            raise WrongSealedKey(message, e) from None
        self.received.setdefault(position, {})[sender] = key

    # ------------------------------------------------------------------ a wrong sealed key
    def exposure(self, message: KeyMessage) -> dict[str, Any]:
        """The viewer's ``expose`` fields accusing ``message``'s sender (version 2): its X25519
        private key for the hand and which sealed key it means. Exposing it reveals the keys
        sealed between this seat and the others for this hand, no card (docs/blind-proofs.md
        section 10); the hand cannot go on anyway."""
        assert self.secrets is not None and self.version == 2
        return {
            "x25519": x25519_private_bytes(self.secrets.x25519_private),
            "sender": message.sender,
            "position": message.position,
        }

    def exposure_verdict(self, accuser: int, fields: dict[str, Any]) -> Violation:
        """Anyone's verdict on ``accuser``'s ``expose`` (version 2): the seat that deviated.

        The exposed X25519 key must be the accuser's announced one and open the key the sender
        signed and sealed to the accuser for the position: if what it holds is no key
        (``sealed-key-error``) or not the sender's announced ``K_j`` (``wrong-key``), the sender
        deviated; if the key is right, or the exposed key is not the accuser's, or the sender
        sealed no key to it for the position, the accusation is false (``false-accusation``)
        and the accuser deviated: either way the hand cannot go on. A malformed exposure (its
        fields, a version-1 hand, a hand before any key) is refused (:class:`BlindRefused`)."""
        if self.version != 2:
            raise BlindRefused("bad-message", "an exposure belongs to the blind deal's version 2")
        _checked(EXPOSE_SCHEMA, fields, "expose")
        if len(self.x25519) < self.seats or self.phase is HandPhase.DONE:
            raise BlindRefused("wrong-phase", "expose: no sealed key of the hand to accuse")
        sender, position = fields["sender"], fields["position"]
        if not 0 <= sender < self.seats or sender == accuser:
            raise BlindRefused("bad-message", "expose: the sender is another seat")
        message = next(
            (
                m
                for m in self.key_messages
                if (m.sender, m.position, m.recipient) == (sender, position, accuser)
            ),
            None,
        )
        if message is None:
            return Violation(
                accuser,
                FALSE_ACCUSATION,
                f"seat {accuser} accuses seat {sender} of its sealed key for position {position}, "
                "which the hand does not hold",
            )
        try:
            stages2.check_exposed_key(
                message,
                fields["x25519"],
                self.x25519[accuser],
                self.x25519[sender],
                self.public_keys[sender].position_keys[position],
            )
        except BadParameters as e:
            return Violation(accuser, FALSE_ACCUSATION, f"seat {accuser}'s exposure: {e}")
        except (WrongPublishedKey, SealedKeyError) as e:
            return Violation(sender, e.code, f"{e} (exposed by seat {accuser})")
        return Violation(
            accuser,
            FALSE_ACCUSATION,
            f"seat {accuser} accuses seat {sender} of its key for position {position}, which its "
            "exposed key shows right",
        )

    def _open(self, final_x: bytes, keys: Iterable[int], position: int) -> int:
        """The card id at ``position`` of the final deck, given every seat's key for it."""
        if self.version == 1:
            return self.cards.open(final_x, keys, position)
        try:
            opened = stages2.open_position(final_x, keys)
        except group2.GroupError:
            raise NotACard(position) from None
        card = self._ids2.get(opened)
        if card is None:
            raise NotACard(position)
        return card

    def _key_from(self, data: bytes) -> int:
        if self.version == 1:
            return points.scalar_from_bytes(data)
        key = group2.scalar_from(data)
        if not key:
            raise group2.GroupError("a key is not zero")
        return key

    def _key_bytes(self, key: int) -> bytes:
        return points.scalar_to_bytes(key) if self.version == 1 else group2.scalar_bytes(key)

    def _own_key(self, position: int) -> int:
        if self.secrets2 is not None:
            return self.secrets2.position_keys[position]
        assert self.secrets is not None
        return self.secrets.position_key(position)

    def _check_key(self, seat: int, position: int, key: int) -> bool:
        """Version 2: whether ``key`` is ``seat``'s announced key for ``position``."""
        if self.version == 1:
            return True
        return stages2.key_matches(self.public_keys[seat].position_keys[position], key)

    def _open_own(self, positions: Iterable[int]) -> None:
        """The viewer opens the positions just dealt to it."""
        if self.secrets is None:
            return
        for p in positions:
            keys = dict(self.received.get(p, {}))
            keys[self.secrets.seat] = self._own_key(p)
            card = self._open(self.final_deck[p], keys.values(), p)
            self.received[p] = keys
            self._fix(p, card)

    def own_keys(self, position: int) -> list[bytes]:
        """Every seat's key for a position dealt to the viewer, in seat order (a proof)."""
        keys = self.received[position]
        return [self._key_bytes(keys[s]) for s in range(self.seats)]

    def _start_upcard(self) -> None:
        self.phase = HandPhase.UPCARD
        (self.release_position,) = self._next_positions(1)

    def _release(self, seat: int, fields: dict[str, Any], need: Need) -> None:
        position = self.release_position
        assert position is not None
        items = fields["releases"]
        if len(items) != 1:
            raise BlindRefused("bad-message", "release: one key for the upcard")
        ((pos, key, sig),) = items
        release = KeyRelease(self.table_id, self.hand_no, pos, seat, self._key_from(key), sig)
        if pos != position:
            raise BlindRefused("wrong-keys", f"release: position {pos}, not {position}")
        if self.version == 2:  # the act's signature covers it; the key is checked on sight
            if not self._check_key(seat, pos, release.key):
                raise WrongPublishedKey(seat, pos)
        elif not self.trusted:
            release.verify(self.keys[seat])
        taken = self.releases.setdefault(position, {})
        taken[seat] = release
        if len(taken) < self.seats:
            return
        card = self._open(self.final_deck[position], (r.key for r in taken.values()), position)
        self._fix(position, card, public=True)
        self.consumed += 1
        if upcard_turns_again(self.rules, self._face(card)) and self.stock_left > 0:
            (self.release_position,) = self._next_positions(1)
            return
        self.release_position = None
        self.phase = HandPhase.DEAL_REDS
        self.reds_round = 0
        self.report_positions = self.schedule.hands[self._deal_order()[0]]

    def _face(self, card: int) -> int:
        return self.face[card]

    def _proof_card(self, seat: int, item: Any) -> tuple[int, int]:
        """A proof ``[position, [key of seat 0, ..., key of seat S-1]]`` → (position, card)."""
        position, keys = item
        if not 0 <= position < self.size:
            raise BlindRefused("bad-proof", "a proof names no position of the deck")
        if self.holder.get(position) != seat or position in self.public:
            raise BlindRefused(
                "bad-proof", f"position {position} is not a hidden card of seat {seat}"
            )
        if len(keys) != self.seats:
            raise BlindRefused("bad-proof", "a proof has one key per seat")
        scalars = [self._key_from(k) for k in keys]
        for s, key in enumerate(scalars):
            if not self._check_key(s, position, key):
                raise BlindRefused(
                    "bad-proof", f"seat {s}'s key for position {position} is not its announced one"
                )
        try:
            card = self._open(self.final_deck[position], scalars, position)
        except BlindError:
            raise BlindRefused(
                "bad-proof", f"the keys open position {position} to no card"
            ) from None
        return position, card

    def _reds(self, seat: int, fields: dict[str, Any], need: Need) -> None:
        proofs = [self._proof_card(seat, item) for item in fields["proofs"]]
        positions = [p for p, _ in proofs]
        if len(set(positions)) != len(positions) or not set(positions) <= set(
            self.report_positions
        ):
            raise BlindRefused("bad-proof", "reds: positions outside those just received")
        for p, card in proofs:
            if not is_red_three(self._face(card)):
                raise BlindRefused("bad-proof", f"reds: position {p} is not a red three")
        for p, card in proofs:
            self._fix(p, card, public=True)
        self.events.append(
            Event(seat, reds=tuple(sorted(positions)), checked=self.report_positions)
        )
        if self.phase is HandPhase.DEAL_REDS:
            more = self._next_positions(len(proofs))
            if more:
                self.delivery = Delivery(seat, more)
                self.consumed += len(more)
                return
            self.reds_round += 1
            if self.reds_round < self.seats:
                self.report_positions = self.schedule.hands[self._deal_order()[self.reds_round]]
                return
            self._start_play()
            return
        # a draw: red threes are replaced by further stock cards
        self.pending_reds.extend(positions)
        more = self._next_positions(len(proofs))
        if more:
            self.delivery = Delivery(seat, more)
            self.pending_draw.extend(more)
            self.consumed += len(more)
            return
        self._finish_draw()

    def _reveal(self, seat: int, fields: dict[str, Any], need: Need) -> None:
        seed = fields["seed"]
        check_reveal(
            self.table_id, self.hand_no, seat, seed, self.commitments[seat], self.x25519[seat]
        )
        self.seeds[seat] = seed
        if len(self.seeds) == self.seats:
            self.phase = HandPhase.DONE

    # ------------------------------------------------------------------ stand-in cards
    def _fix(self, position: int, card: int, public: bool = False) -> None:
        self._check_binding(position, card)
        self.fixed[position] = card
        if public:
            self.public.add(position)
        if self.state is not None:
            self._bind(position, card)

    def _check_binding(self, position: int, card: int) -> None:
        """An opened position must agree with what is known: its own card, no card seen
        elsewhere."""
        known = self.fixed.get(position)
        if known is not None and known != card:
            raise BlindRefused("bad-proof", f"position {position} holds another card")
        if known is None and card in self.fixed.values():
            raise BlindRefused("bad-proof", f"the card at {position} is already elsewhere")

    def _bind(self, position: int, card: int) -> None:
        """Make the engine's stand-in for ``position`` the card itself (swapping stand-ins)."""
        current = self.pos_card[position]
        if current == card:
            return
        other = self.pos_card.index(card)
        self._swap(position, other)

    def _swap(self, p: int, q: int) -> None:
        assert self.state is not None
        a, b = self.pos_card[p], self.pos_card[q]
        self.pos_card[p], self.pos_card[q] = b, a
        state = self.state
        for cards in (*state.hands, state.stock):
            for i, c in enumerate(cards):
                if c == a:
                    cards[i] = b
                elif c == b:
                    cards[i] = a

    def _hidden_positions(self) -> list[int]:
        return [p for p in range(self.size) if p not in self.fixed]

    def _start_play(self) -> None:
        """Every deal-time card that had to be public is: build the engine's state."""
        taken = self.dealt + self.consumed
        unknown = sorted(set(range(self.size)) - set(self.fixed.values()))
        face = self.face
        plain = [c for c in unknown if not is_red_three(face[c])]
        reds = [c for c in unknown if is_red_three(face[c])]
        order = [-1] * self.size
        for p, c in self.fixed.items():
            order[p] = c
        hidden = [p for p in range(self.size) if p not in self.fixed]
        in_hands = [p for p in hidden if p < taken]
        in_stock = [p for p in hidden if p >= taken]
        pool = plain + reds  # red threes go deepest into the stock
        for p, c in zip(in_hands + in_stock, pool, strict=True):
            order[p] = c
        self.pos_card = order
        state = HandState(self.rules, order, self.dealer, self.minimums)
        state.hidden_hands = frozenset(s for s in range(self.seats) if s != self.viewer)
        self.state = state
        self.phase = HandPhase.PLAY if not state.is_over else HandPhase.REVEAL

    def _ensure_plain(self, position: int) -> None:
        """A hidden position just drawn is no red three (its holder said so): give it a plain
        stand-in, from deeper in the stock if possible."""
        face = self.face
        if not is_red_three(face[self.pos_card[position]]):
            return
        taken = self.dealt + self.consumed
        hidden = self._hidden_positions()
        candidates = [p for p in hidden if p >= taken] + [
            p for p in hidden if p < taken and p not in self.pending_draw
        ]
        for q in candidates:
            if not is_red_three(face[self.pos_card[q]]):
                self._swap(position, q)
                return

    # ------------------------------------------------------------------ play
    def action_trial(
        self, seat: int, action: Action, proofs: list[tuple[int, int]]
    ) -> tuple[HandState, list[int]]:
        """Apply ``action`` with its proved cards to a copy of the engine's state: the copy and
        its stand-in map (nothing of this object changes)."""
        state = self.state
        assert state is not None
        saved = (list(self.pos_card), state)
        trial = state.copy()
        self.state = trial
        try:
            bound = []
            for p, card in proofs:
                self._check_binding(p, card)
                self._bind(p, card)
                bound.append(card)
            public_ids = {self.fixed[p] for p in self.public}
            before = list(trial.hands[seat])
            trial.prefer_cards = (*bound, *public_ids)
            try:
                trial.apply(action, seat)
            except IllegalAction as e:
                raise BlindRefused(e.code, e.message, e.params, e.variant) from None
            finally:
                trial.prefer_cards = ()
            after = list(trial.hands[seat])
            for c in after:
                if c in before:
                    before.remove(c)
            left = before
            unproved = [c for c in left if c not in bound and c not in public_ids]
            if unproved:
                raise BlindRefused("unproved-card", "a card left the hand without its proof")
            if any(c not in left for c in bound):
                raise BlindRefused("bad-proof", "a proof for a card that stays in the hand")
            trial_pos = list(self.pos_card)
        finally:
            self.pos_card, self.state = saved
        return trial, trial_pos

    def feed_action(self, seat: int, action: Action, proof_items: Any) -> None:
        """Take ``seat``'s action with its proofs, or raise BlindRefused (nothing changes)."""
        need = self.needs(seat)
        if need.kind != "act":
            raise BlindRefused("wrong-phase", f"the hand waits for {need.kind!r} from seat {seat}")
        state = self.state
        assert state is not None
        items = _checked(_PROOFS, proof_items if proof_items is not None else [], "action.proofs")
        try:
            proofs = [self._proof_card(seat, item) for item in items]
        except (TypeError, ValueError) as e:
            if isinstance(e, BlindRefused):
                raise
            raise BlindRefused("bad-proof", str(e)) from None
        if len({p for p, _ in proofs}) != len(proofs):
            raise BlindRefused("bad-proof", "a position proved twice")
        if isinstance(action, Draw):
            if proofs:
                raise BlindRefused("bad-proof", "a draw proves no card")
            try:
                state.check(action, seat)
            except IllegalAction as e:
                raise BlindRefused(e.code, e.message, e.params, e.variant) from None
            self.events.append(Event(seat, action=action))
            self._start_draw(seat, self.rules.draw_count)
            return
        trial, trial_pos = self.action_trial(seat, action, proofs)
        self.events.append(Event(seat, action=action))
        if len(trial.stock) < len(state.stock):
            # the action takes cards from the stock (Bolivia's first-canasta bonus): they are
            # dealt to the seat like a draw before the action is applied
            self.pending_action = (action, proofs)
            self._start_draw(seat, self.rules.first_canasta_bonus_cards)
            return
        self._commit_action(trial, trial_pos, proofs)

    def _commit_action(
        self, trial: HandState, trial_pos: list[int], proofs: list[tuple[int, int]]
    ) -> None:
        self.state, self.pos_card = trial, trial_pos
        for p, card in proofs:
            self.fixed[p] = card
            self.public.add(p)
        self.phase = HandPhase.REVEAL if trial.is_over else HandPhase.PLAY

    def _start_draw(self, seat: int, count: int) -> None:
        assert self.state is not None
        first = self._next_positions(count)
        if not first:  # the stock is empty: the engine ends the hand
            self._finish_draw()
            return
        self.phase = HandPhase.DRAW
        self.pending_draw = list(first)
        self.pending_reds = []
        self.consumed += len(first)
        self.delivery = Delivery(seat, first)

    def _finish_draw(self) -> None:
        state = self.state
        assert state is not None
        for p in self.pending_draw:
            if p not in self.pending_reds:
                if p in self.fixed:
                    self._bind(p, self.fixed[p])
                else:
                    self._ensure_plain(p)
        seat = state.to_move
        self.pending_draw, self.pending_reds = [], []
        self.delivery = None
        pending, self.pending_action = self.pending_action, None
        if pending is not None:
            action, proofs = pending
            self._commit_action(*self.action_trial(seat, action, proofs), proofs)
            return
        state.apply(Draw(), seat)
        self.phase = HandPhase.REVEAL if state.is_over else HandPhase.PLAY

    # ------------------------------------------------------------------ messages out (a seat)
    def check_ahead(self, seat: int, fields: dict[str, Any]) -> bool:
        """Version 2, a follower that trusts its own work (``proven`` set): check ``seat``'s
        stage output before its record comes (the host passes it on as it arrives, before its
        own check: wire ``ahead``), so that the record, if it brings exactly these bytes, is
        taken without a second check (``ProvenStages``). Nothing of the hand changes, and
        nothing is refused here: an output that is not the one the hand waits for, or fails,
        is left to its record's own check. Whether it checked."""
        if self.version != 2 or self.proven is None or self.trusted:
            return False
        if self.phase is not HandPhase.STAGES or self.needs(seat).kind != "stage":
            return False
        step = len(self.stage_outputs)
        if self.ahead_step == step:
            return False  # an honest host passes each stage on once: more is only work for us
        self.ahead_step = step
        stage = 1 + step // self.seats
        data, proof = fields.get("deck"), fields.get("proof")
        size = group2.POINT_SIZE
        if (
            fields.get("stage") != stage
            or not isinstance(data, bytes)
            or not isinstance(proof, bytes)
            or len(data) != self.size * size
            or seat not in self.public_keys
        ):
            return False
        deck = [data[i : i + size] for i in range(0, len(data), size)]
        try:
            self._check_next_stage(seat, deck, proof)
        except BlindError:
            return False
        return True

    def _check_next_stage(self, seat: int, deck: list[bytes], proof: bytes) -> None:
        """Version 2: ``seat``'s proof that ``deck`` is the next stage's output (its input, the
        last output, permuted and raised to the seat's announced key in stage 1, raised
        position by position in stage 2); ``BlindRefused`` naming the seat if not."""
        step = len(self.stage_outputs)
        incoming = self.stage_outputs[-1] if step else self.initial
        check = stages2.check_stage1 if step < self.seats else stages2.check_stage2
        check(
            self.table_id,
            self.hand_no,
            seat,
            incoming,
            deck,
            self.public_keys[seat],
            proof,
            self.viewer,
            self.proven,
        )

    def respond(self, need: Need) -> dict[str, Any]:
        """The viewer's fields for what the hand needs from it (not an action: see proofs_for)."""
        secrets, identity = self.secrets, self.identity
        assert secrets is not None and identity is not None and self.viewer is not None
        kind = need.kind
        if kind == "announce":
            fields: dict[str, Any] = {
                "commitment": secrets.commitment,
                "x25519": secrets.x25519_public,
            }
            if self.secrets2 is not None:
                fields["keys"] = self.secrets2.public_keys().encode()
            return fields
        if kind == "stage" and self.secrets2 is not None:
            step = len(self.stage_outputs)
            stage = 1 + step // self.seats
            incoming2 = self.stage_outputs[-1] if step else self.initial
            ahead = self._prepared.pop("stage-ahead", None)
            if ahead is not None and ahead[0] == (stage, incoming2):  # worked out while checked
                out, proof = ahead[1]()
            else:
                out, proof = self.compute_stage(stage, incoming2)
            return {"stage": stage, "deck": b"".join(out), "proof": proof}
        if kind == "stage":
            step = len(self.stage_outputs)
            stage = 1 + step // self.seats
            incoming = self.stage_outputs[-1] if step else initial_deck(self.labels)
            if stage == 1:
                deck = stage1(secrets, incoming, self.seats)
            else:
                deck = stage2(secrets, incoming, self.seats, self._prepared.get("stage2"))
            output = StageOutput.make(identity, secrets, stage, deck)
            return {"stage": stage, "deck": encode_deck(output.deck), "sig": output.signature}
        if kind == "keys":
            if self.phase is HandPhase.DEAL_KEYS:
                wanted = [
                    (p, owner)
                    for owner in range(self.seats)
                    if owner != self.viewer
                    for p in self.schedule.hands[owner]
                ]
            else:
                assert need.to is not None
                wanted = [(p, need.to) for p in need.positions]
            sealed: dict[tuple[int, int], KeyMessage] = self._prepared.get("keys", {})
            items = []
            for p, to in wanted:
                m = sealed.get((p, to)) or self._seal(p, to)
                items.append([p, to, m.ciphertext, m.signature])
            return {"keys": items}
        if kind == "release" and self.secrets2 is not None:
            # version 2: the act's signature covers the key, which anyone checks against the
            # seat's announced position key
            return {
                "releases": [
                    [p, group2.scalar_bytes(self._own_key(p)), b""] for p in need.positions
                ]
            }
        if kind == "release":
            releases = [KeyRelease.make(identity, secrets, p) for p in need.positions]
            return {
                "releases": [
                    [r.position, points.scalar_to_bytes(r.key), r.signature] for r in releases
                ]
            }
        if kind == "reds":
            face = self.face
            reds = [p for p in need.positions if is_red_three(face[self.fixed[p]])]
            return {"proofs": [[p, self.own_keys(p)] for p in reds]}
        if kind == "reveal":
            return {"seed": secrets.seed}
        raise ValueError(f"no response for {kind!r}")

    def _seal(self, position: int, recipient: int) -> KeyMessage:
        """The viewer's key for ``position``, sealed to ``recipient`` and signed."""
        secrets, identity = self.secrets, self.identity
        assert secrets is not None and identity is not None
        if self.secrets2 is None:
            return make_key_message(identity, secrets, position, recipient, self.x25519[recipient])
        ciphertext = seal_key(
            secrets.x25519_private,
            self.x25519[recipient],
            self.table_id,
            self.hand_no,
            position,
            secrets.seat,
            recipient,
            group2.scalar_bytes(self._own_key(position)),
            check_key=group2.scalar_from,
        )
        unsigned = KeyMessage(
            self.table_id, self.hand_no, position, secrets.seat, recipient, ciphertext
        )
        return sign_key_message(identity, unsigned)

    # ------------------------------------------------------------------ a stage worked out ahead
    def next_stage_input(self, fields: dict[str, Any]) -> tuple[int, list[bytes]] | None:
        """Version 2, a seat's view: if ``fields`` (the next stage output the hand will follow,
        not checked yet) is the input of the viewer's own next stage, that stage's number and
        the output's entries, so that the seat can work its stage out while the output's proof
        is still being checked (:meth:`compute_stage`, :meth:`stage_ahead`). What it works out
        is used only once the output has been checked and taken, and only for that very input:
        nothing leaves the seat before every proof before its stage has checked
        (``docs/blind-proofs.md`` section 9)."""
        if self.secrets2 is None or self.phase is not HandPhase.STAGES:
            return None
        step = len(self.stage_outputs) + 1  # the viewer's step, after the output's
        if step >= 2 * self.seats or step % self.seats != self.viewer:
            return None
        data, size = fields.get("deck"), group2.POINT_SIZE
        if not isinstance(data, bytes) or len(data) != self.size * size:
            return None
        return 1 + step // self.seats, [data[i : i + size] for i in range(0, len(data), size)]

    def first_stage_input(self) -> tuple[int, list[bytes]] | None:
        """Version 2, a seat's view: if the viewer's stage 1 is the deal's first (seat 0's), its
        number and input, the initial deck, which every seat computes itself: the stage may be
        worked out as soon as the viewer's secrets are fixed (its announcement), while the other
        seats announce, instead of when the table asks for it (``docs/blind-proofs.md`` section
        9, seventh round). Nothing leaves the seat before the table asks, after every
        announcement: the work is the seat's own, on a deck nobody else supplies."""
        if self.secrets2 is None or self.viewer != 0 or self.stage_outputs:
            return None
        if self.phase not in (HandPhase.ANNOUNCE, HandPhase.STAGES):
            return None
        return 1, list(self.initial)

    def compute_stage(self, stage: int, incoming: Sequence[bytes]) -> tuple[list[bytes], bytes]:
        """Version 2: the viewer's stage-``stage`` output and its proof for ``incoming``."""
        return self.stage_work(stage, incoming)()

    def stage_work(
        self, stage: int, incoming: Sequence[bytes]
    ) -> functools.partial[tuple[list[bytes], bytes]]:
        """The work of :meth:`compute_stage` as a call of a module-level function on the seat's
        secrets (which never change) and the input: it needs nothing of the hand, so it may run
        beside the hand's own work, in another thread or process (it pickles)."""
        assert self.secrets2 is not None
        make = stages2.stage1 if stage == 1 else stages2.stage2
        # the proof's start, worked out while the seat waited (``prepare``): taken once, so a
        # second piece of work for this stage (another input) draws its own
        begun = self._prepared.pop(f"start{stage}", None)
        # and none is begun after it: this work draws its own if it had none
        self._prepared[f"started{stage}"] = True
        return functools.partial(make, self.secrets2, list(incoming), begun=begun)

    def has_stage_ahead(self, stage: int, incoming: Sequence[bytes]) -> bool:
        """Whether that stage is already being worked out ahead for that very input."""
        ahead = self._prepared.get("stage-ahead")
        return ahead is not None and ahead[0] == (stage, list(incoming))

    def stage_ahead(
        self,
        stage: int,
        incoming: list[bytes],
        result: Callable[[], tuple[list[bytes], bytes]],
    ) -> None:
        """Remember a stage worked out ahead: ``result()`` gives it (waiting for it if it is still
        being worked out); :meth:`respond` uses it if its stage and input are the hand's."""
        self._prepared["stage-ahead"] = ((stage, incoming), result)

    def prepare(self) -> None:
        """Work a seat can do ahead, while others compute (call it when idle), one piece a call:
        version 2's next stage proof begun (its input-independent part), version 1's stage-2
        multiplications, and its sealed keys for the deal once every X25519 key is announced."""
        secrets, identity = self.secrets, self.identity
        if secrets is None or identity is None or self.viewer is None:
            return
        if self._start_proof():  # the proof of the seat's next stage, begun before its input
            return
        if "stage2" not in self._prepared:
            self._prepared["stage2"] = stage2_multipliers(secrets) if self.version == 1 else None
        elif "keys" not in self._prepared and len(self.x25519) == self.seats:
            self._prepared["keys"] = {
                (p, owner): self._seal(p, owner)
                for owner in range(self.seats)
                if owner != self.viewer
                for p in self.schedule.hands[owner]
            }

    def _start_proof(self) -> bool:
        """Version 2: work out the input-independent part of the viewer's next stage proof
        (``stages.start_stage``), once per stage, before its input comes. Whether it did."""
        if self.secrets2 is None or self.phase not in (HandPhase.ANNOUNCE, HandPhase.STAGES):
            return False
        viewer = self.viewer
        stage = 1 + sum(1 for step in range(len(self.stage_outputs)) if step % self.seats == viewer)
        if stage > 2 or f"started{stage}" in self._prepared:
            return False
        self._prepared[f"started{stage}"] = True
        self._prepared[f"start{stage}"] = stages2.start_stage(stage, self.secrets2)
        return True

    def proofs_for(self, action: Action) -> list[list[Any]]:
        """The proofs of the viewer's cards that ``action`` takes from its hand."""
        state = self.state
        assert state is not None and self.viewer is not None
        if isinstance(action, Draw):
            return []
        trial = state.copy()
        before = list(trial.hands[self.viewer])
        trial.apply(action, self.viewer)
        left = list(before)
        for c in trial.hands[self.viewer]:
            if c in left:
                left.remove(c)
        by_card = {self.pos_card[p]: p for p in self.fixed if p not in self.public}
        return [[by_card[c], self.own_keys(by_card[c])] for c in left if c in by_card]

    # ------------------------------------------------------------------ the hand-end replay
    def verify(self, on_position: Callable[[HandState], None] | None = None) -> HandState:
        """With every seed revealed: replay the deal and the hand with every card known.

        Returns the engine's final state (for scoring); raises :class:`Violation` naming the
        first seat that deviated from the protocol or broke a rule. ``on_position`` is shown the
        state after the deal and after each action (for tools that step through the hand)."""
        if self.phase is not HandPhase.DONE:
            raise ValueError("the hand's seeds are not all revealed")
        seeds = [self.seeds[s] for s in range(self.seats)]
        commitments = [self.commitments[s] for s in range(self.seats)]
        if self.version == 2:
            return self._replay_with(self._verify_deal2(seeds), on_position)
        try:
            order = replay_deal_ids(
                self.table_id, self.hand_no, self.labels, seeds, self.stage_outputs, commitments
            )
        except BlindError as e:
            raise Violation(-1 if e.culprit is None else e.culprit, e.code, str(e)) from None
        for m in self.key_messages:
            try:
                audit_key_message(m, seeds[m.sender], seeds[m.recipient], self.keys[m.sender])
            except BlindError:
                raise Violation(
                    m.sender, "wrong-key", f"its key for position {m.position} is not its own"
                ) from None
        for position, releases in self.releases.items():
            for seat, r in releases.items():
                try:
                    check_open(self.table_id, self.hand_no, seat, seeds[seat], position, r.key)
                except BlindError:
                    raise Violation(
                        seat, "wrong-key", f"its released key for {position} is not its own"
                    ) from None
        return self._replay_with(order, on_position)

    def _verify_deal2(self, seeds: Sequence[bytes]) -> list[int]:
        """Version 2's hand-end check of the deal: every seat's announced keys are its seed's,
        every stage output is the one its seed gives (the proofs made that so already: this
        names a seat whose seed disagrees with what it proved), every key sealed or released is
        its own. Returns the deck order (card id per position).

        Only the stage-1 outputs are worked out again: each was taken with its proof that it is
        its input permuted and raised to the seat's announced deck key, which leaves only the
        permutation to check against the seed. A stage-2 output was taken with its proofs that
        each entry is its input raised to ``log K_j / log K`` for the seat's announced keys, and
        those keys are the seed's (checked first): it can only be the seed's output, so working
        it out again (m multiplications a seat) could never fail."""
        size = self.size
        secrets = [
            StageSecrets.derive(self.table_id, self.hand_no, s, seeds[s], size)
            for s in range(self.seats)
        ]
        for s, mine in enumerate(secrets):
            if mine.public_keys() != self.public_keys[s]:
                raise Violation(s, "wrong-public-keys", "its announced keys are not its seed's")
        for seat, published in enumerate(self.stage_outputs[: self.seats]):
            mine = secrets[seat]
            incoming = group2.decode_all(self.stage_outputs[seat - 1] if seat else self.initial)
            # the seed is public now: no constant-time multiplication needed
            own = [group2.encode(group2.mul(incoming[p], mine.deck_key)) for p in mine.permutation]
            if own != published:
                raise Violation(seat, "stage-mismatch", "its stage-1 output is not its seed's")
        order = list(range(size))
        for mine in secrets:
            order = [order[p] for p in mine.permutation]
        x25519 = [
            derive_x25519(self.table_id, self.hand_no, s, seeds[s]) for s in range(self.seats)
        ]
        for m in self.key_messages:
            recipient_x25519 = x25519[m.recipient]
            expected = group2.scalar_bytes(secrets[m.sender].position_keys[m.position])
            try:
                plain = open_sealed(
                    recipient_x25519,
                    self.x25519[m.sender],
                    self.table_id,
                    self.hand_no,
                    m.position,
                    m.sender,
                    m.recipient,
                    m.ciphertext,
                )
            except BlindError:
                plain = b""
            if plain != expected:
                raise Violation(
                    m.sender, "wrong-key", f"its key for position {m.position} is not its own"
                )
        for position, releases in self.releases.items():
            for seat, r in releases.items():
                if r.key != secrets[seat].position_keys[position]:
                    raise Violation(
                        seat, "wrong-key", f"its released key for {position} is not its own"
                    )
        return order

    def _replay_with(
        self, order: list[int], on_position: Callable[[HandState], None] | None = None
    ) -> HandState:
        full = HandState(self.rules, order, self.dealer, self.minimums)
        # the deal: each seat reported the red threes it was dealt (and given in their place)
        laid_at_deal = {s: sorted(full.red_threes[s]) for s in range(self.seats)}
        reported: dict[int, list[int]] = {s: [] for s in range(self.seats)}
        pending: list[Event] = []
        for event in self.events:
            if event.action is not None:
                break
            pending.append(event)
        for event in pending:
            reported[event.seat].extend(order[p] for p in event.reds)
        for s in range(self.seats):
            if sorted(reported[s]) != laid_at_deal[s]:
                raise Violation(s, "concealed-red-three", "a red three dealt was not laid")
        if on_position is not None:
            on_position(full)
        rest = self.events[len(pending) :]
        i = 0
        while i < len(rest):
            event = rest[i]
            i += 1
            assert event.action is not None
            seat = event.seat
            if seat != full.to_move:
                raise Violation(seat, "out-of-turn", "acted out of turn")
            reds_before = len(full.red_threes[seat])
            # only red threes from the stock were reported: one picked up with the pile (a turned
            # upcard) was public already
            stock_before = set(full.stock)
            try:
                full.apply(event.action, seat)
            except IllegalAction as e:
                raise Violation(seat, e.code, f"{event.action}: {e.message}") from None
            if on_position is not None:
                on_position(full)
            laid = sorted(c for c in full.red_threes[seat][reds_before:] if c in stock_before)
            said: list[int] = []
            while i < len(rest) and rest[i].action is None:
                said.extend(order[p] for p in rest[i].reds)
                i += 1
            if sorted(said) != laid:
                raise Violation(seat, "concealed-red-three", "a red three drawn was not laid")
        if not full.is_over:
            raise Violation(-1, "hand-not-over", "the replay does not end the hand")
        return full


__all__ = [
    "BLIND_ACT_TYPES",
    "EXPOSE_SCHEMA",
    "FALSE_ACCUSATION",
    "FIELD_SCHEMAS",
    "FIELD_SCHEMAS_V2",
    "BlindHand",
    "BlindRefused",
    "Event",
    "HandPhase",
    "Need",
    "Violation",
    "WrongSealedKey",
]
