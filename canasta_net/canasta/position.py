"""Positions as plain dictionaries, and what each seat may see.

``position_to_dict`` writes a whole hand state with cards as text (``"KH"``); ``position_from_dict``
reads one back, so a test, a puzzle or an annotation can set up any position.  The schema
(``canasta-net/position/1``) is documented in ``docs/position.md``.  Cards that a position does not
mention are simply out of play, which keeps hand-written positions short.

``seat_view`` is everything one seat may know: its own hand, the public cards, and how many cards
every other hand and the stock hold.  It never contains another seat's hidden card.
``public_view`` is the same for someone watching: no hand at all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..cards import (
    CardParseError,
    Deck,
    face_text,
    is_black_three,
    is_red_three,
    is_wild,
    parse_face,
    sorted_faces,
)
from ..errors import IllegalAction, PositionError
from .melds import TableMeld, canasta_bonus, group_shape
from .rules import RuleSet, RuleSetError, preset
from .state import EndReason, HandEnd, HandState, Phase, TurnState

SCHEMA = "canasta-net/position/1"


def _texts(state: HandState, cards: Sequence[int]) -> list[str]:
    face = state.deck.face
    return [face_text(face[c]) for c in cards]


def position_to_dict(state: HandState) -> dict[str, Any]:
    t = state.t
    return {
        "schema": SCHEMA,
        "rules": state.rules.to_dict(),
        "dealer": state.dealer,
        "turn": state.turn,
        "turn_no": state.turn_no,
        "phase": state.phase.value,
        "minimums": list(state.minimums),
        "hands": [_texts(state, h) for h in state.hands],
        "stock": _texts(state, state.stock),
        "pile": _texts(state, state.pile),
        **({"pile_frozen": True} if state.pile_frozen_below else {}),
        "melds": [
            [
                {"cards": _texts(state, m.cards), "turn": m.laid_turn, "seat": m.laid_by}
                for m in team
            ]
            for team in state.melds
        ],
        "red_threes": [_texts(state, r) for r in state.red_threes],
        **({"shown": [[face_text(f) for f in s] for s in state.shown]} if any(state.shown) else {}),
        "opened": list(state.opened),
        "has_melded": list(state.has_melded),
        "canasta_bonus_given": state.canasta_bonus_given,
        "team_map": list(state.team_map),
        "lone": state.lone,
        "turn_state": {
            "drew": t.drew,
            "initial_points": t.initial_points,
            "laid": t.laid,
            "added_to_old": t.added_to_old,
            "permission": t.permission,
            "black_threes": t.black_threes,
            "pending_pile": _texts(state, t.pending_pile),
        },
        "end": None
        if state.end is None
        else {
            "reason": state.end.reason.value,
            "went_out": state.end.went_out,
            "going_out_bonus": state.end.going_out_bonus,
        },
    }


class CardAllocator:
    """Hands out physical card ids for faces written as text, each id once, lowest first
    (positions of every game read their cards with it)."""

    def __init__(self, deck: Deck) -> None:
        self.free: dict[int, list[int]] = {}
        for card_id, f in enumerate(deck.face):
            self.free.setdefault(f, []).append(card_id)
        for ids in self.free.values():
            ids.reverse()

    def take(self, texts: Any, where: str) -> list[int]:
        if not isinstance(texts, list):
            raise PositionError(f"{where}: expected a list of cards")
        out = []
        for text in texts:
            if not isinstance(text, str):
                raise PositionError(f"{where}: cards are written as text like 'KH'")
            try:
                f = parse_face(text)
            except CardParseError as e:
                raise PositionError(f"{where}: {e}") from None
            if not self.free.get(f):
                raise PositionError(f"{where}: more {text} cards than the deck holds")
            out.append(self.free[f].pop())
        return out


def _per(data: Mapping[str, Any], key: str, count: int) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list) or len(value) != count:
        raise PositionError(f"{key!r} must be a list of {count} entries")
    return value


def _first_seat(team_map: Sequence[int], team: int) -> int:
    """The seat a meld is laid by when a position does not say: the team's first seat."""
    return next((seat for seat, t in enumerate(team_map) if t == team), team)


