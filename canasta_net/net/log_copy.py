"""A peer's own verified copy of its host's log (sans-io), for a seat and a watcher alike.

Nothing the host sends is trusted on its word: each record must come in order, verify (host
signature, chain, author signatures, the peer's own payloads) and replay (the game itself,
each hand once its seeds are published) before the peer uses it. The copy is journaled as it
goes, and its latest records are kept to show a host whose log lost them (``fork``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import BinaryIO

from ..log import Header, LogError, LogVerifier, StoredRecord, parse_header, parse_stored_record
from ..log import records as R
from ..log.replay import Replayer, ReplayError

# How many of its latest records a peer keeps in memory to show a host whose log lost them.
RECENT_RECORDS = 256


class HostFault(Exception):
    """The host sent something no honest host sends: the text says what (for the person)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class LostRecord(Exception):
    """The host's log lost, or now contradicts, record ``seq`` of this copy, which the host
    signed and sent: the copy holds the evidence (:meth:`LogCopy.evidence`)."""

    def __init__(self, seq: int) -> None:
        super().__init__(f"the host's log lost record {seq}")
        self.seq = seq


class LogCopy:
    """The records a peer took from its host, checked, journaled and replayed."""

    def __init__(self, log_file: BinaryIO | None = None) -> None:
        self.log_file = log_file
        self.header: Header | None = None
        self.verifier = LogVerifier()
        self.replayer: Replayer | None = None
        self.last_seq = -1
        self.seeds_hash = b""  # the latest seeds record's hash: the head a checkpoint names
        self.hashes: list[bytes] = []  # each record's hash: a fork is caught against them
        # the latest records' bytes, to show a host whose log lost them (its unsynced tail);
        # bounded, so that a host sending record after record cannot grow the peer's memory
        self.recent: deque[bytes] = deque(maxlen=RECENT_RECORDS)
        self._catching_up_at = -1  # the record whose secrets the held records wait on

    @property
    def names(self) -> list[str]:
        """The seats' names as the log's header gives them ([] before it)."""
        return [] if self.header is None else [s.name for s in self.header.seats]

    def lost_since(self, head: bytes) -> int | None:
        """Given the hash of the host's latest record (``welcome.head``): the number of the first
        record of this copy the host's log no longer holds, or None if it holds them all."""
        if self.hashes and head != self.hashes[-1] and head in self.hashes:
            return self.hashes.index(head) + 1
        return None

    def evidence(self, seq: int) -> bytes | None:
        """Record ``seq`` as the host sent it, if it is among the latest kept."""
        kept = seq - (self.last_seq + 1 - len(self.recent))
        return self.recent[kept] if 0 <= kept < len(self.recent) else None

    def signed_here(self, key: bytes, act: bytes, asig: bytes) -> None:
        """The peer signed ``act`` itself (``LogVerifier.signed_here``): its record's signature
        needs no second check when it carries exactly these bytes."""
        self.verifier.signed_here(key, act, asig)

    def take(self, seq: int, data: bytes, deal: str | None = None) -> StoredRecord | None:
        """Check, journal and keep record ``seq``; None for a resend of a record held already.

        ``deal``: the deal mode the host announced, which the log's header must name. Raises
        HostFault (nothing is kept) or LostRecord. The record's game content is checked next,
        by :meth:`replay`."""
        if seq <= self.last_seq:
            if seq >= 0:  # a resend after reconnecting: it must be the record this peer holds
                try:
                    resent = parse_stored_record(data, seq, self.header).hash
                except LogError as e:
                    raise HostFault(f"record {seq} fails verification: {e}") from None
                if resent != self.hashes[seq]:
                    raise LostRecord(seq)  # the host now says something else was record seq
            return None
        if seq != self.last_seq + 1:
            raise HostFault(f"record {seq} arrived after {self.last_seq}")
        try:
            record = parse_stored_record(data, seq, self.header)
            if seq == 0:
                header = parse_header(record)
                if deal is not None and header.deal != deal:
                    raise HostFault("the log's header and the welcome name other deal modes")
                self.header = header
                self.verifier.set_header(header)
                self.replayer = Replayer(header, trust_own_work=True)  # its own stages: not twice
            self.verifier.feed(record)
        except (LogError, ReplayError) as e:
            raise HostFault(f"record {seq} fails verification: {e}") from None
        if self.log_file is not None:
            self.log_file.write(data)
            self.log_file.flush()
        self.last_seq = seq
        self.recent.append(data)
        self.hashes.append(record.hash)
        if record.kind == R.SEEDS:
            self.seeds_hash = record.hash
        return record

    def replay(self, record: StoredRecord, *, catch_up_later: bool = False) -> None:
        """Follow a record just taken through the game (HostFault if the game refutes it).

        ``catch_up_later``: a record publishing a hand's secrets leaves the hand's records that
        waited for them to :meth:`catch_up`."""
        if self.replayer is None:
            return
        try:
            self.replayer.feed(record, catch_up_later=catch_up_later)
        except ReplayError as e:
            raise HostFault(f"record {record.index}: {e.reason}") from None
        if self.replayer.catching_up:
            self._catching_up_at = record.index

    def catch_up(self, more: Callable[[], bool] | None = None) -> bool:
        """Check the hand records that waited for the secrets just published, while ``more()``
        says to go on (HostFault, naming the publishing record, if the game refutes one); True
        once all are checked."""
        if self.replayer is None:
            return True
        try:
            return self.replayer.catch_up(more)
        except ReplayError as e:
            raise HostFault(f"record {self._catching_up_at}: {e.reason}") from None


__all__ = ["RECENT_RECORDS", "HostFault", "LogCopy", "LostRecord"]
