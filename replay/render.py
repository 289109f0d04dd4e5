"""The table at one step of a game, as plain text for a terminal."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from canasta_net.i18n import N_, Translator, current
from canasta_net.log.records import shown_number
from canasta_net.safe_text import safe_text

from .annotations import Annotation, describe_outcome
from .describe import describe_step
from .timeline import Step, Timeline
from .views import Perspective, table_view
from .wording import Words, hand_noun, join_cards, seats_play_alone, team_seats

CANASTA_WORDS: Final = {"natural": N_("(natural canasta)"), "mixed": N_("(mixed canasta)")}


def render_step(
    timeline: Timeline,
    step: Step,
    perspective: Perspective,
    annotations: Sequence[Annotation] = (),
    tr: Translator | None = None,
) -> str:
    """The header line, what the record did, the table after it, and its annotations, in the
    language of ``tr`` (by default the process's person's: ``--lang``).

    Names, chats, reasons and comments in it came from others: each line is made safe for a
    terminal (``safe_text``)."""
    tr = current() if tr is None else tr
    w = Words(tr)
    _ = tr.gettext
    header, game = timeline.header, timeline.game
    may_i = hand_noun(game) == "deal"
    where = [
        _("Record {record} of {last} ({kind})").format(
            record=step.record, last=timeline.last_record, kind=step.kind
        )
    ]
    if step.hand is not None:
        if step.turn is not None:
            where.append(
                _("{hand}, turn {turn}").format(
                    hand=w.hand(game, step.hand), turn=shown_number(step.turn)
                )
            )
        else:
            where.append(w.hand(game, step.hand))
    where.append(perspective.describe(header, tr))
    lines = [" · ".join(where), describe_step(timeline, step, perspective, tr), ""]
    if step.state is not None:
        lines.extend(render_view(timeline, table_view(game, step.state, perspective), tr))
    elif step.pending:
        lines.append(
            _(
                "This copy of the log cannot show this deal: it is replayed once the deal's "
                "seeds are published, and this log stops before that."
            )
            if may_i
            else _(
                "This copy of the log cannot show this hand: it is replayed once the hand's "
                "seeds are published, and this log stops before that."
            )
        )
    else:
        lines.append(_("No deal is on the table.") if may_i else _("No hand is on the table."))
    totals = " · ".join(f"{w.side(game, header, t)} {s}" for t, s in enumerate(step.totals))
    if game.lowest_wins:
        lines.append(_("Totals (penalty points, the lowest wins): {totals}").format(totals=totals))
    else:
        lines.append(_("Totals: {totals}").format(totals=totals))
    mine = [a for a in annotations if a.record == step.record]
    if mine:
        lines.append("")
        lines.append(_("Annotations:"))
        for annotation in mine:
            lines.extend(render_annotation(annotation, tr, timeline))
    return "\n".join(safe_text(line) for line in lines)


def render_annotation(
    annotation: Annotation, tr: Translator | None = None, timeline: Timeline | None = None
) -> list[str]:
    """An annotation's lines; its what-if outcome worded for the reader (with the ``timeline``
    it belongs to: the seats' names), else as the file keeps it (English)."""
    tr = current() if tr is None else tr
    _ = tr.gettext
    glyph = f"{annotation.glyph} " if annotation.glyph else ""
    lines = [f"  [{annotation.id}] {glyph}{annotation.author}: {annotation.comment}".rstrip()]
    if annotation.cards:
        lines.append("      " + _("cards: {cards}").format(cards=" ".join(annotation.cards)))
    if annotation.line is not None:
        line = "; ".join(annotation.line.actions)
        lines.append("      " + _("what-if: {line}").format(line=line))
        outcome = annotation.line.outcome
        worded = None if timeline is None else worded_outcome(outcome, timeline, tr)
        lines.append(f"        -> {worded or describe_outcome(outcome)}")
    return [safe_text(line) for line in lines]


