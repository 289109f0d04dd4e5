"""The table at one step of a game, as plain text for a terminal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .annotations import Annotation, describe_outcome
from .describe import describe_step
from .timeline import Step, Timeline
from .views import Perspective, table_view
from .wording import count, join_cards, seat_name, team_name, team_seats


def render_step(
    timeline: Timeline,
    step: Step,
    perspective: Perspective,
    annotations: Sequence[Annotation] = (),
) -> str:
    """The header line, what the record did, the table after it, and its annotations."""
    header = timeline.header
    where = [f"Record {step.record} of {timeline.last_record} ({step.kind})"]
    if step.hand is not None:
        where.append(f"hand {step.hand}" + (f", turn {step.turn}" if step.turn is not None else ""))
    where.append(perspective.describe(header))
    lines = [" · ".join(where), describe_step(timeline, step, perspective), ""]
    if step.state is not None:
        lines.extend(render_view(timeline, table_view(step.state, perspective)))
    elif step.pending:
        lines.append(
            "This copy of the log cannot show this hand: it is replayed once the hand's seeds "
            "are published, and this log stops before that."
        )
    else:
        lines.append("No hand is on the table.")
    rules = timeline.rules
    lines.append(
        "Totals: " + " · ".join(f"{team_name(rules, t)} {s}" for t, s in enumerate(step.totals))
    )
    mine = [a for a in annotations if a.record == step.record]
    if mine:
        lines.append("")
        lines.append("Annotations:")
        for annotation in mine:
            lines.extend(render_annotation(annotation))
    return "\n".join(lines)


def render_annotation(annotation: Annotation) -> list[str]:
    glyph = f"{annotation.glyph} " if annotation.glyph else ""
    lines = [f"  [{annotation.id}] {glyph}{annotation.author}: {annotation.comment}".rstrip()]
    if annotation.cards:
        lines.append(f"      cards: {' '.join(annotation.cards)}")
    if annotation.line is not None:
        lines.append(f"      what-if: {'; '.join(annotation.line.actions)}")
        lines.append(f"        -> {describe_outcome(annotation.line.outcome)}")
    return lines


def render_view(timeline: Timeline, view: dict[str, Any]) -> list[str]:
    """The table of a view dictionary (see ``views.table_view``) as lines of text."""
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
    lines.append("Seats:")
    for seat, size in enumerate(view["hand_sizes"]):
        marker = ">" if seat == to_move else " "
        cards = ""
        if "hands" in view:
            cards = f": {join_cards(view['hands'][seat])}"
        elif view.get("seat") == seat:
            cards = f": {join_cards(view['hand'])}  (you)"
        lines.append(f"{marker} {seat_name(header, seat)}: {count(size, 'card')}{cards}")
    return lines
