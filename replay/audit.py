"""Audit a whole game log: a verdict, and for a bad log the first bad record and who is to blame.

The audit is the container verification and the engine's replay (``LogCheck``) plus what only a
whole-log view can say: whether the match finished or the log stops part-way (and where), whether
every finished hand's checkpoint carries every seat's signature (checked as each checkpoint is
read), the truncation notice, whose copy of the log this is, and a warning for insecure deals.

Verdicts and exit statuses: ``valid`` (0) everything checks and the match finished, or was
stopped by agreement (``ending``: ``finished``, ``stopped``); ``incomplete`` (0) everything checks
as far as the log goes but the log is cut before the match's end (``ending``: ``cut``);
``invalid`` (1) a record fails; ``unreadable`` or ``unsupported`` (2) the file is not a log this
program can check. Records whose truth rests on the host's word alone are listed as ``claims``.
The JSON form is documented in ``docs/replay.md`` (format ``canasta-replay/audit/1``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from canasta_net.games import CANASTA
from canasta_net.i18n import N_
from canasta_net.identity import fingerprint
from canasta_net.log import Header, LogSource
from canasta_net.log.exposure import ExposureFileError, exposure_path, read_exposure
from canasta_net.log.records import shown_number
from canasta_net.log.replay import Claim, HandReplay, Replayer, exposure_verdict_at

from .activity import ActivityCounter
from .checking import LogCheck
from .findings import STAGE_FORMAT, UNSUPPORTED_CODES, Failure, io_failure
from .verdict_words import STOP_WORDS
from .wording import capital, count, hand_name, hand_noun, result_text, seat_name, side_names

AUDIT_FORMAT: Final = "canasta-replay/audit/1"

VALID: Final = "valid"
INCOMPLETE: Final = "incomplete"
INVALID: Final = "invalid"
UNREADABLE: Final = "unreadable"
UNSUPPORTED: Final = "unsupported"

EXIT_CODES: Final = {VALID: 0, INCOMPLETE: 0, INVALID: 1, UNREADABLE: 2, UNSUPPORTED: 2}

# how a match that checks ends in its log: its end (``match-end``, or a final checkpoint every seat
# signed that shows the match won), a stop by agreement (``match-stop``), or neither
FINISHED: Final = "finished"
STOPPED: Final = "stopped"
CUT: Final = "cut"


INSECURE_WARNING: Final = N_(
    "The deal used deterministic test seeds (the header says insecure): anyone can reproduce "
    "it, so this game proves nothing about the fairness of its deals."
)


@dataclass
class AuditReport:
    """The outcome of auditing one log file; :meth:`to_dict` is its documented JSON form."""

    file: str
    verdict: str
    summary: str
    log: dict[str, Any] | None = None  # the header's facts (see _header_dict)
    records: int = 0
    bytes: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    copy: dict[str, Any] = field(default_factory=dict)
    hands: list[dict[str, Any]] = field(default_factory=list)
    match: dict[str, Any] = field(default_factory=dict)
    incomplete: dict[str, Any] | None = None
    ending: str | None = None  # finished, stopped or cut (None: the log does not check)
    claims: list[dict[str, Any]] = field(default_factory=list)  # the host's word alone
    truncated: dict[str, int] | None = None
    warnings: list[str] = field(default_factory=list)
    #: per seat: moves, thinking time, disconnections, stand-in turns (``replay/activity.py``)
    activity: dict[str, Any] | None = None
    failure: Failure | None = None
    #: the seats' kept exposures checked against the log (``check_exposure``)
    exposures: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    #: facts kept for wording the summary in a reader's language (``verdict_words.py``), not in
    #: the JSON form: ``sides`` (each side's seats), ``turn`` (where a log stops in play),
    #: ``by_checkpoint`` (the result proven by the last checkpoint)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """The verdict's status; at least 1 where an exposure is refused, or proves another
        seat deviated than the one the log's forfeit names (the log's outcome does not stand)."""
        code = EXIT_CODES[self.verdict]
        if any(not e["proven"] or e["contradicts_forfeit"] for e in self.exposures):
            code = max(code, 1)
        return code

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "summary": self.summary,
            "log": self.log,
            "copy": self.copy or None,
            "records": self.records,
            "bytes": self.bytes,
            "kinds": self.kinds,
            "hands": self.hands,
            "match": self.match or None,
            "incomplete": self.incomplete,
            "ending": self.ending,
            "claims": self.claims,
            "truncated": self.truncated,
            "warnings": self.warnings,
            "activity": self.activity,
            "failure": None if self.failure is None else self.failure.to_dict(),
            "seconds": round(self.seconds, 4),
        } | ({"exposures": self.exposures} if self.exposures else {})


def _header_dict(header: Header, header_hash: bytes) -> dict[str, Any]:
    return {
        "format": header.format,
        "software": header.software,
        "table": header.table.hex(),
        "header_hash": header_hash.hex(),
        "game": game_kind(header),
        "variant": header.variant,
        "host": header.host,
        "insecure": header.insecure,
        "created": header.created,
        "seats": [
            {"seat": n, "name": s.name, "bot": s.bot, "fingerprint": fingerprint(s.key)}
            for n, s in enumerate(header.seats)
        ],
    }


def game_kind(header: Header) -> str:
    """The game a log's header names (logs written before there were two games: Canasta)."""
    kind = header.fields.get("game", CANASTA)
    return kind if isinstance(kind, str) else CANASTA


