"""What a record means, in one sentence, as a given perspective may be told it.

Which cards a seat drew (from the stock) are hidden from the other seats: they are named only to a
perspective that sees that seat's hand. Cards taken from the discard pile are named to everyone in
a game whose whole pile is public (May I?: it is in every seat's view), and otherwise only to a
perspective that sees the hand they went to. Everything else a record says (the action's text, red
threes laid, a discard bought, the scores) is public. The cards moved by an action are found by
comparing the engine's tables before and after it (``canasta_net.effects``, the one place the host
and the replayer compute it too); what changed in public (buys, a buy window, the pile turned over)
by comparing the game's public views.
"""

from __future__ import annotations

from typing import Any

from canasta_net.canasta.match import MatchResult
from canasta_net.cards import face_text, sorted_faces
from canasta_net.effects import action_effects, snapshot
from canasta_net.log import records as R

from .timeline import Step, Timeline
from .views import Perspective, public_view
from .wording import (
    capital,
    count,
    hand_name,
    hand_noun,
    points_text,
    result_text,
    seat_name,
    side_name,
)


def _cards(state: Any, cards: list[int]) -> str:
    return " ".join(face_text(f) for f in sorted_faces(state.faces(cards)))


def describe_step(timeline: Timeline, step: Step, perspective: Perspective) -> str:
    header = timeline.header
    kind, hand = step.kind, step.hand
    this_hand = hand_name(timeline.game, hand)
    who = seat_name(header, step.author) if step.author is not None else "the host"
    if step.record == 0:
        host = seat_name(header, header.host)
        return f"The table opens: {header.variant}, {len(header.seats)} seats, host {host}" + (
            " (insecure test seeds)." if header.insecure else "."
        )
    if kind == R.COMMIT:
        return f"{capital(who)} commits to its seed for {this_hand}."
    if kind == R.COMMITMENTS:
        minimums = "/".join(str(m) for m in step.info.get("minimums") or [])
        dealer = step.info.get("dealer")
        dealer_text = seat_name(header, dealer) if isinstance(dealer, int) else "?"
        return f"The host fixes {this_hand}'s commitments: dealer {dealer_text}" + (
            f", initial-meld minimums {minimums}." if minimums else "."
        )
    if kind == R.REVEAL:
        return f"{capital(who)} reveals its seed for {this_hand} to the host."
    if kind == R.DEAL:
        return _describe_deal(timeline, step, perspective, hand)
    if kind == R.ACTION:
        return _describe_action(timeline, step, perspective)
    if kind == R.HAND_END:
        return _describe_hand_end(timeline, step)
    if kind == R.SEEDS:
        return (
            f"{capital(this_hand)}'s seeds are published: its whole deal can now be checked by "
            "anyone."
        )
    if kind == R.CHECKPOINT:
        signers = ", ".join(str(s) for s in step.info.get("signers") or [])
        return f"The result of {this_hand} is signed by seats {signers}."
    if kind == R.MATCH_END:
        return _describe_match_end(timeline, step)
    if kind == R.MATCH_STOP:
        return _describe_match_stop(timeline, step)
    if kind == R.FORFEIT:
        seat = step.info.get("seat")
        name = seat_name(header, seat) if isinstance(seat, int) else "a seat"
        return f"{capital(name)} forfeits: {step.info.get('reason') or 'no reason given'}."
    if kind == R.CHAT:
        return f"{capital(who)} says: {step.info.get('text', '')}"
    return f"A {kind} record."  # pragma: no cover - the replayer refuses unknown kinds


def _describe_deal(
    timeline: Timeline, step: Step, perspective: Perspective, hand: int | None
) -> str:
    noun = hand_noun(timeline.game)
    this_hand = capital(hand_name(timeline.game, hand))
    state = step.state
    if state is None:
        return (
            f"{this_hand} is dealt (this copy cannot show it until the {noun}'s seeds are public)."
        )
    top = state.pile_top
    text = (
        f"{this_hand} is dealt: {len(state.stock)} cards in the stock, "
        f"{face_text(top) if top is not None else 'no card'} turned up"
    )
    contract = public_view(timeline.game, state).get("contract")
    text += f"; the contract is {contract}." if contract else "."
    if perspective.kind == "seat" and perspective.seat is not None:
        text += f" Your hand: {_cards(state, state.hands[perspective.seat])}."
    return text


