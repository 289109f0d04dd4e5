"""The ``canasta-replay`` command: audit, show, annotate and export canasta-net game logs.

This module only wires options to the modules that do the work; docs/replay.md describes every
command, its output and its exit statuses.
"""

from __future__ import annotations

import getpass
import json
import os
import sys
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Final, NoReturn, TypeVar

import click

from canasta_net import __version__
from canasta_net.i18n import N_, current
from canasta_net.log.records import shown_number
from canasta_net.safe_text import safe_lines, safe_text
from canasta_net.ui.command_language import HELP_VALUES, LocalizedGroup, lang_option

from .activity import activity_lines
from .analysis import DEFAULT_SIMULATIONS, DecisionResult, DecisionTask, decision_tasks
from .analysis_run import (
    ANALYST,
    ANALYZE_FORMAT,
    AnalysisFile,
    Saver,
    analysis_annotations,
    analysis_path,
    load_analysis,
    now,
    replace_analysis_annotations,
    run_tasks,
    seat_summaries,
    summary_lines,
)
from .annotations import (
    AnnotationSet,
    load_annotations,
    make_annotation,
    parse_cards,
    parse_glyph,
    save_annotations,
    sidecar_path,
)
from .audit import AUDIT_FORMAT, AuditReport
from .audit_runner import audit_paths
from .compare import Comparison, compare_copies, read_copy_path
from .errors import ReplayToolError, UnreadableLog
from .export_html import render_html
from .export_json import build_export, visible_annotations
from .export_text import render_text
from .locate import locate
from .render import render_annotation, render_step, worded_outcome
from .stepper import HELP, Stepper
from .timeline import Timeline, load_timeline
from .verdict_words import worded_comparison, worded_copy_line, worded_summary
from .views import ALL, PUBLIC, SEAT, Perspective
from .whatif import play_line, split_line
from .wording import Words, count, hand_noun

# the default put into the --simulations help after translating it (``localize_command``)
HELP_VALUES["simulations"] = str(DEFAULT_SIMULATIONS)

F = TypeVar("F", bound=Callable[..., Any])


class ReplayGroup(LocalizedGroup):
    """``canasta-replay``'s commands, with the other spelling of one of them understood:
    ``analyse`` runs ``analyze`` (the docs say "analyse"; the help lists the command once)."""

    ALIASES: ClassVar[dict[str, str]] = {"analyse": "analyze"}

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, self.ALIASES.get(cmd_name, cmd_name))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        # the command's own name in its usage lines and errors, whichever spelling was typed
        return (command.name if command is not None else name), command, rest


@click.group(
    cls=ReplayGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=N_("Audit, step through, annotate and export canasta-net game logs."),
)
@click.version_option(__version__, prog_name="canasta-replay")
@lang_option
def main() -> None:
    pass


def _fail(error: ReplayToolError) -> NoReturn:
    click.echo(current().gettext("Error: {message}").format(message=error), err=True)
    sys.exit(error.exit_code)


def _load(path: Path) -> Timeline:
    try:
        with open(path, "rb") as log_file:
            return load_timeline(log_file)
    except OSError as e:
        _fail(
            UnreadableLog(
                current()
                .gettext("The file {path} cannot be read: {reason}.")
                .format(path=path, reason=e.strerror or e)
            )
        )
    except ReplayToolError as e:
        _fail(e)


def _warn_if_invalid(timeline: Timeline) -> None:
    failure = timeline.failure
    if failure is not None:
        _ = current().gettext
        names = [seat.name for seat in timeline.header.seats]
        click.echo(
            _(
                "Warning: the log fails at record {record} [{code}]: {reason} Only the records "
                "before it are shown."
            ).format(
                record=failure.record, code=failure.code, reason=failure.worded_reason(names, _)
            ),
            err=True,
        )


def _perspective_options(function: F) -> F:
    function = click.option("--all", "face_up", is_flag=True, help=N_("Every card face up."))(
        function
    )
    function = click.option("--public", is_flag=True, help=N_("What a spectator sees."))(function)
    function = click.option(
        "--seat", type=click.IntRange(0), help=N_("What this seat could see (its hand only).")
    )(function)
    return function


