"""Running an analysis: the worker processes, the file that lets it stop and resume, the
annotations it writes and the summary per seat.

Every decision analysed is kept in ``FILE.analysis.json`` (format ``canasta-replay/analysis/1``,
``docs/analysis.md``), bound to the log by the header's hash and each decision's record hash as
annotations are. It is written whole and moved into place every few seconds and when the run
stops, so a run that is interrupted loses at most the decisions of those seconds, and the next run
skips what it holds. The marked decisions become annotations by the author ``analysis`` in the
log's annotation sidecar, so that ``show`` and ``export`` display them beside people's.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Final

from canasta_net.i18n import Translator
from canasta_net.log.records import shown_number

from .analysis import (
    MARKS,
    DecisionResult,
    DecisionTask,
    analyse,
    mark_for,
    result_from_dict,
    result_to_dict,
)
from .annotations import Annotation, AnnotationSet, make_annotation
from .errors import AnnotationError, ReplayToolError, WhatIfError
from .timeline import Timeline
from .whatif import play_line
from .wording import Words, seat_name

ANALYSIS_FORMAT: Final = "canasta-replay/analysis/1"
ANALYZE_FORMAT: Final = "canasta-replay/analyze/1"
ANALYSIS_SUFFIX: Final = ".analysis.json"
ANALYST: Final = "analysis"  # the author of the annotations the analysis writes
MAX_FILE_SIZE: Final = 64 << 20
SAVE_EVERY: Final = 5.0  # seconds between saves of the analysis file during a run


class AnalysisFileError(ReplayToolError):
    """The analysis file beside the log is malformed or belongs to another game."""


def analysis_path(log_path: str | os.PathLike[str]) -> Path:
    return Path(os.fspath(log_path) + ANALYSIS_SUFFIX)


# --------------------------------------------------------------------------- the file


class AnalysisFile:
    """The decisions analysed so far, by record, bound to one log."""

    def __init__(self, timeline: Timeline, decisions: dict[int, dict[str, Any]] | None = None):
        self.timeline = timeline
        self.decisions: dict[int, dict[str, Any]] = decisions or {}

    def add(self, result: DecisionResult, task: DecisionTask, analysed: str) -> dict[str, Any]:
        step = self.timeline.steps[result.record]
        entry = {
            **result_to_dict(result),
            "record_hash": step.hash.hex(),
            "hand": step.hand,
            "turn": step.action_turn,
            "mark": mark_for(self.timeline.game.kind, result.loss),
            "seed": task.seed,
            "simulations": task.simulations,
            "budget": None if task.simulations is not None else task.budget,
            "analysed": analysed,
        }
        self.decisions[result.record] = entry
        return entry

    def to_dict(self) -> dict[str, Any]:
        timeline = self.timeline
        return {
            "format": ANALYSIS_FORMAT,
            "log": {
                "header_hash": timeline.header_hash.hex(),
                "table": timeline.header.table.hex(),
            },
            "decisions": [self.decisions[r] for r in sorted(self.decisions)],
        }

    def save(self, path: Path) -> None:
        """Written whole, then moved into place: a crash never leaves half a file."""
        temporary = path.with_name(path.name + ".tmp")
        with open(temporary, "w", encoding="utf-8") as out:
            json.dump(self.to_dict(), out, indent=1, ensure_ascii=False)
            out.write("\n")
        os.replace(temporary, path)


def load_analysis(path: Path, timeline: Timeline) -> AnalysisFile:
    """The analysis kept beside the log (empty if there is none); refuse another game's."""
    try:
        with open(path, "rb") as kept:
            data = kept.read(MAX_FILE_SIZE + 1)
    except FileNotFoundError:
        return AnalysisFile(timeline)
    except OSError as e:
        raise AnalysisFileError(f"The analysis file {path} cannot be read: {e.strerror}.") from None
    try:
        if len(data) > MAX_FILE_SIZE:
            raise ValueError(f"it is over {MAX_FILE_SIZE} bytes")
        decoded = json.loads(data.decode("utf-8"))
        if not isinstance(decoded, dict) or decoded.get("format") != ANALYSIS_FORMAT:
            raise ValueError(f"its format is not {ANALYSIS_FORMAT}")
        if decoded["log"]["header_hash"] != timeline.header_hash.hex():
            raise AnalysisFileError(
                f"The analysis file {path} belongs to another game (its header hash differs "
                "from this log's): move it away or use --again."
            )
        decisions: dict[int, dict[str, Any]] = {}
        for entry in decoded["decisions"]:
            record = entry["record"]
            if not isinstance(record, int) or not 0 <= record <= timeline.last_record:
                raise ValueError(f"record {record!r} is not a record of this log")
            if entry["record_hash"] != timeline.steps[record].hash.hex():
                raise AnalysisFileError(
                    f"The analysis file {path} names record {record} with another hash than "
                    "this log's: move it away or use --again."
                )
            result_from_dict(entry)  # every field it needs is there and of its type
            decisions[record] = entry
    except AnalysisFileError:
        raise
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
        raise AnalysisFileError(
            f"The analysis file {path} is malformed ({e}): move it away or use --again."
        ) from None
    return AnalysisFile(timeline, decisions)


# --------------------------------------------------------------------------- running


