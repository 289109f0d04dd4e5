"""Reading a log: its records streamed from a file, bytes or chunks, in bounded memory.

Each record is structurally validated (:mod:`.format`) as it is read; nothing here checks
signatures or the chain (:mod:`.verify` does). The only I/O is ``read`` on a file object the
caller hands in.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, BinaryIO, Final, cast

import msgpack

from .format import (
    _DECODE_ERRORS,
    MAX_HEADER_SIZE,
    MAX_RECORD_SIZE,
    Header,
    LogFormatError,
    StoredRecord,
    Truncation,
    _build_record,
    _parse_header,
    _refuse_ext,
    _unique_map,
)

__all__ = ["READ_SIZE", "LogSource", "RecordStream", "iter_records"]

#: How many bytes the reader asks its file for at a time.
READ_SIZE: Final = 64 << 10

# First bytes of a msgpack array: fixarray, array 16, array 32.
_ARRAY_FIRST_BYTES: Final = frozenset(range(0x90, 0xA0)) | {0xDC, 0xDD}

#: What a reader accepts: a binary file object, the bytes of a whole log, or chunks of it.
LogSource = BinaryIO | Iterable[bytes] | bytes | bytearray | memoryview


def _chunks(source: LogSource, read_size: int) -> Iterator[bytes]:
    """Cut any source into chunks of at most ``read_size`` bytes."""
    if isinstance(source, bytes | bytearray | memoryview):
        view = memoryview(source)
        for start in range(0, len(view), read_size):
            yield bytes(view[start : start + read_size])
        return
    read = getattr(source, "read", None)
    pieces: Iterable[bytes]
    if callable(read):
        reader = cast(Callable[[int], bytes], read)
        pieces = iter(lambda: reader(read_size), b"")
    else:
        pieces = source
    for piece in pieces:
        if len(piece) <= read_size:
            yield bytes(piece)
        else:
            view = memoryview(piece)
            for start in range(0, len(view), read_size):
                yield bytes(view[start : start + read_size])


class RecordStream(Iterator[StoredRecord]):
    """Stream the records of a log, each structurally validated, without holding the whole log.

    Memory stays bounded by ``max_record_size`` plus ``read_size``: a record is refused as
    ``too-large`` as soon as it has grown past the limit, before the rest of it is read.

    A final record that the log ends inside of (a crash mid-write) is not an error: iteration
    stops after the last complete record and ``truncated`` describes the incomplete tail. Anything
    else malformed raises :class:`LogFormatError` naming the record. ``header`` is set once
    record 0 has been read; ``valid_length`` is the size of the complete records read so far.
    """

    def __init__(
        self,
        source: LogSource,
        *,
        max_record_size: int = MAX_RECORD_SIZE,
        read_size: int = READ_SIZE,
    ) -> None:
        if max_record_size < 1 or read_size < 1:
            raise ValueError("max_record_size and read_size must be positive")
        self.header: Header | None = None
        self.truncated: Truncation | None = None
        self.valid_length = 0
        self._max_record_size = max_record_size
        self._chunks = _chunks(source, read_size)
        self._unpacker = msgpack.Unpacker(
            raw=False,
            strict_map_key=False,
            use_list=True,
            ext_hook=_refuse_ext,
            object_pairs_hook=_unique_map,
            max_buffer_size=max_record_size + read_size,
        )
        self._fed = 0
        self._index = 0
        self._finished = False
        # The chunks that still hold bytes of the current (incomplete) record, so that a
        # truncated tail can be inspected; _pending_start is the offset of _pending[0].
        self._pending: deque[bytes] = deque()
        self._pending_start = 0

    def __iter__(self) -> RecordStream:
        return self

    def __next__(self) -> StoredRecord:
        if self._finished:
            raise StopIteration
        try:
            return self._next_record()
        except BaseException:
            self._finished = True
            raise

    def _limit(self) -> int:
        if self._index == 0:
            return min(MAX_HEADER_SIZE, self._max_record_size)
        return self._max_record_size

    def _too_large(self, size: int) -> LogFormatError:
        return LogFormatError(
            self._index, "too-large", f"the record exceeds {self._limit()} bytes ({size}+ bytes)"
        )

    def _next_object(self) -> tuple[bool, Any]:
        """The next complete msgpack object, reading as needed; (False, None) at the end."""
        while True:
            try:
                return True, self._unpacker.unpack()
            except msgpack.OutOfData:
                pass
            except _DECODE_ERRORS as e:
                raise LogFormatError(
                    self._index, "bad-encoding", f"not valid msgpack: {e}"
                ) from None
            pending = self._fed - self.valid_length
            if pending > self._limit():
                raise self._too_large(pending)
            chunk = next(self._chunks, None)
            if chunk is None:
                return False, None
            try:
                self._unpacker.feed(chunk)
            except msgpack.BufferFull:
                raise self._too_large(pending + len(chunk)) from None
            self._fed += len(chunk)
            self._pending.append(chunk)

    def _next_record(self) -> StoredRecord:
        record_no = self._index
        found, obj = self._next_object()
        if not found:
            self._finish()
            raise StopIteration
        offset = self.valid_length
        end = self._unpacker.tell()
        size = end - offset
        if size > self._limit():
            raise self._too_large(size)
        record = _build_record(obj, record_no, offset, size, self.header)
        if record_no == 0:
            self.header = _parse_header(record.fields)
        self.valid_length = end
        self._index += 1
        pending = self._pending
        while pending and self._pending_start + len(pending[0]) <= end:
            self._pending_start += len(pending.popleft())
        return record

    def _finish(self) -> None:
        self._finished = True
        leftover = self._fed - self.valid_length
        if leftover == 0:
            if self._index == 0:
                raise LogFormatError(0, "missing-header", "the log is empty")
            return
        tail_start = self.valid_length - self._pending_start
        first_byte = b"".join(self._pending)[tail_start]
        if first_byte not in _ARRAY_FIRST_BYTES:
            raise LogFormatError(
                self._index,
                "not-an-array",
                f"the log ends with {leftover} bytes that do not begin a stored record",
            )
        if self._index == 0:
            raise LogFormatError(
                0, "missing-header", f"the log ends inside its header record ({leftover} bytes)"
            )
        self.truncated = Truncation(self._index, self.valid_length, leftover)


def iter_records(
    source: LogSource,
    *,
    max_record_size: int = MAX_RECORD_SIZE,
    read_size: int = READ_SIZE,
) -> RecordStream:
    """Stream the records of a log: see :class:`RecordStream` (an iterator of StoredRecord)."""
    return RecordStream(source, max_record_size=max_record_size, read_size=read_size)