def unreadable_report(file: str, reason: str) -> AuditReport:
    """The report for a file that cannot even be opened or read."""
    return AuditReport(file, UNREADABLE, reason, failure=io_failure(reason))


def audit_source(source: LogSource, file: str = "", exposures: Sequence[str] = ()) -> AuditReport:
    """Audit one log (a file object, bytes or chunks); never raises for a bad log.

    ``exposures``: files holding a seat's kept exposure (``canasta_net.log.exposure``), each
    checked against the log (:func:`check_exposure`)."""
    start = time.perf_counter()
    check = LogCheck(source)
    activity = ActivityCounter()
    heads: set[bytes] = set()
    for checked in check:
        heads.add(checked.record.hash)
        if checked.record.index == 0 and check.header is not None:
            activity.start(check.header)
        activity.feed(checked.record)
    report = _report(check, file)
    if check.header is not None:
        report.activity = activity.to_dict()
    for name in exposures:
        report.exposures.append(check_exposure(check, heads, name))
    report.seconds = time.perf_counter() - start
    return report


def audit_path(path: str, exposure: str | None = None) -> AuditReport:
    """Audit the log file at ``path`` (what each worker of ``audit --jobs`` runs), with the
    exposure file ``exposure`` or, by default, the one kept beside the log if there is one."""
    if exposure is None:
        beside = exposure_path(path)
        exposures = [str(beside)] if os.path.exists(beside) else []
    else:
        exposures = [exposure]
    try:
        with open(path, "rb") as log_file:
            return audit_source(log_file, path, exposures)
    except OSError as e:
        return unreadable_report(path, f"The file {path} cannot be read: {e.strerror or e}.")


def check_exposure(check: LogCheck, heads: Collection[bytes], name: str) -> dict[str, Any]:
    """A seat's kept exposure (the file ``name``) checked against the log just checked: whom it
    proves deviating (``seat``: the sender of a wrong sealed key, or the accuser of a false
    accusation), or why it is refused; and whether that contradicts the log's forfeit."""
    found: dict[str, Any] = {
        "file": name,
        "proven": False,
        "accuser": None,
        "seat": None,
        "code": None,
        "reason": "",
        "contradicts_forfeit": False,
    }
    replayer = check.replayer
    try:
        act, asig = read_exposure(name)
        if check.failure is not None or replayer is None:
            raise ValueError("the log itself does not check, so no exposure can be checked on it")
        verdict = exposure_verdict_at(replayer, heads, act, asig)
    except (ExposureFileError, ValueError) as e:
        found["reason"] = str(e)
        return found
    assert replayer is not None
    forfeit = replayer.forfeit
    found.update(
        proven=True,
        accuser=verdict.accuser,
        seat=verdict.seat,
        code=verdict.code,
        reason=verdict.reason,
        contradicts_forfeit=forfeit is not None and forfeit[0] != verdict.seat,
    )
    return found