def _perspective(
    timeline: Timeline, seat: int | None, public: bool, face_up: bool, default: str
) -> Perspective:
    _ = current().gettext
    if sum((seat is not None, public, face_up)) > 1:
        raise click.UsageError(_("Choose one of --seat, --public and --all."))
    if seat is not None:
        if seat >= len(timeline.header.seats):
            said = _("this table has seats 0 to {last}").format(last=len(timeline.header.seats) - 1)
            raise click.BadParameter(said, param_hint="--seat")
        return Perspective(SEAT, seat)
    if public:
        return Perspective(PUBLIC)
    if face_up:
        return Perspective(ALL)
    if default == SEAT and len(timeline.payload_seats) == 1:
        # a seat's own copy of the log: show it through that seat's eyes
        return Perspective(SEAT, next(iter(timeline.payload_seats)))
    return Perspective(ALL) if default == ALL else Perspective(PUBLIC)


_annotations_option = click.option(
    "--annotations",
    "annotations_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help=N_("The annotation file (default: FILE.annotations.json)."),
)


def _annotations(
    timeline: Timeline, log_path: Path, path: Path | None, *, creating: bool = False
) -> tuple[Path, AnnotationSet]:
    """The annotations for a log: its sidecar if there is one, or the file named (which must
    exist unless it is about to be created)."""
    where = path if path is not None else sidecar_path(log_path)
    must_exist = path is not None and not creating
    try:
        return where, load_annotations(where, timeline, must_exist=must_exist)
    except ReplayToolError as e:
        _fail(e)


def _locate(timeline: Timeline, text: str) -> int:
    try:
        return locate(timeline, text)
    except ReplayToolError as e:
        _fail(e)


# --------------------------------------------------------------------------- audit


