"""Each seat's activity in a log: moves, thinking time, disconnections, stand-in turns.

Format 2 logs date every record with the host's clock (``time``, in ms) and record connection
events (``seat-event``); format 1 logs have neither, so only moves and stand-in turns (which the
seat keys prove) are counted there.

- A **move** is an ``action`` record the seat's own key signed; a **stand-in turn** is one signed
  by another key the host put in the seat's place (``seat-key``), that is, a bot playing the seat
  while its person was away. The keys are proven by the signatures; nothing else here is.
- **Thinking time** is, for each move, the time from the record that gave the seat its turn (the
  last game record before the move: chats and connection records give no turn) to the move's
  record. Both times are the host's clock, so they are the host's word: a host could delay a
  record, or date it late.
- **Disconnections** are the host's ``lost`` events for the seat; every connection event is listed
  in ``events`` as the host's unproven word.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Final

from canasta_net.i18n import current
from canasta_net.log import SEAT_KEY_KIND, Header, StoredRecord
from canasta_net.log import records as R
from canasta_net.log.format import TIMED_FORMAT

# Records that give nobody a turn: they may fall between a turn and the move that answers it.
_NO_TURN: Final = frozenset({R.CHAT, R.SEAT_EVENT, SEAT_KEY_KIND})


@dataclass
class SeatActivity:
    """One seat's counts; ``thinking_ms`` holds one entry per timed move."""

    seat: int
    moves: int = 0
    stand_in_moves: int = 0
    thinking_ms: list[int] = field(default_factory=list)
    disconnections: int = 0
    stand_ins: int = 0

    def to_dict(self, timed: bool) -> dict[str, Any]:
        thinking = self.thinking_ms
        return {
            "seat": self.seat,
            "moves": self.moves,
            "stand_in_moves": self.stand_in_moves,
            "stand_ins": self.stand_ins,
            "disconnections": self.disconnections if timed else None,
            "thinking_ms": {
                "median": round(statistics.median(thinking)),
                "max": max(thinking),
                "moves": len(thinking),
            }
            if thinking
            else None,
        }


class ActivityCounter:
    """Feed it each checked record of a log, in order (the header first)."""

    def __init__(self) -> None:
        self.timed = False
        self.seats: list[SeatActivity] = []
        self.events: list[dict[str, Any]] = []
        self._owner_keys: list[bytes] = []
        self._keys: list[bytes] = []
        self._turn_time: int | None = None

    def start(self, header: Header) -> None:
        self.timed = header.format >= TIMED_FORMAT
        self.seats = [SeatActivity(seat) for seat in range(len(header.seats))]
        self._owner_keys = [s.key for s in header.seats]
        self._keys = list(self._owner_keys)

    def feed(self, record: StoredRecord) -> None:
        if record.index == 0 or not self.seats:
            return
        fields, kind = record.fields, record.kind
        stamp = fields.get("time") if self.timed else None
        if kind == SEAT_KEY_KIND:
            seat, key = fields["rekey"]["seat"], fields["rekey"]["key"]
            if self._keys[seat] == self._owner_keys[seat] and key != self._owner_keys[seat]:
                self.seats[seat].stand_ins += 1
            self._keys[seat] = key
        elif kind == R.SEAT_EVENT:
            self._event(record, stamp)
        elif kind == R.ACTION and record.action is not None:
            self._move(record.action["seat"], stamp)
        if kind not in _NO_TURN and isinstance(stamp, int):
            self._turn_time = stamp

    def _move(self, seat: int, stamp: Any) -> None:
        activity = self.seats[seat]
        if self._keys[seat] != self._owner_keys[seat]:
            activity.stand_in_moves += 1
            return
        activity.moves += 1
        if isinstance(stamp, int) and self._turn_time is not None:
            activity.thinking_ms.append(stamp - self._turn_time)

    def _event(self, record: StoredRecord, stamp: Any) -> None:
        fields = record.fields
        seat, event = fields["seat"], fields["event"]
        if event == "lost":
            self.seats[seat].disconnections += 1
        self.events.append(
            {
                "record": record.index,
                "time": stamp,
                "seat": seat,
                "event": event,
                "reason": fields.get("reason"),
                "hold_ms": fields.get("hold"),
                "claimed_by": "host",
            }
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "timed": self.timed,
            "seats": [seat.to_dict(self.timed) for seat in self.seats],
            "events": self.events,
        }


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s"


def activity_lines(activity: dict[str, Any], names: list[str]) -> list[str]:
    """The per-seat lines of the audit's text form, in the process's person's language."""
    if not activity.get("seats"):
        return []
    tr = current()
    _ = tr.gettext
    timed = activity["timed"]
    lines = []
    if not timed:
        lines.append(
            "  " + _("Per seat (a format-1 log: times and connections are not recorded in it):")
        )
    else:
        lines.append(
            "  " + _("Per seat (times and connections as the host's clock and word give them):")
        )
    for entry in activity["seats"]:
        seat = entry["seat"]
        name = names[seat] if seat < len(names) else "?"
        moves = entry["moves"]
        parts = [tr.ngettext("{n} move", "{n} moves", moves).format(n=moves)]
        thinking = entry["thinking_ms"]
        if thinking is not None:
            parts.append(
                _("thinking time median {median}, max {max}").format(
                    median=_seconds(thinking["median"]), max=_seconds(thinking["max"])
                )
            )
        elif timed:
            parts.append(_("no timed move"))
        if entry["disconnections"] is not None:
            lost = entry["disconnections"]
            parts.append(
                tr.ngettext("{n} disconnection", "{n} disconnections", lost).format(n=lost)
            )
        turns = entry["stand_in_moves"]
        if turns or entry["stand_ins"]:
            parts.append(
                tr.ngettext("{n} move by a stand-in", "{n} moves by a stand-in", turns).format(
                    n=turns
                )
            )
        who = _("seat {seat} ({name})").format(seat=seat, name=name)
        lines.append(f"    {who}: " + "; ".join(parts) + ".")
    return lines


__all__ = ["ActivityCounter", "SeatActivity", "activity_lines"]