def run_tasks(
    tasks: Sequence[DecisionTask],
    jobs: int,
    on_done: Callable[[DecisionTask, DecisionResult], None],
) -> None:
    """Analyse every task, in ``jobs`` worker processes when more than one; ``on_done`` is
    called in this process as each finishes (in any order). An interrupt stops the workers."""
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            on_done(task, analyse(task))
        return
    # the workers leave Ctrl-C to this process, which stops handing out work, lets the running
    # decisions finish and keeps what is done
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_leave_interrupts_to_parent)
    try:
        futures: dict[Future[DecisionResult], DecisionTask] = {
            pool.submit(analyse, task): task for task in tasks
        }
        for future in as_completed(futures):
            on_done(futures[future], future.result())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _leave_interrupts_to_parent() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Saver:
    """Saves the analysis file at most every ``SAVE_EVERY`` seconds while results arrive."""

    def __init__(self, analysis: AnalysisFile, path: Path, clock: Callable[[], float]) -> None:
        self.analysis, self.path, self.clock = analysis, path, clock
        self.saved_at = clock()

    def result(self, task: DecisionTask, result: DecisionResult, analysed: str) -> None:
        self.analysis.add(result, task, analysed)
        if self.clock() - self.saved_at >= SAVE_EVERY:
            self.save()

    def save(self) -> None:
        self.analysis.save(self.path)
        self.saved_at = self.clock()


def now() -> float:
    return time.monotonic()


# --------------------------------------------------------------------------- annotations


def analysis_annotations(timeline: Timeline, entries: Iterable[dict[str, Any]]) -> list[Annotation]:
    """One annotation by ``analysis`` per marked decision: the mark, the loss in a sentence, the
    best move as a what-if line the engine played instead of the move, and the numbers."""
    header = timeline.header
    notes = []
    for entry in entries:
        if entry["mark"] is None:
            continue
        record = entry["record"]
        tried = len(entry["candidates"])
        comment = (
            f"Loses {entry['loss']:.0f} points: {seat_name(header, entry['seat'])}'s side "
            f"expects {entry['played_value']:+.0f} after '{entry['played']}' and "
            f"{entry['best_value']:+.0f} after '{entry['best']}' (best of {tried} moves tried "
            f"over {entry['deals']} sampled deals)."
        )
        try:
            line = play_line(timeline, record, [entry["best"]], instead=True)
        except (WhatIfError, ReplayToolError):
            line = None  # cannot happen for a move the engine listed; the comment still stands
        evaluation = {
            "seat": entry["seat"],
            "played": entry["played"],
            "played_value": float(entry["played_value"]),
            "best": entry["best"],
            "best_value": float(entry["best_value"]),
            "loss": float(entry["loss"]),
            "deals": entry["deals"],
        }
        notes.append(
            make_annotation(
                timeline,
                record,
                author=ANALYST,
                created=entry["analysed"],
                comment=comment,
                glyph=entry["mark"],
                line=line,
                evaluation=evaluation,
            )
        )
    return notes


def replace_analysis_annotations(annotations: AnnotationSet, notes: Sequence[Annotation]) -> None:
    """The analysis's annotations in place of the ones an earlier run wrote (people's stay)."""
    annotations.annotations = [
        a for a in annotations.annotations if not (a.author == ANALYST and a.evaluation)
    ]
    for note in notes:
        with contextlib.suppress(AnnotationError):  # the same note twice: already there
            annotations.add(note)


# --------------------------------------------------------------------------- the summary


def seat_summaries(timeline: Timeline, entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per seat with decisions: how many, the average and total loss, the marks, the three
    costliest moves."""
    summaries = []
    for seat in sorted({e["seat"] for e in entries}):
        mine = [e for e in entries if e["seat"] == seat]
        losses = [float(e["loss"]) for e in mine]
        costliest = sorted(mine, key=lambda e: (-float(e["loss"]), e["record"]))[:3]
        summaries.append(
            {
                "seat": seat,
                "name": timeline.header.seats[seat].name,
                "decisions": len(mine),
                "average_loss": round(sum(losses) / len(losses), 1),
                "total_loss": round(sum(losses), 1),
                "marks": {m: sum(1 for e in mine if e["mark"] == m) for m in MARKS},
                "costliest": [
                    {
                        key: e[key]
                        for key in ("record", "hand", "turn", "played", "best", "loss", "mark")
                    }
                    for e in costliest
                    if float(e["loss"]) > 0
                ],
            }
        )
    return summaries


def summary_lines(
    timeline: Timeline, summaries: Sequence[dict[str, Any]], tr: Translator | None = None
) -> list[str]:
    """Each seat's decisions, average loss and marks, and its costliest moves, in the reader's
    language (``tr``; English without it)."""
    w = Words(tr)
    _ = w.tr.gettext
    header, game = timeline.header, timeline.game
    lines = []
    for summary in summaries:
        marks = ", ".join(f"{summary['marks'][m]} {m}" for m in MARKS)
        n = int(summary["decisions"])
        said = w.tr.ngettext(
            "{seat}: {n} decision, average loss {loss} points; {marks}",
            "{seat}: {n} decisions, average loss {loss} points; {marks}",
            n,
        )
        lines.append(
            said.format(
                seat=w.seat(header, summary["seat"]),
                n=n,
                loss=f"{summary['average_loss']:.1f}",
                marks=marks,
            )
        )
        for costly in summary["costliest"]:
            where = _("record {record}").format(record=costly["record"])
            if costly["hand"] is not None and costly["turn"] is not None:
                turn = _("turn {turn}").format(turn=shown_number(costly["turn"]))
                where += f" ({w.hand(game, costly['hand'])}, {turn})"
            loses = _("'{played}' loses {loss} to '{best}'").format(
                played=costly["played"], loss=f"{costly['loss']:.0f}", best=costly["best"]
            )
            lines.append(f"  {costly['mark'] or '  '} {where}: {loses}")
    return lines