def worded_outcome(outcome: dict[str, Any], timeline: Timeline, tr: Translator) -> str | None:
    """A what-if line's outcome (``whatif.play_line``'s) in the reader's words, from its fields;
    None for English (the ``summary`` the file keeps says it) or an outcome it cannot read."""
    if tr.lang == "en":
        return None
    w = Words(tr)
    _ = tr.gettext
    game, header = timeline.game, timeline.header
    may_i = hand_noun(game) == "deal"
    try:
        n = int(outcome["actions"])
        actions = tr.ngettext("{n} action", "{n} actions", n).format(n=n)
        end = outcome.get("end")
        if end:
            went = end.get("went_out")
            if went is not None:
                said = _("After {actions}, {seat} goes out: {parts}.")
            elif may_i:
                said = _("After {actions}, the deal ends ({reason}): {parts}.")
            else:
                said = _("After {actions}, the hand ends ({reason}): {parts}.")
            totals = outcome["totals"]
            parts = "; ".join(
                _("{side} {points} (total {total})").format(
                    side=w.side(game, header, t),
                    points=w.points(game, int(score["total"])),
                    total=totals[t],
                )
                for t, score in enumerate(outcome["scores"])
            )
            seat = "" if went is None else w.seat(header, int(went))
            text = said.format(actions=actions, seat=seat, reason=end.get("reason"), parts=parts)
        else:
            said = (
                _("After {actions}, the deal goes on: turn {turn}, {seat} to move ({phase}).")
                if may_i
                else _("After {actions}, the hand goes on: turn {turn}, {seat} to move ({phase}).")
            )
            phase = (outcome.get("position") or {}).get("phase")
            text = said.format(
                actions=actions,
                turn=shown_number(int(outcome["turn"])),
                seat=w.seat(header, int(outcome["to_move"])),
                phase=w.phase(str(phase)),
            )
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    if outcome.get("instead_of") is not None:
        text = _("Instead of the move played: {outcome}").format(outcome=text)
    return text


def render_view(
    timeline: Timeline, view: dict[str, Any], tr: Translator | None = None
) -> list[str]:
    """The table of a view dictionary (see ``views.table_view``) as lines of text."""
    w = Words(current() if tr is None else tr)
    _ = w.tr.gettext
    if seats_play_alone(timeline.game):
        return _render_seats_view(timeline, view, w)
    header, rules = timeline.header, timeline.rules
    lines = []
    to_move = view.get("to_move")
    status = (
        _("{seat} to move, phase {phase}").format(
            seat=w.seat(header, to_move), phase=w.phase(view["phase"])
        )
        if to_move is not None
        else _("the hand is over")
    )
    lines.append(
        _("Dealer {seat} · {status}").format(seat=w.seat(header, view["dealer"]), status=status)
    )
    pile = _("pile {cards}").format(cards=w.cards(view["pile_size"]))
    if view.get("pile_top"):
        pile += _(", top {card}").format(card=view["pile_top"])
    if view.get("pile_frozen"):
        pile += " " + _("(frozen)")
    lines.append(_("Stock {cards} · {pile}").format(cards=w.cards(view["stock_size"]), pile=pile))
    if "pile" in view:
        lines.append(
            "  " + _("pile, bottom to top: {cards}").format(cards=join_cards(view["pile"]))
        )
        lines.append(
            "  " + _("stock, next card last: {cards}").format(cards=join_cards(view["stock"]))
        )
    for team in range(rules.teams):
        opened = _("opened") if view["opened"][team] else _("not opened")
        reds = [c for s in team_seats(rules, team) for c in view["red_threes"][s]]
        lines.append(
            _("{team}: {opened} (minimum {minimum})").format(
                team=w.team(rules, team), opened=opened, minimum=view["minimums"][team]
            )
            + (" · " + _("red threes {cards}").format(cards=" ".join(reds)) if reds else "")
        )
        for number, meld in enumerate(view["melds"][team]):
            word = CANASTA_WORDS.get(meld["canasta"]) if meld["canasta"] else None
            canasta = ""
            if word is not None:
                canasta = "  " + _(word)
            elif meld["canasta"]:
                canasta = f"  ({meld['canasta']} canasta)"
            lines.append(f"  {number}: {meld['label']:4} {' '.join(meld['cards'])}{canasta}")
    lines.extend(_seat_lines(timeline, view, lambda seat: "", w))
    return lines


