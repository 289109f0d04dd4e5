"""Reading a position of a game: ``57`` (a record number), ``hand:2``, ``hand:2/turn:14``, ``end``.

``hand:H`` is the deal of hand H; ``hand:H/turn:T`` is the record after which turn T of hand H
begins (the deal for turn 1, else the discard that ended turn T-1). Hands and turns count from 1,
as players count them and as every tool shows them (``records.shown_number``); the log and the
engine count from 0, so ``hand:1`` is the hand whose records say ``hand: 0``. ``deal:H`` is the same
as ``hand:H`` (May I? calls its rounds deals). Records count from 0, the header being record 0.
"""

from __future__ import annotations

import re

from canasta_net.log.records import shown_number

from .errors import LocatorError
from .timeline import Timeline
from .wording import capital, hand_noun

_HAND = re.compile(r"^(?:hand|deal):(\d+)(?:/turn:(\d+))?$")
FORMS = "a record number, hand:H, hand:H/turn:T (hands and turns count from 1), or end"


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
    noun = hand_noun(timeline.game)
    shown_hand = int(match.group(1))
    if shown_hand == 0:
        raise LocatorError(f"{capital(noun)}s count from 1: the first is {noun}:1.")
    hand_no = shown_hand - 1  # the log's number
    info = timeline.hand(hand_no)
    if info is None or info.deal_record is None:
        dealt = [shown_number(h.hand) for h in timeline.hands if h.deal_record is not None]
        if len(dealt) > 1:
            known = f"{noun}s {dealt[0]} to {dealt[-1]}"
        else:
            known = f"only {noun} {dealt[0]}" if dealt else f"no {noun}"
        raise LocatorError(
            f"{capital(noun)} {shown_hand} was never dealt in this log (it has {known})."
        )
    if match.group(2) is None:
        return info.deal_record
    shown_turn = int(match.group(2))
    if shown_turn == 0:
        raise LocatorError(f"Turns count from 1: the first is {noun}:{shown_hand}/turn:1.")
    turn = shown_turn - 1  # the engine's turn_no
    steps = timeline.steps
    end = info.end_record if info.end_record is not None else timeline.last_record
    last_turn = None
    for step in steps[info.deal_record : end + 1]:
        if step.pending:
            raise LocatorError(
                f"{capital(noun)} {shown_hand} cannot be replayed from this copy of the log (its "
                "seeds were never published), so its turns cannot be found."
            )
        if step.turn is not None:
            if step.turn == turn:
                return step.record
            last_turn = step.turn
    turns = "none" if last_turn is None else f"1 to {shown_number(last_turn)}"
    raise LocatorError(
        f"{capital(noun)} {shown_hand} has no turn {shown_turn} (its turns are {turns})."
    )
