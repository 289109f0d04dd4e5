"""Verifying a log: the chain, the host's signatures, private payloads, author-signed actions
and checkpoint signatures, one record at a time (sans-io).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from typing import Any, Final, cast

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from canasta_net.identity import check_signature, signing_input

from .format import (
    ACTION_SIGNATURE_KIND,
    CHECKPOINT_SIGNATURE_KIND,
    MAX_RECORD_SIZE,
    RECORD_SIGNATURE_KIND,
    TIMED_FORMAT,
    ZERO_HASH,
    CheckpointInfo,
    Header,
    LogFormatError,
    LogVerificationError,
    StoredRecord,
    VerificationReport,
)
from .reader import READ_SIZE, LogSource, RecordStream

__all__ = ["LogVerifier", "iter_verified", "verify_log"]

# Signing inputs are prefix + message (see identity.signing_input); built once, not per record.
_RECORD_PREFIX: Final = signing_input(RECORD_SIGNATURE_KIND, b"")
_ACTION_PREFIX: Final = signing_input(ACTION_SIGNATURE_KIND, b"")
_CHECKPOINT_PREFIX: Final = signing_input(CHECKPOINT_SIGNATURE_KIND, b"")
# How many of its own signed messages a seat's verifier remembers until their records come (a
# seat has one or two on their way; the bound keeps refused ones from piling up).
SIGNED_HERE_KEPT: Final = 64


class LogVerifier:
    """Verifies records one at a time, in order: what :func:`verify_log` does, incrementally.

    A seat uses it on each record the host sends; the replayer and auditor use it while they
    stream a file. ``feed`` raises :class:`LogVerificationError` at the first bad record; the
    verifier must not be fed further records after that.
    """

    def __init__(self) -> None:
        self.seen: set[bytes] = set()
        self.last_hash = ZERO_HASH
        self.kinds: Counter[str] = Counter()
        self.present: Counter[int] = Counter()
        self.absent: Counter[int] = Counter()
        self.last_aseq: dict[int, int] = {}
        self.checkpoints: list[CheckpointInfo] = []
        self.header: Header | None = None
        self._keys: tuple[Ed25519PublicKey, ...] = ()
        self.seat_keys: list[bytes] = []  # each seat's current key (raw)
        self._host = 0
        self._table = b""
        self._timed = False
        #: The ``time`` of the last record (format 2; None before the first timed record).
        self.last_time: int | None = None
        # messages this process signed itself: act -> (asig, the signing key, raw)
        self._signed_here: dict[bytes, tuple[bytes, bytes]] = {}
        #: Author signatures taken as made here, without a second check (:meth:`signed_here`).
        self.own_signatures = 0

    @property
    def records(self) -> int:
        return len(self.seen)

    def set_header(self, header: Header) -> None:
        self.header = header
        self._keys = header.verifying_keys
        self.seat_keys = [seat.key for seat in header.seats]
        self._host = header.host
        self._table = header.table
        self._timed = header.format >= TIMED_FORMAT

    def signed_here(self, key: bytes, act: bytes, asig: bytes) -> None:
        """This process signed ``act`` with the seat key ``key`` (raw) and got ``asig``: a record
        that carries exactly these two byte strings, for a seat whose key is then ``key``, needs
        no second check of that signature (the same key, message and signature verify as they
        did when it was made; about 5 % of a seat's CPU). Every other check still runs, and any
        other bytes are checked as always."""
        self._signed_here[act] = (asig, key)
        if len(self._signed_here) > SIGNED_HERE_KEPT:
            del self._signed_here[next(iter(self._signed_here))]  # the oldest

    def feed(self, record: StoredRecord) -> None:
        """Verify ``record`` (the next one in the log); raise LogVerificationError if it fails.

        The steps run in this order and the first failure is the one raised: the chain (host
        signature, seq, prev), the private payloads, the author's signed action, the checkpoint.
        Only then does the record's ``rekey`` take effect and the record join the chain.
        """
        if self.header is None:
            raise LogFormatError(record.index, "missing-header", "no header before this record")
        self._check_chain(record)
        if self._timed and record.index:  # the header has no time of its own
            self._check_time(record)
        self._check_private(record)
        if record.action is not None:
            self._check_author(record, record.action)
        if record.checkpoint is not None:
            self._check_checkpoint(record, record.checkpoint)
        rekey = record.fields.get("rekey")
        if rekey is not None:
            self._apply_rekey(rekey)
        self.kinds[record.fields["kind"]] += 1
        self.last_hash = record.hash
        self.seen.add(record.hash)

    def _check_chain(self, record: StoredRecord) -> None:
        """The host's signature on the body, then ``seq`` and ``prev`` (the link to the chain)."""
        n, fields, host = record.index, record.fields, self._host
        try:
            check_signature(self._keys[host], record.host_sig, _RECORD_PREFIX + record.body)
        except InvalidSignature:
            raise LogVerificationError(
                n, "bad-host-signature", "the host's signature on the record does not verify", host
            ) from None
        if fields["seq"] != n:
            raise LogVerificationError(
                n, "bad-seq", f"record {n} carries seq {fields['seq']}", host
            )
        if fields["prev"] != self.last_hash:
            raise LogVerificationError(
                n, "bad-prev", "'prev' is not the hash of the previous record", host
            )

    def _check_time(self, record: StoredRecord) -> None:
        """Format 2: the host's clock, as each record states it, never runs backwards."""
        stamp: int = record.fields["time"]
        if self.last_time is not None and stamp < self.last_time:
            raise LogVerificationError(
                record.index,
                "bad-time",
                f"the record's time ({stamp} ms) is before the previous record's "
                f"({self.last_time} ms)",
                self._host,
            )
        self.last_time = stamp

    def _check_private(self, record: StoredRecord) -> None:
        """Each private payload against its hash in ``priv``; count the payloads held and lacked."""
        n, host, private = record.index, self._host, record.private
        priv = record.fields.get("priv")
        if priv is None:
            if private:
                raise LogVerificationError(
                    n, "bad-private", "private payloads in a record without 'priv'", host
                )
            return
        if not private.keys() <= priv.keys():
            extra = sorted(private.keys() - priv.keys())
            raise LogVerificationError(
                n, "bad-private", f"private payloads for seats {extra} have no hash", host
            )
        for seat, digest in priv.items():
            payload = private.get(seat)
            if payload is None:
                self.absent[seat] += 1
            elif hashlib.sha256(payload).digest() != digest:
                raise LogVerificationError(
                    n,
                    "bad-private",
                    f"seat {seat}'s private payload does not match its hash",
                    host,
                )
            else:
                self.present[seat] += 1

    def _check_author(self, record: StoredRecord, action: dict[str, Any]) -> None:
        """An author-signed action: its signature, its table, the next aseq, an earlier head."""
        n, fields = record.index, record.fields
        author = action["seat"]
        act, asig = fields["act"], fields["asig"]
        own = self._signed_here.pop(act, None) if self._signed_here else None
        try:
            if own is not None and own == (asig, self.seat_keys[author]):
                self.own_signatures += 1  # made here with this very key: it verifies
            else:
                check_signature(self._keys[author], asig, _ACTION_PREFIX + act)
        except InvalidSignature:
            raise LogVerificationError(
                n,
                "bad-author-signature",
                f"seat {author}'s signature on its action does not verify",
                author,
            ) from None
        if action["table"] != self._table:
            raise LogVerificationError(
                n, "wrong-table", f"seat {author}'s action names another table", author
            )
        expected = self.last_aseq.get(author, -1) + 1
        if action["aseq"] != expected:
            raise LogVerificationError(
                n,
                "bad-aseq",
                f"seat {author}'s action has aseq {action['aseq']}, expected {expected}",
                author,
            )
        self.last_aseq[author] = expected
        if action["head"] not in self.seen:
            raise LogVerificationError(
                n,
                "unknown-head",
                f"seat {author}'s action names a head that is no earlier record",
                author,
            )

    def _check_checkpoint(self, record: StoredRecord, checkpoint: dict[str, Any]) -> None:
        """A checkpoint: its table, a known head, every seat's signature; then record it."""
        n, fields, host = record.index, record.fields, self._host
        if checkpoint["table"] != self._table:
            raise LogVerificationError(n, "wrong-table", "the checkpoint names another table", host)
        if checkpoint["head"] not in self.seen:
            raise LogVerificationError(
                n, "unknown-head", "the checkpoint names a head that is no earlier record", host
            )
        signed = _CHECKPOINT_PREFIX + fields["msg"]
        sigs: dict[int, bytes] = fields["sigs"]
        for seat, signature in sigs.items():
            try:
                check_signature(self._keys[seat], signature, signed)
            except InvalidSignature:
                raise LogVerificationError(
                    n,
                    "bad-checkpoint-signature",
                    f"seat {seat}'s checkpoint signature does not verify",
                    seat,
                ) from None
        self.checkpoints.append(
            CheckpointInfo(n, checkpoint["hand"], checkpoint["head"], frozenset(sigs))
        )

    def _apply_rekey(self, rekey: dict[str, Any]) -> None:
        """From this record on, the seat's messages are signed by the new key (a bot standing in
        for a dropped player, or the player reclaiming the seat)."""
        new_keys = list(self._keys)
        new_keys[rekey["seat"]] = Ed25519PublicKey.from_public_bytes(rekey["key"])
        self._keys = tuple(new_keys)
        self.seat_keys[rekey["seat"]] = rekey["key"]

    def report(self, stream: RecordStream) -> VerificationReport:
        if self.header is None:
            raise LogFormatError(0, "missing-header", "the log is empty")
        return VerificationReport(
            header=self.header,
            records=len(self.seen),
            last_hash=self.last_hash,
            valid_length=stream.valid_length,
            truncated=stream.truncated,
            kinds=dict(self.kinds),
            private_present=dict(self.present),
            private_absent=dict(self.absent),
            last_aseq=dict(self.last_aseq),
            checkpoints=tuple(self.checkpoints),
            last_time=self.last_time,
        )


def iter_verified(
    source: LogSource,
    *,
    max_record_size: int = MAX_RECORD_SIZE,
    read_size: int = READ_SIZE,
) -> Iterator[tuple[StoredRecord, LogVerifier]]:
    """Stream the records of a log, each verified before it is yielded (with the verifier)."""
    stream = RecordStream(source, max_record_size=max_record_size, read_size=read_size)
    verifier = LogVerifier()
    for record in stream:
        if verifier.header is None:
            verifier.set_header(cast(Header, stream.header))
        verifier.feed(record)
        yield record, verifier


def verify_log(
    source: LogSource,
    *,
    max_record_size: int = MAX_RECORD_SIZE,
    read_size: int = READ_SIZE,
) -> VerificationReport:
    """Verify a whole log, streaming, and report on it.

    Raises :class:`LogFormatError` or :class:`LogVerificationError` (both :class:`LogError`) at
    the first record that fails. A truncated final record is reported, not raised.
    """
    stream = RecordStream(source, max_record_size=max_record_size, read_size=read_size)
    verifier = LogVerifier()
    for record in stream:
        if verifier.header is None:
            verifier.set_header(cast(Header, stream.header))
        verifier.feed(record)
    return verifier.report(stream)
