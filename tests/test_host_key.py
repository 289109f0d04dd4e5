"""The probe `canasta join` makes before asking about a host's key (127.0.0.1 only)."""

from __future__ import annotations

import socket
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.address import IPv4Address
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IListeningPort, IReactorSSL
from twisted.internet.protocol import Protocol, ServerFactory

from canasta_net.identity import Identity
from canasta_net.net.host_key import HostUnreachable, fetch_host_fingerprint
from canasta_net.net.tls import server_context_factory

HOST = Identity.generate()
JOINER = Identity.generate()


def serving(protocol: type[Protocol]) -> ServerFactory:
    """``ServerFactory.forProtocol(protocol)``, whose stub says it makes a plain ``Factory``."""
    factory: ServerFactory = ServerFactory()
    factory.protocol = protocol
    return factory


def port_number(port: IListeningPort) -> int:
    address = port.getHost()
    assert isinstance(address, IPv4Address)
    return address.port


async def stop(port: IListeningPort) -> None:
    stopping = port.stopListening()
    if stopping is not None:
        await stopping


class Listener(Protocol):
    received = b""

    def dataReceived(self, data: bytes) -> None:  # Twisted's name
        Listener.received += data


@pytest_twisted.ensureDeferred
async def test_the_probe_reads_the_hosts_key_and_sends_nothing() -> None:
    port = IReactorSSL(reactor).listenSSL(
        0,
        serving(Listener),
        # Twisted takes a connection creator here too; its stubs name only context factories
        server_context_factory(HOST),  # type: ignore[arg-type]
        interface="127.0.0.1",
    )
    try:
        seen = await fetch_host_fingerprint(reactor, "127.0.0.1", port_number(port), JOINER)
    finally:
        await stop(port)
    assert seen == HOST.fingerprint
    assert Listener.received == b""


class Hangup(Protocol):
    def connectionMade(self) -> None:  # Twisted's name
        transport: Any = self.transport
        transport.write(b"not TLS\r\n")
        transport.loseConnection()


@pytest_twisted.ensureDeferred
async def test_something_that_is_not_a_canasta_host_is_one_sentence() -> None:
    port = reactor.listenTCP(0, serving(Hangup), interface="127.0.0.1")
    try:
        with pytest.raises(HostUnreachable, match="did not show a canasta-net key"):
            await fetch_host_fingerprint(reactor, "127.0.0.1", port_number(port), JOINER)
    finally:
        await stop(port)


@pytest_twisted.ensureDeferred
async def test_a_closed_port_cannot_be_reached() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        free = closed.getsockname()[1]
    probing: Deferred[str] = Deferred.fromCoroutine(
        fetch_host_fingerprint(reactor, "127.0.0.1", free, JOINER)
    )
    with pytest.raises(HostUnreachable, match=f"cannot reach 127.0.0.1:{free}"):
        await probing


def test_a_reason_keeps_an_acronym_and_lowers_a_word() -> None:
    from twisted.internet.error import ConnectionRefusedError, DNSLookupError

    from canasta_net.net.host_key import _reason

    # before: "dNS lookup failed: nonsense" after "cannot reach nonsense:47475: "
    assert _reason(DNSLookupError("nonsense")) == "DNS lookup failed: nonsense"
    assert _reason(ConnectionRefusedError()).startswith("connection was refused")
