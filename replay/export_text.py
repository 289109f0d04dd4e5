"""The game as a readable hand history with a score sheet, built from the JSON export.

Working from ``export_json.build_export`` means the text holds nothing the JSON export for the same
perspective does not: a per-seat history names only that seat's hidden cards. The export's ``hand``,
``turn`` and ``action_turn`` are the log's and the engine's numbers (from 0); the history shows them
as people count, from 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from canasta_net.log import records as R
from canasta_net.log.records import shown_number
from canasta_net.safe_text import safe_text

from .wording import count, hand_noun

# Protocol records that a hand history leaves out (the audit covers them).
_QUIET = frozenset({R.COMMIT, R.REVEAL, R.COMMITMENTS, R.SEEDS})

_SCORE_PARTS = (
    ("melds", "melds", 1),
    ("canasta_bonus", "canastas", 1),
    ("red_threes", "red threes", 1),
    ("going_out", "going out", 1),
    ("cards_in_hand", "in hand", -1),
)


def render_text(export: dict[str, Any]) -> str:
    """The game as plain text; each line is safe for a terminal (``safe_text``): the names,
    chats and reasons in it came from the players, and a text file ends up in ``cat``."""
    lines: list[str] = []
    noun = hand_noun(str(export["log"].get("game")))
    lowest_wins = bool(export["log"].get("lowest_wins"))
    _preamble(export, lines)
    notes = _annotations_by_record(export["annotations"])
    seat_names = {s["seat"]: f"seat {s['seat']} ({s['name']})" for s in export["seats"]}
    hands = {h["hand"]: h for h in export["hands"]}
    for step in export["steps"]:
        kind = step["kind"]
        if kind == R.DEAL:
            hand = hands.get(step["hand"], {})
            minimums = "/".join(str(m) for m in hand.get("minimums") or [])
            view = step["view"]
            what = f" · minimums {minimums}" if minimums else ""
            if view is not None and view.get("contract"):
                what += f" · contract {view['contract']}"
            lines.append("")
            lines.append(
                f"== {noun.capitalize()} {shown_number(step['hand'])} · dealer "
                f"{seat_names.get(hand.get('dealer'), '?')}{what} =="
            )
            lines.append(f"[{step['record']:>5}] {step['text']}")
            if view is not None and "hands" in view:
                for seat, cards in enumerate(view["hands"]):
                    lines.append(f"        {seat_names[seat]}: {' '.join(cards)}")
        elif kind in _QUIET or step["record"] == 0:
            pass
        elif kind == R.HAND_END:
            lines.append(f"[{step['record']:>5}] {step['text']}")
            hand = hands.get(step["hand"], {})
            for team, score in enumerate(hand.get("scores") or []):
                lines.append(
                    f"        {export['teams'][team]['name']}: {_score_parts(score, lowest_wins)}"
                )
        else:
            acted = step["action_turn"]
            turn = f"turn {shown_number(acted):>3} " if acted is not None else ""
            lines.append(f"[{step['record']:>5}] {turn}{step['text']}")
        for note in notes.get(step["record"], []):
            lines.extend(_annotation_lines(note))
    lines.append("")
    lines.extend(score_sheet(export))
    if export["result"] is not None:
        lines.append("")
        lines.append(f"Result: {export['result']['text']}.")
    return "\n".join(safe_text(line) for line in lines) + "\n"


def _preamble(export: dict[str, Any], lines: list[str]) -> None:
    log = export["log"]
    created = datetime.fromtimestamp(log["created"], UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines.append(
        f"canasta-net game: {log['variant']}, table {log['table'][:16]}, {log['records']} records"
    )
    if log.get("lowest_wins"):
        lines.append("Every seat plays for itself; penalty points add up, the lowest total wins.")
    lines.append(
        f"Written by {log['software']} · created {created}"
        + (
            " · insecure test seeds (the deal proves nothing about fairness)"
            if log["insecure"]
            else ""
        )
    )
    seats = []
    for seat in export["seats"]:
        roles = ["bot"] if seat["bot"] else []
        if seat["seat"] == log["host"]:
            roles.append("host")
        seats.append(
            f"seat {seat['seat']} {seat['name']}" + (f" ({', '.join(roles)})" if roles else "")
        )
    lines.append("Seats: " + " · ".join(seats))
    if not log.get("lowest_wins"):
        lines.append("Teams: " + " · ".join(t["name"] for t in export["teams"]))
    perspective = export["perspective"]
    seen = {
        "seat": f"seat {perspective['seat']}'s view",
        "public": "the public view (a spectator's)",
        "all": "every card face up",
    }[perspective["kind"]]
    lines.append(f"Seen as: {seen}")
    lines.append(f"Validity: {export['validity']['verdict']}. {export['validity']['summary']}")
    if export["withheld_annotations"]:
        lines.append(
            f"{export['withheld_annotations']} annotations on a hand whose cards are not public "
            "yet are withheld from this view."
        )


def _score_parts(score: dict[str, int], lowest_wins: bool = False) -> str:
    if lowest_wins or not all(key in score for key, _, _ in _SCORE_PARTS):
        # May I?: the penalty points of the cards left in hand
        return count(score["total"], "penalty point")
    parts = [f"{label} {sign * score[key]:+d}" for key, label, sign in _SCORE_PARTS]
    return ", ".join(parts) + f" = {score['total']:+d}"


def score_sheet(export: dict[str, Any]) -> list[str]:
    """One row per finished hand: each side's score for the hand and its running total."""
    teams = export["teams"]
    lowest_wins = bool(export["log"].get("lowest_wins"))
    noun = hand_noun(str(export["log"].get("game")))
    width = max(20, *(len(t["name"]) for t in teams))
    title = "Score sheet (penalty points: the lowest total wins)" if lowest_wins else "Score sheet"
    lines = [title, f"{noun:>5} | " + " | ".join(f"{t['name']:>{width}}" for t in teams)]
    lines.append("------+-" + "-+-".join("-" * width for _ in teams))
    sign = "" if lowest_wins else "+"
    for hand in export["hands"]:
        if not hand["scores"]:
            continue
        cells = [
            f"{score['total']:>{sign}7d} = {total:>{width - 10}d}"
            for score, total in zip(hand["scores"], hand["totals"], strict=True)
        ]
        lines.append(f"{shown_number(hand['hand']):>5} | " + " | ".join(cells))
    return lines


def _annotations_by_record(
    annotations: Sequence[dict[str, Any]],
) -> dict[int, list[dict[str, Any]]]:
    by_record: dict[int, list[dict[str, Any]]] = {}
    for annotation in annotations:
        by_record.setdefault(annotation["record"], []).append(annotation)
    return by_record


def _annotation_lines(note: dict[str, Any]) -> list[str]:
    glyph = f"{note['glyph']} " if note["glyph"] else ""
    lines = [f"        {{{glyph}{note['author']}: {note['comment']}}}".replace(": }", "}")]
    if note["cards"]:
        lines.append(f"          cards: {' '.join(note['cards'])}")
    if note["line"] is not None:
        lines.append(f"          what-if: {'; '.join(note['line']['actions'])}")
        lines.append(f"            -> {note['line']['outcome'].get('summary', '')}")
    return lines