def _describe_action(timeline: Timeline, step: Step, perspective: Perspective) -> str:
    header, game = timeline.header, timeline.game
    who = seat_name(header, step.author) if step.author is not None else "a seat"
    text = f"{capital(who)}: {step.action}"
    state, before = step.state, step.before
    if state is None or before is None:
        return text + "."
    effects = action_effects(snapshot(before), state)
    was, now = public_view(game, before), public_view(game, state)
    pile_public = "pile" in was  # the whole discard pile is in every seat's view
    bought_before, bought_now = was.get("buys"), now.get("buys")
    details: list[str] = []
    turned_over = now.get("turnovers", 0) > was.get("turnovers", 0)
    if turned_over:
        details.append("the discard pile was turned over to make a new stock")
    for seat, (drawn, picked) in sorted(effects.new_cards.items()):
        sees = perspective.sees_hand_of(seat)
        subject = "" if seat == step.author else f"{seat_name(header, seat)} "
        if (
            bought_before is not None
            and bought_now is not None
            and (bought_now[seat] > bought_before[seat])
        ):
            bought = _bought(state, was["pile_top"], drawn, picked, sees, pile_public)
            details.append(subject + bought)
            continue
        if turned_over and pile_public and picked:
            # drawn from the new stock, which is the old pile turned over: public knowledge
            details.append(f"{subject}drew {_cards(state, picked)} from the turned-over pile")
            picked = []
        if drawn:
            details.append(
                f"{subject}drew {_cards(state, drawn)}"
                if sees
                else f"{subject}drew {_count(len(drawn))}"
            )
        if picked:
            details.append(
                f"{subject}picked up {_count(len(picked))} from the pile"
                + (f": {_cards(state, picked)}" if sees or pile_public else "")
            )
    for seat, laid in enumerate(effects.red_threes or []):
        if laid:
            details.append(f"{seat_name(header, seat)} laid {_cards(state, laid)}")
    details.extend(_buy_window(timeline, was, now))
    if state.is_over and not before.is_over and state.end is not None:
        end = state.end
        if end.went_out is not None:
            details.append(f"{seat_name(header, end.went_out)} went out")
        else:
            details.append(f"the {hand_noun(game)} ends ({end.reason.value})")
    return text + (f" ({'; '.join(details)})." if details else ".")


def _bought(
    state: Any, top: str, drawn: list[int], picked: list[int], sees: bool, pile_public: bool
) -> str:
    """A bought discard (public) and its penalty cards (from the stock: hidden, unless the pile
    was just turned over into the stock, whose order every seat knows)."""
    bought = next((c for c in picked if face_text(state.faces([c])[0]) == top), None)
    penalty = [c for c in [*drawn, *picked] if c != bought]
    text = f"bought {top}"
    if not penalty:
        return text
    plural = "s" if len(penalty) > 1 else ""
    if sees or (pile_public and all(c in picked for c in penalty)):
        return text + f" with the penalty card{plural} {_cards(state, penalty)}"
    return text + f" with {_count(len(penalty), 'penalty card')}"


def _buy_window(timeline: Timeline, was: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What a game with a buy window (May I?) says about it: public, from the views."""
    if "window" not in now:
        return []
    header = timeline.header
    in_window = ("buy-offer", "buy-permission")
    opened = now["phase"] == "buy-offer" and was["phase"] not in in_window
    if opened:
        return [f"{now['pile_top']} is offered for sale, {seat_name(header, now['to_move'])} first"]
    if now["phase"] == "buy-permission" and was["phase"] == "buy-offer":
        return [f"{seat_name(header, now['to_move'])} is asked for permission first"]
    if was["phase"] in in_window and now["phase"] not in in_window and was["buys"] == now["buys"]:
        return [f"nobody buys {was['pile_top']}"]
    return []


def _count(n: int, noun: str = "card") -> str:
    return f"a {noun}" if n == 1 else f"{n} {noun}s"


def _describe_hand_end(timeline: Timeline, step: Step) -> str:
    game, header = timeline.game, timeline.header
    info = step.info
    went_out = info.get("went_out")
    how = (
        f"{seat_name(header, went_out)} went out"
        if isinstance(went_out, int)
        else str(info.get("reason", "")).replace("-", " ")
    )
    parts = []
    for side, score in enumerate(info.get("scores") or []):
        total = (info.get("totals") or [0] * game.teams)[side]
        parts.append(
            f"{side_name(game, header, side)} {points_text(game, score.get('total', 0))} "
            f"(total {total})"
        )
    return f"{capital(hand_name(game, step.hand))} ends, {how}: " + "; ".join(parts) + "."


_STOP_REASONS = {
    R.STOP_MAX_HANDS: "the table's limit of hands is reached",
    R.STOP_PLAYERS_LEFT: "every person at the table left",
    R.STOP_HOST_QUIT: "the host quit",
}


def _describe_match_stop(timeline: Timeline, step: Step) -> str:
    game, header = timeline.game, timeline.header
    reason = step.info.get("reason")
    why = _STOP_REASONS.get(reason, f"reason {reason!r}") if isinstance(reason, str) else "?"
    totals = step.info.get("totals") or []
    scores = ", ".join(f"{side_name(game, header, t)} {s}" for t, s in enumerate(totals))
    hands = step.info.get("hands")
    played = count(hands, hand_noun(game)) if isinstance(hands, int) else "some hands"
    during = " (a hand was under way)" if step.info.get("mid_hand") else ""
    return f"The match stops before its end after {played}{during}: {why} ({scores})."


def _describe_match_end(timeline: Timeline, step: Step) -> str:
    game, header = timeline.game, timeline.header
    winner = step.info.get("winner")
    totals = step.info.get("totals") or []
    if game.lowest_wins:
        hands = step.info.get("hands")
        result = MatchResult(
            winner if isinstance(winner, int) else None,
            tuple(totals),
            hands if isinstance(hands, int) else len(timeline.hands),
        )
        forfeit = timeline.forfeit is not None
        return f"The match ends: {result_text(game, header, result, forfeit=forfeit)}."
    scores = ", ".join(f"{side_name(game, header, t)} {s}" for t, s in enumerate(totals))
    if isinstance(winner, int):
        hands = step.info.get("hands")
        name = side_name(game, header, winner)
        return f"The match ends: {name} wins after {hands} hands ({scores})."
    return f"The match ends in a draw ({scores})."
