"""The game as a readable hand history with a score sheet, built from the JSON export.

Working from ``export_json.build_export`` means the text holds nothing the JSON export for the same
perspective does not: a per-seat history names only that seat's hidden cards. The export's ``hand``,
``turn`` and ``action_turn`` are the log's and the engine's numbers (from 0); the history shows them
as people count, from 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

from canasta_net.games import MAY_I
from canasta_net.i18n import N_, Translator, current
from canasta_net.log import records as R
from canasta_net.log.records import shown_number
from canasta_net.safe_text import safe_text

# Protocol records that a hand history leaves out (the audit covers them).
_QUIET = frozenset({R.COMMIT, R.REVEAL, R.COMMITMENTS, R.SEEDS})

_SCORE_PARTS = (
    ("melds", N_("melds"), 1),
    ("canasta_bonus", N_("canastas"), 1),
    ("red_threes", N_("red threes"), 1),
    ("going_out", N_("going out"), 1),
    ("cards_in_hand", N_("in hand"), -1),
)


def render_text(export: dict[str, Any], tr: Translator | None = None) -> str:
    """The game as plain text, in the language of ``tr`` (by default the process's person's:
    ``--lang``; the export's own texts are in the language it was built in). Each line is safe
    for a terminal (``safe_text``): the names, chats and reasons in it came from the players,
    and a text file ends up in ``cat``."""
    tr = current() if tr is None else tr
    _ = tr.gettext
    lines: list[str] = []
    may_i = export["log"].get("game") == MAY_I
    lowest_wins = bool(export["log"].get("lowest_wins"))
    _preamble(export, lines, tr)
    notes = _annotations_by_record(export["annotations"])
    seat_names = {
        s["seat"]: _("seat {seat} ({name})").format(seat=s["seat"], name=s["name"])
        for s in export["seats"]
    }
    hands = {h["hand"]: h for h in export["hands"]}
    for step in export["steps"]:
        kind = step["kind"]
        if kind == R.DEAL:
            hand = hands.get(step["hand"], {})
            minimums = "/".join(str(m) for m in hand.get("minimums") or [])
            view = step["view"]
            what = " · " + _("minimums {minimums}").format(minimums=minimums) if minimums else ""
            if view is not None and view.get("contract"):
                what += " · " + _("contract {contract}").format(contract=view["contract"])
            number = shown_number(step["hand"])
            title = _("Deal {n}") if may_i else _("Hand {n}")
            dealer = _("dealer {seat}").format(seat=seat_names.get(hand.get("dealer"), "?"))
            lines.append("")
            lines.append(f"== {title.format(n=number)} · {dealer}{what} ==")
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
                    f"        {export['teams'][team]['name']}: "
                    f"{_score_parts(score, lowest_wins, tr)}"
                )
        else:
            acted = step["action_turn"]
            turn = ""
            if acted is not None:
                turn = _("turn {n}").format(n=f"{shown_number(acted):>3}") + " "
            lines.append(f"[{step['record']:>5}] {turn}{step['text']}")
        for note in notes.get(step["record"], []):
            lines.extend(_annotation_lines(note, tr))
    lines.append("")
    lines.extend(score_sheet(export, tr))
    if export["result"] is not None:
        lines.append("")
        lines.append(_("Result: {text}.").format(text=export["result"]["text"]))
    return "\n".join(safe_text(line) for line in lines) + "\n"


def _preamble(export: dict[str, Any], lines: list[str], tr: Translator) -> None:
    _ = tr.gettext
    log = export["log"]
    created = datetime.fromtimestamp(log["created"], UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines.append(
        _("canasta-net game: {variant}, table {table}, {records} records").format(
            variant=log["variant"], table=log["table"][:16], records=log["records"]
        )
    )
    if log.get("lowest_wins"):
        lines.append(
            _("Every seat plays for itself; penalty points add up, the lowest total wins.")
        )
    written = _("Written by {software} · created {created}").format(
        software=log["software"], created=created
    )
    if log["insecure"]:
        written += " · " + _("insecure test seeds (the deal proves nothing about fairness)")
    lines.append(written)
    seats = []
    for seat in export["seats"]:
        roles = [_("bot")] if seat["bot"] else []
        if seat["seat"] == log["host"]:
            roles.append(_("host"))
        seats.append(
            _("seat {seat} {name}").format(seat=seat["seat"], name=seat["name"])
            + (f" ({', '.join(roles)})" if roles else "")
        )
    lines.append(_("Seats: {seats}").format(seats=" · ".join(seats)))
    if not log.get("lowest_wins"):
        lines.append(
            _("Teams: {teams}").format(teams=" · ".join(t["name"] for t in export["teams"]))
        )
    perspective = export["perspective"]
    if perspective["kind"] == "seat":
        seen = _("seat {seat}'s view").format(seat=perspective["seat"])
    elif perspective["kind"] == "public":
        seen = _("the public view (a spectator's)")
    else:
        seen = _("every card face up")
    lines.append(_("Seen as: {view}").format(view=seen))
    verdict = export["validity"]["verdict"]
    lines.append(
        _("Validity: {verdict}. {summary}").format(
            verdict=_(VALIDITY_WORDS.get(verdict, verdict)), summary=export["validity"]["summary"]
        )
    )
    if export["withheld_annotations"]:
        withheld = export["withheld_annotations"]
        lines.append(
            tr.ngettext(
                "{n} annotations on a hand whose cards are not public yet are withheld from this "
                "view.",
                "{n} annotations on a hand whose cards are not public yet are withheld from this "
                "view.",
                withheld,
            ).format(n=withheld)
        )


# The export's verdicts for a reader (English: the codes themselves).
VALIDITY_WORDS: Final = {
    "valid": N_("valid"),
    "incomplete": N_("incomplete"),
    "invalid": N_("invalid"),
}


def _score_parts(score: dict[str, int], lowest_wins: bool, tr: Translator) -> str:
    if lowest_wins or not all(key in score for key, _, _ in _SCORE_PARTS):
        # May I?: the penalty points of the cards left in hand
        n = score["total"]
        return tr.ngettext("{n} penalty point", "{n} penalty points", n).format(n=n)
    parts = [f"{tr.gettext(label)} {sign * score[key]:+d}" for key, label, sign in _SCORE_PARTS]
    return ", ".join(parts) + f" = {score['total']:+d}"


def score_sheet(export: dict[str, Any], tr: Translator | None = None) -> list[str]:
    """One row per finished hand: each side's score for the hand and its running total."""
    tr = current() if tr is None else tr
    _ = tr.gettext
    teams = export["teams"]
    lowest_wins = bool(export["log"].get("lowest_wins"))
    may_i = export["log"].get("game") == MAY_I
    noun = _("deal") if may_i else _("hand")
    width = max(20, *(len(t["name"]) for t in teams))
    title = (
        _("Score sheet (penalty points: the lowest total wins)")
        if lowest_wins
        else _("Score sheet")
    )
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


def _annotation_lines(note: dict[str, Any], tr: Translator) -> list[str]:
    _ = tr.gettext
    glyph = f"{note['glyph']} " if note["glyph"] else ""
    lines = [f"        {{{glyph}{note['author']}: {note['comment']}}}".replace(": }", "}")]
    if note["cards"]:
        lines.append("          " + _("cards: {cards}").format(cards=" ".join(note["cards"])))
    if note["line"] is not None:
        line = "; ".join(note["line"]["actions"])
        lines.append("          " + _("what-if: {line}").format(line=line))
        lines.append(f"            -> {note['line']['outcome'].get('summary', '')}")
    return lines
