"""Frames on a stream: a 4-byte length, then one msgpack message (Twisted's Int32StringReceiver).

The length is checked against ``wire.MAX_FRAME`` before the body is buffered; a frame that is
too long or not a msgpack map drops this connection only. Each side then checks the message
against its schema (``wire.validate``) as it receives it: the host answers a malformed message
with an ``error`` and the connection lives; a seat takes one from the host as host misbehaviour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from struct import pack
from typing import Any

from twisted.internet.abstract import FileDescriptor
from twisted.logger import Logger
from twisted.protocols.basic import Int32StringReceiver

from ..reasons import wire_args
from . import wire


class FrameProtocol(Int32StringReceiver):
    """Subclasses implement :meth:`message_received`."""

    MAX_LENGTH = wire.MAX_FRAME
    log = Logger()
    dropped = False

    def connectionMade(self) -> None:  # Twisted's name
        # Prompts and records are small and latency-bound: do not let Nagle's algorithm hold
        # them back for the peer's delayed ACK (about 40 ms a prompt otherwise).
        transport = self.transport
        while transport is not None:
            set_no_delay = getattr(transport, "setTcpNoDelay", None)
            if set_no_delay is not None:
                set_no_delay(True)
                break
            transport = getattr(transport, "transport", None)

    def stringReceived(self, frame: bytes) -> None:  # Twisted's name
        if self.dropped:
            return  # closing: frames that arrived in the same read as the bad one are ignored
        try:
            message = wire.decode(frame)
        except wire.FramingError as e:
            self.drop(str(e))
            return
        self.message_received(message)

    def lengthLimitExceeded(self, length: int) -> None:  # Twisted's name
        self.drop(f"a frame of {length} bytes, over the limit of {self.MAX_LENGTH}")

    def message_received(self, message: dict[str, Any]) -> None:
        """A decoded message, not yet checked against its schema."""
        raise NotImplementedError

    def drop(self, why: str = "") -> None:
        """Close this connection (broken framing, or the peer is refused), saying ``why``."""
        if why and not self.dropped:
            self.log.info("dropping a connection: {reason}", reason=why)
        self.dropped = True
        if self.transport is not None:
            self.transport.loseConnection()

    def send(self, message: Mapping[str, Any]) -> None:
        self.sendString(wire.encode(message))
        send_queued_now(self.transport)

    def send_many(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Several messages in one write to the transport: over TLS one record and one system
        call for what would otherwise be one each (a host sends a record and a view together)."""
        frames = [wire.encode(message) for message in messages]
        if frames:
            self.write_frames(frames)

    def write_frames(self, frames: Sequence[bytes]) -> None:
        """Write encoded messages, each with its length prefix, in one transport write."""
        if self.transport is not None:
            prefix = self.structFormat
            self.transport.write(b"".join(pack(prefix, len(f)) + f for f in frames))
            send_queued_now(self.transport)

    def send_error(
        self,
        code: str,
        text: str,
        params: Mapping[str, str | int] | None = None,
        variant: str | None = None,
    ) -> None:
        """An ``error``; ``params`` (and ``variant``) where the engine refused a move, so that
        the seat's client words the refusal in its reader's language."""
        error: dict[str, Any] = {"t": "error", "code": code, "message": text}
        if params is not None:
            error["args"] = wire_args(params)
            if variant:
                error["variant"] = variant
        self.send(error)


def send_queued_now(transport: Any) -> None:
    """Hand what ``transport`` has queued to its socket now, not at the reactor's next pass.

    Twisted's TCP transport queues a write and sends it when epoll next reports the socket
    writable: after every other ready connection of that pass has been read and handled, which
    at a host of many tables (or a process of many seats) is milliseconds for every prompt, move
    and record (``scripts/bench_table.py``'s ``seat_write`` and ``host_write`` legs). A TLS
    transport encrypts at once into the TCP transport's queue, so this walks down to the socket's
    transport and does the send the reactor would do (``IWriteDescriptor.doWrite``). Whatever the
    socket does not take stays queued for the reactor, as before; a transport that is closing,
    whose producer is paused (a peer that does not read), or is not a socket's (a test's
    transport) is left to the reactor.
    """
    while transport is not None and not isinstance(transport, FileDescriptor):
        transport = getattr(transport, "transport", None)
    if (
        transport is None
        or not transport.connected
        or transport.disconnecting
        or transport._writeDisconnecting
        or transport.producerPaused
        or not transport._tempDataLen
    ):
        return
    # an error (the peer gone) leaves the data queued and the socket watched for writing: the
    # reactor's own doWrite meets the same error at its next pass and closes the connection
    transport.doWrite()
