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

from typing import Any, Final

from canasta_net.canasta.match import MatchResult
from canasta_net.cards import face_text, sorted_faces
from canasta_net.effects import action_effects, snapshot
from canasta_net.i18n import N_, Translator
from canasta_net.log import records as R

from .timeline import Step, Timeline
from .views import Perspective, public_view
from .wording import Words, capital, hand_noun

# How a hand ends when no seat went out (the reason codes; English: the code in words).
END_WORDS: Final = {
    "stock-exhausted": N_("stock exhausted"),
    "last-red-three": N_("last red three"),
    "turn-limit": N_("turn limit"),
    "went-out": N_("went out"),
}


def _cards(state: Any, cards: list[int]) -> str:
    return " ".join(face_text(f) for f in sorted_faces(state.faces(cards)))


def describe_step(
    timeline: Timeline, step: Step, perspective: Perspective, tr: Translator | None = None
) -> str:
    """What the record of ``step`` did, in the language of ``tr`` (English by default: the JSON
    export's text)."""
    w = Words(tr)
    _ = w.tr.gettext
    header = timeline.header
    kind, hand = step.kind, step.hand
    this_hand = w.hand(timeline.game, hand)
    who = w.seat(header, step.author) if step.author is not None else _("the host")
    if step.record == 0:
        host = w.seat(header, header.host)
        text = (
            _("The table opens: {variant}, {n} seats, host {host} (insecure test seeds).")
            if header.insecure
            else _("The table opens: {variant}, {n} seats, host {host}.")
        )
        return text.format(variant=header.variant, n=len(header.seats), host=host)
    if kind == R.COMMIT:
        return _("{who} commits to its seed for {hand}.").format(who=capital(who), hand=this_hand)
    if kind == R.COMMITMENTS:
        minimums = "/".join(str(m) for m in step.info.get("minimums") or [])
        dealer = step.info.get("dealer")
        dealer_text = w.seat(header, dealer) if isinstance(dealer, int) else "?"
        if minimums:
            return _(
                "The host fixes {hand}'s commitments: dealer {dealer}, initial-meld minimums "
                "{minimums}."
            ).format(hand=this_hand, dealer=dealer_text, minimums=minimums)
        return _("The host fixes {hand}'s commitments: dealer {dealer}.").format(
            hand=this_hand, dealer=dealer_text
        )
    if kind == R.REVEAL:
        return _("{who} reveals its seed for {hand} to the host.").format(
            who=capital(who), hand=this_hand
        )
    if kind == R.DEAL:
        return _describe_deal(timeline, step, perspective, hand, w)
    if kind == R.ACTION:
        return _describe_action(timeline, step, perspective, w)
    if kind == R.HAND_END:
        return _describe_hand_end(timeline, step, w)
    if kind == R.SEEDS:
        return _(
            "{hand}'s seeds are published: its whole deal can now be checked by anyone."
        ).format(hand=capital(this_hand))
    if kind == R.CHECKPOINT:
        signers = ", ".join(str(s) for s in step.info.get("signers") or [])
        return _("The result of {hand} is signed by seats {signers}.").format(
            hand=this_hand, signers=signers
        )
    if kind == R.MATCH_END:
        return _describe_match_end(timeline, step, w)
    if kind == R.MATCH_STOP:
        return _describe_match_stop(timeline, step, w)
    if kind == R.FORFEIT:
        seat = step.info.get("seat")
        name = w.seat(header, seat) if isinstance(seat, int) else _("a seat")
        return _("{who} forfeits: {reason}.").format(
            who=capital(name), reason=step.info.get("reason") or _("no reason given")
        )
    if kind == R.CHAT:
        return _("{who} says: {text}").format(who=capital(who), text=step.info.get("text", ""))
    return _("A {kind} record.").format(kind=kind)  # pragma: no cover - refused by the replayer


