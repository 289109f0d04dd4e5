"""One deal of May I?: the hands, stock, discard pile and melds, whose step it is, and the
transitions between states, including the buy window.

``DealState`` is pure: it is built from a rule set, a deck order (card ids in deal order), the
dealer and the deal number, and changes only through :meth:`DealState.apply`, which either performs
a legal action or raises :class:`~canasta_net.errors.IllegalAction` leaving the state exactly as it
was.  The state machine is described in ``docs/may-i.md``:

- ``draw``: the player to move takes the top of the stock or the top discard;
- ``buy-offer``: he drew from the stock, so other seats are offered the discard one at a time,
  from the lowest priority to the highest (``may-i`` or ``pass``);
- ``buy-permission``: a seat asked; each seat with priority over it answers in priority order
  (``allow``, or ``deny`` by buying the card himself);
- ``play``: the player to move lays his contract or lays off, then discards;
- ``over``: someone went out, or the stock ran out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from .. import shown
from ..cards import NUM_FACES, Deck, face_text, pick_cards
from ..errors import IllegalAction
from ..reasons import refuse
from .actions import (
    BUY_ACTIONS,
    AddToMeld,
    Allow,
    Deny,
    Discard,
    Draw,
    MayI,
    MayIAction,
    Meld,
    Pass,
    TakeDiscard,
)
from .contract import canonical_groups, check_contract, contract_lay_downs
from .melds import MeldKind, TableMeld, new_meld
from .rules import Contract, MayIRules

# Actions are immutable values: the listing hands out these instead of building equal ones.
DRAW: Final = Draw()
PASS: Final = Pass()
ALLOW: Final = Allow()
TAKE_DISCARDS: Final = tuple(TakeDiscard(f) for f in range(NUM_FACES))
MAY_IS: Final = tuple(MayI(f) for f in range(NUM_FACES))
DENIES: Final = tuple(Deny(f) for f in range(NUM_FACES))
DISCARDS: Final = tuple(Discard(f) for f in range(NUM_FACES))
_ADDS: dict[tuple[int, int, int], AddToMeld] = {}  # (owner, meld, face) -> its action
_ADDS_LIMIT: Final = 1 << 14  # emptied when it grows past this (it never needs to)


def _add_to_meld(owner: int, meld: int, face: int) -> AddToMeld:
    """The action adding ``face`` to ``owner``'s meld ``meld``, shared across listings."""
    key = (owner, meld, face)
    action = _ADDS.get(key)
    if action is None:
        if len(_ADDS) >= _ADDS_LIMIT:
            _ADDS.clear()
        action = _ADDS[key] = AddToMeld(owner, meld, face)
    return action


class Phase(StrEnum):
    DRAW = "draw"
    BUY_OFFER = "buy-offer"
    BUY_PERMISSION = "buy-permission"
    PLAY = "play"
    OVER = "over"


WINDOW_PHASES = (Phase.BUY_OFFER, Phase.BUY_PERMISSION)


class EndReason(StrEnum):
    WENT_OUT = "went-out"
    STOCK_EXHAUSTED = "stock-exhausted"
    TURN_LIMIT = "turn-limit"


@dataclass(frozen=True, slots=True)
class DealEnd:
    reason: EndReason
    went_out: int | None = None  # seat


