"""The table drawn as text for a person at a terminal, from the client's model of the table
(``TableModel.snapshot``, ``docs/ui-model.md``): the same content as the page, in lines.

Pure functions, tested as strings. Each function builds lines of spans (a text and a style);
:func:`paint` joins them, passing every span's text through ``safe_text`` (names, chats and
reasons came from other people) and adding colour codes only around already safe text, only
when asked to (a terminal that has colour: :func:`use_colour`).
"""

from __future__ import annotations

import os
import re
from typing import Any

from ..cards import action_label, card_label
from ..i18n import LANGUAGES, N_, Translator, translator
from ..log.records import shown_number
from ..safe_text import safe_text
from ..variant_names import variant_name
from .table_model import TableModel, actions_by_verb, contract_words

HELP = N_("""\
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
view (the table), say TEXT (chat), help, quit""")


MAY_I_HELP = N_("""\
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
view (the table), say TEXT (chat), help, quit""")

SUGGEST_NOTE = N_(
    "suggest: the move the searching bot would play for you here, and why (it thinks about "
    "half a second, from what you see only)"
)

CARD_NOTE = N_("Cards may also be written as your language writes them: {example}.")


def help_text(lang: str = "en", may_i: bool = False) -> str:
    """The terminal client's help in ``lang``; the moves stay in their canonical words."""
    tr = translator(lang)
    text = tr.gettext(MAY_I_HELP if may_i else HELP) + "\n" + tr.gettext(SUGGEST_NOTE)
    if lang != "en":
        example = " ".join(card_label(c, lang) for c in ("KH", "QS", "AD", "JC", "10S", "JK"))
        text += "\n" + tr.gettext(CARD_NOTE).format(example=example)
    return text


def snapshot_translator(snap: dict[str, Any]) -> Translator:
    """The translator of the reader a snapshot was made for (its ``lang``)."""
    lang = str(snap.get("lang") or "en")
    return translator(lang if lang in LANGUAGES else "en")


def _lang(snap: dict[str, Any]) -> str:
    return snapshot_translator(snap).lang


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


def card_span(card: str, new: bool = False, lang: str = "en") -> Span:
    """A card (as players of ``lang`` write it): red suits red, a card just drawn marked with
    ``*`` (and highlighted)."""
    styles = ["red"] if card[-1:] in ("H", "D") else []
    if new:
        styles.append("new")
    return (card_label(card, lang) + ("*" if new else ""), "+".join(styles))


def _cards(cards: list[str], lang: str = "en") -> Line:
    if not cards:
        return [("-", "")]
    line: Line = []
    for i, card in enumerate(cards):
        if i:
            line.append((" ", ""))
        line.append(card_span(str(card), lang=lang))
    return line


def _join(names: list[str]) -> str:
    return " & ".join(names) if names else "?"


def side_label(snap: dict[str, Any], index: int) -> str:
    """A side's name: its players' names (May I?: the seat's name)."""
    score_names = snap.get("score_names") or []
    if 0 <= index < len(score_names) and score_names[index]:
        return _join([str(n) for n in score_names[index]])
    seats = snap.get("seats") or []
    _ = snapshot_translator(snap).gettext
    if snap.get("game") == "may-i":
        if 0 <= index < len(seats):
            return str(seats[index]["name"])
        return _("seat {seat}").format(seat=index)
    for side in snap.get("sides") or []:
        if side.get("team") == index:
            return _join([str(n) for n in side.get("names") or []])
    sheet = snap.get("hand_end") or {}
    for side in sheet.get("sides") or []:
        if side.get("side") == index:
            return _join([str(n) for n in side.get("names") or []])
    names = [str(s["name"]) for s in seats if s.get("team") == index]
    return _join(names) if names else _("team {team}").format(team=index)


# --------------------------------------------------------------------------- the table
def render_table(snap: dict[str, Any], colour: bool = False) -> str:
    """The whole table as one seat sees it (a snapshot of ``TableModel``)."""
    return paint(table_lines(snap), colour)


def render_view(view: dict[str, Any], lang: str = "en") -> str:
    """One seat's table from a bare view (the host's ``view`` message), without colour."""
    model = TableModel(tr=translator(lang))
    state = view.get("state") or {}
    model.seat = state.get("seat") if isinstance(state.get("seat"), int) else None
    model.names = [str(s.get("name", "")) for s in view.get("seats") or [] if isinstance(s, dict)]
    watchers = view.get("watchers")
    if isinstance(watchers, list):
        model.watchers = [str(name) for name in watchers]
    model.show(view)
    return render_table(model.snapshot())


