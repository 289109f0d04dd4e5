"""The whole game as one JSON document (format ``canasta-replay/export/1``, see docs/replay.md).

Every step's table is built by ``views.table_view`` for the chosen perspective, and every sentence
by ``describe.describe_step`` for it, so a per-seat export holds exactly what that seat could see:
its own hand and draws, and the public table. Annotations on a hand whose cards are not public yet
(its seeds are not in the log) are withheld from per-seat and public exports, since an annotator
working from the host's log may have written about hidden cards.
"""

from __future__ import annotations

from typing import Any, Final

from canasta_net import __version__
from canasta_net.i18n import Translator, translator
from canasta_net.identity import fingerprint

from .annotations import Annotation, AnnotationSet
from .describe import describe_step
from .timeline import Timeline
from .views import ALL, Perspective, table_view
from .wording import Words, team_seats

EXPORT_FORMAT: Final = "canasta-replay/export/1"


def validity(timeline: Timeline, tr: Translator | None = None) -> dict[str, Any]:
    """Whether the log checked out, as far as it goes, in the audit's words (in the language of
    ``tr``; English by default, the JSON export's)."""
    _ = (tr or translator("en")).gettext
    failure = timeline.failure
    if failure is not None:
        names = [seat.name for seat in timeline.header.seats]
        reason = failure.reason if tr is None else failure.worded_reason(names, _)
        return {
            "verdict": "invalid",
            "summary": _(
                "The log fails at record {record} [{code}]: {reason} Only the records before it "
                "are shown."
            ).format(record=failure.record, code=failure.code, reason=reason),
            "failure": failure.to_dict(),
        }
    if timeline.over:
        return {"verdict": "valid", "summary": _("Every record checks out."), "failure": None}
    return {
        "verdict": "incomplete",
        "summary": _("Every record checks out, but the log stops before the end of the match."),
        "failure": None,
    }


def visible_annotations(
    timeline: Timeline, annotations: AnnotationSet | None, perspective: Perspective
) -> tuple[list[Annotation], int]:
    """The annotations this perspective may be shown, and how many were withheld."""
    if annotations is None:
        return [], 0
    shown: list[Annotation] = []
    withheld = 0
    for annotation in annotations.annotations:
        hand = timeline.steps[annotation.record].hand
        info = None if hand is None else timeline.hand(hand)
        if perspective.kind != ALL and info is not None and not info.seeds_public:
            withheld += 1
        else:
            shown.append(annotation)
    return shown, withheld


def build_export(
    timeline: Timeline,
    perspective: Perspective,
    annotations: AnnotationSet | None = None,
    tr: Translator | None = None,
) -> dict[str, Any]:
    """The export's data; its texts (``text``, the teams' names, the result, the validity) in
    the language of ``tr``: English by default, as the JSON export always is, the reader's for
    the text and HTML forms built from it."""
    header, game = timeline.header, timeline.game
    words = Words(tr)
    shown, withheld = visible_annotations(timeline, annotations, perspective)
    steps = []
    for step in timeline.steps:
        steps.append(
            {
                "record": step.record,
                "hash": step.hash.hex(),
                "kind": step.kind,
                "hand": step.hand,
                "turn": step.turn,
                "action_turn": step.action_turn,
                "seat": step.author,
                "action": step.action,
                "text": describe_step(timeline, step, perspective, tr),
                "totals": list(step.totals),
                "pending": step.pending,
                "view": None if step.state is None else table_view(game, step.state, perspective),
            }
        )
    result = timeline.result
    names = [words.side(game, header, side) for side in range(game.teams)]
    return {
        "format": EXPORT_FORMAT,
        "generator": f"canasta-replay {__version__}",
        "log": {
            "software": header.software,
            "table": header.table.hex(),
            "header_hash": timeline.header_hash.hex(),
            "game": game.kind,
            "lowest_wins": game.lowest_wins,
            "variant": header.variant,
            "rules": header.rules,
            "host": header.host,
            "insecure": header.insecure,
            "created": header.created,
            "records": len(timeline.steps),
            "truncated": None
            if timeline.truncated is None
            else {
                "record": timeline.truncated.record_no,
                "offset": timeline.truncated.offset,
                "length": timeline.truncated.length,
            },
        },
        "perspective": perspective.to_dict(),
        "validity": validity(timeline, tr),
        "seats": [
            {
                "seat": n,
                "name": seat.name,
                "bot": seat.bot,
                "team": game.team_of(n),
                "fingerprint": fingerprint(seat.key),
            }
            for n, seat in enumerate(header.seats)
        ],
        "teams": [
            {"team": t, "name": names[t], "seats": team_seats(game, t)} for t in range(game.teams)
        ],
        "hands": [
            {
                "hand": info.hand,
                "dealer": info.dealer,
                "minimums": info.minimums,
                "deal_record": info.deal_record,
                "end_record": info.end_record,
                "checkpoint_record": info.checkpoint_record,
                "end": info.end,
                "scores": [s.to_dict() for s in info.scores] or None,
                "totals": info.totals,
                "checkpoint_signers": info.checkpoint_signers or None,
            }
            for info in timeline.hands
        ],
        "steps": steps,
        "result": None
        if result is None
        else {
            "winner": result.winner,
            "totals": list(result.scores),
            "hands": result.hands,
            "text": words.result(game, header, result, forfeit=timeline.forfeit is not None),
        },
        "annotations": [{**a.to_dict(), "hand": timeline.steps[a.record].hand} for a in shown],
        "withheld_annotations": withheld,
    }