def _describe_deal(
    timeline: Timeline, step: Step, perspective: Perspective, hand: int | None, w: Words
) -> str:
    _ = w.tr.gettext
    may_i = hand_noun(timeline.game) == "deal"
    this_hand = capital(w.hand(timeline.game, hand))
    state = step.state
    if state is None:
        if may_i:
            text = _(
                "{hand} is dealt (this copy cannot show it until the deal's seeds are public)."
            )
        else:
            text = _(
                "{hand} is dealt (this copy cannot show it until the hand's seeds are public)."
            )
        return text.format(hand=this_hand)
    top = state.pile_top
    contract = public_view(timeline.game, state).get("contract")
    if contract:
        text = _(
            "{hand} is dealt: {stock} cards in the stock, {top} turned up; the contract is "
            "{contract}."
        )
    else:
        text = _("{hand} is dealt: {stock} cards in the stock, {top} turned up.")
    text = text.format(
        hand=this_hand,
        stock=len(state.stock),
        top=face_text(top) if top is not None else _("no card"),
        contract=contract,
    )
    if perspective.kind == "seat" and perspective.seat is not None:
        text += " " + _("Your hand: {cards}.").format(
            cards=_cards(state, state.hands[perspective.seat])
        )
    return text


def _describe_action(timeline: Timeline, step: Step, perspective: Perspective, w: Words) -> str:
    _, ngettext = w.tr.gettext, w.tr.ngettext
    header, game = timeline.header, timeline.game
    who = w.seat(header, step.author) if step.author is not None else _("a seat")
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
        details.append(_("the discard pile was turned over to make a new stock"))
    for seat, (drawn, picked) in sorted(effects.new_cards.items()):
        sees = perspective.sees_hand_of(seat)
        subject = "" if seat == step.author else f"{w.seat(header, seat)} "
        if (
            bought_before is not None
            and bought_now is not None
            and (bought_now[seat] > bought_before[seat])
        ):
            bought = _bought(state, was["pile_top"], drawn, picked, sees, pile_public, w)
            details.append(subject + bought)
            continue
        if turned_over and pile_public and picked:
            # drawn from the new stock, which is the old pile turned over: public knowledge
            details.append(
                _("{subject}drew {cards} from the turned-over pile").format(
                    subject=subject, cards=_cards(state, picked)
                )
            )
            picked = []
        if drawn:
            if sees:
                drew = _("{subject}drew {cards}").format(
                    subject=subject, cards=_cards(state, drawn)
                )
            else:
                drew = ngettext("{subject}drew a card", "{subject}drew {n} cards", len(drawn))
                drew = drew.format(subject=subject, n=len(drawn))
            details.append(drew)
        if picked:
            n = len(picked)
            if sees or pile_public:
                took = ngettext(
                    "{subject}picked up a card from the pile: {cards}",
                    "{subject}picked up {n} cards from the pile: {cards}",
                    n,
                )
            else:
                took = ngettext(
                    "{subject}picked up a card from the pile",
                    "{subject}picked up {n} cards from the pile",
                    n,
                )
            details.append(took.format(subject=subject, n=n, cards=_cards(state, picked)))
    for seat, laid in enumerate(effects.red_threes or []):
        if laid:
            details.append(
                _("{seat} laid {cards}").format(
                    seat=w.seat(header, seat), cards=_cards(state, laid)
                )
            )
    details.extend(_buy_window(timeline, was, now, w))
    if state.is_over and not before.is_over and state.end is not None:
        end = state.end
        if end.went_out is not None:
            details.append(_("{seat} went out").format(seat=w.seat(header, end.went_out)))
        else:
            reason = end.reason.value
            if hand_noun(game) == "deal":
                ends = _("the deal ends ({reason})")
            else:
                ends = _("the hand ends ({reason})")
            details.append(ends.format(reason=reason))
    return text + (f" ({'; '.join(details)})." if details else ".")


