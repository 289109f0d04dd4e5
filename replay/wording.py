"""Small helpers that turn engine and log facts into the words the tools print.

The games differ in words only: the Canasta family scores teams ("team 0 (seats 0+2)") and calls a
round a hand, the highest total winning; "May I?" has every seat play for itself ("seat 2
(carol)"), calls a round a deal and counts penalty points, the lowest total winning. The helpers
that take a :class:`~canasta_net.games.Game` pick the words; nothing else in the tool asks which
game it is showing except to draw the table (``render.py``, ``html_page.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from canasta_net.games import MAY_I, Game
from canasta_net.i18n import N_, Translator, translator
from canasta_net.log import Header
from canasta_net.log.records import shown_number


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def sentence(text: str) -> str:
    """``text`` with a capital first letter and a full stop (engine reasons are fragments)."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def seat_name(header: Header, seat: int) -> str:
    """``seat 2 (alice)``, or ``seat 7`` for a number the header does not list."""
    if 0 <= seat < len(header.seats):
        return f"seat {seat} ({header.seats[seat].name})"
    return f"seat {seat}"


def team_seats(rules: Any, team: int) -> list[int]:
    return [s for s in range(rules.players) if rules.team_of(s) == team]


def team_name(rules: Any, team: int) -> str:
    """``team 0 (seats 0+2)``; a team of one seat is just that seat."""
    seats = team_seats(rules, team)
    return f"team {team} (seat{'s' if len(seats) > 1 else ''} {'+'.join(map(str, seats))})"


def seats_play_alone(game: Game) -> bool:
    """Whether every seat is its own side and is named as a seat, not as a team."""
    return game.kind == MAY_I


def side_name(game: Game, header: Header, side: int) -> str:
    """A scoring side: ``team 0 (seats 0+2)`` in the Canasta family, ``seat 2 (carol)`` in
    May I?."""
    return seat_name(header, side) if seats_play_alone(game) else team_name(game.rules, side)


def side_names(game: Game, header: Header) -> list[str]:
    return [side_name(game, header, side) for side in range(game.teams)]


def hand_noun(game: Game | str) -> str:
    """What the game (or the game a log header names) calls one round: ``hand`` (the Canasta
    family), ``deal`` (May I?)."""
    kind = game if isinstance(game, str) else game.kind
    return "deal" if kind == MAY_I else "hand"


def hand_name(game: Game | str, hand: int | None) -> str:
    """``hand 1`` for the hand the log numbers 0 (``deal 1`` in May I?): people count hands from 1
    (``records.shown_number``). ``the hand`` when the number is not known."""
    noun = hand_noun(game)
    return f"the {noun}" if hand is None else f"{noun} {shown_number(hand)}"


def points_text(game: Game, points: int) -> str:
    """One side's score for a hand: ``+120`` (Canasta), ``35 penalty points`` (May I?)."""
    if game.lowest_wins:
        return count(points, "penalty point")
    return f"{points:+d}"


def result_text(game: Game, header: Header, result: Any, *, forfeit: bool = False) -> str:
    """The match result in words (no capital, no full stop): who wins, how, and the totals.

    ``result`` has ``winner`` (a side, or None), ``scores`` and ``hands``; after a ``forfeit`` the
    winner (if any) is the one the table named, not necessarily the best total.
    """
    names = side_names(game, header)
    if not game.lowest_wins:
        return str(result.describe(names))
    scores = ", ".join(f"{n} {s}" for n, s in zip(names, result.scores, strict=True))
    rounds = count(result.hands, hand_noun(game))
    if forfeit:
        if result.winner is None:
            return f"the match ended without a winner after {rounds}: {scores}"
        return f"{names[result.winner]} wins after {rounds}: {scores}"
    if result.winner is None:
        best = min(result.scores)
        tied = " and ".join(n for n, s in zip(names, result.scores, strict=True) if s == best)
        return f"draw after {rounds}: {tied} share the lowest total ({scores})"
    return f"{names[result.winner]} wins with the lowest total after {rounds}: {scores}"


def join_cards(cards: Sequence[str]) -> str:
    return " ".join(cards) if cards else "-"