class DealState:
    """One deal: hands, stock (top at the end), pile (top at the end), melds per seat, who is
    down, buys per seat, whose turn, the phase and, in a buy window, who is still to answer."""

    def __init__(
        self, rules: MayIRules, deck_order: Sequence[int], dealer: int = 0, deal: int = 0
    ) -> None:
        self._setup(rules, dealer, deal)
        if sorted(deck_order) != list(range(self.deck.size)):
            raise ValueError(f"the deck order must be a permutation of 0..{self.deck.size - 1}")
        self._deal(list(deck_order))

    def _setup(self, rules: MayIRules, dealer: int, deal: int) -> None:
        if not 0 <= deal < rules.deals:
            raise ValueError(
                f"deal {deal} does not exist: a game has {rules.deals} deals (0-based)"
            )
        self.rules = rules
        self.deck = Deck(rules.decks, 0)
        n = rules.players
        self.deal = deal
        self.contract: Contract = rules.contract(deal)
        self.dealer = dealer % n
        self.hands: list[list[int]] = [[] for _ in range(n)]
        self.melds: list[list[TableMeld]] = [[] for _ in range(n)]
        self.down = [False] * n
        self.buys = [0] * n
        self.stock: list[int] = []
        self.pile: list[int] = []
        # faces every seat saw go into a hand (a discard taken or bought) while that hand may
        # still hold them (one fewer each time the seat plays such a face): public
        self.shown: tuple[tuple[int, ...], ...] = ((),) * n
        self.turnovers = 0  # times the pile has been turned over to make a new stock
        self.turn = (self.dealer + 1) % n
        self.turn_no = 0
        self.phase = Phase.DRAW
        self.discarder: int | None = None  # who discarded the top card (None: an upcard)
        self.offer: list[int] = []  # seats still to be offered the discard, next first
        self.asker: int | None = None
        self.permission: list[int] = []  # seats still to allow or deny, next first
        self.end: DealEnd | None = None

    @classmethod
    def blank(cls, rules: MayIRules, dealer: int = 0, deal: int = 0) -> DealState:
        """A state with no cards anywhere, for building positions (see ``position.py``)."""
        state = cls.__new__(cls)
        state._setup(rules, dealer, deal)
        return state

    def _deal(self, order: list[int]) -> None:
        n, position = self.players, 0
        for _ in range(self.rules.hand_size):
            for k in range(n):
                self.hands[(self.dealer + 1 + k) % n].append(order[position])
                position += 1
        self.stock = order[position:][::-1]
        if self.rules.upcard:
            self.pile.append(self.stock.pop())

    # ------------------------------------------------------------------ queries
    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def to_move(self) -> int:
        """The one seat that must act next: in a buy window, the seat being asked."""
        if self.phase is Phase.BUY_OFFER:
            return self.offer[0]
        if self.phase is Phase.BUY_PERMISSION:
            return self.permission[0]
        return self.turn

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    def faces(self, cards: Iterable[int]) -> list[int]:
        face = self.deck.face
        return [face[c] for c in cards]

    def hand_faces(self, seat: int) -> list[int]:
        return self.faces(self.hands[seat])

    @property
    def pile_top(self) -> int | None:
        return self.deck.face[self.pile[-1]] if self.pile else None

    def cards_in_play(self) -> int:
        """Every card is somewhere: hands, stock, pile, melds (always the whole deck)."""
        return (
            sum(len(h) for h in self.hands)
            + len(self.stock)
            + len(self.pile)
            + sum(m.size for seat in self.melds for m in seat)
        )

    def priority_order(self) -> list[int]:
        """Seats that could buy the top discard, highest priority first: those after the player
        to move up to (not including) the discarder; all others for an upcard (``upcard``)."""
        n, seats = self.players, []
        for k in range(1, n):
            seat = (self.turn + k) % n
            if seat == self.discarder:
                break
            seats.append(seat)
        return seats

    def can_buy(self, seat: int) -> bool:
        return self.buys[seat] < self.rules.buy_limit

    def cards_to_draw(self) -> int:
        """Cards the stock can give, counting a pile turned over (all but its top)."""
        extra = len(self.pile) - 1 if self.turnovers < self.rules.stock_turnovers else 0
        return len(self.stock) + max(0, extra)

    # ------------------------------------------------------------------ apply
    def apply(self, action: MayIAction, seat: int | None = None) -> None:
        """Perform ``action`` for ``seat`` (default: the seat to move), or raise IllegalAction
        and change nothing. Every ``_plan_`` method validates completely before anything moves."""
        self._check_actor(action, seat)
        if isinstance(action, Discard):  # the most frequent actions first
            self._do_discard(action)
        elif isinstance(action, Draw):
            self._do_draw()
        elif isinstance(action, TakeDiscard):
            self._do_take_discard(action)
        elif isinstance(action, Meld):
            self._do_meld(action)
        elif isinstance(action, AddToMeld):
            self._do_add(action)
        elif isinstance(action, MayI):
            self._do_may_i(action)
        elif isinstance(action, Pass):
            self._do_pass()
        elif isinstance(action, Allow):
            self._do_allow()
        elif isinstance(action, Deny):
            self._do_deny(action)
        else:  # pragma: no cover - exhaustive
            raise refuse("wrong-phase.unknown-action", action=repr(action))

    def check(self, action: MayIAction, seat: int | None = None) -> None:
        """Raise IllegalAction if ``action`` is not legal now; change nothing."""
        self._check_actor(action, seat)
        if isinstance(action, Draw):
            self._require(Phase.DRAW)
        elif isinstance(action, TakeDiscard):
            self._plan_take_discard(action)
        elif isinstance(action, Meld):
            self._plan_meld(action)
        elif isinstance(action, AddToMeld):
            self._plan_add(action)
        elif isinstance(action, Discard):
            self._plan_discard(action)
        elif isinstance(action, MayI):
            self._plan_may_i(action)
        elif isinstance(action, Pass):
            self._require(Phase.BUY_OFFER)
        elif isinstance(action, Allow):
            self._require(Phase.BUY_PERMISSION)
        elif isinstance(action, Deny):
            self._plan_deny(action)

    def is_legal(self, action: MayIAction, seat: int | None = None) -> bool:
        try:
            self.check(action, seat)
        except IllegalAction:
            return False
        return True

    def _check_actor(self, action: MayIAction, seat: int | None) -> None:
        if self.phase is Phase.OVER:
            raise refuse("deal-over")
        if self.phase not in WINDOW_PHASES and isinstance(action, BUY_ACTIONS):
            raise refuse("no-buy-window")
        if seat is None or seat == self.to_move:
            return
        if isinstance(action, MayI) and 0 <= seat < self.players:
            if seat == self.discarder:
                raise refuse("own-discard")
            if seat == self.turn:
                raise refuse("own-turn")
            if not self.can_buy(seat):
                raise refuse("buy-limit")
        raise refuse("not-your-turn", to_move=self.to_move, seat=seat)

    def _require(self, phase: Phase) -> None:
        if self.phase is not phase:
            raise refuse("wrong-phase", phase=self.phase.value)

    def _take_from_hand(self, seat: int, faces: Sequence[int]) -> list[int]:
        """The card ids in ``seat``'s hand for ``faces`` (lowest id first), or raise."""
        return pick_cards(self.deck.face, self.hands[seat], faces)

    def _top_is(self, card: int) -> None:
        top = self.pile_top
        if top is None:
            raise refuse("pile-empty")
        if top != card:
            raise refuse("not-top-discard", top=face_text(top), card=face_text(card))

    # ------------------------------------------------------------------ drawing
    def _draw_card(self) -> int:
        """The top of the stock, turning the pile (all but its top) over first if it is empty:
        its oldest discard becomes the top of the new stock."""
        if not self.stock:
            self.stock = self.pile[-2::-1]
            del self.pile[:-1]
            self.turnovers += 1
        return self.stock.pop()

    def _do_draw(self) -> None:
        self._require(Phase.DRAW)
        if not self.cards_to_draw():
            self._finish(DealEnd(EndReason.STOCK_EXHAUSTED))
            return
        self.hands[self.turn].append(self._draw_card())
        self._open_window()

    def _plan_take_discard(self, action: TakeDiscard) -> None:
        self._require(Phase.DRAW)
        self._top_is(action.card)

    def _do_take_discard(self, action: TakeDiscard) -> None:
        self._plan_take_discard(action)
        card = self.pile.pop()
        self.hands[self.turn].append(card)
        self._set_shown(self.turn, (*self.shown[self.turn], self.deck.face[card]))
        self.phase = Phase.PLAY

    # ------------------------------------------------------------------ the buy window
    def _open_window(self) -> None:
        eligible = [s for s in self.priority_order() if self.can_buy(s)]
        if not self.pile or not eligible or self.cards_to_draw() < self.rules.buy_penalty_cards:
            self.phase = Phase.PLAY
            return
        self.offer = eligible[::-1]
        self.phase = Phase.BUY_OFFER

    def _close_window(self) -> None:
        self.offer, self.asker, self.permission = [], None, []
        self.phase = Phase.PLAY

    def _plan_may_i(self, action: MayI) -> None:
        self._require(Phase.BUY_OFFER)
        self._top_is(action.card)
        seat = self.to_move
        if not self.can_buy(seat):  # pragma: no cover - such seats are never offered
            raise refuse("buy-limit")

    def _do_may_i(self, action: MayI) -> None:
        self._plan_may_i(action)
        asker = self.offer[0]
        higher = self.offer[1:][::-1]  # the seats with priority, highest first
        if not higher:
            self._buy(asker)
            return
        self.asker, self.offer, self.permission = asker, [], higher
        self.phase = Phase.BUY_PERMISSION

    def _do_pass(self) -> None:
        self._require(Phase.BUY_OFFER)
        self.offer.pop(0)
        if not self.offer:
            self._close_window()

    def _do_allow(self) -> None:
        self._require(Phase.BUY_PERMISSION)
        self.permission.pop(0)
        if not self.permission:
            assert self.asker is not None
            self._buy(self.asker)

    def _plan_deny(self, action: Deny) -> None:
        self._require(Phase.BUY_PERMISSION)
        self._top_is(action.card)

    def _do_deny(self, action: Deny) -> None:
        self._plan_deny(action)
        self._buy(self.to_move)

    def _buy(self, buyer: int) -> None:
        """The buyer takes the penalty card(s) from the stock, then the discard."""
        hand = self.hands[buyer]
        for _ in range(self.rules.buy_penalty_cards):
            hand.append(self._draw_card())
        card = self.pile.pop()
        hand.append(card)
        self._set_shown(buyer, (*self.shown[buyer], self.deck.face[card]))
        self.buys[buyer] += 1
        self.discarder = None
        self._close_window()

    # ------------------------------------------------------------------ melding
    def _last_card_ok(self, left: list[int], melds: list[list[TableMeld]]) -> None:
        """Where the last card may not be discarded, a lay may leave one card only if it can
        then be laid off."""
        if len(left) != 1 or self.contract.discard_out:
            return
        face = self.deck.face[left[0]]
        if not any(m.fits(self.rules, face) for seat in melds for m in seat):
            raise refuse("must-meld-last-card.stranded", card=face_text(face))

    def _plan_meld(self, action: Meld) -> tuple[list[list[int]], list[TableMeld]]:
        self._require(Phase.PLAY)
        seat = self.turn
        if self.down[seat]:
            raise refuse("already-down")
        used = self._take_from_hand(seat, action.cards)
        shapes = check_contract(self.rules, self.contract, action.groups)
        groups, new, k = [], [], 0
        for shape, group in zip(shapes, action.groups, strict=True):
            ids = used[k : k + len(group)]
            k += len(group)
            groups.append(ids)
            new.append(new_meld(seat, shape, ids, self.faces(ids)))
        new.sort(key=lambda m: m.shape.key)  # melds are numbered in canonical order
        left = [c for c in self.hands[seat] if c not in used]
        self._last_card_ok(
            left, [*self.melds[:seat], [*self.melds[seat], *new], *self.melds[seat + 1 :]]
        )
        return groups, new

    def _do_meld(self, action: Meld) -> None:
        groups, new = self._plan_meld(action)
        seat = self.turn
        for ids in groups:
            for c in ids:
                self.hands[seat].remove(c)
            self._unshow(seat, ids)
        self.melds[seat].extend(new)
        self.down[seat] = True
        if not self.hands[seat]:
            self._finish(DealEnd(EndReason.WENT_OUT, seat))

    def _plan_add(self, action: AddToMeld) -> tuple[int, TableMeld]:
        self._require(Phase.PLAY)
        seat = self.turn
        if not self.down[seat]:
            raise refuse("contract-first")
        if not (
            0 <= action.owner < self.players and 0 <= action.meld < len(self.melds[action.owner])
        ):
            raise refuse("no-such-meld.may-i", owner=action.owner, meld=action.meld)
        (card,) = self._take_from_hand(seat, (action.card,))
        meld = self.melds[action.owner][action.meld].with_card(self.rules, card, action.card)
        left = [c for c in self.hands[seat] if c != card]
        after = [list(m) for m in self.melds]
        after[action.owner][action.meld] = meld
        self._last_card_ok(left, after)
        return card, meld

    def _do_add(self, action: AddToMeld) -> None:
        card, meld = self._plan_add(action)
        seat = self.turn
        self.hands[seat].remove(card)
        self._unshow(seat, (card,))
        self.melds[action.owner][action.meld] = meld
        if not self.hands[seat]:
            self._finish(DealEnd(EndReason.WENT_OUT, seat))

    # ------------------------------------------------------------------ discarding
    def _plan_discard(self, action: Discard) -> int:
        self._require(Phase.PLAY)
        seat = self.turn
        (card,) = self._take_from_hand(seat, (action.card,))
        if len(self.hands[seat]) == 1 and not self.contract.discard_out:
            raise refuse("must-meld-last-card")
        return card

    def _unshow(self, seat: int, cards: Iterable[int]) -> None:
        """``seat`` played ``cards`` from its hand (``canasta_net.shown.after_play``)."""
        if not self.shown[seat]:
            return  # nothing known to be held (the common case)
        face = self.deck.face
        self.shown = shown.after_play(self.shown, seat, (face[c] for c in cards))

    def _set_shown(self, seat: int, faces: tuple[int, ...]) -> None:
        self.shown = shown.with_faces(self.shown, seat, faces)

    def _do_discard(self, action: Discard) -> None:
        card = self._plan_discard(action)
        seat = self.turn
        self.hands[seat].remove(card)
        self._unshow(seat, (card,))
        self.pile.append(card)
        self.discarder = seat
        if not self.hands[seat]:
            self._finish(DealEnd(EndReason.WENT_OUT, seat))
        elif not self.cards_to_draw():
            self._finish(DealEnd(EndReason.STOCK_EXHAUSTED))
        elif self.rules.turn_limit and self.turn_no + 1 >= self.rules.turn_limit:
            self._finish(DealEnd(EndReason.TURN_LIMIT))
        else:
            self.turn = (seat + 1) % self.players
            self.turn_no += 1
            self.phase = Phase.DRAW

    def _finish(self, end: DealEnd) -> None:
        self.end = end
        self.phase = Phase.OVER

    # ------------------------------------------------------------------ legal actions
    def legal_actions(self) -> list[MayIAction]:
        """Every legal action of the seat to move (lay-downs in canonical form, see
        :meth:`normalize`; adds and discards once per face): lay-downs or adds (by owner, meld,
        face), then discards (by face)."""
        phase = self.phase
        if phase is Phase.PLAY:
            return self._legal_play()
        if phase is Phase.OVER:
            return []
        top = self.pile_top
        if phase is Phase.DRAW:
            return [DRAW] if top is None else [DRAW, TAKE_DISCARDS[top]]
        assert top is not None
        if phase is Phase.BUY_OFFER:
            return [MAY_IS[top], PASS]
        return [ALLOW, DENIES[top]]  # Phase.BUY_PERMISSION

    def _legal_play(self) -> list[MayIAction]:
        seat, rules = self.turn, self.rules
        face = self.deck.face
        hand = [face[c] for c in self.hands[seat]]
        size = len(hand)
        distinct = sorted(set(hand))
        strict_last = not self.contract.discard_out
        out: list[MayIAction] = []
        if not self.down[seat]:
            for groups in contract_lay_downs(rules, self.contract, hand):
                lay = Meld(groups)
                # a lay-down that leaves one card must leave one that can be laid off
                if strict_last and sum(map(len, groups)) == size - 1 and not self.is_legal(lay):
                    continue
                out.append(lay)
        else:
            # a face fits a set only by its rank and a sequence only by its suit
            by_rank: dict[int, list[int]] = {}
            by_suit: dict[int, list[int]] = {}
            for f in distinct:
                by_rank.setdefault(f % 13, []).append(f)
                by_suit.setdefault(f // 13, []).append(f)
            check_last = size == 2 and strict_last
            for owner, seat_melds in enumerate(self.melds):
                for i, meld in enumerate(seat_melds):
                    shape = meld.shape
                    if shape.kind is MeldKind.SET:
                        if len(meld.cards) >= rules.max_set:
                            continue
                        fitting = by_rank.get(shape.rank, ())
                    else:
                        fitting = [f for f in by_suit.get(shape.suit, ()) if meld.fits(rules, f)]
                    for f in fitting:
                        add = _add_to_meld(owner, i, f)
                        if not check_last or self.is_legal(add):
                            out.append(add)
        if size > 1 or not strict_last:
            out += [DISCARDS[f] for f in distinct]
        return out

    def normalize(self, action: MayIAction) -> MayIAction:
        """The listed form of ``action``: a lay-down's groups and cards in canonical order."""
        if isinstance(action, Meld):
            groups = canonical_groups(self.rules, action.groups)
            if groups is not None:
                return Meld(groups)
        return action

    def default_action(self) -> MayIAction | None:
        """What a seat that does not answer in a buy window is taken to say (``pass``,
        ``allow``); None outside a window, where a player must choose."""
        if self.phase is Phase.BUY_OFFER:
            return Pass()
        if self.phase is Phase.BUY_PERMISSION:
            return Allow()
        return None

    # ------------------------------------------------------------------ copying
    def copy(self) -> DealState:
        """An independent copy (rules, deck and melds are immutable and shared)."""
        other = DealState.__new__(DealState)
        other.rules, other.deck, other.contract = self.rules, self.deck, self.contract
        other.deal, other.dealer = self.deal, self.dealer
        other.hands = [list(h) for h in self.hands]
        other.melds = [list(m) for m in self.melds]
        other.down, other.buys = list(self.down), list(self.buys)
        other.stock, other.pile = list(self.stock), list(self.pile)
        other.shown = self.shown  # immutable
        other.turnovers = self.turnovers
        other.turn, other.turn_no, other.phase = self.turn, self.turn_no, self.phase
        other.discarder, other.asker = self.discarder, self.asker
        other.offer, other.permission = list(self.offer), list(self.permission)
        other.end = self.end
        return other
