"""What went wrong in a log, where, and who (if anyone) can be held to it.

A :class:`Failure` is the first bad record of a log as the container verifier, the replayer or an
audit-level check found it. :func:`failure_from_error` turns their exceptions into one, naming the
seat to blame only where the signatures allow it (``docs/log-format.md``, "Responsibility"):

- The host signs every record, so once the host's signature verifies, the host vouches for the
  whole body: a bad author or checkpoint signature, a wrong table, aseq or head, or a false game
  claim under it is the host's fault (it accepted what it had to refuse), not the seat's.
- Only a valid author signature binds its author: an illegal or out-of-turn action that its author
  really signed is the author's fault (and the host's, for accepting it).
- Damage outside any signature (framing, private payloads, removed or reordered records, a host
  signature that does not verify) proves nothing against anyone: whoever holds a file can alter it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final

from canasta_net.i18n import N_
from canasta_net.log import Header, LogError, LogVerificationError, Truncation
from canasta_net.log.records import shown_number
from canasta_net.log.replay import ReplayError

from .wording import capital, sentence

STAGE_FORMAT: Final = "format"
STAGE_CONTAINER: Final = "container"
STAGE_GAME: Final = "game"
STAGE_AUDIT: Final = "audit"
STAGE_IO: Final = "io"

#: Failures of a log that can be read but that this program cannot replay (exit status 2).
UNSUPPORTED_CODES: Final = frozenset({"bad-version", "bad-rules", "unsupported-deal"})

# Container codes about an author-signed action or checkpoint, checked only after the host's
# signature on the record has verified.
_ACCEPTED_BY_HOST: Final = {
    "bad-author-signature": N_("an action whose author signature does not verify"),
    "wrong-table": N_("a signed message that names another table"),
    "bad-aseq": N_("an action out of its author's sequence (a gap or a replay)"),
    "unknown-head": N_("a signed message naming a head that is no earlier record"),
    "bad-checkpoint-signature": N_("a checkpoint signature that does not verify"),
    "bad-time": N_("a time earlier than the time of the record before it"),
}

# Game codes whose subject is what an author signed (its signature has verified by then).
_AUTHOR_SIGNED: Final = frozenset(
    {"illegal-action", "out-of-turn", "wrong-hand", "bad-commitment", "after-hand-end"}
)

_UNBOUND: Final = {
    "bad-host-signature": N_(
        "The record is not as the host signed it: the file was altered after it was written "
        "(or its header names the wrong host key). No seat can be blamed from the file alone."
    ),
    "bad-seq": N_(
        "Records were removed, duplicated or reordered: the host signed this record for another "
        "place in the log. No seat can be blamed from the file alone."
    ),
    "bad-prev": N_(
        "The hash chain is broken here: a record was removed or replaced (perhaps by one from "
        "another log), or the host signed two different histories. No seat can be blamed from "
        "this copy alone; compare it with the other seats' copies."
    ),
    "bad-private": N_(
        "A private payload does not match the commitment the host signed: the payloads travel "
        "outside the signatures, so the file was altered. No seat can be blamed."
    ),
}
_NO_BLAME: Final = N_("No seat can be blamed from the file alone.")
_DAMAGED: Final = N_(
    "The file is damaged or was altered here and cannot be read further; nothing signed "
    "covers the damage, so no seat can be blamed."
)
_HOST_ACCEPTED: Final = N_(
    "The host, {host}, signed this record and so accepted {what}: the host is responsible."
)
_PROVES_NOTHING: Final = N_(
    "This proves nothing against {seat}: anyone can write an invalid signature in a seat's "
    "name, and only a valid one binds its author."
)
_AUTHOR_BOUND: Final = N_("{Seat} signed this action, and its valid signature binds it.")
_AUTHOR_BOUND_HOST: Final = N_(
    "{Seat} signed this action, and its valid signature binds it; the host, {host}, should have "
    "refused it."
)
_HOST_FALSE: Final = N_(
    "The host, {host}, signed a record whose game content is false: the host is responsible."
)
_NOT_THE_SEATS: Final = N_(
    "Nothing {seat} signed is shown to be wrong: the record's content is the host's."
)
_UNSIGNED: Final = N_(
    "The checkpoint of hand {hand} is not signed by every seat: {names} did not sign."
)
_UNSIGNED_HOST: Final = N_(
    "The host, {host}, closed hand {hand} without every seat's signature, so the hand's result "
    "is not agreed by the whole table."
)
_AFTER_END: Final = N_(
    "The match ended at record {record}, yet {length} bytes of a further record follow it at "
    "offset {offset}: the host writes nothing after the match's end, so a crash cannot have left "
    "them."
)
_AFTER_END_BLAME: Final = N_(
    "The bytes were added to the file after the match ended; nothing signed covers them, so no "
    "seat can be blamed."
)

# Each checker code's general sentence: a reader of another language reads it for the checker's
# own (English, more specific) reason, which the JSON report and an English reader keep.
FAILURE_SENTENCES: Final = {
    "bad-host-signature": N_("The host's signature on this record does not verify."),
    "bad-seq": N_("This record is not where the host signed it in the log."),
    "bad-prev": N_("This record does not follow the hash of the record before it."),
    "bad-private": N_("A private payload does not match the commitment the host signed."),
    "bad-author-signature": N_("An author's signature on this record does not verify."),
    "bad-checkpoint-signature": N_("A checkpoint signature does not verify."),
    "wrong-table": N_("The record names another table."),
    "bad-aseq": N_("An action is out of its author's sequence."),
    "unknown-head": N_("A signed message names a head that is no earlier record."),
    "bad-time": N_("The record's time is earlier than the time of the record before it."),
    "illegal-action": N_("The action breaks the rules of the game."),
    "out-of-turn": N_("A seat acted out of turn."),
    "wrong-hand": N_("The record names the wrong hand."),
    "after-hand-end": N_("An action follows the end of its hand."),
    "after-end": N_("A record follows the end of the match."),
    "bad-commitment": N_("A seed commitment is malformed."),
    "bad-commitments": N_("The list of seed commitments is wrong."),
    "bad-seeds": N_("The revealed seeds do not match the commitments or do not give this deal."),
    "bad-deal": N_("The deal recorded is not the deal the seeds give."),
    "bad-effects": N_("The cards the record says were dealt or taken are not what the game gives."),
    "bad-checkpoint": N_("The checkpoint does not match the position the log reaches."),
    "bad-hand-end": N_("The hand's end record does not match the hand as played."),
    "wrong-score": N_("The scores recorded are not the scores of the hand as played."),
    "bad-match-end": N_("The match's end record does not match the match as played."),
    "bad-match-stop": N_("The record of the match stopped by agreement is wrong."),
    "bad-forfeit": N_("The forfeit record is wrong."),
    "contradicted-claim": N_("A claim of the record contradicts what the log proves."),
    "hidden-records": N_("Records are hidden from this copy where they must not be."),
    "unsigned-checkpoint": N_("A hand's checkpoint is not signed by every seat."),
    "data-after-end": N_("Bytes of a further record follow the end of the match."),
}

# A sentence for people kept as its template and parameters, so that it can be worded in any
# reader's language: seat numbers under ``host``/``seat`` (worded with the header's names),
# ``what`` a marked phrase, anything else as it is.
Worded = tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]


def _part(template: str, **args: Any) -> tuple[str, tuple[tuple[str, Any], ...]]:
    return template, tuple(sorted(args.items()))


def word(parts: Worded, names: list[str] | None, translate: Callable[[str], str] = str) -> str:
    """``parts`` as one text in the language of ``translate`` (a catalogue's gettext)."""

    def who(seat: int) -> str:
        if names is not None and 0 <= seat < len(names):
            return translate(N_("seat {seat} ({name})")).format(seat=seat, name=names[seat])
        return translate(N_("seat {seat}")).format(seat=seat)

    out = []
    for template, items in parts:
        args: dict[str, Any] = {}
        for name, value in items:
            if name in ("host", "seat"):
                args[name] = who(value)
                args[capital(name)] = capital(args[name])
            elif name == "what":
                args[name] = translate(value)
            elif name == "names":
                args[name] = ", ".join(who(s) for s in value)
            else:
                args[name] = value
        out.append(translate(template).format_map(args))
    return " ".join(out)


@dataclass(frozen=True)
class Failure:
    """The first record of a log that fails, and why.

    ``seat`` is the seat the failing check concerns (as the checker reports it); ``blame`` is the
    seat responsible, where the signatures allow naming one; ``responsibility`` says which and why.
    """

    record: int
    code: str
    stage: str
    reason: str
    seat: int | None
    blame: int | None
    responsibility: str
    blame_name: str | None = None
    #: The file is not a log this program can check at all (exit status 2).
    unreadable: bool = False
    #: ``responsibility`` (and, for the audit's own checks, ``reason``) as templates and
    #: parameters, for :meth:`worded_responsibility` in a reader's language
    responsibility_parts: Worded = field(default=(), compare=False)
    reason_parts: Worded = field(default=(), compare=False)

    def worded_responsibility(
        self, names: list[str] | None, translate: Callable[[str], str]
    ) -> str:
        if not self.responsibility_parts:
            return translate(self.responsibility) if self.responsibility else ""
        return word(self.responsibility_parts, names, translate)

    def worded_reason(self, names: list[str] | None, translate: Callable[[str], str]) -> str:
        """The reason in the reader's language: the audit's own sentences fully; a checker's
        sentence as its code's general sentence (:data:`FAILURE_SENTENCES`), else as it is."""
        if self.reason_parts:
            return word(self.reason_parts, names, translate)
        general = FAILURE_SENTENCES.get(self.code)
        if general is None or translate(general) == general:
            return self.reason
        return translate(general)

    @property
    def exit_code(self) -> int:
        return 2 if self.unreadable else 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "record": self.record,
            "code": self.code,
            "stage": self.stage,
            "reason": self.reason,
            "seat": self.seat,
            "blame": self.blame,
            "blame_name": self.blame_name,
            "responsibility": self.responsibility,
        }


