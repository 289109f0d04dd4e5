"""May I? positions as plain dictionaries, and what each seat may see.

``position_to_dict`` writes a whole deal state with cards as text (``"KH"``); ``position_from_dict``
reads one back.  Lists of cards run bottom to top: the last card of ``stock`` is drawn next and the
last card of ``pile`` is the top discard.  Cards a position does not mention are out of play.

``seat_view`` is everything one seat may know: its own hand (by suit, then rank), the melds, the
whole discard pile (every discard stays visible), who is being asked in a buy window, and how many
cards every other hand and the stock hold.  It never contains another seat's hidden card.
``public_view`` is the same for someone watching: no hand at all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..canasta.position import CardAllocator, shown_from_dict
from ..cards import face_text, parse_face
from ..errors import IllegalAction, PositionError
from .melds import new_meld, shape_of
from .rules import MayIRules, MayIRulesError, preset
from .state import DealEnd, DealState, EndReason, Phase

SCHEMA = "canasta-net/may-i-position/1"


def _texts(state: DealState, cards: Sequence[int]) -> list[str]:
    face = state.deck.face
    return [face_text(face[c]) for c in cards]


def position_to_dict(state: DealState) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "rules": state.rules.to_dict(),
        "deal": state.deal,
        "dealer": state.dealer,
        "turn": state.turn,
        "turn_no": state.turn_no,
        "phase": state.phase.value,
        "hands": [_texts(state, h) for h in state.hands],
        "stock": _texts(state, state.stock),
        "pile": _texts(state, state.pile),
        **({"shown": [[face_text(f) for f in s] for s in state.shown]} if any(state.shown) else {}),
        "turnovers": state.turnovers,
        "discarder": state.discarder,
        "melds": [[_texts(state, m.cards) for m in seat] for seat in state.melds],
        "down": list(state.down),
        "buys": list(state.buys),
        "window": {
            "offer": list(state.offer),
            "asker": state.asker,
            "permission": list(state.permission),
        },
        "end": None
        if state.end is None
        else {"reason": state.end.reason.value, "went_out": state.end.went_out},
    }


def _per_seat(data: Mapping[str, Any], key: str, n: int, default: Any = None) -> list[Any]:
    value = data.get(key, default)
    if not isinstance(value, list) or len(value) != n:
        raise PositionError(f"{key!r} must be a list of {n} entries, one per seat")
    return value


def _seats(value: Any, n: int, where: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(s, int) and 0 <= s < n for s in value):
        raise PositionError(f"{where} must be a list of seats")
    return list(value)


def position_from_dict(data: Mapping[str, Any]) -> DealState:
    """Build a deal state from a position dictionary; raise PositionError if it is malformed."""
    if data.get("schema", SCHEMA) != SCHEMA:
        raise PositionError(f"unsupported position schema {data.get('schema')!r}")
    try:
        raw_rules = data.get("rules", "may-i")
        rules = preset(raw_rules) if isinstance(raw_rules, str) else MayIRules.from_dict(raw_rules)
    except (MayIRulesError, TypeError) as e:
        raise PositionError(f"rules: {e}") from None
    n = rules.players
    try:
        state = DealState.blank(rules, int(data.get("dealer", 0)), int(data.get("deal", 0)))
        alloc = CardAllocator(state.deck)
        hands = _per_seat(data, "hands", n)
        state.hands = [alloc.take(h, f"hands[{i}]") for i, h in enumerate(hands)]
        state.stock = alloc.take(data.get("stock", []), "stock")
        state.pile = alloc.take(data.get("pile", []), "pile")
        state.turnovers = int(data.get("turnovers", 0))
        state.shown = shown_from_dict(data.get("shown"), state)
        for seat, seat_melds in enumerate(_per_seat(data, "melds", n, [[] for _ in range(n)])):
            for k, texts in enumerate(seat_melds):
                ids = alloc.take(texts, f"melds[{seat}][{k}]")
                faces = state.faces(ids)
                try:
                    shape = shape_of(rules, faces)
                except IllegalAction as e:
                    raise PositionError(f"melds[{seat}][{k}]: {e}") from None
                state.melds[seat].append(new_meld(seat, shape, ids, faces))
        default_down = [bool(m) for m in state.melds]
        state.down = [bool(x) for x in _per_seat(data, "down", n, default_down)]
        state.buys = [int(x) for x in _per_seat(data, "buys", n, [0] * n)]
        state.turn = int(data.get("turn", state.turn)) % n
        state.turn_no = int(data.get("turn_no", 0))
        state.phase = Phase(data.get("phase", "draw"))
        discarder = data.get("discarder")
        state.discarder = None if discarder is None else int(discarder) % n
        window = data.get("window") or {}
        state.offer = _seats(window.get("offer", []), n, "window.offer")
        asker = window.get("asker")
        state.asker = None if asker is None else int(asker) % n
        state.permission = _seats(window.get("permission", []), n, "window.permission")
        end = data.get("end")
        if end is not None:
            went_out = end.get("went_out")
            state.end = DealEnd(
                EndReason(end["reason"]), None if went_out is None else int(went_out)
            )
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        if isinstance(e, PositionError):
            raise
        raise PositionError(f"malformed position: {e}") from None
    _check_consistent(state)
    return state


def _check_consistent(state: DealState) -> None:
    phase = state.phase
    if phase is Phase.BUY_OFFER and not state.offer:
        raise PositionError("phase 'buy-offer' needs seats in window.offer")
    if phase is Phase.BUY_PERMISSION and (not state.permission or state.asker is None):
        raise PositionError("phase 'buy-permission' needs an asker and seats in window.permission")
    if phase in (Phase.BUY_OFFER, Phase.BUY_PERMISSION):
        if not state.pile or state.cards_to_draw() < state.rules.buy_penalty_cards:
            raise PositionError("a buy window needs a discard and a penalty card to draw")
        if not all(state.can_buy(s) for s in [*state.offer, *state.permission]):
            raise PositionError("a seat at its buy limit cannot be asked in a buy window")
    if (phase is Phase.OVER) != (state.end is not None):
        raise PositionError("'end' is given exactly when the phase is 'over'")


def seat_view(state: DealState, seat: int) -> dict[str, Any]:
    """What ``seat`` may see: its own hand sorted, the public cards, counts of hidden ones."""
    if not 0 <= seat < state.players:
        raise ValueError(f"no seat {seat}")
    return _view(state, seat)


def public_view(state: DealState) -> dict[str, Any]:
    """What anyone watching may see: the seat view of no seat (``seat`` None, no ``hand``)."""
    return _view(state, None)


def _view(state: DealState, seat: int | None) -> dict[str, Any]:
    top = state.pile_top
    contract = state.contract
    # by suit, then rank
    own = {} if seat is None else {"hand": [face_text(f) for f in sorted(state.hand_faces(seat))]}
    return {
        "seat": seat,
        "variant": state.rules.name,
        "deal": state.deal,
        "contract": str(contract),
        "discard_out": contract.discard_out,
        "dealer": state.dealer,
        "turn": state.turn,
        "to_move": None if state.is_over else state.to_move,
        "phase": state.phase.value,
        **own,
        "hand_sizes": [len(h) for h in state.hands],
        "stock_size": len(state.stock),
        "turnovers": state.turnovers,
        "pile": _texts(state, state.pile),
        "pile_top": None if top is None else face_text(top),
        "discarder": state.discarder,
        "melds": [
            [
                {"cards": _texts(state, m.cards), "kind": m.kind.value, "label": m.label()}
                for m in seat_melds
            ]
            for seat_melds in state.melds
        ],
        "down": list(state.down),
        "buys": list(state.buys),
        "buy_limit": state.rules.buy_limit,
        "window": {
            "offer": list(state.offer),
            "asker": state.asker,
            "permission": list(state.permission),
        },
        "end": None
        if state.end is None
        else {"reason": state.end.reason.value, "went_out": state.end.went_out},
    }


def position_from_view(view: Mapping[str, Any], rules: MayIRules, rng: Any) -> dict[str, Any]:
    """A position a seat may build from its own view (``seat_view``): its information set, with
    the cards it cannot see (the other hands, the stock) dealt from those it has not seen,
    shuffled with ``rng`` (a ``random.Random``); the rest are out of play. Every discard is in a
    view, so the pile is the view's. What a view does not tell is left at the positions'
    defaults (``turn_no`` 0, no cards known to be shown)."""
    state = DealState.blank(rules, int(view["dealer"]), int(view.get("deal", 0)))
    unseen = Counter(state.deck.face)
    seen = [parse_face(c) for c in view["hand"]]
    seen += [parse_face(c) for c in view["pile"]]
    seen += [parse_face(c) for seat in view["melds"] for m in seat for c in m["cards"]]
    unseen.subtract(seen)
    if any(count < 0 for count in unseen.values()):
        raise PositionError("the view shows more cards of a face than the deck holds")
    cards = [face_text(f) for f in sorted(unseen.elements())]
    rng.shuffle(cards)

    def take(count: int) -> list[str]:
        nonlocal cards
        if count > len(cards):
            raise PositionError("the view's hidden cards are more than the deck leaves unseen")
        part, cards = cards[:count], cards[count:]
        return part

    seat = view["seat"]
    hands = [list(view["hand"]) if s == seat else take(n) for s, n in enumerate(view["hand_sizes"])]
    window = view.get("window") or {}
    return {
        "schema": SCHEMA,
        "rules": rules.to_dict(),
        "deal": view.get("deal", 0),
        "dealer": view["dealer"],
        "turn": view["turn"],
        "phase": view["phase"],
        "hands": hands,
        "stock": take(view["stock_size"]),
        "pile": list(view["pile"]),
        "turnovers": view.get("turnovers", 0),
        "discarder": view.get("discarder"),
        "melds": [[list(m["cards"]) for m in seat_melds] for seat_melds in view["melds"]],
        "down": list(view["down"]),
        "buys": list(view["buys"]),
        "window": {
            "offer": list(window.get("offer", [])),
            "asker": window.get("asker"),
            "permission": list(window.get("permission", [])),
        },
    }