def title_line(snap: dict[str, Any]) -> Line:
    _ = snapshot_translator(snap).gettext
    table = snap.get("table") or _("table")
    number = snap.get("hand_no", 1)
    if snap.get("game") == "may-i":
        game = _("deal {number}").format(number=number)
    else:
        game = _("hand {number}").format(number=number)
    line: Line = [(f"== {table} == {game}", "title")]
    if snap.get("variant"):
        line.append((f" ({variant_title(str(snap['variant']), _lang(snap))})", ""))
    scores = snap.get("scores") or []
    if scores:
        shown = "  ".join(f"{side_label(snap, i)}: {s}" for i, s in enumerate(scores))
        line.append(("   " + _("scores: {scores}").format(scores=shown), ""))
    if snap.get("target"):
        line.append(("   " + _("target {target}").format(target=snap["target"]), ""))
    elif snap.get("game") == "may-i":
        line.append(("   " + _("(lowest total wins)"), ""))
    return line


def variant_title(name: str, lang: str) -> str:
    """A variant's name as its players call it (``Можно?`` for May I? in Russian); the preset's
    own name in English."""
    return variant_name(name, lang)


def table_lines(snap: dict[str, Any]) -> list[Line]:
    _ = snapshot_translator(snap).gettext
    lines = [title_line(snap)]
    if snap.get("watchers"):
        watching = ", ".join(str(n) for n in snap["watchers"])
        lines.append(_plain("  " + _("watching: {names}").format(names=watching)))
    state = snap.get("state")
    if not state:
        lines.append(_plain(f"({_phase_word(snap.get('table_phase'), _)})"))
        return lines
    if snap.get("game") == "may-i" or state.get("game") == "may-i":
        lines += _may_i_lines(snap, state)
    else:
        lines += _seat_lines(snap)
        for side in snap.get("sides") or []:
            lines += _side_lines(side, snap)
    lines.append(_pile_line(snap))
    lines += _news_lines(snap)
    if snap.get("seat") is not None:  # a watcher's public table has no hand
        lines.append(hand_line(snap))
    ts = state.get("turn_state") or {}
    if ts.get("permission") is not None:
        said = _("your partner said: yes") if ts["permission"] else _("your partner said: no")
        lines.append(_plain("  " + said))
    refusal = snap.get("refusal")
    if refusal:
        tried = action_label(str(refusal["tried"]), _lang(snap))
        lines.append([("  " + _("refused: "), "alert"), (f"{tried}: {refusal['message']}", "")])
    return lines


def _phase_word(phase: Any, _: Any) -> str:
    words = {
        "committing": _("committing"),
        "revealing": _("revealing"),
        "playing": _("playing"),
        "checkpointing": _("checkpointing"),
        "over": _("over"),
    }
    return str(words.get(phase, _("waiting")))


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
                lines += _side_lines(side, snap)
        if snap.get("game") == "may-i":
            lines += _may_i_lines(snap, snap.get("state") or {})[1:]
    lines.append(_pile_line(snap))
    lines += _news_lines(snap)
    lines.append(hand_line(snap))
    return lines


def _marks(row: dict[str, Any], _: Any) -> list[str]:
    marks = [m for m, on in ((_("bot"), row["bot"]), (_("you"), row["you"])) if on]
    if not row["connected"]:
        marks.append(_("away"))
    return marks


def _seat_lines(snap: dict[str, Any]) -> list[Line]:
    tr = snapshot_translator(snap)
    _ = tr.gettext
    lines = []
    state = snap.get("state") or {}
    reds = state.get("red_threes") or []
    for row in snap.get("seats") or []:
        marks = _marks(row, _)
        if row.get("left"):
            marks.append(_("left: {reason}").format(reason=row["left"]))
        team = "" if row.get("team") is None else " " + _("(team {team})").format(team=row["team"])
        who = f"{row['name']}{' [' + ', '.join(marks) + ']' if marks else ''}{team}"
        seat = _("seat {seat}").format(seat=row["seat"])
        line: Line = [(f"  {seat} ", ""), (who, "turn" if row["to_move"] else "")]
        if row.get("cards") is None:
            line.append((": " + _("? cards"), ""))
        else:
            count = int(row["cards"])
            line.append((": " + tr.ngettext("{n} card", "{n} cards", count).format(n=count), ""))
        if row.get("dealer"):
            line.append((", " + _("dealer"), ""))
        seat_reds = reds[row["seat"]] if row["seat"] < len(reds) else []
        if seat_reds:
            line.append((", " + _("red threes") + " ", ""))
            line += _cards(seat_reds, tr.lang)
        if row["to_move"]:
            line.append(("  " + _("<- to move"), "turn"))
        lines.append(line)
    return lines


