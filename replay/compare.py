"""Copies of one table's log compared: the same records where they overlap, or who is to blame.

Every seat keeps its own copy of the table's log (redacted: only its own private payloads) and the
host keeps the whole one. A copy alone cannot show that the host sent different seats different
histories; two copies can. The rules (``docs/log-format.md``, "Copies compared"):

- The copies must be of one table: the same header body bytes. Headers naming different tables
  (or the same table with different host keys) are not copies of one log: the comparison is
  refused.
- Where they overlap, every record has the same body bytes in every copy. Two different bodies
  with one sequence number, each validly signed by the host, are proof that the host
  *equivocated* (signed two histories): the table's verdict is invalid and the host is to blame.
- A record that does not verify in one copy (a host signature that fails, a private payload that
  does not match its hash, records removed or reordered, bytes that do not parse) is that copy's
  damage: its file was altered after it was written, and it proves nothing against the host.
- Copies that are prefixes of each other agree. The longest is named; a host's copy shorter than a
  seat's lacks records the host signed and sent (the host dropped them from its own log).

Private payloads need no separate comparison: each one is checked against the hash its signed
body commits to, so two copies holding the same body hold the same payloads or one fails to verify.

Reading a copy (:func:`read_copy`) is the only I/O; :func:`compare_copies` is pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from canasta_net.log import (
    Header,
    LogFormatError,
    LogSource,
    LogVerificationError,
    LogVerifier,
    RecordStream,
)

__all__ = [
    "COMPARE_EXIT_CODES",
    "Comparison",
    "CopyRecords",
    "compare_copies",
    "read_copy",
    "read_copy_path",
]

CONSISTENT: Final = "valid"
INVALID: Final = "invalid"
REFUSED: Final = "refused"

COMPARE_EXIT_CODES: Final = {CONSISTENT: 0, INVALID: 1, REFUSED: 2}

# Verification codes checked after the host's signature on the record has verified: a record
# failing one of them is still a body the host signed for its sequence number.
_HOST_SIGNED_CODES: Final = frozenset(
    {
        "bad-prev",
        "bad-author-signature",
        "wrong-table",
        "bad-aseq",
        "unknown-head",
        "bad-checkpoint-signature",
    }
)

_DAMAGE: Final = {
    "bad-host-signature": "the host's signature on it does not verify",
    "bad-private": "a private payload does not match the hash the host signed",
    "bad-seq": "it is not the record the host signed for this place (records removed or reordered)",
}


@dataclass(frozen=True)
class BrokenRecord:
    """The first record of a copy that does not verify.

    ``host_signed`` is True when the host's signature on its body verifies and the body claims
    this record's sequence number: it is then a body the host signed for ``seq``, whatever else
    is wrong with it; ``hash`` is its body's hash (None if it could not be read).
    """

    seq: int
    code: str
    reason: str
    host_signed: bool
    hash: bytes | None


@dataclass(frozen=True)
class CopyRecords:
    """What the comparison needs of one copy: its header and each verified record's body hash."""

    file: str
    header: Header | None
    header_body: bytes = b""
    hashes: tuple[bytes, ...] = ()  # body hash of records 0, 1, ... that verified, by seq
    broken: BrokenRecord | None = None
    payload_seats: frozenset[int] = frozenset()

    @property
    def records(self) -> int:
        return len(self.hashes)

    @property
    def kind(self) -> str:
        """``host`` (every seat's payloads), ``seat`` (one seat's), or ``copy`` (cannot tell)."""
        if self.header is None:
            return "copy"
        if len(self.payload_seats) == len(self.header.seats):
            return "host"
        return "seat" if len(self.payload_seats) == 1 else "copy"

    def host_signed(self, seq: int) -> bytes | None:
        """The hash of the body the host signed for ``seq`` in this copy, if it holds one."""
        if seq < len(self.hashes):
            return self.hashes[seq]
        broken = self.broken
        if broken is not None and broken.seq == seq and broken.host_signed:
            return broken.hash
        return None


