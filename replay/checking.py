"""One pass over a log: container verification, the engine's replay and the audit-level checks.

Every tool of ``canasta-replay`` reads a log through :class:`LogCheck`, so a record is never shown,
annotated or exported without having been checked first. The pass streams (memory is bounded by the
largest record plus what the replayer keeps) and stops at the first failing record, which it keeps
as a :class:`~replay.findings.Failure` instead of raising: the tools still show a disputed game up
to the point where it goes wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from canasta_net.hand import Applied
from canasta_net.log import (
    Header,
    LogError,
    LogSource,
    LogVerifier,
    RecordStream,
    StoredRecord,
    Truncation,
)
from canasta_net.log import records as R
from canasta_net.log.replay import Replayer, ReplayError

from .findings import (
    STAGE_FORMAT,
    Failure,
    data_after_end,
    failure_from_error,
    unsigned_checkpoint,
)


@dataclass(frozen=True, slots=True)
class CheckedRecord:
    """A record that passed every check; ``hand`` is the hand in progress when it arrived."""

    record: StoredRecord
    hand: int


class LogCheck:
    """Verify and replay a log record by record; iterate to get each record once it has passed.

    After iteration: ``failure`` is the first failing record (or None), ``records`` the number of
    records that passed, ``truncated`` the notice of an incomplete final record, ``replayer`` the
    replayer (match, hands, result) and ``payload_seats`` the seats whose private payloads this copy
    of the log holds.
    """

    def __init__(self, source: LogSource, on_replayed: Applied | None = None) -> None:
        self._stream = RecordStream(source)
        self._verifier = LogVerifier()
        self._on_replayed = on_replayed
        self.header: Header | None = None
        self.header_hash = b""
        self.replayer: Replayer | None = None
        self.failure: Failure | None = None
        self.records = 0
        self.bytes = 0

    @property
    def truncated(self) -> Truncation | None:
        return self._stream.truncated

    @property
    def payload_seats(self) -> frozenset[int]:
        return frozenset(seat for seat, count in self._verifier.present.items() if count)

    @property
    def kinds(self) -> dict[str, int]:
        return dict(self._verifier.kinds)

    def run(self) -> LogCheck:
        """Check the whole log (when no per-record work is needed)."""
        for _ in self:
            pass
        return self

    def __iter__(self) -> Iterator[CheckedRecord]:
        try:
            yield from self._checked()
        except (LogError, ReplayError) as e:
            self.failure = failure_from_error(e, self.header)
        self.bytes = self._stream.valid_length
        truncated, over = self._stream.truncated, self.replayer is not None and self.replayer.over
        # the host writes nothing after the match's end: no crash leaves a record after it
        if self.failure is None and truncated is not None and over:
            self.failure = data_after_end(truncated)

    def _checked(self) -> Iterator[CheckedRecord]:
        stream, verifier = self._stream, self._verifier
        for record in stream:
            if self.header is None:
                header = stream.header
                assert header is not None
                self.header = header
                verifier.set_header(header)
                verifier.feed(record)
                self.header_hash = record.hash
                if header.deal not in R.DEAL_MODES:
                    self.failure = Failure(
                        0,
                        "unsupported-deal",
                        STAGE_FORMAT,
                        f"The log uses the deal mode {header.deal!r}, which this program cannot "
                        f"replay (it knows {', '.join(R.DEAL_MODES)}).",
                        None,
                        None,
                        "",
                        unreadable=True,
                    )
                    return
                self.replayer = Replayer(header)
                if self._on_replayed is not None:
                    self.replayer.observe(self._on_replayed)
                self.records = 1
                yield CheckedRecord(record, 0)
                continue
            replayer = self.replayer
            assert replayer is not None and self.header is not None
            hand = replayer.hand_no
            verifier.feed(record)
            replayer.feed(record)
            if record.kind == R.CHECKPOINT:
                missing = [
                    seat
                    for seat in range(len(self.header.seats))
                    if seat not in record.fields["sigs"]
                ]
                if missing:
                    self.failure = unsigned_checkpoint(record.index, hand, missing, self.header)
                    return
            self.records += 1
            yield CheckedRecord(record, hand)