def shown_from_dict(value: Any, state: Any) -> tuple[tuple[int, ...], ...]:
    """Each seat's faces taken with the pile (in May I?, the discards it took or bought) and
    still held: a part of its hand (any game's state: ``players``, ``hand_faces``)."""
    n: int = state.players
    if value is None:
        return ((),) * n
    if not isinstance(value, list) or len(value) != n:
        raise PositionError(f"'shown' must be a list of {n} lists of cards")
    shown: list[tuple[int, ...]] = []
    for seat, texts in enumerate(value):
        if not isinstance(texts, list):
            raise PositionError(f"shown[{seat}]: expected a list of cards")
        try:
            faces = [parse_face(t) for t in texts]
        except (CardParseError, TypeError, AttributeError) as e:
            raise PositionError(f"shown[{seat}]: {e}") from None
        held = Counter(state.hand_faces(seat))
        held.subtract(Counter(faces))
        if any(count < 0 for count in held.values()):
            raise PositionError(f"shown[{seat}]: cards that hand does not hold")
        shown.append(tuple(faces))
    return tuple(shown)


def position_from_dict(data: Mapping[str, Any]) -> HandState:
    """Build a state from a position dictionary; raise PositionError if it is malformed."""
    if data.get("schema", SCHEMA) != SCHEMA:
        raise PositionError(f"unsupported position schema {data.get('schema')!r}")
    try:
        raw_rules = data.get("rules", "classic")
        rules = preset(raw_rules) if isinstance(raw_rules, str) else RuleSet.from_dict(raw_rules)
    except (RuleSetError, TypeError) as e:
        raise PositionError(f"rules: {e}") from None
    n, teams = rules.players, rules.teams
    try:
        state = HandState.blank(rules, int(data.get("dealer", 0)), data.get("minimums") or None)
        alloc = CardAllocator(state.deck)
        state.hands = [alloc.take(h, f"hands[{i}]") for i, h in enumerate(_per(data, "hands", n))]
        state.stock = alloc.take(data.get("stock", []), "stock")
        state.pile = alloc.take(data.get("pile", []), "pile")
        frozen = data.get("pile_frozen")
        if frozen is not None:
            if not isinstance(frozen, bool):
                raise PositionError("'pile_frozen' must be true or false")
            if frozen and not state.pile:
                raise PositionError("'pile_frozen' is true, but there is no pile")
            if not frozen and state.pile_frozen:
                raise PositionError("'pile_frozen' is false, but a card in the pile freezes it")
            state.pile_frozen_below = frozen and not state.pile_frozen
        team_map = data.get("team_map", state.team_map)
        if (
            not isinstance(team_map, list)
            or len(team_map) != n
            or not all(isinstance(t, int) and 0 <= t < teams for t in team_map)
        ):
            raise PositionError(f"'team_map' must give each of the {n} seats a team")
        state.team_map = list(team_map)
        melds = data.get("melds", [[] for _ in range(teams)])
        if not isinstance(melds, list) or len(melds) != teams:
            raise PositionError(f"'melds' must be a list of {teams} teams' melds")
        for team, team_melds in enumerate(melds):
            for k, m in enumerate(team_melds):
                cards = alloc.take(m.get("cards"), f"melds[{team}][{k}]")
                faces = state.faces(cards)
                try:
                    shape = group_shape(rules, faces)
                except IllegalAction as e:
                    raise PositionError(f"melds[{team}][{k}]: {e}") from None
                state.melds[team].append(
                    TableMeld(
                        shape.kind,
                        shape.rank,
                        cards,
                        shape.naturals,
                        shape.wilds,
                        int(m.get("turn", -1)),
                        int(m.get("seat", _first_seat(state.team_map, team))),
                        faces,
                        shape.suit,
                        shape.low,
                        shape.high,
                    )
                )
        reds = data.get("red_threes", [[] for _ in range(n)])
        state.red_threes = [alloc.take(r, f"red_threes[{i}]") for i, r in enumerate(reds)]
        if len(state.red_threes) != n:
            raise PositionError(f"'red_threes' must be a list of {n} entries")
        state.shown = shown_from_dict(data.get("shown"), state)
        state.opened = [bool(x) for x in data.get("opened", [bool(m) for m in state.melds])]
        turn_no = int(data.get("turn_no", 0))
        # unless told, a seat has melded if it laid a meld in an earlier turn: the same `seat`
        # and `turn` (with the same defaults) that the melds were read with
        laid_before = {
            m.laid_by for team_melds in state.melds for m in team_melds if m.laid_turn < turn_no
        }
        state.has_melded = [
            bool(x) for x in data.get("has_melded", [s in laid_before for s in range(n)])
        ]
        if len(state.opened) != teams or len(state.has_melded) != n:
            raise PositionError("'opened' needs one entry per team, 'has_melded' one per seat")
        state.canasta_bonus_given = bool(data.get("canasta_bonus_given", False))
        lone = data.get("lone")
        state.lone = lone if isinstance(lone, int) and 0 <= lone < n else None
        state.turn = int(data.get("turn", state.turn)) % n
        state.turn_no = int(data.get("turn_no", 0))
        state.phase = Phase(data.get("phase", "draw"))
        ts = data.get("turn_state") or {}
        state.t = TurnState(
            drew=str(ts.get("drew", "stock" if state.phase is not Phase.DRAW else "")),
            initial_points=int(ts.get("initial_points", 0)),
            laid=bool(ts.get("laid", False)),
            added_to_old=bool(ts.get("added_to_old", False)),
            permission=ts.get("permission"),
            black_threes=bool(ts.get("black_threes", False)),
            pending_pile=alloc.take(ts.get("pending_pile", []), "turn_state.pending_pile"),
        )
        end = data.get("end")
        if end is not None:
            state.end = HandEnd(
                EndReason(end["reason"]), end.get("went_out"), int(end.get("going_out_bonus", 0))
            )
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        if isinstance(e, PositionError):
            raise
        raise PositionError(f"malformed position: {e}") from None
    if state.phase is Phase.ASKED and rules.partner_of(state.turn) is None:
        raise PositionError("phase 'asked' needs a partner")
    return state