def read_copy(source: LogSource, file: str = "") -> CopyRecords:
    """Read and verify one copy up to its first bad record; never raises for a bad log."""
    stream = RecordStream(source)
    verifier = LogVerifier()
    header_body = b""
    hashes: list[bytes] = []
    broken = None
    try:
        for record in stream:
            if verifier.header is None:
                assert stream.header is not None
                verifier.set_header(stream.header)
                header_body = record.body
            try:
                verifier.feed(record)
            except LogVerificationError as e:
                signed = e.code in _HOST_SIGNED_CODES and record.seq == record.index
                broken = BrokenRecord(record.index, e.code, e.reason, signed, record.hash)
                break
            hashes.append(record.hash)
    except LogFormatError as e:
        broken = BrokenRecord(e.record_no, e.code, e.reason, False, None)
    if not hashes:  # record 0 is unreadable or fails: not a log that can be compared
        return CopyRecords(file, None, broken=broken)
    return CopyRecords(
        file,
        verifier.header,
        header_body,
        tuple(hashes),
        broken,
        frozenset(seat for seat, n in verifier.present.items() if n),
    )


def read_copy_path(path: str) -> CopyRecords:
    """:func:`read_copy` of the file at ``path`` (an unreadable file is a copy without header)."""
    try:
        with open(path, "rb") as log_file:
            return read_copy(log_file, path)
    except OSError:
        return CopyRecords(path, None)


@dataclass
class Comparison:
    """The outcome of comparing copies of one table's log; :meth:`to_dict` is its JSON form."""

    files: list[str]
    verdict: str
    summary: str
    table: str | None = None
    copies: list[dict[str, Any]] = field(default_factory=list)
    longest: str | None = None
    equivocation: dict[str, Any] | None = None
    altered: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return COMPARE_EXIT_CODES[self.verdict]

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "table": self.table,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "summary": self.summary,
            "copies": self.copies,
            "longest": self.longest,
            "equivocation": self.equivocation,
            "altered": self.altered,
            "notes": self.notes,
        }


def compare_copies(copies: Sequence[CopyRecords]) -> Comparison:
    """Compare copies of one table's log (each read by :func:`read_copy`)."""
    files = [copy.file for copy in copies]
    readable = [copy for copy in copies if copy.header is not None]
    if len(readable) < 2:
        return Comparison(
            files, REFUSED, "Fewer than two of the files are logs that can be compared."
        )
    first = readable[0]
    assert first.header is not None
    comparison = Comparison(files, CONSISTENT, "", first.header.table.hex())
    different = [copy for copy in readable if copy.header_body != first.header_body]
    if different:
        refusal = _different_headers(first, different)
        if refusal is not None:
            comparison.verdict, comparison.summary = REFUSED, refusal
            return comparison
    comparison.copies = [_copy_dict(copy) for copy in copies]
    _walk(readable, comparison)
    longest = max(readable, key=lambda copy: copy.records)
    comparison.longest = longest.file
    _note_dropped_by_host(readable, longest, comparison)
    comparison.summary = _summary(readable, longest, comparison)
    return comparison


def _different_headers(first: CopyRecords, different: list[CopyRecords]) -> str | None:
    """Why copies with different headers are refused; None if the host signed both (record 0 is
    then compared like any other record: the host equivocated on the header itself)."""
    assert first.header is not None
    for copy in different:
        assert copy.header is not None
        if copy.header.table != first.header.table:
            return (
                f"{copy.file} and {first.file} are logs of different tables "
                f"({copy.header.table.hex()} and {first.header.table.hex()}): only copies of one "
                "table's log can be compared."
            )
        if copy.header.host_key != first.header.host_key:
            return (
                f"{copy.file} and {first.file} name the same table but different host keys: "
                "they are not copies of one log (one of the headers was forged)."
            )
    return None