def short_hex(data: bytes, length: int = 12) -> str:
    return data.hex()[:length]


def count(n: int, noun: str) -> str:
    """``1 card``, ``2 cards``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class Words:
    """The helpers above in one reader's language (``tr``; English gives the same text).

    The tools' texts for people (``show``, ``export --format text/html``) are worded through one
    of these; the JSON export's texts through the English one, so that it stays the same in
    every language."""

    def __init__(self, tr: Translator | None = None) -> None:
        self.tr = translator("en") if tr is None else tr
        self._ = self.tr.gettext

    def seat(self, header: Header, seat: int) -> str:
        if 0 <= seat < len(header.seats):
            return self._("seat {seat} ({name})").format(seat=seat, name=header.seats[seat].name)
        return self._("seat {seat}").format(seat=seat)

    def team(self, rules: Any, team: int) -> str:
        seats = team_seats(rules, team)
        return self.tr.ngettext(
            "team {team} (seat {seats})", "team {team} (seats {seats})", len(seats)
        ).format(team=team, seats="+".join(map(str, seats)))

    def side(self, game: Game, header: Header, side: int) -> str:
        return self.seat(header, side) if seats_play_alone(game) else self.team(game.rules, side)

    def hand(self, game: Game | str, hand: int | None) -> str:
        may_i = hand_noun(game) == "deal"
        if hand is None:
            return self._("the deal") if may_i else self._("the hand")
        n = shown_number(hand)
        return (self._("deal {n}") if may_i else self._("hand {n}")).format(n=n)

    def hands(self, game: Game | str, n: int) -> str:
        """``2 hands`` (``2 deals``), as counted after a preposition (``after 2 hands``)."""
        if hand_noun(game) == "deal":
            return self.tr.ngettext("{n} deal", "{n} deals", n).format(n=n)
        return self.tr.ngettext("{n} hand", "{n} hands", n).format(n=n)

    def cards(self, n: int) -> str:
        return self.tr.ngettext("{n} card", "{n} cards", n).format(n=n)

    def points(self, game: Game, points: int) -> str:
        if game.lowest_wins:
            return self.tr.ngettext("{n} penalty point", "{n} penalty points", points).format(
                n=points
            )
        return f"{points:+d}"

    def totals(self, game: Game, header: Header, scores: Sequence[int]) -> str:
        return ", ".join(f"{self.side(game, header, t)} {s}" for t, s in enumerate(scores))

    def result(self, game: Game, header: Header, result: Any, *, forfeit: bool = False) -> str:
        """:func:`result_text` in the reader's language."""
        _ = self._
        scores = self.totals(game, header, result.scores)
        rounds = self.hands(game, result.hands)
        winner = result.winner
        if not game.lowest_wins:
            text = (
                _("draw after {rounds}: {scores}")
                if winner is None
                else _("{winner} wins after {rounds}: {scores}")
            )
        elif forfeit:
            text = (
                _("the match ended without a winner after {rounds}: {scores}")
                if winner is None
                else _("{winner} wins after {rounds}: {scores}")
            )
        elif winner is None:
            best = min(result.scores)
            tied = [self.side(game, header, t) for t, s in enumerate(result.scores) if s == best]
            text = _("draw after {rounds}: {tied} share the lowest total ({scores})").replace(
                "{tied}", " and ".join(tied) if self.tr.lang == "en" else ", ".join(tied)
            )
        else:
            text = _("{winner} wins with the lowest total after {rounds}: {scores}")
        name = "" if winner is None else self.side(game, header, winner)
        return text.format(rounds=rounds, scores=scores, winner=name)

    def phase(self, phase: str) -> str:
        word = PHASE_WORDS.get(phase)
        return phase if word is None else self._(word)


# The phases a table view names (``view["phase"]``), for a reader (English: the code itself).
PHASE_WORDS: Final = {
    "draw": N_("draw"),
    "play": N_("play"),
    "pile-pending": N_("pile-pending"),
    "asked": N_("asked"),
    "over": N_("over"),
    "buy-offer": N_("buy-offer"),
    "buy-permission": N_("buy-permission"),
}