def _report(check: LogCheck, file: str) -> AuditReport:
    header, failure, replayer = check.header, check.failure, check.replayer
    log = None if header is None else _header_dict(header, check.header_hash)
    report = AuditReport(file, VALID, "", log, check.records, check.bytes)
    report.kinds = check.kinds
    if check.truncated is not None:
        t = check.truncated
        report.truncated = {"record": t.record_no, "offset": t.offset, "length": t.length}
    if header is not None and header.insecure:
        report.warnings.append(INSECURE_WARNING)
    if header is not None:
        report.copy = _copy_kind(check.payload_seats, len(header.seats), header.deal)
    if replayer is not None:
        report.hands = [_hand_dict(hand) for hand in replayer.hands]
        report.match = _match_dict(replayer)
    if failure is not None:
        report.failure = failure
        if failure.unreadable:
            report.verdict = UNSUPPORTED if failure.code in UNSUPPORTED_CODES else UNREADABLE
            report.summary = failure.reason
            if failure.stage == STAGE_FORMAT and failure.code not in UNSUPPORTED_CODES:
                report.summary = f"This is not a canasta-net log: {failure.reason}"
        else:
            report.verdict = INVALID
            report.summary = (
                f"Invalid at record {failure.record} [{failure.code}]: {failure.reason}"
            )
        return report
    assert replayer is not None and header is not None
    game = replayer.game
    report.details["sides"] = [
        [s for s in range(len(header.seats)) if game.team_of(s) == side]
        for side in range(game.teams)
    ]
    report.claims = [_claim_dict(header, claim) for claim in replayer.claims]
    if replayer.stop is not None:
        report.ending = STOPPED
        report.summary = "Valid: " + _stop_text(replayer)
    elif replayer.over:
        report.ending = FINISHED
        report.summary = "Valid: " + _result_text(replayer)
    elif _checkpoint_proves_the_end(replayer):
        report.ending = FINISHED
        report.details["by_checkpoint"] = True
        report.summary = (
            f"Valid: {_result_text(replayer)[:-1]}, as "
            f"{hand_name(replayer.game, replayer.hand_no - 1)}'s checkpoint, signed by every "
            "seat, proves (the log ends before its match-end record)."
        )
    else:
        report.ending = CUT
        report.verdict = INCOMPLETE
        report.incomplete = _where_it_stops(replayer)
        report.details["turn"] = report.incomplete.pop("turn", None)
        report.summary = "Incomplete (valid as far as it goes): " + report.incomplete["reason"]
    if check.truncated is not None:
        report.summary += (
            f" The file ends inside record {check.truncated.record_no} "
            f"({check.truncated.length} bytes at offset {check.truncated.offset}), as a crash "
            "while writing would leave it; the complete records before it were checked."
        )
    if report.claims:
        report.summary += " " + _claims_sentence(report.claims)
    return report


def _checkpoint_proves_the_end(replayer: Replayer) -> bool:
    """Whether a log that stops without ``match-end`` still proves the match's result: its last
    hand's checkpoint, signed by every seat, carries totals that end the match."""
    return (
        replayer.forfeit is None
        and replayer.match.result is not None
        and replayer.hand.stage()[0] == "not-started"
        and bool(replayer.hands)
        and len(replayer.hands[-1].checkpoint_signers) == len(replayer.header.seats)
    )


def _claim_dict(header: Header, claim: Claim) -> dict[str, Any]:
    return claim.to_dict() | {"claimant_name": seat_name(header, claim.claimant)}


def _claims_sentence(claims: list[dict[str, Any]]) -> str:
    said = "; ".join(
        f"record {c['record']} ({c['kind']}): {c['claim']}, on {c['claimant_name']}'s word"
        + (
            f", countersigned by seats {', '.join(map(str, c['countersigned']))}"
            if c["countersigned"]
            else ", countersigned by no seat"
        )
        for c in claims
    )
    return f"The log cannot prove {count(len(claims), 'claim')}: {said}."


def _stop_text(replayer: Replayer) -> str:
    stop = replayer.stop
    assert stop is not None
    game, header = replayer.game, replayer.header
    why = STOP_WORDS.get(stop.reason, f"reason {stop.reason!r}")
    during = f", during {hand_name(game, replayer.hand_no)}" if stop.mid_hand else ""
    totals = ", ".join(
        f"{name} {score}"
        for name, score in zip(side_names(game, header), replayer.match.scores, strict=True)
    )
    proof = (
        " (the header's limit, reached at a checkpoint every seat signed)"
        if stop.proven
        else " (the host's word: a claim the log cannot prove)"
    )
    played = count(stop.hands, hand_noun(game))
    return f"the match was stopped by agreement after {played}{during}: {why}{proof}; {totals}."


