"""A frame reaches the socket when it is sent, not at the reactor's next pass (framing.py)."""

from __future__ import annotations

import struct
from typing import Any

import msgpack
import pytest_twisted
from twisted.internet import main, reactor
from twisted.internet.abstract import FileDescriptor
from twisted.internet.address import IPv4Address
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IHandshakeListener
from twisted.internet.protocol import Factory
from twisted.internet.testing import MemoryReactor
from zope.interface import implementer

from canasta_net.identity import Identity
from canasta_net.net.framing import FrameProtocol, send_queued_now
from canasta_net.net.tls import client_context_factory, server_context_factory, verified_peer_key
from canasta_net.net.tls_endpoints import TLSClientEndpoint, TLSServerEndpoint


class Socket(FileDescriptor):
    """A TCP transport's queue over a socket that takes ``room`` bytes a call (all by default)."""

    def __init__(self, room: int | None = None, error: Exception | None = None) -> None:
        super().__init__(reactor=MemoryReactor())
        self.connected = 1
        self.room = room
        self.error = error
        self.sent: list[bytes] = []
        self.watched = False  # registered with the reactor for writing

    def writeSomeData(self, data: Any) -> Any:  # Twisted's name
        if self.error is not None:
            return self.error
        taken = bytes(data)[: self.room] if self.room is not None else bytes(data)
        self.sent.append(taken)
        return len(taken)

    def startWriting(self) -> None:  # Twisted's name
        self.watched = True

    def stopWriting(self) -> None:  # Twisted's name
        self.watched = False

    def queued(self) -> int:
        return len(self.dataBuffer) - self.offset + self._tempDataLen


class Layer:
    """A transport over another one (as TLS is over TCP): writes go straight down."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport

    def write(self, data: bytes) -> None:
        self.transport.write(data)


def frames_of(data: bytes) -> list[dict[str, Any]]:
    out = []
    while data:
        (size,) = struct.unpack("!I", data[:4])
        out.append(msgpack.unpackb(data[4 : 4 + size]))
        data = data[4 + size :]
    return out


def connected(transport: Any) -> FrameProtocol:
    protocol = FrameProtocol()
    protocol.transport = transport
    return protocol


def test_a_sent_message_is_on_the_socket_before_the_reactor_runs_again() -> None:
    socket = Socket()
    connected(socket).send({"t": "ping"})
    assert frames_of(b"".join(socket.sent)) == [{"t": "ping"}]
    assert socket.queued() == 0 and not socket.watched


def test_several_messages_in_one_write_go_out_at_once_through_a_layer() -> None:
    socket = Socket()
    connected(Layer(Layer(socket))).send_many([{"t": "a"}, {"t": "b"}])
    assert len(socket.sent) == 1
    assert frames_of(socket.sent[0]) == [{"t": "a"}, {"t": "b"}]


def test_what_the_socket_does_not_take_stays_queued_for_the_reactor() -> None:
    socket = Socket(room=3)
    connected(socket).send({"t": "ping", "pad": "x" * 40})
    assert socket.sent and len(socket.sent[0]) == 3
    assert socket.queued() > 0 and socket.watched  # the reactor sends the rest


def test_a_send_error_is_left_to_the_reactor() -> None:
    socket = Socket(error=main.CONNECTION_LOST)
    connected(socket).send({"t": "ping"})  # raises nothing here
    assert socket.queued() > 0 and socket.watched  # the reactor meets the error and closes


def test_a_closing_or_paused_transport_is_left_to_the_reactor() -> None:
    closing = Socket()
    closing.disconnecting = True
    paused = Socket()
    paused.producerPaused = True
    for socket in (closing, paused):
        connected(socket).send({"t": "ping"})
        assert socket.sent == [] and socket.queued() > 0


def test_a_transport_that_is_no_socket_is_left_alone() -> None:
    class Recorder:
        def __init__(self) -> None:
            self.data = b""

        def write(self, data: bytes) -> None:
            self.data += data

    recorder = Recorder()
    connected(recorder).send({"t": "ping"})
    send_queued_now(None)
    assert frames_of(recorder.data) == [{"t": "ping"}]


HOST = Identity.from_seed(b"send-now host")
JOINER = Identity.from_seed(b"send-now joiner")


@implementer(IHandshakeListener)
class Talker(FrameProtocol):
    """Sends ``hello`` once the handshake is done, noting whether it left the process at once."""

    def __init__(self) -> None:
        self.ready: Deferred[None] = Deferred()
        self.got: Deferred[dict[str, Any]] = Deferred()
        self.lost: Deferred[None] = Deferred()
        self.queued_after_send: int | None = None
        self.written_by_send = 0
        self.peer_key: bytes | None = None

    def handshakeCompleted(self) -> None:  # Twisted's name
        self.peer_key = verified_peer_key(self.transport)
        self.ready.callback(None)

    def say(self, message: dict[str, Any]) -> None:
        """Send ``message``; note the bytes the socket took meanwhile, and what is still held."""
        tls: Any = self.transport  # Twisted's TLS layer, whose own transport is the TCP socket
        tcp = tls.transport
        taken: list[int] = []
        write_some = tcp.writeSomeData

        def counted(data: Any) -> Any:
            written = write_some(data)
            if isinstance(written, int):
                taken.append(written)
            return written

        tcp.writeSomeData = counted
        try:
            self.send(message)
        finally:
            del tcp.writeSomeData
        self.written_by_send = sum(taken)
        self.queued_after_send = len(tcp.dataBuffer) - tcp.offset + tcp._tempDataLen

    def message_received(self, message: dict[str, Any]) -> None:
        if not self.got.called:
            self.got.callback(message)

    def connectionLost(self, reason: Any = None) -> None:  # Twisted's name
        self.lost.callback(None)


@pytest_twisted.ensureDeferred
async def test_over_tls_on_loopback_a_frame_leaves_as_it_is_sent() -> None:
    hosts: list[Talker] = []

    def host_side() -> Talker:
        hosts.append(Talker())
        return hosts[-1]

    server = TLSServerEndpoint(reactor, 0, server_context_factory(HOST), interface="127.0.0.1")
    port = await server.listen(Factory.forProtocol(host_side))
    try:
        creator = client_context_factory(JOINER, HOST.fingerprint)
        address = port.getHost()
        assert isinstance(address, IPv4Address)
        client = TLSClientEndpoint(reactor, "127.0.0.1", address.port, creator)
        joiner = await client.connect(Factory.forProtocol(Talker))
        assert isinstance(joiner, Talker)  # the application's protocol, as SSL4ClientEndpoint's
        await joiner.ready.addTimeout(5, reactor)
        assert joiner.peer_key == HOST.public_key
        joiner.say({"t": "hello", "n": 1})
        # on the socket already (encrypted: more than the frame), nothing held for a later pass
        assert joiner.written_by_send > 10 and joiner.queued_after_send == 0
        assert await hosts[0].got.addTimeout(5, reactor) == {"t": "hello", "n": 1}
        assert hosts[0].peer_key == JOINER.public_key
        hosts[0].say({"t": "welcome"})
        assert hosts[0].written_by_send > 10 and hosts[0].queued_after_send == 0
        assert await joiner.got.addTimeout(5, reactor) == {"t": "welcome"}
        assert joiner.transport is not None
        joiner.transport.loseConnection()
        await joiner.lost.addTimeout(5, reactor)
        await hosts[0].lost.addTimeout(5, reactor)
    finally:
        stopping = port.stopListening()
        if stopping is not None:
            await stopping
