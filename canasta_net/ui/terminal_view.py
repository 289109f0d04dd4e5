"""The table drawn as text for a person at a terminal, from the client's model of the table
(``TableModel.snapshot``, ``docs/ui-model.md``): the same content as the page, in lines.

Pure functions, tested as strings. Each function builds lines of spans (a text and a style);
:func:`paint` joins them, passing every span's text through ``safe_text`` (names, chats and
reasons came from other people) and adding colour codes only around already safe text, only
when asked to (a terminal that has colour: :func:`use_colour`).
"""

from __future__ import annotations

import os
from typing import Any

from ..log.records import shown_number
from ..safe_text import safe_text
from .table_model import TableModel, actions_by_verb

HELP = """\
Actions (cards as KH, 10S or TS, JK):
  draw                      draw from the stock
  take-pile QS QD           take the pile, melding its top card with these two cards
  take-pile                 take the pile, adding its top card to your team's meld of its rank
  meld KH KS 2C             lay a new meld
  add 0 KH                  add cards to your team's meld number 0 (numbers as shown)
  discard 7D                discard (your last card: going out)
  ask-go-out                ask your partner "may I go out?" (after drawing, before melding)
  answer yes | answer no    answer your partner (or just y / n when asked)
Other commands: hint (legal moves, numbered: type a number or 'hint N' to play one),
view (the table), say TEXT (chat), help, quit"""


MAY_I_HELP = """\
Actions (cards as KH, 10S or TS):
  draw                      draw from the stock (the discard may then be bought: "May I?")
  take-discard 9D           take the top discard
  meld 7C 7D 7S | 4C 5C 6C 7C   lay down this deal's contract, melds separated by |
  add 2.0 8C                lay off a card on seat 2's meld 0 (after your contract)
  discard 9D                discard
  may-i 9D                  ask to buy the discard (you also take a penalty card)
  pass | allow | deny 9D    decline to buy; let a buyer have it; refuse (and buy it yourself)
When asked to buy or to let someone buy, y / n answer (y buys, or allows).
Other commands: hint (legal moves, numbered: type a number or 'hint N' to play one),
view (the table), say TEXT (chat), help, quit"""

# A span of a line: its text (from anyone: escaped when painted) and a style ("" for none;
# several joined by "+").
Span = tuple[str, str]
Line = list[Span]

# Select Graphic Rendition codes of the styles.
STYLES = {
    "red": "31",  # hearts and diamonds
    "new": "1;4",  # a card just drawn: bold, underlined
    "turn": "1;33",  # the seat to move
    "alert": "1;31",  # FROZEN, a refusal
    "title": "1",
    "good": "1;32",  # a canasta
    "ask": "1;36",  # a question to answer
}

# How wide a hint's lines may grow before they wrap.
HINT_WIDTH = 96