@main.command(
    help=N_(
        "Re-check whole games: signatures, chain, deal, every card, action and "
        "score; then compare\nthe files that are copies of one table's log (the "
        "host's and the seats').\n\nExit status: 0 if every log is valid (or "
        "incomplete but valid as far as it goes) and the copies\nagree, 1 if any "
        "log is invalid or the copies prove the host signed two histories, 2 if "
        "any\nfile is not a log this program can read (the highest wins)."
    ),
)
@lang_option
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--json", "as_json", is_flag=True, help=N_("Print the reports as JSON."))
@click.option(
    "--jobs",
    "-j",
    default=1,
    show_default=True,
    type=click.IntRange(1),
    help=N_("Audit this many files at once, in worker processes."),
)
@click.option(
    "--require-complete",
    is_flag=True,
    help=N_(
        "Treat a log cut before the match's end as a failure (exit status 1); a match that "
        "finished or was stopped by agreement passes."
    ),
)
@click.option(
    "--strict",
    is_flag=True,
    help=N_(
        "Treat a log holding any claim it cannot prove (a forfeit, a stop on the host's word "
        "alone) as a failure (exit status 1)."
    ),
)
@click.option(
    "--copies",
    "copies_only",
    is_flag=True,
    help=N_(
        "The files are copies of one table's log: refuse them (exit status 2) if they are not."
    ),
)
@click.option(
    "--exposure",
    type=click.Path(dir_okay=False, path_type=str),
    help=N_(
        "Check this seat's kept exposure of a wrong sealed key against the log (one log only). "
        "By default the file LOG.exposure beside each log is checked if there is one."
    ),
)
def audit(
    files: tuple[str, ...],
    as_json: bool,
    jobs: int,
    require_complete: bool,
    strict: bool,
    copies_only: bool,
    exposure: str | None,
) -> None:
    paths = list(files)
    if exposure is not None and len(paths) != 1:
        said = current().gettext("--exposure goes with exactly one log file.")
        raise click.UsageError(said)
    if sys.stderr.isatty() and len(paths) > 1:
        with click.progressbar(length=len(paths), label="auditing", file=sys.stderr) as bar:
            reports = audit_paths(paths, jobs, lambda report: bar.update(1))
    else:
        reports = audit_paths(paths, jobs, exposure=exposure)
    comparisons = _compare(reports, copies_only)
    codes = [_exit_code(report, require_complete, strict) for report in reports]
    status = max(codes + [c.exit_code for c in comparisons], default=0)
    if as_json:
        data = {
            "format": AUDIT_FORMAT,
            "exit_code": status,
            "files": [report.to_dict() for report in reports],
            "comparisons": [comparison.to_dict() for comparison in comparisons],
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for report in reports:
            click.echo(_audit_text(report))
        for comparison in comparisons:
            click.echo(_comparison_text(comparison))
    if strict:
        tr = current()
        for report in reports:
            if report.claims and report.exit_code == 0:
                n = len(report.claims)
                said = tr.ngettext(
                    "{file}: --strict: the log holds {n} claim it cannot prove (first: record "
                    "{record}, {claim}).",
                    "{file}: --strict: the log holds {n} claims it cannot prove (first: record "
                    "{record}, {claim}).",
                    n,
                )
                first = report.claims[0]
                click.echo(
                    said.format(
                        file=report.file, n=n, record=first["record"], claim=first["claim"]
                    ),
                    err=True,
                )
    sys.exit(status)


def _compare(reports: list[AuditReport], copies_only: bool) -> list[Comparison]:
    """Compare the copies of each table among the files (with ``--copies``: all of them)."""
    if copies_only:
        return [compare_copies([read_copy_path(report.file) for report in reports])]
    tables: dict[str, list[str]] = {}
    for report in reports:
        if report.log is not None:
            tables.setdefault(report.log["table"], []).append(report.file)
    return [
        compare_copies([read_copy_path(path) for path in paths])
        for paths in tables.values()
        if len(paths) > 1
    ]


def _comparison_text(comparison: Comparison) -> str:
    """The comparison for people in the reader's language (``--lang``), worded from its data
    (``verdict_words.worded_comparison``); a refusal's reason as ``compare`` words it."""
    _ = current().gettext
    verdict = _(VERDICT_WORDS.get(comparison.verdict, comparison.verdict.upper()))
    if comparison.table:
        head = _("Copies of table {table}: {verdict}.").format(
            table=comparison.table, verdict=verdict
        )
    else:
        head = _("Copies of the files: {verdict}.").format(verdict=verdict)
    worded = worded_comparison(comparison, current())
    summary, reasons, notes = worded or (
        comparison.summary,
        [a["reason"] for a in comparison.altered],
        comparison.notes,
    )
    lines = [f"{head} {summary}"]
    lines += ["  " + _("Altered copy: {reason}").format(reason=reason) for reason in reasons]
    lines += ["  " + _("Note: {note}").format(note=note) for note in notes]
    return "\n".join(lines)


def _exit_code(report: AuditReport, require_complete: bool, strict: bool = False) -> int:
    if require_complete and report.verdict == "incomplete":
        return 1
    if strict and report.claims and report.exit_code == 0:
        return 1
    return report.exit_code


# The verdicts as a reader reads them (the JSON report keeps the codes: ``valid``...).
VERDICT_WORDS: Final = {
    "valid": N_("VALID"),
    "incomplete": N_("INCOMPLETE"),
    "invalid": N_("INVALID"),
    "unreadable": N_("UNREADABLE"),
    "unsupported": N_("UNSUPPORTED"),
    "refused": N_("REFUSED"),  # copies compared: not comparable
}


def _audit_text(report: AuditReport) -> str:
    """The verdict on one file for people, in the process's person's language (``--lang``)."""
    _ = current().gettext
    english = current().lang == "en"
    log = report.log
    names = None if log is None else [str(s["name"]) for s in log["seats"]]
    verdict = _(VERDICT_WORDS.get(report.verdict, report.verdict.upper()))
    failure = report.failure
    summary = report.summary
    if failure is not None and not failure.unreadable and not english:
        summary = _("Invalid at record {record} [{code}]: {reason}").format(
            record=failure.record, code=failure.code, reason=failure.worded_reason(names, _)
        )
    elif failure is None and log is not None and not english:
        summary = worded_summary(report, current())
    lines = [f"{report.file}: {verdict}. {summary}"]
    if log is not None and report.failure is None and not english:
        lines.append(worded_copy_line(report, current()))
    elif log is not None and report.failure is None:
        copy = report.copy.get("kind")
        held = report.copy.get("payload_seats") or ["?"]
        whose = {
            "host": "the host's copy (every private payload)",
            "seat": f"seat {held[0]}'s own copy",
            "public": "a copy without private payloads",
            "blind": "a blind-dealt log (every copy holds the same records)",
        }.get(str(copy), f"a copy with the payloads of seats {report.copy.get('payload_seats')}")
        finished = sum(1 for hand in report.hands if hand["checkpoint_signers"])
        lines.append(
            f"  {log['variant']}, {report.records} records, {whose}; "
            f"{count(finished, hand_noun(str(log.get('game'))))} closed, each checkpoint signed "
            "by every seat."
        )
    if failure is not None and not failure.unreadable and log is not None:
        if failure.seat is not None:
            lines.append("  " + _("Seat concerned: {seat}.").format(seat=_seat(log, failure.seat)))
        responsibility = failure.worded_responsibility(names, _)
        lines.append("  " + _("Responsibility: {text}").format(text=responsibility))
    if log is not None and report.activity is not None:
        lines.extend(activity_lines(report.activity, [s["name"] for s in log["seats"]]))
    for exposure in report.exposures:
        lines.extend(_exposure_lines(log, exposure))
    for warning in report.warnings:
        lines.append("  " + _("Warning: {text}").format(text=_(warning)))
    return "\n".join(safe_text(line) for line in lines)


def _exposure_lines(log: dict[str, Any] | None, exposure: dict[str, Any]) -> list[str]:
    """A seat's kept exposure checked against the log: whom it proves deviating, or why not."""
    _ = current().gettext
    file = exposure["file"]
    if not exposure["proven"] or log is None:
        return [
            "  "
            + _("Exposure {file}: refused: {reason}").format(file=file, reason=exposure["reason"])
        ]
    lines = [
        "  "
        + _(
            "Exposure {file}: {accuser} accuses; it proves that {seat} deviated [{code}]: {reason}"
        ).format(
            file=file,
            accuser=_seat(log, exposure["accuser"]),
            seat=_seat(log, exposure["seat"]),
            code=exposure["code"],
            reason=exposure["reason"],
        )
    ]
    if exposure["contradicts_forfeit"]:
        lines.append("  " + _("The log's forfeit names another seat: its outcome does not stand."))
    return lines


def _seat(log: dict[str, Any], seat: int) -> str:
    _ = current().gettext
    seats = log["seats"]
    if 0 <= seat < len(seats):
        return _("seat {seat} ({name})").format(seat=seat, name=seats[seat]["name"])
    return _("seat {seat}").format(seat=seat)


# --------------------------------------------------------------------------- show


@main.command(
    help=N_(
        "Step through a game, or print the table at one position (--at).\n\n"
        "Without --at, on a terminal, an interactive stepper starts (type ? for "
        "its commands)."
    ),
)
@lang_option
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@_perspective_options
@click.option(
    "--at",
    "at",
    # FORMS, written out so that the catalogue has the whole sentence (a test checks they agree)
    help=N_(
        "Show the table at this position: a record number, hand:H, hand:H/turn:T (hands and "
        "turns count from 1), or end."
    ),
)
@_annotations_option
def show(
    file: Path,
    seat: int | None,
    public: bool,
    face_up: bool,
    at: str | None,
    annotations_path: Path | None,
) -> None:
    timeline = _load(file)
    perspective = _perspective(timeline, seat, public, face_up, SEAT)
    _, annotation_set = _annotations(timeline, file, annotations_path)
    shown, _ = visible_annotations(timeline, annotation_set, perspective)
    _warn_if_invalid(timeline)
    if at is not None:
        step = timeline.steps[_locate(timeline, at)]
        click.echo(render_step(timeline, step, perspective, shown))
        return
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        click.echo(render_step(timeline, timeline.steps[-1], perspective, shown))
        return
    stepper = Stepper(timeline, perspective, shown)
    click.echo(stepper.render())
    click.echo(current().gettext("(type ? for help, q to quit)"))
    while True:
        try:
            line = input("replay> ")
        except EOFError:
            break
        reply = stepper.execute(line)
        if reply.quit:
            break
        click.echo(safe_lines(reply.text))


show.help = (show.help or "") + "\n\n\b\n" + HELP


# --------------------------------------------------------------------------- annotate


@main.command(
    help=N_(
        "Annotate a record of a game: a comment, a glyph, cards, a what-if line "
        "checked by the\nengine. The annotations are kept beside the log, bound "
        "to it by hashes."
    ),
)
@lang_option
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--at",
    "at",
    help=N_(
        "The record to annotate: a record number, hand:H, hand:H/turn:T (hands and turns count "
        "from 1), or end."
    ),
)
@click.option("--comment", default="", help=N_("The comment."))
@click.option("--glyph", help=N_("!, ?, !!, ??, !? or ?! (or its NAG, $1 to $6)."))
@click.option(
    "--line", "line", help=N_('A what-if line from this position: "ACTION; ACTION; ...".')
)
@click.option(
    "--instead",
    is_flag=True,
    help=N_("The --line replaces the move of the record (played from the table before it)."),
)
@click.option("--cards", help=N_('Cards to highlight: "KH QS".'))
@click.option("--author", help=N_("Your name (default: your user name)."))
@click.option("--remove", "remove_id", help=N_("Remove the annotation with this id instead."))
@_annotations_option
def annotate(
    file: Path,
    at: str | None,
    comment: str,
    glyph: str | None,
    line: str | None,
    instead: bool,
    cards: str | None,
    author: str | None,
    remove_id: str | None,
    annotations_path: Path | None,
) -> None:
    timeline = _load(file)
    where, annotation_set = _annotations(timeline, file, annotations_path, creating=True)
    _ = current().gettext
    try:
        if remove_id is not None:
            if at is not None or comment or glyph or line or cards:
                raise click.UsageError(_("--remove takes no other annotation option."))
            removed = annotation_set.remove(remove_id)
            save_annotations(where, annotation_set)
            said = _("Removed annotation {id} (record {record}) from {path}.")
            click.echo(said.format(id=removed.id, record=removed.record, path=where))
            return
        if at is None:
            raise click.UsageError(_("Say which record to annotate with --at (or use --remove)."))
        record = locate(timeline, at)
        if instead and line is None:
            raise click.UsageError(_("--instead says how to play a --line: give one."))
        what_if = (
            play_line(timeline, record, split_line(line), instead=instead)
            if line is not None
            else None
        )
        annotation = make_annotation(
            timeline,
            record,
            author=author if author is not None else _user_name(),
            created=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            comment=comment,
            glyph=None if glyph is None else parse_glyph(glyph),
            cards=() if cards is None else parse_cards(cards),
            line=what_if,
        )
        annotation_set.add(annotation)
        save_annotations(where, annotation_set)
    except ReplayToolError as e:
        _fail(e)
    except OSError as e:
        said = _("The annotation file {path} cannot be written: {problem}.")
        _fail(ReplayToolError(said.format(path=where, problem=e.strerror)))
    said = _("Added annotation {id} to record {record} in {path}.")
    click.echo(said.format(id=annotation.id, record=record, path=where))
    if what_if is not None:
        outcome = worded_outcome(what_if.outcome, timeline, current())
        what = _("What-if: {outcome}").format(outcome=outcome or what_if.outcome["summary"])
        click.echo("  " + what)


