"""The table drawn as text for a person at a terminal (pure functions, tested as strings)."""

from __future__ import annotations

from typing import Any

from ..log.records import shown_number
from ..safe_text import safe_text

HELP = """\
Actions (cards as KH, 10S or TS, JK):
  draw                      draw from the stock
  take-pile QS QD           take the pile, melding its top card with these two cards
  take-pile                 take the pile, adding its top card to your team's meld of its rank
  meld KH KS 2C             lay a new meld
  add 0 KH                  add cards to your team's meld number 0 (numbers as shown)
  discard 7D                discard (your last card: going out)
  ask-go-out                ask your partner "may I go out?" (after drawing, before melding)
  answer yes | answer no    answer your partner
Other commands: hint (legal moves), view (the table), say TEXT (chat), help, quit"""


MAY_I_HELP = """\
Actions (cards as KH, 10S or TS):
  draw                      draw from the stock (the discard may then be bought: "May I?")
  take-discard 9D           take the top discard
  meld 7C 7D 7S | 4C 5C 6C 7C   lay down this deal's contract, melds separated by |
  add 2.0 8C                lay off a card on seat 2's meld 0 (after your contract)
  discard 9D                discard
  may-i 9D                  ask to buy the discard (you also take a penalty card)
  pass | allow | deny 9D    decline to buy; let a buyer have it; refuse (and buy it yourself)
Other commands: hint (legal moves), view (the table), say TEXT (chat), help, quit"""


def _cards(cards: list[str]) -> str:
    return " ".join(cards) if cards else "-"


def render_view(view: dict[str, Any]) -> str:
    """One seat's table: scores, seats, melds, pile, stock and the seat's own hand (none in a
    watcher's public view), and who watches. The view came from the host: each line is made safe
    for a terminal (``safe_text``)."""
    return "\n".join(safe_text(line) for line in _view_lines(view))


def _view_lines(view: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    seats = view.get("seats") or []
    scores = view.get("scores") or []
    state = view.get("state")
    title = f"== {view.get('table', 'table')} == hand {shown_number(int(view.get('hand_no', 0)))}"
    lines.append(f"{title}   scores: " + "  ".join(f"team {t}: {s}" for t, s in enumerate(scores)))
    watchers = view.get("watchers")
    if watchers:
        lines.append("  watching: " + ", ".join(str(name) for name in watchers))
    if state is None:
        lines.append(f"({view.get('phase', 'waiting')})")
        return lines
    if state.get("game") == "may-i":
        return lines + _may_i_lines(state, seats)
    me = state.get("seat")  # None: a watcher's view
    teams = len(state["melds"])
    team_of = state.get("teams") or [s % teams for s in range(len(seats))]
    for s, info in enumerate(seats):
        marks = []
        if info.get("bot"):
            marks.append("bot")
        if not info.get("connected", True):
            marks.append("away")
        if s == me:
            marks.append("you")
        turn = "  <- to move" if state.get("to_move") == s else ""
        lines.append(
            f"  seat {s} {info.get('name', '')} (team {team_of[s]})"
            f"{' [' + ', '.join(marks) + ']' if marks else ''}: "
            f"{state['hand_sizes'][s]} cards, red threes {_cards(state['red_threes'][s])}{turn}"
        )
    for team, melds in enumerate(state["melds"]):
        if team not in team_of:
            continue  # a lone-hand partner whose melds joined his partner's
        opened = "opened" if state["opened"][team] else f"needs {state['minimums'][team]}"
        lines.append(f"  team {team} melds ({opened}):")
        for i, m in enumerate(melds):
            kind = f" [{m['canasta']} canasta]" if m.get("canasta") else ""
            lines.append(f"    {i}: {_cards(m['cards'])}{kind}")
    frozen = " FROZEN" if state["pile_frozen"] else ""
    lines.append(
        f"  pile: {state['pile_top'] or '(empty)'} ({state['pile_size']} cards){frozen}   "
        f"stock: {state['stock_size']}"
    )
    if "hand" in state:
        lines.append(f"  your hand: {_cards(state['hand'])}")
    ts = state.get("turn_state") or {}
    if ts.get("initial_points"):
        lines.append(f"  laid toward the initial meld this turn: {ts['initial_points']}")
    if ts.get("permission") is not None:
        lines.append(f"  partner said: {'yes' if ts['permission'] else 'no'}")
    return lines


def _may_i_lines(state: dict[str, Any], seats: list[dict[str, Any]]) -> list[str]:
    """May I?: the contract, each seat's melds and buys, the discard, your hand."""
    me = state.get("seat")  # None: a watcher's view
    lines = [
        f"  deal {shown_number(state['deal'])}, contract: {state['contract']}"
        f"{'' if state['discard_out'] else ' (the last card must be melded)'}"
    ]
    for s, info in enumerate(seats):
        marks = [m for m, on in (("bot", info.get("bot")), ("you", s == me)) if on]
        down = "down" if state["down"][s] else "not down"
        turn = "  <- to move" if state.get("to_move") == s else ""
        lines.append(
            f"  seat {s} {info.get('name', '')}{' [' + ', '.join(marks) + ']' if marks else ''}: "
            f"{state['hand_sizes'][s]} cards, {down}, buys {state['buys'][s]}/"
            f"{state['buy_limit']}{turn}"
        )
        for i, m in enumerate(state["melds"][s]):
            lines.append(f"    {s}.{i}: {_cards(m['cards'])}")
    lines.append(
        f"  discard: {state['pile_top'] or '(empty)'} ({len(state['pile'])} cards)   "
        f"stock: {state['stock_size']}"
    )
    window = state.get("window") or {}
    if window.get("offer"):
        asker = window.get("asker")
        who = f" (seat {asker} asks)" if isinstance(asker, int) else ""
        lines.append(f'  the discard is up for sale: "May I?"{who}')
    if "hand" in state:
        lines.append(f"  your hand: {_cards(state['hand'])}")
    return lines
