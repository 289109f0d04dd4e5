"""What-if lines: an alternative sequence of actions from a recorded position, played by the engine.

The line is played on a copy of the table after the chosen record (the game's ``state.copy()``),
each action read by the game's own parser (``Game.parse_action``) and played by the seat to move
through the engine's own ``apply``: an illegal action is refused with the engine's reason code, and
nothing of the recorded game changes. The outcome kept with the line is the public table after it
(never a hidden hand) and, when the line ends the hand (a May I? deal), the engine's scores
(``Game.score_hand``) and the match totals they would give. Its ``turn`` is the engine's number
(from 0); its ``summary`` counts turns as people do, from 1 (``counts_from``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from canasta_net.errors import ActionParseError, IllegalAction
from canasta_net.log.records import shown_number

from .annotations import MAX_LINE, SUMMARY_COUNTS_FROM, WhatIfLine
from .errors import PositionUnknown, WhatIfError
from .timeline import Timeline
from .views import public_view
from .wording import count, hand_noun, points_text, seat_name, side_name


def split_line(text: str) -> list[str]:
    """``"draw; meld KH KS KD; discard 7C"`` to its actions."""
    return [part.strip() for part in text.replace("\n", ";").split(";") if part.strip()]


def play_line(
    timeline: Timeline, record: int, actions: Sequence[str], *, instead: bool = False
) -> WhatIfLine:
    """Play ``actions`` from the table after ``record``; raise WhatIfError at an illegal one.

    With ``instead`` the line replaces the move of ``record``, an action record: it is played
    from the table before that move (as a PGN variation is an alternative to its move), and its
    outcome says so (``instead_of``)."""
    if not actions:
        raise WhatIfError(0, "", "empty-line", "The what-if line has no actions.")
    if len(actions) > MAX_LINE:
        raise WhatIfError(
            MAX_LINE,
            actions[MAX_LINE],
            "line-too-long",
            f"A what-if line has at most {MAX_LINE} actions.",
        )
    step = timeline.steps[record]
    if instead and step.before is None:
        raise PositionUnknown(
            f"Record {record} ({step.kind}) is not a move of a hand this copy of the log replays: "
            "there is no move for a line to replace."
        )
    if step.state is None:
        if step.pending:
            raise PositionUnknown(
                f"The table after record {record} is not known in this copy of the log (the "
                "hand's seeds are not published in it), so no line can be played from it."
            )
        raise PositionUnknown(
            f"There is no hand on the table after record {record} ({step.kind}): a what-if line "
            "starts from a position of a hand being played."
        )
    game = timeline.game
    state = (step.before if instead else step.state).copy()
    canonical: list[str] = []
    for index, text in enumerate(actions):
        try:
            action = game.parse_action(text)
            state.apply(action, state.to_move)
        except ActionParseError as e:
            raise WhatIfError(index, text, "bad-action", str(e)) from None
        except IllegalAction as e:
            raise WhatIfError(index, text, e.code, e.message) from None
        canonical.append(str(action))
    outcome: dict[str, Any] = {
        "actions": len(canonical),
        "ends_hand": state.is_over,
        "turn": state.turn_no,
        "to_move": None if state.is_over else state.to_move,
        "position": public_view(game, state),
        "end": None,
        "scores": None,
        "totals": None,
        "counts_from": SUMMARY_COUNTS_FROM,
    }
    if instead:
        outcome["instead_of"] = record
    header, noun = timeline.header, hand_noun(game)
    if state.is_over and state.end is not None:
        scores = game.score_hand(state)
        totals = [before + s.total for before, s in zip(step.totals, scores, strict=True)]
        outcome["end"] = {"reason": state.end.reason.value, "went_out": state.end.went_out}
        bonus = getattr(state.end, "going_out_bonus", None)  # the Canasta family's
        if bonus is not None:
            outcome["end"]["going_out_bonus"] = bonus
        outcome["scores"] = [s.to_dict() for s in scores]
        outcome["totals"] = totals
        how = (
            f"{seat_name(header, state.end.went_out)} goes out"
            if state.end.went_out is not None
            else f"the {noun} ends ({state.end.reason.value})"
        )
        parts = "; ".join(
            f"{side_name(game, header, t)} {points_text(game, s.total)} (total {totals[t]})"
            for t, s in enumerate(scores)
        )
        outcome["summary"] = f"After {count(len(canonical), 'action')} {how}: {parts}."
    else:
        outcome["summary"] = (
            f"After {count(len(canonical), 'action')} the {noun} goes on: "
            f"turn {shown_number(state.turn_no)}, "
            f"{seat_name(header, state.to_move)} to move ({state.phase.value})."
        )
    if instead:
        outcome["summary"] = f"Instead of the move played: {outcome['summary']}"
    return WhatIfLine(tuple(canonical), outcome)