def _seat_lines(
    timeline: Timeline, view: dict[str, Any], facts: Callable[[int], str], w: Words
) -> list[str]:
    """One line per seat: who is to move, the hand's size, ``facts``, the cards if shown."""
    _ = w.tr.gettext
    header = timeline.header
    to_move = view.get("to_move")
    lines = [_("Seats:")]
    for seat, size in enumerate(view["hand_sizes"]):
        marker = ">" if seat == to_move else " "
        cards = ""
        if "hands" in view:
            cards = f": {join_cards(view['hands'][seat])}"
        elif view.get("seat") == seat:
            cards = f": {join_cards(view['hand'])}  " + _("(you)")
        lines.append(f"{marker} {w.seat(header, seat)}: {w.cards(size)}{facts(seat)}{cards}")
    return lines


def _render_seats_view(timeline: Timeline, view: dict[str, Any], w: Words) -> list[str]:
    """The table of a game where every seat plays for itself and melds its own contract (May I?):
    the deal's contract, the stock and the whole (public) discard pile, the buy window, and each
    seat's melds, whether it is down and how many discards it has bought."""
    _, ngettext = w.tr.gettext, w.tr.ngettext
    header = timeline.header
    to_move = view.get("to_move")
    status = (
        _("{seat} to move, phase {phase}").format(
            seat=w.seat(header, to_move), phase=w.phase(view["phase"])
        )
        if to_move is not None
        else _("the deal is over")
    )
    last = (
        _("the last card may be discarded") if view["discard_out"] else _("the last card is melded")
    )
    lines = [
        _("Deal {n} · contract {contract} ({last}) · dealer {seat} · {status}").format(
            n=shown_number(view["deal"]),
            contract=view["contract"],
            last=last,
            seat=w.seat(header, view["dealer"]),
            status=status,
        )
    ]
    turned = ""
    if view["turnovers"]:
        turned = " " + ngettext(
            "(pile turned over {n} time)", "(pile turned over {n} times)", view["turnovers"]
        ).format(n=view["turnovers"])
    pile = _("pile {cards}").format(cards=w.cards(len(view["pile"])))
    if view.get("pile_top"):
        pile += _(", top {card}").format(card=view["pile_top"])
    lines.append(
        _("Stock {cards}").format(cards=w.cards(view["stock_size"])) + f"{turned} · {pile}"
    )
    lines.append("  " + _("pile, bottom to top: {cards}").format(cards=join_cards(view["pile"])))
    if "stock" in view:
        lines.append(
            "  " + _("stock, next card last: {cards}").format(cards=join_cards(view["stock"]))
        )
    window = view["window"]
    if view["phase"] == "buy-offer":
        waiting = ", ".join(w.seat(header, s) for s in window["offer"])
        lines.append(
            _("Buy window: {card} is for sale; to be asked: {seats}").format(
                card=view["pile_top"], seats=waiting
            )
        )
    elif view["phase"] == "buy-permission" and window["asker"] is not None:
        waiting = ", ".join(w.seat(header, s) for s in window["permission"])
        lines.append(
            _("Buy window: {seat} asks to buy {card}; to allow or deny: {seats}").format(
                seat=w.seat(header, window["asker"]), card=view["pile_top"], seats=waiting
            )
        )
    for seat, melds in enumerate(view["melds"]):
        if not melds:
            continue
        lines.append(_("{seat}'s melds:").format(seat=w.seat(header, seat)))
        for number, meld in enumerate(melds):
            lines.append(f"  {seat}.{number}: {meld['label']:16} {' '.join(meld['cards'])}")
    limit = view["buy_limit"]

    def facts(seat: int) -> str:
        down = _("down") if view["down"][seat] else _("not down")
        buys = _("{n} of {limit} buys").format(n=view["buys"][seat], limit=limit)
        return f" · {down} · {buys}"

    lines.extend(_seat_lines(timeline, view, facts, w))
    return lines
