"""What a record means, in one sentence, as a given perspective may be told it.

Which cards a seat drew or picked up are hidden from the other seats: they are named only to a
perspective that sees that seat's hand. Everything else a record says (the action's text, red threes
laid, the scores) is public. The cards moved by an action are found by comparing the engine's
tables before and after it.
"""

from __future__ import annotations

from canasta_net import records as R
from canasta_net.cards import face_text, sorted_faces
from canasta_net.state import HandState

from .timeline import Step, Timeline
from .views import Perspective
from .wording import capital, seat_name, team_name


def _cards(state: HandState, cards: list[int]) -> str:
    return " ".join(face_text(f) for f in sorted_faces(state.faces(cards)))


def describe_step(timeline: Timeline, step: Step, perspective: Perspective) -> str:
    header = timeline.header
    kind, hand = step.kind, step.hand
    who = seat_name(header, step.author) if step.author is not None else "the host"
    if step.record == 0:
        host = seat_name(header, header.host)
        return f"The table opens: {header.variant}, {len(header.seats)} seats, host {host}" + (
            " (insecure test seeds)." if header.insecure else "."
        )
    if kind == R.COMMIT:
        return f"{capital(who)} commits to its seed for hand {hand}."
    if kind == R.COMMITMENTS:
        minimums = "/".join(str(m) for m in step.info.get("minimums") or [])
        dealer = step.info.get("dealer")
        dealer_text = seat_name(header, dealer) if isinstance(dealer, int) else "?"
        return (
            f"The host fixes hand {hand}'s commitments: dealer {dealer_text}, initial-meld "
            f"minimums {minimums}."
        )
    if kind == R.REVEAL:
        return f"{capital(who)} reveals its seed for hand {hand} to the host."
    if kind == R.DEAL:
        return _describe_deal(step, perspective, hand)
    if kind == R.ACTION:
        return _describe_action(timeline, step, perspective)
    if kind == R.HAND_END:
        return _describe_hand_end(timeline, step)
    if kind == R.SEEDS:
        return f"Hand {hand}'s seeds are published: its whole deal can now be checked by anyone."
    if kind == R.CHECKPOINT:
        signers = ", ".join(str(s) for s in step.info.get("signers") or [])
        return f"The result of hand {hand} is signed by seats {signers}."
    if kind == R.MATCH_END:
        return _describe_match_end(timeline, step)
    if kind == R.FORFEIT:
        seat = step.info.get("seat")
        name = seat_name(header, seat) if isinstance(seat, int) else "a seat"
        return f"{capital(name)} forfeits: {step.info.get('reason') or 'no reason given'}."
    if kind == R.CHAT:
        return f"{capital(who)} says: {step.info.get('text', '')}"
    return f"A {kind} record."  # pragma: no cover - the replayer refuses unknown kinds


def _describe_deal(step: Step, perspective: Perspective, hand: int | None) -> str:
    state = step.state
    if state is None:
        return f"Hand {hand} is dealt (this copy cannot show it until the hand's seeds are public)."
    top = state.pile_top
    text = (
        f"Hand {hand} is dealt: {len(state.stock)} cards in the stock, "
        f"{face_text(top) if top is not None else 'no card'} turned up."
    )
    if perspective.kind == "seat" and perspective.seat is not None:
        text += f" Your hand: {_cards(state, state.hands[perspective.seat])}."
    return text


def _describe_action(timeline: Timeline, step: Step, perspective: Perspective) -> str:
    header = timeline.header
    who = seat_name(header, step.author) if step.author is not None else "a seat"
    text = f"{capital(who)}: {step.action}"
    state, before = step.state, step.before
    if state is None or before is None:
        return text + "."
    actor = before.turn
    old = set(before.hands[actor])
    new = [c for c in state.hands[actor] if c not in old]
    pile_before = set(before.pile) | set(before.t.pending_pile)
    drawn = [c for c in new if c not in pile_before]
    picked = [c for c in new if c in pile_before]
    sees = perspective.sees_hand_of(actor)
    details: list[str] = []
    if drawn:
        details.append(f"drew {_cards(state, drawn)}" if sees else f"drew {_count(len(drawn))}")
    if picked:
        details.append(
            f"picked up {_count(len(picked))} from the pile"
            + (f": {_cards(state, picked)}" if sees else "")
        )
    for seat in range(state.players):
        laid = state.red_threes[seat][len(before.red_threes[seat]) :]
        if laid:
            details.append(f"{seat_name(header, seat)} laid {_cards(state, laid)}")
    if state.is_over and not before.is_over and state.end is not None:
        end = state.end
        if end.went_out is not None:
            details.append(f"{seat_name(header, end.went_out)} went out")
        else:
            details.append(f"the hand ends ({end.reason.value})")
    return text + (f" ({'; '.join(details)})." if details else ".")


def _count(n: int) -> str:
    return "a card" if n == 1 else f"{n} cards"


def _describe_hand_end(timeline: Timeline, step: Step) -> str:
    rules, header = timeline.rules, timeline.header
    info = step.info
    went_out = info.get("went_out")
    how = (
        f"{seat_name(header, went_out)} went out"
        if isinstance(went_out, int)
        else str(info.get("reason", "")).replace("-", " ")
    )
    parts = []
    for team, score in enumerate(info.get("scores") or []):
        total = (info.get("totals") or [0] * rules.teams)[team]
        parts.append(f"{team_name(rules, team)} {score.get('total', 0):+d} (total {total})")
    return f"Hand {step.hand} ends, {how}: " + "; ".join(parts) + "."


def _describe_match_end(timeline: Timeline, step: Step) -> str:
    rules = timeline.rules
    winner = step.info.get("winner")
    totals = step.info.get("totals") or []
    scores = ", ".join(f"{team_name(rules, t)} {s}" for t, s in enumerate(totals))
    if isinstance(winner, int):
        hands = step.info.get("hands")
        return f"The match ends: {team_name(rules, winner)} wins after {hands} hands ({scores})."
    return f"The match ends in a draw ({scores})."