def _user_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return os.environ.get("USER", "anonymous")


@main.command(
    name="annotations",
    help=N_("List a game's annotations (after checking that they belong to this log)."),
)
@lang_option
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help=N_("Print the annotation file's JSON."))
@_annotations_option
def list_annotations(file: Path, as_json: bool, annotations_path: Path | None) -> None:
    timeline = _load(file)
    where, annotation_set = _annotations(timeline, file, annotations_path)
    if as_json:
        click.echo(json.dumps(annotation_set.to_dict(), indent=2, ensure_ascii=False))
        return
    _ = current().gettext
    if not annotation_set.annotations:
        click.echo(_("No annotations ({path}).").format(path=where))
        return
    w = Words(current())
    previous = None
    for annotation in annotation_set.annotations:
        if annotation.record != previous:
            step = timeline.steps[annotation.record]
            place = _("record {record}").format(record=annotation.record)
            if step.hand is not None:
                place += ", " + w.hand(timeline.game, step.hand)
                if step.turn is not None:
                    place += " " + _("turn {turn}").format(turn=shown_number(step.turn))
            click.echo(f"{place} ({step.kind}):")
            previous = annotation.record
        click.echo("\n".join(render_annotation(annotation, current(), timeline)))


# --------------------------------------------------------------------------- export


