"""Small helpers that turn engine and log facts into the words the tools print."""

from __future__ import annotations

from collections.abc import Sequence

from canasta_net.eventlog import Header
from canasta_net.rules import RuleSet


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


def team_seats(rules: RuleSet, team: int) -> list[int]:
    return [s for s in range(rules.players) if rules.team_of(s) == team]


def team_name(rules: RuleSet, team: int) -> str:
    """``team 0 (seats 0+2)``; a team of one seat is just that seat."""
    seats = team_seats(rules, team)
    return f"team {team} (seat{'s' if len(seats) > 1 else ''} {'+'.join(map(str, seats))})"


def join_cards(cards: Sequence[str]) -> str:
    return " ".join(cards) if cards else "-"


def short_hex(data: bytes, length: int = 12) -> str:
    return data.hex()[:length]


def count(n: int, noun: str) -> str:
    """``1 card``, ``2 cards``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