def _side_lines(side: dict[str, Any], snap: dict[str, Any] | None = None) -> list[Line]:
    tr = snapshot_translator(snap or {})
    _ = tr.gettext
    canastas = int(side["canastas"])
    yours = " " + _("(yours)") if side["yours"] else ""
    in_melds = _("{points} in melds").format(points=side["meld_points"])
    counted = tr.ngettext("{n} canasta", "{n} canastas", canastas).format(n=canastas)
    head: Line = [(f"  {_join(side['names'])}{yours}: ", "title"), (f"{in_melds}, {counted}", "")]
    if side["red_threes"]:
        head.append((", " + _("red threes") + " ", ""))
        head += _cards(side["red_threes"], tr.lang)
    if not side["opened"]:
        needs = "; " + _("needs {points} to open").format(points=side["needs"])
        head.append((needs, "alert" if side["yours"] else ""))
        if side["laid_this_turn"]:
            laid = _("(laid this turn: {points})").format(points=side["laid_this_turn"])
            head.append((" " + laid, ""))
    lines = [head]
    canasta_words = {"natural": _("natural canasta"), "mixed": _("mixed canasta")}
    for meld in side["melds"]:
        line: Line = [(f"    {meld['index']}: ", "")]
        line += _cards([str(c) for c in meld["cards"]], tr.lang)
        label = str(meld.get("label") or "")
        if " " in label:  # a run, wild cards, black threes: a rank's meld needs no name
            line.append((f"  ({_meld_label(label, tr)})", ""))
        line.append((f"   {meld['points']}", ""))
        if meld.get("bonus"):
            line.append((f" +{meld['bonus']}", ""))
        if meld.get("canasta"):
            kind = str(meld["canasta"])
            line.append((f"  [{canasta_words.get(kind, kind)}]", "good"))
        lines.append(line)
    return lines


_MELD_LABELS = {"3s (black)": N_("3s (black)"), "wild cards": N_("wild cards")}


def _meld_label(label: str, tr: Translator) -> str:
    """The engine's name of a meld that is not one rank's (``5-9H run``, ``wild cards``) in the
    reader's language, its cards as the reader writes them; an unknown label as it came."""
    if label in _MELD_LABELS:
        return tr.gettext(_MELD_LABELS[label])
    run = re.fullmatch(r"(\w+)-(\w+)([CDHS]) run", label)
    if run is None:
        return label
    low, high, suit = run.groups()
    shown = f"{card_label(low + suit, tr.lang)}-{card_label(high + suit, tr.lang)}"
    return tr.gettext("{cards} run").format(cards=shown)


def _pile_line(snap: dict[str, Any]) -> Line:
    tr = snapshot_translator(snap)
    _ = tr.gettext
    pile = snap.get("pile") or {}
    may_i = snap.get("game") == "may-i"
    size = int(pile.get("size") or 0)
    line: Line = [("  " + (_("discard:") if may_i else _("pile:")) + " ", "")]
    top = pile.get("top")
    line.append(card_span(str(top), lang=tr.lang) if top else (_("(empty)"), ""))
    line.append((" (" + tr.ngettext("{n} card", "{n} cards", size).format(n=size) + ")", ""))
    if size and (pile.get("frozen_for_you") or pile.get("frozen")):  # an empty pile: no news
        line.append(("  " + _("FROZEN"), "alert"))
        if pile.get("frozen_reasons"):
            line.append((": " + "; ".join(pile["frozen_reasons"]), ""))
    line.append(("   " + _("stock: {size}").format(size=pile.get("stock")), ""))
    return line


