"""Writing a log: the host's writer, which builds, signs and durably appends records, and the
opening of a log file for it.

This and :mod:`.durable` (which writes and syncs the records' bytes, on the caller's thread or a
writer thread) are the only modules of :mod:`canasta_net.log` that open, write or sync files (the
reader only calls ``read`` on a file object it is handed; everything else is pure).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO, Final, cast

from canasta_net.identity import Identity
from canasta_net.timing import NO_TIMING, Timing

from .durable import Durability, SyncDurability
from .format import (
    FORMAT_VERSION,
    HEADER_KIND,
    MAX_HEADER_SIZE,
    MAX_RECORD_SIZE,
    RECORD_SIGNATURE_KIND,
    TIMED_FORMAT,
    ZERO_HASH,
    Header,
    LogFormatError,
    RecordInfo,
    VerificationReport,
    _check_record,
    _decode_map,
    _pack,
    _parse_header,
    record_hash,
)
from .verify import verify_log

__all__ = ["LogWriter", "LogWriterError", "fsync_directory", "open_log_for_writing"]

# Body fields the writer fills in itself; a caller may not supply them.
_WRITER_FIELDS: Final = frozenset({"seq", "prev", "kind", "priv", "time"})
_HEADER_WRITER_FIELDS: Final = _WRITER_FIELDS | {"format"}


class LogWriterError(RuntimeError):
    """The log writer cannot go on: {reason}. Resume from the file with LogWriter.resume."""


def open_log_for_writing(
    path: str | os.PathLike[str], mode: int = 0o600, *, resume: bool = False
) -> BinaryIO:
    """Open a log file for a writer.

    A new log is created exclusively (never over an existing file, never through a symlink) with
    exactly ``mode``, whatever the umask. ``resume=True`` opens an existing log for reading and
    appending, for :meth:`LogWriter.resume`.
    """
    if resume:
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
        return cast(BinaryIO, os.fdopen(fd, "a+b"))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        raise
    fsync_directory(os.path.dirname(os.path.abspath(path)))
    return cast(BinaryIO, os.fdopen(fd, "wb"))


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """Make a new file's directory entry durable (best effort: not every platform allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class LogWriter:
    """The host's side of a log: build, sign and durably append records.

    Records are built, chained and signed in order on the caller's thread; their bytes go to a
    :class:`~canasta_net.log.durable.Durability`. By default (:class:`SyncDurability`) every
    record is written, flushed and (with ``fsync``, when the file has a descriptor) synced to disk
    before :meth:`write_header` / :meth:`append` returns. With a threaded one
    (:meth:`use_durability`) they return at once and :attr:`durable` says how far the log is on
    disk: the host sends a record to nobody before it is. A refused record
    (:class:`ValueError`) leaves the log unchanged. If a write fails the writer refuses any
    further record (:class:`LogWriterError`): resume from the file instead.
    """

    def __init__(
        self,
        file: BinaryIO,
        host_identity: Identity,
        *,
        fsync: bool = True,
        max_record_size: int = MAX_RECORD_SIZE,
        timing: Timing = NO_TIMING,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._file = file
        # seconds since the Unix epoch (the reactor's ``seconds``, or a test's fake clock)
        self._clock = clock
        self._last_time = 0
        self._identity = host_identity
        self._durability: Durability = SyncDurability(file, fsync=fsync, timing=timing)
        self._max_record_size = max_record_size
        #: Whether :meth:`append` decodes each body again and checks it against the log's schema
        #: (docs/log-format.md) before writing it. A caller that checks everything it hands over
        #: itself may turn it off: ``HostTable`` accepts a seat's signed message only if it follows
        #: the log's rules (``decode_log_map``, then its table, seat, aseq, known head and hand),
        #: and builds every other field itself; the network host turns it off for its tables.
        self.check_records = True
        self._header: Header | None = None
        self._next_seq = 0
        self._head = ZERO_HASH
        self._failure: str | None = None
        #: The verification report of the log this writer resumed, if it did.
        self.resumed_from: VerificationReport | None = None

    @property
    def header(self) -> Header | None:
        return self._header

    @property
    def next_seq(self) -> int:
        """The seq the next record will carry (the number of records written)."""
        return self._next_seq

    @property
    def head(self) -> bytes:
        """The hash of the last record written (32 zero bytes before the header)."""
        return self._head

    @property
    def durable(self) -> int:
        """How many records (counted from the header) are on disk: with the default
        durability, every record written."""
        return self._durability.durable

    @property
    def durability(self) -> Durability:
        return self._durability

    def use_durability(self, durability: Durability) -> None:
        """From now on hand records to ``durability`` (which must start at :attr:`next_seq`).
        Only once everything written so far is on disk."""
        if self._durability.durable != self._next_seq or durability.durable != self._next_seq:
            raise LogWriterError("records are still on their way to the disk")
        self._durability = durability

    def close(self) -> None:
        """Return once every record written is on disk (or its write has failed)."""
        self._durability.close()

    @classmethod
    def resume(
        cls,
        file: BinaryIO,
        host_identity: Identity,
        *,
        fsync: bool = True,
        max_record_size: int = MAX_RECORD_SIZE,
        timing: Timing = NO_TIMING,
        clock: Callable[[], float] = time.time,
    ) -> LogWriter:
        """Continue an existing log (a host restarting after a crash).

        The whole log is verified first. An incomplete final record is cut off (it was never
        acknowledged, since nothing is sent before it is on disk); ``resumed_from`` reports it.
        ``file`` must be readable, seekable and writable at its end (``open_log_for_writing(path,
        resume=True)``).
        """
        file.seek(0)
        report = verify_log(file, max_record_size=max_record_size)
        if report.header.host_key != host_identity.public_key:
            raise ValueError("this identity is not the log's host: its key does not sign the log")
        writer = cls(
            file,
            host_identity,
            fsync=fsync,
            max_record_size=max_record_size,
            timing=timing,
            clock=clock,
        )
        if report.truncated is not None:
            file.truncate(report.valid_length)
            cast(SyncDurability, writer._durability).sync()
        file.seek(report.valid_length)
        writer._header = report.header
        writer._next_seq = report.records
        writer._head = report.last_hash
        writer._durability = SyncDurability(
            file, fsync=fsync, position=report.records, timing=timing
        )
        writer.resumed_from = report
        writer._last_time = report.last_time or 0
        return writer

    def write_header(self, fields: Mapping[str, Any]) -> RecordInfo:
        """Write record 0. ``fields``: software, table, variant, rules, seats, host, deal,
        insecure, created and any further header fields; seq, prev, kind and format are filled in.
        """
        if self._next_seq != 0:
            raise LogWriterError("the header is already written")
        reserved = sorted(_HEADER_WRITER_FIELDS & fields.keys())
        if reserved:
            raise ValueError(f"the writer fills in {reserved} itself")
        body = _pack(
            {"seq": 0, "prev": ZERO_HASH, "kind": HEADER_KIND, "format": FORMAT_VERSION, **fields}
        )
        try:
            header = _parse_header(_decode_map(body, 0, "the header"))
        except LogFormatError as e:
            raise ValueError(f"refusing to write an invalid header: {e.reason}") from None
        if header.host_key != self._identity.public_key:
            raise ValueError("the host seat's key is not this writer's identity")
        info = self._write(0, HEADER_KIND, body, {}, min(MAX_HEADER_SIZE, self._max_record_size))
        self._header = header
        return info

    def append(
        self, kind: str, fields: Mapping[str, Any], private: Mapping[int, bytes] | None = None
    ) -> RecordInfo:
        """Write the next record: ``kind`` with ``fields`` (which may include ``act``/``asig``,
        or ``msg``/``sigs`` for a checkpoint) and optional per-seat private payloads, which the
        caller must already have salted (see docs/log-format.md).
        """
        header = self._header
        if header is None:
            raise LogWriterError("write the header first")
        reserved = sorted(_WRITER_FIELDS & fields.keys())
        if reserved:
            raise ValueError(f"the writer fills in {reserved} itself")
        payloads: dict[int, bytes] = {}
        for seat, payload in sorted((private or {}).items()):
            if type(seat) is not int or not 0 <= seat < len(header.seats):
                raise ValueError(f"private payload for {seat!r}, which is not a seat")
            if not isinstance(payload, bytes | bytearray | memoryview):
                raise ValueError(f"seat {seat}'s private payload is not bytes")
            payloads[seat] = bytes(payload)
        seq = self._next_seq
        body_fields: dict[str, Any] = {"seq": seq, "prev": self._head, "kind": kind}
        stamp = self._now() if header.format >= TIMED_FORMAT else None
        if stamp is not None:
            body_fields["time"] = stamp
        body_fields.update(fields)
        if payloads:
            body_fields["priv"] = {seat: record_hash(data) for seat, data in payloads.items()}
        body = _pack(body_fields)
        if self.check_records:
            try:
                _check_record(_decode_map(body, seq, "the record body"), seq, header)
            except LogFormatError as e:
                raise ValueError(f"refusing to write an invalid record: {e.reason}") from None
        info = self._write(seq, kind, body, payloads, self._max_record_size)
        if stamp is not None:
            self._last_time = stamp
        return info

    def _now(self) -> int:
        """The host's clock in whole milliseconds, never before the last record's time (a clock
        stepped back, say by NTP, must not make the log invalid: format 2 times never decrease)."""
        return max(self._last_time, round(self._clock() * 1000))

    def _write(
        self, seq: int, kind: str, body: bytes, payloads: dict[int, bytes], limit: int
    ) -> RecordInfo:
        if self._failure is None and self._durability.failure is not None:
            self._failure = repr(self._durability.failure)
        if self._failure is not None:
            raise LogWriterError(f"an earlier write failed ({self._failure})")
        signature = self._identity.sign(RECORD_SIGNATURE_KIND, body)
        stored = _pack([body, signature, payloads])
        if len(stored) > limit:
            raise ValueError(f"the record is {len(stored)} bytes, more than {limit}")
        try:
            self._durability.append(stored, seq + 1)
        except BaseException as e:
            self._failure = repr(e)
            raise
        digest = record_hash(body)
        self._head = digest
        self._next_seq = seq + 1
        return RecordInfo(seq=seq, kind=kind, hash=digest, body=body, stored=stored)
