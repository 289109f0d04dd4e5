"""The table at one step of a game, as plain text for a terminal."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from canasta_net.log.records import shown_number
from canasta_net.safe_text import safe_text

from .annotations import Annotation, describe_outcome
from .describe import describe_step
from .timeline import Step, Timeline
from .views import Perspective, table_view
from .wording import (
    count,
    hand_name,
    hand_noun,
    join_cards,
    seat_name,
    seats_play_alone,
    side_name,
    team_name,
    team_seats,
)


def render_step(
    timeline: Timeline,
    step: Step,
    perspective: Perspective,
    annotations: Sequence[Annotation] = (),
) -> str:
    """The header line, what the record did, the table after it, and its annotations.

    Names, chats, reasons and comments in it came from others: each line is made safe for a
    terminal (``safe_text``)."""
    header, game = timeline.header, timeline.game
    noun = hand_noun(game)
    where = [f"Record {step.record} of {timeline.last_record} ({step.kind})"]
    if step.hand is not None:
        where.append(
            hand_name(game, step.hand)
            + (f", turn {shown_number(step.turn)}" if step.turn is not None else "")
        )
    where.append(perspective.describe(header))
    lines = [" · ".join(where), describe_step(timeline, step, perspective), ""]
    if step.state is not None:
        lines.extend(render_view(timeline, table_view(game, step.state, perspective)))
    elif step.pending:
        lines.append(
            f"This copy of the log cannot show this {noun}: it is replayed once the {noun}'s "
            "seeds are published, and this log stops before that."
        )
    else:
        lines.append(f"No {noun} is on the table.")
    lines.append(
        ("Totals (penalty points, the lowest wins): " if game.lowest_wins else "Totals: ")
        + " · ".join(f"{side_name(game, header, t)} {s}" for t, s in enumerate(step.totals))
    )
    mine = [a for a in annotations if a.record == step.record]
    if mine:
        lines.append("")
        lines.append("Annotations:")
        for annotation in mine:
            lines.extend(render_annotation(annotation))
    return "\n".join(safe_text(line) for line in lines)


def render_annotation(annotation: Annotation) -> list[str]:
    glyph = f"{annotation.glyph} " if annotation.glyph else ""
    lines = [f"  [{annotation.id}] {glyph}{annotation.author}: {annotation.comment}".rstrip()]
    if annotation.cards:
        lines.append(f"      cards: {' '.join(annotation.cards)}")
    if annotation.line is not None:
        lines.append(f"      what-if: {'; '.join(annotation.line.actions)}")
        lines.append(f"        -> {describe_outcome(annotation.line.outcome)}")
    return [safe_text(line) for line in lines]


def render_view(timeline: Timeline, view: dict[str, Any]) -> list[str]:
    """The table of a view dictionary (see ``views.table_view``) as lines of text."""
    if seats_play_alone(timeline.game):
        return _render_seats_view(timeline, view)
    header, rules = timeline.header, timeline.rules
    lines = []
    to_move = view.get("to_move")
    status = (
        f"{seat_name(header, to_move)} to move, phase {view['phase']}"
        if to_move is not None
        else "the hand is over"
    )
    lines.append(f"Dealer {seat_name(header, view['dealer'])} · {status}")
    pile = f"pile {count(view['pile_size'], 'card')}"
    if view.get("pile_top"):
        pile += f", top {view['pile_top']}"
    if view.get("pile_frozen"):
        pile += " (frozen)"
    lines.append(f"Stock {count(view['stock_size'], 'card')} · {pile}")
    if "pile" in view:
        lines.append(f"  pile, bottom to top: {join_cards(view['pile'])}")
        lines.append(f"  stock, next card last: {join_cards(view['stock'])}")
    for team in range(rules.teams):
        opened = "opened" if view["opened"][team] else "not opened"
        reds = [c for s in team_seats(rules, team) for c in view["red_threes"][s]]
        lines.append(
            f"{team_name(rules, team)}: {opened} (minimum {view['minimums'][team]})"
            + (f" · red threes {' '.join(reds)}" if reds else "")
        )
        for number, meld in enumerate(view["melds"][team]):
            canasta = f"  ({meld['canasta']} canasta)" if meld["canasta"] else ""
            lines.append(f"  {number}: {meld['label']:4} {' '.join(meld['cards'])}{canasta}")
    lines.extend(_seat_lines(timeline, view, lambda seat: ""))
    return lines


def _seat_lines(timeline: Timeline, view: dict[str, Any], facts: Callable[[int], str]) -> list[str]:
    """One line per seat: who is to move, the hand's size, ``facts``, the cards if shown."""
    header = timeline.header
    to_move = view.get("to_move")
    lines = ["Seats:"]
    for seat, size in enumerate(view["hand_sizes"]):
        marker = ">" if seat == to_move else " "
        cards = ""
        if "hands" in view:
            cards = f": {join_cards(view['hands'][seat])}"
        elif view.get("seat") == seat:
            cards = f": {join_cards(view['hand'])}  (you)"
        lines.append(
            f"{marker} {seat_name(header, seat)}: {count(size, 'card')}{facts(seat)}{cards}"
        )
    return lines


def _render_seats_view(timeline: Timeline, view: dict[str, Any]) -> list[str]:
    """The table of a game where every seat plays for itself and melds its own contract (May I?):
    the deal's contract, the stock and the whole (public) discard pile, the buy window, and each
    seat's melds, whether it is down and how many discards it has bought."""
    header = timeline.header
    to_move = view.get("to_move")
    status = (
        f"{seat_name(header, to_move)} to move, phase {view['phase']}"
        if to_move is not None
        else "the deal is over"
    )
    last = "the last card may be discarded" if view["discard_out"] else "the last card is melded"
    lines = [
        f"Deal {shown_number(view['deal'])} · contract {view['contract']} ({last}) · "
        f"dealer {seat_name(header, view['dealer'])} · {status}"
    ]
    turned = f" (pile turned over {count(view['turnovers'], 'time')})" if view["turnovers"] else ""
    pile = f"pile {count(len(view['pile']), 'card')}"
    if view.get("pile_top"):
        pile += f", top {view['pile_top']}"
    lines.append(f"Stock {count(view['stock_size'], 'card')}{turned} · {pile}")
    lines.append(f"  pile, bottom to top: {join_cards(view['pile'])}")
    if "stock" in view:
        lines.append(f"  stock, next card last: {join_cards(view['stock'])}")
    window = view["window"]
    if view["phase"] == "buy-offer":
        waiting = ", ".join(seat_name(header, s) for s in window["offer"])
        lines.append(f"Buy window: {view['pile_top']} is for sale; to be asked: {waiting}")
    elif view["phase"] == "buy-permission" and window["asker"] is not None:
        waiting = ", ".join(seat_name(header, s) for s in window["permission"])
        lines.append(
            f"Buy window: {seat_name(header, window['asker'])} asks to buy {view['pile_top']}; "
            f"to allow or deny: {waiting}"
        )
    for seat, melds in enumerate(view["melds"]):
        if not melds:
            continue
        lines.append(f"{seat_name(header, seat)}'s melds:")
        for number, meld in enumerate(melds):
            lines.append(f"  {seat}.{number}: {meld['label']:16} {' '.join(meld['cards'])}")
    limit = view["buy_limit"]

    def facts(seat: int) -> str:
        down = "down" if view["down"][seat] else "not down"
        return f" · {down} · {view['buys'][seat]} of {limit} buys"

    lines.extend(_seat_lines(timeline, view, facts))
    return lines