@main.command(
    help=N_(
        "Export a whole game: a readable history, its data as JSON, or one "
        "self-contained web page.\n\nBy default every card is face up; --seat S "
        "exports only what seat S could see."
    ),
)
@lang_option
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "html"]),
    default="text",
    show_default=True,
    help=N_("text: a hand history; json: the data; html: a page that replays it."),
)
@_perspective_options
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help=N_("Write here instead of to standard output."),
)
@click.option("--no-annotations", is_flag=True, help=N_("Leave the annotations out."))
@_annotations_option
def export(
    file: Path,
    fmt: str,
    seat: int | None,
    public: bool,
    face_up: bool,
    output: Path | None,
    no_annotations: bool,
    annotations_path: Path | None,
) -> None:
    timeline = _load(file)
    perspective = _perspective(timeline, seat, public, face_up, ALL)
    annotation_set = None
    if not no_annotations:
        _, annotation_set = _annotations(timeline, file, annotations_path)
    _warn_if_invalid(timeline)
    # the JSON export is the same in every language; the text and the page are the reader's
    data = build_export(timeline, perspective, annotation_set, None if fmt == "json" else current())
    if fmt == "json":
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    elif fmt == "html":
        text = render_html(data)
    else:
        text = render_text(data)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as e:
        _fail(ReplayToolError(f"{output} cannot be written: {e.strerror}."))
    click.echo(f"Wrote {output} ({fmt}, {perspective.describe(timeline.header)}).", err=True)