def _copy_dict(copy: CopyRecords) -> dict[str, Any]:
    broken = copy.broken
    return {
        "file": copy.file,
        "kind": copy.kind,
        "payload_seats": sorted(copy.payload_seats),
        "records": copy.records,
        "stops_at": None
        if broken is None
        else {"record": broken.seq, "code": broken.code, "reason": broken.reason},
    }


def _walk(copies: list[CopyRecords], comparison: Comparison) -> None:
    """Compare the copies record by record: the first sequence number with two host-signed
    bodies is an equivocation; a copy whose record is damaged is named and left out from there."""
    live = list(copies)
    end = max(copy.records + 1 for copy in copies)
    for seq in range(end):
        versions: dict[bytes, list[str]] = {}
        for copy in list(live):
            signed = copy.host_signed(seq)
            if signed is not None:
                versions.setdefault(signed, []).append(copy.file)
            elif copy.broken is not None and copy.broken.seq == seq:
                comparison.altered.append(_altered(copy))
                live.remove(copy)
        if len(versions) > 1:
            comparison.equivocation = _equivocation(copies[0], seq, versions)
            comparison.verdict = INVALID
            return
        for copy in list(live):
            if copy.broken is not None and copy.broken.seq == seq:
                live.remove(copy)  # its record here is the host's (the copy's own audit says so)
    if comparison.altered:
        comparison.verdict = INVALID


def _altered(copy: CopyRecords) -> dict[str, Any]:
    broken = copy.broken
    assert broken is not None
    why = _DAMAGE.get(broken.code, "its bytes cannot be read as a record")
    return {
        "file": copy.file,
        "record": broken.seq,
        "code": broken.code,
        "reason": (
            f"Record {broken.seq} of {copy.file} is damaged ({why}): the file was altered after "
            "it was written. This proves nothing against the host or any seat; the blame lies "
            "with that copy."
        ),
    }


def _equivocation(copy: CopyRecords, seq: int, versions: dict[bytes, list[str]]) -> dict[str, Any]:
    header = copy.header
    assert header is not None
    host = header.host
    name = header.seats[host].name
    holders = "; ".join(
        f"{', '.join(files)} hold{'s' if len(files) == 1 else ''} one ({digest.hex()[:16]})"
        for digest, files in versions.items()
    )
    return {
        "seq": seq,
        "versions": [{"hash": digest.hex(), "files": files} for digest, files in versions.items()],
        "blame": host,
        "blame_name": name,
        "reason": (
            f"The host, seat {host} ({name}), signed {len(versions)} different records with "
            f"sequence number {seq}: {holders}. Each signature verifies with the host's key, so "
            "the host sent different histories to different seats: the host is responsible."
        ),
    }


def _note_dropped_by_host(
    copies: list[CopyRecords], longest: CopyRecords, comparison: Comparison
) -> None:
    if comparison.equivocation is not None:
        return
    for copy in copies:
        if copy.kind == "host" and copy.records < longest.records:
            comparison.notes.append(
                f"The host's copy {copy.file} ends after record {copy.records - 1}, while "
                f"{longest.file} holds host-signed records up to {longest.records - 1}: the host "
                "dropped records it had signed and sent from its own log."
            )


def _summary(copies: list[CopyRecords], longest: CopyRecords, comparison: Comparison) -> str:
    if comparison.equivocation is not None:
        seq = comparison.equivocation["seq"]
        return f"Host equivocation at sequence number {seq}. {comparison.equivocation['reason']}"
    lengths = ", ".join(f"{copy.file} {copy.records}" for copy in copies)
    agree = (
        f"The copies agree on every record they share (records held: {lengths}); the longest "
        f"is {longest.file}."
    )
    if comparison.altered:
        named = ", ".join(f"{a['file']} at record {a['record']}" for a in comparison.altered)
        return f"A copy was altered ({named}). {agree}"
    return agree
