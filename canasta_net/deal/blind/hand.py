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
from .errors import BlindError
from .keys import SEED_SIZE, SeatSecrets
from .protocol import (
    CardIndex,
    KeyMessage,
    KeyRelease,
    StageOutput,
    decode_deck,
    encode_deck,
    initial_deck,
    make_key_message,
    receive_key_message,
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
    ) -> None:
        self.rules = rules
        # ``trusted``: the messages come from a log this process has verified already (a seat's
        # replayer, or the host's own records): signatures and deck forms are not checked twice
        self.trusted = trusted
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
        self.cards = CardIndex(self.labels)
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
        for s in range(self.seats):
            for p in self.schedule.hands[s]:
                self.holder[p] = s
        if (viewer is None) != (secrets is None) or (secrets is not None and identity is None):
            raise ValueError("a seat's view needs its seat, secrets and identity together")

    # ------------------------------------------------------------------ helpers
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
        schema = FIELD_SCHEMAS.get(type_)
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
        self.commitments[seat] = fields["commitment"]
        self.x25519[seat] = fields["x25519"]
        if len(self.commitments) == self.seats:
            self.phase = HandPhase.STAGES

    def _stage(self, seat: int, fields: dict[str, Any], need: Need) -> None:
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

    def _decode_key_messages(
        self, seat: int, fields: dict[str, Any], expected: set[tuple[int, int]]
    ) -> list[KeyMessage]:
        messages = []
        for position, recipient, ciphertext, sig in fields["keys"]:
            message = KeyMessage(
                self.table_id, self.hand_no, position, seat, recipient, ciphertext, sig
            )
            if not self.trusted:
                KeyMessage.decode(message.body(), sig)  # well formed
                message.verify(self.keys[seat])
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
            for m in mine:
                self._receive(m)
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
        key = receive_key_message(
            message, self.secrets, self.keys[message.sender], self.x25519[message.sender]
        )
        self.received.setdefault(message.position, {})[message.sender] = key

    def _open_own(self, positions: Iterable[int]) -> None:
        """The viewer opens the positions just dealt to it."""
        if self.secrets is None:
            return
        for p in positions:
            keys = dict(self.received.get(p, {}))
            keys[self.secrets.seat] = self.secrets.position_key(p)
            card = self.cards.open(self.final_deck[p], keys.values(), p)
            self.received[p] = keys
            self._fix(p, card)

    def own_keys(self, position: int) -> list[bytes]:
        """Every seat's key for a position dealt to the viewer, in seat order (a proof)."""
        keys = self.received[position]
        return [points.scalar_to_bytes(keys[s]) for s in range(self.seats)]

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
        release = KeyRelease(
            self.table_id, self.hand_no, pos, seat, points.scalar_from_bytes(key), sig
        )
        if pos != position:
            raise BlindRefused("wrong-keys", f"release: position {pos}, not {position}")
        if not self.trusted:
            release.verify(self.keys[seat])
        taken = self.releases.setdefault(position, {})
        taken[seat] = release
        if len(taken) < self.seats:
            return
        card = self.cards.open(self.final_deck[position], (r.key for r in taken.values()), position)
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
        scalars = [points.scalar_from_bytes(k) for k in keys]
        try:
            card = self.cards.open(self.final_deck[position], scalars, position)
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
    def respond(self, need: Need) -> dict[str, Any]:
        """The viewer's fields for what the hand needs from it (not an action: see proofs_for)."""
        secrets, identity = self.secrets, self.identity
        assert secrets is not None and identity is not None and self.viewer is not None
        kind = need.kind
        if kind == "announce":
            return {"commitment": secrets.commitment, "x25519": secrets.x25519_public}
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
                m = sealed.get((p, to)) or make_key_message(
                    identity, secrets, p, to, self.x25519[to]
                )
                items.append([p, to, m.ciphertext, m.signature])
            return {"keys": items}
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

    def prepare(self) -> None:
        """Work a seat can do ahead, while others compute (call it when idle): its stage-2
        multiplications, and its sealed keys for the deal once every X25519 key is announced."""
        secrets, identity = self.secrets, self.identity
        if secrets is None or identity is None or self.viewer is None:
            return
        if "stage2" not in self._prepared:
            self._prepared["stage2"] = stage2_multipliers(secrets)
        elif "keys" not in self._prepared and len(self.x25519) == self.seats:
            self._prepared["keys"] = {
                (p, owner): make_key_message(identity, secrets, p, owner, self.x25519[owner])
                for owner in range(self.seats)
                if owner != self.viewer
                for p in self.schedule.hands[owner]
            }

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
    "FIELD_SCHEMAS",
    "BlindHand",
    "BlindRefused",
    "Event",
    "HandPhase",
    "Need",
    "Violation",
]
