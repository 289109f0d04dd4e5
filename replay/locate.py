"""Reading a position of a game: ``57`` (a record number), ``hand:2``, ``hand:2/turn:14``, ``end``.

``hand:H`` is the deal of hand H; ``hand:H/turn:T`` is the record after which turn T of hand H
begins (the deal for turn 0, else the discard that ended turn T-1). Hands and turns count from 0,
as the log and the engine number them. ``deal:H`` is the same as ``hand:H`` (May I? calls its
rounds deals).
"""

from __future__ import annotations

import re

from .errors import LocatorError
from .timeline import Timeline
from .wording import capital, hand_noun

_HAND = re.compile(r"^(?:hand|deal):(\d+)(?:/turn:(\d+))?$")
FORMS = "a record number, hand:H, hand:H/turn:T, or end"


def locate(timeline: Timeline, text: str) -> int:
    """The record number ``text`` names in ``timeline``, or raise :class:`LocatorError`."""
    spec = text.strip().lower().replace(" ", "")
    if spec in ("end", "last"):
        return timeline.last_record
    if spec.isdigit():
        record = int(spec)
        if record > timeline.last_record:
            raise LocatorError(
                f"There is no record {record}: the checked part of this log has records 0 to "
                f"{timeline.last_record}."
            )
        return record
    match = _HAND.match(spec)
    if match is None:
        raise LocatorError(f"{text!r} is not a position: write {FORMS}.")
    hand_no = int(match.group(1))
    noun = hand_noun(timeline.game)
    info = timeline.hand(hand_no)
    if info is None or info.deal_record is None:
        dealt = [h.hand for h in timeline.hands if h.deal_record is not None]
        known = f"{noun}s {dealt[0]} to {dealt[-1]}" if dealt else f"no {noun}"
        raise LocatorError(
            f"{capital(noun)} {hand_no} was never dealt in this log (it has {known})."
        )
    if match.group(2) is None:
        return info.deal_record
    turn = int(match.group(2))
    steps = timeline.steps
    end = info.end_record if info.end_record is not None else timeline.last_record
    last_turn = None
    for step in steps[info.deal_record : end + 1]:
        if step.pending:
            raise LocatorError(
                f"{capital(noun)} {hand_no} cannot be replayed from this copy of the log (its "
                "seeds were never published), so its turns cannot be found."
            )
        if step.turn is not None:
            if step.turn == turn:
                return step.record
            last_turn = step.turn
    raise LocatorError(
        f"{capital(noun)} {hand_no} has no turn {turn} (its turns are 0 to {last_turn})."
    )