def io_failure(reason: str) -> Failure:
    return Failure(0, "io-error", STAGE_IO, sentence(reason), None, None, "", unreadable=True)


def failure_from_error(error: LogError | ReplayError, header: Header | None) -> Failure:
    """The :class:`Failure` for an exception of the verifier or the replayer."""
    failure = _failure(error, header)
    if failure.blame is not None and header is not None and failure.blame < len(header.seats):
        return replace(failure, blame_name=header.seats[failure.blame].name)
    return failure


def _failure(error: LogError | ReplayError, header: Header | None) -> Failure:
    reason = sentence(error.reason)
    if isinstance(error, LogError) and not isinstance(error, LogVerificationError):
        # a format error (LogFormatError): the file cannot be read past this record
        if error.record_no == 0:
            return Failure(0, error.code, STAGE_FORMAT, reason, None, None, "", unreadable=True)
        parts = (_part(_DAMAGED),)
        return Failure(
            error.record_no,
            error.code,
            STAGE_FORMAT,
            reason,
            None,
            None,
            word(parts, None),
            responsibility_parts=parts,
        )
    if isinstance(error, LogVerificationError):
        return _container_failure(error, reason, header)
    return _game_failure(error, reason, header)


def _names(header: Header | None) -> list[str] | None:
    return None if header is None else [s.name for s in header.seats]