# How a move reads in the table's "last move" line, by verb: by another seat, by this one
# (whole sentences, so that each language can say them its own way).
_MOVE_WORDS = {
    "draw": (N_("{who} drew from the stock"), N_("you drew from the stock")),
    "meld": (N_("{who} melded {cards}"), N_("you melded {cards}")),
    "discard": (N_("{who} discarded {cards}"), N_("you discarded {cards}")),
    "ask-go-out": (N_("{who} asked to go out"), N_("you asked to go out")),
    "answer": (N_("{who} answered {cards}"), N_("you answered {cards}")),
    "take-discard": (N_("{who} took the discard {cards}"), N_("you took the discard {cards}")),
    "pass": (N_("{who} passed"), N_("you passed")),
    "allow": (N_("{who} allowed the buy"), N_("you allowed the buy")),
    "deny": (
        N_("{who} refused the buy, taking {cards}"),
        N_("you refused the buy, taking {cards}"),
    ),
    "may-i": (N_("{who} asked to buy {cards} (May I?)"), N_("you asked to buy {cards} (May I?)")),
}


def move_text(move: dict[str, Any], me: int | None, lang: str = "en") -> str:
    """A move in words: ``bot-2 took the pile (7 cards)``, ``you discarded 7D``."""
    tr = translator(lang)
    _ = tr.gettext
    mine = move.get("seat") == me
    who = str(move.get("name"))
    verb, _sep, rest = str(move.get("action", "")).partition(" ")
    if verb == "answer":
        rest = {"yes": _("yes"), "no": _("no")}.get(rest, rest)
    else:
        rest = action_label(f"x {rest}", lang)[2:] if rest else ""
    if verb == "take-pile":
        cards = move.get("cards")
        if isinstance(cards, int):
            took = tr.ngettext("{n} card", "{n} cards", cards).format(n=cards)
            text = _("you took the pile ({cards})") if mine else _("{who} took the pile ({cards})")
        else:
            took = ""
            text = _("you took the pile") if mine else _("{who} took the pile")
        text = text.format(who=who, cards=took)
        if rest:
            text += ", " + _("melding its top with {cards}").format(cards=rest)
        return text
    if verb == "add" and rest:
        meld, _sep, cards = rest.partition(" ")
        text = (
            _("you added {cards} to meld {meld}")
            if mine
            else _("{who} added {cards} to meld {meld}")
        )
        return text.format(who=who, cards=cards, meld=meld)
    if verb in _MOVE_WORDS:
        other, own = _MOVE_WORDS[verb]
        text = _(own if mine else other).format(who=who, cards=rest)
        return text.rstrip()
    return f"{_('you') if mine else who} {verb}{' ' + rest if rest else ''}"


def _news_lines(snap: dict[str, Any]) -> list[Line]:
    """The last move; what this seat drew, red threes laid (and replaced)."""
    tr = snapshot_translator(snap)
    _ = tr.gettext
    lines = []
    move = snap.get("last_move")
    if move:
        said = move_text(move, snap.get("seat"), tr.lang)
        lines.append([("  " + _("last move:") + " ", ""), (said, "")])
    drawn = [str(c) for c in snap.get("drawn") or []]
    laid = [str(c) for c in snap.get("red_threes_laid") or []]
    if drawn:
        mine = move if move is not None and move.get("seat") == snap.get("seat") else {}
        took = str(mine.get("action", "")).startswith(("take-", "deny"))
        line: Line = [("  " + (_("new in your hand:") if took else _("you drew")) + " ", "")]
        for i, card in enumerate(drawn):
            line += [(" ", "")] if i else []
            line.append(card_span(card, new=True, lang=tr.lang))
        lines.append(line)
    if laid:
        head = tr.ngettext("red three laid:", "red threes laid:", len(laid))
        line = [(f"  {head} ", "")]
        line += _cards(laid, tr.lang)
        line.append((" " + _("(each replaced by a card from the stock)"), ""))
        lines.append(line)
    # cards that came outside this seat's turn (a May I? buy; red threes at the deal), named
    # until its next move: the page's sentences
    received = [str(c) for c in snap.get("received") or []]
    if received:
        lines.append(_sentence_with_cards(_("You received {cards}."), received, tr.lang))
    reds = [str(c) for c in snap.get("deal_red_threes") or []]
    if reds:
        text = _("Your red threes from the deal, laid and replaced from the stock: {cards}.")
        lines.append(_sentence_with_cards(text, reds, tr.lang))
    return lines


def _sentence_with_cards(text: str, cards: list[str], lang: str) -> Line:
    """A translated sentence whose ``{cards}`` are drawn as cards."""
    before, _, after = text.partition("{cards}")
    return [("  " + before, ""), *_cards(cards, lang), (after, "")]