def use_colour(stream: Any, environ: Any = None) -> bool:
    """Whether to colour what goes to ``stream``: a terminal, unless NO_COLOR is set (to
    anything but the empty string, https://no-color.org) or the terminal is "dumb"."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):
        return False


def paint(lines: list[Line], colour: bool = False) -> str:
    """The lines as text: every span escaped (``safe_text``); styled spans coloured if asked."""
    out = []
    for line in lines:
        parts = []
        for text, style in line:
            shown = safe_text(text)
            codes = ";".join(STYLES[s] for s in style.split("+") if s in STYLES) if colour else ""
            parts.append(f"\x1b[{codes}m{shown}\x1b[0m" if codes and shown else shown)
        out.append("".join(parts))
    return "\n".join(out)


def _plain(text: str) -> Line:
    return [(text, "")]


def card_span(card: str, new: bool = False) -> Span:
    """A card: red suits red, a card just drawn marked with ``*`` (and highlighted)."""
    styles = ["red"] if card[-1:] in ("H", "D") else []
    if new:
        styles.append("new")
    return (card + ("*" if new else ""), "+".join(styles))


def _cards(cards: list[str]) -> Line:
    if not cards:
        return [("-", "")]
    line: Line = []
    for i, card in enumerate(cards):
        if i:
            line.append((" ", ""))
        line.append(card_span(str(card)))
    return line


def _join(names: list[str]) -> str:
    return " & ".join(names) if names else "?"


def side_label(snap: dict[str, Any], index: int) -> str:
    """A side's name: its players' names (May I?: the seat's name)."""
    score_names = snap.get("score_names") or []
    if 0 <= index < len(score_names) and score_names[index]:
        return _join([str(n) for n in score_names[index]])
    seats = snap.get("seats") or []
    if snap.get("game") == "may-i":
        return str(seats[index]["name"]) if 0 <= index < len(seats) else f"seat {index}"
    for side in snap.get("sides") or []:
        if side.get("team") == index:
            return _join([str(n) for n in side.get("names") or []])
    sheet = snap.get("hand_end") or {}
    for side in sheet.get("sides") or []:
        if side.get("side") == index:
            return _join([str(n) for n in side.get("names") or []])
    names = [str(s["name"]) for s in seats if s.get("team") == index]
    return _join(names) if names else f"team {index}"


# --------------------------------------------------------------------------- the table
def render_table(snap: dict[str, Any], colour: bool = False) -> str:
    """The whole table as one seat sees it (a snapshot of ``TableModel``)."""
    return paint(table_lines(snap), colour)


def render_view(view: dict[str, Any]) -> str:
    """One seat's table from a bare view (the host's ``view`` message), without colour."""
    model = TableModel()
    state = view.get("state") or {}
    model.seat = state.get("seat") if isinstance(state.get("seat"), int) else None
    model.names = [str(s.get("name", "")) for s in view.get("seats") or [] if isinstance(s, dict)]
    watchers = view.get("watchers")
    if isinstance(watchers, list):
        model.watchers = [str(name) for name in watchers]
    model.show(view)
    return render_table(model.snapshot())


def title_line(snap: dict[str, Any]) -> Line:
    table = snap.get("table") or "table"
    game = "deal" if snap.get("game") == "may-i" else "hand"
    line: Line = [(f"== {table} == {game} {snap.get('hand_no', 1)}", "title")]
    if snap.get("variant"):
        line.append((f" ({snap['variant']})", ""))
    scores = snap.get("scores") or []
    if scores:
        shown = "  ".join(f"{side_label(snap, i)}: {s}" for i, s in enumerate(scores))
        line.append((f"   scores: {shown}", ""))
    if snap.get("target"):
        line.append((f"   target {snap['target']}", ""))
    elif snap.get("game") == "may-i":
        line.append(("   (lowest total wins)", ""))
    return line


def table_lines(snap: dict[str, Any]) -> list[Line]:
    lines = [title_line(snap)]
    if snap.get("watchers"):
        lines.append(_plain("  watching: " + ", ".join(str(n) for n in snap["watchers"])))
    state = snap.get("state")
    if not state:
        lines.append(_plain(f"({snap.get('table_phase') or 'waiting'})"))
        return lines
    if snap.get("game") == "may-i" or state.get("game") == "may-i":
        lines += _may_i_lines(snap, state)
    else:
        lines += _seat_lines(snap)
        for side in snap.get("sides") or []:
            lines += _side_lines(side)
    lines.append(_pile_line(snap))
    lines += _news_lines(snap)
    if snap.get("seat") is not None:  # a watcher's public table has no hand
        lines.append(hand_line(snap))
    ts = state.get("turn_state") or {}
    if ts.get("permission") is not None:
        lines.append(_plain(f"  your partner said: {'yes' if ts['permission'] else 'no'}"))
    refusal = snap.get("refusal")
    if refusal:
        lines.append([("  refused: ", "alert"), (f"{refusal['tried']}: {refusal['message']}", "")])
    return lines


def turn_update_lines(snap: dict[str, Any]) -> list[Line]:
    """Within the seat's own turn, after its own move, or at a question between turns: only
    what changed (its side's melds after its meld, the pile, the last move, what it drew, its
    hand), not the whole table again."""
    lines: list[Line] = []
    move = snap.get("last_move") or {}
    mine = move.get("seat") == snap.get("seat")
    if mine and str(move.get("action", "")).split(" ")[0] in ("meld", "add", "take-pile"):
        for side in snap.get("sides") or []:
            if side.get("yours"):
                lines += _side_lines(side)
        if snap.get("game") == "may-i":
            lines += _may_i_lines(snap, snap.get("state") or {})[1:]
    lines.append(_pile_line(snap))
    lines += _news_lines(snap)
    lines.append(hand_line(snap))
    return lines


def _seat_lines(snap: dict[str, Any]) -> list[Line]:
    lines = []
    state = snap.get("state") or {}
    reds = state.get("red_threes") or []
    for row in snap.get("seats") or []:
        marks = [m for m, on in (("bot", row["bot"]), ("you", row["you"])) if on]
        if not row["connected"]:
            marks.append("away")
        if row.get("left"):
            marks.append(f"left: {row['left']}")
        team = "" if row.get("team") is None else f" (team {row['team']})"
        who = f"{row['name']}{' [' + ', '.join(marks) + ']' if marks else ''}{team}"
        line: Line = [(f"  seat {row['seat']} ", ""), (who, "turn" if row["to_move"] else "")]
        cards = "?" if row.get("cards") is None else row["cards"]
        line.append((f": {cards} cards", ""))
        if row.get("dealer"):
            line.append((", dealer", ""))
        seat_reds = reds[row["seat"]] if row["seat"] < len(reds) else []
        if seat_reds:
            line.append((", red threes ", ""))
            line += _cards(seat_reds)
        if row["to_move"]:
            line.append(("  <- to move", "turn"))
        lines.append(line)
    return lines


def _side_lines(side: dict[str, Any]) -> list[Line]:
    canastas = side["canastas"]
    head: Line = [
        (f"  {_join(side['names'])}{' (yours)' if side['yours'] else ''}: ", "title"),
        (f"{side['meld_points']} in melds, {canastas} canasta{'s' if canastas != 1 else ''}", ""),
    ]
    if side["red_threes"]:
        head.append((", red threes ", ""))
        head += _cards(side["red_threes"])
    if not side["opened"]:
        head.append((f"; needs {side['needs']} to open", "alert" if side["yours"] else ""))
        if side["laid_this_turn"]:
            head.append((f" (laid this turn: {side['laid_this_turn']})", ""))
    lines = [head]
    for meld in side["melds"]:
        line: Line = [(f"    {meld['index']}: ", "")]
        line += _cards([str(c) for c in meld["cards"]])
        label = str(meld.get("label") or "")
        if " " in label:  # a run, wild cards, black threes: a rank's meld needs no name
            line.append((f"  ({label})", ""))
        line.append((f"   {meld['points']}", ""))
        if meld.get("bonus"):
            line.append((f" +{meld['bonus']}", ""))
        if meld.get("canasta"):
            line.append((f"  [{meld['canasta']} canasta]", "good"))
        lines.append(line)
    return lines


def _pile_line(snap: dict[str, Any]) -> Line:
    pile = snap.get("pile") or {}
    may_i = snap.get("game") == "may-i"
    size = pile.get("size") or 0
    line: Line = [("  discard: " if may_i else "  pile: ", "")]
    line.append(card_span(str(pile["top"])) if pile.get("top") else ("(empty)", ""))
    line.append((f" ({size} card{'s' if size != 1 else ''})", ""))
    if size and (pile.get("frozen_for_you") or pile.get("frozen")):  # an empty pile: no news
        line.append(("  FROZEN", "alert"))
        if pile.get("frozen_reasons"):
            line.append((": " + "; ".join(pile["frozen_reasons"]), ""))
    line.append((f"   stock: {pile.get('stock')}", ""))
    return line


# How a move reads in the table's "last move" line, by verb.
_MOVE_WORDS = {
    "draw": "drew from the stock",
    "meld": "melded",
    "discard": "discarded",
    "ask-go-out": "asked to go out",
    "answer": "answered",
    "take-discard": "took the discard",
    "pass": "passed",
    "allow": "allowed the buy",
    "deny": "refused the buy, taking",
}


def move_text(move: dict[str, Any], me: int | None) -> str:
    """A move in words: ``bot-2 took the pile (7 cards)``, ``you discarded 7D``."""
    who = "you" if move.get("seat") == me else str(move.get("name"))
    verb, _, rest = str(move.get("action", "")).partition(" ")
    if verb == "take-pile":
        cards = move.get("cards")
        counted = f" ({cards} cards)" if isinstance(cards, int) else ""
        return f"{who} took the pile{counted}" + (f", melding its top with {rest}" if rest else "")
    if verb == "add" and rest:
        meld, _, cards = rest.partition(" ")
        return f"{who} added {cards} to meld {meld}"
    if verb == "may-i":
        return f"{who} asked to buy {rest} (May I?)"
    words = _MOVE_WORDS.get(verb, verb)
    return f"{who} {words}{' ' + rest if rest else ''}"


def _news_lines(snap: dict[str, Any]) -> list[Line]:
    """The last move; what this seat drew, red threes laid (and replaced)."""
    lines = []
    move = snap.get("last_move")
    if move:
        lines.append([("  last move: ", ""), (move_text(move, snap.get("seat")), "")])
    drawn = [str(c) for c in snap.get("drawn") or []]
    laid = [str(c) for c in snap.get("red_threes_laid") or []]
    if drawn:
        mine = move if move is not None and move.get("seat") == snap.get("seat") else {}
        took = str(mine.get("action", "")).startswith(("take-", "deny"))
        line: Line = [("  new in your hand: " if took else "  you drew ", "")]
        for i, card in enumerate(drawn):
            line += [(" ", "")] if i else []
            line.append(card_span(card, new=True))
        lines.append(line)
    if laid:
        line = [(f"  red three{'s' if len(laid) > 1 else ''} laid: ", "")]
        line += _cards(laid)
        line.append((" (each replaced by a card from the stock)", ""))
        lines.append(line)
    return lines


def hand_line(snap: dict[str, Any]) -> Line:
    """The seat's hand grouped (Canasta: by rank, wild cards apart; May I?: by suit); the cards
    just drawn marked."""
    cards = snap.get("hand") or []
    groups: dict[str, list[dict[str, Any]]] = {}
    for card in cards:
        groups.setdefault(str(card.get("group")), []).append(card)
    line: Line = [(f"  your hand ({len(cards)}):", "")]
    for group in groups.values():
        line.append(("  ", ""))
        for i, card in enumerate(group):
            line += [(" ", "")] if i else []
            line.append(card_span(str(card["card"]), bool(card.get("new"))))
    if any(card.get("new") for card in cards):
        line.append(("   (* just drawn)", ""))
    return line


def _may_i_lines(snap: dict[str, Any], state: dict[str, Any]) -> list[Line]:
    """May I?: the contract, each seat's melds and buys."""
    lines = [
        _plain(
            f"  deal {shown_number(int(state.get('deal') or 0))}, contract: "
            f"{state.get('contract')}"
            f"{'' if state.get('discard_out', True) else ' (the last card must be melded)'}"
        )
    ]
    down = state.get("down") or []
    buys = state.get("buys") or []
    melds = state.get("melds") or []
    for row in snap.get("seats") or []:
        s = row["seat"]
        marks = [m for m, on in (("bot", row["bot"]), ("you", row["you"])) if on]
        if not row["connected"]:
            marks.append("away")
        who = f"{row['name']}{' [' + ', '.join(marks) + ']' if marks else ''}"
        line: Line = [(f"  seat {s} ", ""), (who, "turn" if row["to_move"] else "")]
        is_down = s < len(down) and down[s]
        bought = buys[s] if s < len(buys) else 0
        line.append(
            (
                f": {row.get('cards')} cards, {'down' if is_down else 'not down'}, "
                f"buys {bought}/{state.get('buy_limit')}",
                "",
            )
        )
        if row["to_move"]:
            line.append(("  <- to move", "turn"))
        lines.append(line)
        for i, meld in enumerate(melds[s] if s < len(melds) else []):
            lines.append([(f"    {s}.{i}: ", ""), *_cards([str(c) for c in meld["cards"]])])
    window = state.get("window") or {}
    if window.get("offer"):
        asker = window.get("asker")
        seats = snap.get("seats") or []
        who = ""
        if isinstance(asker, int) and 0 <= asker < len(seats):
            who = f" ({seats[asker]['name']} asks)"
        lines.append([('  the discard is up for sale: "May I?"', "ask"), (who, "")])
    return lines


# --------------------------------------------------------------------------- prompts
def prompt_lines(snap: dict[str, Any]) -> list[Line]:
    """What the seat is asked now, with the short answers it takes."""
    prompt = snap.get("prompt")
    if not prompt:
        return []
    kind, text = prompt["kind"], str(prompt["text"])
    legal = [str(a) for a in snap.get("legal") or []]
    if kind == "answer-go-out":
        return [[(text, "ask"), ("  y = answer yes, n = answer no >", "")]]
    if kind in ("may-i-buy", "may-i-permission"):
        yes, no = short_answers(legal)
        return [[(text, "ask"), (f"  y = {yes}, n = {no} >", "")]]
    return [
        [(text, "")],
        [
            ("Your move", "turn"),
            (f" ({len(legal)} legal; 'hint' numbers them, 'help' explains) >", ""),
        ],
    ]


def short_answers(legal: list[str]) -> tuple[str | None, str | None]:
    """The moves ``y`` and ``n`` stand for at a question (None where there is none): answer
    yes / no, buy (``may-i``) / pass, allow / deny."""
    verbs = actions_by_verb(legal)
    for yes_verb, no_verb in (("may-i", "pass"), ("allow", "deny")):
        if yes_verb in verbs or no_verb in verbs:
            yes = verbs.get(yes_verb, [None])[0]
            no = verbs.get(no_verb, [None])[0]
            return yes, no
    if "answer" in verbs:
        return ("answer yes" if "answer yes" in legal else None), (
            "answer no" if "answer no" in legal else None
        )
    return None, None


# --------------------------------------------------------------------------- hint
def numbered_options(legal: list[str]) -> list[str]:
    """The legal moves in the order ``hint`` numbers them (from 1): grouped by verb."""
    return [text for group in actions_by_verb(legal).values() for text in group]


def hint_lines(legal: list[str]) -> list[Line]:
    """The legal moves, numbered, one line per verb (wrapped)."""
    if not legal:
        return [_plain("(nothing to play now)")]
    lines: list[Line] = [
        _plain(f"{len(legal)} legal: type a number (or 'hint N') to play it, or the move itself")
    ]
    number = 0
    for verb, group in actions_by_verb(legal).items():
        head = f"  {verb + ':':<14}"
        line: Line = [(head, "title")]
        width = len(head)
        for text in group:
            number += 1
            rest = text[len(verb) :].strip() or verb
            item = f"{number}) {rest}"
            if width + len(item) > HINT_WIDTH and width > len(head):
                lines.append(line)
                line = [(" " * len(head), "")]
                width = len(head)
            gap = "   " if width > len(head) else ""
            line.append((gap + item, ""))
            width += len(gap) + len(item)
        lines.append(line)
    return lines


# --------------------------------------------------------------------------- between hands
def sheet_lines(snap: dict[str, Any]) -> list[Line]:
    """The score sheet of the hand just finished: a column per side, its totals and the match's."""
    sheet = snap.get("hand_end")
    if not sheet:
        return []
    may_i = snap.get("game") == "may-i"
    went = sheet.get("went_out_name")
    reason = str(sheet.get("reason"))
    how = f"{went} went out" if went is not None else _END_REASONS.get(reason, reason)
    game = "deal" if may_i else "hand"
    lines: list[Line] = [[(f"== {game} {sheet.get('shown_hand')} over: {how} ==", "title")]]
    sides = sheet.get("sides") or []
    if not sides:
        return lines
    heads = [_join([str(n) for n in side.get("names") or []])[:24] for side in sides]
    width = max(8, *(len(h) for h in heads))
    label_width = 24

    def row(label: str, values: list[str], style: str = "") -> Line:
        cells = "".join(f"  {v:>{width}}" for v in values)
        return [(f"  {label:<{label_width}}", style), (cells, style)]

    lines.append(row("", heads, "title"))
    parts = [{p["key"]: p["value"] for p in side.get("parts") or []} for side in sides]
    for key, label in _SHEET_ROWS:
        if may_i and key != "total":
            continue
        present = "natural_canastas" if key == "canastas" else key
        if not any(present in p for p in parts):
            continue
        if key == "canastas":
            values = [f"{p.get('natural_canastas', 0)}/{p.get('mixed_canastas', 0)}" for p in parts]
        elif key == "cards_in_hand":
            values = [f"-{p[key]}" if p.get(key) else "0" for p in parts]
        else:
            values = [str(p.get(key, "")) for p in parts]
        lines.append(
            row(
                "penalty points" if may_i and key == "total" else label,
                values,
                "title" if key == "total" else "",
            )
        )
    totals = sheet.get("totals") or []
    if len(totals) == len(sides):
        lines.append(row("match total", [str(t) for t in totals], "title"))
    if snap.get("target"):
        lines.append(_plain(f"  target: {snap['target']}"))
    elif may_i:
        lines.append(_plain("  the lowest total after the last deal wins"))
    return lines


# Why a hand ended, in words, when nobody went out.
_END_REASONS = {
    "stock-exhausted": "the stock ran out",
    "last-red-three": "the last card of the stock was a red three",
    "turn-limit": "the deal reached its turn limit",
}

# The sheet's rows: the score parts of a Canasta hand (``table_model.SCORE_PARTS``), with the
# counts of natural and mixed canastas on one row.
_SHEET_ROWS = (
    ("melds", "cards in melds"),
    ("canasta_bonus", "canasta bonuses"),
    ("canastas", "  canastas natural/mixed"),
    ("red_threes", "red threes"),
    ("going_out", "going out"),
    ("cards_in_hand", "cards left in hand"),
    ("total", "hand total"),
)


def render_sheet(snap: dict[str, Any], colour: bool = False) -> str:
    return paint(sheet_lines(snap), colour)


def match_end_lines(snap: dict[str, Any]) -> list[Line]:
    """The match's end: the winner and the totals, and where the log is."""
    end = snap.get("match_end")
    lines: list[Line] = []
    if end:
        totals = end.get("totals") if isinstance(end.get("totals"), list) else []
        shown = ", ".join(f"{side_label(snap, i)} {t}" for i, t in enumerate(totals))
        kind = end.get("kind")
        if kind == "match-end":
            winner = end.get("winner")
            said = f"{side_label(snap, winner)} won" if isinstance(winner, int) else "a draw"
            lines.append([("== match over: ", "title"), (said, "turn"), (" ==", "title")])
        elif kind == "forfeit":
            seat = end.get("seat")
            seats = snap.get("seats") or []
            who = seats[seat]["name"] if isinstance(seat, int) and seat < len(seats) else "a seat"
            lines.append([(f"== match over: {who} forfeits ({end.get('reason')}) ==", "title")])
        else:
            lines.append([(f"== match stopped ({end.get('reason')}) ==", "title")])
        if shown:
            lines.append(_plain(f"  totals: {shown}"))
    log = (snap.get("outcome") or {}).get("log")
    if log:
        lines.append(_plain(f"  log: {log}"))
    return lines


__all__ = [
    "HELP",
    "MAY_I_HELP",
    "card_span",
    "hand_line",
    "hint_lines",
    "match_end_lines",
    "move_text",
    "numbered_options",
    "paint",
    "prompt_lines",
    "render_sheet",
    "render_table",
    "render_view",
    "sheet_lines",
    "short_answers",
    "table_lines",
    "title_line",
    "turn_update_lines",
    "use_colour",
]