def _container_failure(error: LogVerificationError, reason: str, header: Header | None) -> Failure:
    code, seat = error.code, error.seat
    host = header.host if header is not None else None
    if code in _UNBOUND or host is None:
        parts: Worded = (_part(_UNBOUND.get(code, _NO_BLAME)),)
        return Failure(
            error.record_no,
            code,
            STAGE_CONTAINER,
            reason,
            seat,
            None,
            word(parts, _names(header)),
            responsibility_parts=parts,
        )
    what = _ACCEPTED_BY_HOST.get(code, N_("a record it had to refuse"))
    parts = (_part(_HOST_ACCEPTED, host=host, what=what),)
    if seat is not None and seat != host:
        parts += (_part(_PROVES_NOTHING, seat=seat),)
    return Failure(
        error.record_no,
        code,
        STAGE_CONTAINER,
        reason,
        seat,
        host,
        word(parts, _names(header)),
        responsibility_parts=parts,
    )


def _game_failure(error: ReplayError, reason: str, header: Header | None) -> Failure:
    code, seat = error.code, error.seat
    host = header.host if header is not None else None
    if error.record_no == 0 or host is None:
        # the header's rule set cannot be replayed by this program
        return Failure(error.record_no, code, STAGE_GAME, reason, seat, None, "", unreadable=True)
    if code in _AUTHOR_SIGNED and seat is not None:
        parts: Worded = (
            (_part(_AUTHOR_BOUND_HOST, seat=seat, host=host),)
            if seat != host
            else (_part(_AUTHOR_BOUND, seat=seat),)
        )
        text = word(parts, _names(header))
        return Failure(
            error.record_no, code, STAGE_GAME, reason, seat, seat, text, responsibility_parts=parts
        )
    parts = (_part(_HOST_FALSE, host=host),)
    if seat is not None and seat != host:
        parts += (_part(_NOT_THE_SEATS, seat=seat),)
    text = word(parts, _names(header))
    return Failure(
        error.record_no, code, STAGE_GAME, reason, seat, host, text, responsibility_parts=parts
    )


def unsigned_checkpoint(record: int, hand: int, missing: list[int], header: Header) -> Failure:
    """A finished hand (``hand`` as the log numbers it) whose checkpoint lacks some seats'
    signatures (an audit-level check)."""
    shown = shown_number(hand)
    why = (_part(_UNSIGNED, hand=shown, names=tuple(missing)),)
    parts = (_part(_UNSIGNED_HOST, host=header.host, hand=shown),)
    return Failure(
        record,
        "unsigned-checkpoint",
        STAGE_AUDIT,
        word(why, _names(header)),
        missing[0],
        header.host,
        word(parts, _names(header)),
        header.seats[header.host].name,
        responsibility_parts=parts,
        reason_parts=why,
    )


def data_after_end(truncation: Truncation) -> Failure:
    """Bytes of a further record after the record that ended the match (an audit-level check):
    no crash leaves them, since the host writes nothing after the match's end."""
    why = (
        _part(
            _AFTER_END,
            record=truncation.record_no - 1,
            length=truncation.length,
            offset=truncation.offset,
        ),
    )
    parts = (_part(_AFTER_END_BLAME),)
    return Failure(
        truncation.record_no,
        "data-after-end",
        STAGE_AUDIT,
        word(why, None),
        None,
        None,
        word(parts, None),
        responsibility_parts=parts,
        reason_parts=why,
    )