# --------------------------------------------------------------------------- analyze


@main.command(
    help=N_(
        "Rate every decision of a game with the searching bot, from what the "
        "seat could see.\n\nEach decision with a choice gets the move played, the "
        "best moves found and their values in\nexpected points for the seat's "
        "side, the loss and a mark (?!, ?, ??: docs/analysis.md).\nMarked moves "
        'become annotations by "analysis" (with the best move as a what-if '
        "line), shown\nby show and export. Decisions analysed before "
        "(FILE.analysis.json) are skipped unless\n--again: an interrupted run "
        "continues where it stopped."
    ),
)
@lang_option
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seat", type=int, help=N_("Analyse this seat's decisions only."))
@click.option(
    "--all", "all_seats", is_flag=True, help=N_("Analyse every seat's decisions (default).")
)
@click.option(
    "--simulations",
    type=int,
    help=N_("Sampled deals a decision (default {simulations}; reproducible with --seed)."),
)
@click.option(
    "--budget",
    type=float,
    help=N_("Seconds a decision instead of a number of deals (results depend on the machine)."),
)
@click.option("--jobs", "-j", default=1, show_default=True, type=int, help=N_("Worker processes."))
@click.option("--seed", default=0, show_default=True, type=int, help=N_("The searches' seed."))
@click.option("--again", is_flag=True, help=N_("Analyse again the decisions analysed before."))
@click.option(
    "--json", "as_json", is_flag=True, help=N_("Print the decisions and summary as JSON.")
)
@_annotations_option
def analyze(
    file: Path,
    seat: int | None,
    all_seats: bool,
    simulations: int | None,
    budget: float | None,
    jobs: int,
    seed: int,
    again: bool,
    as_json: bool,
    annotations_path: Path | None,
) -> None:
    timeline = _load(file)
    tr = current()
    _ = tr.gettext
    if seat is not None and all_seats:
        _fail(ReplayToolError(_("Choose --seat or --all, not both.")))
    if seat is not None and not 0 <= seat < len(timeline.header.seats):
        said = _("--seat {seat}: this table has seats 0 to {last}.")
        _fail(ReplayToolError(said.format(seat=seat, last=len(timeline.header.seats) - 1)))
    if simulations is not None and budget is not None:
        _fail(ReplayToolError(_("Give --simulations or --budget, not both.")))
    if simulations is not None and not 1 <= simulations <= 10_000:
        said = _("--simulations {n}: give 1 to 10000 sampled deals.")
        _fail(ReplayToolError(said.format(n=simulations)))
    if budget is not None and not 0 < budget <= 600:
        said = _("--budget {budget}: give more than 0 and at most 600 seconds.")
        _fail(ReplayToolError(said.format(budget=budget)))
    if jobs < 1:
        _fail(
            ReplayToolError(_("--jobs {jobs}: give at least 1 worker process.").format(jobs=jobs))
        )
    _warn_if_invalid(timeline)
    where, annotation_set = _annotations(timeline, file, annotations_path, creating=True)
    kept_at = analysis_path(file)
    try:
        kept = AnalysisFile(timeline) if again else load_analysis(kept_at, timeline)
    except ReplayToolError as e:
        _fail(e)
    if simulations is None and budget is None:
        simulations = DEFAULT_SIMULATIONS
    tasks = decision_tasks(
        timeline,
        None if seat is None else [seat],
        seed=seed,
        simulations=simulations,
        budget=budget or 0.0,
    )
    if not tasks:
        said = (
            _(
                "{file} holds no decision to analyse (no move with a choice in a hand this copy "
                "of the log replays)."
            )
            if seat is None
            else _(
                "{file} holds no decision to analyse for seat {seat} (no move with a choice in a "
                "hand this copy of the log replays)."
            )
        )
        _fail(ReplayToolError(said.format(file=file, seat=seat)))
    pending = [task for task in tasks if task.record not in kept.decisions]
    saver = Saver(kept, kept_at, now)
    stopped = False

    def done(task: DecisionTask, result: DecisionResult) -> None:
        saver.result(task, result, _timestamp())

    try:
        if sys.stderr.isatty() and pending and not as_json:
            with click.progressbar(
                length=len(pending), label=_("analysing"), file=sys.stderr, show_pos=True
            ) as bar:

                def done_with_bar(task: DecisionTask, result: DecisionResult) -> None:
                    done(task, result)
                    bar.update(1)

                run_tasks(pending, jobs, done_with_bar)
        else:
            run_tasks(pending, jobs, done)
    except (KeyboardInterrupt, BrokenProcessPool):
        # Ctrl-C (the workers ignore it, unless it reached one before it was ready): keep
        # what is done
        stopped = True
    try:
        saver.save()
        replace_analysis_annotations(
            annotation_set, analysis_annotations(timeline, kept.to_dict()["decisions"])
        )
        save_annotations(where, annotation_set)
    except OSError as e:
        said = _("The analysis cannot be written beside {file}: {problem}.")
        _fail(ReplayToolError(said.format(file=file, problem=e.strerror)))
    chosen = [kept.decisions[t.record] for t in tasks if t.record in kept.decisions]
    summaries = seat_summaries(timeline, chosen)
    if stopped:
        said = _(
            "Stopped: {done} of {all} decisions analysed, kept in {path}; the same command "
            "continues."
        )
        click.echo(said.format(done=len(chosen), all=len(tasks), path=kept_at), err=True)
        sys.exit(130)
    if as_json:
        data = {
            "format": ANALYZE_FORMAT,
            "file": str(file),
            "analysis": str(kept_at),
            "annotations": str(where),
            "decisions": chosen,
            "seats": summaries,
        }
        click.echo(json.dumps(data, indent=1, ensure_ascii=False))
        return
    skipped = len(tasks) - len(pending)
    analysed = tr.ngettext("{n} decision", "{n} decisions", len(pending)).format(n=len(pending))
    if skipped:
        said = _(
            "Analysed {decisions} ({skipped} analysed before, kept); marked moves written as "
            'annotations by "{analyst}" to {path}.'
        )
    else:
        said = _(
            'Analysed {decisions}; marked moves written as annotations by "{analyst}" to {path}.'
        )
    click.echo(said.format(decisions=analysed, skipped=skipped, analyst=ANALYST, path=where))
    for line in summary_lines(timeline, summaries, tr):
        click.echo(safe_text(line))


def _timestamp() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
