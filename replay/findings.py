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

from dataclasses import dataclass, replace
from typing import Any, Final

from canasta_net.log import Header, LogError, LogVerificationError, Truncation
from canasta_net.log.records import shown_number
from canasta_net.log.replay import ReplayError

from .wording import capital, seat_name, sentence

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
    "bad-author-signature": "an action whose author signature does not verify",
    "wrong-table": "a signed message that names another table",
    "bad-aseq": "an action out of its author's sequence (a gap or a replay)",
    "unknown-head": "a signed message naming a head that is no earlier record",
    "bad-checkpoint-signature": "a checkpoint signature that does not verify",
    "bad-time": "a time earlier than the time of the record before it",
}

# Game codes whose subject is what an author signed (its signature has verified by then).
_AUTHOR_SIGNED: Final = frozenset(
    {"illegal-action", "out-of-turn", "wrong-hand", "bad-commitment", "after-hand-end"}
)

_UNBOUND: Final = {
    "bad-host-signature": (
        "The record is not as the host signed it: the file was altered after it was written "
        "(or its header names the wrong host key). No seat can be blamed from the file alone."
    ),
    "bad-seq": (
        "Records were removed, duplicated or reordered: the host signed this record for another "
        "place in the log. No seat can be blamed from the file alone."
    ),
    "bad-prev": (
        "The hash chain is broken here: a record was removed or replaced (perhaps by one from "
        "another log), or the host signed two different histories. No seat can be blamed from "
        "this copy alone; compare it with the other seats' copies."
    ),
    "bad-private": (
        "A private payload does not match the commitment the host signed: the payloads travel "
        "outside the signatures, so the file was altered. No seat can be blamed."
    ),
}


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
        return Failure(
            error.record_no,
            error.code,
            STAGE_FORMAT,
            reason,
            None,
            None,
            "The file is damaged or was altered here and cannot be read further; nothing signed "
            "covers the damage, so no seat can be blamed.",
        )
    if isinstance(error, LogVerificationError):
        return _container_failure(error, reason, header)
    return _game_failure(error, reason, header)


def _name(header: Header | None, seat: int) -> str:
    return seat_name(header, seat) if header is not None else f"seat {seat}"


def _container_failure(error: LogVerificationError, reason: str, header: Header | None) -> Failure:
    code, seat = error.code, error.seat
    host = header.host if header is not None else None
    if code in _UNBOUND or host is None:
        text = _UNBOUND.get(code, "No seat can be blamed from the file alone.")
        return Failure(error.record_no, code, STAGE_CONTAINER, reason, seat, None, text)
    what = _ACCEPTED_BY_HOST.get(code, "a record it had to refuse")
    text = (
        f"The host, {_name(header, host)}, signed this record and so accepted {what}: the host "
        "is responsible."
    )
    if seat is not None and seat != host:
        text += (
            f" This proves nothing against {_name(header, seat)}: anyone can write an invalid "
            "signature in a seat's name, and only a valid one binds its author."
        )
    return Failure(error.record_no, code, STAGE_CONTAINER, reason, seat, host, text)


def _game_failure(error: ReplayError, reason: str, header: Header | None) -> Failure:
    code, seat = error.code, error.seat
    host = header.host if header is not None else None
    if error.record_no == 0 or host is None:
        # the header's rule set cannot be replayed by this program
        return Failure(error.record_no, code, STAGE_GAME, reason, seat, None, "", unreadable=True)
    if code in _AUTHOR_SIGNED and seat is not None:
        text = (
            f"{capital(_name(header, seat))} signed this action, and its valid signature binds it"
        )
        if seat != host:
            text += f"; the host, {_name(header, host)}, should have refused it"
        return Failure(error.record_no, code, STAGE_GAME, reason, seat, seat, text + ".")
    text = (
        f"The host, {_name(header, host)}, signed a record whose game content is false: the "
        "host is responsible."
    )
    if seat is not None and seat != host:
        text += (
            f" Nothing {_name(header, seat)} signed is shown to be wrong: the record's content "
            "is the host's."
        )
    return Failure(error.record_no, code, STAGE_GAME, reason, seat, host, text)


def unsigned_checkpoint(record: int, hand: int, missing: list[int], header: Header) -> Failure:
    """A finished hand (``hand`` as the log numbers it) whose checkpoint lacks some seats'
    signatures (an audit-level check)."""
    names = ", ".join(_name(header, s) for s in missing)
    shown = shown_number(hand)
    return Failure(
        record,
        "unsigned-checkpoint",
        STAGE_AUDIT,
        f"The checkpoint of hand {shown} is not signed by every seat: {names} did not sign.",
        missing[0],
        header.host,
        f"The host, {_name(header, header.host)}, closed hand {shown} without every seat's "
        "signature, so the hand's result is not agreed by the whole table.",
        header.seats[header.host].name,
    )


def data_after_end(truncation: Truncation) -> Failure:
    """Bytes of a further record after the record that ended the match (an audit-level check):
    no crash leaves them, since the host writes nothing after the match's end."""
    return Failure(
        truncation.record_no,
        "data-after-end",
        STAGE_AUDIT,
        f"The match ended at record {truncation.record_no - 1}, yet {truncation.length} bytes "
        f"of a further record follow it at offset {truncation.offset}: the host writes nothing "
        "after the match's end, so a crash cannot have left them.",
        None,
        None,
        "The bytes were added to the file after the match ended; nothing signed covers them, so "
        "no seat can be blamed.",
    )