def seat_view(state: HandState, seat: int) -> dict[str, Any]:
    """What ``seat`` may see: its own hand sorted, public cards, counts of hidden ones."""
    if not 0 <= seat < state.players:
        raise ValueError(f"no seat {seat}")
    return _view(state, seat)


def public_view(state: HandState) -> dict[str, Any]:
    """What anyone watching may see: the seat view of no seat (``seat`` None, no ``hand``)."""
    return _view(state, None)


def _view(state: HandState, seat: int | None) -> dict[str, Any]:
    rules = state.rules
    top = state.pile_top
    own = (
        {}
        if seat is None
        else {"hand": [face_text(f) for f in sorted_faces(state.hand_faces(seat))]}
    )
    return {
        "seat": seat,
        "variant": rules.name,
        "dealer": state.dealer,
        "turn": state.turn,
        "to_move": state.to_move if not state.is_over else None,
        "phase": state.phase.value,
        **own,
        "hand_sizes": [len(h) for h in state.hands],
        "teams": list(state.team_map),
        # three-handed lone-hand play: the seat playing alone, once someone took the pile (the
        # sides it made are in ``teams``; everyone saw the take)
        "lone": state.lone,
        # Bolivia: the hand's first canasta has brought its bonus cards (everyone saw it)
        "canasta_bonus_given": state.canasta_bonus_given,
        # whether each seat has melded this hand (everyone saw it): a seat that has may no
        # longer go out concealed
        "has_melded": list(state.has_melded),
        # the cards each hand is known to hold: taken with the pile, which everyone saw (one
        # fewer each time that seat plays a card of the face)
        "shown": [[face_text(f) for f in sorted_faces(s)] for s in state.shown],
        "stock_size": len(state.stock),
        "pile_top": None if top is None else face_text(top),
        "pile_size": len(state.pile),
        "pile_frozen": state.pile_frozen,
        # whether each team must take the pile with a natural pair of its top card (frozen by a
        # card in it, by the team not having opened, or by the rules for everyone)
        "pile_frozen_for": [state.frozen_for(t) for t in range(len(state.melds))],
        "pile_always_frozen": rules.pile_always_frozen,
        "melds": [[_meld_view(rules, m) for m in team] for team in state.melds],
        "red_threes": [_texts(state, r) for r in state.red_threes],
        "opened": list(state.opened),
        "minimums": list(state.minimums),
        "turn_state": {
            "drew": state.t.drew,
            "initial_points": state.t.initial_points,
            "permission": state.t.permission,
            "black_threes": state.t.black_threes,
            "pending_pile_size": len(state.t.pending_pile),
        },
        "end": None
        if state.end is None
        else {"reason": state.end.reason.value, "went_out": state.end.went_out},
    }


def _meld_view(rules: RuleSet, meld: TableMeld) -> dict[str, Any]:
    """One meld as a view shows it. A host draws every seat's view after every record, and most
    melds have not changed since the last one: the drawing is kept on the meld (``drawn``) and
    redrawn when anything it shows changes; each view gets its own dict and card list."""
    key = (tuple(meld.faces), meld.kind, meld.rank, meld.suit, meld.low, meld.high)
    drawn = meld.drawn
    if drawn is None or drawn[0] != key:
        drawn = meld.drawn = (
            key,
            {
                "cards": [face_text(f) for f in sorted_faces(meld.faces)],
                "label": meld.label(),
                "canasta": None
                if not meld.is_canasta(rules)
                else ("natural" if meld.is_natural() else "mixed"),
                # what the meld counts at the hand's end: its cards, and its canasta bonus
                "points": sum(rules.card_value(f) for f in meld.faces),
                "bonus": canasta_bonus(rules, meld),
            },
        )
    view = dict(drawn[1])
    view["cards"] = list(view["cards"])
    return view