def _bought(
    state: Any,
    top: str,
    drawn: list[int],
    picked: list[int],
    sees: bool,
    pile_public: bool,
    w: Words,
) -> str:
    """A bought discard (public) and its penalty cards (from the stock: hidden, unless the pile
    was just turned over into the stock, whose order every seat knows)."""
    _, ngettext = w.tr.gettext, w.tr.ngettext
    bought = next((c for c in picked if face_text(state.faces([c])[0]) == top), None)
    penalty = [c for c in [*drawn, *picked] if c != bought]
    if not penalty:
        return _("bought {card}").format(card=top)
    n = len(penalty)
    if sees or (pile_public and all(c in picked for c in penalty)):
        text = ngettext(
            "bought {card} with the penalty card {cards}",
            "bought {card} with the penalty cards {cards}",
            n,
        )
    else:
        text = ngettext(
            "bought {card} with a penalty card", "bought {card} with {n} penalty cards", n
        )
    return text.format(card=top, n=n, cards=_cards(state, penalty))


def _buy_window(
    timeline: Timeline, was: dict[str, Any], now: dict[str, Any], w: Words
) -> list[str]:
    """What a game with a buy window (May I?) says about it: public, from the views."""
    if "window" not in now:
        return []
    _ = w.tr.gettext
    header = timeline.header
    in_window = ("buy-offer", "buy-permission")
    opened = now["phase"] == "buy-offer" and was["phase"] not in in_window
    if opened:
        return [
            _("{card} is offered for sale, {seat} first").format(
                card=now["pile_top"], seat=w.seat(header, now["to_move"])
            )
        ]
    if now["phase"] == "buy-permission" and was["phase"] == "buy-offer":
        return [
            _("{seat} is asked for permission first").format(seat=w.seat(header, now["to_move"]))
        ]
    if was["phase"] in in_window and now["phase"] not in in_window and was["buys"] == now["buys"]:
        return [_("nobody buys {card}").format(card=was["pile_top"])]
    return []


def _describe_hand_end(timeline: Timeline, step: Step, w: Words) -> str:
    _ = w.tr.gettext
    game, header = timeline.game, timeline.header
    info = step.info
    went_out = info.get("went_out")
    if isinstance(went_out, int):
        how = _("{seat} went out").format(seat=w.seat(header, went_out))
    else:
        reason = str(info.get("reason", ""))
        word = END_WORDS.get(reason)
        how = _(word) if word is not None else reason.replace("-", " ")
    parts = []
    for side, score in enumerate(info.get("scores") or []):
        total = (info.get("totals") or [0] * game.teams)[side]
        parts.append(
            _("{side} {points} (total {total})").format(
                side=w.side(game, header, side),
                points=w.points(game, score.get("total", 0)),
                total=total,
            )
        )
    return _("{hand} ends, {how}: {scores}.").format(
        hand=capital(w.hand(game, step.hand)), how=how, scores="; ".join(parts)
    )


_STOP_REASONS: Final = {
    R.STOP_MAX_HANDS: N_("the table's limit of hands is reached"),
    R.STOP_PLAYERS_LEFT: N_("every person at the table left"),
    R.STOP_HOST_QUIT: N_("the host quit"),
}


def _describe_match_stop(timeline: Timeline, step: Step, w: Words) -> str:
    _ = w.tr.gettext
    game, header = timeline.game, timeline.header
    reason = step.info.get("reason")
    if isinstance(reason, str):
        word = _STOP_REASONS.get(reason)
        why = _(word) if word is not None else _("reason {reason}").format(reason=repr(reason))
    else:
        why = "?"
    scores = w.totals(game, header, step.info.get("totals") or [])
    hands = step.info.get("hands")
    played = w.hands(game, hands) if isinstance(hands, int) else _("some hands")
    if step.info.get("mid_hand"):
        text = _(
            "The match stops before its end after {played} (a hand was under way): {why} "
            "({scores})."
        )
    else:
        text = _("The match stops before its end after {played}: {why} ({scores}).")
    return text.format(played=played, why=why, scores=scores)


def _describe_match_end(timeline: Timeline, step: Step, w: Words) -> str:
    _ = w.tr.gettext
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
        return _("The match ends: {result}.").format(
            result=w.result(game, header, result, forfeit=forfeit)
        )
    scores = w.totals(game, header, totals)
    if isinstance(winner, int):
        hands = step.info.get("hands")
        return _("The match ends: {winner} wins after {hands} hands ({scores}).").format(
            winner=w.side(game, header, winner), hands=hands, scores=scores
        )
    return _("The match ends in a draw ({scores}).").format(scores=scores)
