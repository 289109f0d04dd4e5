"""Reading a position of a game: ``57`` (a record number), ``hand:2``, ``hand:2/turn:14``, ``end``.

``hand:H`` is the deal of hand H; ``hand:H/turn:T`` is the record after which turn T of hand H
begins (the deal for turn 1, else the discard that ended turn T-1). Hands and turns count from 1,
as players count them and as every tool shows them (``records.shown_number``); the log and the
engine count from 0, so ``hand:1`` is the hand whose records say ``hand: 0``. ``deal:H`` is the same
as ``hand:H`` (May I? calls its rounds deals). Records count from 0, the header being record 0.
"""

from __future__ import annotations

import re

from canasta_net.i18n import N_, current
from canasta_net.log.records import shown_number

from .errors import LocatorError
from .timeline import Timeline
from .wording import Words, capital, hand_noun

_HAND = re.compile(r"^(?:hand|deal):(\d+)(?:/turn:(\d+))?$")
FORMS = N_("a record number, hand:H, hand:H/turn:T (hands and turns count from 1), or end")


def locate(timeline: Timeline, text: str) -> int:
    """The record number ``text`` names in ``timeline``, or raise :class:`LocatorError` (its
    sentence in the process's person's language, ``--lang``)."""
    tr = current()
    _, w = tr.gettext, Words(tr)
    spec = text.strip().lower().replace(" ", "")
    if spec in ("end", "last"):
        return timeline.last_record
    if spec.isdigit():
        record = int(spec)
        if record > timeline.last_record:
            raise LocatorError(
                _(
                    "There is no record {record}: the checked part of this log has records 0 to "
                    "{last}."
                ).format(record=record, last=timeline.last_record)
            )
        return record
    match = _HAND.match(spec)
    if match is None:
        raise LocatorError(
            _("{text} is not a position: write {forms}.").format(text=repr(text), forms=_(FORMS))
        )
    noun = hand_noun(timeline.game)
    may_i = noun == "deal"
    shown_hand = int(match.group(1))
    if shown_hand == 0:
        raise LocatorError(
            _("Deals count from 1: the first is deal:1.")
            if may_i
            else _("Hands count from 1: the first is hand:1.")
        )
    hand_no = shown_hand - 1  # the log's number
    this_hand = capital(w.hand(timeline.game, hand_no))
    info = timeline.hand(hand_no)
    if info is None or info.deal_record is None:
        dealt = [h.hand for h in timeline.hands if h.deal_record is not None]
        if len(dealt) > 1:
            known = (
                _("deals {first} to {last}") if may_i else _("hands {first} to {last}")
            ).format(first=shown_number(dealt[0]), last=shown_number(dealt[-1]))
        elif dealt:
            known = _("only {hand}").format(hand=w.hand(timeline.game, dealt[0]))
        else:
            known = _("no deal") if may_i else _("no hand")
        raise LocatorError(
            _("{hand} was never dealt in this log (it has {known}).").format(
                hand=this_hand, known=known
            )
        )
    if match.group(2) is None:
        return info.deal_record
    shown_turn = int(match.group(2))
    if shown_turn == 0:
        raise LocatorError(
            _("Turns count from 1: the first is {position}.").format(
                position=f"{noun}:{shown_hand}/turn:1"
            )
        )
    turn = shown_turn - 1  # the engine's turn_no
    steps = timeline.steps
    end = info.end_record if info.end_record is not None else timeline.last_record
    last_turn = None
    for step in steps[info.deal_record : end + 1]:
        if step.pending:
            raise LocatorError(
                _(
                    "{hand} cannot be replayed from this copy of the log (its seeds were never "
                    "published), so its turns cannot be found."
                ).format(hand=this_hand)
            )
        if step.turn is not None:
            if step.turn == turn:
                return step.record
            last_turn = step.turn
    turns = (
        _("none")
        if last_turn is None
        else _("{first} to {last}").format(first=1, last=shown_number(last_turn))
    )
    raise LocatorError(
        _("{hand} has no turn {turn} (its turns are {turns}).").format(
            hand=this_hand, turn=shown_turn, turns=turns
        )
    )