def hand_line(snap: dict[str, Any]) -> Line:
    """The seat's hand grouped (Canasta: by rank, wild cards apart; May I?: by suit); the cards
    just drawn marked."""
    _ = snapshot_translator(snap).gettext
    lang = _lang(snap)
    cards = snap.get("hand") or []
    groups: dict[str, list[dict[str, Any]]] = {}
    for card in cards:
        groups.setdefault(str(card.get("group")), []).append(card)
    line: Line = [("  " + _("your hand ({n}):").format(n=len(cards)), "")]
    for group in groups.values():
        line.append(("  ", ""))
        for i, card in enumerate(group):
            line += [(" ", "")] if i else []
            line.append(card_span(str(card["card"]), bool(card.get("new")), lang))
    if any(card.get("new") for card in cards):
        line.append(("   " + _("(* just drawn)"), ""))
    return line


def _may_i_lines(snap: dict[str, Any], state: dict[str, Any]) -> list[Line]:
    """May I?: the contract, each seat's melds and buys."""
    tr = snapshot_translator(snap)
    _ = tr.gettext
    deal = _("deal {number}, contract: {contract}").format(
        number=shown_number(int(state.get("deal") or 0)),
        contract=contract_words(str(state.get("contract")), tr),
    )
    if not state.get("discard_out", True):
        deal += " " + _("(the last card must be melded)")
    lines = [_plain("  " + deal)]
    down = state.get("down") or []
    buys = state.get("buys") or []
    melds = state.get("melds") or []
    for row in snap.get("seats") or []:
        s = row["seat"]
        marks = _marks(row, _)
        who = f"{row['name']}{' [' + ', '.join(marks) + ']' if marks else ''}"
        seat = _("seat {seat}").format(seat=s)
        line: Line = [(f"  {seat} ", ""), (who, "turn" if row["to_move"] else "")]
        is_down = s < len(down) and down[s]
        bought = buys[s] if s < len(buys) else 0
        count = int(row.get("cards") or 0)
        counted = tr.ngettext("{n} card", "{n} cards", count).format(n=count)
        line.append(
            (
                f": {counted}, {_('down') if is_down else _('not down')}, "
                + _("buys {bought}/{limit}").format(bought=bought, limit=state.get("buy_limit")),
                "",
            )
        )
        if row["to_move"]:
            line.append(("  " + _("<- to move"), "turn"))
        lines.append(line)
        for i, meld in enumerate(melds[s] if s < len(melds) else []):
            cards = _cards([str(c) for c in meld["cards"]], tr.lang)
            lines.append([(f"    {s}.{i}: ", ""), *cards])
    window = state.get("window") or {}
    if window.get("offer"):
        asker = window.get("asker")
        seats = snap.get("seats") or []
        who = ""
        if isinstance(asker, int) and 0 <= asker < len(seats):
            who = " (" + _("{name} asks").format(name=seats[asker]["name"]) + ")"
        lines.append([("  " + _('the discard is up for sale: "May I?"'), "ask"), (who, "")])
    return lines