def position_from_view(view: Mapping[str, Any], rules: RuleSet, rng: Any) -> dict[str, Any]:
    """A position a seat may build from its own view (``seat_view``): its information set, with
    the cards it cannot see dealt from those it has not seen. The other hands and the stock hold
    such cards (a searching bot deals them anew anyway); so does the pile below its top, which a
    view does not list: cards that do not freeze it, drawn with ``rng`` (a ``random.Random``),
    and ``pile_frozen`` says what the view says. What a view does not tell is left at the
    positions' defaults (melds laid in earlier turns by each team's first seat, turn 0)."""
    deck = Deck(rules.decks, rules.jokers_per_deck)
    unseen = Counter(deck.face)
    seat = view["seat"]
    # the cards another hand is known to hold (taken with the pile) stay in it
    shown = [list(s) for s in view.get("shown") or []]
    seen = [parse_face(c) for c in view["hand"]]
    seen += [parse_face(c) for s, known in enumerate(shown) if s != seat for c in known]
    seen += [parse_face(c) for team in view["melds"] for m in team for c in m["cards"]]
    seen += [parse_face(c) for reds in view["red_threes"] for c in reds]
    top = view.get("pile_top")
    if top is not None:
        seen.append(parse_face(top))
    unseen.subtract(seen)
    if any(count < 0 for count in unseen.values()):
        raise PositionError("the view shows more cards of a face than the deck holds")
    cards = sorted(unseen.elements())
    rng.shuffle(cards)

    def freezes(f: int) -> bool:
        return (
            is_wild(f) or is_red_three(f) or (rules.black_three_freezes_pile and is_black_three(f))
        )

    calm = [f for f in cards if not freezes(f)]
    below = calm[: max(0, view["pile_size"] - 1)]
    for f in below:
        cards.remove(f)

    def take(count: int) -> list[str]:
        nonlocal cards
        part, cards = cards[:count], cards[count:]
        return [face_text(f) for f in part]

    ts = view.get("turn_state") or {}
    pending = take(ts.get("pending_pile_size", 0))

    def hand(s: int, size: int) -> list[str]:
        if s == seat:
            return list(view["hand"])
        known = shown[s] if s < len(shown) else []
        if len(known) > size:
            raise PositionError(f"the view shows seat {s} holding more known cards than cards")
        return [*known, *take(size - len(known))]

    hands = [hand(s, n) for s, n in enumerate(view["hand_sizes"])]
    position: dict[str, Any] = {
        "rules": rules.to_dict(),
        "dealer": view["dealer"],
        "turn": view["turn"],
        "phase": view["phase"],
        "minimums": list(view["minimums"]),
        "hands": hands,
        "stock": take(view["stock_size"]),
        "pile": [face_text(f) for f in below] + ([] if top is None else [top]),
        "melds": [[{"cards": list(m["cards"])} for m in team] for team in view["melds"]],
        "red_threes": [list(r) for r in view["red_threes"]],
        "opened": list(view["opened"]),
        "team_map": list(view["teams"]),
        # without it, a position whose sides have formed would form them again on the next take
        "lone": view.get("lone"),
        # each seat's own melding (else taken from the melds, laid by each team's first seat)
        **({"has_melded": list(view["has_melded"])} if "has_melded" in view else {}),
        # without it, the next lay of a side with a canasta would bring the bonus cards again;
        # a view without the field (an older host's) tells it by a canasta on the table
        "canasta_bonus_given": bool(
            view.get(
                "canasta_bonus_given",
                any(m.get("canasta") for team in view["melds"] for m in team),
            )
        ),
        "turn_state": {
            "drew": ts.get("drew", ""),
            "initial_points": ts.get("initial_points", 0),
            "laid": bool(ts.get("initial_points", 0)),
            "permission": ts.get("permission"),
            "black_threes": bool(ts.get("black_threes", False)),
            "pending_pile": pending,
        },
    }
    if view.get("pile_frozen") and top is not None:
        position["pile_frozen"] = True
    if any(shown):
        position["shown"] = shown
    return position
