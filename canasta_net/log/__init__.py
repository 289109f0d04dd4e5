"""The event log container, ``.cnlog`` formats 1 and 2: write, read, redact and verify.

A log is a plain concatenation of msgpack objects, one per record, each ``[body, host_sig,
private]``; every body names the hash of the previous one, so the records form a chain rooted in
the header (record 0). ``docs/log-format.md`` is the complete specification; this package is its
reference implementation.

The container knows nothing about Canasta: record kinds other than ``header`` and ``checkpoint``
and their fields belong to the game layer. What it checks is structure (every body is validated
against a schema before use), the chain, the host's signature on every record, private payloads
against their hashes, author-signed actions (``act``/``asig``) and checkpoint signatures.

- :mod:`~canasta_net.log.format`: limits, errors and values; decoding and validating one stored
  record (pure).
- :mod:`~canasta_net.log.reader`: a log's records streamed from a file, bytes or chunks.
- :mod:`~canasta_net.log.verify`: the chain and the signatures, record by record.
- :mod:`~canasta_net.log.redact`: a seat's copy of a record, and a watcher's.
- :mod:`~canasta_net.log.writer`: the host's writer and the opening of a log file; with
  :mod:`~canasta_net.log.durable` (records written and synced at once, or synced by a writer
  thread in groups) the only modules that open, write or sync log files.
- :mod:`~canasta_net.log.exposure`: a seat's signed exposure of a wrong sealed key, kept in a
  file beside its copy of the log (``.exposure``); :mod:`~canasta_net.log.seed_store`: a
  seat's committed seeds until they are published.
"""

from __future__ import annotations

from .format import (
    ACTION_SIGNATURE_KIND,
    CHECKPOINT_KIND,
    CHECKPOINT_SIGNATURE_KIND,
    FORMAT_VERSION,
    HASH_SIZE,
    HEADER_KIND,
    MAX_HEADER_SIZE,
    MAX_KIND_LENGTH,
    MAX_RECORD_SIZE,
    MAX_SEATS,
    RECORD_SIGNATURE_KIND,
    SEAT_EVENT_KIND,
    SEAT_EVENTS,
    SEAT_KEY_KIND,
    SUPPORTED_FORMATS,
    TABLE_ID_SIZE,
    ZERO_HASH,
    CheckpointInfo,
    Header,
    LogError,
    LogFormatError,
    LogVerificationError,
    RecordInfo,
    SeatInfo,
    StoredRecord,
    Truncation,
    VerificationReport,
    decode_log_map,
    parse_header,
    parse_stored_record,
    record_hash,
)
from .reader import READ_SIZE, LogSource, RecordStream, iter_records
from .redact import redact_for_seat, redact_public
from .verify import LogVerifier, iter_verified, verify_log
from .writer import LogWriter, LogWriterError, fsync_directory, open_log_for_writing

__all__ = [
    "ACTION_SIGNATURE_KIND",
    "CHECKPOINT_KIND",
    "CHECKPOINT_SIGNATURE_KIND",
    "FORMAT_VERSION",
    "HASH_SIZE",
    "HEADER_KIND",
    "MAX_HEADER_SIZE",
    "MAX_KIND_LENGTH",
    "MAX_RECORD_SIZE",
    "MAX_SEATS",
    "READ_SIZE",
    "RECORD_SIGNATURE_KIND",
    "SEAT_EVENTS",
    "SEAT_EVENT_KIND",
    "SEAT_KEY_KIND",
    "SUPPORTED_FORMATS",
    "TABLE_ID_SIZE",
    "ZERO_HASH",
    "CheckpointInfo",
    "Header",
    "LogError",
    "LogFormatError",
    "LogSource",
    "LogVerificationError",
    "LogVerifier",
    "LogWriter",
    "LogWriterError",
    "RecordInfo",
    "RecordStream",
    "SeatInfo",
    "StoredRecord",
    "Truncation",
    "VerificationReport",
    "decode_log_map",
    "fsync_directory",
    "iter_records",
    "iter_verified",
    "open_log_for_writing",
    "parse_header",
    "parse_stored_record",
    "record_hash",
    "redact_for_seat",
    "redact_public",
    "verify_log",
]