# --------------------------------------------------------------------------- prompts
def prompt_lines(snap: dict[str, Any]) -> list[Line]:
    """What the seat is asked now, with the short answers it takes."""
    prompt = snap.get("prompt")
    if not prompt:
        return []
    _ = snapshot_translator(snap).gettext
    lang = _lang(snap)
    kind, text = prompt["kind"], str(prompt["text"])
    legal = [str(a) for a in snap.get("legal") or []]
    if kind == "answer-go-out":
        return [[(text, "ask"), ("  " + _("y = answer yes, n = answer no >"), "")]]
    if kind in ("may-i-buy", "may-i-permission"):
        yes, no = short_answers(legal)
        shown = [action_label(a, lang) if a else _("nothing") for a in (yes, no)]
        return [
            [
                (text, "ask"),
                ("  " + _("y = {yes}, n = {no} >").format(yes=shown[0], no=shown[1]), ""),
            ]
        ]
    return [
        [(text, "")],
        [
            (_("Your move"), "turn"),
            (
                " " + _("({n} legal; 'hint' numbers them, 'help' explains) >").format(n=len(legal)),
                "",
            ),
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


def hint_lines(legal: list[str], lang: str = "en") -> list[Line]:
    """The legal moves, numbered, one line per verb (wrapped); their cards as ``lang`` writes
    them (a move may be typed so)."""
    _ = translator(lang).gettext
    if not legal:
        return [_plain(_("(nothing to play now)"))]
    lines: list[Line] = [
        _plain(
            _("{n} legal: type a number (or 'hint N') to play it, or the move itself").format(
                n=len(legal)
            )
        )
    ]
    number = 0
    for verb, group in actions_by_verb(legal).items():
        head = f"  {verb + ':':<14}"
        line: Line = [(head, "title")]
        width = len(head)
        for text in group:
            number += 1
            rest = action_label(text, lang)[len(verb) :].strip() or verb
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
    _ = snapshot_translator(snap).gettext
    may_i = snap.get("game") == "may-i"
    went = sheet.get("went_out_name")
    reason = str(sheet.get("reason"))
    if went is not None:
        how = _("{name} went out").format(name=went)
    else:
        how = _(_END_REASONS[reason]) if reason in _END_REASONS else reason
    number = sheet.get("shown_hand")
    if may_i:
        over = _("deal {number} over: {how}").format(number=number, how=how)
    else:
        over = _("hand {number} over: {how}").format(number=number, how=how)
    lines: list[Line] = [[(f"== {over} ==", "title")]]
    sides = sheet.get("sides") or []
    if not sides:
        return lines
    heads = [_join([str(n) for n in side.get("names") or []])[:24] for side in sides]
    width = max(8, *(len(h) for h in heads))
    label_width = max(24, *(len(_(label)) for _key, label in _SHEET_ROWS))

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
                _("penalty points") if may_i and key == "total" else _(label),
                values,
                "title" if key == "total" else "",
            )
        )
    totals = sheet.get("totals") or []
    if len(totals) == len(sides):
        lines.append(row(_("match total"), [str(t) for t in totals], "title"))
    if snap.get("target"):
        lines.append(_plain("  " + _("target: {target}").format(target=snap["target"])))
    elif may_i:
        lines.append(_plain("  " + _("the lowest total after the last deal wins")))
    return lines


# Why a hand ended, in words, when nobody went out.
_END_REASONS = {
    "stock-exhausted": N_("the stock ran out"),
    "last-red-three": N_("the last card of the stock was a red three"),
    "turn-limit": N_("the deal reached its turn limit"),
}

# The sheet's rows: the score parts of a Canasta hand (``table_model.SCORE_PARTS``), with the
# counts of natural and mixed canastas on one row.
_SHEET_ROWS = (
    ("melds", N_("cards in melds")),
    ("canasta_bonus", N_("canasta bonuses")),
    ("canastas", N_("  canastas natural/mixed")),
    ("red_threes", N_("red threes")),
    ("going_out", N_("going out")),
    ("cards_in_hand", N_("cards left in hand")),
    ("total", N_("hand total")),
)


def render_sheet(snap: dict[str, Any], colour: bool = False) -> str:
    return paint(sheet_lines(snap), colour)


def match_end_lines(snap: dict[str, Any]) -> list[Line]:
    """The match's end: the winner and the totals, and where the log is."""
    _ = snapshot_translator(snap).gettext
    end = snap.get("match_end")
    lines: list[Line] = []
    if end:
        totals = end.get("totals") if isinstance(end.get("totals"), list) else []
        shown = ", ".join(f"{side_label(snap, i)} {t}" for i, t in enumerate(totals))
        kind = end.get("kind")
        reason = end.get("reason")
        if kind == "match-end":
            winner = end.get("winner")
            if isinstance(winner, int):
                said = _("{names} won").format(names=side_label(snap, winner))
            else:
                said = _("a draw")
            over = _("match over:")
            lines.append([(f"== {over} ", "title"), (said, "turn"), (" ==", "title")])
        elif kind == "forfeit":
            seat = end.get("seat")
            seats = snap.get("seats") or []
            if isinstance(seat, int) and seat < len(seats):
                who = seats[seat]["name"]
            else:
                who = _("a seat")
            said = _("match over: {name} forfeits ({reason})").format(name=who, reason=reason)
            lines.append([(f"== {said} ==", "title")])
        else:
            said = _("match stopped ({reason})").format(reason=reason)
            lines.append([(f"== {said} ==", "title")])
        if shown:
            lines.append(_plain("  " + _("totals: {totals}").format(totals=shown)))
    log = (snap.get("outcome") or {}).get("log")
    if log:
        lines.append(_plain("  " + _("log: {path}").format(path=log)))
    return lines


__all__ = [
    "CARD_NOTE",
    "HELP",
    "MAY_I_HELP",
    "card_span",
    "hand_line",
    "help_text",
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
    "snapshot_translator",
    "table_lines",
    "title_line",
    "turn_update_lines",
    "use_colour",
]