def _copy_kind(payload_seats: frozenset[int], seats: int, deal: str) -> dict[str, Any]:
    """Whose copy of the log this is, judged by the private payloads it holds."""
    held = sorted(payload_seats)
    if deal in ("blind", "blind-v2") and not held:
        kind = "blind"  # no private payloads: every copy holds the same records
    elif len(held) == seats:
        kind = "host"
    elif len(held) == 1:
        kind = "seat"
    elif not held:
        kind = "public"
    else:
        kind = "partial"
    return {"kind": kind, "payload_seats": held}


def _hand_dict(hand: HandReplay) -> dict[str, Any]:
    state = hand.state
    end = None if state is None else state.end
    return {
        "hand": hand.hand_no,
        "dealer": hand.dealer,
        "actions": hand.actions,
        "end": None if end is None else {"reason": end.reason.value, "went_out": end.went_out},
        "scores": [s.to_dict() for s in hand.scores] or None,
        "checkpoint_signers": sorted(hand.checkpoint_signers) or None,
    }


def _match_dict(replayer: Replayer) -> dict[str, Any]:
    result = replayer.result
    proven_by_checkpoint = result is None and _checkpoint_proves_the_end(replayer)
    if proven_by_checkpoint:
        result = replayer.match.result
    stop = replayer.stop
    return {
        "finished": (replayer.over and stop is None) or proven_by_checkpoint,
        "stopped": None
        if stop is None
        else {
            "record": stop.record,
            "reason": stop.reason,
            "hands": stop.hands,
            "mid_hand": stop.mid_hand,
            "proven": stop.proven,
        },
        "hands_played": replayer.match.hands_played,
        "totals": list(replayer.match.scores),
        "result": None
        if result is None
        else {
            "winner": result.winner,
            "totals": list(result.scores),
            "hands": result.hands,
            "text": _result_text(replayer),
        },
        "forfeit": None
        if replayer.forfeit is None
        else {"seat": replayer.forfeit[0], "reason": replayer.forfeit[1]},
    }


def _result_text(replayer: Replayer) -> str:
    result = replayer.result
    if result is None and _checkpoint_proves_the_end(replayer):
        result = replayer.match.result
    forfeit = replayer.forfeit is not None
    text = (
        "the match ended"
        if result is None
        else result_text(replayer.game, replayer.header, result, forfeit=forfeit)
    )
    if replayer.forfeit is not None:
        seat, why = replayer.forfeit
        text = f"{seat_name(replayer.header, seat)} forfeited ({why}); {text}"
    return capital(text) + "."


def _where_it_stops(replayer: Replayer) -> dict[str, Any]:
    """Where an unfinished log stops, in words, and how much of it could not be checked.

    ``hand`` is the log's number of the hand it stops in (from 0); the sentence counts hands and
    turns as people do, from 1.
    """
    hand = replayer.hand_no
    noun = hand_noun(replayer.game)
    this_hand = hand_name(replayer.game, hand)
    current = replayer.current
    pending = replayer.pending
    hand_stage, progress = replayer.hand.stage()
    turn_no: int | None = None
    if replayer.forfeit is not None:
        stage, reason = "forfeit", "a seat forfeited but the log has no match-end record."
    elif hand_stage == "not-started":
        stage = "between-hands"
        reason = (
            f"the log stops after {hand_name(replayer.game, hand - 1)}'s checkpoint, "
            f"before {this_hand}."
        )
        if hand == 0:
            reason = f"the log stops before the first {noun}."
    elif hand_stage == "dealing":
        stage = "committing"
        reason = f"the log stops while {this_hand} is being dealt ({progress})."
    elif hand_stage == "revealing" and not replayer.hand_over:
        stage = "revealing"
        reason = f"the log stops while {this_hand}'s seeds are being revealed ({progress})."
    elif pending:
        stage = "playing"
        reason = (
            f"the log stops during {this_hand}; its last {pending} records cannot be checked in "
            f"this copy until the {noun}'s seeds are published."
        )
    elif hand_stage == "playing":
        stage = "playing"
        state = replayer.hand.state if current is None or current.state is None else current.state
        turn_no = None if state is None else shown_number(state.turn_no)
        turn = "" if turn_no is None else f", at turn {turn_no}"
        reason = f"the log stops during {this_hand}{turn}."
    elif not replayer.seeds_published:
        stage = "hand-over"
        reason = f"the log stops after {this_hand} ended, before its seeds were published."
    else:
        stage = "checkpointing"
        reason = f"the log stops before {this_hand}'s checkpoint was signed."
    return {
        "hand": hand,
        "stage": stage,
        "unverified_records": pending,
        "reason": reason,
        "turn": turn_no,
    }
